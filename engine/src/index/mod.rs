//! Assembly: [`Engine::open`] turns a snapshot directory into a [`SnapshotIndex`], reusing the
//! cache ([`crate::cache`]) wherever content has not changed.
//!
//! - `build`: the open as named steps over explicit state — walk, manifest, read (the stat fast
//!   path), pool, analyse, chunk table, lexical, manifest, finish.
//! - `snapshot`: the [`SnapshotIndex`] API (files, lines, chunks, lexical search of chunks and
//!   of whole files, definitions, the code graph, path resolution, grep, diagnostics,
//!   statistics).
//! - `types`: the API's plain data (hits, filters, statistics).
//! - [`dense`]: dense search, another lazily built member of [`SnapshotIndex`] next to the graph:
//!   the engine's model is opened on the first dense call, vectors are cached by chunk key.
//! - [`gc`]: [`Engine::collect_garbage`] removes what no snapshot the cache serves reads any more
//!   (the chunks and analyses of old file versions, the pools of snapshots whose folder is gone).
//! - [`refresh`]: [`Engine::refresh`] brings an open index up to date with its tree, re-reading
//!   and re-analysing only what changed, with the build's own steps.
//!
//! A [`SnapshotIndex`] is immutable, `Send + Sync` and meant to be shared as `Arc`. File text is
//! read from the snapshot directory on demand ([`SnapshotIndex::read_lines`], `grep`), so the
//! directory must stay in place while the index is used. The code graph is built on first use
//! ([`SnapshotIndex::graph`]), since only some explorers need it. Format versions of everything
//! the build writes are in [`crate::formats`].
//!
//! This module does no printing; long work is reported through [`Progress`].

mod build;
pub mod dense;
pub mod gc;
pub mod refresh;
mod snapshot;
mod types;

pub use crate::lang::AnalyzeOptions;
pub use dense::{
    CandidateRegion, DenseBuildReport, DenseConfig, DenseMode, DenseQuery, DenseResult, DenseStatus,
};
pub use gc::{GcOptions, GcReport, PoolGc};
pub use refresh::{Refresh, RefreshReport};
pub use snapshot::{FILE_BM25_B, FILE_BM25_K1};
pub use types::{
    CacheStats, ChunkHit, DefinitionHit, FileHit, FileInfo, GREP_LINE_MAX, GrepHit, IndexStats,
    PoolStats, SearchFilters, Timings,
};

use crate::analysis::FileAnalysis;
use crate::cache::CacheLayout;
use crate::graph::CodeGraph;
use crate::lexical::LexicalConfig;
use crate::lexical::LexicalError;
use crate::lexical::pool::{LexicalPool, PoolView, WriterOptions};
use crate::scan::{Diagnostic, ScanError, ScanOptions};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use swex_text::GlobError;

/// Everything an [`Engine`] can be told.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Cache root; see [`crate::cache::default_cache_root`].
    pub cache_dir: PathBuf,
    pub scan: ScanOptions,
    pub analyze: AnalyzeOptions,
    pub lexical: LexicalConfig,
    pub writer: WriterOptions,
    /// Verify the checksums of every pool file the first time this engine opens a pool (reads the
    /// whole pool once per process; disable only for benchmarks of the warm path).
    pub verify_pools: bool,
    /// Dense search: model, text unit, vector index, rerank candidates.
    pub dense: DenseConfig,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            cache_dir: crate::cache::default_cache_root(),
            scan: ScanOptions::default(),
            analyze: AnalyzeOptions::default(),
            lexical: LexicalConfig::default(),
            writer: WriterOptions::default(),
            verify_pools: true,
            dense: DenseConfig::default(),
        }
    }
}

