//! The loadable plugin library of the explorer `search`: the entry symbol only; the explorer is
//! the `swex_explorer_search` crate, which swex links directly.

swex_plugin::export_entry!(swex_explorer_search::swex_explorer_vtable);
