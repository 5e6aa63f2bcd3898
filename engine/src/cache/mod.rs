//! The on-disk index cache, keyed by content.
//!
//! Layout under the cache root (`--cache-dir`, `SWEX_CACHE_DIR`, else the user cache directory's
//! `swex/`):
//!
//! ```text
//! index-v{CACHE_FORMAT_VERSION}/
//!   roots-{analysis tag}/<root hash>.bin        stat manifest of a snapshot root (fast path)
//!   pools-{analysis tag}-t{tokenizer}/          one pool per repository
//!     <pool id>/          lexical chunk index (tantivy)
//!     <pool id>.packs/    per-file analyses (and chunk keys), in packs
//!     <pool id>.keys      file keys of the snapshots that used the pool (to choose a pool)
//!     <pool id>.lock      held while writing the pool's index or compacting its packs
//!     registry.lock       held while choosing or creating a pool
//! ```
//!
//! - The **analysis tag** hashes the analyser version and options, so a new analyser or other
//!   options never read old analyses; a new [`CACHE_FORMAT_VERSION`] starts a fresh `index-v*`
//!   tree. What a newer version supersedes (older `index-v*` trees, folders of an older
//!   analyser or tokenizer) is removed when it writes a snapshot's manifest
//!   ([`CacheLayout::remove_superseded`]); other options' folders stay.
//! - A **pool** gathers what the snapshots of one repository share: a new snapshot joins the pool
//!   holding most of its file versions (see [`crate::index`]) and adds only what the pool lacks.
//! - **File keys** hash `(path, content hash)`: the analysis of a file version is computed once
//!   per pool. Lexical documents are keyed per chunk ([`crate::lexical::pool`]).
//! - Every file except tantivy's is self-checking ([`entry`], [`pack`]) and written atomically: a
//!   truncated, garbled or foreign file is detected, rebuilt and replaced, never trusted. Tantivy's
//!   files carry their own checksums, which [`crate::index`] verifies once per pool and process.
//! - Concurrency: entries and packs are written under unique temporary names and renamed into
//!   place; a pool's index is written under its exclusive file lock, and pools are chosen or
//!   created under the registry lock so that two processes indexing the same new repository
//!   share one pool.
//!
//! This module knows the layout and the formats; *when* to read or write is [`crate::index`]'s
//! business.

pub mod entry;
pub mod pack;

use crate::analysis::{FileAnalysis, Language};
use crate::formats::CACHE_FORMAT_VERSION;
use crate::scan::{ContentHash, FileStamp};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::{Path, PathBuf};

/// A set of the engine's 64-bit content keys (a file's [`FileKey::pool_key`], a chunk's lexical
/// key). The keys are slices of cryptographic hashes already: hashing them again with the
/// standard library's SipHash only costs time, and opening a warm index looks up every key of
/// the snapshot, and of its pool, in such tables.
pub type KeySet = rustc_hash::FxHashSet<u64>;

/// A map from the engine's 64-bit content keys ([`KeySet`]).
pub type KeyMap<V> = rustc_hash::FxHashMap<u64, V>;

const KIND_MANIFEST: [u8; 4] = *b"ROOT";
const KIND_POOL_KEYS: [u8; 4] = *b"KEYS";

/// The cache root to use when none is given: `$SWEX_CACHE_DIR`, else `<user cache dir>/swex`
/// (e.g. `~/.cache/swex`), else `.cache/swex` in the working directory (the same rule as the
/// dense models and embeddings).
pub fn default_cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("SWEX_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::cache_dir()
        .map(|d| d.join("swex"))
        .unwrap_or_else(|| PathBuf::from(".cache/swex"))
}

/// Identity of one version of one file: a hash of its path and content hash.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FileKey(pub [u8; 32]);

impl FileKey {
    pub fn new(path: &str, content: &ContentHash) -> FileKey {
        let mut hasher = blake3::Hasher::new();
        hasher.update(path.as_bytes());
        hasher.update(&[0]);
        hasher.update(&content.0);
        FileKey(*hasher.finalize().as_bytes())
    }

    /// The 64-bit key of the file's documents in a lexical pool.
    pub fn pool_key(&self) -> u64 {
        u64::from_le_bytes(self.0[..8].try_into().expect("8 bytes"))
    }

    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl std::fmt::Debug for FileKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileKey({})", &self.hex()[..16])
    }
}

