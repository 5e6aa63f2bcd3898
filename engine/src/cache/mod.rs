//! The on-disk index cache, keyed by content.
//!
//! Layout under the cache root (`--cache-dir`, `SWEX_CACHE_DIR`, else the user cache directory's
//! `swex/`):
//!
//! ```text
//! index-v{CACHE_FORMAT_VERSION}/
//!   analyses-{analysis tag}/ab/<file key>.bin   one FileAnalysis per (path, content) version
//!   roots-{analysis tag}/<root hash>.bin        stat manifest of a snapshot root (fast path)
//!   pools-{analysis tag}-t{tokenizer}/          lexical chunk pools (tantivy), one per repository
//!     <pool id>/          the tantivy index
//!     <pool id>.keys      file keys the pool holds or is about to hold (pool choice)
//!     <pool id>.lock      held while writing the pool
//!     registry.lock       held while choosing or creating a pool
//! ```
//!
//! - The **analysis tag** hashes the analyser version and options, so a new analyser or other
//!   options never read old analyses; a new [`CACHE_FORMAT_VERSION`] starts a fresh `index-v*`
//!   tree (older trees are left alone and can be deleted).
//! - **File keys** hash `(path, content hash)`: analyses and pool documents of a file version are
//!   shared by every snapshot containing it.
//! - Every file except tantivy's is a self-checking [`entry`] written atomically: a truncated,
//!   garbled or foreign entry is detected, rebuilt and overwritten, never trusted. Tantivy's files
//!   carry their own checksums, which [`crate::index`] verifies once per pool and process.
//! - Concurrency: entries are content-addressed and renamed into place (concurrent writers write
//!   the same bytes); pools are written under an exclusive file lock, and chosen or created under
//!   the registry lock so that two processes indexing the same new repository share one pool.
//!
//! This module knows the layout and the formats; *when* to read or write is [`crate::index`]'s
//! business.

pub mod entry;

use crate::analysis::{FileAnalysis, Language};
use crate::scan::{ContentHash, FileStamp};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};

/// Version of the cache layout and entry formats. Bump it whenever an on-disk format changes.
pub const CACHE_FORMAT_VERSION: u32 = 1;

const KIND_ANALYSIS: [u8; 4] = *b"ANLY";
const KIND_MANIFEST: [u8; 4] = *b"ROOT";
const KIND_POOL_KEYS: [u8; 4] = *b"KEYS";

