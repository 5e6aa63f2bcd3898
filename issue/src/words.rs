//! Words of issue text: which are code (identifiers a person would not write in prose), which are
//! acronyms, and which are stop words (too common to discriminate; the lists live in
//! `swex_text::stopwords`).
//!
//! [`is_code_like`] is the one rule of "written like code" for every reading of an issue: the
//! parser's terms and identifiers ([`crate::parse()`]), the `swex` explorer's reading
//! ([`crate::ranking`]) and the `graph` explorer's seeds ([`crate::mentions`]). What a reading
//! adds on top (acronyms, a minimum length, its own stop list) it says itself.

use swex_text::stopwords::StopList;

/// Whether a lower-cased word is a stop word of issue prose ([`StopList::IssueProse`]).
pub fn is_stop_word(word_lower: &str) -> bool {
    StopList::IssueProse.contains(word_lower)
}

/// True for words a person would not write in prose:
/// - `a::b` paths;
/// - dotted names: two or more parts, each starting with a letter or `_`, one of them longer
///   than a letter (`models.Model`, `j.at`; not `e.g`, `P.S`, `v1.2`);
/// - underscores: inside the word (`snake_case`, `CONST_NAME`), around it (`__dunder__`), or
///   opening a lower-case name (`_meta`) — not where Markdown writes emphasis: `_No response_`,
///   `_emphasis_` (and so not `classes_`);
/// - humps: a lower-case letter then a capital (`camelCase`, `QuerySet`), or two capitals then
///   two lower-case letters (`URLField`, `IOError`) — not a plural acronym (`APIs`, `URLs`),
///   and not across a hyphen (`User-Friendly`, `OS-release`);
/// - letters mixed with digits (`utf8`, `sha256`, `int64`), unless all of them are hex digits
///   (`a87e482fab0`, a piece of a hash or an id in a link).
///
/// Acronyms (`HTTP`, `RST`) are not: prose writes them as often ([`is_acronym`]).
pub fn is_code_like(word: &str) -> bool {
    if word.contains("::") {
        return true;
    }
    if word.contains('.') {
        let identifier_start = |p: &str| {
            p.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
        };
        return word.split('.').nth(1).is_some()
            && word.split('.').all(identifier_start)
            && word.split('.').any(|p| p.chars().nth(1).is_some());
    }
    let core = word.trim_matches('_');
    if core.contains('_') && core.chars().any(char::is_alphabetic) {
        return true;
    }
    if word.starts_with("__") && word.ends_with("__") && word.len() > 4 {
        return true;
    }
    // `_meta`, `__cxx11`: a private name. Emphasis opens on a capital (`_No response_`) or closes
    // on the word's end (`_emphasis_`, and `response_` itself).
    if word.starts_with('_') && !word.ends_with('_') && core.starts_with(char::is_lowercase) {
        return true;
    }
    if word.split('-').any(has_hump) {
        return true;
    }
    let (mut letters, mut digit, mut hex) = (0, false, true);
    for c in word.chars() {
        letters += usize::from(c.is_alphabetic());
        digit |= c.is_ascii_digit();
        hex &= c.is_ascii_hexdigit();
    }
    digit && letters >= 2 && word.starts_with(char::is_alphabetic) && !hex
}

/// A lower-case letter then a capital, or two capitals then two lower-case letters.
fn has_hump(part: &str) -> bool {
    // The last three characters' cases: (upper, lower) for each, the latest last.
    let mut previous: [(bool, bool); 3] = [(false, false); 3];
    for c in part.chars() {
        let (upper, lower) = (c.is_uppercase(), c.is_lowercase());
        let [p3, p2, p1] = previous;
        if (p1.1 && upper) || (p3.0 && p2.0 && p1.1 && lower) {
            return true;
        }
        previous = [p2, p1, (upper, lower)];
    }
    false
}

/// Two or more capitals and digits only, a capital first: `HTTP`, `RST`, `UTF8`. A name of a
/// class or a format as often as a word of prose; the `swex` explorer's reading takes them as
/// names ([`names_code`]), the parser does not.
pub fn is_acronym(word: &str) -> bool {
    word.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && word.chars().nth(1).is_some()
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// A word that can name a file, a definition or a format: written like code ([`is_code_like`])
/// or an acronym (`RST`, `HTTP`) — the `swex` explorer's reading of an issue and the code
/// search's term shapes, where an acronym names a class as often as it is prose.
pub fn names_code(word: &str) -> bool {
    is_code_like(word) || is_acronym(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_like_words() {
        for (word, expected) in [
            ("snake_case", true),
            ("camelCase", true),
            ("QuerySet", true),
            ("URLField", true),
            ("IOError", true),
            ("Django", false),
            ("models.Model", true),
            ("m.Pix2Sky_TAN", true),
            ("self.x", true),
            ("j.at", true),
            ("e.g", false),
            ("P.S", false),
            ("i.e", false),
            ("v1.2", false),
            ("a::b", true),
            ("__init__", true),
            ("_private", true),
            ("__cxx11", true),
            ("_No", false),
            ("response_", false),
            ("_emphasis_", false),
            ("_two_words_", true),
            ("___", false),
            ("_1_", false),
            ("utf8", true),
            ("x86", false),
            ("a87e482fab0", false),
            ("User-Friendly", false),
            ("OS-release", false),
            ("APIs", false),
            ("JSONSerializer", true),
            ("hello", false),
            ("HTTP", false),
            ("MAX_SIZE", true),
        ] {
            assert_eq!(is_code_like(word), expected, "{word}");
        }
    }

    #[test]
    fn acronyms() {
        for (word, expected) in [
            ("HTTP", true),
            ("RST", true),
            ("UTF8", true),
            ("A", false),
            ("8BIT", false),
            ("Http", false),
            ("MAX_SIZE", false),
        ] {
            assert_eq!(is_acronym(word), expected, "{word}");
        }
    }

    #[test]
    fn stop_words() {
        assert!(is_stop_word("the"));
        assert!(is_stop_word("self"));
        assert!(!is_stop_word("queryset"));
    }
}