/// Where everything lives, for one cache root, format version and analysis configuration.
#[derive(Debug, Clone)]
pub struct CacheLayout {
    root: PathBuf,
    format_version: u32,
    analysis_tag: String,
    tokenizer_version: u32,
}

impl CacheLayout {
    /// `analysis_tag` must change whenever analyses would (analyser version, options);
    /// `tokenizer_version` whenever the lexical analyzer or schema would.
    pub fn new(root: &Path, analysis_tag: &str, tokenizer_version: u32) -> CacheLayout {
        CacheLayout::with_format_version(
            root,
            analysis_tag,
            tokenizer_version,
            CACHE_FORMAT_VERSION,
        )
    }

    /// [`CacheLayout::new`] for another format version (tests of version bumps).
    pub fn with_format_version(
        root: &Path,
        analysis_tag: &str,
        tokenizer_version: u32,
        format_version: u32,
    ) -> CacheLayout {
        CacheLayout {
            root: root.to_path_buf(),
            format_version,
            analysis_tag: analysis_tag.to_string(),
            tokenizer_version,
        }
    }

    /// The same layout at another format version (tests of version bumps).
    pub fn at_format_version(&self, format_version: u32) -> CacheLayout {
        CacheLayout {
            format_version,
            ..self.clone()
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn format_version(&self) -> u32 {
        self.format_version
    }

    fn versioned(&self) -> PathBuf {
        self.root.join(format!("index-v{}", self.format_version))
    }

    pub fn manifests(&self) -> ManifestStore {
        ManifestStore {
            dir: self
                .versioned()
                .join(format!("roots-{}", self.analysis_tag)),
            format_version: self.format_version,
        }
    }

    /// Removes what this layout's versions supersede under its root, and only that:
    /// `index-v{N}/` trees of older cache formats, and inside this format's tree the
    /// `roots-…`/`pools-…` folders of an older analyser version, or of this analysis tag with an
    /// older tokenizer. No version reads them again, and without this every upgrade left a whole
    /// index of every repository behind (248 MB for the 66 dev snapshots). Folders of other
    /// options at the same versions, of newer versions and anything else stay. Called when an
    /// open writes a snapshot's manifest ([`crate::index`]): an upgrade's first open of each
    /// snapshot, and any open that found the snapshot changed.
    /// Returns how many folders were removed.
    pub fn remove_superseded(&self) -> usize {
        let mut removed = remove_older_versions(&self.root, "index-v", self.format_version);
        let Some(analyzer) = crate::formats::analyzer_version_of(&self.analysis_tag) else {
            return removed;
        };
        let own_pools = format!("pools-{}-t", self.analysis_tag);
        removed += remove_dirs_where(&self.versioned(), |name| {
            if let Some(tokenizer) = name.strip_prefix(&own_pools) {
                return tokenizer
                    .parse::<u32>()
                    .is_ok_and(|t| t < self.tokenizer_version);
            }
            let tag = name
                .strip_prefix("roots-")
                .or_else(|| name.strip_prefix("pools-"));
            tag.and_then(crate::formats::analyzer_version_of)
                .is_some_and(|n| n < analyzer)
        });
        removed
    }

    pub fn pools(&self) -> PoolRegistry {
        PoolRegistry {
            dir: self.versioned().join(format!(
                "pools-{}-t{}",
                self.analysis_tag, self.tokenizer_version
            )),
            format_version: self.format_version,
        }
    }
}

/// Removes the folders `{prefix}{N}` under `dir` whose version `N` is below `version`: what an
/// older swex wrote in a format this one never reads. Folders of newer versions (a newer swex
/// sharing the cache), of unparsable names and plain files are left alone. Best effort: a folder
/// that cannot be removed stays. Returns how many were removed.
pub fn remove_older_versions(dir: &Path, prefix: &str, version: u32) -> usize {
    remove_dirs_where(dir, |name| {
        name.strip_prefix(prefix)
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n < version)
    })
}

/// Removes the folders directly under `dir` whose name `superseded` accepts; how many went.
fn remove_dirs_where(dir: &Path, superseded: impl Fn(&str) -> bool) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_str().is_some_and(&superseded))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| std::fs::remove_dir_all(e.path()).is_ok())
        .count()
}

