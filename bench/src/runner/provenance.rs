//! Runs that must never mix: what produced the rows already in a run's files, against what
//! produces this run's.
//!
//! Every row `swex bench` writes records its [`ProducedBy`] (explorer build, config digest, the k
//! asked for). A resumed run continues a file only when every row of its explorers at its ks was
//! produced the same way; otherwise it refuses before running anything, naming the file, the
//! explorer and what differs. The `{run}` placeholder of output templates
//! ([`ProducedBy::run_id`]) is how a user asks to write elsewhere instead: each producer gets files
//! of its own.
//!
//! This module knows rows and their producers; it runs nothing.

use crate::results::{ProducedBy, Recovered};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

/// Rows of a result file that another run produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}: {rows} rows of explorer `{explorer}` were made by another run ({}); resuming would mix \
     the two. Pass --overwrite to start over, or keep runs apart with {{run}} in --output (e.g. \
     results/{{explorer}}/{{run}}/top{{k}}.jsonl)",
    path.display(), differences.join("; ")
)]
pub struct Mismatch {
    pub path: PathBuf,
    pub explorer: String,
    /// How many rows of that explorer (at the run's ks) differ.
    pub rows: usize,
    pub differences: Vec<String>,
}

/// Checks that every recovered row of the run's explorers at the run's ks was produced as
/// `producers` says this run produces them. Rows of other explorers or ks are not this run's
/// business (a shared file may hold them).
pub fn check_resume(
    recovered: &BTreeMap<PathBuf, Recovered>,
    producers: &HashMap<&str, ProducedBy>,
    top_ks: &[usize],
) -> Result<(), Box<Mismatch>> {
    for (path, file) in recovered {
        // First difference per explorer, and how many rows share the problem.
        let mut found: BTreeMap<&str, (Vec<String>, usize)> = BTreeMap::new();
        for row in &file.rows {
            let Some(wanted) = producers.get(row.explorer.as_str()) else {
                continue;
            };
            if !row.top_k.is_some_and(|k| top_ks.contains(&k)) {
                continue;
            }
            let differences = match &row.produced_by {
                Some(had) => had.differences(wanted),
                None => vec![
                    "they do not record what produced them (written by the reference runner or \
                     by swex before rows recorded it)"
                        .to_string(),
                ],
            };
            if differences.is_empty() {
                continue;
            }
            let entry = found
                .entry(row.explorer.as_str())
                .or_insert_with(|| (differences, 0));
            entry.1 += 1;
        }
        if let Some((explorer, (differences, rows))) = found.into_iter().next() {
            return Err(Box::new(Mismatch {
                path: path.clone(),
                explorer: explorer.to_string(),
                rows,
                differences,
            }));
        }
    }
    Ok(())
}
