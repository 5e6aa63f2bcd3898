//! The loadable plugin library of the explorer `tfidf`: the entry symbol only; the
//! explorer is the `swex_explorer_tfidf` crate, which swex links directly.

swex_plugin::export_entry!(swex_explorer_tfidf::swex_explorer_vtable);
