//! The `tfidf-ref` explorer: a faithful copy of the SWE-Explore reference TF-IDF baseline
//! (scikit-learn's `TfidfVectorizer` + cosine similarity over the reference's line windows).
//!
//! Pipeline, per request:
//! 1. the same windows as `bm25-ref` ([`swex_refkit::window_corpus`]: reference source policy,
//!    80/20 windows, first 3000);
//! 2. analysis as scikit-learn's word analyzer with `lowercase=True`, token pattern
//!    `(?u)\b[A-Za-z_][A-Za-z0-9_]{1,}\b` and the English stop words ([`tokenize`]); each line
//!    analysed once (no token spans a line), terms interned to ids in first-seen order, a
//!    byte scanner for ASCII lines;
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

use rustc_hash::FxHashMap;
use serde::Deserialize;
use std::collections::HashSet;
use std::ffi::CStr;
use swex_plugin::{Explorer, ExplorerError, Request, Response, Services, parse_config};
use swex_refkit::{SourcePolicy, TermRows, WindowedCorpus, Windowing, window_corpus};

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

fn is_ascii_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Calls `found` with every token of scikit-learn's analysis before the stop-word filter:
/// lowercase, then the maximal runs of word characters that are ASCII identifiers of two
/// characters or more. `lowered` is scratch space, so that ASCII text costs no allocation.
fn scan_tokens(text: &str, lowered: &mut String, mut found: impl FnMut(&str)) {
    if text.is_ascii() {
        // ASCII lowercases to ASCII byte for byte, and only ASCII bytes are word characters.
        let bytes = text.as_bytes();
        let mut index = 0;
        while index < bytes.len() {
            if !is_ascii_word(bytes[index]) {
                index += 1;
                continue;
            }
            let start = index;
            while index < bytes.len() && is_ascii_word(bytes[index]) {
                index += 1;
            }
            let run = &text[start..index];
            if run.len() >= 2 && !bytes[start].is_ascii_digit() {
                if run.bytes().any(|b| b.is_ascii_uppercase()) {
                    lowered.clear();
                    lowered.push_str(run);
                    lowered.make_ascii_lowercase();
                    found(lowered);
                } else {
                    found(run);
                }
            }
        }
        return;
    }
    // Other text: lowercasing may change lengths and characters (`K` → `k`, `İ` → `i̇`), and
    // any non-ASCII word character joins a run that is then no identifier.
    let lower = text.to_lowercase();
    let mut run_start: Option<usize> = None;
    let mut push_run = |run: &str| {
        let bytes = run.as_bytes();
        let identifier = bytes.len() >= 2
            && (bytes[0].is_ascii_alphabetic() || bytes[0] == b'_')
            && bytes.iter().all(|b| is_ascii_word(*b));
        if identifier {
            found(run);
        }
    };
    for (index, c) in lower.char_indices() {
        match (is_word(c), run_start) {
            (true, None) => run_start = Some(index),
            (false, Some(start)) => {
                push_run(&lower[start..index]);
                run_start = None;
            }
            _ => {}
        }
    }
    if let Some(start) = run_start {
        push_run(&lower[start..]);
    }
}

/// scikit-learn's analysis: lowercase, then the maximal runs of word characters that are
/// ASCII identifiers of two characters or more, minus the stop words.
pub fn tokenize(text: &str, stop_words: &HashSet<&str>, out: &mut Vec<String>) {
    let mut lowered = String::new();
    scan_tokens(text, &mut lowered, |token| {
        if !stop_words.contains(token) {
            out.push(token.to_owned());
        }
    });
}

/// The id of a stop word in [`Terms`]: analysed, never counted.
const STOP_WORD: u32 = u32::MAX;

/// Analysed terms as ids in first-seen order; the stop words are known from the start, so one
/// lookup both filters and interns a token.
struct Terms {
    ids: FxHashMap<String, u32>,
    /// How many terms (stop words apart) have ids: `0..len`.
    len: usize,
    lowered: String,
}

impl Terms {
    fn new() -> Terms {
        // A corpus of 3000 windows has tens of thousands of distinct terms: start big rather
        // than rehash a dozen times.
        let mut ids = FxHashMap::with_capacity_and_hasher(1 << 15, Default::default());
        for word in ENGLISH_STOP_WORDS {
            ids.insert((*word).to_owned(), STOP_WORD);
        }
        Terms {
            ids,
            len: 0,
            lowered: String::new(),
        }
    }

