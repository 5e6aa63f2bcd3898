//! Identifiers as words: where `snake_case`, `camelCase` and `HTTPServer` split into the words a
//! person reads, and the squashed form a name is compared in.
//!
//! Also where a word ends in scripts written without spaces ([`is_cjk`]): the engine's tokenizer
//! gives their runs a field of their own, the splitter below makes each run a part, and the
//! issue parser sets them apart from the identifiers they touch ([`set_apart_cjk_runs`]).
//!
//! One splitter for every reader — the engine's tokenizer (index and query tokens), the `swex`
//! explorer's reading of an issue and the `tfidf` explorer's terms — with one named difference,
//! [`Digits`]: whether a change between letters and digits is a boundary.
//!
//! The rule: `_` and `-` separate parts and belong to none; a capital after a lower-case letter or
//! a digit starts a part (`fooBar`, `base64Encode`); in a run of capitals the last one starts a
//! part when a lower-case letter follows (`HTTPServer` → `HTTP`, `Server`); a run of CJK
//! characters ([`is_cjk`]) is a part of its own (`调用parseObject` → `调用`, `parse`, `Object`:
//! such text glues a name to the sentence around it, in comments as in issues). With
//! [`Digits::Separate`] every change between a digit `0`–`9` and anything else is a boundary
//! instead of a capital after a digit.
//!
//! ```
//! use swex_text::identifiers::{Digits, identifier_parts, squash};
//!
//! assert_eq!(identifier_parts("getHTTPResponse_code2", Digits::Attached), ["get", "http", "response", "code2"]);
//! assert_eq!(identifier_parts("getHTTPResponse_code2", Digits::Separate), ["get", "http", "response", "code", "2"]);
//! assert_eq!(squash("k_means_"), squash("KMeans"));
//! ```

/// Whether `c` is written without spaces between words: Han ideographs (with extensions and
/// compatibility forms), Hiragana, Katakana (with half-width forms) and Hangul.
pub fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{1100}'..='\u{11FF}'      // Hangul Jamo
        | '\u{3040}'..='\u{30FF}'    // Hiragana, Katakana
        | '\u{3130}'..='\u{318F}'    // Hangul compatibility Jamo
        | '\u{31F0}'..='\u{31FF}'    // Katakana phonetic extensions
        | '\u{3400}'..='\u{4DBF}'    // CJK extension A
        | '\u{4E00}'..='\u{9FFF}'    // CJK unified ideographs
        | '\u{AC00}'..='\u{D7AF}'    // Hangul syllables
        | '\u{F900}'..='\u{FAFF}'    // CJK compatibility ideographs
        | '\u{FF66}'..='\u{FF9F}'    // half-width Katakana
        | '\u{20000}'..='\u{2FA1F}' // CJK extensions B-F, compatibility supplement
    )
}

/// `text` with a space wherever a run of CJK characters ([`is_cjk`]) touches a letter, digit or
/// `_` of another script: `goctl生成代码的import包` → `goctl 生成代码的 import 包`. Chinese and
/// Japanese write no space between words, and an identifier in such a sentence would otherwise
/// be one word with the sentence around it. Borrowed when nothing needs a space.
pub fn set_apart_cjk_runs(text: &str) -> std::borrow::Cow<'_, str> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let touches = |a: char, b: char| word(a) && word(b) && is_cjk(a) != is_cjk(b);
    let mut chars = text.chars();
    let Some(mut previous) = chars.next() else {
        return std::borrow::Cow::Borrowed(text);
    };
    if text.is_ascii()
        || !text
            .chars()
            .zip(text.chars().skip(1))
            .any(|(a, b)| touches(a, b))
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    out.push(previous);
    for c in chars {
        if touches(previous, c) {
            out.push(' ');
        }
        out.push(c);
        previous = c;
    }
    std::borrow::Cow::Owned(out)
}

/// Whether digits are a word of their own. The readers differ on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Digits {
    /// Digits stay with the letters before them (`utf8`, `sha256`, `v2`, `Pix2`): only a capital
    /// after a digit starts a part (`base64Encode`). The engine's tokenizer (the digits of a
    /// version or an algorithm name are part of the name a query writes; splitting them would
    /// give every `2` and `8` a token of its own) and the `swex` explorer's issue words.
    Attached,
    /// Every change between a digit `0`–`9` and anything else is a boundary (`code2` → `code`,
    /// `2`); other numerals (`²`) are neither digits nor letters here and start no part. The
    /// `tfidf` explorer's terms: a numbered name (`handler2`) shares its word with the
    /// unnumbered one in the cosine, and the pure-digit part is dropped there as a term. (Only
    /// ASCII digits, as that explorer always had: `x²` in sympy's pretty-printing tests stays one
    /// term, and its answers stay what they were.)
    Separate,
}

