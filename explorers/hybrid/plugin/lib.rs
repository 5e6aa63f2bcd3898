//! The loadable plugin library of the explorer `hybrid`: the entry symbol only; the
//! explorer is the `swex_explorer_hybrid` crate, which swex links directly.

swex_plugin::export_entry!(swex_explorer_hybrid::swex_explorer_vtable);
