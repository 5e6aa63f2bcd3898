//! Assembly: [`Engine::open`] turns a snapshot directory into a [`SnapshotIndex`], reusing the
//! cache ([`crate::cache`]) wherever content has not changed.
//!
//! Open, step by step:
//! 1. **Walk** the tree ([`crate::scan::walk`]).
//! 2. **Read**: a file whose stat stamp matches the root's manifest keeps its recorded content
//!    hash without being read (the stat fast path); others are read, checked for binary content and
//!    hashed.
//! 3. **Analyse**: analyses are looked up by file key (path + content hash) and computed only on a
//!    miss ([`crate::lang::analyze`]), then stored.
//! 4. **Lexical**: the snapshot joins the repository's chunk pool ([`crate::lexical::pool`]) —
//!    the one sharing most file versions with it, or a new one — and indexes only the file
//!    versions the pool lacks, under the pool's lock. A damaged pool is rebuilt.
//! 5. The manifest is rewritten, and the [`SnapshotIndex`] is ready. The code graph is built on
//!    first use ([`SnapshotIndex::graph`]), since only some explorers need it.
//!
//! A [`SnapshotIndex`] is immutable, `Send + Sync` and meant to be shared as `Arc`. File text is
//! read from the snapshot directory on demand ([`SnapshotIndex::read_lines`], `grep`), so the
//! directory must stay in place while the index is used.
//!
//! The dense index (task E, `crate::dense`) attaches here later: it needs stable chunk identities
//! ([`SnapshotIndex::chunk_key`]) and chunk texts ([`SnapshotIndex::chunk_text`]).
//!
//! This module does no printing; long work is reported through [`Progress`].

pub mod glob;
pub(crate) mod interim_lang;

/// The analysers' API (`detect_language`, `analyze`, `AnalyzeOptions`, `ANALYZER_VERSION`,
/// `python_line_count`), through one name so that the whole engine uses the same one.
pub(crate) use interim_lang as lang_api;

pub use lang_api::AnalyzeOptions;

use crate::analysis::{Chunk, ChunkKind, FileAnalysis, Language};
use crate::cache::{CacheLayout, FileKey, Lookup, ManifestFile, RootManifest};
use crate::lexical::pool::{ChunkDoc, FileChunks, LexicalPool, PoolView, WriterOptions};
use crate::lexical::{LexicalConfig, LexicalError, LexicalQuery};
use crate::scan::{
    ContentHash, Diagnostic, DiagnosticKind, FileEntry, Loaded, ScanError, ScanOptions,
};
use glob::{Glob, GlobError};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Version of the lexical analyzer and pool schema; part of the pool directory name.
pub const TOKENIZER_VERSION: u32 = 1;

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
}

/// Stages of [`Engine::open`], in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Walk,
    Read,
    Analyze,
    Index,
    Graph,
}

/// Receives progress of long work; called from worker threads.
pub trait Progress: Send + Sync {
    fn report(&self, stage: Stage, done: u64, total: u64);
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

/// Longest line text returned by grep.
pub const GREP_LINE_MAX: usize = 400;

/// Restricts lexical search results. Empty lists mean "any".
#[derive(Debug, Clone, Default)]
pub struct SearchFilters {
    pub path_glob: Option<Glob>,
    pub languages: Vec<Language>,
    pub kinds: Vec<ChunkKind>,
}

impl SearchFilters {
    fn is_empty(&self) -> bool {
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
    pub cache: CacheStats,
    pub pool: PoolStats,
    pub timings_ms: Timings,
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
    keys: Vec<FileKey>,
    by_path: HashMap<String, u32>,
    analyses: Vec<FileAnalysis>,
    /// First chunk id of each file; chunk ids are dense, in file order then chunk order.
    first_chunk: Vec<u32>,
    total_chunks: u32,
    /// Bare definition name → (file, definition index).
    definitions_by_name: HashMap<String, Vec<(u32, u32)>>,
    lexical: PoolView,
    lexical_config: LexicalConfig,
    diagnostics: Vec<Diagnostic>,
    stats: IndexStats,
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
        if done % 256 == 0 || done == self.total {
            self.progress.report(self.stage, done, self.total);
        }
    }
}

impl Engine {
    pub fn new(config: EngineConfig) -> Engine {
        let tag = analysis_tag(&config.analyze);
        let layout = CacheLayout::new(&config.cache_dir, &tag, TOKENIZER_VERSION);
        Engine {
            config,
            layout,
            pools: Mutex::new(HashMap::new()),
        }
    }

