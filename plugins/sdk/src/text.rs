//! Python-compatible text primitives, so that explorers and hosts see the same lines and tokens
//! as the reference tools (which read files with `errors="ignore"` and split with
//! `str.splitlines()` / `str.split()`).
//!
//! Known difference: none for valid UTF-8; invalid bytes are dropped exactly as Python's
//! `errors="ignore"` drops them (Rust's and Python's UTF-8 decoders agree on which bytes are
//! invalid).

/// Decodes UTF-8, dropping invalid bytes (Python's `bytes.decode("utf-8", errors="ignore")`).
pub fn decode_utf8_ignore(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => {
            let mut text = String::with_capacity(bytes.len());
            for chunk in bytes.utf8_chunks() {
                text.push_str(chunk.valid());
            }
            text
        }
    }
}

/// Whether Python's `str.splitlines()` breaks a line at `c` (`\r\n` is handled by the splitter).
pub fn is_python_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\x0b'
            | '\x0c'
            | '\x1c'
            | '\x1d'
            | '\x1e'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Python's `str.splitlines()`: lines without their terminators; `\r\n` is one break; a final
/// terminator does not start an extra empty line; `""` gives no lines.
pub fn split_lines_python(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        if is_python_line_break(c) {
            lines.push(&text[start..index]);
            let mut next = index + c.len_utf8();
            if c == '\r' && matches!(chars.peek(), Some((_, '\n'))) {
                chars.next();
                next += 1;
            }
            start = next;
        }
    }
    if start < text.len() {
        lines.push(&text[start..]);
    }
    lines
}

/// Python's `str.isspace()` for one character: Unicode White_Space plus the separators
/// `\x1c`–`\x1f`, which Python counts and Rust's `char::is_whitespace` does not.
pub fn is_python_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Python's `str.split()` with no arguments: runs of whitespace separate, empty pieces dropped.
pub fn split_whitespace_python(text: &str) -> impl Iterator<Item = &str> {
    text.split(is_python_whitespace)
        .filter(|piece| !piece.is_empty())
}

/// Python's `not text.strip()`.
pub fn is_blank_python(text: &str) -> bool {
    text.chars().all(is_python_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_lines(text: &str, expected: &[&str]) {
        assert_eq!(split_lines_python(text), expected, "splitlines({text:?})");
    }

    #[test]
    fn splitlines_matches_python() {
        check_lines("", &[]);
        check_lines("a", &["a"]);
        check_lines("a\n", &["a"]);
        check_lines("a\n\n", &["a", ""]);
        check_lines("\n", &[""]);
        check_lines("a\r\nb\rc\nd", &["a", "b", "c", "d"]);
        check_lines("a\r\r\nb", &["a", "", "b"]);
        check_lines(
            "a\x0bb\x0cc\x1cd\x1de\x1ef",
            &["a", "b", "c", "d", "e", "f"],
        );
        check_lines(
            "a\u{85}b\u{2028}c\u{2029}d\x1fe",
            &["a", "b", "c", "d\x1fe"],
        );
    }

    #[test]
    fn decode_drops_invalid_bytes() {
        assert_eq!(decode_utf8_ignore(b"ab\xffcd"), "abcd");
        assert_eq!(decode_utf8_ignore(b"\xe2\x82"), "");
        assert_eq!(decode_utf8_ignore("é".as_bytes()), "é");
    }

    #[test]
    fn whitespace_matches_python() {
        let pieces: Vec<&str> =
            split_whitespace_python(" a\tb\x1fc\u{a0}d\u{3000}e\u{180e}f ").collect();
        assert_eq!(pieces, ["a", "b", "c", "d", "e\u{180e}f"]);
        assert!(is_blank_python(" \t\x1c\u{2003}"));
        assert!(!is_blank_python(" x "));
    }
}
