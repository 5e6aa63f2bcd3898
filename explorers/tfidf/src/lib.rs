//! The `tfidf` explorer: TF-IDF cosine similarity between the issue and the engine's chunks.
//!
//! Pipeline:
//! 1. **Candidates**: the engine's BM25 (`lexical_search`) returns the `candidates` chunks most
//!    likely to matter (definition-level chunks of every indexed file, code-aware query
//!    builder); their text is read through `read_lines`, one read per file.
//! 2. **Vectors**: each candidate is a document made of its path, its name and its lines;
//!    tokens are code-aware ([`tokens`]: identifiers lower-cased whole and split on `_`, digits
//!    and camelCase by `swex_text::identifiers` with `Digits::Separate`, stop words dropped); weights are sublinear tf (`1 + ln tf`) × smoothed idf
//!    (`ln((1 + N) / (1 + df)) + 1`, scikit-learn's), L2-normalised. The idf is estimated over
//!    the candidate pool, not the whole snapshot (the services expose no global document
//!    frequencies); the pool is large enough that common code words still get low weights. The
//!    issue is vectorised the same way.
//! 3. **Ranking**: candidates by cosine similarity to the issue (ties: BM25 order); overlapping
//!    or adjacent chunks of one file, or chunks apart only by blank lines, merge into one region
//!    (`swex_rankkit::select_regions`); the first `top_k` regions are the answer.
//!
//! The reference baseline (80-line windows, scikit-learn defaults) is `tfidf-ref`; this one
//! differs in everything but the formula. It needs the engine's index (`--index`).

use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::ffi::CStr;
use swex_plugin::text::identifiers::{Digits, identifier_parts};
use swex_plugin::text::stopwords::StopList;
use swex_plugin::types::{SearchArgs, SearchHit};
use swex_plugin::{
    Explorer, ExplorerError, Region, Request, Response, ServiceError, Services, parse_config,
};
use swex_rankkit::{Ranked, select_regions_within};

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TfidfConfig {
    /// Chunks asked from the lexical index and reranked.
    pub candidates: usize,
}

impl Default for TfidfConfig {
    fn default() -> Self {
        TfidfConfig { candidates: 200 }
    }
}

pub struct Tfidf {
    config: TfidfConfig,
}

/// Code-aware tokens of a text: every identifier-like run (letters, digits, `_`), lower-cased,
/// whole and, when compound, split into its `_`/camelCase/digit parts; one- and pure-digit
/// tokens and stop words are dropped.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
    {
        // Digits apart: `handler2` shares the term `handler` with `handler`.
        let parts = identifier_parts(word, Digits::Separate);
        let whole = word.to_lowercase();
        let compound = parts.len() > 1;
        if keep(&whole) {
            out.push(whole);
        }
        if compound {
            out.extend(parts.into_iter().filter(|p| keep(p)));
        }
    }
    out
}

fn keep(token: &str) -> bool {
    token.chars().count() >= 2
        && !token.chars().all(|c| c.is_ascii_digit())
        // English and code words frequent everywhere only add noise to cosines.
        && !StopList::TermWeighting.contains(token)
}

/// Sublinear term frequencies of a token list, in token order: sums over them (norms, dot
/// products) then add in one order, so equal documents get equal scores to the last bit, in every
/// process (a hash map's order differs from map to map).
fn term_frequencies(tokens: &[String]) -> BTreeMap<&str, f64> {
    let mut counts: BTreeMap<&str, f64> = BTreeMap::new();
    for token in tokens {
        *counts.entry(token.as_str()).or_default() += 1.0;
    }
    for count in counts.values_mut() {
        *count = 1.0 + count.ln();
    }
    counts
}

