//! Words of issue text: which are code (identifiers a person would not write in prose) and which
//! are stop words (too common to discriminate; the list lives in `swex_text::stopwords`).

use swex_text::stopwords::StopList;

/// Whether a lower-cased word is a stop word of issue prose ([`StopList::IssueProse`]).
pub fn is_stop_word(word_lower: &str) -> bool {
    StopList::IssueProse.contains(word_lower)
}

/// True for words a person would not write in prose: `snake_case`, `camelCase`, `PascalCase`
/// with two humps, `dotted.names`, `a::b`, `CONST_NAME`.
pub fn is_code_like(word: &str) -> bool {
    if word.contains("::") {
        return true;
    }
    if word.contains('.') {
        // Dotted names need identifier parts of which at least one is longer than a letter
        // (`e.g`, `i.e` and version numbers are not code).
        let parts: Vec<&str> = word.split('.').collect();
        return parts.len() >= 2
            && parts.iter().all(|p| {
                p.chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
            })
            && parts.iter().filter(|p| p.len() > 1).count() >= 2;
    }
    let core = word.trim_matches('_');
    if core.contains('_') && core.chars().any(|c| c.is_alphabetic()) {
        return true;
    }
    if word.starts_with("__") && word.ends_with("__") && word.len() > 4 {
        return true;
    }
    let chars: Vec<char> = word.chars().collect();
    // camelCase / PascalCase with an inner capital after a lower-case letter.
    let inner_hump = chars
        .windows(2)
        .any(|w| w[0].is_lowercase() && w[1].is_uppercase());
    if inner_hump {
        return true;
    }
    // Letters mixed with digits inside a word (`utf8`, `sha256`, `int64`).
    let has_digit = chars.iter().any(|c| c.is_ascii_digit());
    has_digit && chars.iter().filter(|c| c.is_alphabetic()).count() >= 2 && chars[0].is_alphabetic()
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
            ("Django", false),
            ("models.Model", true),
            ("e.g", false),
            ("a::b", true),
            ("__init__", true),
            ("utf8", true),
            ("hello", false),
            ("HTTP", false),
            ("MAX_SIZE", true),
        ] {
            assert_eq!(is_code_like(word), expected, "{word}");
        }
    }

    #[test]
    fn stop_words() {
        assert!(is_stop_word("the"));
        assert!(is_stop_word("self"));
        assert!(!is_stop_word("queryset"));
    }
}
