//! What a file's path says about it for search: the words of its name and folder, which search
//! queries often repeat (`router` for `routing/router.go`); word matching up to inflection is
//! `swex_text::stems`.
//! Its role (test, docs, vendored, generated, ...) is the one rule of `swex_text::paths`,
//! re-exported here.

use crate::lexical::tokenizer::{TokenLevel, for_each_token_with_level};

use swex_text::identifiers::squash;
use swex_text::paths::{Extension, file_stem};
pub use swex_text::paths::{PathRole, path_role};

/// The words of a path's file stem and of its folder (lowercased tokens of the engine's
/// tokenizer, whole segments and sub-words): `lib/rack/mock_request.rb` gives `mock_request`,
/// `mock`, `request`, `rack`.
pub fn path_words(path: &str) -> Vec<String> {
    let folder = path.rsplit('/').nth(1).unwrap_or("");
    let stem = file_stem(path, Extension::All);
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

/// A file's stem (up to its first dot), squashed (lowercase, without `_` and `-`): what a symbol
/// name is compared with (`HttpClient` ↔ `http_client.py`).
pub fn normalized_stem(path: &str) -> String {
    squash(file_stem(path, Extension::All))
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
    }
}
