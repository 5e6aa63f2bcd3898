//! Code search for people and agents: a ranking stage over the engine's candidates, answering
//! short queries (`HttpClient`, `where is the retry backoff computed?`, `how are middlewares
//! ordered?`) with definition-level spans, one per file unless asked otherwise.
//!
//! [`SnapshotIndex::search`] does, per query:
//! 1. **Analyse** the query ([`query`]): its kind (symbol, semantic, architecture), its terms and
//!    how code-like each is, whether it asks for tests or docs.
//! 2. **Gather candidates**: BM25 chunks of the query's words ([`crate::lexical`]); the
//!    definitions named like a query term (case-insensitively, from a name table built once per
//!    snapshot); files whose name or folder repeats the query's words; and, when the embedding
//!    model is installed and [`DenseUse`] allows it, the dense hits of the query.
//! 3. **Score files** (the `rank` module): a weighted sum of the file's lexical score (its best chunk and,
//!    less, its other matching chunks), its symbol score (a definition of a query term: type-like
//!    definitions above functions, whole-query symbols above embedded ones, more when the file is
//!    named after it), its path score (the share of query words its name and folder repeat) and
//!    its dense score; tests, docs, examples, vendored and generated files are demoted unless the
//!    query asks for them ([`paths`]).
//! 4. **Pick spans**: per file the definition that matched (its head when it is longer than 200
//!    lines: a hit is where to start reading), else its best chunk; files in score order, at most
//!    [`SearchOptions::per_file`] spans each.
//! 5. **Never answer nothing for a name that exists**: when nothing matched, a word-boundary grep
//!    of the query's terms gives the files that mention them.
//!
//! The weights are one [`RankConfig`] for every repository and language (tuned on the
//! code-search benchmark as a whole, see `docs/codesearch.md`); every hit says which signals put
//! it there ([`SearchHit::signals`]).
//!
//! This module knows the index's public API only; it knows nothing about explorers, the services
//! wire format or benchmarks.

pub mod paths;
pub mod query;
mod rank;

use crate::analysis::ChunkKind;
use crate::index::{IndexError, SearchFilters, SnapshotIndex};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

pub use query::{QueryInfo, QueryKind, Term, TermShape, analyze_query};

/// Whether search fuses dense (embedding) scores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DenseUse {
    /// When the model is installed: the snapshot's full dense index if it has one, else the
    /// lexical candidates reranked; without the model, lexical only (no error).
    #[default]
    Auto,
    /// Lexical only.
    Off,
    /// Dense required: an error when the model is missing.
    On,
}

/// The ranking's weights and limits. One configuration serves every repository; the defaults are
/// the tuned values (`docs/codesearch.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankConfig {
    /// BM25 chunk candidates gathered.
    pub lexical_candidates: usize,
    /// Weight of the file's lexical score (its best chunk's BM25, normalised by the query's best).
    pub lexical: f32,
    /// Share of the file's further matching chunks (2nd.. 5th best, normalised) added to its
    /// lexical score.
    pub coherence: f32,
    /// Weight of the file's own BM25 score: the query's tokens counted over the whole file, with
    /// file-level document frequencies and the file's line count as its length (normalised by
    /// the query's best file). Finds the central file a description is about.
    pub file_lexical: f32,
    /// BM25's `k1` and `b` of the file-level score.
    pub file_k1: f32,
    pub file_b: f32,
    /// Weight of vocabulary expansions of a query word (`composition` → `compose`), relative to
    /// the word.
    pub expansion: f32,
    /// Weight of a definition of the queried symbol (symbol queries).
    pub symbol: f32,
    /// Weight of a definition named like a term of a longer query.
    pub embedded_symbol: f32,
    /// Multiplier of a symbol match in a file named after the symbol (`HttpClient` in
    /// `http_client.py`).
    pub symbol_stem: f32,
    /// Weight of the share of query words the file's name and folder repeat.
    pub path: f32,
    /// Shortest common prefix for a query word to match a path word (`route` ↔ `router`).
    pub path_min_prefix: usize,
    /// Weight of the dense score (best chunk's cosine, normalised) when dense search is used.
    pub dense: f32,
    /// Dense candidates gathered.
    pub dense_candidates: usize,
    /// Multiplier of test files' scores (unless the query asks for tests).
    pub test_penalty: f32,
    /// Multiplier of documentation files' scores (unless the query asks for docs).
    pub docs_penalty: f32,
    /// Multiplier of examples, vendored and generated files.
    pub example_penalty: f32,
    /// Multiplier of `.d.ts` stubs and re-export barrels (`__init__.py`).
    pub stub_penalty: f32,
    /// Weight of whole identifiers' sub-words in the BM25 query, relative to the identifier.
    pub subword_weight: f32,
    /// Weight of a query term by shape in symbol matching: lowercase words, capitalised words
    /// (code-like terms weigh 1).
    pub word_symbol_weight: f32,
    pub capitalised_symbol_weight: f32,
    /// Multiplier of a definition found only case-insensitively.
    pub case_mismatch: f32,
    /// Multipliers of function/method and of constant/alias definitions relative to type-like
    /// ones (classes, structs, interfaces, traits, modules).
    pub function_kind: f32,
    pub constant_kind: f32,
}

