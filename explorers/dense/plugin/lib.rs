//! The loadable plugin library of the explorer `dense`: the entry symbol only; the
//! explorer is the `swex_explorer_dense` crate, which swex links directly.

swex_plugin::export_entry!(swex_explorer_dense::swex_explorer_vtable);
