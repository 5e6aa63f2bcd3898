//! A list of strings written as a Python literal, as SWE-bench Pro publishes its list fields
//! (`"['tests/a.py::t', \"it's\"]"`, Python's `repr` of a list). Only what `repr` of a list of
//! strings writes, and a little more that `ast.literal_eval` takes for it, is read:
//!
//! - `[` strings separated by commas `]`, a trailing comma allowed, whitespace anywhere between;
//! - strings in `'…'` or `"…"` (or tripled), with an optional `r`/`u` prefix (any case);
//! - escapes as Python reads them in a `str` literal: `\\ \' \" \a \b \f \n \r \t \v`, octal
//!   `\ooo`, `\xhh`, `\uXXXX`, `\UXXXXXXXX`, a backslash before a line end (dropped), and any
//!   other `\c` kept as the two characters; raw strings keep every backslash.
//!
//! Anything else — bytes literals, `\N{name}`, non-string items, implicit concatenation — is an
//! error naming the byte where reading stopped. SWE-bench's own list fields, JSON text inside a
//! string, are JSON and read as such before this ([`super::schema`]).

/// Reads `text` as a Python list of strings.
pub fn str_list(text: &str) -> Result<Vec<String>, String> {
    let mut reader = Reader { text, at: 0 };
    reader.skip_space();
    reader.expect('[')?;
    let mut items = Vec::new();
    loop {
        reader.skip_space();
        if reader.eat(']') {
            break;
        }
        items.push(reader.string()?);
        reader.skip_space();
        if reader.eat(',') {
            continue;
        }
        reader.expect(']')?;
        break;
    }
    reader.skip_space();
    if reader.at < text.len() {
        return Err(reader.error("text after the list"));
    }
    Ok(items)
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl Reader<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn error(&self, what: &str) -> String {
        match self.peek() {
            Some(c) => format!("{what} at byte {} ({c:?})", self.at),
            None => format!("{what} at the end"),
        }
    }

    fn skip_space(&mut self) {
        let trimmed = self.rest().trim_start();
        self.at = self.text.len() - trimmed.len();
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("expected {c:?}")))
        }
    }

    /// One string literal, its prefix included.
    fn string(&mut self) -> Result<String, String> {
        let mut raw = false;
        while let Some(c) = self.peek().filter(char::is_ascii_alphabetic) {
            match c.to_ascii_lowercase() {
                'r' if !raw => raw = true,
                'u' => {}
                _ => return Err(self.error("not a str literal (only r and u prefixes)")),
            }
            self.at += 1;
        }
        let quote = match self.peek() {
            Some(q @ ('\'' | '"')) => q,
            _ => return Err(self.error("expected a string")),
        };
        let triple: String = [quote; 3].iter().collect();
        let closing = if self.rest().starts_with(&triple) {
            self.at += 3;
            triple
        } else {
            self.at += 1;
            quote.to_string()
        };
        let mut out = String::new();
        loop {
            if self.rest().starts_with(&closing) {
                self.at += closing.len();
                return Ok(out);
            }
            let Some(c) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            if closing.len() == 1 && (c == '\n' || c == '\r') {
                return Err(self.error("line end inside a one-line string"));
            }
            self.at += c.len_utf8();
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(next) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            if raw {
                // A raw string keeps the backslash; it still protects the next character.
                out.push('\\');
                out.push(next);
                self.at += next.len_utf8();
                continue;
            }
            self.escape(next, &mut out)?;
        }
    }

    /// The escape after a backslash (`next` not consumed yet).
    fn escape(&mut self, next: char, out: &mut String) -> Result<(), String> {
        let start = self.at - 1;
        self.at += next.len_utf8();
        let simple = match next {
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'f' => Some('\x0c'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\x0b'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            return Ok(());
        }
        match next {
            '\n' => {}
            '\r' => {
                self.eat('\n');
            }
            '0'..='7' => {
                let mut value = next.to_digit(8).unwrap_or_default();
                for _ in 0..2 {
                    match self.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            self.at += 1;
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' => {
                let digits = match next {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex = self.rest().get(..digits).unwrap_or_default();
                let value = (hex.len() == digits && hex.bytes().all(|b| b.is_ascii_hexdigit()))
                    .then(|| u32::from_str_radix(hex, 16).ok())
                    .flatten()
                    .and_then(char::from_u32);
                match value {
                    Some(c) => {
                        out.push(c);
                        self.at += digits;
                    }
                    None => {
                        self.at = start;
                        return Err(self.error(&format!("a bad \\{next} escape")));
                    }
                }
            }
            'N' => {
                self.at = start;
                return Err(self.error("a \\N{name} escape (not read)"));
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::str_list;

    /// Inputs and what CPython 3.11's `ast.literal_eval` gives for them.
    #[test]
    fn lists_read_as_python_reads_them() {
        let cases: &[(&str, &[&str])] = &[
            ("[]", &[]),
            ("  [ ]  ", &[]),
            ("['a']", &["a"]),
            ("['a', 'b',]", &["a", "b"]),
            (
                "['tests/test_x.py::test_y[1-2]', \"it's\"]",
                &["tests/test_x.py::test_y[1-2]", "it's"],
            ),
            ("['a\\'b', \"c\\\"d\", 'e\\\\f']", &["a'b", "c\"d", "e\\f"]),
            ("['\\n\\t\\x41\\u00e9\\U0001F600\\101']", &["\n\tAé😀A"]),
            ("['a\\qb']", &["a\\qb"]),
            ("[r'a\\nb', R\"\\d+\\\"\"]", &["a\\nb", "\\d+\\\""]),
            ("[u'x', '''y'z''', \"\"\"w\"\"\"]", &["x", "y'z", "w"]),
            ("['é ü']", &["é ü"]),
        ];
        for (text, expected) in cases {
            assert_eq!(
                str_list(text),
                Ok(expected.iter().map(|s| s.to_string()).collect()),
                "{text}"
            );
        }
    }

    #[test]
    fn what_is_not_a_list_of_strings_is_an_error_saying_where() {
        for (text, error) in [
            ("", "expected '[' at the end"),
            ("'a'", "expected '[' at byte 0 ('\\'')"),
            ("[1]", "expected a string at byte 1 ('1')"),
            ("['a' 'b']", "expected ']' at byte 5 ('\\'')"),
            ("['a'", "expected ']' at the end"),
            ("['a]", "unterminated string at the end"),
            (
                "[b'a']",
                "not a str literal (only r and u prefixes) at byte 1 ('b')",
            ),
            (
                "['\\N{DASH}']",
                "a \\N{name} escape (not read) at byte 2 ('\\\\')",
            ),
            ("['\\x4']", "a bad \\x escape at byte 2 ('\\\\')"),
            ("['a'] x", "text after the list at byte 6 ('x')"),
            (
                "['a\nb']",
                "line end inside a one-line string at byte 3 ('\\n')",
            ),
        ] {
            assert_eq!(str_list(text), Err(error.to_string()), "{text:?}");
        }
    }
}
