//! The loadable plugin library of the explorer `simple_rule`: the entry symbol only; the
//! explorer is the `swex_explorer_simple_rule` crate, which swex links directly.

swex_plugin::export_entry!(swex_explorer_simple_rule::swex_explorer_vtable);
