//! swex-bench: the SWE-Explore benchmark side of swex.
//!
//! Invariant: this crate knows the SWE-Explore file formats and the metrics; it talks to explorers
//! only through the plugin host.

pub mod dataset;
pub mod gt;
pub mod linecounts;
pub mod mergecheck;
pub mod metrics;
pub mod report;
pub mod results;
pub mod runner;
pub mod score;