    /// Appends the ids of the text's terms, new terms getting the next ids.
    fn intern(&mut self, text: &str, out: &mut Vec<u32>) {
        let Terms { ids, len, lowered } = self;
        scan_tokens(text, lowered, |token| {
            let id = match ids.get(token) {
                Some(id) => *id,
                None => {
                    let id = *len as u32;
                    *len += 1;
                    ids.insert(token.to_owned(), id);
                    id
                }
            };
            if id != STOP_WORD {
                out.push(id);
            }
        });
    }

    /// The ids of the text's known terms (unknown ones and stop words left out).
    fn lookup(&self, text: &str, out: &mut Vec<u32>) {
        let mut lowered = String::new();
        scan_tokens(text, &mut lowered, |token| {
            if let Some(&id) = self.ids.get(token)
                && id != STOP_WORD
            {
                out.push(id);
            }
        });
    }
}

/// A fitted TF-IDF model over a corpus of documents.
pub struct TfidfModel {
    terms: Terms,
    /// Per term id: its column (alphabetical index among the kept terms), `usize::MAX` when cut.
    column: Vec<usize>,
    /// Per term id (0 when cut).
    idf: Vec<f64>,
    /// Each document's terms with counts, in term id order (the order of scikit-learn's CSR rows).
    rows: TermRows,
    /// Per row entry (aligned with `rows.entries`): its normalised weight, 0 when cut.
    weights: Vec<f64>,
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
        let mut terms = Terms::new();
        let mut rows = TermRows::default();
        let mut ids = Vec::new();
        for document in documents {
            ids.clear();
            terms.intern(document, &mut ids);
            rows.add_sorted(&ids);
        }
        TfidfModel::from_rows(terms, rows, max_features)
    }

    /// Fits on the corpus windows, analysing each line once (tokens never span lines, so a
    /// window's terms are its lines' terms).
    pub fn fit_windows(corpus: &WindowedCorpus, max_features: Option<usize>) -> Option<TfidfModel> {
        let mut terms = Terms::new();
        let mut rows = TermRows::default();
        corpus.for_each_window_tokens(
            |line, ids| terms.intern(line, ids),
            |_, ids| rows.add_sorted(ids),
        );
        TfidfModel::from_rows(terms, rows, max_features)
    }

    /// Term ids come in first-seen order, and every id occurs in some row.
    fn from_rows(terms: Terms, rows: TermRows, max_features: Option<usize>) -> Option<TfidfModel> {
        if terms.len == 0 {
            return None;
        }
        let mut names = vec![""; terms.len];
        for (name, &id) in &terms.ids {
            if id != STOP_WORD {
                names[id as usize] = name.as_str();
            }
        }
        let mut total = vec![0u64; names.len()];
        let mut df = vec![0u64; names.len()];
        for &(id, count) in rows.entries() {
            total[id as usize] += count as u64;
            df[id as usize] += 1;
        }
        // Alphabetical order of all terms, then the kept ones.
        let mut alphabetical: Vec<usize> = (0..names.len()).collect();
        alphabetical.sort_unstable_by(|a, b| names[*a].cmp(names[*b]));
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
        let n = rows.documents() as f64;
        let mut column = vec![usize::MAX; names.len()];
        let mut idf = vec![0.0; names.len()];
        for (kept_index, id) in alphabetical.into_iter().filter(|id| kept[*id]).enumerate() {
            column[id] = kept_index;
            idf[id] = ((1.0 + n) / (1.0 + df[id] as f64)).ln() + 1.0;
        }
        let mut weights = vec![0.0; rows.entries().len()];
        let mut row_weights = Vec::new();
        for document in 0..rows.documents() {
            let range = rows.range(document);
            row_weights.clear();
            row_weights.extend(
                rows.entries()[range.clone()]
                    .iter()
                    .filter(|(id, _)| kept[*id as usize])
                    .map(|&(id, count)| ((count as f64).ln() + 1.0) * idf[id as usize]),
            );
            normalize(&mut row_weights); // TfidfTransformer's norm="l2"
            normalize(&mut row_weights); // cosine_similarity normalises its inputs again
            let mut normalized = row_weights.iter();
            for (entry, weight) in rows.entries()[range.clone()]
                .iter()
                .zip(&mut weights[range])
            {
                if kept[entry.0 as usize] {
                    *weight = *normalized.next().expect("one weight per kept entry");
                }
            }
        }
        Some(TfidfModel {
            terms,
            column,
            idf,
            rows,
            weights,
        })
    }

    /// Cosine similarity of the query with every document.
    pub fn scores(&self, query: &str) -> Vec<f64> {
        let mut ids = Vec::new();
        self.terms.lookup(query, &mut ids);
        // Query terms by column with counts: the query's CSR row.
        let mut entries: Vec<(usize, u32, u32)> = Vec::new();
        ids.sort_unstable_by_key(|id| self.column[*id as usize]);
        for id in ids {
            let column = self.column[id as usize];
            if column == usize::MAX {
                continue;
            }
            match entries.last_mut() {
                Some(last) if last.0 == column => last.2 += 1,
                _ => entries.push((column, id, 1)),
            }
        }
        let mut weights: Vec<f64> = entries
            .iter()
            .map(|&(_, id, count)| ((count as f64).ln() + 1.0) * self.idf[id as usize])
            .collect();
        normalize(&mut weights);
        normalize(&mut weights);
        // Per document, the products are added in column order, as the sparse product does.
        let mut document_weight = vec![0.0f64; self.terms.len];
        let mut scores = vec![0.0f64; self.rows.documents()];
        for (document, score) in scores.iter_mut().enumerate() {
            let range = self.rows.range(document);
            for (entry, weight) in self.rows.entries()[range.clone()]
                .iter()
                .zip(&self.weights[range.clone()])
            {
                document_weight[entry.0 as usize] = *weight;
            }
            for (&(_, id, _), weight) in entries.iter().zip(&weights) {
                let document_weight = document_weight[id as usize];
                // Kept entries have positive weights; 0 means the term is not in the document.
                if document_weight != 0.0 {
                    *score += weight * document_weight;
                }
            }
            for entry in &self.rows.entries()[range] {
                document_weight[entry.0 as usize] = 0.0;
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
        let corpus = window_corpus(services, &self.policy, &self.windowing)?;
        if !corpus.unreadable.is_empty() {
            response.notes.push(format!(
                "{} source files could not be read and were skipped (first: {})",
                corpus.unreadable.len(),
                corpus.unreadable[0]
            ));
        }
        let Some(model) = TfidfModel::fit_windows(&corpus, self.max_features) else {
            response
                .notes
                .push("no indexable terms in this snapshot's source windows".to_owned());
            return Ok(response);
        };
        let scores = model.scores(&request.issue);
        for index in rank(&scores, request.top_k) {
            response.regions.push(
                corpus
                    .region(index)
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

    /// The byte scanner of ASCII lines agrees with the general path (the same text with a
    /// non-ASCII character appended, away from any token).
    #[test]
    fn ascii_scanner_agrees_with_unicode_path() {
        for text in [
            "def parse_URL(self): return self.x1",
            "A 1abc _x __init__ 9 ab HTTPError x2Y",
            "  __ _a 12 a1 Zz  ",
            "snake_case CamelCase SCREAMING_CASE 3d_point",
        ] {
            let ascii: Vec<String> = {
                let mut out = Vec::new();
                scan_tokens(text, &mut String::new(), |t| out.push(t.to_owned()));
                out
            };
            let unicode: Vec<String> = {
                let mut out = Vec::new();
                scan_tokens(&format!("{text} é"), &mut String::new(), |t| {
                    out.push(t.to_owned())
                });
                out
            };
            assert_eq!(ascii, unicode, "{text:?}");
        }
    }

    /// Fitting on windows that share lines gives the scores of fitting on the joined window texts,
    /// bit for bit.
    #[test]
    fn window_fit_equals_fit_on_joined_text() {
        let lines = [
            "def parse_url(self, url):",
            "    return urlparse(url).netloc",
            "",
            "class UrlParser:  # Ünïcode here",
            "    def parse(self, text): return text.split('/')",
            "README: the url parser handles http and https urls",
            "tables tables Tables database",
        ];
        let corpus = WindowedCorpus::one_file(
            "a.py",
            &lines,
            &[(1, 3), (2, 4), (3, 5), (4, 6), (5, 7), (7, 7)],
        );
        let joined = corpus.texts();
        let query = "parse_url returns the wrong netloc for HTTPS urls in tables";
        for max_features in [None, Some(5)] {
            let by_window = TfidfModel::fit_windows(&corpus, max_features).unwrap();
            let by_text = TfidfModel::fit(&joined, max_features).unwrap();
            let bits = |scores: Vec<f64>| scores.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(by_window.scores(query)),
                bits(by_text.scores(query)),
                "max_features {max_features:?}"
            );
        }
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
