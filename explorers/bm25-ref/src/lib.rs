//! The `bm25-ref` explorer: a faithful copy of the SWE-Explore reference BM25 baseline, so that
//! its published numbers can be reproduced.
//!
//! Pipeline (all of it per request, as the reference builds its index per instance):
//! 1. source files by the reference policy ([`swex_refkit::SourcePolicy`]), in path order;
//! 2. 80-line windows with 20 lines of overlap, blank windows skipped, the first 3000 windows of
//!    the corpus kept ([`swex_refkit::window_corpus`]);
//! 3. tokens: Python's `str.split()` on the window text and on the issue (each line split once,
//!    a window's tokens being its lines' tokens; tokens interned to ids in first-seen order);
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

use rustc_hash::FxHashMap;
use serde::Deserialize;
use std::ffi::CStr;
use swex_plugin::text::python::split_whitespace;
use swex_plugin::{Explorer, ExplorerError, Request, Response, Services, parse_config};
use swex_refkit::{SourcePolicy, TermRows, WindowedCorpus, Windowing, window_corpus};

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

/// Token ids in first-seen order (borrowed: the tokens live as long as the corpus text).
#[derive(Debug)]
pub struct Vocabulary<'a> {
    ids: FxHashMap<&'a str, u32>,
}

impl Default for Vocabulary<'_> {
    fn default() -> Self {
        // A corpus of 3000 windows has tens of thousands of distinct tokens: start big rather
        // than rehash a dozen times.
        Vocabulary {
            ids: FxHashMap::with_capacity_and_hasher(1 << 15, Default::default()),
        }
    }
}

impl<'a> Vocabulary<'a> {
    /// The token's id, a new one (the next in first-seen order) for an unseen token.
    pub fn intern(&mut self, token: &'a str) -> u32 {
        let next = self.ids.len() as u32;
        *self.ids.entry(token).or_insert(next)
    }

