//! Assembly: [`Engine::open`] turns a snapshot directory into a [`SnapshotIndex`], reusing the
//! cache ([`crate::cache`]) wherever content has not changed.
//!
//! Open, step by step:
//! 1. **Walk** the tree ([`crate::scan::walk`]).
//! 2. **Read**: a file whose stat stamp matches the root's manifest keeps its recorded content
//!    hash without being read (the stat fast path); others are read, checked for binary content and
//!    hashed.
//! 3. **Pool**: the snapshot joins the repository's pool — the one whose recorded file versions
//!    overlap most with its own, or a new one ([`crate::cache`]).
//! 4. **Analyse**: analyses are looked up in the pool's packs by file key (path + content hash)
//!    and computed only on a miss ([`crate::lang::analyze`]); new ones go into one new pack. Each
//!    chunk gets a content key (path, kind, name, symbols, text).
//! 5. **Lexical**: chunks whose keys the pool's index lacks are indexed, under the pool's lock
//!    ([`crate::lexical::pool`]); a changed file costs only its changed chunks. A damaged pool is
//!    rebuilt.
//! 6. The manifest is rewritten, and the [`SnapshotIndex`] is ready. The code graph is built on
//!    first use ([`SnapshotIndex::graph`]), since only some explorers need it.
//!
//! A [`SnapshotIndex`] is immutable, `Send + Sync` and meant to be shared as `Arc`. File text is
//! read from the snapshot directory on demand ([`SnapshotIndex::read_lines`], `grep`), so the
//! directory must stay in place while the index is used.
//!
//! Dense search ([`dense`]) is another lazily built member of [`SnapshotIndex`], next to the
//! graph: the engine's model is opened on the first dense call, vectors are cached by chunk key.
//!
//! This module does no printing; long work is reported through [`Progress`].

pub mod dense;
pub mod refresh;

use crate::lang as lang_api;
use swex_text::{LineIndex, split_lines};

pub use crate::lang::AnalyzeOptions;
pub use dense::{
    CandidateRegion, DenseBuildReport, DenseConfig, DenseMode, DenseQuery, DenseResult, DenseStatus,
};
pub use refresh::{Refresh, RefreshReport};

use crate::analysis::{Chunk, ChunkKind, FileAnalysis, Language};
use crate::cache::{
    AnalysisPacks, CacheLayout, FileKey, Lookup, MAX_PACKS, ManifestFile, RootManifest,
    StoredAnalysis,
};
use crate::graph::CodeGraph;
use crate::lexical::pool::{ChunkDoc, LexicalPool, PoolView, WriterOptions};
use crate::lexical::{LexicalConfig, LexicalError, LexicalQuery};
use crate::scan::{
    ContentHash, Diagnostic, DiagnosticKind, FileEntry, Loaded, ScanError, ScanOptions,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use swex_text::{Glob, GlobError};

/// Version of the lexical analyzer and pool schema; part of the pool directory name.
/// 2: the CJK bigram field.
pub const TOKENIZER_VERSION: u32 = 2;

/// A pool is reused for a snapshot when it holds at least this share of the snapshot's file
/// versions; otherwise the snapshot starts a new pool (another repository, or a far-away one).
const POOL_REUSE_MIN_OVERLAP: f64 = 0.3;

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

/// One indexed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileInfo {
    pub path: String,
    pub language: Option<Language>,
    pub size: u64,
    /// Lines as the benchmark counts them (Python `str.splitlines()`).
    pub line_count: u32,
    pub content_hash: ContentHash,
}

/// A chunk found by lexical search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkHit {
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub kind: ChunkKind,
    pub name: Option<String>,
    pub score: f32,
    pub chunk_id: u32,
}

/// A definition found by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefinitionHit {
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub kind: ChunkKind,
    pub name: String,
    pub qualified_name: String,
}

/// A line matched by [`SnapshotIndex::grep`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrepHit {
    pub path: String,
    pub line: u32,
    /// The line, cut to [`GREP_LINE_MAX`] bytes.
    pub text: String,
}

/// Longest line text returned by grep. The services contract's limit is
/// `swex_plugin::types::GrepMatch::TEXT_MAX_BYTES` (the engine does not know the SDK): the host cuts
/// to that, and the conformance suite checks that both agree.
pub const GREP_LINE_MAX: usize = 400;

/// Restricts lexical search results. Empty lists mean "any".
#[derive(Debug, Clone, Default)]
pub struct SearchFilters {
    pub path_glob: Option<Glob>,
    pub languages: Vec<Language>,
    pub kinds: Vec<ChunkKind>,
}

impl SearchFilters {
    pub fn is_empty(&self) -> bool {
        self.path_glob.is_none() && self.languages.is_empty() && self.kinds.is_empty()
    }
}

/// Counts and timings of one [`Engine::open`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexStats {
    pub files: usize,
    pub files_by_language: BTreeMap<String, usize>,
    pub bytes: u64,
    pub lines: u64,
    pub chunks: usize,
    pub definitions: usize,
    pub diagnostics_by_kind: BTreeMap<String, usize>,
    /// What the checkout's ignore rules left out ([`crate::scan::CheckoutRules`]).
    #[serde(default)]
    pub ignored: crate::scan::IgnoreReport,
    pub cache: CacheStats,
    pub pool: PoolStats,
    pub timings_ms: Timings,
}

impl IndexStats {
    /// Sets the content counts (files, bytes, lines, chunks, definitions, by language, and
    /// diagnostics by kind) from an index's contents.
    fn count_contents(
        &mut self,
        files: &[FileInfo],
        analyses: &[Arc<FileAnalysis>],
        diagnostics: &[Diagnostic],
    ) {
        self.files = files.len();
        self.files_by_language.clear();
        self.diagnostics_by_kind.clear();
        (self.bytes, self.lines, self.chunks, self.definitions) = (0, 0, 0, 0);
        for (file, analysis) in files.iter().zip(analyses) {
            let language_name = file
                .language
                .map_or("text".to_string(), |l| kind_name(l).to_string());
            *self.files_by_language.entry(language_name).or_default() += 1;
            self.bytes += file.size;
            self.lines += u64::from(analysis.line_count);
            self.chunks += analysis.chunks.len();
            self.definitions += analysis.definitions.len();
        }
        for diagnostic in diagnostics {
            *self
                .diagnostics_by_kind
                .entry(kind_name(diagnostic.kind))
                .or_default() += 1;
        }
    }
}

