//! What a file's path says about it for search: the words of its name and folder, which search
//! queries often repeat (`router` for `routing/router.go`), and word matching up to inflection.
//! Its role (test, docs, vendored, generated, ...) is the one rule of `swex_text::paths`,
//! re-exported here.

use crate::lexical::tokenizer::{TokenLevel, for_each_token_with_level};

pub use swex_text::paths::{PathRole, path_role};

/// The words of a path's file stem and of its folder (lowercased tokens of the engine's
/// tokenizer, whole segments and sub-words): `lib/rack/mock_request.rb` gives `mock_request`,
/// `mock`, `request`, `rack`.
pub fn path_words(path: &str) -> Vec<String> {
    let mut parts = path.rsplit('/');
    let name = parts.next().unwrap_or("");
    let folder = parts.next().unwrap_or("");
    let stem = name.split_once('.').map_or(name, |(stem, _)| stem);
    let mut words: Vec<String> = Vec::new();
    for text in [stem, folder] {
        for_each_token_with_level(text, |token, _, _, level| {
            if level != TokenLevel::Compound && !words.iter().any(|w| w == token) {
                words.push(token.to_string());
            }
        });
    }
    words
}

/// A file's stem, lowercased, without `_` and `-`: what a symbol name is compared with
/// (`HttpClient` ↔ `http_client.py`).
pub fn normalized_stem(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split_once('.').map_or(name, |(stem, _)| stem);
    stem.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Suffixes of English inflection and derivation that code names and queries differ by.
const SUFFIXES: [&str; 17] = [
    "ations", "ation", "itions", "ition", "ings", "ing", "ions", "ion", "ers", "er", "ies", "ied",
    "es", "ed", "s", "y", "e",
];

/// The word and its stems: the word without each suffix of [`SUFFIXES`] that leaves at least
/// `min_stem` characters.
fn stems(word: &str, min_stem: usize) -> impl Iterator<Item = &str> {
    std::iter::once(word).chain(SUFFIXES.iter().filter_map(move |suffix| {
        word.strip_suffix(suffix)
            .filter(|stem| stem.len() >= min_stem)
    }))
}

/// Whether a query word and a path (or vocabulary) word are the same word up to inflection:
/// equal, or sharing a stem of at least `min_stem` characters (`dependency` ↔ `dependencies`,
/// `route` ↔ `router`, `parsing` ↔ `parser`, `class` ↔ `classes`; not `content` ↔ `context`).
pub fn words_match(a: &str, b: &str, min_stem: usize) -> bool {
    a == b || stems(a, min_stem).any(|x| stems(b, min_stem).any(|y| x == y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_words_and_stems() {
        assert_eq!(
            path_words("lib/rack/mock_request.rb"),
            ["mock_request", "mock", "request", "rack"]
        );
        assert_eq!(
            path_words("Sources/Vapor/HTTP/HTTPServer.swift"),
            ["httpserver", "http", "server"]
        );
        assert_eq!(normalized_stem("src/http_client.py"), "httpclient");
        assert_eq!(normalized_stem("lua/lazy/core/plugin.lua"), "plugin");
        assert!(words_match("dependencies", "dependency", 4));
        assert!(words_match("route", "router", 4));
        assert!(words_match("parsing", "parser", 4));
        assert!(!words_match("map", "mapper", 4));
        assert!(!words_match("content", "context", 4));
        assert!(words_match("map", "map", 4));
        assert!(words_match("classes", "class", 4));
        assert!(words_match("composition", "compose", 4));
        assert!(words_match("scheduling", "scheduler", 4));
    }
}