impl Default for RankConfig {
    /// Tuned on the code-search benchmark's 24 repositories as a whole (coordinate descent from
    /// hand-set weights; `docs/codesearch.md` gives the cross-validated score).
    fn default() -> Self {
        RankConfig {
            lexical_candidates: 300,
            lexical: 0.5,
            coherence: 0.53,
            file_lexical: 0.6,
            file_k1: crate::index::FILE_BM25_K1,
            file_b: crate::index::FILE_BM25_B,
            expansion: 0.5,
            symbol: 3.54,
            embedded_symbol: 0.3,
            symbol_stem: 2.99,
            path: 1.35,
            path_min_prefix: 4,
            dense: 0.6,
            dense_candidates: 100,
            test_penalty: 0.62,
            docs_penalty: 0.25,
            example_penalty: 0.35,
            stub_penalty: 0.6,
            subword_weight: 2.0,
            word_symbol_weight: 0.235,
            capitalised_symbol_weight: 1.33,
            case_mismatch: 0.93,
            function_kind: 0.4,
            constant_kind: 0.9,
        }
    }
}

/// One search.
#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// Hits wanted.
    pub limit: usize,
    /// Spans per file (1: one best span per file).
    pub per_file: usize,
    pub filters: SearchFilters,
    pub dense: DenseUse,
    /// Demote tests, docs, examples, vendored and generated files even when the query names them
    /// (`Some(true)`), never (`Some(false)`), or unless the query asks for them (`None`).
    pub demote: Option<bool>,
    pub config: RankConfig,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            limit: 10,
            per_file: 1,
            filters: SearchFilters::default(),
            dense: DenseUse::Auto,
            demote: None,
            config: RankConfig::default(),
        }
    }
}

/// Which signals put a hit where it is.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Signals {
    pub lexical: f32,
    pub symbol: f32,
    pub path: f32,
    pub dense: f32,
    /// The role multiplier applied (1 for ordinary source files).
    pub role: f32,
}

/// One ranked span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub kind: ChunkKind,
    /// The definition's or chunk's qualified name.
    pub name: Option<String>,
    pub score: f32,
    pub signals: Signals,
}

/// The hits of one search and how they were found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResults {
    pub kind: QueryKind,
    pub hits: Vec<SearchHit>,
    /// Whether dense scores were fused (`false`: lexical only, e.g. without the model).
    pub dense: bool,
    /// Why dense search was not used, when [`DenseUse::Auto`] fell back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dense_note: Option<String>,
    /// Whether the answer came from the grep fallback.
    pub grep_fallback: bool,
}

/// Per-snapshot tables the ranking needs, built on the first search.
pub(crate) struct SearchAids {
    /// Per file (index order): its path words and role.
    pub(crate) files: Vec<FileAid>,
    /// Mean line count of the files (the file-level BM25's average length).
    pub(crate) mean_lines: f32,
    /// Lowercased bare definition name → (file, definition) indexes.
    pub(crate) names: HashMap<String, Vec<(u32, u32)>>,
}

pub(crate) struct FileAid {
    pub(crate) words: Vec<String>,
    pub(crate) stem: String,
    pub(crate) role: paths::PathRole,
}

impl SearchAids {
    pub(crate) fn build(index: &SnapshotIndex) -> SearchAids {
        let mut names: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        let bundled =
            swex_text::paths::BundledLibraries::find(index.files().iter().map(|f| f.path.as_str()));
        let files = index
            .files()
            .iter()
            .enumerate()
            .map(|(file, info)| {
                if let Some(analysis) = index.analysis(&info.path) {
                    for (d, definition) in analysis.definitions.iter().enumerate() {
                        names
                            .entry(definition.name.to_lowercase())
                            .or_default()
                            .push((file as u32, d as u32));
                    }
                }
                let mut role = paths::path_role(&info.path);
                role.vendored |= bundled.holds(&info.path);
                FileAid {
                    words: paths::path_words(&info.path),
                    stem: paths::normalized_stem(&info.path),
                    role,
                }
            })
            .collect();
        SearchAids {
            files,
            names,
            mean_lines: index.mean_lines(),
        }
    }
}

impl SnapshotIndex {
    /// Ranked code search (see the [module docs](self)).
    pub fn search(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<SearchResults, IndexError> {
        rank::search(self, query, options)
    }
}