/// What the splitter needs to know about a character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    /// `0`–`9`.
    Digit,
    /// Any other numeral (`²`, `٣`, `Ⅻ`).
    Numeral,
    /// `_` and `-`: between parts, in none.
    Separator,
    /// A character of a script written without spaces ([`is_cjk`]): a run of them is a part of
    /// its own (`调用parseObject方法` → `调用`, `parse`, `object`, `方法`).
    Cjk,
    Other,
}

fn class_of(c: char) -> Class {
    if c.is_ascii() {
        ASCII_CLASS[c as usize]
    } else if is_cjk(c) {
        Class::Cjk
    } else if c.is_lowercase() {
        Class::Lower
    } else if c.is_uppercase() {
        Class::Upper
    } else if c.is_numeric() {
        Class::Numeral
    } else {
        Class::Other
    }
}

/// The classes of the ASCII characters, looked up rather than computed: the engine's tokenizer
/// splits every identifier of every indexed file.
static ASCII_CLASS: [Class; 128] = {
    let mut table = [Class::Other; 128];
    let mut b = 0;
    while b < 128 {
        let byte = b as u8;
        table[b] = match byte {
            b'_' | b'-' => Class::Separator,
            b'a'..=b'z' => Class::Lower,
            b'A'..=b'Z' => Class::Upper,
            b'0'..=b'9' => Class::Digit,
            _ => Class::Other,
        };
        b += 1;
    }
    table
};

/// Calls `part(start, end)` with the byte range of each part of `identifier`, in order (see the
/// module overview for the rule). The parts keep their case; [`identifier_parts`] lowercases.
pub fn for_each_part(identifier: &str, digits: Digits, part: impl FnMut(usize, usize)) {
    if identifier.is_ascii() {
        split_classified(
            identifier.len(),
            identifier
                .bytes()
                .enumerate()
                .map(|(offset, b)| (offset, ASCII_CLASS[usize::from(b)])),
            digits,
            part,
        );
    } else {
        split_classified(
            identifier.len(),
            identifier
                .char_indices()
                .map(|(offset, c)| (offset, class_of(c))),
            digits,
            part,
        );
    }
}

/// The parts of `identifier` (see the module overview), lowercased.
pub fn identifier_parts(identifier: &str, digits: Digits) -> Vec<String> {
    let mut parts = Vec::new();
    for_each_part(identifier, digits, |start, end| {
        parts.push(lowercase(&identifier[start..end]));
    });
    parts
}

