//! The index build: [`Engine::open`] as a sequence of named steps over explicit state.
//!
//! [`Build`] carries what every step shares (the engine, the canonical root, progress, the
//! diagnostics and statistics gathered so far); each step takes what the previous ones produced
//! and returns what the next ones need, so that each can be run and tested alone:
//!
//! 1. [`Build::walk`]: the files of the tree ([`crate::scan::walk`]), ignore rules applied, and
//!    the stamps [`Engine::refresh`] later compares ([`TreeState`]).
//! 2. [`Build::manifest`]: the root's stat manifest from the last open, if any.
//! 3. [`Build::read`]: a file whose stat stamp matches the manifest keeps its recorded content
//!    hash without being read (the stat fast path); others are read, checked for binary content
//!    and hashed → [`ReadFiles`].
//! 4. [`Build::pool`]: the snapshot joins the repository's pool — the one whose recorded file
//!    versions overlap most with its own, or a new one ([`crate::cache`]). The pool's lexical
//!    index is opened (and verified) while step 5 runs → [`ChosenPool`].
//! 5. [`Build::analyse`]: analyses are looked up in the pool's packs by file key (path + content
//!    hash) and computed only on a miss ([`crate::lang::analyze`]); new ones go into one new pack.
//!    Each chunk gets a content key (path, kind, name, symbols, text).
//! 6. [`ChunkTable::of`]: snapshot-wide chunk ids for every chunk key.
//! 7. [`Build::lexical`]: chunks whose keys the pool's index lacks are indexed, under the pool's
//!    lock ([`crate::lexical::pool`]); a changed file costs only its changed chunks; a damaged pool
//!    is rebuilt → the snapshot's [`PoolView`].
//! 8. [`Build::write_manifest`] (when anything changed, or stamps too fresh to trust before are
//!    old enough now), then [`Build::finish`] hands what the steps gathered to
//!    [`Engine::assemble`], which refreshes use too.
//!
//! [`Engine::refresh`] ([`super::refresh`]) reuses the per-file work of these steps on the files
//! that changed: [`Engine::read_one`], [`analyse_text`], [`ChunkTable::new`],
//! [`Engine::index_chunks`], and the assembly [`Engine::assemble`].
//!
//! This module does no printing; long work is reported through [`Progress`]. Between steps, per
//! analysed file and per batch of lexical documents, the build asks [`Progress::is_cancelled`]
//! and stops with [`IndexError::Cancelled`]; nothing half-done is committed.

use super::refresh::TreeState;
use super::{
    CacheStats, Engine, FileInfo, IndexError, IndexParts, IndexStats, Progress, SnapshotIndex,
    Stage, stop_if_cancelled,
};
use crate::analysis::{Chunk, FileAnalysis, Language};
use crate::cache::{
    AnalysisPacks, FileKey, KeyMap, KeySet, Lookup, MAX_PACKS, ManifestFile, RootManifest,
    StoredAnalysis, is_read_only,
};
use crate::lexical::LexicalError;
use crate::lexical::pool::{ChunkDoc, LexicalPool, PoolView};
use crate::scan::{
    CheckoutRoot, ContentHash, Diagnostic, DiagnosticKind, FileEntry, Loaded, ScanError,
};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;
use swex_text::LineIndex;

/// A pool is reused for a snapshot when it holds at least this share of the snapshot's file
/// versions; otherwise the snapshot starts a new pool (another repository, or a far-away one).
const POOL_REUSE_MIN_OVERLAP: f64 = 0.3;

/// The chunk key of chunks that get no lexical document (blank ones).
pub(super) const NO_DOCUMENT: u64 = 0;

/// The state one open carries from step to step.
pub(crate) struct Build<'e> {
    engine: &'e Engine,
    progress: &'e dyn Progress,
    /// The canonical snapshot root.
    root: PathBuf,
    /// The one reader of its files.
    checkout: CheckoutRoot,
    started: Instant,
    diagnostics: Vec<Diagnostic>,
    stats: IndexStats,
}

/// What step [`Build::walk`] listed: the files, and the stamps a refresh compares.
pub(crate) struct Listing {
    pub(crate) files: Vec<FileEntry>,
    pub(crate) tree: TreeState,
}

