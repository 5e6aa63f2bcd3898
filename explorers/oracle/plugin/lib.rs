//! The loadable plugin library of the explorer `oracle`: the entry symbol only; the
//! explorer is the `swex_explorer_oracle` crate, which swex links directly.

swex_plugin::export_entry!(swex_explorer_oracle::swex_explorer_vtable);
