//! Lines as Python's `str.splitlines()` yields them: swex's one notion of a line.
//!
//! The benchmark scores regions in these lines (the reference reads files as UTF-8 with invalid
//! bytes ignored and splits them with `str.splitlines()`), so every line number swex exposes —
//! chunk and definition spans, import and reference lines, graph nodes, lexical and grep hits,
//! `read_lines`, the benchmark's line counts — counts them. Line boundaries: `\n`, `\r`, `\r\n`
//! (one boundary), `\x0b`, `\x0c`, `\x1c`, `\x1d`, `\x1e`, `\x85`, U+2028, U+2029. A trailing
//! boundary does not start an extra empty line; `""` has no lines.
//!
//! They differ from `\n`-delimited lines (tree-sitter rows, most editors) only for files with lone
//! `\r`, form feeds (common in older Python and C sources) and the other rare separators. The
//! engine's analysers therefore never use tree-sitter rows: they map node byte offsets through a
//! [`LineIndex`].
//!
//! Invalid UTF-8: [`bytes_line_count`] counts what the reference counts (the text decoded with
//! invalid bytes dropped, [`crate::decode_utf8_ignore`]). Text decoded lossily instead (invalid
//! sequences become U+FFFD, as the engine's scanner does) has the same lines except where an
//! invalid sequence sits between `\r` and `\n` (one boundary when dropped, two when replaced) or
//! forms a last line of its own; the replacement character itself is never a boundary.

use std::ops::Range;

/// Number of lines Python's `str.splitlines()` yields for `text`.
pub fn line_count(text: &str) -> usize {
    let mut count = 0usize;
    let mut line_open = false;
    for_each_boundary(text.as_bytes(), |_, next| {
        count += 1;
        line_open = next < text.len();
    });
    if count == 0 {
        return usize::from(!text.is_empty());
    }
    count + usize::from(line_open)
}

/// Number of lines of `bytes` as the benchmark's reference counts them:
/// `len(bytes.decode("utf-8", errors="ignore").splitlines())`.
pub fn bytes_line_count(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Ok(text) => line_count(text),
        // Dropping invalid bytes can join a `\r` and a `\n` into one boundary or empty a last
        // line, so count the decoded text, not the valid pieces one by one.
        Err(_) => line_count(&crate::decode_utf8_ignore(bytes)),
    }
}

/// Number of `\n`-delimited lines (tree-sitter rows). A trailing `\n` does not start an extra
/// empty line; `""` has 0 lines. Only for comparisons: swex counts [`line_count`].
pub fn newline_line_count(text: &str) -> usize {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    let unterminated_tail = !text.is_empty() && !text.ends_with('\n');
    newlines + usize::from(unterminated_tail)
}

/// The splitlines lines of each `\n`-delimited line of `text` (the lines `git diff` and `sed`
/// number): entry `k - 1` is `[first, last]`, the 1-based [`split_lines`] lines that `\n`-line
/// `k` holds. They are one line unless it holds a lone `\r` or another boundary `\n` lines do
/// not break at (`\x0b`, `\x0c`, ...); a `\r\n` ending is one boundary, as in both.
pub fn newline_line_spans(text: &str) -> Vec<[u32; 2]> {
    let index = LineIndex::new(text);
    let mut spans = Vec::with_capacity(newline_line_count(text));
    let mut start = 0;
    while start < text.len() {
        // The `\n` ends the line and belongs to it, so a `\r\n` ending stays one boundary.
        let end = text[start..]
            .find('\n')
            .map_or(text.len(), |at| start + at + 1);
        spans.push([index.line_of_byte(start), index.last_line_of(start, end)]);
        start = end;
    }
    spans
}

