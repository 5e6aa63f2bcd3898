//! The code-search benchmark: short natural-language and symbol queries over real repositories,
//! each with hand-annotated target files or spans, scored with NDCG@10 (the semble project's
//! public benchmark; its data lives outside the repository).
//!
//! - [`data`]: `repos.json` and `annotations/<repo>.json` as typed values.
//! - [`metrics`]: the benchmark's relevance rule and NDCG@10, chunk- and file-level.
//! - [`published`]: the published methods' per-repository scores.
//! - [`run`]: checkouts at pinned revisions, services per repository, every explorer on every
//!   query, scored rows in JSONL.
//! - [`report`]: means per repository, category and language, next to the published methods.
//!
//! Invariant, as for the SWE-Explore side: explorers are reached only through the plugin host;
//! this module knows nothing about the engine's ranking.

pub mod data;
pub mod metrics;
pub mod published;
pub mod report;
pub mod run;

pub use data::{Category, CodeSearchData, DataError, Query, RepoQueries, RepoSpec, Target};
pub use metrics::{Hit, K, QueryScore, Scoring, path_matches, score};
pub use published::{Published, PublishedError};
pub use report::{CodeSearchReport, render_markdown};
pub use run::{
    CodeSearchError, CodeSearchObserver, CodeSearchRow, CodeSearchRun, CodeSearchSummary,
    RepoEvent, Scope, is_codesearch_file, read_rows,
};
