//! Dense search over a snapshot's chunks: the snapshot side of [`crate::dense`].
//!
//! Every non-blank chunk is embedded as [`crate::dense::passage_text`] (path, qualified name,
//! body). Its vector is cached under a key derived from the engine's chunk key
//! ([`SnapshotIndex::chunk_key`], a content key that survives across snapshots), so the snapshots
//! of a repository share vectors, and whether a chunk is embedded is known without reading or
//! hashing its text.
//!
//! Two ways to search, because embedding a whole repository is slow on small machines (tens of
//! chunks per second; a django snapshot has ~48k chunks):
//! - **full index**: every chunk has a cached vector (after [`SnapshotIndex::build_dense`], e.g.
//!   `swex index --dense`); the query is compared with all of them ([`DenseIndex`]: exact below
//!   [`DenseConfig::index`]'s threshold; above it `build_dense` also builds an HNSW graph and
//!   stores it in `<embedding cache>/graphs` ([`GraphStore`]), and later opens of a snapshot with
//!   the same vectors load it once exact searches have cost about as much as loading; a snapshot
//!   whose graph was never built searches exactly, since a build takes minutes and an exact
//!   search milliseconds);
//! - **rerank**: only given candidates are embedded (cache first) and ordered by similarity: by
//!   default the top lexical hits of the same query, or the chunks of regions the caller names.
//!
//! [`DenseMode::Auto`] (the default) uses the full index when every chunk of the snapshot has a
//! vector, rerank otherwise. The model and the embedding cache are opened on the first dense call
//! of an [`super::Engine`] and shared by all its snapshots; without the model or the ONNX Runtime,
//! dense calls fail with [`IndexError::Dense`] holding an absence error
//! ([`crate::dense::DenseError::is_absent`]) that names `swex models fetch`, and nothing else in
//! the index is affected.
//!
//! What this module does not know: explorers, the services wire format, the benchmark.

use super::{ChunkHit, IndexError, Progress, SearchFilters, SnapshotIndex, Stage};
use crate::dense::graph_store::DEFAULT_MAX_GRAPHS;
use crate::dense::{
    DenseError, DenseIndex, EmbedCounts, Embedder, EmbedderConfig, EmbeddingCache, GraphState,
    GraphStore, IndexOptions, TextKey, TextUnit, passage_text,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// Lexical candidates reranked by default when there is no full index.
pub const DEFAULT_RERANK_CANDIDATES: usize = 100;

/// Chunks whose texts are built and embedded together while building a full index: bounds the
/// memory of texts, and a crash loses at most this much work (the cache persists as it goes).
const BUILD_ROUND: usize = 2048;

/// How dense search finds its hits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DenseMode {
    /// The full index when every chunk of the snapshot is embedded, else rerank.
    #[default]
    Auto,
    /// The full index; an error ([`IndexError::DenseNotBuilt`]) when chunks lack vectors.
    Full,
    /// Rerank candidates: the top lexical hits, or the chunks of given regions.
    Rerank,
}

impl DenseMode {
    pub fn as_str(self) -> &'static str {
        match self {
            DenseMode::Auto => "auto",
            DenseMode::Full => "full",
            DenseMode::Rerank => "rerank",
        }
    }
}

impl std::str::FromStr for DenseMode {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "auto" => Ok(DenseMode::Auto),
            "full" => Ok(DenseMode::Full),
            "rerank" => Ok(DenseMode::Rerank),
            _ => Err(format!(
                "dense mode `{text}`: expected `auto`, `full` or `rerank`"
            )),
        }
    }
}

/// The dense layer's options (part of [`super::EngineConfig`]).
#[derive(Debug, Clone)]
pub struct DenseConfig {
    /// Root of the embedding cache (`<root>/embeddings`); `None` uses the engine's cache
    /// directory.
    pub cache_root: Option<PathBuf>,
    /// Root of the model assets (`<root>/models`, where `swex models fetch --cache-dir <root>`
    /// puts them). `None`: the embedding cache's root, and when the model is not there, the
    /// default cache root (`$SWEX_CACHE_DIR`, else the user cache directory's `swex/`), so that
    /// models fetched once serve engines with any cache directory.
    pub models_root: Option<PathBuf>,
    pub embedder: EmbedderConfig,
    /// What of a chunk is embedded.
    pub text_unit: TextUnit,
    /// Exact search below `index.exact_below` chunks, HNSW above.
    pub index: IndexOptions,
    /// Lexical candidates reranked when a query does not say how many.
    pub rerank_candidates: usize,
    /// HNSW graphs kept in `<embedding cache>/graphs` (least recently used dropped first).
    pub max_stored_graphs: usize,
}

