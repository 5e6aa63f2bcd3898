//! The loadable plugin library of the explorer `bm25`: the entry symbol only; the
//! explorer is the `swex_explorer_bm25` crate, which swex links directly.

swex_plugin::export_entry!(swex_explorer_bm25::swex_explorer_vtable);