    /// An engine on an explicit cache layout (tests of format-version bumps).
    pub fn with_layout(config: EngineConfig, layout: CacheLayout) -> Engine {
        Engine {
            config,
            layout,
            pools: Mutex::new(HashMap::new()),
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

        // 1. Walk.
        let t = Instant::now();
        progress.report(Stage::Walk, 0, 0);
        let walked = crate::scan::walk(&canonical, &self.config.scan)?;
        let mut diagnostics = walked.diagnostics;
        stats.timings_ms.walk = ms_since(t);

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

        // 3. Analyse.
        let t = Instant::now();
        let store = self.layout.analyses();
        let invalid = AtomicUsize::new(0);
        let write_errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let ticker = Ticker {
            progress,
            stage: Stage::Analyze,
            total: text_files.len() as u64,
            done: AtomicU64::new(0),
        };
        let analysed: Vec<Result<(TextFile, FileAnalysis, bool), IndexError>> = text_files
            .into_par_iter()
            .map(|mut file| {
                let key = FileKey::new(&file.entry.path, &file.content_hash);
                let cached = match store.get(&key) {
                    Lookup::Hit(analysis) => Some(analysis),
                    Lookup::Miss => None,
                    Lookup::Invalid(_) => {
                        invalid.fetch_add(1, Ordering::Relaxed);
                        None
                    }
                };
                let result = match cached {
                    Some(analysis) => (file, analysis, true),
                    None => {
                        self.ensure_text(&mut file, true)?;
                        let analysis = lang_api::analyze(
                            &file.entry.path,
                            file.language,
                            file.text.as_deref().unwrap_or(""),
                            &self.config.analyze,
                        );
                        let key = FileKey::new(&file.entry.path, &file.content_hash);
                        if let Err(err) = store.put(&key, &analysis) {
                            write_errors
                                .lock()
                                .expect("write errors")
                                .push(err.to_string());
                        }
                        (file, analysis, false)
                    }
                };
                ticker.tick();
                Ok(result)
            })
            .collect();
        let mut files = Vec::with_capacity(analysed.len());
        for result in analysed {
            let (file, analysis, reused) = result?;
            if reused {
                stats.cache.analyses_reused += 1;
            } else {
                stats.cache.analyses_computed += 1;
            }
            if analysis.has_syntax_errors {
                diagnostics.push(Diagnostic {
                    path: file.entry.path.clone(),
                    kind: DiagnosticKind::SyntaxErrors,
                    message: "syntax errors; chunks may be coarse".into(),
                });
            }
            files.push((file, analysis));
        }
        stats.cache.invalid_entries += invalid.into_inner();
        stats.timings_ms.analyze = ms_since(t);

        // 4. Lexical pool.
        let t = Instant::now();
        let keys: Vec<FileKey> = files
            .iter()
            .map(|(f, _)| FileKey::new(&f.entry.path, &f.content_hash))
            .collect();
        let mut first_chunk = Vec::with_capacity(files.len());
        let mut next_chunk = 0u32;
        let mut pool_files: HashMap<u64, FileChunks> = HashMap::with_capacity(files.len());
        let mut file_of_pool_key: HashMap<u64, usize> = HashMap::with_capacity(files.len());
        for (i, (_, analysis)) in files.iter().enumerate() {
            first_chunk.push(next_chunk);
            let count = analysis.chunks.len() as u32;
            let pool_key = keys[i].pool_key();
            if count > 0 {
                if pool_files
                    .insert(
                        pool_key,
                        FileChunks {
                            first_chunk_id: next_chunk,
                            chunk_count: count,
                        },
                    )
                    .is_some()
                {
                    return Err(LexicalError::Corrupt {
                        path: self.layout.pools().dir().display().to_string(),
                        message: format!("64-bit file key collision at {}", files[i].0.entry.path),
                    }
                    .into());
                }
                file_of_pool_key.insert(pool_key, i);
            }
            next_chunk += count;
        }
        let snapshot_keys: HashSet<u64> = pool_files.keys().copied().collect();
        let (pool_id, pool) = self.choose_pool(
            manifest.as_ref().and_then(|m| m.pool.as_deref()),
            &snapshot_keys,
            &mut stats.cache,
        )?;
        let mut view = self.view_or_repair(&pool_id, &pool, &pool_files, &mut stats.cache)?;
        if !view.missing_files().is_empty() {
            let registry = self.layout.pools();
            let _lock = registry
                .lock_pool(&pool_id)
                .map_err(|source| IndexError::Cache {
                    path: registry.dir().display().to_string(),
                    source,
                })?;
            pool.reload()?;
            view = self.view_or_repair(&pool_id, &pool, &pool_files, &mut stats.cache)?;
            let missing: Vec<u64> = view.missing_files().to_vec();
            if !missing.is_empty() {
                let mut claimed = registry.keys(&pool_id);
                claimed.extend(missing.iter().copied());
                if let Err(err) = registry.write_keys(&pool_id, &claimed) {
                    note_write_error(&mut stats.cache, err.to_string());
                }
                let missing_files: Vec<usize> =
                    missing.iter().map(|k| file_of_pool_key[k]).collect();
                // Write through a handle opened under the lock: tantivy's list of managed files
                // is read at open, and another process may have committed since ours was opened.
                let writer_pool = LexicalPool::open_or_create(pool.dir())?;
                stats.pool.docs_added =
                    self.index_files(&writer_pool, &mut files, &missing_files, progress)?;
                pool.reload()?;
                view = pool.view(&pool_files)?;
                if !view.missing_files().is_empty() {
                    return Err(LexicalError::Corrupt {
                        path: pool.dir().display().to_string(),
                        message: format!(
                            "{} file versions still missing after indexing",
                            view.missing_files().len()
                        ),
                    }
                    .into());
                }
            }
        }
        stats.pool.id = pool_id.clone();
        stats.pool.docs_total = pool.num_docs();
        stats.pool.snapshot_docs = view.num_docs();
        stats.pool.segments = pool.num_segments();
        stats.pool.size_bytes = pool.size_on_disk();
        stats.timings_ms.lexical = ms_since(t);

        // 5. Manifest and the index itself.
        let written_at_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64);
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
        if manifest.as_ref() != Some(&new_manifest)
            && let Err(err) = manifests.put(&canonical, &new_manifest)
        {
            note_write_error(&mut stats.cache, err.to_string());
        }
        for message in write_errors.into_inner().expect("write errors") {
            note_write_error(&mut stats.cache, message);
        }

        diagnostics.sort_by(|a, b| a.path.cmp(&b.path).then(a.kind.cmp(&b.kind)));
        for diagnostic in &diagnostics {
            *stats
                .diagnostics_by_kind
                .entry(kind_name(diagnostic.kind))
                .or_default() += 1;
        }
        let mut infos = Vec::with_capacity(files.len());
        let mut analyses = Vec::with_capacity(files.len());
        let mut by_path = HashMap::with_capacity(files.len());
        let mut definitions_by_name: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        for (i, (file, analysis)) in files.into_iter().enumerate() {
            let language_name = file
                .language
                .map_or("text".to_string(), |l| kind_name(l).to_string());
            *stats.files_by_language.entry(language_name).or_default() += 1;
            stats.bytes += file.entry.stamp.size;
            stats.lines += u64::from(analysis.line_count);
            stats.chunks += analysis.chunks.len();
            stats.definitions += analysis.definitions.len();
            for (d, definition) in analysis.definitions.iter().enumerate() {
                definitions_by_name
                    .entry(definition.name.clone())
                    .or_default()
                    .push((i as u32, d as u32));
            }
            by_path.insert(file.entry.path.clone(), i as u32);
            infos.push(FileInfo {
                path: file.entry.path,
                language: file.language,
                size: file.entry.stamp.size,
                line_count: analysis.line_count,
                content_hash: file.content_hash,
            });
            analyses.push(analysis);
        }
        stats.files = infos.len();
        stats.timings_ms.total = ms_since(started);
        Ok(Arc::new(SnapshotIndex {
            root: canonical,
            files: infos,
            keys,
            by_path,
            analyses,
            first_chunk,
            total_chunks: next_chunk,
            definitions_by_name,
            lexical: view,
            lexical_config: self.config.lexical.clone(),
            diagnostics,
            stats,
        }))
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

    /// The file's text, reading it if this open has not. With `may_change`, a file whose content
    /// differs from the recorded hash takes the new content (nothing depends on the old one yet);
    /// without, it is an error.
    fn ensure_text<'f>(
        &self,
        file: &'f mut TextFile,
        may_change: bool,
    ) -> Result<&'f str, IndexError> {
        if file.text.is_none() {
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
                }
                Loaded::Skipped(_) => {
                    return Err(IndexError::SnapshotChanged {
                        path: file.entry.path.clone(),
                    });
                }
            }
        }
        Ok(file.text.as_deref().expect("text loaded"))
    }

    /// The pool for a snapshot with file keys `keys`: the manifest's pool if it still exists, else
    /// the pool holding most of them (at least [`POOL_REUSE_MIN_OVERLAP`]), else a new one.
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
        if let Some(id) = previous
            && registry.pool_ids().iter().any(|p| p == id)
        {
            let pool = self.open_pool(id, cache_stats)?;
            return Ok((id.to_string(), pool));
        }
        let id = {
            let _lock = registry.lock_registry().map_err(cache_err)?;
            let mut best: Option<(usize, String)> = None;
            for id in registry.pool_ids() {
                let pool_keys = registry.keys(&id);
                let overlap = keys.iter().filter(|k| pool_keys.contains(k)).count();
                if best.as_ref().is_none_or(|(b, _)| overlap > *b) {
                    best = Some((overlap, id));
                }
            }
            match best {
                Some((overlap, id))
                    if overlap > 0
                        && overlap as f64 >= POOL_REUSE_MIN_OVERLAP * keys.len() as f64 =>
                {
                    id
                }
                _ => {
                    let id = registry.new_pool_id();
                    // Claim the keys now so a concurrent open of the same repository joins this
                    // pool instead of starting its own.
                    registry.write_keys(&id, keys).map_err(cache_err)?;
                    id
                }
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
            .push(format!("pool {id}: {reason}"));
        std::fs::remove_dir_all(&dir).map_err(|source| IndexError::Cache {
            path: dir.display().to_string(),
            source,
        })?;
        Ok(LexicalPool::open_or_create(&dir)?)
    }

    /// The snapshot's view of `pool`; a pool whose documents contradict the analyses (which can
    /// only come from damage) is rebuilt and the view retried once.
    fn view_or_repair(
        &self,
        id: &str,
        pool: &Arc<LexicalPool>,
        files: &HashMap<u64, FileChunks>,
        cache_stats: &mut CacheStats,
    ) -> Result<PoolView, IndexError> {
        match pool.view(files) {
            Ok(view) => Ok(view),
            Err(LexicalError::Corrupt { message, .. }) => {
                self.pools.lock().expect("pools").remove(id);
                let repaired = Arc::new(self.recreate_pool(id, message, cache_stats)?);
                self.pools
                    .lock()
                    .expect("pools")
                    .insert(id.to_string(), repaired.clone());
                Ok(repaired.view(files)?)
            }
            Err(err) => Err(err.into()),
        }
    }

    /// Adds the chunks of `which` files to the pool.
    fn index_files(
        &self,
        pool: &LexicalPool,
        files: &mut [(TextFile, FileAnalysis)],
        which: &[usize],
        progress: &dyn Progress,
    ) -> Result<u64, IndexError> {
        let wanted: HashSet<usize> = which.iter().copied().collect();
        // Texts of files whose analysis came from the cache were not necessarily read.
        files
            .par_iter_mut()
            .enumerate()
            .filter(|(i, _)| wanted.contains(i))
            .try_for_each(|(_, (file, _))| self.ensure_text(file, false).map(|_| ()))?;
        let mut sorted: Vec<usize> = which.to_vec();
        sorted.sort_unstable();
        let total = sorted.len() as u64;
        let mut writer = pool.writer(&self.config.writer)?;
        let mut done = 0u64;
        // Batches bound the memory of prepared documents.
        for batch in sorted.chunks(512) {
            let docs: Vec<OwnedChunkDoc> = batch
                .par_iter()
                .flat_map_iter(|&i| {
                    let (file, analysis) = &files[i];
                    chunk_docs(file, analysis)
                })
                .collect();
            let borrowed: Vec<ChunkDoc<'_>> = docs.iter().map(OwnedChunkDoc::borrow).collect();
            writer.add(&borrowed)?;
            done += batch.len() as u64;
            progress.report(Stage::Index, done, total);
        }
        let added = writer.commit()?;
        Ok(added)
    }
}

