//! Word stemming: whether two words are the same word up to inflection (`dependency` ↔
//! `dependencies`, `route` ↔ `router`). (A *file's* stem, its name without extension, is
//! [`crate::paths::file_stem`].)
//!
//! One rule with one named difference, [`Inflection`]: how much of a word's end may differ.
//!
//! ```
//! use swex_text::stems::{Inflection, same_word};
//!
//! let suffixes = Inflection::Suffixes { min_stem: 4 };
//! assert!(same_word("parsing", "parser", suffixes));
//! assert!(!same_word("parsing", "parser", Inflection::Plural));
//! assert!(same_word("headers", "header", Inflection::Plural));
//! ```

/// How far two forms of a word may differ. The readers differ on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Inflection {
    /// Equal, or one is the other plus a final `s` (`headers` ↔ `header`). The code search's
    /// test of a file stem naming a symbol (`headers.py` defines `Header`): a name and its file
    /// agree but for number; a looser match would boost every file whose stem merely shares a
    /// root with the symbol.
    Plural,
    /// Equal, or sharing a stem of at least `min_stem` characters once a suffix of English
    /// inflection or derivation ([`SUFFIXES`]) is taken off each (`route` ↔ `router`, `parsing`
    /// ↔ `parser`, `class` ↔ `classes`; not `content` ↔ `context`). The code search's match of a
    /// query word with a path or vocabulary word: a short query says `scheduling` where the
    /// code says `scheduler`.
    Suffixes {
        /// The shortest stem that counts (shorter ones, `map` of `mapper`, match too much).
        min_stem: usize,
    },
}

/// Suffixes of English inflection and derivation that code names and queries differ by.
pub const SUFFIXES: [&str; 17] = [
    "ations", "ation", "itions", "ition", "ings", "ing", "ions", "ion", "ers", "er", "ies", "ied",
    "es", "ed", "s", "y", "e",
];

/// The word and its stems: the word without each suffix of [`SUFFIXES`] that leaves at least
/// `min_stem` bytes.
fn stems(word: &str, min_stem: usize) -> impl Iterator<Item = &str> {
    std::iter::once(word).chain(SUFFIXES.iter().filter_map(move |suffix| {
        word.strip_suffix(suffix)
            .filter(|stem| stem.len() >= min_stem)
    }))
}

/// Whether `a` and `b` are the same word up to `inflection` (compared as given: lowercase both
/// first for a case-blind match).
pub fn same_word(a: &str, b: &str, inflection: Inflection) -> bool {
    match inflection {
        Inflection::Plural => {
            a == b || a.strip_suffix('s') == Some(b) || b.strip_suffix('s') == Some(a)
        }
        Inflection::Suffixes { min_stem } => {
            a == b || stems(a, min_stem).any(|x| stems(b, min_stem).any(|y| x == y))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row per pair: the words, then whether they match by plural and by suffixes (4).
    #[test]
    fn words_match_up_to_their_inflection() {
        let suffixes = Inflection::Suffixes { min_stem: 4 };
        for (a, b, plural, by_suffixes) in [
            ("map", "map", true, true),
            ("headers", "header", true, true),
            ("header", "headers", true, true),
            ("classes", "class", false, true),
            ("dependencies", "dependency", false, true),
            ("route", "router", false, true),
            ("parsing", "parser", false, true),
            ("composition", "compose", false, true),
            ("scheduling", "scheduler", false, true),
            // Too short a stem, or a different word.
            ("map", "mapper", false, false),
            ("content", "context", false, false),
            ("ss", "s", true, false),
        ] {
            assert_eq!(
                same_word(a, b, Inflection::Plural),
                plural,
                "{a} ~ {b} plural"
            );
            assert_eq!(same_word(a, b, suffixes), by_suffixes, "{a} ~ {b} suffixes");
        }
    }
}
