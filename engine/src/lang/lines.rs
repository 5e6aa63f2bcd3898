//! Line arithmetic shared by the analysers.
//!
//! Two notions of "line" coexist and must not be confused:
//! - **`\n`-lines**: what editors, tree-sitter rows and the benchmark's regions count. Every span
//!   the analysers produce (chunks, definitions, imports, references) is in `\n`-lines.
//! - **Python lines**: what `str.splitlines()` yields, which also breaks at `\r`, `\x0b`, `\x0c`,
//!   `\x1c`–`\x1e`, `\x85`, U+2028 and U+2029. The benchmark's metric clamps `end = -1` regions to
//!   this count, so [`crate::analysis::FileAnalysis::line_count`] reports it.
//!
//! The two agree on ordinary `\n` or `\r\n` text; they differ for files with lone `\r`, form
//! feeds and the other separators.

/// Number of lines Python's `str.splitlines()` yields for `text`.
///
/// Line boundaries: `\n`, `\r`, `\r\n` (one boundary), `\x0b`, `\x0c`, `\x1c`, `\x1d`, `\x1e`,
/// `\x85`, U+2028, U+2029. A trailing boundary does not start an extra empty line; `""` has 0 lines.
pub fn python_line_count(text: &str) -> u32 {
    let mut count: u32 = 0;
    let mut line_open = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                count = count.saturating_add(1);
                line_open = false;
            }
            '\n' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}'
            | '\u{2029}' => {
                count = count.saturating_add(1);
                line_open = false;
            }
            _ => line_open = true,
        }
    }
    count.saturating_add(u32::from(line_open))
}

/// Number of `\n`-delimited lines: the lines chunks must cover. A trailing `\n` does not start an
/// extra empty line; `""` has 0 lines.
pub fn newline_line_count(text: &str) -> u32 {
    let newlines = memchr_count(text.as_bytes(), b'\n');
    let unterminated_tail = !text.is_empty() && !text.ends_with('\n');
    u32::try_from(newlines + usize::from(unterminated_tail)).unwrap_or(u32::MAX)
}

fn memchr_count(bytes: &[u8], needle: u8) -> usize {
    bytes.iter().filter(|&&b| b == needle).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, python: u32, newline: u32) {
        assert_eq!(python_line_count(text), python, "python count of {text:?}");
        assert_eq!(
            newline_line_count(text),
            newline,
            "newline count of {text:?}"
        );
    }

    #[test]
    fn counts_match_python_splitlines_and_newline_split() {
        check("", 0, 0);
        check("a", 1, 1);
        check("a\n", 1, 1);
        check("a\nb", 2, 2);
        check("\n", 1, 1);
        check("\n\n", 2, 2);
        check("a\r\nb\r\n", 2, 2);
        check("a\rb", 2, 1);
        check("a\r", 1, 1);
        check("a\x0cb\n", 2, 1);
        check("a\x0bb\x1cc\x1dd\x1ee\n", 5, 1);
        check("a\u{85}b\u{2028}c\u{2029}", 3, 1);
        check("\r\n\r\n", 2, 2);
        check("\r\r\n", 2, 1);
        check("x\n\x0c\ny", 4, 3);
    }
}
