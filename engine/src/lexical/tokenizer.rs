//! The code-aware analyzer shared by indexing and querying.
//!
//! Text is cut into *compounds*: runs of identifier characters (Unicode letters, digits, `_`)
//! joined by connectors (`.`, `/`, `\`, `-`, `::`) that sit between two identifier characters.
//! Every compound yields, lowercased:
//! - the whole compound when it has connectors (`django.db.models`, `src/foo/bar.py`), and its
//!   suffixes of two segments or more (`db.models`; `foo/bar.py`, `bar.py`),
//! - each connector-separated segment (`django`, `db`, `models`),
//! - each segment's sub-words when it splits on `_` or camelCase (`getUserName` gives
//!   `getusername`, `get`, `user`, `name`; `HTTPServer` gives `httpserver`, `http`, `server`;
//!   `__init__` gives `__init__`, `init`): the one identifier splitter,
//!   `swex_text::identifiers`, with digits attached.
//!
//! Numbers are ordinary tokens (`404`, `1.5.2` with `1`, `5`, `2`); a letter-digit transition is
//! not a boundary (`utf8`, `sha256`, `v2` stay whole) but a digit-to-capital one is (`base64Encode`).
//! Over-long tokens (hashes, base64 blobs) are dropped: they never match a query and only bloat the
//! term dictionary. The same function analyses documents and queries, so a query for an identifier
//! matches it whole (rare, high idf) and by its parts (common, low idf).
//!
//! Chinese, Japanese and Korean text has no spaces between words, so a run of CJK characters is
//! one token above and would match only itself (a name glued to it, `调用getUser函数`, is a
//! sub-word of its own, the splitter's rule). [`for_each_cjk_bigram`] gives such runs their own
//! tokens, every pair of adjacent CJK characters (a lone one alone), as CJK search engines do.
//! They go to a field of their own in the index (see [`crate::lexical::pool`]): the tokens and
//! lengths of the code fields stay exactly what they were, and so does every score of a query
//! without CJK text.
//!
//! This module knows nothing about tantivy's index; [`CodeTokenizer`] and [`CjkTokenizer`] only
//! adapt the functions to tantivy's `Tokenizer` trait.

use swex_text::identifiers::{Digits, for_each_part};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// Longest segment or sub-word token kept, in bytes.
pub const MAX_PART_LEN: usize = 64;
/// Longest whole-compound token kept, in bytes (paths and dotted names run longer than words).
pub const MAX_COMPOUND_LEN: usize = 160;

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Length in bytes of the connector starting at `rest`, if `rest` starts with one.
fn connector_len(rest: &str) -> Option<usize> {
    if rest.starts_with("::") {
        return Some(2);
    }
    match rest.as_bytes().first() {
        Some(b'.' | b'/' | b'\\' | b'-') => Some(1),
        _ => None,
    }
}

fn starts_with_word_char(s: &str) -> bool {
    s.chars().next().is_some_and(is_word_char)
}

/// Where a token comes from in its compound; query analysis weighs sub-words below whole names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenLevel {
    /// A whole compound with connectors (`django.db.models`).
    Compound,
    /// A connector-separated segment, i.e. a whole identifier (`getUserName`).
    Segment,
    /// A sub-word of a segment (`get`, `user`, `name`).
    Subword,
}

/// Calls `emit(token, byte_from, byte_to)` for every token of `text`, in text order. Tokens are
/// lowercased; `byte_from..byte_to` is the span of the original text the token comes from.
pub fn for_each_token(text: &str, mut emit: impl FnMut(&str, usize, usize)) {
    for_each_token_with_level(text, |token, from, to, _| emit(token, from, to));
}

/// [`for_each_token`] that also says which [`TokenLevel`] each token is.
pub fn for_each_token_with_level(text: &str, mut emit: impl FnMut(&str, usize, usize, TokenLevel)) {
    let mut lower = String::new();
    for_each_span(text, |from, to, level| {
        emit(lowercase_into(&mut lower, &text[from..to]), from, to, level);
    });
}

