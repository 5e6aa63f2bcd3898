//! Lexical (BM25) retrieval over chunks, on tantivy.
//!
//! - [`tokenizer`]: the code-aware analyzer used for documents and queries.
//! - queries: the weighted terms of free text come from the issue parser ([`swex_issue::parse()`]);
//!   [`LexicalQuery`] analyses them into index tokens.
//! - [`pool`]: a tantivy index shared by every snapshot of a repository (a *pool*), whose
//!   documents are chunks keyed by `(path, content hash)`, and the per-snapshot [`pool::PoolView`]
//!   that filters it to one snapshot and scores with that snapshot's own BM25 statistics, so
//!   results are the same as from an index of the snapshot alone.
//!
//! This module knows chunks only as `(file key, chunk ordinal, path, symbols, body)` and returns
//! snapshot-wide chunk ids; it knows nothing about files on disk, analyses or the cache layout.

pub mod pool;
pub mod tokenizer;

use serde::{Deserialize, Serialize};
use swex_issue::WeightedTerm;

/// Errors of the lexical index.
#[derive(Debug, thiserror::Error)]
pub enum LexicalError {
    #[error("lexical index at {path}: {source}")]
    Tantivy {
        path: String,
        #[source]
        source: tantivy::TantivyError,
    },
    #[error("lexical index at {path}: {message}")]
    Corrupt { path: String, message: String },
    #[error("lexical index at {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Scoring knobs of lexical search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LexicalConfig {
    /// Multiplier of matches in the file path.
    pub path_boost: f32,
    /// Multiplier of matches in the chunk's qualified name and the definitions inside it.
    pub symbol_boost: f32,
    /// Multiplier of matches in the chunk text.
    pub body_boost: f32,
    /// Weight of an identifier's sub-words (`get`, `user` of `getUserName`) relative to the whole
    /// identifier.
    pub subword_factor: f32,
    /// Query tokens kept (heaviest first); long issues otherwise make slow, unfocused queries.
    pub max_query_tokens: usize,
}

impl Default for LexicalConfig {
    fn default() -> Self {
        LexicalConfig {
            path_boost: 1.5,
            symbol_boost: 2.0,
            body_boost: 1.0,
            subword_factor: 0.5,
            max_query_tokens: 128,
        }
    }
}

/// An analysed query: index tokens with weights.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LexicalQuery {
    /// Distinct tokens of the code fields (path, symbols, body), heaviest first.
    pub tokens: Vec<(String, f32)>,
    /// Distinct CJK bigrams ([`tokenizer::for_each_cjk_bigram`]) for the CJK field, heaviest
    /// first; empty for text without CJK characters.
    pub cjk_bigrams: Vec<(String, f32)>,
}

impl LexicalQuery {
    /// Analyses weighted terms into weighted tokens: whole identifiers and compounds keep the
    /// term's weight, sub-words get `subword_factor` of it; a token seen in several terms keeps its
    /// largest weight.
    ///
    /// CJK bigrams of a term get the term's weight (they are the only way CJK words match).
    pub fn from_terms(terms: &[WeightedTerm], config: &LexicalConfig) -> LexicalQuery {
        let mut tokens = WeightedTokens::default();
        let mut cjk_bigrams = WeightedTokens::default();
        for term in terms {
            tokenizer::for_each_token_with_level(&term.text, |token, _, _, level| {
                let weight = match level {
                    tokenizer::TokenLevel::Subword => term.weight * config.subword_factor,
                    _ => term.weight,
                };
                tokens.add(token, weight);
            });
            tokenizer::for_each_cjk_bigram(&term.text, |from, to| {
                cjk_bigrams.add(&term.text[from..to], term.weight);
            });
        }
        LexicalQuery {
            tokens: tokens.heaviest(config.max_query_tokens),
            cjk_bigrams: cjk_bigrams.heaviest(config.max_query_tokens),
        }
    }

    /// A query from free text (an issue, a phrase) through the issue parser.
    pub fn from_text(text: &str, config: &LexicalConfig) -> LexicalQuery {
        LexicalQuery::from_terms(&swex_issue::parse(text).terms, config)
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty() && self.cjk_bigrams.is_empty()
    }
}

/// Distinct tokens in order of first appearance, each with the largest weight it was given.
#[derive(Default)]
struct WeightedTokens {
    weights: Vec<(String, f32)>,
    index: std::collections::HashMap<String, usize>,
}

impl WeightedTokens {
    fn add(&mut self, token: &str, weight: f32) {
        match self.index.get(token) {
            Some(&i) => self.weights[i].1 = self.weights[i].1.max(weight),
            None => {
                self.index.insert(token.to_string(), self.weights.len());
                self.weights.push((token.to_string(), weight));
            }
        }
    }

    /// The `limit` heaviest; the stable sort keeps first-appearance order among equal weights.
    fn heaviest(mut self, limit: usize) -> Vec<(String, f32)> {
        self.weights.sort_by(|a, b| b.1.total_cmp(&a.1));
        self.weights.truncate(limit);
        self.weights
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subwords_weigh_less_and_duplicates_keep_the_max() {
        let terms = vec![
            WeightedTerm::new("getUserName", 1.0),
            WeightedTerm::new("name", 0.3),
        ];
        let q = LexicalQuery::from_terms(&terms, &LexicalConfig::default());
        assert_eq!(
            q.tokens,
            vec![
                ("getusername".to_string(), 1.0),
                ("get".to_string(), 0.5),
                ("user".to_string(), 0.5),
                ("name".to_string(), 0.5),
            ]
        );
    }
}
