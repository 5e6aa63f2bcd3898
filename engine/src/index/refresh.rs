//! Incremental refresh of an open index: [`Engine::refresh`] brings a [`SnapshotIndex`] up to date
//! with its tree after edits, re-reading and re-analysing only what changed.
//!
//! 1. **Check** by stat (`TreeState`): every file the walk listed and every path it watched
//!    ([`crate::scan::WalkResult::watched`]: the directories, the files left out for their size)
//!    is stat'ed again, in parallel. When nothing differs the answer is [`Refresh::Unchanged`],
//!    and that is the whole cost. File systems stamp times with a coarse clock (a few ms on
//!    Linux), so a second edit in the same tick can keep a stamp: as for the stat manifest, a
//!    stamp whose mtime is within [`RACY_WINDOW_NS`] of the time it was observed is *racy*. A
//!    racy file is read again and compared with what the index recorded (content hash, or why
//!    it was left out); a racy directory means walking again. A check that finds everything as
//!    recorded moves the observation time on, so stamps stop being racy once they are older
//!    than the window.
//! 2. **List**: when only listed regular files changed (edits in place), those are the changes.
//!    When a watched path changed (an entry was added, removed or renamed in a directory, git's
//!    index or an ignore file outside the listing changed), a listed file vanished, a changed
//!    one is an ignore file or is now a symbolic link or not a regular file, the tree is walked
//!    again — the walk stays the one home of what is listed — and the new listing
//!    is compared with the old one by stamp.
//! 3. **Read and analyse** the changed files with [`Engine::open`]'s own steps; a file whose
//!    content hash did not change (a `touch`) keeps its analysis.
//! 4. **Assemble** a new index: unchanged files share their analyses with the old index, chunk
//!    ids are renumbered, and the snapshot's view is rebuilt over the repository's pool and the
//!    engine's in-memory overlay of that pool, to which the new chunks are added (a commit of the
//!    pool on disk costs tens of milliseconds of syncing, more than the rest of a refresh). The
//!    graph, the definition table and the dense index are rebuilt on first use, as after an
//!    open. If the pool cannot give the view (it was damaged or rebuilt meanwhile), the refresh
//!    falls back to a full [`Engine::open`].
//!    The index itself is made by `Engine::assemble`, as an open's is.
//!
//! [`Engine::refresh_with_progress`] is that list; each step is a function of its own
//! (`new_listing`, `read_and_analyse`, `diagnostics_still_holding`, `files_in_order`,
//! `chunk_table`, `view_with_new_chunks`, `files_and_analyses`, `refresh_stats`), and
//! cancellation is checked between steps 2, 3 and 4 and per batch of new chunks.
//!
//! The old index is untouched and stays usable by whoever holds it. Nothing is written to disk:
//! the next [`Engine::open`] of the tree (in another process, say) reads the few changed files
//! again and adds their chunks to the pool on disk.
//!
//! Invariant: a refreshed index answers like a fresh [`Engine::open`] of the same tree (files,
//! chunks, definitions, diagnostics, search hits and scores); the tests check it after edits,
//! additions, deletions, renames and type changes.