impl Default for DenseConfig {
    fn default() -> Self {
        DenseConfig {
            cache_root: None,
            models_root: None,
            embedder: EmbedderConfig::default(),
            text_unit: TextUnit::Full,
            index: IndexOptions::default(),
            rerank_candidates: DEFAULT_RERANK_CANDIDATES,
            max_stored_graphs: DEFAULT_MAX_GRAPHS,
        }
    }
}

/// A part of a file whose chunks are rerank candidates; `end = None` runs to the end of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CandidateRegion {
    pub path: String,
    pub start: u32,
    pub end: Option<u32>,
}

/// One dense query.
#[derive(Debug, Clone, Default)]
pub struct DenseQuery {
    /// The query text (an issue, a phrase); truncated to the model's token cap.
    pub text: String,
    /// Hits wanted.
    pub limit: usize,
    pub mode: DenseMode,
    pub filters: SearchFilters,
    /// Rerank: how many lexical candidates ([`DenseConfig::rerank_candidates`] when `None`).
    pub candidates: Option<usize>,
    /// Rerank these regions' chunks instead of lexical candidates (implies rerank mode).
    pub regions: Vec<CandidateRegion>,
}

impl DenseQuery {
    pub fn new(text: impl Into<String>, limit: usize) -> DenseQuery {
        DenseQuery {
            text: text.into(),
            limit,
            ..DenseQuery::default()
        }
    }
}

/// What a dense query found and how.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseResult {
    /// Best first; `score` is the cosine similarity to the query.
    pub hits: Vec<ChunkHit>,
    /// [`DenseMode::Full`] or [`DenseMode::Rerank`]: how the hits were found.
    pub mode: DenseMode,
    /// Chunks scored (all embedded chunks for the full index, the candidates for rerank).
    pub scored: usize,
    /// Candidate vectors that came from the cache and that had to be computed now.
    pub counts: EmbedCounts,
}

/// How much of a snapshot is embedded under the engine's model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DenseStatus {
    /// The model's identity key (name and fingerprint prefix).
    pub model: String,
    /// Non-blank chunks (blank ones are never embedded).
    pub chunks: usize,
    /// Those with a cached vector.
    pub embedded: usize,
}

impl DenseStatus {
    /// Whether the full index can be used.
    pub fn is_complete(&self) -> bool {
        self.embedded == self.chunks
    }
}

/// What [`SnapshotIndex::build_dense`] did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DenseBuildReport {
    pub model: String,
    pub chunks: usize,
    /// Vectors found in the cache.
    pub cached: usize,
    /// Vectors computed now.
    pub embedded: usize,
    /// `exact` or `hnsw`.
    pub search: String,
    /// The HNSW graph's state (see [`GraphState::describe`]).
    pub graph: String,
    pub embed_seconds: f64,
    /// Time to gather the vectors and build (or find) the vector index and its graph.
    pub index_seconds: f64,
}

/// The model and the embedding cache, opened once.
pub(crate) struct DenseModel {
    embedder: Embedder,
    cache: EmbeddingCache,
}

/// An engine's dense layer: configuration, and the model once a dense call has opened it.
pub(crate) struct DenseRuntime {
    root: PathBuf,
    config: DenseConfig,
    model: Mutex<Option<Arc<DenseModel>>>,
}

impl DenseRuntime {
    pub(crate) fn new(engine_cache_dir: &std::path::Path, config: &DenseConfig) -> DenseRuntime {
        DenseRuntime {
            root: config
                .cache_root
                .clone()
                .unwrap_or_else(|| engine_cache_dir.to_path_buf()),
            config: config.clone(),
            model: Mutex::new(None),
        }
    }

    /// The model and cache, opened on first use. A failure is not remembered: assets fetched
    /// while the process runs are picked up by the next call.
    fn model(&self) -> Result<Arc<DenseModel>, DenseError> {
        let mut slot = self.model.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(model) = &*slot {
            return Ok(model.clone());
        }
        let embedder = match &self.config.models_root {
            Some(models_root) => Embedder::open(models_root, &self.config.embedder)?,
            None => match Embedder::open(&self.root, &self.config.embedder) {
                Err(first) if first.is_absent() => {
                    let default = crate::dense::default_cache_root();
                    if default == self.root {
                        return Err(first);
                    }
                    match Embedder::open(&default, &self.config.embedder) {
                        Ok(embedder) => embedder,
                        // Absent in both: name the engine's own cache, which the user chose.
                        Err(second) if second.is_absent() => return Err(first),
                        Err(second) => return Err(second),
                    }
                }
                opened => opened?,
            },
        };
        let cache = EmbeddingCache::open(&self.root, embedder.identity())?;
        let model = Arc::new(DenseModel { embedder, cache });
        *slot = Some(model.clone());
        Ok(model)
    }

