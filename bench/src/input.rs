//! Bounded reading of the files a user names on the command line: benchmark rows, result rows,
//! issue maps, line counts, `--config @FILE`, `--sources`, trajectories, an issue on stdin.
//!
//! Every such read is capped, so that a mistyped or hostile path (`--bench /dev/zero`, an endless
//! pipe, a multi-gigabyte file with no newline) is a clear error instead of a process that grows
//! until it is killed:
//! - a JSONL row (one line) holds at most [`MAX_ROW_BYTES`] bytes: a longer one is
//!   `FILE:LINE: row is larger than N bytes`, found after reading that many bytes of it;
//! - a JSONL file holds at most [`MAX_JSONL_BYTES`] bytes in all, blank lines included (an endless
//!   stream of short or blank lines ends there);
//! - a whole-document file (JSON object, configuration, issue text) holds at most
//!   [`MAX_DOCUMENT_BYTES`] bytes.
//!
//! Lines are read with [`BufRead::fill_buf`] and copied into the row buffer only while the row is
//! within its limit, so no allocation ever exceeds a limit (`read_line` on an unbounded stream
//! would grow its buffer until the newline that never comes). The limits are far above every real
//! file (the largest SWE-Explore row is about 10 KB; a long log pasted into an issue a few MB);
//! they are stated in docs/score.md and docs/bench.md.
//!
//! This module knows bytes and lines only; each loader turns its lines into rows and its own
//! errors (see [`crate::dataset`], [`crate::results`]).

use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::path::{Path, PathBuf};

/// The longest JSONL row (one line, without its newline), in bytes: 64 MiB.
pub const MAX_ROW_BYTES: usize = 64 << 20;
/// The largest JSONL file, in bytes: 1 GiB.
pub const MAX_JSONL_BYTES: u64 = 1 << 30;
/// The largest whole-document input (a JSON object, a configuration, an issue text): 256 MiB.
pub const MAX_DOCUMENT_BYTES: u64 = 256 << 20;

/// The deepest nesting of arrays and objects a JSON row or document may have, the row's own
/// object counting as one: serde_json's parser refuses a 128th level (its recursion limit, which
/// keeps a hostile document from overflowing the stack). Fields swex does not know are kept and
/// written back unchanged at every depth up to this one; a deeper row is refused with this limit
/// named ([`too_deep`]), never taken for malformed JSON.
pub const MAX_JSON_DEPTH: usize = 127;

/// The deepest nesting of arrays and objects in JSON text (brackets inside strings do not count),
/// in one pass; for text that is not JSON the count is meaningless but finite.
pub fn json_depth(text: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in text {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The message for a row nested `depth` levels deep, when that is over [`MAX_JSON_DEPTH`].
pub fn too_deep(text: &[u8]) -> Option<String> {
    let depth = json_depth(text);
    (depth > MAX_JSON_DEPTH).then(|| {
        format!(
            "nested {depth} levels deep; rows and documents may nest arrays and objects at most \
             {MAX_JSON_DEPTH} levels deep (the JSON parser's limit)"
        )
    })
}

/// A byte count for messages: `67108864 bytes (64 MiB)`.
struct Bytes(u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
            write!(f, "{n} bytes ({} GiB)", n >> 30)
        } else if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
            write!(f, "{n} bytes ({} MiB)", n >> 20)
        } else {
            write!(f, "{n} bytes")
        }
    }
}

/// Why a bounded read stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A line longer than the row limit; `line` is 1-based.
    #[error("{}:{line}: row is larger than {}", path.display(), Bytes(*limit as u64))]
    RowTooLarge {
        path: PathBuf,
        line: usize,
        limit: usize,
    },
    /// More bytes than the file limit.
    #[error("{}: larger than {}", path.display(), Bytes(*limit))]
    FileTooLarge { path: PathBuf, limit: u64 },
}

impl ReadError {
    /// What went wrong, without the path (for messages that name the file themselves).
    pub fn reason(&self) -> String {
        match self {
            ReadError::Io { source, .. } => format!("cannot read: {source}"),
            ReadError::RowTooLarge { line, limit, .. } => {
                format!("line {line}: row is larger than {}", Bytes(*limit as u64))
            }
            ReadError::FileTooLarge { limit, .. } => format!("larger than {}", Bytes(*limit)),
        }
    }

    pub fn path(&self) -> &Path {
        match self {
            ReadError::Io { path, .. }
            | ReadError::RowTooLarge { path, .. }
            | ReadError::FileTooLarge { path, .. } => path,
        }
    }
}

/// Reads the whole of `path`, at most `limit` bytes; more is [`ReadError::FileTooLarge`], found
/// after reading `limit + 1` bytes (so `/dev/zero` and endless pipes end too).
pub fn read_document(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    // A regular file's size is known: refuse before reading a byte.
    if let Ok(meta) = file.metadata()
        && meta.is_file()
        && meta.len() > limit
    {
        return Err(ReadError::FileTooLarge {
            path: path.to_path_buf(),
            limit,
        });
    }
    read_capped(file, path, limit)
}

