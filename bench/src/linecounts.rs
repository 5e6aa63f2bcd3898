//! File line counts as the reference evaluator sees them.
//!
//! The metrics need a file's length only to resolve `end = -1` and negative starts; explicit ranges
//! are never clipped. The reference counts lines only for files named by the instance's core and
//! optional regions, as `len(text.splitlines())` of the file decoded as UTF-8 with errors ignored.
//! Python's `splitlines` breaks on more than `\n`: also `\r`, `\r\n` (one break), `\x0b`, `\x0c`,
//! `\x1c`, `\x1d`, `\x1e`, `\x85`, U+2028 and U+2029; [`swex_text::bytes_line_count`] reproduces
//! that exactly.
//!
//! Counts come from a `dev.line-counts.json`-style file (`{instance_id: {path: count}}`, see
//! [`LineCounts::load`]) or from a snapshot folder ([`FileLineCounts::from_snapshot`]).
//! This module knows nothing about metrics.

use crate::dataset::{GroundTruth, InputError, load_json_document};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};
use swex_engine::scan::{CheckoutRoot, ReadRefused};

/// Files are counted only up to this size (64 MiB): the reference evaluator reads whole files of
/// any size, and ground-truth files of source code are far below it, but a snapshot's file that
/// streams (`/proc`-like, reporting size 0) or a huge data file must not exhaust memory. A larger
/// file gets no count and is listed in [`SnapshotReport::unreadable_files`].
pub const MAX_COUNTED_FILE_SIZE: u64 = 64 << 20;

/// Line counts of one instance's files: path → number of lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileLineCounts {
    counts: HashMap<String, i64>,
}

impl FileLineCounts {
    /// The line count of `path`, if known.
    pub fn get(&self, path: &str) -> Option<i64> {
        self.counts.get(path).copied()
    }

    pub fn insert(&mut self, path: impl Into<String>, lines: i64) {
        self.counts.insert(path.into(), lines);
    }

    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, i64)> {
        self.counts.iter().map(|(p, &n)| (p.as_str(), n))
    }

    /// Counts the lines of the ground-truth files (paths of core and optional regions) in a
    /// snapshot folder, the way the reference runner does. Files that do not exist or cannot be
    /// read get no count (as in the reference) and are listed in the report; paths that would
    /// leave the snapshot (absolute, or with `..`) are never read and are listed too, and so are
    /// paths that leave it through a symlink (where the reference would follow the link). Files
    /// are read through the engine's one reader of checkouts
    /// ([`swex_engine::scan::CheckoutRoot::read`]), at most [`MAX_COUNTED_FILE_SIZE`] bytes.
    pub fn from_snapshot(snapshot: &Path, truth: &GroundTruth) -> (FileLineCounts, SnapshotReport) {
        FileLineCounts::from_paths(snapshot, truth.region_paths())
    }

    /// Counts the lines of the given files of a snapshot folder (for instance every file an
    /// explorer predicted, to score with real lengths), by the same rules as
    /// [`FileLineCounts::from_snapshot`]; each distinct path is read once.
    pub fn from_paths<'p>(
        snapshot: &Path,
        paths: impl IntoIterator<Item = &'p str>,
    ) -> (FileLineCounts, SnapshotReport) {
        let mut counts = FileLineCounts::default();
        let mut report = SnapshotReport::default();
        let checkout = CheckoutRoot::new(snapshot).ok();
        let distinct: BTreeSet<&str> = paths.into_iter().collect();
        for path in distinct {
            if !stays_inside(path) {
                report.unsafe_paths.push(path.to_string());
                continue;
            }
            let Some(checkout) = checkout.as_ref() else {
                report.missing_files.push(path.to_string());
                continue;
            };
            match checkout.read(Path::new(path), MAX_COUNTED_FILE_SIZE) {
                Ok(bytes) => counts.insert(path, swex_text::bytes_line_count(&bytes) as i64),
                Err(ReadRefused::Outside(_)) => report.escaping_links.push(path.to_string()),
                Err(ReadRefused::NotRegular(_)) => report.missing_files.push(path.to_string()),
                Err(ReadRefused::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => {
                    report.missing_files.push(path.to_string())
                }
                Err(refused) => report
                    .unreadable_files
                    .push((path.to_string(), refused.to_string())),
            }
        }
        (counts, report)
    }
}

impl FromIterator<(String, i64)> for FileLineCounts {
    fn from_iter<I: IntoIterator<Item = (String, i64)>>(iter: I) -> Self {
        FileLineCounts {
            counts: iter.into_iter().collect(),
        }
    }
}

