//! Python's decoding and whitespace, so that explorers and hosts see the same text and tokens as
//! the reference tools (which read files with `errors="ignore"` and split words with
//! `str.split()`). Lines are in [`crate::lines`].
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

/// Python's `str.isspace()` for one character: Unicode White_Space plus the separators
/// `\x1c`–`\x1f`, which Python counts and Rust's `char::is_whitespace` does not.
pub fn is_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// Python's `str.isspace()` for an ASCII byte.
#[inline(always)]
fn is_whitespace_ascii(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r' | 0x1c..=0x1f)
}

/// Python's `str.split()` with no arguments: runs of whitespace separate, empty pieces dropped.
pub fn split_whitespace(text: &str) -> impl Iterator<Item = &str> {
    PythonWords { rest: text }
}

/// The pieces of [`split_whitespace`], found by a byte scan that decodes only non-ASCII
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
            return is_whitespace_ascii(b).then_some(1);
        }
        Self::non_ascii_whitespace_at(text, index)
    }

    #[inline(never)]
    fn non_ascii_whitespace_at(text: &str, index: usize) -> Option<usize> {
        let c = text[index..]
            .chars()
            .next()
            .expect("index on a char boundary");
        is_whitespace(c).then(|| c.len_utf8())
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
                if !is_whitespace_ascii(b) {
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
                if is_whitespace_ascii(b) {
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
pub fn is_blank(text: &str) -> bool {
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

    #[test]
    fn decode_drops_invalid_bytes() {
        assert_eq!(decode_utf8_ignore(b"ab\xffcd"), "abcd");
        assert_eq!(decode_utf8_ignore(b"\xe2\x82"), "");
        assert_eq!(decode_utf8_ignore("é".as_bytes()), "é");
    }

    #[test]
    fn whitespace_matches_python() {
        let pieces: Vec<&str> = split_whitespace(" a\tb\x1fc\u{a0}d\u{3000}e\u{180e}f ").collect();
        assert_eq!(pieces, ["a", "b", "c", "d", "e\u{180e}f"]);
        assert!(is_blank(" \t\x1c\u{2003}"));
        assert!(!is_blank(" x "));
        assert!(!is_blank("\u{a0}é"));
        assert!(is_blank(""));
        let pieces: Vec<&str> = split_whitespace("\u{2028}é\u{85}ab\u{10348}\r\n\x1c").collect();
        assert_eq!(pieces, ["é", "ab\u{10348}"]);
        assert_eq!(split_whitespace("  ").count(), 0);
    }

    /// The byte scanners (these and [`crate::lines`]') agree with character-by-character definitions on every string of up to
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
                let line_break = matches!(
                    c,
                    '\n' | '\r' | '\x0b' | '\x0c' | '\x1c'
                        ..='\x1e' | '\u{85}' | '\u{2028}' | '\u{2029}'
                );
                if line_break {
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
            assert_eq!(crate::split_lines(text), lines, "{text:?}");
            let words: Vec<&str> = text
                .split(is_whitespace)
                .filter(|p| !p.is_empty())
                .collect();
            assert_eq!(
                split_whitespace(text).collect::<Vec<_>>(),
                words,
                "{text:?}"
            );
            assert_eq!(is_blank(text), text.chars().all(is_whitespace), "{text:?}");
        }
    }
}