/// Appends `more` to `buffer`, whose length stays at most `limit`: the capacity doubles as
/// `Vec` would grow it, but never past `limit`, so a buffer near its limit does not reserve twice
/// the limit.
fn extend_within(buffer: &mut Vec<u8>, more: &[u8], limit: usize) {
    let needed = buffer.len() + more.len();
    debug_assert!(needed <= limit);
    if needed > buffer.capacity() {
        let target = (buffer.len() * 2).max(needed).max(4096).min(limit);
        buffer.reserve_exact(target - buffer.len());
    }
    buffer.extend_from_slice(more);
}

/// Reads `reader` to its end, at most `limit` bytes; `name` is what errors call it (a path, or
/// `stdin`).
pub fn read_capped(mut reader: impl Read, name: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let limit_bytes = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(ReadError::Io {
                    path: name.to_path_buf(),
                    source,
                });
            }
        };
        if bytes.len() + n > limit_bytes {
            return Err(ReadError::FileTooLarge {
                path: name.to_path_buf(),
                limit,
            });
        }
        extend_within(&mut bytes, &chunk[..n], limit_bytes);
    }
}

/// [`read_document`] as text; invalid UTF-8 is an error naming the line. A leading UTF-8
/// byte-order mark is dropped.
pub fn read_text(path: &Path, limit: u64) -> Result<String, TextError> {
    let bytes = read_document(path, limit)?;
    into_text(path, bytes)
}

/// [`read_text`] for callers whose errors hold an [`std::io::Error`]: the original one when the
/// file cannot be read, else one of kind `InvalidData` saying which limit or line.
pub fn read_text_io(path: &Path, limit: u64) -> std::io::Result<String> {
    read_text(path, limit).map_err(|e| match e {
        TextError::Read(ReadError::Io { source, .. }) => source,
        other => std::io::Error::new(ErrorKind::InvalidData, other.reason()),
    })
}

/// Bytes as text: a leading byte-order mark dropped, invalid UTF-8 named by line.
pub fn into_text(path: &Path, mut bytes: Vec<u8>) -> Result<String, TextError> {
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        TextError::NotUtf8 {
            path: path.to_path_buf(),
            line: 1 + valid.iter().filter(|&&b| b == b'\n').count(),
        }
    })
}

/// Why [`read_text`] failed.
#[derive(Debug, thiserror::Error)]
pub enum TextError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("{}: line {line}: not valid UTF-8", path.display())]
    NotUtf8 { path: PathBuf, line: usize },
}

impl TextError {
    /// What went wrong, without the path.
    pub fn reason(&self) -> String {
        match self {
            TextError::Read(e) => e.reason(),
            TextError::NotUtf8 { line, .. } => format!("line {line}: not valid UTF-8"),
        }
    }
}

/// The UTF-8 byte-order mark, which some editors put at the start of a text file.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One line of a [`Lines`] reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// 1-based.
    pub number: usize,
    /// The line without its `\n` (a `\r` before it is kept; the first line's byte-order mark is
    /// dropped).
    pub bytes: &'a [u8],
    /// Whether a `\n` ended the line (only the last line of a file can lack one).
    pub terminated: bool,
}

/// The lines of a JSONL input, each at most `row_limit` bytes, all together at most `file_limit`.
#[derive(Debug)]
pub struct Lines<R> {
    reader: R,
    path: PathBuf,
    row_limit: usize,
    file_limit: u64,
    consumed: u64,
    number: usize,
    row: Vec<u8>,
    done: bool,
}

impl Lines<BufReader<File>> {
    /// Opens `path` with the limits of a JSONL file ([`MAX_ROW_BYTES`], [`MAX_JSONL_BYTES`]).
    pub fn open(path: &Path) -> Result<Self, ReadError> {
        let file = File::open(path).map_err(|source| ReadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Lines::new(
            BufReader::with_capacity(1 << 16, file),
            path,
            MAX_ROW_BYTES,
            MAX_JSONL_BYTES,
        ))
    }
}

impl<R: BufRead> Lines<R> {
    /// Lines of `reader`; `path` names it in errors.
    pub fn new(reader: R, path: &Path, row_limit: usize, file_limit: u64) -> Self {
        Lines {
            reader,
            path: path.to_path_buf(),
            row_limit,
            file_limit,
            consumed: 0,
            number: 0,
            row: Vec::new(),
            done: false,
        }
    }

