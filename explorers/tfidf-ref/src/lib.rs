//! The `tfidf-ref` explorer: a faithful copy of the SWE-Explore reference TF-IDF baseline
//! (scikit-learn's `TfidfVectorizer` + cosine similarity over the reference's line windows).
//!
//! Pipeline, per request:
//! 1. the same windows as `bm25-ref` ([`swex_refkit::chunk_corpus`]: reference source policy,
//!    80/20 windows, first 3000);
//! 2. analysis as scikit-learn's word analyzer with `lowercase=True`, token pattern
//!    `(?u)\b[A-Za-z_][A-Za-z0-9_]{1,}\b` and the English stop words ([`tokenize`]);
//! 3. vocabulary: every term; when there are more than `max_features` (10000), the most frequent
//!    ones over the corpus (total counts). scikit-learn breaks ties at the cut with numpy's default
//!    (unstable, introsort/SIMD) argsort, whose order depends on the numpy build and the CPU; this
//!    implementation breaks them deterministically in alphabetical order (stable);
//! 4. weights: `(1 + ln tf) * idf`, `idf = ln((1 + n) / (1 + df)) + 1`, rows L2-normalised, then
//!    normalised again by the cosine similarity, sums taken in scikit-learn's order (row entries in
//!    corpus first-seen order, query terms in alphabetical order) so scores agree to the last bit
//!    up to numpy's vectorised `log`;
//! 5. ranking as `scores.argsort()[-top_k:][::-1]` with a stable argsort (ties: the later window
//!    first), windows with a score `<= 0` dropped.
//!
//! Config (all optional): `extensions`, `excluded_dirs`, `chunk_size`, `chunk_overlap`,
//! `max_chunks`, `max_features` (`null` = no limit).

mod stop_words;

use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::ffi::CStr;
use swex_plugin::{Explorer, ExplorerError, Region, Request, Response, Services, parse_config};
use swex_refkit::{SourcePolicy, Windowing, chunk_corpus};

pub use stop_words::ENGLISH_STOP_WORDS;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfidfRefConfig {
    #[serde(default)]
    pub extensions: Option<Vec<String>>,
    #[serde(default)]
    pub excluded_dirs: Option<Vec<String>>,
    #[serde(default)]
    pub chunk_size: Option<usize>,
    #[serde(default)]
    pub chunk_overlap: Option<usize>,
    #[serde(default = "default_max_chunks")]
    pub max_chunks: Option<usize>,
    #[serde(default = "default_max_features")]
    pub max_features: Option<usize>,
}

fn default_max_chunks() -> Option<usize> {
    Windowing::default().max_chunks
}
fn default_max_features() -> Option<usize> {
    Some(10_000)
}

impl Default for TfidfRefConfig {
    fn default() -> Self {
        TfidfRefConfig {
            extensions: None,
            excluded_dirs: None,
            chunk_size: None,
            chunk_overlap: None,
            max_chunks: default_max_chunks(),
            max_features: default_max_features(),
        }
    }
}

/// Python's `\w` for `str` patterns: alphanumeric or `_`. (Rust's `is_alphanumeric` also counts
/// the few combining marks with the Other_Alphabetic property; no code token is affected.)
fn is_word(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// scikit-learn's analysis: lowercase, then the maximal runs of word characters that are
/// ASCII identifiers of two characters or more, minus the stop words.
pub fn tokenize(text: &str, stop_words: &HashSet<&str>, out: &mut Vec<String>) {
    let lower = text.to_lowercase();
    let mut run_start: Option<usize> = None;
    let push_run = |run: &str, out: &mut Vec<String>| {
        let bytes = run.as_bytes();
        let identifier = bytes.len() >= 2
            && (bytes[0].is_ascii_alphabetic() || bytes[0] == b'_')
            && bytes
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b'_');
        if identifier && !stop_words.contains(run) {
            out.push(run.to_owned());
        }
    };
    for (index, c) in lower.char_indices() {
        match (is_word(c), run_start) {
            (true, None) => run_start = Some(index),
            (false, Some(start)) => {
                push_run(&lower[start..index], out);
                run_start = None;
            }
            _ => {}
        }
    }
    if let Some(start) = run_start {
        push_run(&lower[start..], out);
    }
}

/// A fitted TF-IDF model over a corpus of documents.
pub struct TfidfModel {
    /// Kept term → (alphabetical index among kept terms, idf).
    terms: HashMap<String, (usize, f64)>,
    /// Per kept term (alphabetical index): (document, normalised weight).
    postings: Vec<Vec<(usize, f64)>>,
    documents: usize,
}

/// Divides by the L2 norm, the sum of squares taken in the given order (skipped when zero).
fn normalize(weights: &mut [f64]) {
    let sum: f64 = weights.iter().fold(0.0, |acc, w| acc + w * w);
    if sum == 0.0 {
        return;
    }
    let norm = sum.sqrt();
    for w in weights.iter_mut() {
        *w /= norm;
    }
}