/// How much of the cache was reused.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheStats {
    /// Files whose content hash came from the stat manifest without reading them.
    pub stat_fast_path: usize,
    pub files_read: usize,
    pub analyses_reused: usize,
    pub analyses_computed: usize,
    /// Cache entries found damaged or foreign (rebuilt).
    pub invalid_entries: usize,
    /// Cache writes that failed (the index is still complete; the next open redoes the work).
    pub write_errors: usize,
    pub first_write_error: Option<String>,
    /// Pools found damaged and rebuilt, with the reason.
    pub pool_repairs: Vec<String>,
}

/// The lexical pool the snapshot uses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolStats {
    pub id: String,
    /// Documents (chunks) added by this open.
    pub docs_added: u64,
    /// Documents in the pool over all file versions.
    pub docs_total: u64,
    /// Documents of this snapshot.
    pub snapshot_docs: u64,
    pub segments: usize,
    pub size_bytes: u64,
}

/// Wall-clock milliseconds per stage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    pub walk: f64,
    pub read: f64,
    pub analyze: f64,
    pub lexical: f64,
    pub total: f64,
}

/// The indexes of one snapshot. See the module docs.
pub struct SnapshotIndex {
    root: PathBuf,
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
    /// Definitions by bare name, `(file, definition)` indexes into `analyses`; built on first use.
    /// Much cheaper than the graph (no reference resolution), so name look-ups need not wait for
    /// the graph.
    definition_table: OnceLock<HashMap<String, Vec<(u32, u32)>>>,
    /// Tables of ranked search ([`crate::search`]), built on the first search.
    search_aids: OnceLock<crate::search::SearchAids>,
    /// The engine's dense layer and this snapshot's full dense index, on first use.
    dense: dense::DenseSlot,
    diagnostics: Vec<Diagnostic>,
    stats: IndexStats,
    /// What the tree looked like when it was listed, for [`Engine::refresh`].
    tree: refresh::TreeState,
}

/// What step 2 learnt about a text file.
struct TextFile {
    entry: FileEntry,
    content_hash: ContentHash,
    language: Option<Language>,
    lossy: bool,
    /// Kept from the read, if the file was read in this open.
    text: Option<String>,
}

enum ReadOutcome {
    Text(TextFile, Option<Diagnostic>, bool),
    Binary(FileEntry, Diagnostic, bool),
    Skipped(Diagnostic),
}

fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

/// Ticks a progress counter from worker threads, reporting every `every` items.
struct Ticker<'a> {
    progress: &'a dyn Progress,
    stage: Stage,
    total: u64,
    done: AtomicU64,
}

impl Ticker<'_> {
    fn tick(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if done.is_multiple_of(256) || done == self.total {
            self.progress.report(self.stage, done, self.total);
        }
    }
}

