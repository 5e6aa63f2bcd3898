//! Rare title words: the words of an issue's title that only a handful of the snapshot's code
//! files hold, and those files.
//!
//! Why: BM25 sums every word's weight, so files that hold several common words of the title can
//! outscore the one file that holds its rarest word: an error code (`models.E015 is raised
//! when …`: Django's `db/models/base.py`, which defines the check), a word of the domain the
//! project names once (`fractional`: jq's `src/jv_aux.c`). A word that at most
//! [`RARE_WORD_MAX_FILES`] code files hold points at them whatever else the title says;
//! [`crate::rank`] gives each candidate the rarest such word it holds (`title_rare_words`,
//! docs/ranker.md, "Rare title words").
//!
//! How: one `lexical_search` with `whole_files` per word of the title (the parts of its
//! identifiers, lowercased, stop words out; at most [`MAX_TITLE_WORDS`]): for a single word the
//! whole-file hits are exactly the files that hold it. An answer of [`WORD_LOOKUP_LIMIT`] files
//! means a common word, which is left out.

use crate::issue::is_stop;
use std::collections::HashSet;
use swex_plugin::text::identifiers::{Digits, identifier_parts};
use swex_plugin::types::{FileEntry, SearchArgs, WeightedTerm};
use swex_plugin::{ServiceError, Services};

/// A title word held by at most this many code files is rare. Chosen on the 516 training fixes'
/// candidates (2, 5, 10 and 20 tried) and checked on the 159 unseen fixes and dev.
pub const RARE_WORD_MAX_FILES: usize = 5;

/// The most title words looked up per answer (a title has about eight).
pub const MAX_TITLE_WORDS: usize = 16;

/// Whole files asked for per word: far more than a rare word has, so that an answer this long
/// means a common word.
pub const WORD_LOOKUP_LIMIT: usize = 64;

/// A rare word of the title: how rare (its inverse document frequency over the snapshot's code
/// files) and the code files that hold it.
#[derive(Debug, Clone, PartialEq)]
pub struct RareWord {
    pub word: String,
    pub idf: f64,
    pub files: Vec<String>,
}

/// The words of a title worth looking up: the parts of its identifiers (`autodoc_typehints` gives
/// `autodoc` and `typehints`, `DataArray` `data` and `array`, `Auto-reloader` `auto` and
/// `reloader`), lowercased; three letters or more, not a stop word, not a number; distinct, in
/// order of appearance, at most [`MAX_TITLE_WORDS`]. Parts, not whole identifiers: the engine
/// indexes an identifier with its parts, so a search for a compound would also find the files
/// that hold only its parts — its hits would not be the files that hold it.
pub fn title_words(title: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let identifiers = title
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty());
    for part in identifiers.flat_map(|w| identifier_parts(w, Digits::Attached)) {
        if part.len() >= 3
            && !part.bytes().all(|b| b.is_ascii_digit())
            && !is_stop(&part)
            && !words.contains(&part)
            && words.len() < MAX_TITLE_WORDS
        {
            words.push(part);
        }
    }
    words
}

/// The rare words of `title` in the snapshot whose files are `files` (the `list_files` answer),
/// rarest first (ties in title order). A file counts when it is in a language the engine parses
/// (tests included: they name what they test); documentation and data files do not.
pub fn rare_title_words(
    title: &str,
    services: &Services<'_>,
    files: &[FileEntry],
) -> Result<Vec<RareWord>, ServiceError> {
    let code: HashSet<&str> = files
        .iter()
        .filter(|f| crate::rank::is_code_file(f))
        .map(|f| f.path.as_str())
        .collect();
    let code_files = code.len() as f64;
    let mut rare = Vec::new();
    for word in title_words(title) {
        let args = SearchArgs::new(word.clone(), WORD_LOOKUP_LIMIT)
            .with_terms(vec![WeightedTerm::new(word.clone(), 1.0)])
            .whole_files();
        let hits = services.lexical_search(&args)?;
        if hits.len() >= WORD_LOOKUP_LIMIT {
            continue;
        }
        let mut holders: Vec<String> = hits
            .into_iter()
            .map(|hit| hit.path)
            .filter(|path| code.contains(path.as_str()))
            .collect();
        holders.sort();
        holders.dedup();
        if holders.is_empty() {
            continue;
        }
        let held = holders.len();
        if held == 0 || held > RARE_WORD_MAX_FILES {
            continue;
        }
        let idf = (1.0 + (code_files - held as f64 + 0.5) / (held as f64 + 0.5)).ln();
        rare.push(RareWord {
            word,
            idf,
            files: holders,
        });
    }
    rare.sort_by(|a, b| b.idf.total_cmp(&a.idf));
    Ok(rare)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_words_are_the_parts_of_identifiers_without_stop_words() {
        let words = title_words(
            "`autodoc_typehints = \"description\"` causes DataArray.to_dict() to drop 3D arrays; the Auto-reloader",
        );
        // Parts, lowercased, in order, each once; never a compound.
        for expected in [
            "autodoc",
            "typehints",
            "description",
            "data",
            "array",
            "dict",
            "auto",
            "reloader",
        ] {
            assert!(
                words.contains(&expected.to_string()),
                "{expected} in {words:?}"
            );
        }
        let at = |w: &str| words.iter().position(|x| x == w).unwrap();
        assert!(at("autodoc") < at("typehints") && at("typehints") < at("data"));
        for absent in [
            "autodoc_typehints",
            "dataarray",
            "to_dict",
            "to",
            "3d",
            "the",
        ] {
            assert!(
                !words.contains(&absent.to_string()),
                "{absent} in {words:?}"
            );
        }
        assert_eq!(words.iter().filter(|w| *w == "array").count(), 1);
        assert!(words.iter().all(|w| !is_stop(w) && w.len() >= 3));
        // An error code is a word; a number is not.
        assert_eq!(
            title_words("models.E015 is raised 2021"),
            ["models", "e015", "raised"]
                .iter()
                .filter(|w| !is_stop(w))
                .map(|w| w.to_string())
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn title_words_are_capped() {
        let title: String = (0..40).map(|i| format!("word{i:02}x ")).collect();
        assert_eq!(title_words(&title).len(), MAX_TITLE_WORDS);
    }

    #[test]
    fn title_words_are_ascii_lowercase() {
        let words = title_words("a.b+c (x|y) `q[0]*` {z} ünïcode naïve $HOME \\d Spanish");
        assert!(words.contains(&"spanish".to_string()), "{words:?}");
        assert!(
            words.iter().all(|w| w
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())),
            "{words:?}"
        );
    }
}