impl TfidfModel {
    /// Fits on the documents; `None` when the vocabulary is empty (scikit-learn raises then, and
    /// the reference answers nothing).
    pub fn fit(documents: &[&str], max_features: Option<usize>) -> Option<TfidfModel> {
        let stop_words: HashSet<&str> = ENGLISH_STOP_WORDS.iter().copied().collect();
        // Terms get ids in first-seen order; each row keeps its terms in id order, as the CSR
        // matrix scikit-learn builds does.
        let mut ids: HashMap<String, usize> = HashMap::new();
        let mut names: Vec<String> = Vec::new();
        let mut rows: Vec<Vec<(usize, u32)>> = Vec::with_capacity(documents.len());
        let mut tokens = Vec::new();
        for document in documents {
            tokens.clear();
            tokenize(document, &stop_words, &mut tokens);
            let mut counts: HashMap<usize, u32> = HashMap::new();
            for token in tokens.drain(..) {
                let id = *ids.entry(token).or_insert_with_key(|token| {
                    names.push(token.clone());
                    names.len() - 1
                });
                *counts.entry(id).or_insert(0) += 1;
            }
            let mut row: Vec<(usize, u32)> = counts.into_iter().collect();
            row.sort_unstable();
            rows.push(row);
        }
        if names.is_empty() {
            return None;
        }
        let mut total = vec![0u64; names.len()];
        let mut df = vec![0u64; names.len()];
        for row in &rows {
            for &(id, count) in row {
                total[id] += count as u64;
                df[id] += 1;
            }
        }
        // Alphabetical order of all terms, then the kept ones.
        let mut alphabetical: Vec<usize> = (0..names.len()).collect();
        alphabetical.sort_by(|a, b| names[*a].cmp(&names[*b]));
        let mut kept = vec![true; names.len()];
        if let Some(limit) = max_features
            && names.len() > limit
        {
            let mut by_frequency = alphabetical.clone();
            // Stable: equal totals stay in alphabetical order.
            by_frequency.sort_by(|a, b| total[*b].cmp(&total[*a]));
            kept = vec![false; names.len()];
            for id in &by_frequency[..limit] {
                kept[*id] = true;
            }
        }
        let n = documents.len() as f64;
        let mut terms = HashMap::new();
        let mut column = vec![usize::MAX; names.len()];
        let mut idf = vec![0.0; names.len()];
        for id in alphabetical.into_iter().filter(|id| kept[*id]) {
            column[id] = terms.len();
            idf[id] = ((1.0 + n) / (1.0 + df[id] as f64)).ln() + 1.0;
            terms.insert(names[id].clone(), (column[id], idf[id]));
        }
        let mut postings = vec![Vec::new(); terms.len()];
        for (document, row) in rows.iter().enumerate() {
            let entries: Vec<usize> = row
                .iter()
                .map(|(id, _)| *id)
                .filter(|id| kept[*id])
                .collect();
            let mut weights: Vec<f64> = row
                .iter()
                .filter(|(id, _)| kept[*id])
                .map(|&(id, count)| ((count as f64).ln() + 1.0) * idf[id])
                .collect();
            normalize(&mut weights); // TfidfTransformer's norm="l2"
            normalize(&mut weights); // cosine_similarity normalises its inputs again
            for (id, weight) in entries.into_iter().zip(weights) {
                postings[column[id]].push((document, weight));
            }
        }
        Some(TfidfModel {
            terms,
            postings,
            documents: documents.len(),
        })
    }

    /// Cosine similarity of the query with every document.
    pub fn scores(&self, query: &str) -> Vec<f64> {
        let stop_words: HashSet<&str> = ENGLISH_STOP_WORDS.iter().copied().collect();
        let mut tokens = Vec::new();
        tokenize(query, &stop_words, &mut tokens);
        let mut counts: HashMap<usize, (u32, f64)> = HashMap::new();
        for token in &tokens {
            if let Some(&(column, idf)) = self.terms.get(token) {
                counts.entry(column).or_insert((0, idf)).0 += 1;
            }
        }
        let mut entries: Vec<(usize, u32, f64)> = counts
            .into_iter()
            .map(|(column, (count, idf))| (column, count, idf))
            .collect();
        entries.sort_unstable_by_key(|e| e.0);
        let mut weights: Vec<f64> = entries
            .iter()
            .map(|&(_, count, idf)| ((count as f64).ln() + 1.0) * idf)
            .collect();
        normalize(&mut weights);
        normalize(&mut weights);
        let mut scores = vec![0.0f64; self.documents];
        for (&(column, _, _), weight) in entries.iter().zip(weights) {
            for &(document, document_weight) in &self.postings[column] {
                scores[document] += weight * document_weight;
            }
        }
        scores
    }
}

/// `scores.argsort()[-top_k:][::-1]` with a stable argsort, then scores `<= 0` dropped.
pub fn rank(scores: &[f64], top_k: usize) -> Vec<usize> {
    let mut ascending: Vec<usize> = (0..scores.len()).collect();
    ascending.sort_by(|a, b| scores[*a].total_cmp(&scores[*b]));
    ascending
        .iter()
        .rev()
        .take(top_k)
        .copied()
        .filter(|i| scores[*i] > 0.0)
        .collect()
}

