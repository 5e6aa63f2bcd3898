//! swex-plugin: the explorer plugin contract.
//!
//! Invariant: this crate knows nothing about tantivy, fastembed, libloading or the engine; it
//! depends on std, serde and serde_json only. A plugin author depends on this crate alone.