impl Engine {
    pub fn new(config: EngineConfig) -> Engine {
        let tag = analysis_tag(&config.analyze);
        let layout = CacheLayout::new(&config.cache_dir, &tag, TOKENIZER_VERSION);
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

    pub fn layout(&self) -> &CacheLayout {
        &self.layout
    }

    /// Opens the snapshot at `root`, building whatever the cache lacks.
    pub fn open(&self, root: &Path) -> Result<Arc<SnapshotIndex>, IndexError> {
        self.open_with_progress(root, &NoProgress)
    }

    /// [`Engine::open`] reporting progress.
    pub fn open_with_progress(
        &self,
        root: &Path,
        progress: &dyn Progress,
    ) -> Result<Arc<SnapshotIndex>, IndexError> {
        let started = Instant::now();
        let mut stats = IndexStats::default();
        let canonical = root.canonicalize().map_err(|source| ScanError::Root {
            path: root.display().to_string(),
            source,
        })?;
        let registry = self.layout.pools();
        let cache_err = |path: &Path| {
            let path = path.display().to_string();
            move |source| IndexError::Cache { path, source }
        };

        // 1. Walk.
        let t = Instant::now();
        progress.report(Stage::Walk, 0, 0);
        let mut walked = crate::scan::walk(&canonical, &self.config.scan)?;
        let tree = refresh::TreeState::new(&mut walked);
        let mut diagnostics = walked.diagnostics;
        stats.ignored = walked.ignored;
        stats.timings_ms.walk = ms_since(t);
        stop_if_cancelled(progress)?;

        // 2. Read (or trust the manifest).
        let t = Instant::now();
        let manifests = self.layout.manifests();
        let manifest = match manifests.get(&canonical) {
            Lookup::Hit(m) => Some(m),
            Lookup::Miss => None,
            Lookup::Invalid(_) => {
                stats.cache.invalid_entries += 1;
                None
            }
        };
        let ticker = Ticker {
            progress,
            stage: Stage::Read,
            total: walked.files.len() as u64,
            done: AtomicU64::new(0),
        };
        let outcomes: Vec<ReadOutcome> = walked
            .files
            .into_par_iter()
            .map(|entry| {
                let outcome = self.read_one(entry, manifest.as_ref());
                ticker.tick();
                outcome
            })
            .collect();
        let mut text_files = Vec::with_capacity(outcomes.len());
        let mut binary_files = Vec::new();
        for outcome in outcomes {
            match outcome {
                ReadOutcome::Text(file, diagnostic, fast) => {
                    count_read(&mut stats.cache, fast);
                    diagnostics.extend(diagnostic);
                    text_files.push(file);
                }
                ReadOutcome::Binary(entry, diagnostic, fast) => {
                    count_read(&mut stats.cache, fast);
                    diagnostics.push(diagnostic);
                    binary_files.push(entry);
                }
                ReadOutcome::Skipped(diagnostic) => diagnostics.push(diagnostic),
            }
        }
        stats.timings_ms.read = ms_since(t);
        stop_if_cancelled(progress)?;

        // 3. The repository's pool (analyses and lexical documents live there).
        let t = Instant::now();
        let file_keys: HashSet<u64> = text_files
            .iter()
            .map(|f| FileKey::new(&f.entry.path, &f.content_hash).pool_key())
            .collect();
        let (pool_id, pool) = self.choose_pool(
            manifest.as_ref().and_then(|m| m.pool.as_deref()),
            &file_keys,
            &mut stats.cache,
        )?;

        // 4. Analyse what the pool has not seen.
        let packs = registry.analyses(&pool_id);
        let invalid = AtomicUsize::new(0);
        let ticker = Ticker {
            progress,
            stage: Stage::Analyze,
            total: text_files.len() as u64,
            done: AtomicU64::new(0),
        };
        let analysed: Vec<Result<(TextFile, StoredAnalysis, bool), IndexError>> = text_files
            .into_par_iter()
            .map(|mut file| {
                stop_if_cancelled(progress)?;
                let key = FileKey::new(&file.entry.path, &file.content_hash);
                let cached = match packs.get(&key) {
                    Lookup::Hit(stored)
                        if stored.chunk_keys.len() == stored.analysis.chunks.len() =>
                    {
                        Some(stored)
                    }
                    Lookup::Hit(_) | Lookup::Invalid(_) => {
                        invalid.fetch_add(1, Ordering::Relaxed);
                        None
                    }
                    Lookup::Miss => None,
                };
                let result = match cached {
                    Some(stored) => (file, stored, true),
                    None => {
                        self.ensure_text(&mut file, true)?;
                        let stored = self.analyse_text(&file);
                        (file, stored, false)
                    }
                };
                ticker.tick();
                Ok(result)
            })
            .collect();
        let mut files = Vec::with_capacity(analysed.len());
        let mut computed = Vec::new();
        for result in analysed {
            let (file, stored, reused) = result?;
            if reused {
                stats.cache.analyses_reused += 1;
            } else {
                stats.cache.analyses_computed += 1;
                computed.push(files.len());
            }
            if stored.analysis.has_syntax_errors {
                diagnostics.push(Diagnostic::syntax_errors(&file.entry.path));
            }
            files.push((file, stored));
        }
        stats.cache.invalid_entries += invalid.into_inner();
        let new_values: Vec<(FileKey, &StoredAnalysis)> = computed
            .iter()
            .map(|&i| {
                let (file, stored) = &files[i];
                (FileKey::new(&file.entry.path, &file.content_hash), stored)
            })
            .collect();
        if let Err(err) = packs.write(&new_values) {
            note_write_error(&mut stats.cache, err.to_string());
        }
        let damaged = packs.damaged();
        for (path, reason) in &damaged {
            stats.cache.pool_repairs.push(format!(
                "analysis pack {} removed: {reason}",
                path.display()
            ));
        }
        stats.cache.invalid_entries += packs.damaged_at_open();
        if !damaged.is_empty() || packs.pack_count() + 1 > MAX_PACKS {
            let _lock = registry
                .lock_pool(&pool_id)
                .map_err(cache_err(registry.dir()))?;
            let tidied = packs.remove_damaged().and_then(|()| {
                AnalysisPacks::compact(&registry.packs_dir(&pool_id), registry.format_version())
            });
            if let Err(err) = tidied {
                note_write_error(&mut stats.cache, err.to_string());
            }
        }
        drop(packs);
        stats.timings_ms.analyze = ms_since(t);

        // 5. Lexical documents the pool lacks.
        let t = Instant::now();
        let ChunkNumbering {
            first_chunk,
            chunk_keys: all_chunk_keys,
            chunk_ids,
        } = ChunkNumbering::new(
            files
                .iter()
                .map(|(file, stored)| (file.entry.path.as_str(), stored.chunk_keys.as_slice())),
            &registry.pool_dir(&pool_id),
        )?;
        let total_chunks = all_chunk_keys.len() as u32;
        let view = self.complete_view(
            &pool_id, &pool, &chunk_ids, &mut files, &mut stats, progress,
        )?;
        stats.pool.id = pool_id.clone();
        stats.pool.docs_total = pool.num_docs();
        stats.pool.snapshot_docs = view.num_docs();
        stats.pool.segments = pool.num_segments();
        stats.pool.size_bytes = pool.size_on_disk();
        stats.timings_ms.lexical = ms_since(t);

        // 6. Manifest and the index itself.
        let written_at_ns = crate::scan::now_ns();
        let mut manifest_files: Vec<ManifestFile> = files
            .iter()
            .map(|(f, _)| ManifestFile {
                path: f.entry.path.clone(),
                stamp: f.entry.stamp,
                content_hash: f.content_hash,
                language: f.language,
                lossy: f.lossy,
                binary: false,
            })
            .chain(binary_files.iter().map(|entry| ManifestFile {
                path: entry.path.clone(),
                stamp: entry.stamp,
                content_hash: ContentHash([0; 32]),
                language: None,
                lossy: false,
                binary: true,
            }))
            .collect();
        manifest_files.sort_by(|a, b| a.path.cmp(&b.path));
        let new_manifest = RootManifest {
            root: canonical.display().to_string(),
            written_at_ns,
            pool: Some(pool_id),
            files: manifest_files,
        };
        let unchanged = manifest
            .as_ref()
            .is_some_and(|m| m.pool == new_manifest.pool && m.files == new_manifest.files);
        if !unchanged && let Err(err) = manifests.put(&canonical, &new_manifest) {
            note_write_error(&mut stats.cache, err.to_string());
        }

        diagnostics.sort_by(|a, b| a.path.cmp(&b.path).then(a.kind.cmp(&b.kind)));
        let mut infos = Vec::with_capacity(files.len());
        let mut analyses = Vec::with_capacity(files.len());
        let mut by_path = HashMap::with_capacity(files.len());
        for (i, (file, stored)) in files.into_iter().enumerate() {
            by_path.insert(file.entry.path.clone(), i as u32);
            infos.push(FileInfo {
                path: file.entry.path,
                language: file.language,
                size: file.entry.stamp.size,
                line_count: stored.analysis.line_count,
                content_hash: file.content_hash,
            });
            analyses.push(Arc::new(stored.analysis));
        }
        stats.count_contents(&infos, &analyses, &diagnostics);
        stats.timings_ms.total = ms_since(started);
        Ok(Arc::new(SnapshotIndex {
            root: canonical,
            files: infos,
            by_path,
            analyses,
            first_chunk,
            chunk_keys: all_chunk_keys,
            total_chunks,
            lexical: view,
            lexical_config: self.config.lexical.clone(),
            graph: OnceLock::new(),
            definition_table: OnceLock::new(),
            search_aids: OnceLock::new(),
            dense: dense::DenseSlot::new(self.dense.clone()),
            diagnostics,
            stats,
            tree,
        }))
    }

    /// Analyses a file read in this open (step 4 on a cache miss): the analysis and the lexical
    /// key of each chunk.
    fn analyse_text(&self, file: &TextFile) -> StoredAnalysis {
        let text = file.text.as_deref().unwrap_or("");
        let lines = LineIndex::new(text);
        let analysis = lang_api::analyze_with_lines(
            &file.entry.path,
            file.language,
            text,
            &lines,
            &self.config.analyze,
        );
        let chunk_keys = chunk_keys(&file.entry.path, text, &lines, &analysis);
        StoredAnalysis {
            analysis,
            chunk_keys,
        }
    }

    /// Step 5: the snapshot's view of `pool` (`chunk_ids`: chunk key → chunk id), after adding
    /// under the pool's lock the chunks it lacks, taken from `files`.
    fn complete_view(
        &self,
        pool_id: &str,
        pool: &Arc<LexicalPool>,
        chunk_ids: &HashMap<u64, u32>,
        files: &mut [(TextFile, StoredAnalysis)],
        stats: &mut IndexStats,
        progress: &dyn Progress,
    ) -> Result<PoolView, IndexError> {
        let registry = self.layout.pools();
        let cache_err = |path: &Path| {
            let path = path.display().to_string();
            move |source| IndexError::Cache { path, source }
        };
        let mut view = self.view_or_repair(pool_id, pool, chunk_ids, &mut stats.cache)?;
        if !view.missing_chunks().is_empty() {
            let _lock = registry
                .lock_pool(pool_id)
                .map_err(cache_err(registry.dir()))?;
            pool.reload()?;
            view = self.view_or_repair(pool_id, pool, chunk_ids, &mut stats.cache)?;
            if !view.missing_chunks().is_empty() {
                let missing: HashSet<u64> = view.missing_chunks().iter().copied().collect();
                // Write through a handle opened under the lock: tantivy's list of managed files
                // is read at open, and another process may have committed since ours was opened.
                let writer_pool = LexicalPool::open_or_create(pool.dir())?;
                stats.pool.docs_added =
                    self.index_chunks(&writer_pool, files, &missing, progress)?;
                pool.reload()?;
                view = pool.view(chunk_ids)?;
                if !view.missing_chunks().is_empty() {
                    return Err(LexicalError::Corrupt {
                        path: pool.dir().display().to_string(),
                        message: format!(
                            "{} chunks still missing after indexing",
                            view.missing_chunks().len()
                        ),
                    }
                    .into());
                }
            }
        }
        Ok(view)
    }

    fn read_one(&self, entry: FileEntry, manifest: Option<&RootManifest>) -> ReadOutcome {
        if let Some(known) = manifest.and_then(|m| m.unchanged(&entry.path, &entry.stamp)) {
            if known.binary {
                let diagnostic = Diagnostic::binary(&entry.path);
                return ReadOutcome::Binary(entry, diagnostic, true);
            }
            let diagnostic = known.lossy.then(|| Diagnostic::invalid_utf8(&entry.path));
            return ReadOutcome::Text(
                TextFile {
                    content_hash: known.content_hash,
                    language: known.language,
                    lossy: known.lossy,
                    text: None,
                    entry,
                },
                diagnostic,
                true,
            );
        }
        match crate::scan::load(&entry, &self.config.scan) {
            Loaded::Text(file, diagnostic) => ReadOutcome::Text(
                TextFile {
                    content_hash: file.content_hash,
                    language: file.language,
                    lossy: file.lossy,
                    text: Some(file.text),
                    entry,
                },
                diagnostic,
                false,
            ),
            Loaded::Skipped(diagnostic) if diagnostic.kind == DiagnosticKind::Binary => {
                ReadOutcome::Binary(entry, diagnostic, false)
            }
            Loaded::Skipped(diagnostic) => ReadOutcome::Skipped(diagnostic),
        }
    }

    /// Reads the file's text if this open has not. With `may_change`, a file whose content
    /// differs from the recorded hash takes the new content (nothing depends on the old one yet);
    /// without, it is an error.
    fn ensure_text(&self, file: &mut TextFile, may_change: bool) -> Result<(), IndexError> {
        if file.text.is_some() {
            return Ok(());
        }
        match crate::scan::load(&file.entry, &self.config.scan) {
            Loaded::Text(loaded, _) => {
                if loaded.content_hash != file.content_hash {
                    if !may_change {
                        return Err(IndexError::SnapshotChanged {
                            path: file.entry.path.clone(),
                        });
                    }
                    file.content_hash = loaded.content_hash;
                    file.language = loaded.language;
                    file.lossy = loaded.lossy;
                }
                file.text = Some(loaded.text);
                Ok(())
            }
            Loaded::Skipped(_) => Err(IndexError::SnapshotChanged {
                path: file.entry.path.clone(),
            }),
        }
    }

    /// The pool for a snapshot with file keys `keys`: the manifest's pool if it still exists, else
    /// the pool whose recorded keys overlap most with them (at least [`POOL_REUSE_MIN_OVERLAP`]),
    /// else a new one. The snapshot's keys are added to the chosen pool's record, so that a
    /// concurrent open of the same repository joins it instead of starting its own.
    fn choose_pool(
        &self,
        previous: Option<&str>,
        keys: &HashSet<u64>,
        cache_stats: &mut CacheStats,
    ) -> Result<(String, Arc<LexicalPool>), IndexError> {
        let registry = self.layout.pools();
        let cache_err = |source| IndexError::Cache {
            path: registry.dir().display().to_string(),
            source,
        };
        let ids = registry.pool_ids();
        // An empty snapshot matches any pool (it adds nothing to it).
        let overlaps_enough = |recorded: &HashSet<u64>| {
            let overlap = keys.iter().filter(|k| recorded.contains(k)).count();
            keys.is_empty()
                || overlap > 0 && overlap as f64 >= POOL_REUSE_MIN_OVERLAP * keys.len() as f64
        };
        // The pool used last time, unless the directory now holds something else entirely.
        let previous = previous
            .filter(|p| ids.iter().any(|id| id == p))
            .map(|p| (p, registry.keys(p)))
            .filter(|(_, recorded)| overlaps_enough(recorded));
        let id = match previous {
            Some((id, recorded)) => {
                if !keys.is_subset(&recorded) {
                    let _lock = registry.lock_registry().map_err(cache_err)?;
                    let mut recorded = registry.keys(id);
                    recorded.extend(keys.iter().copied());
                    registry.write_keys(id, &recorded).map_err(cache_err)?;
                }
                id.to_string()
            }
            None => {
                let _lock = registry.lock_registry().map_err(cache_err)?;
                let mut best: Option<(usize, String, HashSet<u64>)> = None;
                for id in registry.pool_ids() {
                    let recorded = registry.keys(&id);
                    let overlap = keys.iter().filter(|k| recorded.contains(k)).count();
                    if best.as_ref().is_none_or(|(b, _, _)| overlap > *b) {
                        best = Some((overlap, id, recorded));
                    }
                }
                let (id, mut recorded, new) = match best {
                    Some((_, id, recorded)) if overlaps_enough(&recorded) => (id, recorded, false),
                    _ => (registry.new_pool_id(), HashSet::new(), true),
                };
                // A new pool exists from the moment its keys file does.
                if new || !keys.is_subset(&recorded) {
                    recorded.extend(keys.iter().copied());
                    registry.write_keys(&id, &recorded).map_err(cache_err)?;
                }
                id
            }
        };
        let pool = self.open_pool(&id, cache_stats)?;
        Ok((id, pool))
    }

    /// Opens pool `id` (once per engine), verifying its checksums when configured; a pool that
    /// fails to open or verify is deleted and recreated empty, under its lock.
    fn open_pool(
        &self,
        id: &str,
        cache_stats: &mut CacheStats,
    ) -> Result<Arc<LexicalPool>, IndexError> {
        if let Some(pool) = self.pools.lock().expect("pools").get(id) {
            pool.reload()?;
            return Ok(pool.clone());
        }
        let registry = self.layout.pools();
        let dir = registry.pool_dir(id);
        let opened = LexicalPool::open_or_create(&dir).and_then(|pool| {
            if self.config.verify_pools {
                pool.validate_checksums()?;
            }
            Ok(pool)
        });
        let pool = match opened {
            Ok(pool) => pool,
            Err(LexicalError::Corrupt { message, .. }) => {
                self.recreate_pool(id, message, cache_stats)?
            }
            Err(LexicalError::Tantivy { source, .. }) => {
                self.recreate_pool(id, source.to_string(), cache_stats)?
            }
            Err(err) => return Err(err.into()),
        };
        let pool = Arc::new(pool);
        self.pools
            .lock()
            .expect("pools")
            .insert(id.to_string(), pool.clone());
        Ok(pool)
    }

    fn recreate_pool(
        &self,
        id: &str,
        reason: String,
        cache_stats: &mut CacheStats,
    ) -> Result<LexicalPool, IndexError> {
        let registry = self.layout.pools();
        let dir = registry.pool_dir(id);
        let _lock = registry.lock_pool(id).map_err(|source| IndexError::Cache {
            path: dir.display().to_string(),
            source,
        })?;
        // Another process may have repaired it while we waited for the lock.
        if let Ok(pool) = LexicalPool::open_or_create(&dir)
            && pool.validate_checksums().is_ok()
        {
            return Ok(pool);
        }
        cache_stats
            .pool_repairs
            .push(format!("lexical index of pool {id} rebuilt: {reason}"));
        std::fs::remove_dir_all(&dir).map_err(|source| IndexError::Cache {
            path: dir.display().to_string(),
            source,
        })?;
        Ok(LexicalPool::open_or_create(&dir)?)
    }

    /// The snapshot's view of `pool`; a pool whose documents cannot be read as this version's
    /// (which can only come from damage) is rebuilt and the view retried once.
    fn view_or_repair(
        &self,
        id: &str,
        pool: &Arc<LexicalPool>,
        chunks: &HashMap<u64, u32>,
        cache_stats: &mut CacheStats,
    ) -> Result<PoolView, IndexError> {
        match pool.view(chunks) {
            Ok(view) => Ok(view),
            Err(LexicalError::Corrupt { message, .. }) => {
                self.pools.lock().expect("pools").remove(id);
                let repaired = Arc::new(self.recreate_pool(id, message, cache_stats)?);
                self.pools
                    .lock()
                    .expect("pools")
                    .insert(id.to_string(), repaired.clone());
                Ok(repaired.view(chunks)?)
            }
            Err(err) => Err(err.into()),
        }
    }

    /// Adds the chunks whose keys are `missing` to the pool.
    fn index_chunks(
        &self,
        pool: &LexicalPool,
        files: &mut [(TextFile, StoredAnalysis)],
        missing: &HashSet<u64>,
        progress: &dyn Progress,
    ) -> Result<u64, IndexError> {
        let wanted: Vec<usize> = files
            .iter()
            .enumerate()
            .filter(|(_, (_, stored))| stored.chunk_keys.iter().any(|k| missing.contains(k)))
            .map(|(i, _)| i)
            .collect();
        // Texts of files whose analysis came from the cache were not necessarily read.
        let wanted_set: HashSet<usize> = wanted.iter().copied().collect();
        files
            .par_iter_mut()
            .enumerate()
            .filter(|(i, _)| wanted_set.contains(i))
            .try_for_each(|(_, (file, _))| self.ensure_text(file, false))?;
        let total = missing.len() as u64;
        let mut writer = pool.writer(&self.config.writer, missing.len())?;
        let mut done = 0u64;
        // Batches bound the memory of prepared documents.
        for batch in wanted.chunks(256) {
            // Dropping the writer uncommitted leaves the pool as it was.
            stop_if_cancelled(progress)?;
            let docs: Vec<PreparedChunkDoc> = batch
                .par_iter()
                .flat_map_iter(|&i| {
                    let (file, stored) = &files[i];
                    chunk_documents(file, stored, missing)
                })
                .collect();
            let borrowed: Vec<ChunkDoc<'_>> = docs.iter().map(PreparedChunkDoc::borrow).collect();
            done += writer.add(&borrowed)?;
            progress.report(Stage::Index, done, total);
        }
        stop_if_cancelled(progress)?;
        Ok(writer.commit()?)
    }
}

/// The chunk key of chunks that get no lexical document (blank ones).
const NO_DOCUMENT: u64 = 0;

/// Chunk ids of a snapshot: dense, in file order then chunk order.
struct ChunkNumbering {
    /// First chunk id of each file.
    first_chunk: Vec<u32>,
    /// Key of every chunk, by chunk id.
    chunk_keys: Vec<u64>,
    /// Chunk id of every key that has a document.
    chunk_ids: HashMap<u64, u32>,
}

impl ChunkNumbering {
    /// Numbers the chunks of `files` (path, chunk keys) in order; two chunks with documents under
    /// one 64-bit key are an error naming the pool at `pool_dir`.
    fn new<'f>(
        files: impl ExactSizeIterator<Item = (&'f str, &'f [u64])>,
        pool_dir: &Path,
    ) -> Result<ChunkNumbering, IndexError> {
        let mut numbering = ChunkNumbering {
            first_chunk: Vec::with_capacity(files.len()),
            chunk_keys: Vec::new(),
            chunk_ids: HashMap::new(),
        };
        for (path, keys) in files {
            numbering
                .first_chunk
                .push(numbering.chunk_keys.len() as u32);
            for &key in keys {
                let id = numbering.chunk_keys.len() as u32;
                numbering.chunk_keys.push(key);
                if key != NO_DOCUMENT && numbering.chunk_ids.insert(key, id).is_some() {
                    return Err(LexicalError::Corrupt {
                        path: pool_dir.display().to_string(),
                        message: format!("64-bit chunk key collision in {path}"),
                    }
                    .into());
                }
            }
        }
        Ok(numbering)
    }
}