/// Cosine similarity of `query` to each document under TF-IDF with sublinear tf and smoothed
/// idf computed over `documents`.
pub fn cosine_scores(query: &[String], documents: &[Vec<String>]) -> Vec<f64> {
    let n = documents.len() as f64;
    let frequencies: Vec<BTreeMap<&str, f64>> =
        documents.iter().map(|d| term_frequencies(d)).collect();
    let mut document_frequency: HashMap<&str, f64> = HashMap::new();
    for tf in &frequencies {
        for &term in tf.keys() {
            *document_frequency.entry(term).or_default() += 1.0;
        }
    }
    let idf = |term: &str| {
        let df = document_frequency.get(term).copied().unwrap_or(0.0);
        ((1.0 + n) / (1.0 + df)).ln() + 1.0
    };
    let query_tf = term_frequencies(query);
    let query_vector: BTreeMap<&str, f64> = query_tf
        .iter()
        .map(|(&term, &tf)| (term, tf * idf(term)))
        .collect();
    let query_norm = query_vector.values().map(|w| w * w).sum::<f64>().sqrt();
    frequencies
        .iter()
        .map(|tf| {
            let mut dot = 0.0;
            let mut norm = 0.0;
            for (&term, &weight) in tf {
                let w = weight * idf(term);
                norm += w * w;
                if let Some(q) = query_vector.get(term) {
                    dot += w * q;
                }
            }
            if dot == 0.0 || norm == 0.0 || query_norm == 0.0 {
                0.0
            } else {
                dot / (norm.sqrt() * query_norm)
            }
        })
        .collect()
}

/// Regions from scored chunks, best first, within the line budget
/// ([`swex_rankkit::select_regions_within`]): a chunk that
/// overlaps, touches, or is apart only by lines `blank` calls blank from an earlier region of its
/// file widens it instead of taking a place.
pub fn merge(
    ranked: &[(&SearchHit, f64)],
    top_k: usize,
    line_budget: Option<u64>,
    blank: &mut dyn FnMut(&str, i64, i64) -> bool,
) -> Vec<Region> {
    let ranked: Vec<Ranked> = ranked
        .iter()
        .map(|(hit, score)| {
            let why = format!(
                "TF-IDF cosine {score:.3}: {} {}",
                hit.kind.as_deref().unwrap_or("chunk"),
                hit.name.as_deref().unwrap_or("")
            );
            Ranked {
                why: why.trim_end().to_owned(),
                ..Ranked::new(hit.path.clone(), hit.start.into(), hit.end.into(), *score)
            }
        })
        .collect();
    select_regions_within(&ranked, top_k, None, line_budget, blank)
}

fn needs_index(error: ServiceError) -> ExplorerError {
    if error.is_unavailable() {
        ExplorerError::failed(format!(
            "tfidf needs the engine's lexical index ({error}); serve it from the index: `swex explore` without `--no-index`, or `swex bench --index`"
        ))
    } else {
        error.into()
    }
}

