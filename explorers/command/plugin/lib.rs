//! The loadable plugin library of the explorer `command`: the entry symbol only; the
//! explorer is the `swex_explorer_command` crate, which swex links directly.

swex_plugin::export_entry!(swex_explorer_command::swex_explorer_vtable);