/// The analyzer's core: calls `emit(from, to, level)` for the byte span of every token, without
/// lowercasing (counting tokens needs no text).
fn for_each_span(text: &str, mut emit: impl FnMut(usize, usize, TokenLevel)) {
    let mut segments: Vec<(usize, usize)> = Vec::new();
    let mut pos = 0;
    let bytes = text.as_bytes();
    while pos < text.len() {
        // Fast skip of ASCII non-word bytes.
        let b = bytes[pos];
        if ASCII_CLASS[usize::from(b)] == AsciiClass::Separator {
            pos += 1;
            continue;
        }
        let c = text[pos..].chars().next().expect("pos is a char boundary");
        if !is_word_char(c) {
            pos += c.len_utf8();
            continue;
        }
        // A compound starts here.
        segments.clear();
        loop {
            let seg_start = pos;
            while pos < text.len() {
                let b = bytes[pos];
                match ASCII_CLASS[usize::from(b)] {
                    AsciiClass::Word => {
                        pos += 1;
                        continue;
                    }
                    AsciiClass::Separator => break,
                    AsciiClass::NonAscii => {}
                }
                let c = text[pos..].chars().next().expect("char boundary");
                if !is_word_char(c) {
                    break;
                }
                pos += c.len_utf8();
            }
            segments.push((seg_start, pos));
            match connector_len(&text[pos..]) {
                Some(n) if starts_with_word_char(&text[pos + n..]) => pos += n,
                _ => break,
            }
        }
        let end = pos;
        if segments.len() > 1 {
            // The whole compound and its suffixes of two segments or more: `views.py` finds
            // `app/views.py`, `model.save` finds `self.model.save`.
            for &(suffix_start, _) in &segments[..segments.len() - 1] {
                if end - suffix_start <= MAX_COMPOUND_LEN {
                    emit(suffix_start, end, TokenLevel::Compound);
                }
            }
        }
        for &(s, e) in &segments {
            emit_segment(text, s, e, &mut emit);
        }
    }
}

/// Emits a segment whole and, when it splits, its sub-words.
fn emit_segment(
    text: &str,
    start: usize,
    end: usize,
    emit: &mut impl FnMut(usize, usize, TokenLevel),
) {
    let segment = &text[start..end];
    let mut parts: [(usize, usize); 16] = [(0, 0); 16];
    let mut count = 0usize;
    // Sub-words past the 16th (generated names, long constants) are not worth a token each.
    for_each_part(segment, Digits::Attached, |s, e| {
        if count < parts.len() {
            parts[count] = (s, e);
            count += 1;
        }
    });
    let single_equal = count == 1 && parts[0] == (0, segment.len());
    if segment.len() <= MAX_PART_LEN {
        emit(start, end, TokenLevel::Segment);
    }
    if single_equal {
        return;
    }
    for &(s, e) in &parts[..count] {
        if e - s <= MAX_PART_LEN {
            emit(start + s, start + e, TokenLevel::Subword);
        }
    }
}

/// What the analyzer needs to know about a byte, looked up rather than computed: the scans
/// visit every byte of every document.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AsciiClass {
    /// An ASCII identifier character (letter, digit, `_`).
    Word,
    /// Any other ASCII byte.
    Separator,
    /// Part of a multi-byte char: decode it.
    NonAscii,
}

static ASCII_CLASS: [AsciiClass; 256] = {
    let mut table = [AsciiClass::NonAscii; 256];
    let mut b = 0;
    while b < 128 {
        let byte = b as u8;
        table[b] = if byte.is_ascii_alphanumeric() || byte == b'_' {
            AsciiClass::Word
        } else {
            AsciiClass::Separator
        };
        b += 1;
    }
    table
};

fn lowercase_into<'a>(buffer: &'a mut String, text: &str) -> &'a str {
    buffer.clear();
    if text.is_ascii() {
        buffer.push_str(text);
        buffer.make_ascii_lowercase();
    } else {
        buffer.extend(text.chars().flat_map(char::to_lowercase));
    }
    buffer.as_str()
}

/// All tokens of `text` as owned strings (tests, query analysis).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t, _, _| out.push(t.to_string()));
    out
}

/// Number of tokens [`for_each_token`] yields for `text`.
pub fn count_tokens(text: &str) -> u64 {
    let mut n = 0u64;
    for_each_span(text, |_, _, _| n += 1);
    n
}

pub use swex_text::identifiers::is_cjk;

