//! swex-bench: the SWE-Explore benchmark side of swex.
//!
//! Two tasks: SWE-Explore (issue → regions, the reference metrics) and code search
//! ([`codesearch`]: short queries, NDCG@10).
//!
//! Invariant: this crate knows the benchmarks' file formats and metrics; it talks to explorers
//! only through the plugin host.

pub mod codesearch;
pub mod dataset;
pub mod fix;
pub mod gt;
pub mod import;
pub mod input;
pub mod linecounts;
pub mod locmetrics;
pub mod mergecheck;
pub mod metric_list;
pub mod metrics;
pub mod report;
pub mod results;
pub mod runner;
pub mod score;
pub mod train;