/// The cache root to use when none is given: `$SWEX_CACHE_DIR`, else `<user cache dir>/swex`,
/// else `.swex-cache` in the working directory.
pub fn default_cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("SWEX_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::cache_dir()
        .map(|d| d.join("swex"))
        .unwrap_or_else(|| PathBuf::from(".swex-cache"))
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

    pub fn analyses(&self) -> AnalysisStore {
        AnalysisStore {
            dir: self
                .versioned()
                .join(format!("analyses-{}", self.analysis_tag)),
            format_version: self.format_version,
        }
    }

    pub fn manifests(&self) -> ManifestStore {
        ManifestStore {
            dir: self
                .versioned()
                .join(format!("roots-{}", self.analysis_tag)),
            format_version: self.format_version,
        }
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

/// What a cache lookup found.
#[derive(Debug)]
pub enum Lookup<T> {
    Hit(T),
    Miss,
    /// An entry was there but failed its checks (the message says why); treat as a miss and
    /// overwrite it.
    Invalid(String),
}

/// Per-file analyses, content-addressed by [`FileKey`].
#[derive(Debug, Clone)]
pub struct AnalysisStore {
    dir: PathBuf,
    format_version: u32,
}

impl AnalysisStore {
    pub fn path_of(&self, key: &FileKey) -> PathBuf {
        let hex = key.hex();
        self.dir.join(&hex[..2]).join(format!("{hex}.bin"))
    }

    pub fn get(&self, key: &FileKey) -> Lookup<FileAnalysis> {
        let path = self.path_of(key);
        match entry::read_entry(&path, KIND_ANALYSIS, self.format_version) {
            Ok(None) => Lookup::Miss,
            Ok(Some(payload)) => match postcard::from_bytes::<FileAnalysis>(&payload) {
                Ok(analysis) => Lookup::Hit(analysis),
                Err(err) => {
                    Lookup::Invalid(format!("{}: undecodable analysis: {err}", path.display()))
                }
            },
            Err(err) => Lookup::Invalid(err.to_string()),
        }
    }

    pub fn put(&self, key: &FileKey, analysis: &FileAnalysis) -> std::io::Result<()> {
        let payload = postcard::to_stdvec(analysis)
            .map_err(|err| std::io::Error::other(format!("encoding analysis: {err}")))?;
        entry::write_entry(
            &self.path_of(key),
            KIND_ANALYSIS,
            self.format_version,
            &payload,
        )
    }
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
    /// When the manifest was made; files whose mtime is within [`RACY_WINDOW_NS`] before it are
    /// not trusted (they may have changed again within the same timestamp tick).
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
        // Only the mtime can be racy: a change after the manifest also changes the ctime, which
        // has nanosecond resolution on the file systems that matter and is part of the stamp.
        let racy = stamp.mtime_ns >= self.written_at_ns - RACY_WINDOW_NS;
        (file.stamp == *stamp && !racy).then_some(file)
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
        match entry::read_entry(&path, KIND_MANIFEST, self.format_version) {
            Ok(None) => Lookup::Miss,
            Ok(Some(payload)) => match postcard::from_bytes::<RootManifest>(&payload) {
                Ok(manifest) if manifest.root == canonical_root.display().to_string() => {
                    Lookup::Hit(manifest)
                }
                Ok(_) => Lookup::Invalid(format!("{}: manifest of another root", path.display())),
                Err(err) => {
                    Lookup::Invalid(format!("{}: undecodable manifest: {err}", path.display()))
                }
            },
            Err(err) => Lookup::Invalid(err.to_string()),
        }
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
    pub fn keys(&self, id: &str) -> HashSet<u64> {
        let path = self.dir.join(format!("{id}.keys"));
        match entry::read_entry(&path, KIND_POOL_KEYS, self.format_version) {
            Ok(Some(payload)) => payload
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect(),
            _ => HashSet::new(),
        }
    }

    pub fn write_keys(&self, id: &str, keys: &HashSet<u64>) -> std::io::Result<()> {
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

fn is_pool_id(id: &str) -> bool {
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
            }],
            ..FileAnalysis::default()
        }
    }

    #[test]
    fn analyses_roundtrip_and_corruption_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let layout = CacheLayout::new(dir.path(), "a1", 1);
        let store = layout.analyses();
        let key = FileKey::new("a.py", &ContentHash::of(b"def f(): pass\n"));
        assert!(matches!(store.get(&key), Lookup::Miss));
        store.put(&key, &analysis()).unwrap();
        assert!(matches!(store.get(&key), Lookup::Hit(a) if a == analysis()));
        // Garble one payload byte.
        let path = store.path_of(&key);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, bytes).unwrap();
        assert!(matches!(store.get(&key), Lookup::Invalid(_)));
        store.put(&key, &analysis()).unwrap();
        assert!(matches!(store.get(&key), Lookup::Hit(_)));
    }

    #[test]
    fn a_version_bump_or_new_analyser_sees_nothing_old() {
        let dir = tempfile::tempdir().unwrap();
        let key = FileKey::new("a.py", &ContentHash::of(b"x"));
        CacheLayout::new(dir.path(), "a1", 1)
            .analyses()
            .put(&key, &analysis())
            .unwrap();
        let bumped =
            CacheLayout::with_format_version(dir.path(), "a1", 1, CACHE_FORMAT_VERSION + 1);
        assert!(matches!(bumped.analyses().get(&key), Lookup::Miss));
        assert!(matches!(
            CacheLayout::new(dir.path(), "a2", 1).analyses().get(&key),
            Lookup::Miss
        ));
        // An entry of another format version at the same place is rejected, not misread.
        let old = CacheLayout::new(dir.path(), "a1", 1).analyses();
        std::fs::create_dir_all(bumped.analyses().path_of(&key).parent().unwrap()).unwrap();
        std::fs::copy(old.path_of(&key), bumped.analyses().path_of(&key)).unwrap();
        assert!(matches!(bumped.analyses().get(&key), Lookup::Invalid(_)));
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
        let keys: HashSet<u64> = [3, 1, 2].into_iter().collect();
        pools.write_keys(&id, &keys).unwrap();
        assert_eq!(pools.pool_ids(), vec![id.clone()]);
        assert_eq!(pools.keys(&id), keys);
    }
}