/// What step [`Build::read`] learnt about a text file.
pub(crate) struct TextFile {
    pub(crate) entry: FileEntry,
    pub(crate) content_hash: ContentHash,
    pub(crate) language: Option<Language>,
    pub(crate) lossy: bool,
    /// Kept from the read, if the file was read in this open.
    pub(crate) text: Option<String>,
}

/// The files of the snapshot after [`Build::read`]: text files to index, binary ones to remember.
pub(crate) struct ReadFiles {
    pub(crate) text: Vec<TextFile>,
    pub(crate) binary: Vec<FileEntry>,
}

/// A text file and its analysis (with the chunks' lexical keys).
pub(crate) type AnalysedFile = (TextFile, StoredAnalysis);

/// The repository pool a snapshot joined ([`Build::pool`]).
pub(crate) struct ChosenPool {
    pub(crate) id: String,
    pub(crate) pool: Arc<LexicalPool>,
}

/// Snapshot-wide chunk ids: dense, in file order then chunk order.
pub(crate) struct ChunkTable {
    /// First chunk id of each file.
    pub(crate) first_chunk: Vec<u32>,
    /// Lexical key of every chunk ([`NO_DOCUMENT`] for blank ones), by chunk id.
    pub(crate) keys: Vec<u64>,
    /// Chunk id of every key but [`NO_DOCUMENT`].
    pub(crate) ids: KeyMap<u32>,
}

/// What [`Engine::read_one`] made of one listed file (with whether the manifest answered).
pub(super) enum ReadOutcome {
    Text(TextFile, Option<Diagnostic>, bool),
    Binary(FileEntry, Diagnostic, bool),
    Skipped(Diagnostic),
}

pub(super) fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

/// Ticks a progress counter from worker threads, reporting every 256 items and the last.
struct Ticker<'a> {
    progress: &'a dyn Progress,
    stage: Stage,
    total: u64,
    done: AtomicU64,
}

impl Ticker<'_> {
    fn new(progress: &dyn Progress, stage: Stage, total: usize) -> Ticker<'_> {
        Ticker {
            progress,
            stage,
            total: total as u64,
            done: AtomicU64::new(0),
        }
    }

    fn tick(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if done.is_multiple_of(256) || done == self.total {
            self.progress.report(self.stage, done, self.total);
        }
    }
}

