//! Garbage collection of the index cache: [`Engine::collect_garbage`] removes what no snapshot
//! the cache serves can read any more.
//!
//! A pool only grows as snapshots are opened ([`crate::lexical::pool`]): a checkout that is
//! edited, or moved to another commit, adds the chunks and analyses of every new file version,
//! and the old ones stay. Searches skip them, but still decode their postings (an issue's words
//! match nearly every chunk of a pool), and the cache's size grows with every version ever seen.
//!
//! What is *live* is read from the snapshots' stat manifests (one per snapshot root, naming its
//! pool and the content hash of each of its files): a snapshot whose folder no longer exists is
//! forgotten (its manifest goes); in each pool, the documents of chunks and the analyses of file
//! versions that no remaining manifest lists are deleted, and a pool that no manifest names is
//! removed whole. The pool's list of file keys (which guides the choice of a pool) is rewritten to
//! the live ones.
//!
//! Invariants:
//! - nothing a remaining manifest lists is removed, so its next open reuses everything, as before
//!   the collection (tested);
//! - the collection holds the registry lock for its whole run (no snapshot chooses or creates a
//!   pool meanwhile) and each pool's lock while it rewrites it (no writer adds to it meanwhile);
//! - a process that opened a snapshot before keeps its view and answers as before (its searcher
//!   holds the old segment files; packs are unlinked, not rewritten in place). A snapshot opened
//!   concurrently whose manifest is not written yet may lose chunks it just added: its next open
//!   indexes them again, like any chunks its pool lacks. Nothing is lost but that work;
//! - a pool no manifest names is removed only when its list of file keys is older than
//!   [`GcOptions::grace`]: a new repository's first open creates its pool, then analyses and
//!   indexes for as long as that takes, and names the pool in its manifest only at the end.
//!   Folders of pools without a key list (left by an interrupted removal) go by the same rule.
//!
//! The dense layer's vectors and the repository histories are kept by their own rules
//! ([`crate::dense`], [`crate::history`]).

use super::build::cache_error;
use super::{Engine, IndexError};
use crate::cache::{
    AnalysisPacks, FileKey, KeySet, Lookup, ManifestStore, PoolRegistry, is_pool_id,
};
use crate::lexical::pool::LexicalPool;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// How [`Engine::collect_garbage`] runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcOptions {
    /// Count only; remove nothing.
    pub dry_run: bool,
    /// A pool that no manifest names is kept while its key list is younger than this: it may
    /// be the pool of a first open still under way.
    pub grace: Duration,
}

impl Default for GcOptions {
    /// Removes; an hour's grace (a first open of a large repository takes minutes).
    fn default() -> Self {
        GcOptions {
            dry_run: false,
            grace: Duration::from_secs(3600),
        }
    }
}

/// What [`Engine::collect_garbage`] found, and removed unless it was a dry run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GcReport {
    /// Nothing was removed: the counts say what would have been.
    pub dry_run: bool,
    /// Snapshots whose folder still exists: everything they use is kept.
    pub snapshots_kept: usize,
    /// Roots of the snapshots whose folder is gone (their manifests are removed), sorted.
    pub snapshots_forgotten: Vec<String>,
    /// Manifests that failed their checks (removed: an open would rebuild them anyway).
    pub invalid_manifests: usize,
    /// One row per pool, by id.
    pub pools: Vec<PoolGc>,
    /// Folders of pools without a key list (an interrupted removal's), removed.
    pub orphan_folders: usize,
    /// Bytes of the pools (indexes, packs, key lists) before and after.
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// One pool's collection.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PoolGc {
    pub id: String,
    /// Snapshots kept that use the pool; with none, the pool is removed whole (unless it is
    /// `recent`).
    pub snapshots: usize,
    pub removed: bool,
    /// No snapshot names the pool, but its key list was written within the grace period: kept.
    pub recent: bool,
    /// Lexical documents (chunks) before, and those deleted.
    pub docs_before: u64,
    pub docs_deleted: u64,
    /// Stored analyses (file versions) before, and those deleted.
    pub analyses_before: usize,
    pub analyses_deleted: usize,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// What the kept snapshots of one pool use.