/// What a cache lookup found.
#[derive(Debug)]
pub enum Lookup<T> {
    Hit(T),
    Miss,
    /// An entry was there but failed its checks (the message says why); treat as a miss and
    /// overwrite it.
    Invalid(String),
}

/// What the cache keeps per file version: its analysis and the keys of its chunks' lexical
/// documents (0 for chunks that get no document, such as blank ones).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredAnalysis {
    pub analysis: FileAnalysis,
    pub chunk_keys: Vec<u64>,
}

/// Packs kept per pool beyond which [`AnalysisPacks::compact`] merges them into one.
pub const MAX_PACKS: usize = 24;

/// The analyses of one pool, stored in packs ([`pack`]) and looked up by [`FileKey`].
pub struct AnalysisPacks {
    dir: PathBuf,
    format_version: u32,
    set: pack::PackSet,
}

impl AnalysisPacks {
    pub fn get(&self, key: &FileKey) -> Lookup<StoredAnalysis> {
        match self.set.get(&key.0) {
            Lookup::Hit(bytes) => match postcard::from_bytes::<StoredAnalysis>(bytes) {
                Ok(stored) => Lookup::Hit(stored),
                Err(err) => Lookup::Invalid(format!(
                    "{}: undecodable analysis {}: {err}",
                    self.dir.display(),
                    &key.hex()[..16]
                )),
            },
            Lookup::Miss => Lookup::Miss,
            Lookup::Invalid(reason) => Lookup::Invalid(reason),
        }
    }

    /// Packs that failed their checks so far (ignored; see [`AnalysisPacks::remove_damaged`]).
    pub fn damaged(&self) -> Vec<(PathBuf, String)> {
        self.set.damaged()
    }

    /// Packs that failed their header or index checks when opened.
    pub fn damaged_at_open(&self) -> usize {
        self.set.damaged_at_open()
    }

    pub fn pack_count(&self) -> usize {
        self.set.len()
    }