use super::build::{ChunkTable, ReadOutcome, TextFile, analyse_text, indexed_file, ms_since};
use super::{
    CacheStats, Engine, FileInfo, IndexError, IndexParts, IndexStats, NoProgress, Progress,
    SnapshotIndex, Stage, stop_if_cancelled,
};
use crate::analysis::FileAnalysis;
use crate::cache::{KeySet, RACY_WINDOW_NS, StoredAnalysis};
use crate::lexical::LexicalError;
use crate::lexical::pool::{LexicalPool, PoolView};
use crate::scan::{
    CheckoutRules, Diagnostic, FileEntry, FileStamp, Loaded, ScanOptions, WalkResult, Watched,
    stamp_of,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What a tree looked like when its index was built: the stamps the next check compares.
pub(crate) struct TreeState {
    /// Every file the walk listed (text, binary or unreadable), in path order.
    listed: Vec<FileEntry>,
    watched: Vec<Watched>,
    /// When the stamps were last seen to hold (ns since the epoch; taken before the first
    /// stat). A check that finds nothing changed moves it on, so stamps stop being racy.
    observed_at_ns: AtomicI64,
}

impl TreeState {
    /// The state of a fresh walk (takes its watched paths).
    pub(crate) fn new(walked: &mut WalkResult) -> TreeState {
        TreeState {
            listed: walked.files.clone(),
            watched: std::mem::take(&mut walked.watched),
            observed_at_ns: AtomicI64::new(walked.started_at_ns),
        }
    }

    /// When the stamps were last seen to hold (ns since the epoch).
    pub(crate) fn observed_at_ns(&self) -> i64 {
        self.observed_at_ns.load(Ordering::Relaxed)
    }

    /// A stamp that may hide a change made in the clock tick it was taken in.
    fn is_racy(&self, stamp: &FileStamp, observed_at_ns: i64) -> bool {
        stamp.mtime_ns >= observed_at_ns.saturating_sub(RACY_WINDOW_NS)
    }
}

/// The answer of [`Engine::refresh`].
pub enum Refresh {
    /// Every stamp matches: the index is current.
    Unchanged,
    /// The tree changed; this index is current (the old one is untouched).
    Updated {
        index: Arc<SnapshotIndex>,
        report: RefreshReport,
    },
}

/// What a refresh found and did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RefreshReport {
    /// Listed files whose stamps changed (their content may be the same).
    pub changed: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// The tree was walked again (a directory or a watched file changed).
    pub walked: bool,
    /// The pool could not give the view incrementally, so the tree was opened from scratch.
    pub reopened: bool,
    /// Files analysed again (changed content).
    pub analysed: usize,
    /// Chunks added to the repository's pool.
    pub chunks_indexed: u64,
    pub timings_ms: RefreshTimings,
}

/// Wall-clock milliseconds of a refresh's steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RefreshTimings {
    pub check: f64,
    pub walk: f64,
    pub analyse: f64,
    pub lexical: f64,
    pub total: f64,
}

/// What the stat check found.
enum Check {
    Unchanged,
    /// Listed regular files whose stamps changed, with their new stamps.
    InPlace(Vec<FileEntry>),
    /// The listing itself may have changed.
    Rewalk,
}

/// The current stamp of a listed file, following a link to its target as the walk does;
/// `Err` when the path is gone, or is now something an in-place re-read must not trust.
fn listed_stamp(entry: &FileEntry) -> Result<FileStamp, ()> {
    let metadata = std::fs::symlink_metadata(&entry.abs_path).map_err(|_| ())?;
    if metadata.file_type().is_symlink() {
        let target = std::fs::metadata(&entry.abs_path).map_err(|_| ())?;
        let stamp = stamp_of(&target);
        // A link's target changed: which file it reaches (and whether that is inside the
        // snapshot) is the walk's question.
        return if stamp == entry.stamp {
            Ok(stamp)
        } else {
            Err(())
        };
    }
    if !metadata.is_file() {
        return Err(());
    }
    Ok(stamp_of(&metadata))
}

/// Whether a listed file still reads as `index` recorded it: a text file with the same content
/// hash, or a file left out for the same reason (binary, unreadable).
fn reads_the_same(index: &SnapshotIndex, entry: &FileEntry, options: &ScanOptions) -> bool {
    match crate::scan::load(&index.checkout, entry, options) {
        Loaded::Text(file, _) => index
            .file(&entry.path)
            .is_some_and(|info| info.content_hash == file.content_hash),
        Loaded::Skipped(skipped) => {
            let diagnostics = index.diagnostics();
            let first = diagnostics.partition_point(|d| d.path < entry.path);
            index.file(&entry.path).is_none()
                && diagnostics[first..]
                    .iter()
                    .take_while(|d| d.path == entry.path)
                    .any(|d| d.kind == skipped.kind)
        }
    }
}