/// A name in the form names are compared in: lowercase, `_` and `-` removed. `k_means_`,
/// `KMeans` and `k-means` all give `kmeans`; a file stem `http_client` matches a symbol
/// `HttpClient`.
pub fn squash(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Lowercase char by char (the tokens' rule: a final `Σ` stays `σ`, as in every other position).
fn lowercase(text: &str) -> String {
    if text.is_ascii() {
        text.to_ascii_lowercase()
    } else {
        text.chars().flat_map(char::to_lowercase).collect()
    }
}

/// [`for_each_part`] over `(byte offset, class)` of each char of an identifier of `len` bytes.
fn split_classified(
    len: usize,
    chars: impl Iterator<Item = (usize, Class)>,
    digits: Digits,
    mut part: impl FnMut(usize, usize),
) {
    let mut chars = chars.peekable();
    let mut part_start: Option<usize> = None;
    let mut prev = Class::Other;
    while let Some((offset, here)) = chars.next() {
        if here == Class::Separator {
            if let Some(start) = part_start.take() {
                part(start, offset);
            }
            continue;
        }
        match part_start {
            None => part_start = Some(offset),
            Some(start) => {
                let boundary = match (prev, here) {
                    // fooBar
                    (Class::Lower, Class::Upper) => true,
                    // base64Encode, x²Y
                    (Class::Digit | Class::Numeral, Class::Upper) => digits == Digits::Attached,
                    // HTTPServer: the last capital of a run starts the next word.
                    (Class::Upper, Class::Upper) => {
                        chars.peek().is_some_and(|&(_, next)| next == Class::Lower)
                    }
                    _ => false,
                } || (prev == Class::Cjk) != (here == Class::Cjk)
                    || digits == Digits::Separate
                        && (prev == Class::Digit) != (here == Class::Digit);
                if boundary {
                    part(start, offset);
                    part_start = Some(offset);
                }
            }
        }
        prev = here;
    }
    if let Some(start) = part_start {
        part(start, len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row per case: the identifier, its parts with digits attached, with digits separate.
    #[test]
    fn identifiers_split_into_words() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            (
                "separability_matrix",
                &["separability", "matrix"],
                &["separability", "matrix"],
            ),
            (
                "CompoundModel",
                &["compound", "model"],
                &["compound", "model"],
            ),
            ("HTTPServer", &["http", "server"], &["http", "server"]),
            (
                "getUserName",
                &["get", "user", "name"],
                &["get", "user", "name"],
            ),
            ("__init__", &["init"], &["init"]),
            ("k-means", &["k", "means"], &["k", "means"]),
            ("rst", &["rst"], &["rst"]),
            ("RST", &["rst"], &["rst"]),
            ("", &[], &[]),
            ("___", &[], &[]),
            // Where the readers differ: digits.
            (
                "Pix2Sky_TAN",
                &["pix2", "sky", "tan"],
                &["pix", "2", "sky", "tan"],
            ),
            ("utf8", &["utf8"], &["utf", "8"]),
            (
                "base64Encode",
                &["base64", "encode"],
                &["base", "64", "encode"],
            ),
            (
                "getHTTPResponse_code2",
                &["get", "http", "response", "code2"],
                &["get", "http", "response", "code", "2"],
            ),
            ("404", &["404"], &["404"]),
            ("v2x", &["v2x"], &["v", "2", "x"]),
            // Unicode: letters by their case, other characters join the part they are in.
            ("ÜberClass", &["über", "class"], &["über", "class"]),
            ("größeZahl", &["größe", "zahl"], &["größe", "zahl"]),
            // A run of CJK characters is a part of its own, the rest splits as usual.
            ("日本Name", &["日本", "name"], &["日本", "name"]),
            (
                "调用parseObject方法",
                &["调用", "parse", "object", "方法"],
                &["调用", "parse", "object", "方法"],
            ),
            ("값이null", &["값이", "null"], &["값이", "null"]),
            ("生成代码", &["生成代码"], &["生成代码"]),
            ("x²Y", &["x²", "y"], &["x²y"]),
            ("x2Y", &["x2", "y"], &["x", "2", "y"]),
        ];
        for (identifier, attached, separate) in cases {
            assert_eq!(
                identifier_parts(identifier, Digits::Attached),
                *attached,
                "{identifier} attached"
            );
            assert_eq!(
                identifier_parts(identifier, Digits::Separate),
                *separate,
                "{identifier} separate"
            );
        }
    }

    /// One row per case: the text, and where spaces set its CJK runs apart.
    #[test]
    fn cjk_runs_are_set_apart_from_the_words_they_touch() {
        for (text, expected) in [
            (
                "goctl生成代码的import包路径错误",
                "goctl 生成代码的 import 包路径错误",
            ),
            ("jwt过期 返回cors错误", "jwt 过期 返回 cors 错误"),
            ("`rest.WithCors`后", "`rest.WithCors`后"),
            ("レスポンスのJSONが壊れる", "レスポンスの JSON が壊れる"),
            ("값이null입니다", "값이 null 입니다"),
            ("已经有空格 rest 的", "已经有空格 rest 的"),
            ("（parse_args）出错", "（parse_args）出错"),
            ("plain ascii_text", "plain ascii_text"),
            ("Ошибка в parse_args", "Ошибка в parse_args"),
            ("", ""),
        ] {
            assert_eq!(set_apart_cjk_runs(text), expected, "{text}");
        }
        assert!(matches!(
            set_apart_cjk_runs("已经有空格 rest"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn spans_cover_the_parts_as_written() {
        let mut spans = Vec::new();
        for_each_part("parseHTTP_Url", Digits::Attached, |s, e| spans.push((s, e)));
        assert_eq!(spans, [(0, 5), (5, 9), (10, 13)]);
        // The ASCII fast path and the general one agree.
        let mut general = Vec::new();
        for_each_part("parseHTTP_Urlé", Digits::Attached, |s, e| {
            general.push((s, e))
        });
        assert_eq!(general, [(0, 5), (5, 9), (10, 15)]);
    }

    #[test]
    fn names_squash_to_one_form() {
        for (name, expected) in [
            ("k_means_", "kmeans"),
            ("KMeans", "kmeans"),
            ("http-client", "httpclient"),
            ("ÜBER", "über"),
        ] {
            assert_eq!(squash(name), expected, "{name}");
        }
    }
}