/// The lines of `text` without their terminators, exactly as Python's `str.splitlines()`.
pub fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    for_each_boundary(text.as_bytes(), |at, next| {
        lines.push(&text[start..at]);
        start = next;
    });
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Calls `found(at, next)` for each line boundary in order: the terminator occupies bytes
/// `at..next`. Works on bytes: in valid UTF-8, `C2 85` is exactly U+0085 and `E2 80 A8`/`E2 80
/// A9` exactly U+2028/U+2029, so no decoding is needed.
fn for_each_boundary(bytes: &[u8], mut found: impl FnMut(usize, usize)) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    let mut index = 0;
    while index < bytes.len() {
        // Every terminator starts with a byte below 0x1f or a non-ASCII byte, and most text has
        // none in a run of 8 bytes: skip such runs a word at a time. A byte's high bit is set in
        // `suspects` if it is non-ASCII or (through the subtraction's borrow) below 0x1f; borrows
        // only run upwards, so the lowest set bit always marks a real suspect.
        if let Some(word) = bytes.get(index..index + 8) {
            let word = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            let suspects = (word.wrapping_sub(ONES * 0x1f) | word) & HIGH_BITS;
            if suspects == 0 {
                index += 8;
                continue;
            }
            index += (suspects.trailing_zeros() / 8) as usize;
        }
        let width = match bytes[index] {
            b'\r' if bytes.get(index + 1) == Some(&b'\n') => 2,
            b'\n' | b'\r' | 0x0b | 0x0c | 0x1c..=0x1e => 1,
            0xc2 if bytes.get(index + 1) == Some(&0x85) => 2,
            0xe2 if bytes.get(index + 1) == Some(&0x80)
                && matches!(bytes.get(index + 2), Some(0xa8 | 0xa9)) =>
            {
                3
            }
            _ => 0,
        };
        if width > 0 {
            found(index, index + width);
            index += width;
        } else {
            index += 1;
        }
    }
}