/// Errors of opening or querying a snapshot index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Scan(#[from] ScanError),
    #[error(transparent)]
    Lexical(#[from] LexicalError),
    #[error("cache at {path}: {source}")]
    Cache {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} changed while the snapshot was being indexed; open it again")]
    SnapshotChanged { path: String },
    #[error("{0} is not an indexed file of this snapshot")]
    UnknownFile(String),
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Glob(#[from] GlobError),
    #[error("invalid regular expression: {0}")]
    Regex(#[from] regex::Error),
    #[error(transparent)]
    Dense(#[from] crate::dense::DenseError),
    #[error("cancelled")]
    Cancelled,
    #[error(
        "no full dense index for {root}: {missing} of {chunks} chunks have no vector yet; run `swex index --dense --repo {root}` (or search in rerank mode)"
    )]
    DenseNotBuilt {
        root: String,
        missing: usize,
        chunks: usize,
    },
}

/// Stages of long work: [`Engine::open`], in order, then [`SnapshotIndex::build_dense`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Walk,
    Read,
    Analyze,
    Index,
    Graph,
    /// Embedding chunks for the full dense index.
    Embed,
    /// Building the full dense index's HNSW graph (points inserted, points).
    VectorGraph,
}

/// Receives progress of long work; called from worker threads.
pub trait Progress: Send + Sync {
    fn report(&self, stage: Stage, done: u64, total: u64);

    /// Whether the work should stop. [`Engine::open`] and [`Engine::refresh`] ask between steps
    /// and batches and then fail with [`IndexError::Cancelled`]; the cache stays consistent
    /// (what was not committed is simply not there).
    fn is_cancelled(&self) -> bool {
        false
    }
}

/// [`IndexError::Cancelled`] once `progress` asks to stop.
fn stop_if_cancelled(progress: &dyn Progress) -> Result<(), IndexError> {
    if progress.is_cancelled() {
        Err(IndexError::Cancelled)
    } else {
        Ok(())
    }
}

/// Ignores progress.
pub struct NoProgress;

impl Progress for NoProgress {
    fn report(&self, _: Stage, _: u64, _: u64) {}
}

/// Builds and opens snapshot indexes; holds the configuration and the open pools.
pub struct Engine {
    config: EngineConfig,
    layout: CacheLayout,
    pools: Mutex<HashMap<String, Arc<LexicalPool>>>,
    /// Per pool, the in-memory overlay that refreshes add their chunks to.
    overlays: refresh::Overlays,
    dense: Arc<dense::DenseRuntime>,
}

/// The indexes of one snapshot. See the module docs.
pub struct SnapshotIndex {
    root: PathBuf,
    /// The one reader of the snapshot's files ([`crate::scan::CheckoutRoot`]).
    checkout: crate::scan::CheckoutRoot,
    /// No read of a file of the snapshot takes more bytes ([`crate::scan::ScanOptions`]).
    max_file_size: u64,
    files: Vec<FileInfo>,
    by_path: HashMap<String, u32>,
    /// Shared with the indexes [`Engine::refresh`] makes from this one.
    analyses: Vec<Arc<FileAnalysis>>,
    /// First chunk id of each file; chunk ids are dense, in file order then chunk order.
    first_chunk: Vec<u32>,
    /// Lexical key of every chunk ([`NO_DOCUMENT`] for blank ones), by chunk id.
    chunk_keys: Vec<u64>,
    total_chunks: u32,
    lexical: PoolView,
    lexical_config: LexicalConfig,
    /// Built on first use: only some explorers need it.
    graph: OnceLock<CodeGraph>,
    /// Definitions by bare name, indexes into `analyses`; built on first use. Much cheaper than
    /// the graph (no reference resolution), so name look-ups need not wait for the graph.
    definition_table: OnceLock<snapshot::DefinitionTable>,
    /// Tables of ranked search ([`crate::search`]), built on the first search.
    search_aids: OnceLock<crate::search::SearchAids>,
    /// The engine's dense layer and this snapshot's full dense index, on first use.
    dense: dense::DenseSlot,
    /// The repository history of the checkout ([`crate::history`]), read on first use from the
    /// cache under `cache_dir`.
    /// The repository history and where it came from, read on first use.
    #[allow(clippy::type_complexity)]
    history: OnceLock<
        Result<
            (
                Arc<crate::history::FileHistory>,
                crate::history::HistoryOrigin,
            ),
            crate::history::HistoryError,
        >,
    >,
    cache_dir: PathBuf,
    diagnostics: Vec<Diagnostic>,
    stats: IndexStats,
    /// What the tree looked like when it was listed, for [`Engine::refresh`].
    tree: refresh::TreeState,
}

