//! The loadable plugin library of the explorer `swex`: the entry symbol only; the
//! explorer is the `swex_explorer_swex` crate, which swex links directly.

swex_plugin::export_entry!(swex_explorer_swex::swex_explorer_vtable);
