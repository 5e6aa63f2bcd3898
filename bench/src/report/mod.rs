//! Reports over result rows: means per explorer × k, breakdowns, paired comparisons, charts and
//! a self-contained HTML page. The library side of `swex report`.
//!
//! This module knows result rows and benchmark rows; it knows nothing about how rows were made.

use crate::metrics::Metrics;
use crate::results::ResultRow;
use serde::Serialize;

/// The means of one explorer at one k.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeanRow {
    pub explorer: String,
    pub top_k: usize,
    /// Rows averaged (failures included, as zeros).
    pub instances: usize,
    /// Rows with an `error`.
    pub failures: usize,
    pub mean: Metrics,
}

/// Means per (explorer, k), in first-appearance order of explorers and increasing k. Failed rows
/// are averaged as zeros (their metrics are zero) and counted in `failures`.
pub fn means(rows: &[ResultRow]) -> Vec<MeanRow> {
    let mut explorers: Vec<&str> = Vec::new();
    for row in rows {
        if !explorers.contains(&row.explorer.as_str()) {
            explorers.push(&row.explorer);
        }
    }
    let mut out = Vec::new();
    for explorer in explorers {
        let mut ks: Vec<usize> = rows
            .iter()
            .filter(|r| r.explorer == explorer)
            .filter_map(|r| r.top_k)
            .collect();
        ks.sort_unstable();
        ks.dedup();
        for k in ks {
            let group: Vec<&ResultRow> = rows
                .iter()
                .filter(|r| r.explorer == explorer && r.top_k == Some(k))
                .collect();
            let mut sums = [0.0f64; 17];
            for row in &group {
                for (sum, value) in sums.iter_mut().zip(row.metrics.values()) {
                    *sum += value;
                }
            }
            let n = group.len().max(1) as f64;
            out.push(MeanRow {
                explorer: explorer.to_string(),
                top_k: k,
                instances: group.len(),
                failures: group.iter().filter(|r| r.is_failure()).count(),
                mean: Metrics::from_values(sums.map(|s| s / n)),
            });
        }
    }
    out
}