impl<'e> Build<'e> {
    /// Starts an open of `root` (which must exist).
    pub(crate) fn new(
        engine: &'e Engine,
        root: &Path,
        progress: &'e dyn Progress,
    ) -> Result<Build<'e>, IndexError> {
        let started = Instant::now();
        let checkout = CheckoutRoot::new(root).map_err(|source| ScanError::Root {
            path: root.display().to_string(),
            source,
        })?;
        Ok(Build {
            engine,
            progress,
            root: checkout.path().to_path_buf(),
            checkout,
            started,
            diagnostics: Vec::new(),
            stats: IndexStats::default(),
        })
    }

    /// The whole open, step by step.
    pub(crate) fn run(mut self) -> Result<SnapshotIndex, IndexError> {
        let Listing { files, tree } = self.walk()?;
        stop_if_cancelled(self.progress)?;
        let manifest = self.manifest();
        let read = self.read(files, manifest.as_ref());
        stop_if_cancelled(self.progress)?;
        self.run_from(tree, manifest, read)
    }

    /// The steps after [`Build::read`] (tests run the first ones alone).
    fn run_from(
        mut self,
        tree: TreeState,
        manifest: Option<RootManifest>,
        read: ReadFiles,
    ) -> Result<SnapshotIndex, IndexError> {
        let id = self.pool(&read, manifest.as_ref())?;
        // The pool is opened (its tantivy checksums verified: every file of it read whole) while
        // the analyses are read: in a warm open both are a few milliseconds of work, neither
        // needs the other, and the pool's verification would otherwise leave a core idle.
        let engine = self.engine;
        let (opened, files) = rayon::join(
            || {
                let mut open_stats = CacheStats::default();
                engine
                    .open_pool(&id, &mut open_stats)
                    .map(|pool| (pool, open_stats))
            },
            || self.analyse(&id, read.text),
        );
        let (pool, open_stats) = opened?;
        self.stats
            .cache
            .pool_repairs
            .extend(open_stats.pool_repairs);
        let mut files = files?;
        let pool = ChosenPool { id, pool };
        let table = ChunkTable::of(&pool, &files)?;
        let view = self.lexical(&pool, &mut files, &table)?;
        self.write_manifest(
            manifest.as_ref(),
            (&files, &read.binary),
            &pool,
            tree.observed_at_ns(),
        );
        Ok(self.finish(files, table, view, tree))
    }

    /// Step 1: the files of the tree, in path order.
    pub(crate) fn walk(&mut self) -> Result<Listing, IndexError> {
        let t = Instant::now();
        self.progress.report(Stage::Walk, 0, 0);
        let mut walked = crate::scan::walk(&self.root, &self.engine.config.scan)?;
        let tree = TreeState::new(&mut walked);
        self.diagnostics.extend(walked.diagnostics);
        self.stats.ignored = walked.ignored;
        self.stats.timings_ms.walk = ms_since(t);
        Ok(Listing {
            files: walked.files,
            tree,
        })
    }

    /// Step 2: the root's manifest from the last open (a damaged one counts as invalid).
    pub(crate) fn manifest(&mut self) -> Option<RootManifest> {
        match self.engine.layout.manifests().get(&self.root) {
            Lookup::Hit(m) => Some(m),
            Lookup::Miss => None,
            Lookup::Invalid(_) => {
                self.stats.cache.invalid_entries += 1;
                None
            }
        }
    }

    /// Step 3: reads (or trusts the manifest about) every file; binary files and files that
    /// cannot be indexed become diagnostics.
    pub(crate) fn read(
        &mut self,
        files: Vec<FileEntry>,
        manifest: Option<&RootManifest>,
    ) -> ReadFiles {
        let t = Instant::now();
        let ticker = Ticker::new(self.progress, Stage::Read, files.len());
        let outcomes: Vec<ReadOutcome> = files
            .into_par_iter()
            .map(|entry| {
                let outcome = self.engine.read_one(&self.checkout, entry, manifest);
                ticker.tick();
                outcome
            })
            .collect();
        let mut read = ReadFiles {
            text: Vec::with_capacity(outcomes.len()),
            binary: Vec::new(),
        };
        for outcome in outcomes {
            match outcome {
                ReadOutcome::Text(file, diagnostic, fast) => {
                    count_read(&mut self.stats.cache, fast);
                    self.diagnostics.extend(diagnostic);
                    read.text.push(file);
                }
                ReadOutcome::Binary(entry, diagnostic, fast) => {
                    count_read(&mut self.stats.cache, fast);
                    self.diagnostics.push(diagnostic);
                    read.binary.push(entry);
                }
                ReadOutcome::Skipped(diagnostic) => self.diagnostics.push(diagnostic),
            }
        }
        self.stats.timings_ms.read = ms_since(t);
        read
    }

    /// Step 4: the id of the repository's pool (analyses and lexical documents live there),
    /// opened by the caller. Its time counts as analysis time, as the pool is chosen for the
    /// analyses.
    pub(crate) fn pool(
        &mut self,
        read: &ReadFiles,
        manifest: Option<&RootManifest>,
    ) -> Result<String, IndexError> {
        let t = Instant::now();
        let file_keys: KeySet = read
            .text
            .iter()
            .map(|f| FileKey::new(&f.entry.path, &f.content_hash).pool_key())
            .collect();
        let id = self.engine.choose_pool(
            manifest.and_then(|m| m.pool.as_deref()),
            &file_keys,
            &mut self.stats.cache,
        )?;
        self.stats.timings_ms.analyze += ms_since(t);
        Ok(id)
    }

    /// Step 5: the analysis of every text file, from the pool's packs or computed (and stored).
    pub(crate) fn analyse(
        &mut self,
        pool_id: &str,
        text_files: Vec<TextFile>,
    ) -> Result<Vec<AnalysedFile>, IndexError> {
        let t = Instant::now();
        let engine = self.engine;
        let checkout = &self.checkout;
        let registry = engine.layout.pools();
        let packs = registry.analyses(pool_id);
        let invalid = AtomicUsize::new(0);
        let ticker = Ticker::new(self.progress, Stage::Analyze, text_files.len());
        let analysed: Vec<Result<(TextFile, StoredAnalysis, bool), IndexError>> = text_files
            .into_par_iter()
            .map(|mut file| {
                stop_if_cancelled(self.progress)?;
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
                        engine.ensure_text(checkout, &mut file, true)?;
                        let stored = analyse_text(&file, &engine.config.analyze);
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
                self.stats.cache.analyses_reused += 1;
            } else {
                self.stats.cache.analyses_computed += 1;
                computed.push(files.len());
            }
            if stored.analysis.has_syntax_errors {
                self.diagnostics
                    .push(Diagnostic::syntax_errors(&file.entry.path));
            }
            files.push((file, stored));
        }
        self.stats.cache.invalid_entries += invalid.into_inner();
        let new_values: Vec<(FileKey, &StoredAnalysis)> = computed
            .iter()
            .map(|&i| {
                let (file, stored) = &files[i];
                (FileKey::new(&file.entry.path, &file.content_hash), stored)
            })
            .collect();
        if let Err(err) = packs.write(&new_values) {
            note_write_error(&mut self.stats.cache, err.to_string());
        }
        let damaged = packs.damaged();
        for (path, reason) in &damaged {
            self.stats.cache.pool_repairs.push(format!(
                "analysis pack {} removed: {reason}",
                path.display()
            ));
        }
        self.stats.cache.invalid_entries += packs.damaged_at_open();
        if !damaged.is_empty() || packs.pack_count() + 1 > MAX_PACKS {
            // Tidying only helps later opens: a cache that cannot be written skips it.
            let tidied = match registry.lock_pool(pool_id) {
                Ok(_lock) => packs.remove_damaged().and_then(|()| {
                    AnalysisPacks::compact(&registry.packs_dir(pool_id), registry.format_version())
                        .map(drop)
                }),
                Err(err) if is_read_only(&err) => Err(err),
                Err(err) => return Err(cache_error(registry.dir())(err)),
            };
            if let Err(err) = tidied {
                note_write_error(&mut self.stats.cache, err.to_string());
            }
        }
        drop(packs);
        self.stats.timings_ms.analyze += ms_since(t);
        Ok(files)
    }

    /// Step 7: the snapshot's view of the pool, after indexing the chunks the pool lacks (under
    /// the pool's lock, checked again once it is held).
    pub(crate) fn lexical(
        &mut self,
        chosen: &ChosenPool,
        files: &mut [AnalysedFile],
        table: &ChunkTable,
    ) -> Result<PoolView, IndexError> {
        let t = Instant::now();
        let engine = self.engine;
        let registry = engine.layout.pools();
        let (id, pool) = (&chosen.id, &chosen.pool);
        let stats = &mut self.stats;
        let mut view = engine.view_or_repair(id, pool, &table.ids, &mut stats.cache)?;
        if !view.missing_chunks().is_empty() {
            let _lock = registry
                .lock_pool(id)
                .map_err(cache_error(registry.dir()))?;
            pool.reload()?;
            view = engine.view_or_repair(id, pool, &table.ids, &mut stats.cache)?;
            if !view.missing_chunks().is_empty() {
                let missing: KeySet = view.missing_chunks().iter().copied().collect();
                // Write through a handle opened under the lock: tantivy's list of managed files
                // is read at open, and another process may have committed since ours was opened.
                let writer_pool = LexicalPool::open_or_create(pool.dir())?;
                stats.pool.docs_added = engine.index_chunks(
                    &self.checkout,
                    &writer_pool,
                    files,
                    &missing,
                    self.progress,
                )?;
                pool.reload()?;
                view = pool.view(&table.ids)?;
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
        stats.pool.id = id.clone();
        stats.pool.docs_total = pool.num_docs();
        stats.pool.snapshot_docs = view.num_docs();
        stats.pool.segments = pool.num_segments();
        stats.pool.size_bytes = pool.size_on_disk();
        stats.timings_ms.lexical = ms_since(t);
        Ok(view)
    }

    /// Step 8: rewrites the root's manifest when anything changed, or when files the previous
    /// manifest could not trust yet (stamps within the racy window) are old enough now, so that
    /// the next open trusts them (a failed write only costs the next open its fast path). The
    /// stamps date from `stamped_at_ns`, the start of this open's walk.
    pub(crate) fn write_manifest(
        &mut self,
        previous: Option<&RootManifest>,
        (files, binary): (&[AnalysedFile], &[FileEntry]),
        pool: &ChosenPool,
        stamped_at_ns: i64,
    ) {
        let written_at_ns = stamped_at_ns;
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
            .chain(binary.iter().map(|entry| ManifestFile {
                path: entry.path.clone(),
                stamp: entry.stamp,
                content_hash: ContentHash([0; 32]),
                language: None,
                lossy: false,
                binary: true,
            }))
            .collect();
        manifest_files.sort_by(|a, b| a.path.cmp(&b.path));
        let manifest = RootManifest {
            root: self.root.display().to_string(),
            written_at_ns,
            pool: Some(pool.id.clone()),
            files: manifest_files,
        };
        let unchanged = previous.is_some_and(|m| {
            m.pool == manifest.pool
                && m.files == manifest.files
                && m.racy_files() == manifest.racy_files()
        });
        if !unchanged {
            match self.engine.layout.manifests().put(&self.root, &manifest) {
                // This version writes here: what it supersedes goes (two folder listings, only
                // when a snapshot was new or changed, never on the stat fast path).
                Ok(()) => {
                    self.engine.layout.remove_superseded();
                }
                Err(err) => note_write_error(&mut self.stats.cache, err.to_string()),
            }
        }
    }

    /// The last step: the [`SnapshotIndex`] of what the steps gathered ([`Engine::assemble`]).
    pub(crate) fn finish(
        mut self,
        files: Vec<AnalysedFile>,
        table: ChunkTable,
        view: PoolView,
        tree: TreeState,
    ) -> SnapshotIndex {
        let (infos, analyses) = files
            .into_iter()
            .map(|(file, stored)| indexed_file(file, stored.analysis))
            .unzip();
        self.stats.timings_ms.total = ms_since(self.started);
        self.engine.assemble(IndexParts {
            root: self.root,
            checkout: self.checkout,
            files: infos,
            analyses,
            chunks: table,
            lexical: view,
            diagnostics: self.diagnostics,
            stats: self.stats,
            tree,
        })
    }
}

impl IndexStats {
    /// Sets the content counts (files, bytes, lines, chunks, definitions, by language, and
    /// diagnostics by kind) from an index's contents.
    pub(super) fn count_contents(
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

impl ChunkTable {
    /// Step 6: chunk ids for the chunks of the analysed `files` of `pool`, in order.
    pub(crate) fn of(pool: &ChosenPool, files: &[AnalysedFile]) -> Result<ChunkTable, IndexError> {
        ChunkTable::new(
            files
                .iter()
                .map(|(file, stored)| (file.entry.path.as_str(), stored.chunk_keys.as_slice())),
            pool.pool.dir(),
        )
    }

    /// Chunk ids for `files` (path, chunk keys), in order. Two chunks with the same 64-bit key
    /// would make the snapshot's documents ambiguous: that is an error naming the pool at
    /// `pool_dir`, never a silent merge.
    pub(crate) fn new<'f>(
        files: impl ExactSizeIterator<Item = (&'f str, &'f [u64])>,
        pool_dir: &Path,
    ) -> Result<ChunkTable, IndexError> {
        let mut table = ChunkTable {
            first_chunk: Vec::with_capacity(files.len()),
            keys: Vec::new(),
            ids: KeyMap::default(),
        };
        for (path, keys) in files {
            table.first_chunk.push(table.keys.len() as u32);
            for &key in keys {
                let id = table.keys.len() as u32;
                table.keys.push(key);
                if key != NO_DOCUMENT && table.ids.insert(key, id).is_some() {
                    return Err(LexicalError::Corrupt {
                        path: pool_dir.display().to_string(),
                        message: format!("64-bit chunk key collision in {path}"),
                    }
                    .into());
                }
            }
        }
        Ok(table)
    }
}

/// What the index keeps of a text file read (or trusted from the manifest) and analysed.
pub(super) fn indexed_file(
    file: TextFile,
    analysis: FileAnalysis,
) -> (FileInfo, Arc<FileAnalysis>) {
    let info = FileInfo {
        path: file.entry.path,
        language: file.language,
        size: file.entry.stamp.size,
        line_count: analysis.line_count,
        content_hash: file.content_hash,
    };
    (info, Arc::new(analysis))
}

/// The analysis of a file read in this open (its text in hand) and its chunks' lexical keys.
pub(super) fn analyse_text(
    file: &TextFile,
    options: &crate::lang::AnalyzeOptions,
) -> StoredAnalysis {
    let (path, text) = (file.entry.path.as_str(), file.text.as_deref().unwrap_or(""));
    let lines = LineIndex::new(text);
    let analysis = crate::lang::analyze_with_lines(path, file.language, text, &lines, options);
    let chunk_keys = chunk_keys(path, text, &lines, &analysis);
    StoredAnalysis {
        analysis,
        chunk_keys,
    }
}

pub(super) fn cache_error(path: &Path) -> impl FnOnce(std::io::Error) -> IndexError {
    let path = path.display().to_string();
    move |source| IndexError::Cache { path, source }
}

/// The steps' work that needs the engine's configuration and its open pools.
impl Engine {
    /// Step 3 for one file: trusted from the manifest when its stamp matches, else read.
    pub(super) fn read_one(
        &self,
        checkout: &CheckoutRoot,
        entry: FileEntry,
        manifest: Option<&RootManifest>,
    ) -> ReadOutcome {
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
        match crate::scan::load(checkout, &entry, &self.config.scan) {
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
    fn ensure_text(
        &self,
        checkout: &CheckoutRoot,
        file: &mut TextFile,
        may_change: bool,
    ) -> Result<(), IndexError> {
        if file.text.is_some() {
            return Ok(());
        }
        match crate::scan::load(checkout, &file.entry, &self.config.scan) {
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
        keys: &KeySet,
        cache_stats: &mut CacheStats,
    ) -> Result<String, IndexError> {
        let registry = self.layout.pools();
        let cache_err = |source| IndexError::Cache {
            path: registry.dir().display().to_string(),
            source,
        };
        let ids = registry.pool_ids();
        // An empty snapshot matches any pool (it adds nothing to it).
        let overlaps_enough = |recorded: &KeySet| {
            let overlap = keys.iter().filter(|k| recorded.contains(k)).count();
            keys.is_empty()
                || overlap > 0 && overlap as f64 >= POOL_REUSE_MIN_OVERLAP * keys.len() as f64
        };
        // The pool used last time, unless the directory now holds something else entirely.
        let previous = previous
            .filter(|p| ids.iter().any(|id| id == p))
            .map(|p| (p, registry.keys(p)))
            .filter(|(_, recorded)| overlaps_enough(recorded));
        // Recording the snapshot's keys only guides later choices: in a cache that cannot be
        // written (read-only file system, another user's) an existing pool is used without it.
        let record = |id: &str, cache_stats: &mut CacheStats| -> Result<(), IndexError> {
            let written = registry.lock_registry().and_then(|_lock| {
                let mut recorded = registry.keys(id);
                recorded.extend(keys.iter().copied());
                registry.write_keys(id, &recorded)
            });
            match written {
                Err(err) if is_read_only(&err) => {
                    note_write_error(cache_stats, err.to_string());
                    Ok(())
                }
                other => other.map_err(cache_err),
            }
        };
        let id = match previous {
            Some((id, recorded)) => {
                if !keys.is_subset(&recorded) {
                    record(id, cache_stats)?;
                }
                id.to_string()
            }
            None => {
                // Choosing or creating a pool is done under the registry's lock, unless the cache
                // cannot be written: then only an existing pool can be chosen.
                let lock = match registry.lock_registry() {
                    Ok(lock) => Ok(lock),
                    Err(err) if is_read_only(&err) => Err(err),
                    Err(err) => return Err(cache_err(err)),
                };
                let mut best: Option<(usize, String, KeySet)> = None;
                for id in registry.pool_ids() {
                    let recorded = registry.keys(&id);
                    let overlap = keys.iter().filter(|k| recorded.contains(k)).count();
                    if best.as_ref().is_none_or(|(b, _, _)| overlap > *b) {
                        best = Some((overlap, id, recorded));
                    }
                }
                let (id, mut recorded, new) = match best {
                    Some((_, id, recorded)) if overlaps_enough(&recorded) => (id, recorded, false),
                    _ => (registry.new_pool_id(), KeySet::default(), true),
                };
                match lock {
                    // A new pool exists from the moment its keys file does.
                    Ok(_lock) if new || !keys.is_subset(&recorded) => {
                        recorded.extend(keys.iter().copied());
                        registry.write_keys(&id, &recorded).map_err(cache_err)?;
                    }
                    Ok(_) => {}
                    Err(err) if new => return Err(cache_err(err)),
                    Err(err) => note_write_error(cache_stats, err.to_string()),
                }
                id
            }
        };
        Ok(id)
    }

    /// Opens pool `id` (once per engine), verifying its checksums when configured; a pool that
    /// fails to open or verify is deleted and recreated empty, under its lock.
    pub(super) fn open_pool(
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
        chunks: &KeyMap<u32>,
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
    pub(super) fn index_chunks(
        &self,
        checkout: &CheckoutRoot,
        pool: &LexicalPool,
        files: &mut [(TextFile, StoredAnalysis)],
        missing: &KeySet,
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
            .try_for_each(|(_, (file, _))| self.ensure_text(checkout, file, false))?;
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
    let mut seen: KeyMap<u32> = KeyMap::default();
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
    wanted: &KeySet,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::EngineConfig;

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

    fn engine(cache: &Path) -> Engine {
        Engine::new(EngineConfig {
            cache_dir: cache.to_path_buf(),
            ..EngineConfig::default()
        })
    }

    fn write(root: &Path, files: &[(&str, &str)]) {
        for (path, text) in files {
            let abs = root.join(path);
            std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
            std::fs::write(&abs, text).unwrap();
            // An hour old: files written just now are "racy" for the stat fast path.
            let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
            std::fs::File::options()
                .write(true)
                .open(&abs)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
    }

    /// Walk, manifest and read, alone: the first read hashes every file; once a manifest is
    /// written, unchanged files keep their hash without being read and binary ones stay binary.
    #[test]
    fn read_trusts_the_manifest_for_unchanged_files() {
        let repo = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        write(
            repo.path(),
            &[
                ("a.py", "x = 1\n"),
                ("b.txt", "two\nlines\n"),
                ("c.bin", "\0\0"),
            ],
        );
        let engine = engine(cache.path());
        let mut first = Build::new(&engine, repo.path(), &super::super::NoProgress).unwrap();
        let Listing { files, tree } = first.walk().unwrap();
        assert_eq!(files.len(), 3);
        assert!(first.manifest().is_none());
        let read = first.read(files, None);
        assert_eq!((read.text.len(), read.binary.len()), (2, 1));
        assert_eq!(first.stats.cache.files_read, 3);
        assert!(read.text.iter().all(|f| f.text.is_some()));
        // The rest of the steps write the manifest.
        let index = first.run_from(tree, None, read).unwrap();
        assert_eq!(index.files().len(), 2);

        let mut second = Build::new(&engine, repo.path(), &super::super::NoProgress).unwrap();
        let walked = second.walk().unwrap().files;
        let manifest = second.manifest().expect("written by the first open");
        let read = second.read(walked, Some(&manifest));
        assert_eq!(second.stats.cache.stat_fast_path, 3);
        assert_eq!(second.stats.cache.files_read, 0);
        assert!(read.text.iter().all(|f| f.text.is_none()), "not read again");
        assert_eq!(read.binary.len(), 1);
    }

    fn analysed(path: &str, keys: &[u64]) -> AnalysedFile {
        let file = TextFile {
            entry: FileEntry {
                path: path.to_owned(),
                abs_path: PathBuf::from(path),
                stamp: crate::scan::FileStamp {
                    size: 0,
                    mtime_ns: 0,
                    ctime_ns: 0,
                    inode: 0,
                },
            },
            content_hash: ContentHash([0; 32]),
            language: None,
            lossy: false,
            text: None,
        };
        let stored = StoredAnalysis {
            analysis: FileAnalysis::default(),
            chunk_keys: keys.to_vec(),
        };
        (file, stored)
    }

    /// The chunk table alone: ids in file order, blank chunks (no document) without an id, and a
    /// key collision as an error naming the file.
    #[test]
    fn chunk_table_numbers_chunks_and_refuses_collisions() {
        let cache = tempfile::tempdir().unwrap();
        let pool = ChosenPool {
            id: "p".into(),
            pool: Arc::new(LexicalPool::open_or_create(&cache.path().join("p")).unwrap()),
        };
        let files = [
            analysed("a.py", &[7, NO_DOCUMENT, 9]),
            analysed("b.py", &[11]),
        ];
        let table = ChunkTable::of(&pool, &files).unwrap();
        assert_eq!(table.first_chunk, [0, 3]);
        assert_eq!(table.keys, [7, NO_DOCUMENT, 9, 11]);
        let mut ids: Vec<(u64, u32)> = table.ids.into_iter().collect();
        ids.sort();
        assert_eq!(ids, [(7, 0), (9, 2), (11, 3)]);

        let colliding = [analysed("a.py", &[7]), analysed("b.py", &[7])];
        let error = ChunkTable::of(&pool, &colliding)
            .err()
            .expect("a collision");
        assert!(error.to_string().contains("collision in b.py"), "{error}");
    }
}
