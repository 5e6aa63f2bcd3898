//! The loadable plugin library of the explorer `graph`: the entry symbol only; the
//! explorer is the `swex_explorer_graph` crate, which swex links directly.

swex_plugin::export_entry!(swex_explorer_graph::swex_explorer_vtable);
