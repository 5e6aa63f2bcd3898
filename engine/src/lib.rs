//! swex-engine: everything that turns a repository snapshot into searchable indexes.
//!
//! Layers, bottom up:
//! - [`snapshot`]: materialise a repository at a commit from a local git directory.
//! - [`analysis`]: the per-file analysis types (chunks, definitions, imports, references) and the
//!   tree-sitter analysers for each language ([`lang`]).
//! - [`graph`]: the code graph over a snapshot's analyses (files, definitions, imports, references,
//!   tests) with name lookup and personalised PageRank.
//! - [`scan`]: which files of a snapshot are indexed, and their text (diagnostics for the rest).
//! - [`lexical`]: the code-aware analyzer, the issue query builder and BM25 over chunks (tantivy).
//! - [`cache`]: the content-addressed on-disk cache (analyses, stat manifests, lexical pools);
//!   [`formats`]: every on-disk format version, in one place.
//! - [`index`]: [`index::Engine`] opens a snapshot into a [`index::SnapshotIndex`], the API
//!   explorers query (files, lines, chunks, lexical search, definitions, graph, grep).
//! - [`history`]: each file's commit messages from the repository's history, searched by BM25
//!   (the `history_search` service).
//! - [`search`]: ranked code search for short queries over those indexes (diversified,
//!   definition-level, symbol- and path-aware, dense-fused when the model is installed).
//!
//! Invariants:
//! - The engine does no printing and knows nothing about plugins, the CLI or the benchmark format.
//! - Indexing never fails on a bad file: unreadable, binary, huge or unparsable files become
//!   diagnostics, not errors.

pub mod analysis;
pub mod cache;
pub mod dense;
pub mod formats;
pub mod graph;
pub mod history;
pub mod index;
pub mod lang;
pub mod lexical;
pub mod scan;
pub mod search;
pub mod snapshot;
