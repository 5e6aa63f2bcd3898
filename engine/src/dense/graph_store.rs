//! Persisted HNSW graphs, found by the vectors they index.
//!
//! Building an HNSW graph costs minutes of CPU for a large repository on a small machine (see
//! `docs/dense.md`); reading a stored one costs reading two files. A graph is stored under a
//! [`GraphKey`]: a blake3 digest of exactly the vectors it was built from (their bytes, in index
//! order), the dimension, the build parameters and the distance. A stored graph can therefore only be
//! found by an index whose vectors are bit-identical, in the same order: a changed chunk, another
//! model, other parameters or another order all give another key, and a graph is never used with
//! vectors it was not built from.
//!
//! Layout: `<store>/<key>/` holds `manifest.json` and hnsw_rs's own dump (`hnsw.hnsw.graph`,
//! `hnsw.hnsw.data`). Invariants:
//! - a graph directory appears whole or not at all: it is written under a temporary name in the
//!   store and renamed into place; of concurrent writers of one key the first rename wins and the
//!   others remove their copies;
//! - before hnsw_rs reads a dump, the manifest's format, key, sizes and blake3 checksums of both
//!   files are checked (hnsw_rs asserts on malformed input, and a corrupted length field could make
//!   it allocate without bound); a graph that fails a check is removed and reported as
//!   [`LoadOutcome::Invalid`], so the caller rebuilds it, and a panic inside hnsw_rs is caught and
//!   treated the same way;
//! - the store keeps at most `max_graphs` graphs, dropping the least recently used (a load touches
//!   the manifest) after each save, which also removes temporary directories a crashed writer left
//!   more than an hour earlier.
//!
//! hnsw_rs ties a loaded graph's lifetime to its loader ([`HnswIo`]); the loader of each graph
//! (a few hundred bytes, no vector data) is therefore leaked, which gives the graph a `'static`
//! lifetime without `unsafe`.

use std::fs;
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use hnsw_rs::api::AnnT;
use hnsw_rs::hnswio::HnswIo;
use hnsw_rs::prelude::Hnsw;
use serde::{Deserialize, Serialize};

use super::DenseError;
use super::index::UnitCosine;

/// hnsw_rs's dump files are `<basename>.hnsw.graph` and `<basename>.hnsw.data`.
const BASENAME: &str = "hnsw";
const GRAPH_FILE: &str = "hnsw.hnsw.graph";
const DATA_FILE: &str = "hnsw.hnsw.data";
const MANIFEST: &str = "manifest.json";
/// Name prefix of the directory a graph is written in before it is renamed into place.
const TEMP_PREFIX: &str = ".tmp-graph-";
/// Graphs kept by default: a graph of a 30k-chunk repository takes about 60 MB.
pub const DEFAULT_MAX_GRAPHS: usize = 16;

/// An HNSW graph over unit vectors, as the dense index uses it.
pub type Graph = Hnsw<'static, f32, UnitCosine>;

/// The build parameters that shape a graph (and are part of its key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphParams {
    pub max_connections: usize,
    pub ef_construction: usize,
    pub max_layers: usize,
}

/// The identity of a graph: a digest of its vectors and parameters (64 hex digits).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GraphKey(String);