    pub fn get(&self, token: &str) -> Option<u32> {
        self.ids.get(token).copied()
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// `rank_bm25.BM25Okapi` over tokenized documents.
pub struct Okapi<'a> {
    k1: f64,
    b: f64,
    avgdl: f64,
    vocabulary: Vocabulary<'a>,
    counts: TermRows,
    doc_len: Vec<f64>,
    /// Per term id.
    idf: Vec<f64>,
}

impl<'a> Okapi<'a> {
    pub fn new(documents: &[Vec<&'a str>], k1: f64, b: f64, epsilon: f64) -> Okapi<'a> {
        let mut vocabulary = Vocabulary::default();
        let mut counts = TermRows::default();
        let mut ids = Vec::new();
        for tokens in documents {
            ids.clear();
            ids.extend(tokens.iter().map(|token| vocabulary.intern(token)));
            counts.add(&ids);
        }
        Okapi::from_counts(vocabulary, counts, k1, b, epsilon)
    }

    /// The model of the corpus windows, their tokens Python's `str.split()` of the window text.
    /// Each line is split once: a window's tokens are its lines' tokens, as the `\n` joining
    /// them separates like any whitespace.
    pub fn from_windows(corpus: &'a WindowedCorpus, k1: f64, b: f64, epsilon: f64) -> Okapi<'a> {
        let mut vocabulary = Vocabulary::default();
        let mut counts = TermRows::default();
        corpus.for_each_window_tokens(
            |line, ids| ids.extend(split_whitespace(line).map(|t| vocabulary.intern(t))),
            |_, ids| counts.add(ids),
        );
        Okapi::from_counts(vocabulary, counts, k1, b, epsilon)
    }

    /// The model of documents already counted. Term ids must be in first-seen order over the
    /// documents (as [`Vocabulary::intern`] gives them when the documents are interned in
    /// order), and every id must occur in some document: the reference sums the idfs in
    /// first-seen order and averages them over the corpus vocabulary.
    pub fn from_counts(
        vocabulary: Vocabulary<'a>,
        counts: TermRows,
        k1: f64,
        b: f64,
        epsilon: f64,
    ) -> Okapi<'a> {
        let corpus_size = counts.documents();
        let total_tokens: u64 = counts.doc_lens().iter().map(|n| *n as u64).sum();
        let doc_len: Vec<f64> = counts.doc_lens().iter().map(|n| *n as f64).collect();
        let mut document_frequency = vec![0usize; vocabulary.len()];
        for &(id, _) in counts.entries() {
            document_frequency[id as usize] += 1;
        }
        let avgdl = if corpus_size == 0 {
            0.0
        } else {
            total_tokens as f64 / corpus_size as f64
        };
        let mut idf = Vec::with_capacity(document_frequency.len());
        let mut idf_sum = 0.0;
        let mut negative = Vec::new();
        for (id, df) in document_frequency.iter().enumerate() {
            let df = *df as f64;
            let value = (corpus_size as f64 - df + 0.5).ln() - (df + 0.5).ln();
            idf_sum += value;
            if value < 0.0 {
                negative.push(id);
            }
            idf.push(value);
        }
        if !idf.is_empty() {
            let floor = epsilon * (idf_sum / idf.len() as f64);
            for id in negative {
                idf[id] = floor;
            }
        }
        Okapi {
            k1,
            b,
            avgdl,
            vocabulary,
            counts,
            doc_len,
            idf,
        }
    }

    /// `get_scores(query)`: one score per document.
    pub fn scores(&self, query: &[&str]) -> Vec<f64> {
        // Tokens outside the vocabulary add `0 * …` to every score: skip them.
        let query: Vec<usize> = query
            .iter()
            .filter_map(|token| self.vocabulary.get(token))
            .map(|id| id as usize)
            .collect();
        let mut scores = vec![0.0f64; self.doc_len.len()];
        let mut frequency = vec![0u32; self.vocabulary.len()];
        for (document, score) in scores.iter_mut().enumerate() {
            let entries = self.counts.row(document);
            for &(id, tf) in entries {
                frequency[id as usize] = tf;
            }
            // The reference adds the query tokens' terms in query order (repeats included);
            // documents without the token add `idf * 0.0`, which changes no score: skip them.
            for &id in &query {
                if frequency[id] == 0 {
                    continue;
                }
                let tf = frequency[id] as f64;
                let norm = (1.0 - self.b) + self.b * self.doc_len[document] / self.avgdl;
                let ratio = tf * (self.k1 + 1.0) / (tf + self.k1 * norm);
                *score += self.idf[id] * ratio;
            }
            for &(id, _) in entries {
                frequency[id as usize] = 0;
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
        let corpus = window_corpus(services, &self.policy, &self.windowing)?;
        let mut response = Response::default();
        if !corpus.unreadable.is_empty() {
            response.notes.push(format!(
                "{} source files could not be read and were skipped (first: {})",
                corpus.unreadable.len(),
                corpus.unreadable[0]
            ));
        }
        if corpus.windows.is_empty() {
            response
                .notes
                .push("no source windows in this snapshot".to_owned());
            return Ok(response);
        }
        let okapi = Okapi::from_windows(&corpus, self.k1, self.b, self.epsilon);
        let query: Vec<&str> = split_whitespace(&request.issue).collect();
        let scores = okapi.scores(&query);
        for index in rank(&scores, request.top_k) {
            response.regions.push(
                corpus
                    .region(index)
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

    /// Windows that share lines score as their joined texts do, bit for bit.
    #[test]
    fn windows_score_as_joined_text() {
        let lines = [
            "def parse url ( self ) : return url",
            "",
            "class Url :\tdef parse ( self ) : pass",
            "import os os . path . join",
            "url url url parse\x1fos",
            "nothing here at all",
        ];
        let corpus =
            WindowedCorpus::one_file("a.py", &lines, &[(1, 2), (2, 4), (3, 5), (5, 6), (6, 6)]);
        let joined = corpus.texts();
        let documents: Vec<Vec<&str>> = joined
            .iter()
            .map(|text| split_whitespace(text).collect())
            .collect();
        let query = ["parse", "url", "url", "os", "missing", ":", "nothing"];
        let by_window = Okapi::from_windows(&corpus, 1.5, 0.75, 0.25).scores(&query);
        let by_text = Okapi::new(&documents, 1.5, 0.75, 0.25).scores(&query);
        let bits = |scores: Vec<f64>| scores.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(by_window), bits(by_text));
    }

    #[test]
    fn ties_keep_corpus_order() {
        assert_eq!(rank(&[1.0, 3.0, 1.0, 3.0, 0.0], 3), [1, 3, 0]);
        assert_eq!(rank(&[0.0, 0.0], 5), [0, 1]);
    }

    include!("rank_bm25_expected.rs");
}
