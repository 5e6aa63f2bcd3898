//! The loadable plugin library of the explorer `random`: the entry symbol only; the
//! explorer is the `swex_explorer_random` crate, which swex links directly.

swex_plugin::export_entry!(swex_explorer_random::swex_explorer_vtable);