/// A chunk document prepared in parallel, then handed to the writer: it borrows the path and
/// body from the file (no copy of the text) and owns only the symbols it joins.
struct PreparedChunkDoc<'f> {
    chunk_key: u64,
    path: &'f str,
    symbols: String,
    body: &'f str,
}

impl PreparedChunkDoc<'_> {
    fn borrow(&self) -> ChunkDoc<'_> {
        ChunkDoc {
            chunk_key: self.chunk_key,
            path: self.path,
            symbols: &self.symbols,
            body: self.body,
        }
    }
}

/// The lexical key of each chunk of a file: a hash of everything its document holds (path, kind,
/// name, symbols, text) and of its rank among identical chunks of the file, so a chunk keeps
/// its key when other parts of the file change. Blank chunks get [`NO_DOCUMENT`].
fn chunk_keys(path: &str, text: &str, lines: &LineIndex, analysis: &FileAnalysis) -> Vec<u64> {
    let mut seen: HashMap<u64, u32> = HashMap::new();
    analysis
        .chunks
        .iter()
        .map(|chunk| {
            let body = slice_lines(text, lines, chunk.start, chunk.end);
            if body.trim().is_empty() {
                return NO_DOCUMENT;
            }
            let mut hasher = blake3::Hasher::new();
            for part in [
                path,
                &kind_name(chunk.kind),
                chunk.name.as_deref().unwrap_or(""),
                &chunk_symbols(chunk, analysis),
                body,
            ] {
                hasher.update(&(part.len() as u64).to_le_bytes());
                hasher.update(part.as_bytes());
            }
            let content =
                u64::from_le_bytes(hasher.finalize().as_bytes()[..8].try_into().expect("8"));
            let rank = seen.entry(content).or_default();
            let key = if *rank == 0 {
                content
            } else {
                let mut hasher = blake3::Hasher::new();
                hasher.update(&content.to_le_bytes());
                hasher.update(&rank.to_le_bytes());
                u64::from_le_bytes(hasher.finalize().as_bytes()[..8].try_into().expect("8"))
            };
            *rank += 1;
            // 0 is reserved for "no document".
            key.max(1)
        })
        .collect()
}

