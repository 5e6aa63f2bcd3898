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
    // A byte scan: every break is ASCII except U+0085 (`C2 85`) and U+2028/U+2029
    // (`E2 80 A8`/`E2 80 A9`), and in valid UTF-8 those byte sequences are exactly those
    // characters, so no decoding is needed.
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    let mut index = 0;
    while index < bytes.len() {
        // Skip eight bytes at a time while none is a control character or non-ASCII (no break
        // can be among them); the test may flag a clean word after a flagged byte, never miss.
        while let Some(word) = bytes.get(index..index + 8) {
            let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            if (word.wrapping_sub(0x2020_2020_2020_2020) | word) & 0x8080_8080_8080_8080 != 0 {
                break;
            }
            index += 8;
        }
        if index >= bytes.len() {
            break;
        }
        let terminator = match bytes[index] {
            b'\r' if bytes.get(index + 1) == Some(&b'\n') => 2,
            b'\n' | b'\r' | 0x0b | 0x0c | 0x1c | 0x1d | 0x1e => 1,
            0xc2 if bytes.get(index + 1) == Some(&0x85) => 2,
            0xe2 if bytes.get(index + 1) == Some(&0x80)
                && matches!(bytes.get(index + 2), Some(0xa8 | 0xa9)) =>
            {
                3
            }
            _ => 0,
        };
        if terminator == 0 {
            index += 1;
            continue;
        }
        lines.push(&text[start..index]);
        index += terminator;
        start = index;
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

/// Python's `str.isspace()` for an ASCII byte.
#[inline(always)]
fn is_python_whitespace_ascii(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r' | 0x1c..=0x1f)
}

/// Python's `str.split()` with no arguments: runs of whitespace separate, empty pieces dropped.
pub fn split_whitespace_python(text: &str) -> impl Iterator<Item = &str> {
    PythonWords { rest: text }
}

/// The pieces of [`split_whitespace_python`], found by a byte scan that decodes only non-ASCII
/// characters.
struct PythonWords<'a> {
    rest: &'a str,
}

impl<'a> PythonWords<'a> {
    /// Byte length of the whitespace character at `index`, or `None` when it is none.
    #[inline(always)]
    fn whitespace_at(text: &str, index: usize) -> Option<usize> {
        let b = text.as_bytes()[index];
        if b < 0x80 {
            return is_python_whitespace_ascii(b).then_some(1);
        }
        Self::non_ascii_whitespace_at(text, index)
    }

    #[inline(never)]
    fn non_ascii_whitespace_at(text: &str, index: usize) -> Option<usize> {
        let c = text[index..]
            .chars()
            .next()
            .expect("index on a char boundary");
        is_python_whitespace(c).then(|| c.len_utf8())
    }

    /// Byte length of the (non-whitespace) character at `index`.
    #[inline(always)]
    fn char_len_at(text: &str, index: usize) -> usize {
        match text.as_bytes()[index] {
            b if b < 0x80 => 1,
            b if b >= 0xf0 => 4,
            b if b >= 0xe0 => 3,
            _ => 2,
        }
    }
}

impl<'a> Iterator for PythonWords<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let text = self.rest;
        let bytes = text.as_bytes();
        let mut index = 0;
        while index < bytes.len() {
            let b = bytes[index];
            if b < 0x80 {
                if !is_python_whitespace_ascii(b) {
                    break;
                }
                index += 1;
                continue;
            }
            match Self::non_ascii_whitespace_at(text, index) {
                Some(len) => index += len,
                None => break,
            }
        }
        if index == bytes.len() {
            self.rest = "";
            return None;
        }
        let start = index;
        while index < bytes.len() {
            let b = bytes[index];
            if b < 0x80 {
                if is_python_whitespace_ascii(b) {
                    break;
                }
                index += 1;
                continue;
            }
            if Self::non_ascii_whitespace_at(text, index).is_some() {
                break;
            }
            index += Self::char_len_at(text, index);
        }
        self.rest = &text[index..];
        Some(&text[start..index])
    }
}

/// Python's `not text.strip()`.
pub fn is_blank_python(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        match PythonWords::whitespace_at(text, index) {
            Some(len) => index += len,
            None => return false,
        }
    }
    true
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
        // Characters sharing lead bytes with the breaks are no breaks.
        check_lines(
            "\u{a0}\u{c5}\u{2027}\u{202a}\u{2080}x\r",
            &["\u{a0}\u{c5}\u{2027}\u{202a}\u{2080}x"],
        );
        check_lines("\r\n\r\n", &["", ""]);
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
        assert!(!is_blank_python("\u{a0}é"));
        assert!(is_blank_python(""));
        let pieces: Vec<&str> =
            split_whitespace_python("\u{2028}é\u{85}ab\u{10348}\r\n\x1c").collect();
        assert_eq!(pieces, ["é", "ab\u{10348}"]);
        assert_eq!(split_whitespace_python("  ").count(), 0);
    }

    /// The byte scanners agree with character-by-character definitions on every string of up to
    /// four characters over an alphabet of breaks, spaces and their byte-sharing neighbours, and on
    /// longer mixes.
    #[test]
    fn byte_scanners_agree_with_char_definitions() {
        let alphabet = [
            'a',
            ' ',
            '\n',
            '\r',
            '\x0b',
            '\x1c',
            '\x1f',
            '\u{85}',
            '\u{a0}',
            '\u{c5}',
            '\u{2028}',
            '\u{2029}',
            '\u{2027}',
            '\u{202f}',
            '\u{3000}',
            '\u{10348}',
        ];
        let mut texts = vec![String::new()];
        for _ in 0..4 {
            let longer: Vec<String> = texts
                .iter()
                .filter(|t| t.chars().count() == texts.last().unwrap().chars().count())
                .flat_map(|t| alphabet.iter().map(move |c| format!("{t}{c}")))
                .collect();
            texts.extend(longer);
        }
        // Longer texts, so that the eight-byte skipping meets breaks at every offset.
        let mut state: u64 = 7;
        for _ in 0..3000 {
            let mut text = String::new();
            for _ in 0..40 {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let pick = (state >> 33) as usize;
                if pick.is_multiple_of(3) {
                    text.push(alphabet[pick / 3 % alphabet.len()]);
                } else {
                    text.push_str(&"abcdefgh"[..pick % 8]);
                }
            }
            texts.push(text);
        }
        for text in &texts {
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
            assert_eq!(split_lines_python(text), lines, "{text:?}");
            let words: Vec<&str> = text
                .split(is_python_whitespace)
                .filter(|p| !p.is_empty())
                .collect();
            assert_eq!(
                split_whitespace_python(text).collect::<Vec<_>>(),
                words,
                "{text:?}"
            );
            assert_eq!(
                is_blank_python(text),
                text.chars().all(is_python_whitespace),
                "{text:?}"
            );
        }
    }
}