/// Byte offsets of the lines of one text: maps byte offsets to 1-based line numbers and line
/// ranges back to bytes. Built once per file in O(bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    /// Byte offset where each line starts (its first byte), ascending; never holds `len`.
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = Vec::with_capacity(text.len() / 32 + 1);
        if !text.is_empty() {
            starts.push(0);
        }
        for_each_boundary(text.as_bytes(), |_, next| {
            if next < text.len() {
                starts.push(next);
            }
        });
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    /// Number of lines (equals [`line_count`], saturated to `u32`: engine spans are `u32`).
    pub fn line_count(&self) -> u32 {
        u32::try_from(self.starts.len()).unwrap_or(u32::MAX)
    }

    /// The 1-based line holding byte `offset` (a line's terminator belongs to it); offsets at or
    /// past the end give the last line, and an empty text gives line 1.
    pub fn line_of_byte(&self, offset: usize) -> u32 {
        let line = self.starts.partition_point(|&start| start <= offset).max(1);
        u32::try_from(line).unwrap_or(u32::MAX)
    }

    /// The line of the last byte of `start..end` (the start's line when the range is empty): a
    /// syntax node that swallowed its line's terminator still ends on that line.
    pub fn last_line_of(&self, start: usize, end: usize) -> u32 {
        self.line_of_byte(if end > start { end - 1 } else { start })
    }

    /// Line `line` (1-based) of `text`, the text this index was built on, without its
    /// terminator: the `line`-th item of [`split_lines`]; empty past the last line.
    pub fn line<'t>(&self, text: &'t str, line: u32) -> &'t str {
        let with_terminator = &text[self.byte_range(line, line)];
        // A line ends at a terminator, or at the end of the text: a terminator character at its
        // end is always its terminator (`\r\n` is one).
        let terminator = if with_terminator.ends_with("\r\n") {
            2
        } else {
            with_terminator.chars().next_back().map_or(0, |c| match c {
                '\n'
                | '\r'
                | '\x0b'
                | '\x0c'
                | '\x1c'..='\x1e'
                | '\u{85}'
                | '\u{2028}'
                | '\u{2029}' => c.len_utf8(),
                _ => 0,
            })
        };
        &with_terminator[..with_terminator.len() - terminator]
    }

    /// Bytes of lines `start..=end` (1-based), terminators included, clamped to the text; empty
    /// when `end < start` or `start` is past the last line.
    pub fn byte_range(&self, start: u32, end: u32) -> Range<usize> {
        let first = start.max(1) as usize - 1;
        if end < start || first >= self.starts.len() {
            return self.len..self.len;
        }
        let from = self.starts[first];
        let to = self.starts.get(end as usize).copied().unwrap_or(self.len);
        from..to.max(from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as Python 3 `str.splitlines()` gives them (checked against CPython 3.11).
    fn check(text: &str, expected: &[&str], newline: usize) {
        assert_eq!(split_lines(text), expected, "splitlines of {text:?}");
        let count = expected.len();
        assert_eq!(line_count(text), count, "python count of {text:?}");
        assert_eq!(
            bytes_line_count(text.as_bytes()),
            count,
            "bytes count of {text:?}"
        );
        let index = LineIndex::new(text);
        assert_eq!(
            index.line_count() as usize,
            count,
            "index count of {text:?}"
        );
        assert_eq!(
            newline_line_count(text),
            newline,
            "newline count of {text:?}"
        );
        // Every line's byte range starts with its content, and each byte maps back to its line.
        for (n, line) in expected.iter().enumerate() {
            let line_number = n as u32 + 1;
            assert_eq!(
                index.line(text, line_number),
                *line,
                "{text:?} line {line_number}"
            );
            let range = index.byte_range(line_number, line_number);
            assert!(
                text[range.clone()].starts_with(line),
                "{text:?} line {line_number}"
            );
            for offset in range {
                assert_eq!(
                    index.line_of_byte(offset),
                    line_number,
                    "{text:?} byte {offset}"
                );
            }
        }
    }

    #[test]
    fn lines_match_python_splitlines() {
        check("", &[], 0);
        check("a", &["a"], 1);
        check("a\n", &["a"], 1);
        check("a\nb", &["a", "b"], 2);
        check("\n", &[""], 1);
        check("\n\n", &["", ""], 2);
        check("a\r\nb\r\n", &["a", "b"], 2);
        check("a\rb", &["a", "b"], 1);
        check("a\r", &["a"], 1);
        check("a\x0cb\n", &["a", "b"], 1);
        check("a\x0bb\x1cc\x1dd\x1ee\n", &["a", "b", "c", "d", "e"], 1);
        check("a\u{85}b\u{2028}c\u{2029}", &["a", "b", "c"], 1);
        check("\r\n\r\n", &["", ""], 2);
        check("\r\r\n", &["", ""], 1);
        check("x\n\x0c\ny", &["x", "", "", "y"], 3);
        // Look-alikes that are not boundaries: U+2027, U+0084, U+FFFD, `\x1f`.
        check(
            "a\u{2027}b\u{84}c\u{fffd}d\x1fe",
            &["a\u{2027}b\u{84}c\u{fffd}d\x1fe"],
            1,
        );
    }

    /// `str.splitlines()` written over chars, the obvious way.
    fn reference_split(text: &str) -> Vec<&str> {
        let mut lines = Vec::new();
        let mut start = 0;
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            let boundary = matches!(
                c,
                '\n' | '\r' | '\x0b' | '\x0c' | '\x1c'
                    ..='\x1e' | '\u{85}' | '\u{2028}' | '\u{2029}'
            );
            if boundary {
                lines.push(&text[start..at]);
                start = at + c.len_utf8();
                if c == '\r' && chars.peek().is_some_and(|&(_, next)| next == '\n') {
                    chars.next();
                    start += 1;
                }
            }
        }
        if start < text.len() {
            lines.push(&text[start..]);
        }
        lines
    }

    /// The word-at-a-time scan finds terminators at every position within and across words,
    /// next to tabs, other control bytes and non-ASCII text.
    #[test]
    fn terminators_at_every_offset_of_longer_texts() {
        let terminators = [
            "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\u{85}", "\u{2028}",
            "\u{2029}",
        ];
        let fillers = ["x", "\t", "\x1f", "é", "\u{2027}", "\u{84}"];
        for terminator in terminators {
            for filler in fillers {
                for before in 0..20 {
                    for after in [0, 1, 7, 8, 9, 17] {
                        let text = format!(
                            "{}{terminator}{}{terminator}",
                            filler.repeat(before),
                            "y".repeat(after)
                        );
                        let expected = reference_split(&text);
                        assert_eq!(split_lines(&text), expected, "{text:?}");
                        let index = LineIndex::new(&text);
                        assert_eq!(index.line_count() as usize, expected.len(), "{text:?}");
                        let lines: Vec<&str> = (1..=index.line_count())
                            .map(|n| index.line(&text, n))
                            .collect();
                        assert_eq!(lines, expected, "{text:?}");
                        assert_eq!(index.line(&text, index.line_count() + 1), "");
                    }
                }
            }
        }
    }

    /// What CPython 3.11 gives for `len(b.decode("utf-8", "ignore").splitlines())`: invalid
    /// UTF-8 is dropped before boundaries are found.
    #[test]
    fn bytes_count_like_python_decoding_with_errors_ignored() {
        for (input, expected) in [
            (&b""[..], 0),
            (b"a", 1),
            (b"a\n\n", 2),
            (b"a\r\rb", 3),
            (b"a\x1fb", 1),
            (b"a\x0bb\x0cc\x1cd\x1de\x1ef", 6),
            // The dropped byte joins `\r` and `\n` into one boundary.
            (b"a\r\xff\nb", 2),
            (b"\xff", 0),
            // Nothing valid after the last boundary.
            (b"a\n\xff", 1),
            // A lone 0x85 byte is invalid UTF-8, not U+0085.
            (b"a\x85b", 1),
            // A truncated sequence is dropped, the `\n` survives.
            (b"a\xe2\x80b\nc", 2),
            (b"\xe2\x80\na", 2),
            (b"a\xe2\x80\xa8b", 2),
            (b"a\xe2\xa8b", 1),
        ] {
            assert_eq!(bytes_line_count(input), expected, "{input:?}");
        }
    }

    #[test]
    fn newline_lines_map_to_the_splitlines_lines_they_hold() {
        // `\n` lines: "a\r" | "b\rc" | "\x0c" | "" | "d" (no final `\n`).
        let text = "a\r\nb\rc\n\x0c\n\nd";
        assert_eq!(split_lines(text), ["a", "b", "c", "", "", "", "d"]);
        assert_eq!(
            newline_line_spans(text),
            [[1, 1], [2, 3], [4, 5], [6, 6], [7, 7]]
        );
        assert_eq!(newline_line_spans(""), Vec::<[u32; 2]>::new());
        assert_eq!(newline_line_spans("x\n"), [[1, 1]]);
        assert_eq!(newline_line_spans("\r\r\n"), [[1, 2]]);
    }

    #[test]
    fn byte_ranges_span_whole_lines() {
        let text = "a\r\nbb\x0cccc";
        let index = LineIndex::new(text);
        assert_eq!(&text[index.byte_range(1, 1)], "a\r\n");
        assert_eq!(&text[index.byte_range(2, 3)], "bb\x0cccc");
        assert_eq!(&text[index.byte_range(3, 99)], "ccc");
        assert_eq!(index.byte_range(4, 5), text.len()..text.len());
        assert_eq!(index.byte_range(2, 1), text.len()..text.len());
        assert_eq!(index.last_line_of(0, 3), 1, "a node ending with its CRLF");
        assert_eq!(index.last_line_of(3, 3), 2, "an empty node");
    }
}