/// Documents of the chunks of `file` whose keys are in `wanted`.
fn chunk_documents<'f>(
    file: &'f TextFile,
    stored: &StoredAnalysis,
    wanted: &HashSet<u64>,
) -> Vec<PreparedChunkDoc<'f>> {
    let text = file.text.as_deref().unwrap_or("");
    let lines = LineIndex::new(text);
    stored
        .analysis
        .chunks
        .iter()
        .zip(&stored.chunk_keys)
        .filter(|(_, key)| wanted.contains(key))
        .map(|(chunk, &chunk_key)| PreparedChunkDoc {
            chunk_key,
            path: &file.entry.path,
            symbols: chunk_symbols(chunk, &stored.analysis),
            body: slice_lines(text, &lines, chunk.start, chunk.end),
        })
        .collect()
}

/// The chunk's own name and the qualified names of the definitions that start inside it.
fn chunk_symbols(chunk: &Chunk, analysis: &FileAnalysis) -> String {
    let mut symbols = String::new();
    if let Some(name) = &chunk.name {
        symbols.push_str(name);
    }
    for definition in &analysis.definitions {
        if definition.start >= chunk.start
            && definition.start <= chunk.end
            && chunk.name.as_deref() != Some(definition.qualified_name.as_str())
        {
            if !symbols.is_empty() {
                symbols.push('\n');
            }
            symbols.push_str(&definition.qualified_name);
        }
    }
    symbols
}

