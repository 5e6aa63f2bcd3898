//! SWE-Explore benchmark rows: the reference schema as serde types.
//!
//! These types mirror the reference release's JSONL rows field for field, so that rows written by
//! swex (for instance by `swex gt build`) are read by the reference tools and vice versa. Fields that
//! swex does not interpret are kept in `extra` and written back unchanged.
//!
//! Line numbers are signed on purpose: ground-truth and result rows in the wild use `end = -1` for
//! "to the end of the file" and occasionally negative starts; the metrics resolve them (see
//! `DESIGN.md`, "Metrics").

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A region as it appears in ground truth and result rows: `path` is repository-relative with `/`
/// separators, `start`/`end` are 1-based and inclusive, `end == -1` means "to the end of the file".
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Region {
    pub path: String,
    pub start: i64,
    pub end: i64,
}

/// The `ground_truth` object of a benchmark row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroundTruth {
    #[serde(default)]
    pub read_core_files: Vec<String>,
    #[serde(default)]
    pub read_core_regions: Vec<Region>,
    /// Per model: files read by that model only (outside the core).
    #[serde(default)]
    pub read_optional_files_map: BTreeMap<String, Vec<String>>,
    /// Per model: regions read by that model only (outside the core).
    #[serde(default)]
    pub read_optional_regions_map: BTreeMap<String, Vec<Region>>,
    #[serde(default)]
    pub modified_core_files: Vec<String>,
    #[serde(default)]
    pub main_files: Vec<String>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// One benchmark row (`bench.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRow {
    pub instance_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_dir: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem_statement: Option<String>,
    #[serde(default)]
    pub ground_truth: GroundTruth,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}