/// What a [`SnapshotIndex`] is made of, as an open ([`build`]) or a refresh ([`refresh`]) has
/// gathered it; [`Engine::assemble`] is the one place the index is made from it.
pub(crate) struct IndexParts {
    /// The canonical snapshot root and the one reader of its files.
    pub(crate) root: PathBuf,
    pub(crate) checkout: crate::scan::CheckoutRoot,
    /// The indexed files in path order, and their analyses in the same order.
    pub(crate) files: Vec<FileInfo>,
    pub(crate) analyses: Vec<Arc<FileAnalysis>>,
    /// Chunk ids of the files' chunks.
    pub(crate) chunks: build::ChunkTable,
    pub(crate) lexical: PoolView,
    /// In any order.
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Cache, pool and timing statistics; the content counts are set by the assembly.
    pub(crate) stats: IndexStats,
    pub(crate) tree: refresh::TreeState,
}

impl Engine {
    /// The index of `parts`: diagnostics sorted, files by path, content counts, and the members
    /// built on first use (graph, definition table, search tables, dense index) left empty, so that
    /// an opened index and a refreshed one are made alike.
    pub(crate) fn assemble(&self, parts: IndexParts) -> SnapshotIndex {
        let IndexParts {
            root,
            checkout,
            files,
            analyses,
            chunks,
            lexical,
            mut diagnostics,
            mut stats,
            tree,
        } = parts;
        diagnostics.sort_by(|a, b| a.path.cmp(&b.path).then(a.kind.cmp(&b.kind)));
        let by_path = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.clone(), i as u32))
            .collect();
        stats.count_contents(&files, &analyses, &diagnostics);
        let total_chunks = chunks.keys.len() as u32;
        SnapshotIndex {
            root,
            checkout,
            max_file_size: self.config.scan.max_file_size,
            files,
            by_path,
            analyses,
            first_chunk: chunks.first_chunk,
            chunk_keys: chunks.keys,
            total_chunks,
            lexical,
            lexical_config: self.config.lexical.clone(),
            graph: OnceLock::new(),
            definition_table: OnceLock::new(),
            search_aids: OnceLock::new(),
            dense: dense::DenseSlot::new(self.dense.clone()),
            history: OnceLock::new(),
            cache_dir: self.config.cache_dir.clone(),
            diagnostics,
            stats,
            tree,
        }
    }
}

impl Engine {
    pub fn new(config: EngineConfig) -> Engine {
        let tag = crate::formats::analysis_tag(&config.analyze);
        let layout = CacheLayout::new(&config.cache_dir, &tag, crate::formats::TOKENIZER_VERSION);
        Engine {
            dense: Arc::new(dense::DenseRuntime::new(&config.cache_dir, &config.dense)),
            config,
            layout,
            pools: Mutex::new(HashMap::new()),
            overlays: refresh::Overlays::default(),
        }
    }

    /// An engine on an explicit cache layout (tests of format-version bumps).
    pub fn with_layout(config: EngineConfig, layout: CacheLayout) -> Engine {
        Engine {
            dense: Arc::new(dense::DenseRuntime::new(&config.cache_dir, &config.dense)),
            config,
            layout,
            pools: Mutex::new(HashMap::new()),
            overlays: refresh::Overlays::default(),
        }
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Opens the engine's embedding model now instead of on the first dense call, and names it:
    /// for work that will need it on every step and should fail before the first one when it is
    /// absent ([`crate::dense::DenseError::is_absent`], which names `swex models fetch`).
    pub fn open_dense_model(&self) -> Result<String, IndexError> {
        Ok(self.dense.model_key()?)
    }

    pub fn layout(&self) -> &CacheLayout {
        &self.layout
    }

    /// Opens the snapshot at `root`, building whatever the cache lacks.
    pub fn open(&self, root: &Path) -> Result<Arc<SnapshotIndex>, IndexError> {
        self.open_with_progress(root, &NoProgress)
    }

    /// [`Engine::open`] reporting progress: the build's steps in order (the `build` module's).
    pub fn open_with_progress(
        &self,
        root: &Path,
        progress: &dyn Progress,
    ) -> Result<Arc<SnapshotIndex>, IndexError> {
        Ok(Arc::new(build::Build::new(self, root, progress)?.run()?))
    }
}