/// Compares the tree with `index`'s stamps; `checked_at_ns` is the time the check started.
fn check(index: &SnapshotIndex, checked_at_ns: i64, options: &ScanOptions) -> Check {
    let tree = &index.tree;
    let observed = tree.observed_at_ns.load(Ordering::Relaxed);
    let is_racy = |stamp: &FileStamp| tree.is_racy(stamp, observed);
    let watched_changed = tree.watched.par_iter().any(|watched| {
        is_racy(&watched.stamp)
            || std::fs::metadata(&watched.abs_path).map_or(true, |m| stamp_of(&m) != watched.stamp)
    });
    if watched_changed {
        return Check::Rewalk;
    }
    let changed: Vec<Option<FileEntry>> = tree
        .listed
        .par_iter()
        .filter_map(|entry| match listed_stamp(entry) {
            Ok(stamp) if stamp == entry.stamp => (is_racy(&stamp)
                && !reads_the_same(index, entry, options))
            .then(|| Some(entry.clone())),
            Ok(stamp) => Some(Some(FileEntry {
                stamp,
                ..entry.clone()
            })),
            Err(()) => Some(None),
        })
        .collect();
    // An ignore file decides what is listed: its change is the walk's question.
    let is_ignore_file = |entry: &FileEntry| {
        CheckoutRules::is_ignore_file(entry.path.rsplit('/').next().unwrap_or(&entry.path))
    };
    let changed: Vec<Option<FileEntry>> = changed
        .into_iter()
        .map(|entry| entry.filter(|e| !is_ignore_file(e)))
        .collect();
    if changed.is_empty() {
        // Every stamp (and every racy file's content) held at `checked_at_ns`.
        tree.observed_at_ns
            .fetch_max(checked_at_ns, Ordering::Relaxed);
        Check::Unchanged
    } else if changed.iter().any(Option::is_none) {
        Check::Rewalk
    } else {
        Check::InPlace(changed.into_iter().flatten().collect())
    }
}

/// The engine's in-memory overlays, one per pool, created on first use.
#[derive(Default)]
pub(crate) struct Overlays(Mutex<HashMap<String, Arc<Overlay>>>);

/// Chunks added by refreshes, in memory; writes take `write`.
struct Overlay {
    pool: LexicalPool,
    write: Mutex<()>,
}

impl Overlays {
    fn get(&self, pool_id: &str) -> Result<Arc<Overlay>, IndexError> {
        let mut overlays = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(overlay) = overlays.get(pool_id) {
            return Ok(overlay.clone());
        }
        let overlay = Arc::new(Overlay {
            pool: LexicalPool::in_memory()?,
            write: Mutex::new(()),
        });
        overlays.insert(pool_id.to_owned(), overlay.clone());
        Ok(overlay)
    }
}

/// Where a file of the new index comes from.
enum Source {
    /// The old index's file at this position.
    Old(usize),
    /// A changed file whose content hash is unchanged: the old file's analysis, the new stamp.
    Same(usize),
    /// A changed file, analysed again (index into the new files).
    New(usize),
}

/// Step 2's answer: the new listing and what changed in it.
struct NewListing {
    /// Every file listed now, in path order (new stamps for the changed ones).
    listed: Vec<FileEntry>,
    watched: Vec<Watched>,
    /// When the new stamps were taken.
    observed_at_ns: i64,
    /// The walk's own diagnostics (of paths it did not list), when the tree was walked again.
    walk_diagnostics: Option<Vec<Diagnostic>>,
    /// Listed files to read again: changed stamps, and files new to the listing.
    changed: Vec<FileEntry>,
}

