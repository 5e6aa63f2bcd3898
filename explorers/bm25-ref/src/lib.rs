//! The `bm25-ref` explorer: a faithful copy of the SWE-Explore reference BM25 baseline, so that
//! its published numbers can be reproduced.
//!
//! Pipeline (all of it per request, as the reference builds its index per instance):
//! 1. source files by the reference policy ([`swex_refkit::SourcePolicy`]), in path order;
//! 2. 80-line windows with 20 lines of overlap, blank windows skipped, the first 3000 windows of
//!    the corpus kept ([`swex_refkit::chunk_corpus`]);
//! 3. tokens: Python's `str.split()` on the window text and on the issue;
//! 4. `rank_bm25.BM25Okapi` scoring (k1 1.5, b 0.75, epsilon 0.25): idf
//!    `ln(N - df + 0.5) - ln(df + 0.5)`, negative idfs replaced by `epsilon * mean idf` (mean over
//!    the corpus vocabulary, accumulated in first-seen order), every query token counted as often
//!    as it occurs, and the floating-point operations in the reference's order (scores agree with
//!    `rank_bm25` to one unit in the last place on the 66 dev instances; the unit test checks
//!    bit-identity on a small corpus);
//! 5. windows sorted by score, descending, ties in corpus order (Python's stable sort), the
//!    first `top_k` returned (even when their score is 0, as the reference does).
//!
//! Config (all optional): `extensions`, `excluded_dirs`, `chunk_size`, `chunk_overlap`,
//! `max_chunks`, `k1`, `b`, `epsilon`.

use serde::Deserialize;
use std::collections::HashMap;
use std::ffi::CStr;
use swex_plugin::text::split_whitespace_python;
use swex_plugin::{Explorer, ExplorerError, Region, Request, Response, Services, parse_config};
use swex_refkit::{SourcePolicy, Windowing, chunk_corpus};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bm25RefConfig {
    #[serde(default)]
    pub extensions: Option<Vec<String>>,
    #[serde(default)]
    pub excluded_dirs: Option<Vec<String>>,
    #[serde(default)]
    pub chunk_size: Option<usize>,
    #[serde(default)]
    pub chunk_overlap: Option<usize>,
    /// `null` keeps every window; absent = 3000.
    #[serde(default = "default_max_chunks")]
    pub max_chunks: Option<usize>,
    #[serde(default = "default_k1")]
    pub k1: f64,
    #[serde(default = "default_b")]
    pub b: f64,
    #[serde(default = "default_epsilon")]
    pub epsilon: f64,
}

fn default_max_chunks() -> Option<usize> {
    Windowing::default().max_chunks
}
fn default_k1() -> f64 {
    1.5
}
fn default_b() -> f64 {
    0.75
}
fn default_epsilon() -> f64 {
    0.25
}

impl Default for Bm25RefConfig {
    fn default() -> Self {
        Bm25RefConfig {
            extensions: None,
            excluded_dirs: None,
            chunk_size: None,
            chunk_overlap: None,
            max_chunks: default_max_chunks(),
            k1: default_k1(),
            b: default_b(),
            epsilon: default_epsilon(),
        }
    }
}

/// `rank_bm25.BM25Okapi` over pre-tokenized documents (borrowed: the tokens live as long as the
/// corpus text).
pub struct Okapi<'a> {
    k1: f64,
    b: f64,
    avgdl: f64,
    doc_len: Vec<f64>,
    idf: HashMap<&'a str, f64>,
    /// term → (document, term frequency), documents ascending.
    postings: HashMap<&'a str, Vec<(usize, f64)>>,
}