#[derive(Default)]
struct LiveFiles {
    snapshots: usize,
    files: HashSet<FileKey>,
}

impl Engine {
    /// Removes from the cache what no snapshot it serves can read: see the module docs. A dry
    /// run only counts. Fails when the cache root does not exist (a mistyped `--cache-dir` is
    /// not an empty cache), and on a cache this process cannot write (nothing is removed then)
    /// or whose pools it cannot open.
    pub fn collect_garbage(&self, options: &GcOptions) -> Result<GcReport, IndexError> {
        let root = self.layout.root();
        if !root.is_dir() {
            return Err(cache_error(root)(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no such folder",
            )));
        }
        let registry = self.layout.pools();
        // Taking the lock creates the pools' folder: a cache that has none has nothing to lock.
        let _registry_lock = match registry.dir().is_dir() {
            true => Some(
                registry
                    .lock_registry()
                    .map_err(cache_error(registry.dir()))?,
            ),
            false => None,
        };
        let mut collection = Collection {
            options,
            registry,
            report: GcReport {
                dry_run: options.dry_run,
                ..GcReport::default()
            },
        };
        let mut live = collection.read_manifests(&self.layout.manifests())?;
        let pool_ids = collection.registry.pool_ids();
        for id in &pool_ids {
            let uses = live.remove(id).unwrap_or_default();
            collection.collect_pool(id, uses)?;
        }
        collection.remove_orphan_folders(&pool_ids)?;
        Ok(collection.report)
    }
}

/// One run's state: its options, the pools it collects and what it found so far.
struct Collection<'o> {
    options: &'o GcOptions,
    registry: PoolRegistry,
    report: GcReport,
}