/// Step 3's answer: what reading and analysing the changed files gave.
struct ChangedFiles {
    /// Files analysed again, with their analyses.
    analysed: Vec<(TextFile, StoredAnalysis)>,
    /// Where each re-read text file of the new index comes from.
    sources: HashMap<String, Source>,
    /// Every path read again (text, binary or skipped).
    reread: HashSet<String>,
    /// The diagnostics of the files read again.
    diagnostics: Vec<Diagnostic>,
}

/// Step 4's lexical part: the snapshot's view over the pool and the overlay.
struct Viewed {
    pool: Arc<LexicalPool>,
    /// What opening the pool found (a repair).
    cache: CacheStats,
    view: PoolView,
    /// Documents of the pool and the overlay, over every snapshot.
    docs_total: u64,
    /// Chunks added to the overlay.
    docs_added: u64,
}

impl Engine {
    /// Brings `index` up to date with its tree (see the module docs): [`Refresh::Unchanged`] when
    /// no stamp changed, else a new index.
    pub fn refresh(&self, index: &SnapshotIndex) -> Result<Refresh, IndexError> {
        self.refresh_with_progress(index, &NoProgress)
    }

    /// [`Engine::refresh`] reporting progress: the steps of the module docs, in order.
    pub fn refresh_with_progress(
        &self,
        old: &SnapshotIndex,
        progress: &dyn Progress,
    ) -> Result<Refresh, IndexError> {
        let started = Instant::now();
        let checked_at_ns = crate::scan::now_ns();
        let mut report = RefreshReport::default();
        let check = check(old, checked_at_ns, &self.config.scan);
        report.timings_ms.check = ms_since(started);
        let Some(listing) = self.new_listing(old, check, checked_at_ns, progress, &mut report)?
        else {
            return Ok(Refresh::Unchanged);
        };
        stop_if_cancelled(progress)?;
        let files_read = listing.changed.len();
        let mut changed = self.read_and_analyse(old, listing.changed, progress, &mut report);
        let diagnostics = diagnostics_still_holding(
            old,
            &listing.listed,
            listing.walk_diagnostics,
            &changed.reread,
            std::mem::take(&mut changed.diagnostics),
        );
        stop_if_cancelled(progress)?;
        let t = Instant::now();
        let order = files_in_order(old, &listing.listed, &mut changed);
        let table = self.chunk_table(old, &order, &changed.analysed)?;
        let viewed = match self.view_with_new_chunks(old, &table, &mut changed.analysed, progress) {
            Ok(viewed) => viewed,
            Err(IndexError::Cancelled) => return Err(IndexError::Cancelled),
            Err(_) => return self.reopen(old, progress, report, started),
        };
        report.chunks_indexed = viewed.docs_added;
        report.timings_ms.lexical = ms_since(t);
        let (files, analyses) = files_and_analyses(old, &order, changed.analysed, &listing.listed);
        report.timings_ms.total = ms_since(started);
        let counts = (listing.listed.len(), files_read, files.len());
        let stats = refresh_stats(old, &viewed, &report, counts);
        let index = self.assemble(IndexParts {
            root: old.root.clone(),
            checkout: old.checkout.clone(),
            files,
            analyses,
            chunks: table,
            lexical: viewed.view,
            diagnostics,
            stats,
            tree: TreeState {
                listed: listing.listed,
                watched: listing.watched,
                observed_at_ns: AtomicI64::new(listing.observed_at_ns),
            },
        });
        Ok(Refresh::Updated {
            index: Arc::new(index),
            report,
        })
    }

    /// Step 4 when the pool cannot give the view: chunks of unchanged files are missing too (the
    /// pool was damaged or rebuilt since the index was opened), and only a full open has every
    /// file's text at hand.
    fn reopen(
        &self,
        old: &SnapshotIndex,
        progress: &dyn Progress,
        mut report: RefreshReport,
        started: Instant,
    ) -> Result<Refresh, IndexError> {
        let index = self.open_with_progress(&old.root, progress)?;
        report.reopened = true;
        report.timings_ms.total = ms_since(started);
        Ok(Refresh::Updated { index, report })
    }