/// Ground-truth files a snapshot could not count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotReport {
    pub missing_files: Vec<String>,
    pub unreadable_files: Vec<(String, String)>,
    /// Paths that name a place outside the snapshot (absolute, or with `..`): never read.
    pub unsafe_paths: Vec<String>,
    /// Paths that lead out of the snapshot through a symlink: never followed (the engine's one
    /// symlink rule, [`swex_engine::scan::CheckoutRoot`]), so they get no count.
    pub escaping_links: Vec<String>,
}

impl SnapshotReport {
    pub fn is_clean(&self) -> bool {
        self.missing_files.is_empty()
            && self.unreadable_files.is_empty()
            && self.unsafe_paths.is_empty()
            && self.escaping_links.is_empty()
    }
}

fn stays_inside(path: &str) -> bool {
    Path::new(path)
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Line counts of many instances: instance id → [`FileLineCounts`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineCounts {
    instances: HashMap<String, FileLineCounts>,
}

impl LineCounts {
    /// Reads a `{instance_id: {path: count}}` JSON file (the format of `dev.line-counts.json`).
    /// Counts must be non-negative integers.
    pub fn load(path: &Path) -> Result<LineCounts, InputError> {
        let raw: HashMap<String, HashMap<String, u32>> = load_json_document(
            path,
            "line counts: a JSON object {instance_id: {path: non-negative integer}}",
        )?;
        Ok(LineCounts {
            instances: raw
                .into_iter()
                .map(|(id, files)| {
                    let files = files.into_iter().map(|(p, n)| (p, i64::from(n))).collect();
                    (id, files)
                })
                .collect(),
        })
    }

    /// The counts of one instance; empty when the instance has none.
    pub fn for_instance(&self, instance_id: &str) -> &FileLineCounts {
        static EMPTY: std::sync::OnceLock<FileLineCounts> = std::sync::OnceLock::new();
        self.instances
            .get(instance_id)
            .unwrap_or_else(|| EMPTY.get_or_init(FileLineCounts::default))
    }

    pub fn contains(&self, instance_id: &str) -> bool {
        self.instances.contains_key(instance_id)
    }

    pub fn insert(&mut self, instance_id: impl Into<String>, counts: FileLineCounts) {
        self.instances.insert(instance_id.into(), counts);
    }

    pub fn len(&self) -> usize {
        self.instances.len()
    }

    pub fn is_empty(&self) -> bool {
        self.instances.is_empty()
    }

    /// The JSON form `{instance_id: {path: count}}`, keys sorted.
    pub fn to_json(&self) -> serde_json::Value {
        let sorted: BTreeMap<&str, BTreeMap<&str, i64>> = self
            .instances
            .iter()
            .map(|(id, files)| (id.as_str(), files.iter().collect()))
            .collect();
        serde_json::to_value(sorted).expect("maps of strings and integers serialise")
    }
}

/// Where a snapshot count came from, per instance, for reporting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceSnapshot {
    pub instance_id: String,
    /// The folder used, or `None` when no folder was found for the instance.
    pub folder: Option<PathBuf>,
    pub report: SnapshotReport,
}

/// Counts the ground-truth files of every row from its snapshot folder under `repos_root` (see
/// [`crate::dataset::BenchRow::snapshot_dir`]). Instances without a folder get no counts; the
/// returned reports say which, and which files were missing.
pub fn count_from_snapshots(
    rows: &[crate::dataset::BenchRow],
    repos_root: &Path,
) -> (LineCounts, Vec<InstanceSnapshot>) {
    use rayon::prelude::*;
    let per_instance: Vec<(FileLineCounts, InstanceSnapshot)> = rows
        .par_iter()
        .map(|row| {
            let folder = row.snapshot_dir(repos_root);
            let (counts, report) = match &folder {
                Some(dir) => FileLineCounts::from_snapshot(dir, &row.ground_truth),
                None => (FileLineCounts::default(), SnapshotReport::default()),
            };
            let snapshot = InstanceSnapshot {
                instance_id: row.instance_id.clone(),
                folder,
                report,
            };
            (counts, snapshot)
        })
        .collect();
    let mut counts = LineCounts::default();
    let mut snapshots = Vec::with_capacity(per_instance.len());
    for (files, snapshot) in per_instance {
        if snapshot.folder.is_some() {
            counts.insert(snapshot.instance_id.clone(), files);
        }
        snapshots.push(snapshot);
    }
    (counts, snapshots)
}