/// A chunk document with owned symbol text (bodies borrow nothing: prepared in parallel).
struct OwnedChunkDoc {
    file_key: u64,
    chunk: u32,
    path: String,
    symbols: String,
    body: String,
}

impl OwnedChunkDoc {
    fn borrow(&self) -> ChunkDoc<'_> {
        ChunkDoc {
            file_key: self.file_key,
            chunk: self.chunk,
            path: &self.path,
            symbols: &self.symbols,
            body: &self.body,
        }
    }
}

fn chunk_docs(file: &TextFile, analysis: &FileAnalysis) -> Vec<OwnedChunkDoc> {
    let text = file.text.as_deref().unwrap_or("");
    let starts = line_starts(text);
    let key = FileKey::new(&file.entry.path, &file.content_hash).pool_key();
    analysis
        .chunks
        .iter()
        .enumerate()
        .map(|(ord, chunk)| OwnedChunkDoc {
            file_key: key,
            chunk: ord as u32,
            path: file.entry.path.clone(),
            symbols: chunk_symbols(chunk, analysis),
            body: slice_lines(text, &starts, chunk.start, chunk.end).to_string(),
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

/// Byte offset of the start of each `\n`-delimited line.
fn line_starts(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(memchr_newlines(text));
    if starts.last() == Some(&text.len()) && text.len() > 0 {
        starts.pop();
    }
    starts
}

fn memchr_newlines(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.bytes()
        .enumerate()
        .filter(|&(_, b)| b == b'\n')
        .map(|(i, _)| i + 1)
}

/// Lines `start..=end` (1-based, `\n`-delimited) of `text`, clamped to the text.
fn slice_lines<'t>(text: &'t str, starts: &[usize], start: u32, end: u32) -> &'t str {
    let first = (start.max(1) - 1) as usize;
    if first >= starts.len() || end < start {
        return "";
    }
    let from = starts[first];
    let to = starts.get(end as usize).copied().unwrap_or(text.len());
    &text[from..to.max(from)]
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
        self.by_path.get(path).map(|&i| &self.analyses[i as usize])
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

    /// A content-addressed identity of a chunk, stable across snapshots that share the file
    /// version: (file key bytes, ordinal in the file). Caches of per-chunk data (embeddings) use it.
    pub fn chunk_key(&self, chunk_id: u32) -> Option<([u8; 32], u32)> {
        self.locate(chunk_id)
            .map(|(file, _)| (self.keys[file].0, chunk_id - self.first_chunk[file]))
    }

    /// The text of a chunk (read from the snapshot).
    pub fn chunk_text(&self, chunk_id: u32) -> Result<String, IndexError> {
        let (path, chunk) = self
            .chunk(chunk_id)
            .ok_or_else(|| IndexError::UnknownFile(format!("chunk #{chunk_id}")))?;
        Ok(self.read_lines(path, chunk.start, chunk.end)?.join("\n"))
    }

    /// Lines `start..=end` (1-based, `\n`-delimited, without line terminators) of an indexed file;
    /// `end` is clamped to the file, and `start > end` gives no lines.
    pub fn read_lines(&self, path: &str, start: u32, end: u32) -> Result<Vec<String>, IndexError> {
        self.file_index(path)?;
        let text = self.read_text(path)?;
        let start = start.max(1);
        if end < start {
            return Ok(Vec::new());
        }
        // A final newline ends the last line; it does not start another one.
        let body = text.strip_suffix('\n').unwrap_or(&text);
        if body.is_empty() && text.len() <= 1 {
            return Ok(Vec::new());
        }
        Ok(body
            .split('\n')
            .skip(start as usize - 1)
            .take((end - start) as usize + 1)
            .map(|line| line.strip_suffix('\r').unwrap_or(line).to_string())
            .collect())
    }

    fn read_text(&self, path: &str) -> Result<String, IndexError> {
        let bytes = std::fs::read(self.root.join(path)).map_err(|source| IndexError::Read {
            path: path.to_string(),
            source,
        })?;
        Ok(match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
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

    /// Definitions named `name`: a bare name (`save`), a qualified name (`Model.save`), or a
    /// dotted/`::` suffix of one (`Model.save` also finds `Outer.Model.save`). In path order.
    pub fn definitions(&self, name: &str) -> Vec<DefinitionHit> {
        let wanted = name.replace("::", ".");
        let bare = wanted.rsplit('.').next().unwrap_or(&wanted);
        let Some(candidates) = self.definitions_by_name.get(bare) else {
            return Vec::new();
        };
        let mut hits: Vec<DefinitionHit> = candidates
            .iter()
            .filter_map(|&(file, d)| {
                let definition = &self.analyses[file as usize].definitions[d as usize];
                let qualified = definition.qualified_name.replace("::", ".");
                let matches = wanted == bare
                    || qualified == wanted
                    || qualified.ends_with(&format!(".{wanted}"));
                matches.then(|| DefinitionHit {
                    path: self.files[file as usize].path.clone(),
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
        let hint = crate::lexical::query::normalize_path_hint(hint);
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
                    if !regex.is_match(&text) {
                        return Vec::new();
                    }
                    let mut out = Vec::new();
                    for (n, line) in text.split('\n').enumerate() {
                        if out.len() >= limit {
                            break;
                        }
                        let line = line.strip_suffix('\r').unwrap_or(line);
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
        let text = "a\nbb\nccc\n";
        let starts = line_starts(text);
        assert_eq!(starts, vec![0, 2, 5]);
        assert_eq!(slice_lines(text, &starts, 1, 1), "a\n");
        assert_eq!(slice_lines(text, &starts, 2, 3), "bb\nccc\n");
        assert_eq!(slice_lines(text, &starts, 3, 99), "ccc\n");
        assert_eq!(slice_lines(text, &starts, 4, 5), "");
        let no_final_newline = "x\ny";
        assert_eq!(
            slice_lines(no_final_newline, &line_starts(no_final_newline), 2, 2),
            "y"
        );
    }
}