    /// Step 2: the listing after `check`, or `None` when nothing changed after all.
    fn new_listing(
        &self,
        old: &SnapshotIndex,
        check: Check,
        checked_at_ns: i64,
        progress: &dyn Progress,
        report: &mut RefreshReport,
    ) -> Result<Option<NewListing>, IndexError> {
        match check {
            Check::Unchanged => Ok(None),
            Check::InPlace(changed) => Ok(Some(listing_after_edits_in_place(
                old,
                changed,
                checked_at_ns,
                report,
            ))),
            Check::Rewalk => self.listing_after_walk(old, progress, report),
        }
    }

    /// Step 2 when the listing may have changed: the tree walked again, compared with the old
    /// listing by stamp; `None` when the walk finds everything as recorded (a racy directory).
    fn listing_after_walk(
        &self,
        old: &SnapshotIndex,
        progress: &dyn Progress,
        report: &mut RefreshReport,
    ) -> Result<Option<NewListing>, IndexError> {
        let t = Instant::now();
        progress.report(Stage::Walk, 0, 0);
        let walked = crate::scan::walk(&old.root, &self.config.scan)?;
        report.walked = true;
        report.timings_ms.walk = ms_since(t);
        let before: HashMap<&str, &FileStamp> = old
            .tree
            .listed
            .iter()
            .map(|e| (e.path.as_str(), &e.stamp))
            .collect();
        let mut changed = Vec::new();
        for entry in &walked.files {
            match before.get(entry.path.as_str()) {
                Some(&&stamp) if stamp == entry.stamp => {}
                Some(_) => {
                    report.changed.push(entry.path.clone());
                    changed.push(entry.clone());
                }
                None => {
                    report.added.push(entry.path.clone());
                    changed.push(entry.clone());
                }
            }
        }
        let now: HashSet<&str> = walked.files.iter().map(|e| e.path.as_str()).collect();
        report.removed = old
            .tree
            .listed
            .iter()
            .filter(|e| !now.contains(e.path.as_str()))
            .map(|e| e.path.clone())
            .collect();
        let old_walk_diagnostics: Vec<&Diagnostic> = old
            .diagnostics
            .iter()
            .filter(|d| !before.contains_key(d.path.as_str()))
            .collect();
        if changed.is_empty()
            && report.removed.is_empty()
            && walked.watched == old.tree.watched
            && walked.diagnostics.iter().eq(old_walk_diagnostics)
        {
            // A racy directory, walked again: everything is as recorded.
            old.tree
                .observed_at_ns
                .fetch_max(walked.started_at_ns, Ordering::Relaxed);
            return Ok(None);
        }
        Ok(Some(NewListing {
            listed: walked.files,
            watched: walked.watched,
            observed_at_ns: walked.started_at_ns,
            walk_diagnostics: Some(walked.diagnostics),
            changed,
        }))
    }