pub struct TfidfRef {
    policy: SourcePolicy,
    windowing: Windowing,
    max_features: Option<usize>,
}

impl Explorer for TfidfRef {
    const NAME: &'static CStr = c"tfidf-ref";
    const DESCRIPTION: &'static CStr =
        c"reference TF-IDF baseline (80-line windows, sublinear TF-IDF, cosine), for parity";

    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError> {
        let config: TfidfRefConfig = parse_config(config)?;
        let defaults = Windowing::default();
        let windowing = Windowing {
            chunk_size: config.chunk_size.unwrap_or(defaults.chunk_size),
            chunk_overlap: config.chunk_overlap.unwrap_or(defaults.chunk_overlap),
            max_chunks: config.max_chunks,
        };
        windowing.check()?;
        if config.max_features == Some(0) {
            return Err(ExplorerError::InvalidConfig(
                "max_features must be positive".to_owned(),
            ));
        }
        let policy_defaults = SourcePolicy::default();
        Ok(TfidfRef {
            policy: SourcePolicy {
                extensions: config.extensions.unwrap_or(policy_defaults.extensions),
                excluded_dirs: config
                    .excluded_dirs
                    .unwrap_or(policy_defaults.excluded_dirs),
            },
            windowing,
            max_features: config.max_features,
        })
    }

    fn explore(
        &self,
        request: &Request,
        services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        let mut response = Response::default();
        if request.issue.trim().is_empty() {
            return Ok(response);
        }
        let corpus = chunk_corpus(services, &self.policy, &self.windowing)?;
        if !corpus.unreadable.is_empty() {
            response.notes.push(format!(
                "{} source files could not be read and were skipped (first: {})",
                corpus.unreadable.len(),
                corpus.unreadable[0]
            ));
        }
        let documents: Vec<&str> = corpus.chunks.iter().map(|c| c.content.as_str()).collect();
        let Some(model) = TfidfModel::fit(&documents, self.max_features) else {
            response
                .notes
                .push("no indexable terms in this snapshot's source windows".to_owned());
            return Ok(response);
        };
        let scores = model.scores(&request.issue);
        for index in rank(&scores, request.top_k) {
            let chunk = &corpus.chunks[index];
            response.regions.push(
                Region::new(chunk.path.clone(), chunk.start as i64, chunk.end as i64)
                    .with_score(scores[index])
                    .with_why(format!("TF-IDF window {}", index + 1)),
            );
        }
        Ok(response)
    }
}

swex_plugin::export_vtable!(TfidfRef);

#[cfg(test)]
mod tests {
    use super::*;

    fn check_tokens(text: &str, expected: &[&str]) {
        let stop: HashSet<&str> = ENGLISH_STOP_WORDS.iter().copied().collect();
        let mut out = Vec::new();
        tokenize(text, &stop, &mut out);
        assert_eq!(out, expected, "tokens of {text:?}");
    }

    #[test]
    fn tokens_match_scikit_learn() {
        check_tokens(
            "def parse_URL(self): return self.x1",
            &["def", "parse_url", "self", "return", "self", "x1"],
        );
        check_tokens("a 1abc _x __init__ 9 ab", &["_x", "__init__", "ab"]);
        check_tokens("café naïve über cafe", &["cafe"]);
        check_tokens("The value is NOT found", &["value"]);
        check_tokens("x.y-z a_b2", &["a_b2"]);
    }

    #[test]
    fn ranking_is_argsort_tail_reversed() {
        assert_eq!(rank(&[0.5, 0.9, 0.5, 0.0, 0.7], 3), [1, 4, 2]);
        assert_eq!(rank(&[0.0, 0.0, 0.3], 3), [2]);
    }

    /// Scores from scikit-learn 1.9.1 (`TfidfVectorizer(max_features=…, sublinear_tf=True,
    /// stop_words="english", token_pattern=…)` + `cosine_similarity`), as f64 bit patterns. A
    /// max_features cut with no ties at the boundary, so numpy's sort order cannot matter.
    #[test]
    fn scores_match_scikit_learn() {
        let model = TfidfModel::fit(SKLEARN_DOCS, Some(SKLEARN_MAX_FEATURES)).unwrap();
        let scores = model.scores(SKLEARN_QUERY);
        let bits: Vec<u64> = scores.iter().map(|s| s.to_bits()).collect();
        let expected: Vec<f64> = SKLEARN_BITS.iter().map(|b| f64::from_bits(*b)).collect();
        for (got, want) in scores.iter().zip(&expected) {
            assert!(
                (got - want).abs() <= 4.0 * f64::EPSILON,
                "{scores:?} vs {expected:?}"
            );
        }
        let exact = bits
            .iter()
            .zip(SKLEARN_BITS)
            .filter(|(a, b)| *a == b)
            .count();
        assert!(
            exact >= bits.len() - 1,
            "{exact}/{} scores bit-exact: {scores:?} vs {expected:?}",
            bits.len()
        );
    }

    include!("sklearn_expected.rs");
}