impl<'a> Okapi<'a> {
    pub fn new(documents: &[Vec<&'a str>], k1: f64, b: f64, epsilon: f64) -> Okapi<'a> {
        let corpus_size = documents.len();
        let mut doc_len = Vec::with_capacity(corpus_size);
        let mut total_tokens: u64 = 0;
        // Document frequencies in first-seen order: the reference sums idfs in this order.
        let mut first_seen: Vec<&'a str> = Vec::new();
        let mut document_frequency: HashMap<&'a str, usize> = HashMap::new();
        let mut postings: HashMap<&'a str, Vec<(usize, f64)>> = HashMap::new();
        for (index, tokens) in documents.iter().enumerate() {
            doc_len.push(tokens.len() as f64);
            total_tokens += tokens.len() as u64;
            let mut frequencies: Vec<(&'a str, usize)> = Vec::new();
            let mut position: HashMap<&'a str, usize> = HashMap::new();
            for token in tokens {
                match position.get(token) {
                    Some(&slot) => frequencies[slot].1 += 1,
                    None => {
                        position.insert(token, frequencies.len());
                        frequencies.push((token, 1));
                    }
                }
            }
            for (token, frequency) in frequencies {
                let df = document_frequency.entry(token).or_insert_with(|| {
                    first_seen.push(token);
                    0
                });
                *df += 1;
                postings
                    .entry(token)
                    .or_default()
                    .push((index, frequency as f64));
            }
        }
        let avgdl = if corpus_size == 0 {
            0.0
        } else {
            total_tokens as f64 / corpus_size as f64
        };
        let mut idf = HashMap::with_capacity(first_seen.len());
        let mut idf_sum = 0.0;
        let mut negative = Vec::new();
        for token in &first_seen {
            let df = document_frequency[token] as f64;
            let value = (corpus_size as f64 - df + 0.5).ln() - (df + 0.5).ln();
            idf_sum += value;
            if value < 0.0 {
                negative.push(*token);
            }
            idf.insert(*token, value);
        }
        if !first_seen.is_empty() {
            let floor = epsilon * (idf_sum / first_seen.len() as f64);
            for token in negative {
                idf.insert(token, floor);
            }
        }
        Okapi {
            k1,
            b,
            avgdl,
            doc_len,
            idf,
            postings,
        }
    }

    /// `get_scores(query)`: one score per document.
    pub fn scores(&self, query: &[&str]) -> Vec<f64> {
        let mut scores = vec![0.0f64; self.doc_len.len()];
        for token in query {
            let Some(postings) = self.postings.get(*token) else {
                continue;
            };
            let idf = self.idf[*token];
            // Documents without the token add `idf * 0.0`, which changes no score: skip them.
            for &(document, tf) in postings {
                let norm = (1.0 - self.b) + self.b * self.doc_len[document] / self.avgdl;
                let ratio = tf * (self.k1 + 1.0) / (tf + self.k1 * norm);
                scores[document] += idf * ratio;
            }
        }
        scores
    }
}

/// Indices of the `top_k` best scores: descending, ties in index order.
pub fn rank(scores: &[f64], top_k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|a, b| scores[*b].total_cmp(&scores[*a]));
    order.truncate(top_k);
    order
}

pub struct Bm25Ref {
    policy: SourcePolicy,
    windowing: Windowing,
    k1: f64,
    b: f64,
    epsilon: f64,
}

impl Explorer for Bm25Ref {
    const NAME: &'static CStr = c"bm25-ref";
    const DESCRIPTION: &'static CStr =
        c"reference BM25 baseline (80-line windows, whitespace tokens, BM25Okapi), for parity";

    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError> {
        let config: Bm25RefConfig = parse_config(config)?;
        let defaults = Windowing::default();
        let windowing = Windowing {
            chunk_size: config.chunk_size.unwrap_or(defaults.chunk_size),
            chunk_overlap: config.chunk_overlap.unwrap_or(defaults.chunk_overlap),
            max_chunks: config.max_chunks,
        };
        windowing.check()?;
        let policy_defaults = SourcePolicy::default();
        Ok(Bm25Ref {
            policy: SourcePolicy {
                extensions: config.extensions.unwrap_or(policy_defaults.extensions),
                excluded_dirs: config
                    .excluded_dirs
                    .unwrap_or(policy_defaults.excluded_dirs),
            },
            windowing,
            k1: config.k1,
            b: config.b,
            epsilon: config.epsilon,
        })
    }

    fn explore(
        &self,
        request: &Request,
        services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        let corpus = chunk_corpus(services, &self.policy, &self.windowing)?;
        let mut response = Response::default();
        if !corpus.unreadable.is_empty() {
            response.notes.push(format!(
                "{} source files could not be read and were skipped (first: {})",
                corpus.unreadable.len(),
                corpus.unreadable[0]
            ));
        }
        if corpus.chunks.is_empty() {
            response
                .notes
                .push("no source windows in this snapshot".to_owned());
            return Ok(response);
        }
        let documents: Vec<Vec<&str>> = corpus
            .chunks
            .iter()
            .map(|c| split_whitespace_python(&c.content).collect())
            .collect();
        let okapi = Okapi::new(&documents, self.k1, self.b, self.epsilon);
        let query: Vec<&str> = split_whitespace_python(&request.issue).collect();
        let scores = okapi.scores(&query);
        for index in rank(&scores, request.top_k) {
            let chunk = &corpus.chunks[index];
            response.regions.push(
                Region::new(chunk.path.clone(), chunk.start as i64, chunk.end as i64)
                    .with_score(scores[index])
                    .with_why(format!("BM25 window {}", index + 1)),
            );
        }
        Ok(response)
    }
}

swex_plugin::export_vtable!(Bm25Ref);

#[cfg(test)]
mod tests {
    use super::*;

    /// Scores printed by `rank_bm25.BM25Okapi(corpus).get_scores(query)` (rank-bm25 0.2.2), as
    /// f64 bit patterns: the implementation must agree to the last bit.
    #[test]
    fn scores_match_rank_bm25_bit_for_bit() {
        let corpus = [
            "def parse url ( self ) : return url",
            "class Url : def parse ( self ) : pass",
            "import os os . path . join",
            "url url url parse",
            "nothing here at all",
        ];
        let documents: Vec<Vec<&str>> = corpus.iter().map(|d| d.split(' ').collect()).collect();
        let okapi = Okapi::new(&documents, 1.5, 0.75, 0.25);
        let scores = okapi.scores(&["parse", "url", "url", "os", "missing", ":"]);
        let bits: Vec<u64> = scores.iter().map(|s| s.to_bits()).collect();
        assert_eq!(bits, RANK_BM25_BITS, "scores {scores:?}");
    }

    #[test]
    fn ties_keep_corpus_order() {
        assert_eq!(rank(&[1.0, 3.0, 1.0, 3.0, 0.0], 3), [1, 3, 0]);
        assert_eq!(rank(&[0.0, 0.0], 5), [0, 1]);
    }

    include!("rank_bm25_expected.rs");
}