    /// Step 3: reads the changed files with the open's own per-file work; a file whose content
    /// hash did not change keeps its analysis, the others are analysed again.
    fn read_and_analyse(
        &self,
        old: &SnapshotIndex,
        changed: Vec<FileEntry>,
        progress: &dyn Progress,
        report: &mut RefreshReport,
    ) -> ChangedFiles {
        let t = Instant::now();
        let total = changed.len() as u64;
        let outcomes: Vec<ReadOutcome> = changed
            .into_par_iter()
            .map(|entry| self.read_one(&old.checkout, entry, None))
            .collect();
        let mut files = ChangedFiles {
            analysed: Vec::new(),
            sources: HashMap::new(),
            reread: HashSet::new(),
            diagnostics: Vec::new(),
        };
        let mut to_analyse = Vec::new();
        for outcome in outcomes {
            match outcome {
                ReadOutcome::Text(file, diagnostic, _) => {
                    files.reread.insert(file.entry.path.clone());
                    files.diagnostics.extend(diagnostic);
                    match old.by_path.get(&file.entry.path) {
                        Some(&i) if old.files[i as usize].content_hash == file.content_hash => {
                            let i = i as usize;
                            if old.analyses[i].has_syntax_errors {
                                files
                                    .diagnostics
                                    .push(Diagnostic::syntax_errors(&file.entry.path));
                            }
                            files
                                .sources
                                .insert(file.entry.path.clone(), Source::Same(i));
                        }
                        _ => to_analyse.push(file),
                    }
                }
                ReadOutcome::Binary(entry, diagnostic, _) => {
                    files.reread.insert(entry.path);
                    files.diagnostics.push(diagnostic);
                }
                ReadOutcome::Skipped(diagnostic) => {
                    files.reread.insert(diagnostic.path.clone());
                    files.diagnostics.push(diagnostic);
                }
            }
        }
        let analysed: Vec<(TextFile, StoredAnalysis)> = to_analyse
            .into_par_iter()
            .map(|file| {
                let stored = analyse_text(&file, &self.config.analyze);
                (file, stored)
            })
            .collect();
        progress.report(Stage::Analyze, total, total);
        for (file, stored) in analysed {
            if stored.analysis.has_syntax_errors {
                files
                    .diagnostics
                    .push(Diagnostic::syntax_errors(&file.entry.path));
            }
            files
                .sources
                .insert(file.entry.path.clone(), Source::New(files.analysed.len()));
            files.analysed.push((file, stored));
        }
        report.analysed = files.analysed.len();
        report.timings_ms.analyse = ms_since(t);
        files
    }

    /// Step 4's chunk ids: the chunk keys of the files of the new index, in `order`.
    fn chunk_table(
        &self,
        old: &SnapshotIndex,
        order: &[Source],
        analysed: &[(TextFile, StoredAnalysis)],
    ) -> Result<ChunkTable, IndexError> {
        let old_keys = |i: usize| {
            let first = old.first_chunk[i] as usize;
            &old.chunk_keys[first..first + old.analyses[i].chunks.len()]
        };
        let keys_of = |source: &Source| -> (&str, &[u64]) {
            match *source {
                Source::Old(i) | Source::Same(i) => (old.files[i].path.as_str(), old_keys(i)),
                Source::New(j) => (
                    analysed[j].0.entry.path.as_str(),
                    analysed[j].1.chunk_keys.as_slice(),
                ),
            }
        };
        let pool_dir = self.layout.pools().pool_dir(&old.stats.pool.id);
        ChunkTable::new(order.iter().map(keys_of), &pool_dir)
    }

    /// Step 4's view: the snapshot's view over the repository's pool and the engine's overlay of
    /// it, after adding the new files' chunks the view lacks to the overlay. An error when chunks
    /// of unchanged files are missing (the caller opens the tree again).
    fn view_with_new_chunks(
        &self,
        old: &SnapshotIndex,
        table: &ChunkTable,
        analysed: &mut [(TextFile, StoredAnalysis)],
        progress: &dyn Progress,
    ) -> Result<Viewed, IndexError> {
        let pool_id = &old.stats.pool.id;
        let mut cache_stats = CacheStats::default();
        let pool = self.open_pool(pool_id, &mut cache_stats)?;
        let overlay = self.overlays.get(pool_id)?;
        let _writing = overlay.write.lock().unwrap_or_else(|e| e.into_inner());
        let mut view = pool.view_with(&table.ids, Some(&overlay.pool))?;
        let mut docs_added = 0;
        if !view.missing_chunks().is_empty() {
            let missing: KeySet = view.missing_chunks().iter().copied().collect();
            let new_keys: KeySet = analysed
                .iter()
                .flat_map(|(_, stored)| stored.chunk_keys.iter().copied())
                .collect();
            if !missing.is_subset(&new_keys) {
                return Err(IndexError::Lexical(LexicalError::Corrupt {
                    path: pool.dir().display().to_string(),
                    message: "chunks of unchanged files are missing".into(),
                }));
            }
            docs_added =
                self.index_chunks(&old.checkout, &overlay.pool, analysed, &missing, progress)?;
            view = pool.view_with(&table.ids, Some(&overlay.pool))?;
            if !view.missing_chunks().is_empty() {
                return Err(IndexError::Lexical(LexicalError::Corrupt {
                    path: pool.dir().display().to_string(),
                    message: "chunks still missing after indexing".into(),
                }));
            }
        }
        let docs_total = pool.num_docs() + overlay.pool.num_docs();
        Ok(Viewed {
            pool,
            cache: cache_stats,
            view,
            docs_total,
            docs_added,
        })
    }
}