    /// Stores new analyses in one new pack.
    pub fn write(&self, values: &[(FileKey, &StoredAnalysis)]) -> std::io::Result<()> {
        let encoded = values
            .iter()
            .map(|(key, stored)| {
                postcard::to_stdvec(stored)
                    .map(|bytes| (key.0, bytes))
                    .map_err(|err| std::io::Error::other(format!("encoding analysis: {err}")))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        pack::write_pack(&self.dir, self.format_version, &encoded).map(|_| ())
    }

    /// Deletes the damaged packs (their analyses are recomputed when needed), so that a damaged
    /// value is not found again. Call under the pool's lock.
    pub fn remove_damaged(&self) -> std::io::Result<()> {
        for (path, _) in self.set.damaged() {
            // A pack written since (packs are named by content) may have replaced it.
            if pack::verify(&path, self.format_version).is_ok() {
                continue;
            }
            match std::fs::remove_file(path) {
                Err(err) if err.kind() != std::io::ErrorKind::NotFound => return Err(err),
                _ => {}
            }
        }
        Ok(())
    }

    /// Merges all packs into one when there are more than [`MAX_PACKS`] (each open that computes
    /// analyses adds a pack). Call under the pool's lock; readers that opened the old packs keep
    /// reading them through their open files.
    pub fn compact(dir: &Path, format_version: u32) -> std::io::Result<bool> {
        let set = pack::PackSet::open(dir, format_version);
        if set.len() <= MAX_PACKS {
            return Ok(false);
        }
        rewrite_packs(&set, dir, format_version, |_| true)?;
        Ok(true)
    }

    /// Keeps only the analyses of the file versions `keep` accepts: when any other is stored,
    /// all packs are rewritten as one (what [`AnalysisPacks::compact`] does, without the rest).
    /// Returns how many analyses went. Call under the pool's lock, as for `compact`.
    pub fn retain(
        dir: &Path,
        format_version: u32,
        keep: impl Fn(&FileKey) -> bool,
    ) -> std::io::Result<usize> {
        let set = pack::PackSet::open(dir, format_version);
        let dropped: std::collections::HashSet<&[u8; 32]> =
            set.keys().filter(|key| !keep(&FileKey(**key))).collect();
        if dropped.is_empty() {
            return Ok(0);
        }
        rewrite_packs(&set, dir, format_version, |key| !dropped.contains(key))?;
        Ok(dropped.len())
    }

    /// How many analyses [`AnalysisPacks::retain`] with `keep` would delete.
    pub fn count_except(&self, keep: impl Fn(&FileKey) -> bool) -> usize {
        self.set
            .keys()
            .filter(|key| !keep(&FileKey(**key)))
            .collect::<std::collections::HashSet<_>>()
            .len()
    }

    /// Analyses stored (a file version stored twice, by concurrent writers, counts once).
    pub fn count(&self) -> usize {
        self.set
            .keys()
            .collect::<std::collections::HashSet<_>>()
            .len()
    }
}

/// Rewrites the packs of `set` as one holding the values whose key `keep` accepts (once each;
/// damaged values are left out and recomputed when needed), then removes the old packs.
fn rewrite_packs(
    set: &pack::PackSet,
    dir: &Path,
    format_version: u32,
    keep: impl Fn(&[u8; 32]) -> bool,
) -> std::io::Result<()> {
    let mut values: Vec<([u8; 32], Vec<u8>)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for key in set.keys() {
        if keep(key)
            && seen.insert(*key)
            && let Lookup::Hit(value) = set.get(key)
        {
            values.push((*key, value.to_vec()));
        }
    }
    values.sort_by_key(|(key, _)| *key);
    let written = pack::write_pack(dir, format_version, &values)?;
    for path in set.paths() {
        if Some(path) != written.as_deref() {
            std::fs::remove_file(path)?;
        }
    }
    Ok(())
}

/// What was known about one file of a snapshot root when it was last opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    pub path: String,
    pub stamp: FileStamp,
    pub content_hash: ContentHash,
    pub language: Option<Language>,
    /// Decoded lossily (invalid UTF-8).
    pub lossy: bool,
    /// Skipped as binary.
    pub binary: bool,
}

/// The stat fast path of one snapshot root: if a file's stamp is unchanged, its content hash is
/// reused without reading it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootManifest {
    pub root: String,
    /// When the stamps were taken: the start of the walk of the open that wrote the manifest
    /// (before its first stat; every file it read was read after). Files whose mtime is within
    /// [`RACY_WINDOW_NS`] before it are not trusted (they may have changed again within the same
    /// timestamp tick, after they were read).
    pub written_at_ns: i64,
    /// The lexical pool the snapshot used.
    pub pool: Option<String>,
    /// Sorted by path.
    pub files: Vec<ManifestFile>,
}

/// See [`RootManifest::written_at_ns`].
pub const RACY_WINDOW_NS: i64 = 2_000_000_000;

impl RootManifest {
    /// The recorded file if its stamp still matches and is not racy.
    pub fn unchanged(&self, path: &str, stamp: &FileStamp) -> Option<&ManifestFile> {
        let index = self
            .files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()?;
        let file = &self.files[index];
        (file.stamp == *stamp && !self.is_racy(stamp)).then_some(file)
    }

    /// Whether this manifest cannot trust `stamp`: its mtime is too close to when the stamps
    /// were taken. Only the mtime can be racy: a change after the stamps also changes the ctime,
    /// which has nanosecond resolution on the file systems that matter and is part of the stamp.
    pub fn is_racy(&self, stamp: &FileStamp) -> bool {
        stamp.mtime_ns >= self.written_at_ns.saturating_sub(RACY_WINDOW_NS)
    }

    /// How many recorded files this manifest does not trust yet (see [`RootManifest::is_racy`]).
    pub fn racy_files(&self) -> usize {
        self.files.iter().filter(|f| self.is_racy(&f.stamp)).count()
    }
}

/// Stat manifests, one per canonical snapshot root.
#[derive(Debug, Clone)]
pub struct ManifestStore {
    dir: PathBuf,
    format_version: u32,
}

impl ManifestStore {
    pub fn path_of(&self, canonical_root: &Path) -> PathBuf {
        let hash = blake3::hash(canonical_root.as_os_str().as_encoded_bytes());
        self.dir.join(format!("{}.bin", &hash.to_hex()[..32]))
    }

    pub fn get(&self, canonical_root: &Path) -> Lookup<RootManifest> {
        let path = self.path_of(canonical_root);
        match self.read(&path) {
            Lookup::Hit(manifest) if manifest.root != canonical_root.display().to_string() => {
                Lookup::Invalid(format!("{}: manifest of another root", path.display()))
            }
            lookup => lookup,
        }
    }