impl Explorer for Tfidf {
    const NAME: &'static CStr = c"tfidf";
    const DESCRIPTION: &'static CStr = c"TF-IDF cosine (sublinear tf, code-aware tokens) over the engine's lexical candidates (needs the engine's index)";

    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError> {
        let config: TfidfConfig = parse_config(config)?;
        if config.candidates == 0 {
            return Err(ExplorerError::InvalidConfig(
                "candidates must be positive".to_owned(),
            ));
        }
        Ok(Tfidf { config })
    }

    fn explore(
        &self,
        request: &Request,
        services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        let hits = services
            .lexical_search(&SearchArgs::new(
                &request.issue,
                self.config.candidates.max(request.top_k),
            ))
            .map_err(needs_index)?;
        // One read per file.
        let mut files: HashMap<&str, Vec<String>> = HashMap::new();
        for hit in &hits {
            if !files.contains_key(hit.path.as_str()) {
                let lines = services.read_file_lines(&hit.path).map_err(needs_index)?;
                files.insert(&hit.path, lines);
            }
        }
        let documents: Vec<Vec<String>> = hits
            .iter()
            .map(|hit| {
                let lines = &files[hit.path.as_str()];
                let from = (hit.start.max(1) as usize - 1).min(lines.len());
                let to = (hit.end as usize).clamp(from, lines.len());
                let mut document = tokens(&hit.path);
                if let Some(name) = &hit.name {
                    document.extend(tokens(name));
                }
                for line in &lines[from..to] {
                    document.extend(tokens(line));
                }
                document
            })
            .collect();
        let scores = cosine_scores(&tokens(&request.issue), &documents);
        let mut ranked: Vec<(&SearchHit, f64)> = hits.iter().zip(scores).collect();
        // Stable: equal cosines keep BM25's order.
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        // The files are read already: blank lines between chunks come from them.
        let mut blank = |path: &str, from: i64, to: i64| {
            from >= 1
                && from <= to
                && files.get(path).is_some_and(|lines| {
                    lines
                        .get(from as usize - 1..to as usize)
                        .is_some_and(|span| span.iter().all(|line| line.trim().is_empty()))
                })
        };
        Ok(Response::new(merge(
            &ranked,
            request.top_k,
            request.line_budget,
            &mut blank,
        )))
    }
}

swex_plugin::export_vtable!(Tfidf);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_aware_tokens() {
        let check = |text: &str, expected: &[&str]| {
            assert_eq!(tokens(text), expected, "{text:?}");
        };
        check(
            "QuerySet.bulk_create()",
            &["queryset", "query", "set", "bulk_create", "bulk", "create"],
        );
        check(
            "getHTTPResponse2",
            &["gethttpresponse2", "get", "http", "response"],
        );
        check("the x of 42 is a", &[]);
        check("django/db/models", &["django", "db", "models"]);
    }

    #[test]
    fn cosine_prefers_rare_shared_terms() {
        let doc = |s: &str| tokens(s);
        let documents = [
            doc("def save(self): write the model"),
            doc("def bulk_create(objs, batch_size): insert many"),
            doc("def save_base(self): write base model"),
        ];
        let scores = cosine_scores(&tokens("bulk_create ignores batch_size"), &documents);
        assert!(
            scores[1] > 0.3 && scores[0] == 0.0 && scores[2] == 0.0,
            "{scores:?}"
        );
        // Identical texts score 1.
        let same = cosine_scores(
            &tokens("alpha beta"),
            &[tokens("alpha beta"), tokens("gamma")],
        );
        assert!((same[0] - 1.0).abs() < 1e-12 && same[1] == 0.0, "{same:?}");
    }

    /// Equal documents score exactly alike, wherever they stand among the others: a cosine is
    /// summed in one order (the tokens' own), not in a hash map's, which differs from map to map
    /// and from process to process and would break ties by chance instead of by BM25 order.
    #[test]
    fn equal_documents_score_bit_for_bit_alike() {
        let text: String = (0..60)
            .map(|i| format!("word{i} ").repeat(1 + i % 7))
            .collect();
        let query = tokens(&format!("{text} other words"));
        let document = tokens(&text);
        let mut documents = vec![tokens("unrelated text"); 3];
        documents.extend(std::iter::repeat_n(document, 40));
        let scores = cosine_scores(&query, &documents);
        let first = scores[3];
        assert!(first > 0.0);
        for (i, score) in scores[3..].iter().enumerate() {
            assert_eq!(score.to_bits(), first.to_bits(), "document {}", i + 3);
        }
    }

    #[test]
    fn merging_keeps_rank_order_and_widens() {
        let hit = |path: &str, start, end| SearchHit::new(path, start, end, 0.0);
        let hits = [
            hit("a.py", 10, 20),
            hit("b.py", 1, 5),
            hit("a.py", 21, 30),
            hit("c.py", 1, 2),
        ];
        let ranked: Vec<(&SearchHit, f64)> = hits.iter().zip([0.9, 0.8, 0.7, 0.6]).collect();
        let got: Vec<(String, i64, i64)> = merge(&ranked, 2, None, &mut |_, _, _| false)
            .into_iter()
            .map(|r| (r.path, r.start, r.end))
            .collect();
        assert_eq!(got, [("a.py".into(), 10, 30), ("b.py".into(), 1, 5)]);
    }
}
