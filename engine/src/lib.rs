//! swex-engine: everything that turns a repository snapshot into searchable indexes.
//!
//! Layers, bottom up:
//! - [`snapshot`]: materialise a repository at a commit from a local git directory.
//! - [`analysis`]: the per-file analysis types (chunks, definitions, imports, references) and the
//!   tree-sitter analysers for each language ([`lang`]).
//!
//! Invariants:
//! - The engine does no printing and knows nothing about plugins, the CLI or the benchmark format.
//! - Indexing never fails on a bad file: unreadable, binary, huge or unparsable files become
//!   diagnostics, not errors.

pub mod analysis;
pub mod cache;
pub mod index;
pub mod lang;
pub mod lexical;
pub mod scan;
pub mod snapshot;