    /// The manifest stored in `path`, checked and decoded.
    fn read(&self, path: &Path) -> Lookup<RootManifest> {
        match entry::read_entry(path, KIND_MANIFEST, self.format_version) {
            Ok(None) => Lookup::Miss,
            Ok(Some(payload)) => match postcard::from_bytes::<RootManifest>(&payload) {
                Ok(manifest) => Lookup::Hit(manifest),
                Err(err) => {
                    Lookup::Invalid(format!("{}: undecodable manifest: {err}", path.display()))
                }
            },
            Err(err) => Lookup::Invalid(err.to_string()),
        }
    }

    /// Every stored manifest with its file, in file name order (what the garbage collection of
    /// [`crate::index::gc`] reads to know which snapshots the cache serves); a file that fails
    /// its checks is listed as [`Lookup::Invalid`].
    pub fn list(&self) -> Vec<(PathBuf, Lookup<RootManifest>)> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|ext| ext == "bin"))
            .collect();
        paths.sort();
        paths
            .into_iter()
            .map(|path| {
                let lookup = self.read(&path);
                (path, lookup)
            })
            .collect()
    }

    pub fn put(&self, canonical_root: &Path, manifest: &RootManifest) -> std::io::Result<()> {
        let payload = postcard::to_stdvec(manifest)
            .map_err(|err| std::io::Error::other(format!("encoding manifest: {err}")))?;
        entry::write_entry(
            &self.path_of(canonical_root),
            KIND_MANIFEST,
            self.format_version,
            &payload,
        )
    }
}

/// Whether an I/O error says the cache cannot be written here (a read-only file system, a
/// folder of another user): a complete cache is still read then, without locks or writes.
pub fn is_read_only(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::ReadOnlyFilesystem | std::io::ErrorKind::PermissionDenied
    )
}

/// An exclusive advisory lock on a file, released on drop (or when the process dies).
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

impl FileLock {
    /// Blocks until the lock on `path` (created if missing) is ours.
    pub fn exclusive(path: &Path) -> std::io::Result<FileLock> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        file.lock()?;
        Ok(FileLock { _file: file })
    }
}

/// The lexical pools of one analysis configuration.
#[derive(Debug, Clone)]
pub struct PoolRegistry {
    dir: PathBuf,
    format_version: u32,
}

impl PoolRegistry {
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn pool_dir(&self, id: &str) -> PathBuf {
        self.dir.join(id)
    }

    /// The analyses of pool `id`.
    pub fn analyses(&self, id: &str) -> AnalysisPacks {
        let dir = self.packs_dir(id);
        AnalysisPacks {
            set: pack::PackSet::open(&dir, self.format_version),
            dir,
            format_version: self.format_version,
        }
    }

    pub fn packs_dir(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.packs"))
    }

    pub fn format_version(&self) -> u32 {
        self.format_version
    }

    /// Held while choosing or creating a pool.
    pub fn lock_registry(&self) -> std::io::Result<FileLock> {
        FileLock::exclusive(&self.dir.join("registry.lock"))
    }

    /// Held while writing (or repairing) pool `id`.
    pub fn lock_pool(&self, id: &str) -> std::io::Result<FileLock> {
        FileLock::exclusive(&self.dir.join(format!("{id}.lock")))
    }

    /// Ids of the pools that exist (those with a keys file), sorted.
    pub fn pool_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = std::fs::read_dir(&self.dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter_map(|e| {
                        let name = e.file_name().to_str()?.to_string();
                        name.strip_suffix(".keys").map(str::to_string)
                    })
                    .filter(|id| is_pool_id(id))
                    .collect()
            })
            .unwrap_or_default();
        ids.sort();
        ids
    }

    /// The file keys recorded for pool `id` (empty when missing or invalid: the keys only guide
    /// the choice of a pool; the pool itself is the truth).
    pub fn keys(&self, id: &str) -> KeySet {
        let path = self.dir.join(format!("{id}.keys"));
        match entry::read_entry(&path, KIND_POOL_KEYS, self.format_version) {
            Ok(Some(payload)) => payload
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect(),
            _ => KeySet::default(),
        }
    }

    pub fn write_keys(&self, id: &str, keys: &KeySet) -> std::io::Result<()> {
        let mut sorted: Vec<u64> = keys.iter().copied().collect();
        sorted.sort_unstable();
        let payload: Vec<u8> = sorted.iter().flat_map(|k| k.to_le_bytes()).collect();
        entry::write_entry(
            &self.dir.join(format!("{id}.keys")),
            KIND_POOL_KEYS,
            self.format_version,
            &payload,
        )
    }

    /// A fresh, unique pool id.
    pub fn new_pool_id(&self) -> String {
        let mut hasher = blake3::Hasher::new();
        hasher.update(&std::process::id().to_le_bytes());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        hasher.update(&now.to_le_bytes());
        hasher.update(format!("{:?}", std::thread::current().id()).as_bytes());
        hasher.finalize().to_hex()[..16].to_string()
    }
}