impl GraphKey {
    /// The key of a graph over `vectors` (`dim` floats each, in index order) built with `params`.
    pub fn of(vectors: &[f32], dim: usize, params: &GraphParams) -> GraphKey {
        let mut hasher = blake3::Hasher::new();
        hasher.update(b"swex-hnsw-graph");
        hasher.update(&crate::formats::GRAPH_STORE_VERSION.to_le_bytes());
        hasher.update(std::any::type_name::<UnitCosine>().as_bytes());
        for value in [
            dim,
            vectors.len() / dim.max(1),
            params.max_connections,
            params.ef_construction,
            params.max_layers,
        ] {
            hasher.update(&(value as u64).to_le_bytes());
        }
        // Through a buffer: one `update` per float would cost more than the hashing.
        let mut buffer = Vec::with_capacity(64 * 1024);
        for chunk in vectors.chunks(16 * 1024) {
            buffer.clear();
            buffer.extend(chunk.iter().flat_map(|v| v.to_le_bytes()));
            hasher.update(&buffer);
        }
        GraphKey(hasher.finalize().to_hex().to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for GraphKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What `manifest.json` records about a stored graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphManifest {
    pub format: u32,
    pub key: GraphKey,
    pub count: usize,
    pub dim: usize,
    pub params: GraphParams,
    pub graph_file: FileCheck,
    pub data_file: FileCheck,
    /// Seconds the build took (for people reading the store).
    pub build_seconds: f64,
}

/// Size and blake3 checksum of one dump file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCheck {
    pub bytes: u64,
    pub blake3: String,
}

impl FileCheck {
    fn of(path: &Path) -> Result<FileCheck, DenseError> {
        let mut file = fs::File::open(path).map_err(|e| DenseError::io(path, e))?;
        let mut hasher = blake3::Hasher::new();
        let mut buffer = vec![0u8; 1 << 20];
        let mut bytes = 0u64;
        loop {
            let n = file
                .read(&mut buffer)
                .map_err(|e| DenseError::io(path, e))?;
            if n == 0 {
                break;
            }
            hasher.update(&buffer[..n]);
            bytes += n as u64;
        }
        Ok(FileCheck {
            bytes,
            blake3: hasher.finalize().to_hex().to_string(),
        })
    }
}

/// The answer of [`GraphStore::load`].
pub enum LoadOutcome {
    Loaded(Box<Graph>),
    /// No graph is stored under the key.
    Absent,
    /// A graph was stored but failed a check (removed; rebuild it). The reason is for diagnostics.
    Invalid(String),
}

/// A directory of persisted graphs; see the module docs.
#[derive(Debug, Clone)]
pub struct GraphStore {
    dir: PathBuf,
    max_graphs: usize,
}

impl GraphStore {
    /// A store in `dir` (created on first save) keeping at most `max_graphs` graphs (at least 1).
    pub fn new(dir: impl Into<PathBuf>, max_graphs: usize) -> GraphStore {
        GraphStore {
            dir: dir.into(),
            max_graphs: max_graphs.max(1),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn graph_dir(&self, key: &GraphKey) -> PathBuf {
        self.dir.join(key.as_str())
    }

    /// Whether a graph is stored under `key` (without checking it).
    pub fn contains(&self, key: &GraphKey) -> bool {
        self.graph_dir(key).join(MANIFEST).is_file()
    }

    /// The size of the graph stored under `key` (both dump files, from its manifest), or `None`
    /// when there is none. Reads only the manifest: [`GraphStore::load`] checks the files.
    pub fn stored_bytes(&self, key: &GraphKey) -> Option<u64> {
        let bytes = fs::read(self.graph_dir(key).join(MANIFEST)).ok()?;
        let manifest: GraphManifest = serde_json::from_slice(&bytes).ok()?;
        (manifest.format == crate::formats::GRAPH_STORE_VERSION && &manifest.key == key)
            .then_some(manifest.graph_file.bytes + manifest.data_file.bytes)
    }

    /// Keys of the stored graphs.
    pub fn keys(&self) -> Vec<GraphKey> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut keys: Vec<GraphKey> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| name.len() == 64 && name.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(GraphKey)
            .filter(|key| self.contains(key))
            .collect();
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        keys
    }

    /// Loads the graph stored under `key`, which must index `count` vectors of `dim` floats.
    /// Errors are only for a store that cannot be read at all; a damaged graph is
    /// [`LoadOutcome::Invalid`] (and removed).
    pub fn load(&self, key: &GraphKey, count: usize, dim: usize) -> LoadOutcome {
        let dir = self.graph_dir(key);
        let manifest_path = dir.join(MANIFEST);
        let manifest = match fs::read(&manifest_path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return LoadOutcome::Absent,
            Err(e) => return self.invalid(key, format!("{}: {e}", manifest_path.display())),
        };
        let manifest: GraphManifest = match serde_json::from_slice(&manifest) {
            Ok(m) => m,
            Err(e) => return self.invalid(key, format!("{}: {e}", manifest_path.display())),
        };
        if manifest.format != crate::formats::GRAPH_STORE_VERSION
            || &manifest.key != key
            || manifest.count != count
            || manifest.dim != dim
        {
            return self.invalid(
                key,
                format!(
                    "{} describes another graph (format {}, {} vectors of {} dimensions)",
                    manifest_path.display(),
                    manifest.format,
                    manifest.count,
                    manifest.dim
                ),
            );
        }
        for (file, expected) in [
            (GRAPH_FILE, &manifest.graph_file),
            (DATA_FILE, &manifest.data_file),
        ] {
            let path = dir.join(file);
            match FileCheck::of(&path) {
                Ok(actual) if &actual == expected => {}
                Ok(actual) => {
                    return self.invalid(
                        key,
                        format!(
                            "{}: {} bytes with blake3 {}, the manifest says {} bytes with blake3 {}",
                            path.display(),
                            actual.bytes,
                            actual.blake3,
                            expected.bytes,
                            expected.blake3
                        ),
                    );
                }
                Err(e) => return self.invalid(key, e.to_string()),
            }
        }
        // The loader must outlive the graph (see the module docs).
        let loader: &'static HnswIo = Box::leak(Box::new(HnswIo::new(&dir, BASENAME)));
        let loaded = catch_unwind(AssertUnwindSafe(|| {
            loader.load_hnsw_with_dist::<f32, UnitCosine>(UnitCosine)
        }));
        let mut graph = match loaded {
            Ok(Ok(graph)) => graph,
            Ok(Err(e)) => return self.invalid(key, format!("{}: {e}", dir.display())),
            Err(_) => return self.invalid(key, format!("{}: hnsw_rs panicked", dir.display())),
        };
        if graph.get_nb_point() != count {
            return self.invalid(
                key,
                format!(
                    "{} holds {} points, expected {count}",
                    dir.display(),
                    graph.get_nb_point()
                ),
            );
        }
        graph.set_searching_mode(true);
        // Least recently used goes first when pruning: a load counts as a use.
        let _ = fs::File::options()
            .append(true)
            .open(&manifest_path)
            .and_then(|f| f.set_modified(SystemTime::now()));
        LoadOutcome::Loaded(Box::new(graph))
    }

    fn invalid(&self, key: &GraphKey, reason: String) -> LoadOutcome {
        let _ = fs::remove_dir_all(self.graph_dir(key));
        LoadOutcome::Invalid(reason)
    }

    /// Stores `graph` (built over `count` vectors of `dim` floats with `params`) under `key`.
    /// Returns `false` when another writer stored the same key first (its copy is kept).
    pub fn save(
        &self,
        key: &GraphKey,
        graph: &Graph,
        count: usize,
        dim: usize,
        params: GraphParams,
        build_seconds: f64,
    ) -> Result<bool, DenseError> {
        fs::create_dir_all(&self.dir).map_err(|e| DenseError::io(&self.dir, e))?;
        let temp = tempfile::Builder::new()
            .prefix(TEMP_PREFIX)
            .tempdir_in(&self.dir)
            .map_err(|e| DenseError::io(&self.dir, e))?;
        // hnsw_rs panics when it cannot create its files; the directory was just made, so that
        // means a full disk or a permission change under us: an error, not a crash.
        let dumped = catch_unwind(AssertUnwindSafe(|| graph.file_dump(temp.path(), BASENAME)));
        match dumped {
            Ok(Ok(name)) if name == BASENAME => {}
            Ok(Ok(name)) => return Err(self.save_error(format!("dumped as `{name}`"))),
            Ok(Err(e)) => return Err(self.save_error(e.to_string())),
            Err(_) => return Err(self.save_error("hnsw_rs panicked while dumping".into())),
        }
        let manifest = GraphManifest {
            format: crate::formats::GRAPH_STORE_VERSION,
            key: key.clone(),
            count,
            dim,
            params,
            graph_file: FileCheck::of(&temp.path().join(GRAPH_FILE))?,
            data_file: FileCheck::of(&temp.path().join(DATA_FILE))?,
            build_seconds,
        };
        let manifest_path = temp.path().join(MANIFEST);
        let json = serde_json::to_vec_pretty(&manifest).expect("a manifest serializes");
        fs::write(&manifest_path, json).map_err(|e| DenseError::io(&manifest_path, e))?;
        let target = self.graph_dir(key);
        if target.exists() {
            return Ok(false);
        }
        let temp_path = temp.keep();
        match fs::rename(&temp_path, &target) {
            Ok(()) => {}
            Err(_) if target.exists() => {
                let _ = fs::remove_dir_all(&temp_path);
                return Ok(false);
            }
            Err(e) => {
                let _ = fs::remove_dir_all(&temp_path);
                return Err(DenseError::io(&target, e));
            }
        }
        self.prune(key);
        Ok(true)
    }

    fn save_error(&self, message: String) -> DenseError {
        DenseError::Cache {
            path: self.dir.clone(),
            message: format!("could not store an HNSW graph: {message}"),
        }
    }

    /// Removes the least recently used graphs beyond `max_graphs`, never `keep`, and temporary
    /// directories that writers left behind (a crash mid-save) more than an hour ago; younger ones
    /// may belong to a save in progress.
    fn prune(&self, keep: &GraphKey) {
        if let Ok(entries) = fs::read_dir(&self.dir) {
            let stale = SystemTime::now() - std::time::Duration::from_secs(3600);
            for entry in entries.filter_map(|e| e.ok()) {
                let abandoned = entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX)
                    && entry
                        .metadata()
                        .and_then(|m| m.modified())
                        .is_ok_and(|modified| modified < stale);
                if abandoned {
                    let _ = fs::remove_dir_all(entry.path());
                }
            }
        }
        let mut graphs: Vec<(SystemTime, GraphKey)> = self
            .keys()
            .into_iter()
            .filter(|key| key != keep)
            .map(|key| {
                let used = fs::metadata(self.graph_dir(&key).join(MANIFEST))
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                (used, key)
            })
            .collect();
        if graphs.len() < self.max_graphs {
            return;
        }
        graphs.sort();
        let excess = graphs.len() + 1 - self.max_graphs;
        for (_, key) in graphs.into_iter().take(excess) {
            let _ = fs::remove_dir_all(self.graph_dir(&key));
        }
    }
}

/// Progress reports while building a graph. Each is a separate parallel insertion; small blocks
/// cost recall and time (blocks of 2,048 points on django's vectors: recall@10 0.989 instead of
/// 0.999 in 6 of 8 runs, 15 % more CPU; see `docs/dense.md`), so there are few.
const BUILD_REPORTS: usize = 8;

/// Builds an HNSW graph over `vectors` (`dim` floats each; point ids are positions), reporting
/// (points inserted, points) to `progress` after each block of insertions.
pub fn build_graph(
    vectors: &[f32],
    dim: usize,
    params: &GraphParams,
    progress: &dyn Fn(usize, usize),
) -> (Graph, f64) {
    let started = Instant::now();
    let count = vectors.len() / dim.max(1);
    let mut graph = Hnsw::new(
        params.max_connections,
        count,
        params.max_layers,
        params.ef_construction,
        UnitCosine,
    );
    let mut points: Vec<(&[f32], usize)> = vectors
        .chunks_exact(dim)
        .enumerate()
        .map(|(i, v)| (v, i))
        .collect();
    // Chunks come in path order, so a block in index order would be a few directories; a fixed
    // shuffle makes every block a sample of the whole repository (the graph's upper layers, built
    // from the first block, then span it).
    shuffle(&mut points);
    progress(0, count);
    let mut inserted = 0;
    for block in points.chunks(count.div_ceil(BUILD_REPORTS).max(1)) {
        // hnsw_rs wants a `Vec`; the pairs are references, so the copy is small.
        graph.parallel_insert_slice(&block.to_vec());
        inserted += block.len();
        progress(inserted, count);
    }
    graph.set_searching_mode(true);
    (graph, started.elapsed().as_secs_f64())
}

/// Fisher–Yates with a fixed xorshift seed: the same order for the same input, every run.
fn shuffle<T>(items: &mut [T]) {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..items.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        items.swap(i, (state % (i as u64 + 1)) as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dense::index::tests::synthetic;

    const DIM: usize = 16;
    const PARAMS: GraphParams = GraphParams {
        max_connections: 8,
        ef_construction: 32,
        max_layers: 16,
    };

    fn stored(store: &GraphStore, seed: u64) -> GraphKey {
        let vectors = synthetic(200, DIM, seed);
        let key = GraphKey::of(&vectors, DIM, &PARAMS);
        let (graph, seconds) = build_graph(&vectors, DIM, &PARAMS, &|_, _| {});
        assert!(store.save(&key, &graph, 200, DIM, PARAMS, seconds).unwrap());
        key
    }

    #[test]
    fn the_insertion_order_is_a_fixed_permutation_that_spreads_the_points() {
        let mut first: Vec<usize> = (0..1000).collect();
        let mut second = first.clone();
        shuffle(&mut first);
        shuffle(&mut second);
        assert_eq!(first, second);
        let mut sorted = first.clone();
        sorted.sort();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>());
        // The first block holds points from all over the index, not its first tenth.
        let early = first[..100].iter().filter(|&&i| i < 100).count();
        assert!(
            early < 30,
            "{early} of the first 100 come from the first 100"
        );
    }

    #[test]
    fn the_key_covers_every_vector_bit_the_order_and_the_parameters() {
        let vectors = synthetic(50, DIM, 1);
        let key = GraphKey::of(&vectors, DIM, &PARAMS);
        assert_eq!(key, GraphKey::of(&vectors.clone(), DIM, &PARAMS));
        assert_eq!(key.as_str().len(), 64);
        let mut nudged = vectors.clone();
        nudged[7 * DIM + 3] = f32::from_bits(nudged[7 * DIM + 3].to_bits() ^ 1);
        assert_ne!(key, GraphKey::of(&nudged, DIM, &PARAMS));
        let mut swapped = vectors.clone();
        let (a, b) = swapped.split_at_mut(DIM);
        a.swap_with_slice(&mut b[..DIM]);
        assert_ne!(key, GraphKey::of(&swapped, DIM, &PARAMS));
        let denser = GraphParams {
            max_connections: 16,
            ..PARAMS
        };
        assert_ne!(key, GraphKey::of(&vectors, DIM, &denser));
        // The same floats read as another dimension are another vector set.
        assert_ne!(key, GraphKey::of(&vectors, DIM * 2, &PARAMS));
    }

    #[test]
    fn a_saved_graph_loads_with_the_same_answers() {
        let dir = tempfile::tempdir().unwrap();
        let store = GraphStore::new(dir.path(), 4);
        let vectors = synthetic(200, DIM, 9);
        let key = GraphKey::of(&vectors, DIM, &PARAMS);
        assert!(matches!(store.load(&key, 200, DIM), LoadOutcome::Absent));
        assert_eq!(store.stored_bytes(&key), None);
        let (graph, seconds) = build_graph(&vectors, DIM, &PARAMS, &|_, _| {});
        assert!(store.save(&key, &graph, 200, DIM, PARAMS, seconds).unwrap());
        assert!(store.stored_bytes(&key).unwrap() > (200 * DIM * 4) as u64);
        let LoadOutcome::Loaded(loaded) = store.load(&key, 200, DIM) else {
            panic!("the saved graph does not load");
        };
        assert_eq!(loaded.get_nb_point(), 200);
        for q in synthetic(10, DIM, 4).chunks_exact(DIM) {
            let ids = |g: &Graph| {
                g.search(q, 5, 32)
                    .iter()
                    .map(|n| n.d_id)
                    .collect::<Vec<_>>()
            };
            assert_eq!(ids(&loaded), ids(&graph));
        }
        // No temporary directories are left behind.
        let names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec![key.to_string()]);
    }

    #[test]
    fn a_second_writer_of_the_same_graph_keeps_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = GraphStore::new(dir.path(), 4);
        let key = stored(&store, 2);
        let manifest = fs::read(dir.path().join(key.as_str()).join(MANIFEST)).unwrap();
        let vectors = synthetic(200, DIM, 2);
        let (graph, seconds) = build_graph(&vectors, DIM, &PARAMS, &|_, _| {});
        assert!(!store.save(&key, &graph, 200, DIM, PARAMS, seconds).unwrap());
        assert_eq!(
            fs::read(dir.path().join(key.as_str()).join(MANIFEST)).unwrap(),
            manifest
        );
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(matches!(store.load(&key, 200, DIM), LoadOutcome::Loaded(_)));
    }