/// Calls `emit(byte_from, byte_to)` for every CJK bigram of `text` in text order: each pair of
/// adjacent CJK characters ([`is_cjk`]), and a CJK character with no CJK neighbour alone. Text
/// without CJK characters yields nothing (and costs one byte scan: ASCII is skipped a byte at a
/// time without decoding).
pub fn for_each_cjk_bigram(text: &str, mut emit: impl FnMut(usize, usize)) {
    // The previous character, when it was CJK: (its start, whether it has been emitted).
    let mut previous: Option<(usize, bool)> = None;
    let bytes = text.as_bytes();
    let mut pos = 0;
    while pos < bytes.len() {
        if bytes[pos] < 0x80 {
            if let Some((start, false)) = previous {
                emit(start, pos);
            }
            previous = None;
            pos += 1;
            continue;
        }
        let c = text[pos..].chars().next().expect("pos is a char boundary");
        let next = pos + c.len_utf8();
        if is_cjk(c) {
            if let Some((start, _)) = previous {
                emit(start, next);
                previous = Some((pos, true));
            } else {
                previous = Some((pos, false));
            }
        } else {
            if let Some((start, false)) = previous {
                emit(start, pos);
            }
            previous = None;
        }
        pos = next;
    }
    if let Some((start, false)) = previous {
        emit(start, bytes.len());
    }
}

/// All CJK bigrams of `text` as owned strings.
pub fn cjk_bigrams(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_cjk_bigram(text, |from, to| out.push(text[from..to].to_string()));
    out
}

/// Number of bigrams [`for_each_cjk_bigram`] yields for `text`.
pub fn count_cjk_bigrams(text: &str) -> u64 {
    let mut n = 0u64;
    for_each_cjk_bigram(text, |_, _| n += 1);
    n
}

/// The analyzer as a tantivy tokenizer (registered under [`CODE_TOKENIZER`]).
#[derive(Clone, Default)]
pub struct CodeTokenizer {
    buffer: Vec<Token>,
}

/// Name under which [`CodeTokenizer`] is registered in the pool index.
pub const CODE_TOKENIZER: &str = "swex_code";

/// Tokens of one text, produced eagerly into the tokenizer's reusable buffer.
pub struct CodeTokenStream<'a> {
    tokens: &'a mut Vec<Token>,
    len: usize,
    next: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream<'a> {
        stream_of(&mut self.buffer, text, |push| {
            for_each_span(text, |from, to, _| push(from, to))
        })
    }
}

/// A token stream over the spans `spans` reports (lower-cased text), filling the tokenizer's
/// reusable buffer.
fn stream_of<'a>(
    tokens: &'a mut Vec<Token>,
    text: &str,
    spans: impl FnOnce(&mut dyn FnMut(usize, usize)),
) -> CodeTokenStream<'a> {
    let mut len = 0usize;
    spans(&mut |from, to| {
        if len == tokens.len() {
            tokens.push(Token::default());
        }
        let token = &mut tokens[len];
        lowercase_into(&mut token.text, &text[from..to]);
        token.offset_from = from;
        token.offset_to = to;
        token.position = len;
        token.position_length = 1;
        len += 1;
    });
    CodeTokenStream {
        tokens,
        len,
        next: 0,
    }
}

/// [`for_each_cjk_bigram`] as a tantivy tokenizer (registered under [`CJK_TOKENIZER`]).
#[derive(Clone, Default)]
pub struct CjkTokenizer {
    buffer: Vec<Token>,
}

/// Name under which [`CjkTokenizer`] is registered in the pool index.
pub const CJK_TOKENIZER: &str = "swex_cjk_bigrams";

impl Tokenizer for CjkTokenizer {
    type TokenStream<'a> = CodeTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream<'a> {
        // CJK characters have no case: lower-casing leaves the bigrams as they are.
        stream_of(&mut self.buffer, text, |push| {
            for_each_cjk_bigram(text, push)
        })
    }
}