    /// The model's key ([`crate::dense::ModelIdentity::key`]), opening it if no call has yet.
    pub(crate) fn model_key(&self) -> Result<String, DenseError> {
        Ok(self.model()?.embedder.identity().key())
    }

    /// Seals what the model's embedding cache has written ([`EmbeddingCache::seal`]); nothing
    /// when no dense call opened the model.
    fn seal(&self) {
        let model = self.model.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(model) = model {
            model.cache.seal();
        }
    }

    /// The cache domain of chunk keys: the text unit changes the text, so it is part of the key.
    fn domain(&self) -> String {
        match self.config.text_unit {
            TextUnit::Full => "chunk/full".to_owned(),
            TextUnit::Head { lines } => format!("chunk/head:{lines}"),
        }
    }
}

/// A snapshot's dense state: the engine's runtime, the chunks' cache keys, the full index.
pub(crate) struct DenseSlot {
    runtime: Arc<DenseRuntime>,
    /// Non-blank chunk ids and their cache keys (the same for every call: one model per runtime).
    keys: OnceLock<(Vec<u32>, Vec<TextKey>)>,
    full: Mutex<Option<Arc<DenseIndex<u32>>>>,
}

impl DenseSlot {
    pub(crate) fn new(runtime: Arc<DenseRuntime>) -> DenseSlot {
        DenseSlot {
            runtime,
            keys: OnceLock::new(),
            full: Mutex::new(None),
        }
    }
}

impl SnapshotIndex {
    /// Ends `index` at the end of a one-shot process without freeing its memory: the embedding
    /// cache's segment is sealed (the one thing dropping it does beyond freeing), and the rest —
    /// tens of thousands of small allocations, which took a tenth of a one-shot `swex explore` to
    /// free one by one — is left to the operating system, which reclaims it at exit at once.
    /// Another holder of the index keeps it alive as usual.
    pub fn release_at_exit(index: Arc<SnapshotIndex>) {
        match Arc::try_unwrap(index) {
            Ok(index) => {
                index.dense.runtime.seal();
                std::mem::forget(index);
            }
            Err(shared) => drop(shared),
        }
    }

    fn dense_keys(&self, cache: &EmbeddingCache) -> &(Vec<u32>, Vec<TextKey>) {
        self.dense.keys.get_or_init(|| {
            let domain = self.dense.runtime.domain();
            (0..self.num_chunks())
                .filter_map(|id| {
                    let key = self.chunk_key(id)?;
                    Some((id, cache.derived_key(&domain, &key.to_le_bytes())))
                })
                .unzip()
        })
    }

    fn dense_key_of(&self, cache: &EmbeddingCache, chunk_id: u32) -> Option<TextKey> {
        let domain = self.dense.runtime.domain();
        self.chunk_key(chunk_id)
            .map(|key| cache.derived_key(&domain, &key.to_le_bytes()))
    }

    /// How many of the snapshot's chunks have vectors (opens the model if needed).
    pub fn dense_status(&self) -> Result<DenseStatus, IndexError> {
        let model = self.dense.runtime.model()?;
        let (ids, keys) = self.dense_keys(&model.cache);
        Ok(DenseStatus {
            model: model.embedder.identity().key(),
            chunks: ids.len(),
            embedded: ids.len() - model.cache.missing(keys).len(),
        })
    }

