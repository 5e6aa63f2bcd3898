//! The loadable plugin library of the explorer `tfidf-ref`: the entry symbol only; the
//! explorer is the `swex_explorer_tfidf_ref` crate, which swex links directly.

swex_plugin::export_entry!(swex_explorer_tfidf_ref::swex_explorer_vtable);
