//! The file services over any source of files — `list_files`, `file_info`, `read_lines`, `grep` —
//! written once: the filesystem backend (`swex-plugin-host`) and [`crate::MemoryBackend`] both
//! answer through these functions, and the engine backend is held to the same answers by the
//! conformance suite ([`crate::conformance`]).
//!
//! The rules of the contract (see `swex_plugin::types`): files sorted by path (byte order); `under`
//! is a directory, matched by prefix whatever its name holds; text is UTF-8 with invalid bytes
//! dropped, split into Python `str.splitlines()` lines; grep skips binary files (a NUL byte in the
//! first 8 KiB, git's rule), reports matches in path then line order, cuts each line to
//! [`GrepMatch::TEXT_MAX_BYTES`] and says when `limit` cut the answer.

use swex_plugin::text::{Glob, decode_utf8_ignore, line_count, split_lines};
use swex_plugin::types::*;
use swex_plugin::{ServiceError, ServiceErrorKind, ServiceId};

/// Bytes inspected for a NUL byte to call a file binary (git's heuristic, as the engine's).
pub const BINARY_SNIFF_LEN: usize = 8 << 10;

/// Whether a file is binary for grep: a NUL byte in its first [`BINARY_SNIFF_LEN`] bytes.
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_SNIFF_LEN)].contains(&0)
}

/// The directory prefix (`dir/`) an `under` argument selects, or `None` for every file (absent,
/// empty, `.` or `/`).
pub fn under_prefix(under: Option<&str>) -> Option<String> {
    let dir = under?.trim_matches('/');
    let dir = dir.strip_prefix("./").unwrap_or(dir);
    (!dir.is_empty() && dir != ".").then(|| format!("{dir}/"))
}

/// `list_files` over the snapshot's entries (sorted by path).
pub fn list_files(entries: &[FileEntry], args: &ListFilesArgs) -> ListFilesResult {
    let files = match under_prefix(args.under.as_deref()) {
        None => entries.to_vec(),
        Some(prefix) => entries
            .iter()
            .filter(|f| f.path.starts_with(&prefix))
            .cloned()
            .collect(),
    };
    ListFilesResult { files }
}

/// The error of a path that is not a file of the snapshot.
pub fn not_found(service: ServiceId, path: &str) -> ServiceError {
    ServiceError::new(
        service,
        ServiceErrorKind::NotFound,
        format!("no file `{path}` in the snapshot"),
    )
}

/// `file_info` for a file's entry and bytes: the entry with its line count.
pub fn file_info(entry: &FileEntry, bytes: &[u8]) -> FileInfoResult {
    let mut file = entry.clone();
    let lines = line_count(&decode_utf8_ignore(bytes));
    file.line_count = Some(u32::try_from(lines).unwrap_or(u32::MAX));
    FileInfoResult { file }
}

/// `read_lines` of a file's bytes: lines `start..=end` (1-based; `end` absent or -1: to the end;
/// below 1: none), clamped to the file.
pub fn read_lines(bytes: &[u8], args: &ReadLinesArgs) -> ReadLinesResult {
    let text = decode_utf8_ignore(bytes);
    let lines = split_lines(&text);
    let total = lines.len();
    let start = args.start.unwrap_or(1).max(1);
    let end = match args.end {
        None | Some(-1) => total,
        Some(end) if end < 1 => 0,
        Some(end) => usize::try_from(end).unwrap_or(usize::MAX).min(total),
    };
    let first = start as usize - 1;
    let selected = if first < end {
        lines[first..end].iter().map(|l| (*l).to_owned()).collect()
    } else {
        Vec::new()
    };
    ReadLinesResult {
        start,
        lines: selected,
        total_lines: u32::try_from(total).unwrap_or(u32::MAX),
    }
}

/// A compiled `grep` request: the pattern and the glob, checked before any file is read.
pub struct Grep {
    regex: regex::Regex,
    glob: Option<Glob>,
    limit: usize,
    result: GrepResult,
}

impl Grep {
    /// Compiles `args`; a bad pattern or glob is `InvalidArgs`, naming the field.
    pub fn new(args: &GrepArgs) -> Result<Grep, ServiceError> {
        let invalid = |message: String| {
            ServiceError::new(ServiceId::Grep, ServiceErrorKind::InvalidArgs, message)
        };
        let regex = regex::RegexBuilder::new(&args.pattern)
            .case_insensitive(args.case_insensitive)
            .build()
            .map_err(|e| invalid(format!("pattern: {e}")))?;
        let glob = args
            .path_glob
            .as_deref()
            .map(Glob::new)
            .transpose()
            .map_err(|e| invalid(format!("path_glob: {e}")))?;
        Ok(Grep {
            regex,
            glob,
            limit: args.limit,
            result: GrepResult::default(),
        })
    }

    /// Whether the file at `path` is searched at all (its bytes need not be read otherwise).
    pub fn wants(&self, path: &str) -> bool {
        !self.is_full() && self.glob.as_ref().is_none_or(|g| g.is_match(path))
    }

    /// Whether the answer is complete (the limit was reached and cut it).
    pub fn is_full(&self) -> bool {
        self.result.truncated
    }

    /// Searches one file; files must come in path order.
    pub fn search(&mut self, path: &str, bytes: &[u8]) {
        if !self.wants(path) || is_binary(bytes) {
            return;
        }
        let text = decode_utf8_ignore(bytes);
        for (index, line) in split_lines(&text).into_iter().enumerate() {
            if !self.regex.is_match(line) {
                continue;
            }
            if self.result.matches.len() == self.limit {
                self.result.truncated = true;
                return;
            }
            self.result.matches.push(GrepMatch {
                path: path.to_owned(),
                line: u32::try_from(index + 1).unwrap_or(u32::MAX),
                text: GrepMatch::cut_text(line).to_owned(),
            });
        }
    }

    /// The answer: the matches collected so far (path then line order) and whether the limit cut
    /// it.
    pub fn finish(self) -> GrepResult {
        self.result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_prefixes() {
        for (under, expected) in [
            (None, None),
            (Some(""), None),
            (Some("."), None),
            (Some("/"), None),
            (Some("src"), Some("src/")),
            (Some("src/"), Some("src/")),
            (Some("./src/x/"), Some("src/x/")),
            (Some("a[1]"), Some("a[1]/")),
        ] {
            assert_eq!(under_prefix(under).as_deref(), expected, "{under:?}");
        }
    }

    #[test]
    fn read_lines_ranges() {
        let bytes = b"one\r\ntwo\rthree\n";
        let check = |start: Option<u32>, end: Option<i64>, expected: &[&str]| {
            let mut args = ReadLinesArgs::new("x");
            args.start = start;
            args.end = end;
            let result = read_lines(bytes, &args);
            assert_eq!(result.lines, expected, "{start:?}..{end:?}");
            assert_eq!(result.total_lines, 3);
        };
        check(None, None, &["one", "two", "three"]);
        check(Some(2), Some(2), &["two"]);
        check(Some(3), Some(-1), &["three"]);
        check(Some(0), Some(1), &["one"]);
        check(Some(5), Some(9), &[]);
        check(Some(2), Some(1), &[]);
        check(Some(1), Some(0), &[]);
        check(Some(1), Some(i64::MAX), &["one", "two", "three"]);
    }
}
