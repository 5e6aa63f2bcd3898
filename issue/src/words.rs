//! Words of issue text: which are code (identifiers a person would not write in prose) and which
//! are stop words (too common to discriminate).

/// English stop words and words too common in issue prose to discriminate.
pub const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
    "but", "by", "can", "cannot", "could", "did", "do", "does", "doing", "don", "down", "during",
    "each", "else", "etc", "even", "ever", "every", "few", "for", "from", "further", "get", "gets",
    "got", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how",
    "however", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "let", "like", "ll",
    "may", "me", "might", "more", "most", "much", "must", "my", "need", "needs", "no", "nor",
    "not", "now", "of", "off", "on", "once", "one", "only", "or", "other", "our", "ours", "out",
    "over", "own", "per", "please", "quite", "rather", "re", "really", "same", "see", "seems",
    "she", "should", "since", "so", "some", "still", "such", "than", "that", "the", "their",
    "theirs", "them", "then", "there", "these", "they", "this", "those", "though", "through",
    "thus", "to", "too", "under", "until", "up", "upon", "us", "use", "used", "using", "ve",
    "very", "via", "was", "we", "well", "were", "what", "when", "where", "whether", "which",
    "while", "who", "whom", "why", "will", "with", "within", "without", "would", "yet", "you",
    "your", "yours", // Code words that match nearly every chunk of their language.
    "self", "def", "return", "import", "class", "none", "true", "false", "null", "nil", "var",
    "const", "function", "elif", "pass", "try", "except", "raise", "lambda",
    // Issue boilerplate.
    "thanks", "hi", "hello", "e.g", "i.e",
];

/// Whether a lower-cased word is one of [`STOP_WORDS`].
pub fn is_stop_word(word_lower: &str) -> bool {
    STOP_WORDS.contains(&word_lower)
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