/// Step 2 when only listed regular files changed, in place: the old listing with their new
/// stamps.
fn listing_after_edits_in_place(
    old: &SnapshotIndex,
    changed: Vec<FileEntry>,
    checked_at_ns: i64,
    report: &mut RefreshReport,
) -> NewListing {
    let mut listed = old.tree.listed.clone();
    for entry in &changed {
        if let Ok(i) = listed.binary_search_by(|e| e.path.cmp(&entry.path)) {
            listed[i].stamp = entry.stamp;
        }
    }
    report.changed = changed.iter().map(|e| e.path.clone()).collect();
    NewListing {
        listed,
        watched: old.tree.watched.clone(),
        observed_at_ns: checked_at_ns,
        walk_diagnostics: None,
        changed,
    }
}

/// The new index's diagnostics: those of the files read again, the old ones that still hold
/// (of listed files not read again, and the walk's own — of paths it did not list — unless the
/// tree was walked again), and the new walk's.
fn diagnostics_still_holding(
    old: &SnapshotIndex,
    listed: &[FileEntry],
    walk_diagnostics: Option<Vec<Diagnostic>>,
    reread: &HashSet<String>,
    mut diagnostics: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    let old_listed: HashSet<&str> = old.tree.listed.iter().map(|e| e.path.as_str()).collect();
    let still_listed: HashSet<&str> = listed.iter().map(|e| e.path.as_str()).collect();
    let walked_again = walk_diagnostics.is_some();
    diagnostics.extend(
        old.diagnostics
            .iter()
            .filter(|d| {
                if old_listed.contains(d.path.as_str()) {
                    still_listed.contains(d.path.as_str()) && !reread.contains(&d.path)
                } else {
                    !walked_again
                }
            })
            .cloned(),
    );
    diagnostics.extend(walk_diagnostics.into_iter().flatten());
    diagnostics
}

/// Where each file of the new index comes from, in path order: the files read again as step 3
/// found them (binary and skipped ones drop out), the others from the old index.
fn files_in_order(
    old: &SnapshotIndex,
    listed: &[FileEntry],
    changed: &mut ChangedFiles,
) -> Vec<Source> {
    listed
        .iter()
        .filter_map(|entry| match changed.sources.remove(&entry.path) {
            Some(source) => Some(source),
            None if changed.reread.contains(&entry.path) => None,
            None => old
                .by_path
                .get(&entry.path)
                .map(|&i| Source::Old(i as usize)),
        })
        .collect()
}