    #[test]
    fn damaged_or_foreign_graphs_are_refused_and_removed() {
        type Damage = fn(&Path);
        let cases: [(&str, Damage, &str); 5] = [
            (
                "truncated graph",
                |dir| {
                    let path = dir.join(GRAPH_FILE);
                    let bytes = fs::read(&path).unwrap();
                    fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
                },
                "bytes",
            ),
            (
                "missing data file",
                |dir| fs::remove_file(dir.join(DATA_FILE)).unwrap(),
                "hnsw.hnsw.data",
            ),
            (
                "unreadable manifest",
                |dir| fs::write(dir.join(MANIFEST), "{not json").unwrap(),
                "manifest.json",
            ),
            (
                "manifest of another count",
                |dir| {
                    let path = dir.join(MANIFEST);
                    let text = fs::read_to_string(&path).unwrap();
                    fs::write(&path, text.replace("\"count\": 200", "\"count\": 201")).unwrap();
                },
                "another graph",
            ),
            (
                "garbage with a matching manifest",
                |dir| {
                    // Checksums that match garbage: hnsw_rs itself must refuse (or panic), and
                    // the store must turn either into a refusal.
                    let garbage = vec![0xA5u8; 4096];
                    fs::write(dir.join(GRAPH_FILE), &garbage).unwrap();
                    let path = dir.join(MANIFEST);
                    let mut manifest: GraphManifest =
                        serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
                    manifest.graph_file = FileCheck::of(&dir.join(GRAPH_FILE)).unwrap();
                    fs::write(&path, serde_json::to_vec(&manifest).unwrap()).unwrap();
                },
                "",
            ),
        ];
        for (name, damage, expected) in cases {
            let dir = tempfile::tempdir().unwrap();
            let store = GraphStore::new(dir.path(), 4);
            let key = stored(&store, 3);
            damage(&dir.path().join(key.as_str()));
            match store.load(&key, 200, DIM) {
                LoadOutcome::Invalid(reason) => {
                    assert!(reason.contains(expected), "{name}: {reason}")
                }
                LoadOutcome::Loaded(_) => panic!("{name}: loaded"),
                LoadOutcome::Absent => panic!("{name}: absent"),
            }
            assert!(store.keys().is_empty(), "{name}: not removed");
            assert!(matches!(store.load(&key, 200, DIM), LoadOutcome::Absent));
        }
    }

