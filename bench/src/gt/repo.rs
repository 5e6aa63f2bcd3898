//! What the ground-truth builder needs to know about a repository snapshot: whether a
//! repository-relative path is a file, and how many lines it has.
//!
//! Two views exist: [`SnapshotDir`] reads a materialised snapshot on disk (what `swex gt build`
//! uses), [`LineCountTable`] answers from a `{path: line_count}` table (what the coverage
//! measurement uses when only the ground-truth files' counts are at hand, e.g. in CI). Line counts
//! follow the reference evaluator: the number of lines Python's `str.splitlines()` yields on the
//! file decoded as UTF-8 with invalid bytes ignored.
//!
//! This module does not know about trajectories or the reads in them.

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

/// Count lines as Python's `bytes.decode("utf-8", errors="ignore").splitlines()` would.
///
/// `splitlines` breaks on `\n`, `\r`, `\r\n`, `\x0b`, `\x0c`, `\x1c`, `\x1d`, `\x1e`, `\x85`,
/// U+2028 and U+2029; a final line without terminator counts, an empty text has no lines.
pub fn python_line_count(bytes: &[u8]) -> u64 {
    let mut count = 0u64;
    // Whether characters have been seen since the last line break.
    let mut open_line = false;
    let mut after_cr = false;
    for chunk in bytes.utf8_chunks() {
        for ch in chunk.valid().chars() {
            match ch {
                '\n' if after_cr => after_cr = false,
                '\r' => {
                    count += 1;
                    open_line = false;
                    after_cr = true;
                }
                '\n' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}'
                | '\u{2029}' => {
                    count += 1;
                    open_line = false;
                    after_cr = false;
                }
                _ => {
                    open_line = true;
                    after_cr = false;
                }
            }
        }
        // Invalid bytes are dropped by `errors="ignore"`: they neither open a line nor break one,
        // and they do not separate a `\r` from a following `\n`.
    }
    count + u64::from(open_line)
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

    fn full_path(&self, path: &str) -> Option<PathBuf> {
        // Normalised paths never climb out, but a view must not trust its callers with that.
        if path.is_empty() || path.starts_with('/') || path.split('/').any(|c| c == "..") {
            return None;
        }
        self.checkout.as_ref()?.resolve(Path::new(path)).ok()
    }
}

impl RepoView for SnapshotDir {
    fn is_file(&self, path: &str) -> bool {
        self.full_path(path).is_some_and(|p| p.is_file())
    }

    fn line_count(&self, path: &str) -> Option<u64> {
        if let Some(known) = self.counts.lock().ok()?.get(path) {
            return *known;
        }
        let count = self
            .full_path(path)
            .filter(|p| p.is_file())
            .and_then(|p| std::fs::read(p).ok())
            .map(|bytes| python_line_count(&bytes));
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
    fn line_count_matches_python_splitlines() {
        let cases: &[(&[u8], u64)] = &[
            (b"", 0),
            (b"a", 1),
            (b"a\n", 1),
            (b"a\nb", 2),
            (b"a\r\nb\r\n", 2),
            (b"a\rb\r", 2),
            (b"\n\n", 2),
            (b"a\x0cb\x1dc", 3),
            ("a\u{2028}b\u{85}".as_bytes(), 2),
            // An invalid byte between `\r` and `\n` is ignored, leaving one `\r\n` break.
            (b"a\r\xff\nb", 2),
            // A trailing invalid byte does not open a line.
            (b"a\n\xff", 1),
        ];
        for (input, expected) in cases {
            assert_eq!(python_line_count(input), *expected, "input {input:?}");
        }
    }

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