    /// Embeds every chunk that has no cached vector yet (slow the first time for a repository:
    /// tens of chunks per second; later snapshots reuse the vectors of unchanged chunks) and
    /// builds the full index. `progress` gets [`Stage::Embed`] with (chunks embedded, to embed).
    pub fn build_dense(&self, progress: &dyn Progress) -> Result<DenseBuildReport, IndexError> {
        let model = self.dense.runtime.model()?;
        let (ids, keys) = self.dense_keys(&model.cache);
        let started = Instant::now();
        let mut seen = HashSet::new();
        let missing: Vec<usize> = model
            .cache
            .missing(keys)
            .into_iter()
            .filter(|&i| seen.insert(keys[i]))
            .collect();
        let total = missing.len() as u64;
        progress.report(Stage::Embed, 0, total);
        let mut done = 0u64;
        for round in missing.chunks(BUILD_ROUND) {
            let round_ids: Vec<u32> = round.iter().map(|&i| ids[i]).collect();
            let round_keys: Vec<TextKey> = round.iter().map(|&i| keys[i]).collect();
            let texts = self.passage_texts(&model.embedder, &round_ids)?;
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            model
                .cache
                .embed_keyed(&model.embedder, &round_keys, &texts, &mut |n, _| {
                    progress.report(Stage::Embed, done + n as u64, total)
                })?;
            done += round.len() as u64;
            progress.report(Stage::Embed, done, total);
        }
        let embed_seconds = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let graph_progress = |done: usize, total: usize| {
            progress.report(Stage::VectorGraph, done as u64, total as u64)
        };
        let index = self
            .full_index(&model, Some(&graph_progress))?
            .expect("every chunk has just been embedded");
        Ok(DenseBuildReport {
            model: model.embedder.identity().key(),
            chunks: ids.len(),
            cached: ids.len() - missing.len(),
            embedded: missing.len(),
            search: match index.graph_state() {
                GraphState::NotNeeded | GraphState::Missing | GraphState::Failed { .. } => {
                    "exact".to_owned()
                }
                _ => "hnsw".to_owned(),
            },
            graph: index.graph_state().describe(),
            embed_seconds,
            index_seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// The full index, built from cached vectors on first use; `None` when some chunk has no
    /// vector (the full index does not exist for this snapshot). Its HNSW graph (above
    /// [`IndexOptions::exact_below`] chunks) comes from the store in the embedding cache; with
    /// `build_graph` (a progress callback) a missing one is built and stored, which replaces an
    /// index opened without.
    fn full_index(
        &self,
        model: &DenseModel,
        build_graph: Option<&dyn Fn(usize, usize)>,
    ) -> Result<Option<Arc<DenseIndex<u32>>>, IndexError> {
        let mut slot = self.dense.full.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(index) = &*slot
            && (build_graph.is_none()
                || !matches!(
                    index.graph_state(),
                    GraphState::Missing | GraphState::Failed { .. }
                ))
        {
            return Ok(Some(index.clone()));
        }
        let (ids, keys) = self.dense_keys(&model.cache);
        // Checked first: the common "not built" answer then costs no allocation of all vectors.
        if !model.cache.contains_all(keys) {
            return Ok(None);
        }
        let Some(vectors) = model.cache.lookup(keys) else {
            return Ok(None);
        };
        let config = &self.dense.runtime.config;
        let store = GraphStore::new(model.cache.dir().join("graphs"), config.max_stored_graphs);
        let index = Arc::new(DenseIndex::with_store(
            model.embedder.identity().clone(),
            ids.clone(),
            vectors,
            &config.index,
            &store,
            build_graph,
        )?);
        *slot = Some(index.clone());
        Ok(Some(index))
    }

    /// The passage texts of chunks (each file read once).
    fn passage_texts(
        &self,
        embedder: &Embedder,
        chunk_ids: &[u32],
    ) -> Result<Vec<String>, IndexError> {
        let mut by_file: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for (position, &id) in chunk_ids.iter().enumerate() {
            let (file, _) = self
                .locate(id)
                .ok_or_else(|| IndexError::UnknownFile(format!("chunk #{id}")))?;
            by_file.entry(file).or_default().push(position);
        }
        let unit = self.dense.runtime.config.text_unit;
        let max_chars = embedder.max_chars();
        let mut texts = vec![String::new(); chunk_ids.len()];
        for (file, positions) in by_file {
            let path = &self.files[file].path;
            let lines = self.read_lines(path, 1, u32::MAX)?;
            for position in positions {
                let (_, chunk) = self.locate(chunk_ids[position]).expect("located above");
                let first = (chunk.start.max(1) - 1) as usize;
                let last = (chunk.end as usize).min(lines.len());
                let body = lines.get(first..last).unwrap_or_default().join("\n");
                texts[position] = passage_text(path, chunk.name.as_deref(), &body, unit, max_chars);
            }
        }
        Ok(texts)
    }

    /// Whether a chunk passes the filters (the same rules as lexical search).
    fn passes(&self, chunk_id: u32, filters: &SearchFilters) -> bool {
        let Some((file, chunk)) = self.locate(chunk_id) else {
            return false;
        };
        let info = &self.files[file];
        filters
            .path_glob
            .as_ref()
            .is_none_or(|g| g.is_match(&info.path))
            && (filters.languages.is_empty()
                || info
                    .language
                    .is_some_and(|l| filters.languages.contains(&l)))
            && (filters.kinds.is_empty() || filters.kinds.contains(&chunk.kind))
    }

    /// Dense search over the snapshot's chunks; see the module docs for the modes.
    pub fn dense_search(&self, query: &DenseQuery) -> Result<DenseResult, IndexError> {
        let model = self.dense.runtime.model()?;
        let rerank = query.mode == DenseMode::Rerank || !query.regions.is_empty();
        if !rerank {
            let full = self.full_index(&model, None)?;
            match (full, query.mode) {
                (Some(index), _) => return self.search_full(&model, &index, query),
                (None, DenseMode::Full) => {
                    let status = self.dense_status()?;
                    return Err(IndexError::DenseNotBuilt {
                        root: self.root.display().to_string(),
                        missing: status.chunks - status.embedded,
                        chunks: status.chunks,
                    });
                }
                (None, _) => {}
            }
        }
        self.search_rerank(&model, query)
    }

    fn search_full(
        &self,
        model: &DenseModel,
        index: &DenseIndex<u32>,
        query: &DenseQuery,
    ) -> Result<DenseResult, IndexError> {
        let vector = model.embedder.embed_query(&query.text)?;
        let hits = if query.filters.is_empty() {
            index.try_search(&vector, query.limit)?
        } else {
            index.search_where(&vector, query.limit, &|&id| self.passes(id, &query.filters))?
        };
        Ok(DenseResult {
            hits: hits
                .into_iter()
                .filter_map(|h| self.chunk_hit(h.key, h.score))
                .collect(),
            mode: DenseMode::Full,
            scored: index.len(),
            counts: EmbedCounts::default(),
        })
    }

    /// The rerank candidates: chunks of the given regions, else the top lexical hits; blank and
    /// filtered-out chunks dropped, each chunk once, in candidate order.
    fn rerank_candidates(&self, query: &DenseQuery) -> Result<Vec<u32>, IndexError> {
        let mut ids: Vec<u32> = Vec::new();
        if query.regions.is_empty() {
            let wanted = query
                .candidates
                .unwrap_or(self.dense.runtime.config.rerank_candidates)
                .max(query.limit);
            ids.extend(
                self.search_text(&query.text, wanted, &query.filters)?
                    .into_iter()
                    .map(|h| h.chunk_id),
            );
        } else {
            for region in &query.regions {
                let file = self.file_index(&region.path)?;
                let first = self.first_chunk[file];
                for (offset, chunk) in self.analyses[file].chunks.iter().enumerate() {
                    let overlaps = chunk.end >= region.start
                        && region.end.is_none_or(|end| chunk.start <= end);
                    if overlaps {
                        ids.push(first + offset as u32);
                    }
                }
            }
        }
        let mut seen = HashSet::new();
        ids.retain(|&id| {
            self.chunk_key(id).is_some() && self.passes(id, &query.filters) && seen.insert(id)
        });
        Ok(ids)
    }

    fn search_rerank(
        &self,
        model: &DenseModel,
        query: &DenseQuery,
    ) -> Result<DenseResult, IndexError> {
        let ids = self.rerank_candidates(query)?;
        let keys: Vec<TextKey> = ids
            .iter()
            .map(|&id| {
                self.dense_key_of(&model.cache, id)
                    .expect("blank chunks were dropped")
            })
            .collect();
        let missing = model.cache.missing(&keys);
        let missing_ids: Vec<u32> = missing.iter().map(|&i| ids[i]).collect();
        let missing_keys: Vec<TextKey> = missing.iter().map(|&i| keys[i]).collect();
        let texts = self.passage_texts(&model.embedder, &missing_ids)?;
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        model
            .cache
            .embed_keyed(&model.embedder, &missing_keys, &texts, &mut |_, _| {})?;
        let vectors = model
            .cache
            .lookup(&keys)
            .expect("every candidate was cached or has just been embedded");
        let query_vector = model.embedder.embed_query(&query.text)?;
        let index = DenseIndex::from_vectors(
            model.embedder.identity().clone(),
            ids.clone(),
            vectors,
            &IndexOptions {
                // A candidate set is small: always exact.
                exact_below: usize::MAX,
                ..IndexOptions::default()
            },
        )?;
        let hits = index.try_search(&query_vector, query.limit)?;
        Ok(DenseResult {
            hits: hits
                .into_iter()
                .filter_map(|h| self.chunk_hit(h.key, h.score))
                .collect(),
            mode: DenseMode::Rerank,
            scored: ids.len(),
            counts: EmbedCounts {
                cached: ids.len() - missing.len(),
                // Candidates are distinct chunks, and chunk keys are distinct in a snapshot.
                embedded: missing.len(),
            },
        })
    }
}
