//! [`MemoryBackend`]: a snapshot held in memory, for testing explorers without a checkout on disk
//! or the engine.
//!
//! It answers the file services exactly as the filesystem backend does (both go through
//! [`crate::files`]; the conformance suite holds all backends to the same answers) and
//! `issue_clues`; the index services (chunks, lexical and dense search, definitions, graph)
//! answer `Unavailable`, as they do without an index.

use crate::backend::ServiceBackend;
use crate::files;
use swex_plugin::ServiceError;
use swex_plugin::types::*;

/// Files by repository-relative path (`/` separators), with their bytes.
#[derive(Debug, Clone, Default)]
pub struct MemoryBackend {
    /// Sorted by path; one entry per path (the last one given wins).
    entries: Vec<FileEntry>,
    /// The bytes of `entries[i]`.
    contents: Vec<Vec<u8>>,
}

impl MemoryBackend {
    /// A snapshot of these `(path, bytes)` files.
    ///
    /// ```
    /// use swex_plugin_serve::MemoryBackend;
    /// let snapshot = MemoryBackend::new([("src/app.py", "def main():\n    pass\n")]);
    /// assert!(snapshot.contains("src/app.py"));
    /// ```
    pub fn new<P: Into<String>, B: Into<Vec<u8>>>(
        files: impl IntoIterator<Item = (P, B)>,
    ) -> MemoryBackend {
        let mut pairs: Vec<(String, Vec<u8>)> = files
            .into_iter()
            .map(|(path, bytes)| (path.into(), bytes.into()))
            .collect();
        // Stable, so that after sorting the last of equal paths can win.
        pairs.sort_by(|a, b| a.0.cmp(&b.0));
        let mut backend = MemoryBackend::default();
        for (path, bytes) in pairs {
            if backend.entries.last().is_some_and(|e| e.path == path) {
                backend.entries.pop();
                backend.contents.pop();
            }
            backend
                .entries
                .push(FileEntry::new(path, bytes.len() as u64));
            backend.contents.push(bytes);
        }
        backend
    }

    /// This snapshot with one more file (or a file replaced).
    pub fn with_file(self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) -> MemoryBackend {
        let mut files: Vec<(String, Vec<u8>)> = self
            .entries
            .into_iter()
            .map(|e| e.path)
            .zip(self.contents)
            .collect();
        files.push((path.into(), bytes.into()));
        MemoryBackend::new(files)
    }

    /// Whether `path` is a file of the snapshot.
    pub fn contains(&self, path: &str) -> bool {
        self.index_of(path).is_some()
    }

    fn index_of(&self, path: &str) -> Option<usize> {
        self.entries
            .binary_search_by(|entry| entry.path.as_str().cmp(path))
            .ok()
    }

    fn file(
        &self,
        service: swex_plugin::ServiceId,
        path: &str,
    ) -> Result<(&FileEntry, &[u8]), ServiceError> {
        let index = self
            .index_of(path)
            .ok_or_else(|| files::not_found(service, path))?;
        Ok((&self.entries[index], &self.contents[index]))
    }
}

impl ServiceBackend for MemoryBackend {
    fn backend_name(&self) -> &str {
        "memory"
    }

    fn contains_file(&self, path: &str) -> bool {
        self.contains(path)
    }

    fn list_files(&self, args: ListFilesArgs) -> Result<ListFilesResult, ServiceError> {
        Ok(files::list_files(&self.entries, &args))
    }

    fn file_info(&self, args: FileInfoArgs) -> Result<FileInfoResult, ServiceError> {
        let (entry, bytes) = self.file(swex_plugin::ServiceId::FileInfo, &args.path)?;
        Ok(files::file_info(entry, bytes))
    }

    fn read_lines(&self, args: ReadLinesArgs) -> Result<ReadLinesResult, ServiceError> {
        let (_, bytes) = self.file(swex_plugin::ServiceId::ReadLines, &args.path)?;
        Ok(files::read_lines(bytes, &args))
    }

    fn grep(&self, args: GrepArgs) -> Result<GrepResult, ServiceError> {
        let mut grep = files::Grep::new(&args)?;
        for (entry, bytes) in self.entries.iter().zip(&self.contents) {
            if grep.is_full() {
                break;
            }
            grep.search(&entry.path, bytes);
        }
        Ok(grep.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_files_replace_earlier_ones_and_order_is_by_path() {
        let backend = MemoryBackend::new([("b.py", "1\n"), ("a.py", "x\n"), ("b.py", "2\n3\n")])
            .with_file("c/d.py", "");
        let files = backend.list_files(ListFilesArgs::default()).unwrap().files;
        let listed: Vec<(&str, u64)> = files.iter().map(|f| (f.path.as_str(), f.size)).collect();
        assert_eq!(listed, [("a.py", 2), ("b.py", 4), ("c/d.py", 0)]);
        let info = backend.file_info(FileInfoArgs::new("b.py")).unwrap().file;
        assert_eq!(info.line_count, Some(2));
    }
}