impl TokenStream for CodeTokenStream<'_> {
    fn advance(&mut self) -> bool {
        if self.next < self.len {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expected: &[&str]) {
        assert_eq!(tokens(input), expected, "tokens of {input:?}");
    }

    #[test]
    fn tokenization_cases() {
        check("foo", &["foo"]);
        check("getUserName", &["getusername", "get", "user", "name"]);
        check(
            "snake_case_name",
            &["snake_case_name", "snake", "case", "name"],
        );
        check("HTTPServer", &["httpserver", "http", "server"]);
        check("__init__", &["__init__", "init"]);
        check("_private", &["_private", "private"]);
        check(
            "django.db.models",
            &["django.db.models", "db.models", "django", "db", "models"],
        );
        check(
            "src/foo/bar.py",
            &[
                "src/foo/bar.py",
                "foo/bar.py",
                "bar.py",
                "src",
                "foo",
                "bar",
                "py",
            ],
        );
        check("crate::a::B", &["crate::a::b", "a::b", "crate", "a", "b"]);
        check("utf8 sha256 v2", &["utf8", "sha256", "v2"]);
        check("base64Encode", &["base64encode", "base64", "encode"]);
        check("404", &["404"]);
        check("1.5.2", &["1.5.2", "5.2", "1", "5", "2"]);
        check("end of sentence.", &["end", "of", "sentence"]);
        check("./rel/path", &["rel/path", "rel", "path"]);
        check(
            "self.assertEqual(a, b)",
            &[
                "self.assertequal",
                "self",
                "assertequal",
                "assert",
                "equal",
                "a",
                "b",
            ],
        );
        check("ÉcoleNormale", &["écolenormale", "école", "normale"]);
        check("a - b", &["a", "b"]);
        check("x-y", &["x-y", "x", "y"]);
        check("ALL_CAPS", &["all_caps", "all", "caps"]);
        check("", &[]);
        check("   \n\t", &[]);
    }

    #[test]
    fn overlong_tokens_are_dropped() {
        let blob = "a".repeat(MAX_PART_LEN + 1);
        check(&blob, &[]);
        // The compound is within its own, longer limit; the over-long segment alone is dropped.
        let compound = format!("{blob}.b");
        check(&compound, &[compound.as_str(), "b"]);
        let long_compound = format!("{}.b", "a.".repeat(MAX_COMPOUND_LEN));
        assert!(
            !tokens(&long_compound)
                .iter()
                .any(|t| t.len() > MAX_COMPOUND_LEN)
        );
    }

    #[test]
    fn tantivy_stream_matches_function() {
        let mut tokenizer = CodeTokenizer::default();
        for text in ["getUserName(x)", "", "a.b c", "fooBar baz"] {
            let mut stream = tokenizer.token_stream(text);
            let mut from_stream = Vec::new();
            while stream.advance() {
                from_stream.push(stream.token().text.clone());
            }
            assert_eq!(from_stream, tokens(text));
            assert_eq!(from_stream.len() as u64, count_tokens(text));
        }
    }

    #[test]
    fn cjk_bigrams_cases() {
        let check = |text: &str, expected: &[&str]| {
            assert_eq!(cjk_bigrams(text), expected, "bigrams of {text:?}");
            assert_eq!(count_cjk_bigrams(text), expected.len() as u64);
        };
        check("数据库连接", &["数据", "据库", "库连", "连接"]);
        check("数", &["数"]);
        check("a数b据c", &["数", "据"]);
        check("数据 库", &["数据", "库"]);
        check(
            "データベース接続",
            &["デー", "ータ", "タベ", "ベー", "ース", "ス接", "接続"],
        );
        check("연결 실패", &["연결", "실패"]);
        check("getUserName Ошибка café", &[]);
        check("", &[]);
        let mut tokenizer = CjkTokenizer::default();
        let mut stream = tokenizer.token_stream("x 数据库 y");
        let mut from_stream = Vec::new();
        while stream.advance() {
            from_stream.push(stream.token().text.clone());
        }
        assert_eq!(from_stream, ["数据", "据库"]);
    }

    /// The code analyser leaves a CJK run whole, and a name glued to one is a sub-word of its
    /// own (the identifier splitter's rule), so a comment `调用getUser函数` is found by `getUser`.
    #[test]
    fn code_tokens_of_cjk_text() {
        check("数据库连接失败", &["数据库连接失败"]);
        check(
            "调用getUser函数",
            &["调用getuser函数", "调用", "get", "user", "函数"],
        );
        check("返回null值", &["返回null值", "返回", "null", "值"]);
    }
}
