//! What the ground-truth builder needs to know about a repository snapshot: whether a
//! repository-relative path is a file, and how many lines it has.
//!
//! Two views exist: [`SnapshotDir`] reads a materialised snapshot on disk (what `swex gt build`
//! uses), [`LineCountTable`] answers from a `{path: line_count}` table (what the coverage
//! measurement uses when only the ground-truth files' counts are at hand, e.g. in CI). Line counts
//! follow the reference evaluator ([`swex_text::bytes_line_count`]): the number of lines Python's
//! `str.splitlines()` yields on the file decoded as UTF-8 with invalid bytes ignored.
//!
//! This module does not know about trajectories or the reads in them.

use crate::linecounts::MAX_COUNTED_FILE_SIZE;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use swex_engine::scan::CheckoutRoot;

/// A read-only view of one repository snapshot. Paths are repository-relative with `/`
/// separators and already normalised (no `.`/`..` components, no leading `/`).
pub trait RepoView: Send + Sync {
    fn is_file(&self, path: &str) -> bool;
    /// `None` when `path` is not a readable file of the snapshot.
    fn line_count(&self, path: &str) -> Option<u64>;
}

/// A materialised snapshot directory (the reference layout `repos/<instance_id>`).
/// Line counts are computed once per path and cached. A path that leads out of the snapshot
/// through a symlink is no file of it (the engine's one symlink rule,
/// [`swex_engine::scan::CheckoutRoot`]).
pub struct SnapshotDir {
    root: PathBuf,
    checkout: Option<CheckoutRoot>,
    counts: Mutex<HashMap<String, Option<u64>>>,
}

impl SnapshotDir {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        SnapshotDir {
            checkout: CheckoutRoot::new(&root).ok(),
            root,
            counts: Mutex::new(HashMap::new()),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The snapshot's reader, for a path that stays inside it.
    fn checkout_of(&self, path: &str) -> Option<&CheckoutRoot> {
        // Normalised paths never climb out, but a view must not trust its callers with that.
        if path.is_empty() || path.starts_with('/') || path.split('/').any(|c| c == "..") {
            return None;
        }
        self.checkout.as_ref()
    }
}

impl RepoView for SnapshotDir {
    fn is_file(&self, path: &str) -> bool {
        self.checkout_of(path)
            .is_some_and(|c| c.open(Path::new(path)).is_ok())
    }

    fn line_count(&self, path: &str) -> Option<u64> {
        if let Some(known) = self.counts.lock().ok()?.get(path) {
            return *known;
        }
        // Through the engine's one reader of checkouts, as the benchmark's line counts.
        let count = self
            .checkout_of(path)
            .and_then(|c| c.read(Path::new(path), MAX_COUNTED_FILE_SIZE).ok())
            .map(|bytes| swex_text::bytes_line_count(&bytes) as u64);
        self.counts.lock().ok()?.insert(path.to_string(), count);
        count
    }
}

/// A view that knows only the files of a `{path: line_count}` table; every other path is treated
/// as absent. Enough to measure reads against ground truth whose files are all in the table.
#[derive(Debug, Clone, Default)]
pub struct LineCountTable {
    counts: BTreeMap<String, u64>,
}

impl LineCountTable {
    pub fn new(counts: BTreeMap<String, u64>) -> Self {
        LineCountTable { counts }
    }
}

impl RepoView for LineCountTable {
    fn is_file(&self, path: &str) -> bool {
        self.counts.contains_key(path)
    }

    fn line_count(&self, path: &str) -> Option<u64> {
        self.counts.get(path).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_dir_counts_and_refuses_escapes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
        std::fs::write(dir.path().join("pkg/a.py"), "x\ny\nz\n").unwrap();
        let view = SnapshotDir::new(dir.path());
        assert!(view.is_file("pkg/a.py"));
        assert!(!view.is_file("pkg"));
        assert_eq!(view.line_count("pkg/a.py"), Some(3));
        assert_eq!(view.line_count("pkg/../pkg/a.py"), None);
        assert_eq!(view.line_count("missing.py"), None);
        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().unwrap();
            std::fs::write(outside.path().join("o.py"), "1\n2\n").unwrap();
            std::os::unix::fs::symlink(outside.path().join("o.py"), dir.path().join("out.py"))
                .unwrap();
            std::os::unix::fs::symlink("a.py", dir.path().join("pkg/in.py")).unwrap();
            let view = SnapshotDir::new(dir.path());
            assert!(!view.is_file("out.py"));
            assert_eq!(view.line_count("out.py"), None);
            assert_eq!(view.line_count("pkg/in.py"), Some(3));
        }
    }
}