/// The files and analyses of the new index in `order`: unchanged ones shared with the old index,
/// touched ones with their new size, the analysed ones new.
fn files_and_analyses(
    old: &SnapshotIndex,
    order: &[Source],
    analysed: Vec<(TextFile, StoredAnalysis)>,
    listed: &[FileEntry],
) -> (Vec<FileInfo>, Vec<Arc<FileAnalysis>>) {
    let listed_stamps: HashMap<&str, &FileEntry> =
        listed.iter().map(|e| (e.path.as_str(), e)).collect();
    let mut new_analyses: Vec<Option<(TextFile, FileAnalysis)>> = analysed
        .into_iter()
        .map(|(file, stored)| Some((file, stored.analysis)))
        .collect();
    let mut files = Vec::with_capacity(order.len());
    let mut analyses = Vec::with_capacity(order.len());
    for source in order {
        match *source {
            Source::Old(i) => {
                files.push(old.files[i].clone());
                analyses.push(old.analyses[i].clone());
            }
            Source::Same(i) => {
                let mut info = old.files[i].clone();
                if let Some(entry) = listed_stamps.get(info.path.as_str()) {
                    info.size = entry.stamp.size;
                }
                files.push(info);
                analyses.push(old.analyses[i].clone());
            }
            Source::New(j) => {
                let (file, analysis) = new_analyses[j].take().expect("each new file once");
                let (info, analysis) = indexed_file(file, analysis);
                files.push(info);
                analyses.push(analysis);
            }
        }
    }
    (files, analyses)
}

/// The new index's statistics (its content counts are the assembly's): the pool as viewed, the
/// refresh's reads and timings.
fn refresh_stats(
    old: &SnapshotIndex,
    viewed: &Viewed,
    report: &RefreshReport,
    (listed, files_read, indexed): (usize, usize, usize),
) -> IndexStats {
    let mut stats = IndexStats {
        cache: viewed.cache.clone(),
        ..IndexStats::default()
    };
    stats.pool.id = old.stats.pool.id.clone();
    stats.pool.docs_added = viewed.docs_added;
    stats.pool.docs_total = viewed.docs_total;
    stats.pool.snapshot_docs = viewed.view.num_docs();
    stats.pool.segments = viewed.pool.num_segments();
    stats.pool.size_bytes = viewed.pool.size_on_disk();
    stats.cache.files_read = files_read;
    stats.cache.stat_fast_path = listed.saturating_sub(files_read);
    stats.cache.analyses_computed = report.analysed;
    stats.cache.analyses_reused = indexed - report.analysed;
    stats.timings_ms.walk = report.timings_ms.walk;
    stats.timings_ms.read = report.timings_ms.check;
    stats.timings_ms.analyze = report.timings_ms.analyse;
    stats.timings_ms.lexical = report.timings_ms.lexical;
    stats.timings_ms.total = report.timings_ms.total;
    stats
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::EngineConfig;

    /// A coarse clock keeps the stamp of an edit made in the tick of the previous one; that is
    /// simulated by recording the edited file's new stamp as if it had been seen before.
    #[test]
    fn racy_stamps_are_read_again() {
        let repo = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let path = repo.path().join("a.py");
        std::fs::write(&path, "def alpha():\n    pass\n").unwrap();
        let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        let root = std::fs::File::open(repo.path()).unwrap();
        root.set_modified(an_hour_ago).unwrap();
        let engine = Engine::new(EngineConfig {
            cache_dir: cache.path().to_path_buf(),
            ..EngineConfig::default()
        });
        let mut index = engine.open(repo.path()).unwrap();
        std::fs::write(&path, "def gamma():\n    pass\n").unwrap();
        let stamp = stamp_of(&std::fs::metadata(&path).unwrap());
        let tree = &mut Arc::get_mut(&mut index).unwrap().tree;
        tree.listed[0].stamp = stamp;
        let check = |index: &SnapshotIndex| match super::check(index, 0, &ScanOptions::default()) {
            Check::Unchanged => "unchanged",
            Check::InPlace(_) => "in place",
            Check::Rewalk => "rewalk",
        };
        // Recent stamps are racy: the file is read again and the new content seen.
        assert_eq!(check(&index), "in place");
        // Observed long after the edit, the same stamp is trusted.
        let tree = &mut Arc::get_mut(&mut index).unwrap().tree;
        tree.observed_at_ns = AtomicI64::new(stamp.mtime_ns + 2 * RACY_WINDOW_NS);
        assert_eq!(check(&index), "unchanged");
    }
}