    #[test]
    fn a_save_removes_what_crashed_writers_left_an_hour_ago_and_nothing_younger() {
        let dir = tempfile::tempdir().unwrap();
        let store = GraphStore::new(dir.path(), 4);
        let old = dir.path().join(format!("{TEMP_PREFIX}crashed"));
        let young = dir.path().join(format!("{TEMP_PREFIX}saving"));
        for path in [&old, &young] {
            fs::create_dir(path).unwrap();
            fs::write(path.join(GRAPH_FILE), b"partial").unwrap();
        }
        fs::File::open(&old)
            .unwrap()
            .set_modified(SystemTime::now() - std::time::Duration::from_secs(7200))
            .unwrap();
        let key = stored(&store, 21);
        assert!(!old.exists());
        assert!(young.exists());
        assert_eq!(store.keys(), vec![key]);
    }

    #[test]
    fn the_least_recently_used_graphs_go_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = GraphStore::new(dir.path(), 2);
        let first = stored(&store, 11);
        let second = stored(&store, 12);
        // Make the use order explicit (mtime resolution may be coarse): `second` is older.
        let manifest = |key: &GraphKey| dir.path().join(key.as_str()).join(MANIFEST);
        let set_mtime = |key: &GraphKey, seconds: u64| {
            fs::File::options()
                .append(true)
                .open(manifest(key))
                .unwrap()
                .set_modified(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(seconds))
                .unwrap()
        };
        set_mtime(&first, 2_000_000_000);
        set_mtime(&second, 1_000_000_000);
        let third = stored(&store, 13);
        let mut expected = vec![first.clone(), third.clone()];
        expected.sort();
        assert_eq!(store.keys(), expected);

        // A load is a use: `first` loaded now outlives `third` saved earlier.
        set_mtime(&third, 1_500_000_000);
        set_mtime(&first, 1_000_000_000);
        assert!(matches!(
            store.load(&first, 200, DIM),
            LoadOutcome::Loaded(_)
        ));
        let fourth = stored(&store, 14);
        let mut expected = vec![first, fourth];
        expected.sort();
        assert_eq!(store.keys(), expected);
    }
}