/// Whether `id` has the shape of a pool id ([`PoolRegistry::new_pool_id`]).
pub fn is_pool_id(id: &str) -> bool {
    id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{Chunk, ChunkKind};

    fn analysis() -> FileAnalysis {
        FileAnalysis {
            language: Some(Language::Python),
            line_count: 3,
            chunks: vec![Chunk {
                start: 1,
                end: 3,
                kind: ChunkKind::Function,
                name: Some("f".into()),
            }]
            .into(),
            ..FileAnalysis::default()
        }
    }

    #[test]
    fn only_what_a_newer_version_supersedes_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let layout = CacheLayout::with_format_version(dir.path(), "a4-0723f4c6", 2, 3);
        // (folder under the cache root, removed?)
        let cases = [
            ("index-v1", true),
            ("index-v2", true),
            ("index-v3", false),
            ("index-v4", false),
            ("index-vx", false),
            ("history-v1", false),
            ("embeddings", false),
            ("index-v3/roots-a3-0723f4c6", true),
            ("index-v3/pools-a3-0723f4c6-t2", true),
            ("index-v3/pools-a3-11111111-t9", true),
            ("index-v3/roots-a4-0723f4c6", false),
            ("index-v3/pools-a4-0723f4c6-t2", false),
            ("index-v3/pools-a4-0723f4c6-t1", true),
            ("index-v3/pools-a4-0723f4c6-t3", false),
            ("index-v3/roots-a4-99999999", false),
            ("index-v3/pools-a4-99999999-t1", false),
            ("index-v3/roots-a5-0723f4c6", false),
            ("index-v3/pools-ax-0723f4c6-t2", false),
            ("index-v3/other", false),
        ];
        for (folder, _) in cases {
            std::fs::create_dir_all(dir.path().join(folder)).unwrap();
            std::fs::write(dir.path().join(folder).join("entry.bin"), b"x").unwrap();
        }
        // A plain file with a superseded name is not a cache folder.
        std::fs::write(dir.path().join("index-v0"), b"mine").unwrap();
        let expected_removed = cases.iter().filter(|(_, removed)| *removed).count();
        assert_eq!(layout.remove_superseded(), expected_removed);
        for (folder, removed) in cases {
            let exists = dir.path().join(folder).join("entry.bin").is_file();
            assert_eq!(exists, !removed, "{folder}");
        }
        assert!(dir.path().join("index-v0").is_file());
        // Nothing left to remove; a layout whose tag names no analyser version removes only
        // older trees.
        assert_eq!(layout.remove_superseded(), 0);
        std::fs::create_dir_all(dir.path().join("index-v2")).unwrap();
        let untagged = CacheLayout::with_format_version(dir.path(), "custom", 2, 3);
        assert_eq!(untagged.remove_superseded(), 1);
        assert!(dir.path().join("index-v3/roots-a4-99999999").is_dir());
    }

    fn stored() -> StoredAnalysis {
        StoredAnalysis {
            analysis: analysis(),
            chunk_keys: vec![7],
        }
    }

    #[test]
    fn analyses_roundtrip_and_corruption_is_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let pools = CacheLayout::new(dir.path(), "a1", 1).pools();
        let key = FileKey::new("a.py", &ContentHash::of(b"def f(): pass\n"));
        assert!(matches!(pools.analyses("p").get(&key), Lookup::Miss));
        pools.analyses("p").write(&[(key, &stored())]).unwrap();
        assert!(matches!(pools.analyses("p").get(&key), Lookup::Hit(a) if a == stored()));
        // Garble the value's last byte.
        let pack = std::fs::read_dir(pools.packs_dir("p"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let mut bytes = std::fs::read(&pack).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&pack, bytes).unwrap();
        assert!(matches!(pools.analyses("p").get(&key), Lookup::Invalid(_)));
    }

    #[test]
    fn a_version_bump_or_new_analyser_sees_nothing_old() {
        let dir = tempfile::tempdir().unwrap();
        let key = FileKey::new("a.py", &ContentHash::of(b"x"));
        let layout = CacheLayout::new(dir.path(), "a1", 1);
        layout
            .pools()
            .analyses("p")
            .write(&[(key, &stored())])
            .unwrap();
        let bumped = layout.at_format_version(CACHE_FORMAT_VERSION + 1);
        assert!(matches!(
            bumped.pools().analyses("p").get(&key),
            Lookup::Miss
        ));
        let other_analyser = CacheLayout::new(dir.path(), "a2", 1);
        assert!(matches!(
            other_analyser.pools().analyses("p").get(&key),
            Lookup::Miss
        ));
        // A pack of another format version at the same place is rejected, not misread.
        let old_dir = layout.pools().packs_dir("p");
        let new_dir = bumped.pools().packs_dir("p");
        std::fs::create_dir_all(&new_dir).unwrap();
        for entry in std::fs::read_dir(old_dir).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, new_dir.join(path.file_name().unwrap())).unwrap();
        }
        let packs = bumped.pools().analyses("p");
        assert_eq!(packs.damaged().len(), 1);
        assert!(matches!(packs.get(&key), Lookup::Miss));
    }

    #[test]
    fn packs_are_compacted() {
        let dir = tempfile::tempdir().unwrap();
        let pools = CacheLayout::new(dir.path(), "a1", 1).pools();
        let keys: Vec<FileKey> = (0..=MAX_PACKS)
            .map(|i| FileKey::new(&format!("f{i}.py"), &ContentHash::of(b"x")))
            .collect();
        for key in &keys {
            pools.analyses("p").write(&[(*key, &stored())]).unwrap();
        }
        assert_eq!(pools.analyses("p").pack_count(), MAX_PACKS + 1);
        assert!(AnalysisPacks::compact(&pools.packs_dir("p"), pools.format_version()).unwrap());
        let packs = pools.analyses("p");
        assert_eq!(packs.pack_count(), 1);
        assert!(keys.iter().all(|k| matches!(packs.get(k), Lookup::Hit(_))));
        assert!(!AnalysisPacks::compact(&pools.packs_dir("p"), pools.format_version()).unwrap());
    }

    #[test]
    fn manifest_fast_path_distrusts_racy_files() {
        let stamp = FileStamp {
            size: 10,
            mtime_ns: 1_000_000_000_000,
            ctime_ns: 1_000_000_000_000,
            inode: 7,
        };
        let file = ManifestFile {
            path: "a.py".into(),
            stamp,
            content_hash: ContentHash::of(b"x"),
            language: None,
            lossy: false,
            binary: false,
        };
        let mut manifest = RootManifest {
            root: "/r".into(),
            written_at_ns: stamp.mtime_ns + 10 * RACY_WINDOW_NS,
            pool: None,
            files: vec![file],
        };
        assert!(manifest.unchanged("a.py", &stamp).is_some());
        assert!(manifest.unchanged("b.py", &stamp).is_none());
        let touched = FileStamp {
            mtime_ns: stamp.mtime_ns + 1,
            ..stamp
        };
        assert!(manifest.unchanged("a.py", &touched).is_none());
        manifest.written_at_ns = stamp.mtime_ns + 1;
        assert!(manifest.unchanged("a.py", &stamp).is_none());
    }

    #[test]
    fn pool_keys_roundtrip() {
        let dir = tempfile::tempdir().unwrap();
        let pools = CacheLayout::new(dir.path(), "a1", 1).pools();
        let id = pools.new_pool_id();
        assert!(pools.pool_ids().is_empty());
        let keys: KeySet = [3, 1, 2].into_iter().collect();
        pools.write_keys(&id, &keys).unwrap();
        assert_eq!(pools.pool_ids(), vec![id.clone()]);
        assert_eq!(pools.keys(&id), keys);
    }
}