impl Collection<'_> {
    /// Whether `path` was written within the grace period.
    fn is_recent(&self, path: &Path) -> bool {
        std::fs::metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|time| {
                SystemTime::now()
                    .duration_since(time)
                    .map_or(true, |age| age < self.options.grace)
            })
    }

    /// Step 1: what the snapshots whose folder exists use, per pool; the manifests of the others
    /// (and damaged ones) go.
    fn read_manifests(
        &mut self,
        manifests: &ManifestStore,
    ) -> Result<BTreeMap<String, LiveFiles>, IndexError> {
        let mut live: BTreeMap<String, LiveFiles> = BTreeMap::new();
        for (path, lookup) in manifests.list() {
            let forget = match lookup {
                Lookup::Hit(manifest) if Path::new(&manifest.root).is_dir() => {
                    self.report.snapshots_kept += 1;
                    if let Some(pool) = manifest.pool {
                        let uses = live.entry(pool).or_default();
                        uses.snapshots += 1;
                        uses.files.extend(
                            manifest
                                .files
                                .iter()
                                .filter(|f| !f.binary)
                                .map(|f| FileKey::new(&f.path, &f.content_hash)),
                        );
                    }
                    false
                }
                Lookup::Hit(manifest) => {
                    self.report.snapshots_forgotten.push(manifest.root);
                    true
                }
                Lookup::Invalid(_) => {
                    self.report.invalid_manifests += 1;
                    true
                }
                Lookup::Miss => false,
            };
            if forget && !self.options.dry_run {
                remove_file(&path)?;
            }
        }
        self.report.snapshots_forgotten.sort();
        Ok(live)
    }

    /// Step 2, per pool under its lock: removed whole when no snapshot uses it (and it is not
    /// recent), else rid of the documents and analyses its snapshots do not list.
    fn collect_pool(&mut self, id: &str, uses: LiveFiles) -> Result<(), IndexError> {
        let registry = &self.registry;
        let _pool_lock = registry
            .lock_pool(id)
            .map_err(cache_error(registry.dir()))?;
        let paths = [
            registry.pool_dir(id),
            registry.packs_dir(id),
            registry.dir().join(format!("{id}.keys")),
        ];
        let size = || paths.iter().map(|p| size_on_disk(p)).sum::<u64>();
        let mut row = PoolGc {
            id: id.to_string(),
            snapshots: uses.snapshots,
            bytes_before: size(),
            ..PoolGc::default()
        };
        if uses.snapshots == 0 && self.is_recent(&paths[2]) {
            // Not even opened: its first open may be creating it right now.
            row.recent = true;
        } else {
            let pool = LexicalPool::open_or_create(&paths[0])?;
            let packs = registry.analyses(id);
            row.docs_before = pool.num_docs();
            row.analyses_before = packs.count();
            let dry_run = self.options.dry_run;
            if uses.snapshots == 0 {
                row.removed = true;
                row.docs_deleted = row.docs_before;
                row.analyses_deleted = row.analyses_before;
                if !dry_run {
                    drop((pool, packs));
                    // The key list first: without it the pool is no longer listed or chosen.
                    remove_file(&paths[2])?;
                    for dir in &paths[..2] {
                        remove_dir(dir)?;
                    }
                }
            } else {
                let live_chunks: KeySet = uses
                    .files
                    .iter()
                    .filter_map(|key| match packs.get(key) {
                        Lookup::Hit(stored) => Some(stored.chunk_keys),
                        // Not analysed (yet), or damaged: it has no documents this collection
                        // could tell from the others; its next open adds what it lacks.
                        Lookup::Miss | Lookup::Invalid(_) => None,
                    })
                    .flatten()
                    .collect();
                let is_live = |key: &FileKey| uses.files.contains(key);
                if dry_run {
                    row.docs_deleted = pool.count_documents_except(&live_chunks)?;
                    row.analyses_deleted = packs.count_except(is_live);
                } else {
                    row.docs_deleted = pool.delete_documents_except(&live_chunks)?;
                    drop(packs);
                    row.analyses_deleted =
                        AnalysisPacks::retain(&paths[1], registry.format_version(), is_live)
                            .map_err(cache_error(&paths[1]))?;
                    let keys: KeySet = uses.files.iter().map(FileKey::pool_key).collect();
                    registry
                        .write_keys(id, &keys)
                        .map_err(cache_error(&paths[2]))?;
                }
            }
        }
        row.bytes_after = if self.options.dry_run || row.recent {
            row.bytes_before
        } else {
            size()
        };
        self.report.bytes_before += row.bytes_before;
        self.report.bytes_after += row.bytes_after;
        self.report.pools.push(row);
        Ok(())
    }

    /// Step 3: folders of pools that have no key list (no open lists or chooses them any more),
    /// unless recent.
    fn remove_orphan_folders(&mut self, pool_ids: &[String]) -> Result<(), IndexError> {
        let orphans: Vec<_> = std::fs::read_dir(self.registry.dir())
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
            .filter(|entry| {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                let id = name.strip_suffix(".packs").unwrap_or(&name);
                is_pool_id(id) && !pool_ids.iter().any(|known| known == id)
            })
            .map(|entry| entry.path())
            .filter(|path| !self.is_recent(path))
            .collect();
        self.report.orphan_folders = orphans.len();
        for path in orphans {
            let size = size_on_disk(&path);
            self.report.bytes_before += size;
            if self.options.dry_run {
                self.report.bytes_after += size;
            } else {
                remove_dir(&path)?;
            }
        }
        Ok(())
    }
}

fn remove_file(path: &Path) -> Result<(), IndexError> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(cache_error(path)(err)),
        _ => Ok(()),
    }
}

fn remove_dir(path: &Path) -> Result<(), IndexError> {
    match std::fs::remove_dir_all(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(cache_error(path)(err)),
        _ => Ok(()),
    }
}

/// Bytes of the files under `path` (a file or a folder; 0 when missing).
fn size_on_disk(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| size_on_disk(&e.path()))
                .sum()
        })
        .unwrap_or(0)
}