    /// The next line, or `None` at the end of the input.
    pub fn next_line(&mut self) -> Result<Option<Line<'_>>, ReadError> {
        if self.done {
            return Ok(None);
        }
        self.row.clear();
        let number = self.number + 1;
        let mut terminated = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(ReadError::Io {
                        path: self.path.clone(),
                        source,
                    });
                }
            };
            if available.is_empty() {
                self.done = true;
                break;
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let piece = &available[..newline.unwrap_or(available.len())];
            if self.row.len() + piece.len() > self.row_limit {
                self.done = true;
                return Err(ReadError::RowTooLarge {
                    path: self.path.clone(),
                    line: number,
                    limit: self.row_limit,
                });
            }
            let used = piece.len() + usize::from(newline.is_some());
            self.consumed += used as u64;
            if self.consumed > self.file_limit {
                self.done = true;
                return Err(ReadError::FileTooLarge {
                    path: self.path.clone(),
                    limit: self.file_limit,
                });
            }
            extend_within(&mut self.row, piece, self.row_limit);
            self.reader.consume(used);
            if newline.is_some() {
                terminated = true;
                break;
            }
        }
        if !terminated && self.row.is_empty() {
            return Ok(None);
        }
        self.number = number;
        let bytes = if number == 1 {
            self.row.strip_prefix(BOM).unwrap_or(&self.row)
        } else {
            &self.row
        };
        Ok(Some(Line {
            number,
            bytes,
            terminated,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn lines_of(text: &[u8], row_limit: usize, file_limit: u64) -> Result<Vec<String>, String> {
        let mut lines = Lines::new(Cursor::new(text), Path::new("f"), row_limit, file_limit);
        let mut out = Vec::new();
        loop {
            match lines.next_line() {
                Ok(Some(line)) => out.push(format!(
                    "{}{}:{}",
                    if line.terminated { "" } else { "!" },
                    line.number,
                    String::from_utf8_lossy(line.bytes)
                )),
                Ok(None) => return Ok(out),
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    #[test]
    fn lines_are_cut_at_newlines_with_numbers() {
        let cases: &[(&[u8], &[&str])] = &[
            (b"", &[]),
            (b"a\n", &["1:a"]),
            (b"a\nb", &["1:a", "!2:b"]),
            (b"\n\nc\n", &["1:", "2:", "3:c"]),
            (
                b"\xEF\xBB\xBFx\r\n\xEF\xBB\xBFy\n",
                &["1:x\r", "2:\u{feff}y"],
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(lines_of(text, 100, 1000).unwrap(), *expected, "{text:?}");
        }
    }

    #[test]
    fn depth_counts_brackets_outside_strings() {
        for (text, depth) in [
            ("1", 0),
            ("{}", 1),
            (r#"{"a": [1, {"b": []}]}"#, 4),
            (r#"{"a": "[[[{{{"}"#, 1),
            (r#"{"a": "\"[[", "b": [[]]}"#, 3),
            (r#"["\\", [[]]]"#, 3),
        ] {
            assert_eq!(json_depth(text.as_bytes()), depth, "{text}");
        }
        // The limit is serde_json's: one level more is refused by the parser itself.
        let nested = |d: usize| format!("{}{}", "[".repeat(d), "]".repeat(d));
        let at_limit = nested(MAX_JSON_DEPTH);
        assert!(serde_json::from_str::<serde_json::Value>(&at_limit).is_ok());
        assert!(too_deep(at_limit.as_bytes()).is_none());
        let over = nested(MAX_JSON_DEPTH + 1);
        assert!(serde_json::from_str::<serde_json::Value>(&over).is_err());
        assert!(
            too_deep(over.as_bytes())
                .unwrap()
                .starts_with("nested 128 levels deep")
        );
    }

    #[test]
    fn a_row_over_the_limit_names_its_line() {
        assert_eq!(lines_of(b"abc\nabcd\n", 4, 1000).unwrap().len(), 2);
        let error = lines_of(b"abc\nabcde\n", 4, 1000).unwrap_err();
        assert_eq!(error, "f:2: row is larger than 4 bytes");
        // The file limit counts every byte, blank lines too.
        let error = lines_of(&b"\n".repeat(20), 4, 10).unwrap_err();
        assert_eq!(error, "f: larger than 10 bytes");
    }

    /// A reader that never ends and counts what it hands out: the reader stops at the limit
    /// instead of reading on.
    struct Endless {
        byte: u8,
        given: u64,
    }

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            buf.fill(self.byte);
            self.given += buf.len() as u64;
            Ok(buf.len())
        }
    }

    #[test]
    fn endless_inputs_end_at_the_limits() {
        let mut zeros = Endless { byte: 0, given: 0 };
        let reader = BufReader::with_capacity(1024, &mut zeros);
        let mut lines = Lines::new(reader, Path::new("/dev/zero"), 1 << 20, 1 << 30);
        let error = lines.next_line().unwrap_err().to_string();
        assert_eq!(
            error,
            "/dev/zero:1: row is larger than 1048576 bytes (1 MiB)"
        );
        // Nothing was reserved past the limit.
        assert!(lines.row.capacity() <= 1 << 20, "{}", lines.row.capacity());
        drop(lines);
        assert!(
            zeros.given <= (1 << 20) + 1024,
            "read {} bytes",
            zeros.given
        );

        let mut blank = Endless {
            byte: b'\n',
            given: 0,
        };
        let reader = BufReader::with_capacity(1024, &mut blank);
        let mut lines = Lines::new(reader, Path::new("pipe"), 1 << 20, 1 << 16);
        let error = loop {
            match lines.next_line() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("an endless input ended"),
                Err(e) => break e.to_string(),
            }
        };
        assert_eq!(error, "pipe: larger than 65536 bytes");

        let error = read_capped(
            Endless {
                byte: b'x',
                given: 0,
            },
            Path::new("stdin"),
            4096,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(error, "stdin: larger than 4096 bytes");
    }
}