/// Lines `start..=end` (1-based, see [`swex_text::lines`]) of `text`, terminators included,
/// clamped to the text.
fn slice_lines<'t>(text: &'t str, lines: &LineIndex, start: u32, end: u32) -> &'t str {
    &text[lines.byte_range(start, end)]
}

fn count_read(cache: &mut CacheStats, fast: bool) {
    if fast {
        cache.stat_fast_path += 1;
    } else {
        cache.files_read += 1;
    }
}

fn note_write_error(cache: &mut CacheStats, message: String) {
    cache.write_errors += 1;
    if cache.first_write_error.is_none() {
        cache.first_write_error = Some(message);
    }
}

/// The serde name of a unit enum variant (`Language::Cpp` → `cpp`).
fn kind_name<T: Serialize>(value: T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Identifies the analyser configuration in cache paths.
fn analysis_tag(options: &AnalyzeOptions) -> String {
    let description = format!("{}|{options:?}", lang_api::ANALYZER_VERSION);
    let hash = blake3::hash(description.as_bytes());
    format!("a{}-{}", lang_api::ANALYZER_VERSION, &hash.to_hex()[..8])
}

impl SnapshotIndex {
    /// The canonical snapshot root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Indexed files, in path order.
    pub fn files(&self) -> &[FileInfo] {
        &self.files
    }

    pub fn file(&self, path: &str) -> Option<&FileInfo> {
        self.by_path.get(path).map(|&i| &self.files[i as usize])
    }

    fn file_index(&self, path: &str) -> Result<usize, IndexError> {
        self.by_path
            .get(path)
            .map(|&i| i as usize)
            .ok_or_else(|| IndexError::UnknownFile(path.to_string()))
    }

    /// The analysis of an indexed file.
    pub fn analysis(&self, path: &str) -> Option<&FileAnalysis> {
        self.by_path.get(path).map(|&i| &*self.analyses[i as usize])
    }

    /// The chunks of an indexed file (ordered, covering every line).
    pub fn chunks_of(&self, path: &str) -> Option<&[Chunk]> {
        self.analysis(path).map(|a| a.chunks.as_slice())
    }

    /// Number of chunks; chunk ids are `0..num_chunks()`.
    pub fn num_chunks(&self) -> u32 {
        self.total_chunks
    }

    /// File index and chunk of a chunk id.
    fn locate(&self, chunk_id: u32) -> Option<(usize, &Chunk)> {
        if chunk_id >= self.total_chunks {
            return None;
        }
        let file = self.first_chunk.partition_point(|&first| first <= chunk_id) - 1;
        let chunk = self.analyses[file]
            .chunks
            .get((chunk_id - self.first_chunk[file]) as usize)?;
        Some((file, chunk))
    }

    /// Path and chunk of a chunk id.
    pub fn chunk(&self, chunk_id: u32) -> Option<(&str, &Chunk)> {
        self.locate(chunk_id)
            .map(|(file, chunk)| (self.files[file].path.as_str(), chunk))
    }

    /// A content key of a chunk: a 64-bit hash of its path, kind, name, symbols and text (and
    /// rank among identical chunks of its file), stable across snapshots that share the chunk;
    /// `None` for blank chunks, which have no lexical document. Caches of per-chunk data
    /// (embeddings) can use it.
    pub fn chunk_key(&self, chunk_id: u32) -> Option<u64> {
        self.chunk_keys
            .get(chunk_id as usize)
            .copied()
            .filter(|&k| k != NO_DOCUMENT)
    }

    /// The text of a chunk (read from the snapshot).
    pub fn chunk_text(&self, chunk_id: u32) -> Result<String, IndexError> {
        let (path, chunk) = self
            .chunk(chunk_id)
            .ok_or_else(|| IndexError::UnknownFile(format!("chunk #{chunk_id}")))?;
        Ok(self.read_lines(path, chunk.start, chunk.end)?.join("\n"))
    }

    /// Lines `start..=end` of an indexed file, without terminators, exactly as the benchmark sees
    /// them: the file decoded as UTF-8 with invalid bytes dropped (Python's `errors="ignore"`) and
    /// split like `str.splitlines()` (see [`swex_text::lines`]). `end` is clamped to the file,
    /// and `start > end` gives no lines.
    pub fn read_lines(&self, path: &str, start: u32, end: u32) -> Result<Vec<String>, IndexError> {
        self.file_index(path)?;
        let text = self.read_text(path)?;
        let start = start.max(1);
        if end < start {
            return Ok(Vec::new());
        }
        Ok(split_lines(&text)
            .into_iter()
            .skip(start as usize - 1)
            .take((end - start) as usize + 1)
            .map(str::to_owned)
            .collect())
    }

    /// The file's text as the benchmark reads it: UTF-8 with invalid bytes dropped. (The analyses
    /// saw replacement characters there instead; neither is a line boundary, so lines agree.)
    fn read_text(&self, path: &str) -> Result<String, IndexError> {
        let bytes = std::fs::read(self.root.join(path)).map_err(|source| IndexError::Read {
            path: path.to_string(),
            source,
        })?;
        Ok(match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(err) => {
                let mut text = String::with_capacity(err.as_bytes().len());
                for chunk in err.as_bytes().utf8_chunks() {
                    text.push_str(chunk.valid());
                }
                text
            }
        })
    }

    /// BM25 search over chunks (best first).
    pub fn lexical_search(
        &self,
        query: &LexicalQuery,
        limit: usize,
        filters: &SearchFilters,
    ) -> Result<Vec<ChunkHit>, IndexError> {
        let allowed: Option<Vec<bool>> = (!filters.is_empty()).then(|| {
            self.files
                .iter()
                .map(|f| {
                    filters
                        .path_glob
                        .as_ref()
                        .is_none_or(|g| g.is_match(&f.path))
                        && (filters.languages.is_empty()
                            || f.language.is_some_and(|l| filters.languages.contains(&l)))
                })
                .collect()
        });
        let accept = |chunk_id: u32| -> bool {
            let Some((file, chunk)) = self.locate(chunk_id) else {
                return false;
            };
            allowed.as_ref().is_none_or(|a| a[file])
                && (filters.kinds.is_empty() || filters.kinds.contains(&chunk.kind))
        };
        let hits = self
            .lexical
            .search(query, &self.lexical_config, limit, &accept)?;
        Ok(hits
            .into_iter()
            .filter_map(|(chunk_id, score)| {
                let (path, chunk) = self.chunk(chunk_id)?;
                Some(ChunkHit {
                    path: path.to_string(),
                    start: chunk.start,
                    end: chunk.end,
                    kind: chunk.kind,
                    name: chunk.name.clone(),
                    score,
                    chunk_id,
                })
            })
            .collect())
    }

    /// [`SnapshotIndex::lexical_search`] for free text (issue text, a phrase), through the issue
    /// query builder.
    pub fn search_text(
        &self,
        text: &str,
        limit: usize,
        filters: &SearchFilters,
    ) -> Result<Vec<ChunkHit>, IndexError> {
        let query = LexicalQuery::from_text(text, &self.lexical_config);
        self.lexical_search(&query, limit, filters)
    }

    /// BM25 search for weighted terms (the issue parser's, possibly reweighted by the caller).
    pub fn search_terms(
        &self,
        terms: &[swex_issue::WeightedTerm],
        limit: usize,
        filters: &SearchFilters,
    ) -> Result<Vec<ChunkHit>, IndexError> {
        let query = LexicalQuery::from_terms(terms, &self.lexical_config);
        self.lexical_search(&query, limit, filters)
    }

    /// The code graph of the snapshot (built on first call, then shared).
    pub fn graph(&self) -> &CodeGraph {
        self.graph.get_or_init(|| {
            let files: Vec<(&str, &FileAnalysis)> = self
                .files
                .iter()
                .zip(&self.analyses)
                .map(|(f, a)| (f.path.as_str(), &**a))
                .collect();
            CodeGraph::build(&files)
        })
    }

    /// The position in [`SnapshotIndex::files`] of a chunk's file.
    pub(crate) fn chunk_file(&self, chunk_id: u32) -> Option<usize> {
        self.locate(chunk_id).map(|(file, _)| file)
    }

    /// The snapshot's lexical view (postings and vocabulary for ranked search).
    pub(crate) fn lexical_view(&self) -> &PoolView {
        &self.lexical
    }

    /// The tables of ranked search, built on first use.
    pub(crate) fn search_aids(&self) -> &crate::search::SearchAids {
        self.search_aids
            .get_or_init(|| crate::search::SearchAids::build(self))
    }

    /// Whether [`SnapshotIndex::graph`] has been built already.
    pub fn graph_is_built(&self) -> bool {
        self.graph.get().is_some()
    }

    /// Definitions named `name`: bare (`save`), qualified (`Model.save`; `.`, `::`, `#` and `\`
    /// interchangeable) or a dotted suffix of a module-qualified name, as
    /// [`CodeGraph::definitions_named`] resolves them. In path then line order.
    pub fn definitions(&self, name: &str) -> Vec<DefinitionHit> {
        let Some(query) = crate::graph::DefinitionQuery::new(name) else {
            return Vec::new();
        };
        let table = self.definition_table.get_or_init(|| {
            let mut table: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
            for (file, analysis) in self.analyses.iter().enumerate() {
                for (index, definition) in analysis.definitions.iter().enumerate() {
                    table
                        .entry(definition.name.clone())
                        .or_default()
                        .push((file as u32, index as u32));
                }
            }
            table
        });
        let Some(candidates) = table.get(query.bare()) else {
            return Vec::new();
        };
        let mut hits: Vec<DefinitionHit> = candidates
            .iter()
            .filter_map(|&(file, index)| {
                let path = &self.files[file as usize].path;
                let definition = &self.analyses[file as usize].definitions[index as usize];
                query
                    .matches(&definition.qualified_name, path)
                    .then(|| DefinitionHit {
                        path: path.clone(),
                        start: definition.start,
                        end: definition.end,
                        kind: definition.kind,
                        name: definition.name.clone(),
                        qualified_name: definition.qualified_name.clone(),
                    })
            })
            .collect();
        hits.sort_by(|a, b| a.path.cmp(&b.path).then(a.start.cmp(&b.start)));
        hits
    }

    /// Indexed files whose path ends with the normalised hint (whole path components), best
    /// (longest hint match, then shortest path) first. Turns traceback paths into snapshot paths.
    pub fn resolve_path(&self, hint: &str) -> Vec<&str> {
        let hint = swex_issue::paths::normalize_path_hint(hint);
        let mut components: Vec<&str> = hint.split('/').filter(|c| !c.is_empty()).collect();
        while !components.is_empty() {
            let suffix = components.join("/");
            let mut found: Vec<&str> = self
                .files
                .iter()
                .map(|f| f.path.as_str())
                .filter(|p| *p == suffix || p.ends_with(&format!("/{suffix}")))
                .collect();
            if !found.is_empty() {
                found.sort_by_key(|p| (p.len(), *p));
                return found;
            }
            // Drop leading components that are outside the repository (`/home/u/proj/`).
            components.remove(0);
            if components.len() == 1 && !hint.is_empty() {
                // A bare file name is still a useful hint; stop after trying it.
                let name = components[0];
                let mut found: Vec<&str> = self
                    .files
                    .iter()
                    .map(|f| f.path.as_str())
                    .filter(|p| p.rsplit('/').next() == Some(name))
                    .collect();
                found.sort_by_key(|p| (p.len(), *p));
                return found;
            }
        }
        Vec::new()
    }

    /// Lines matching `pattern` (a regular expression), in path then line order, at most `limit`;
    /// `path_glob` restricts the files.
    pub fn grep(
        &self,
        pattern: &str,
        path_glob: Option<&str>,
        limit: usize,
    ) -> Result<Vec<GrepHit>, IndexError> {
        let regex = regex::Regex::new(pattern)?;
        // A match inside a line is a match in the whole text, so the whole text can rule a file
        // out at once, except for anchored patterns: `^`/`$`/`\A`/`\z` mean line edges here.
        let whole_text_prefilter = !(pattern.contains('^')
            || pattern.contains('$')
            || pattern.contains("\\A")
            || pattern.contains("\\z"));
        let glob = path_glob.map(Glob::new).transpose()?;
        let candidates: Vec<&FileInfo> = self
            .files
            .iter()
            .filter(|f| glob.as_ref().is_none_or(|g| g.is_match(&f.path)))
            .collect();
        let mut hits = Vec::new();
        // Batches in path order, searched in parallel, stop as soon as the limit is reached.
        for batch in candidates.chunks(128) {
            if hits.len() >= limit {
                break;
            }
            let found: Vec<Vec<GrepHit>> = batch
                .par_iter()
                .map(|file| {
                    let Ok(text) = self.read_text(&file.path) else {
                        return Vec::new();
                    };
                    if whole_text_prefilter && !regex.is_match(&text) {
                        return Vec::new();
                    }
                    let mut out = Vec::new();
                    for (n, line) in split_lines(&text).into_iter().enumerate() {
                        if out.len() >= limit {
                            break;
                        }
                        if regex.is_match(line) {
                            out.push(GrepHit {
                                path: file.path.clone(),
                                line: n as u32 + 1,
                                text: truncate(line, GREP_LINE_MAX).to_string(),
                            });
                        }
                    }
                    out
                })
                .collect();
            hits.extend(found.into_iter().flatten());
        }
        hits.truncate(limit);
        Ok(hits)
    }

    /// Files not indexed or indexed with a caveat, in path order.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    pub fn stats(&self) -> &IndexStats {
        &self.stats
    }
}

fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slicing_lines() {
        let check = |text: &str, start: u32, end: u32, expected: &str| {
            let lines = LineIndex::new(text);
            assert_eq!(
                slice_lines(text, &lines, start, end),
                expected,
                "{text:?} {start}-{end}"
            );
        };
        check("a\nbb\nccc\n", 1, 1, "a\n");
        check("a\nbb\nccc\n", 2, 3, "bb\nccc\n");
        check("a\nbb\nccc\n", 3, 99, "ccc\n");
        check("a\nbb\nccc\n", 4, 5, "");
        check("x\ny", 2, 2, "y");
        check("x\x0cy\rz", 2, 3, "y\rz");
    }
}
