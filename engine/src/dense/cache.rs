//! The embedding cache: vectors keyed by (model identity, hash of the exact embedded text).
//!
//! One directory per [`ModelIdentity`] (`<root>/embeddings/<identity key>/`), so vectors of
//! different models, token caps or text layouts never meet. Inside, vectors live in append-only
//! segment files, shared by every snapshot of every repository: a chunk whose text did not change
//! between two commits is embedded once.
//!
//! Segment format (version 1), all integers little-endian:
//! - header, 48 bytes: magic `SWEXEMB1`, format version `u32`, dimension `u32`, the identity's
//!   32-byte fingerprint;
//! - records of fixed size: 32-byte text key, `dim` × `f32`, then the first 8 bytes of
//!   blake3(key ‖ vector bytes) as a checksum.
//!
//! Fixed-size records make damage local: a record whose checksum fails is skipped and counted, a
//! torn record at the end (a writer that died, or one still writing) is ignored, and a file with a
//! foreign header is skipped whole. Nothing corrupt is ever returned.
//!
//! Concurrency: each process writes only to its own segment (`*.open`, created exclusively), and
//! renames it to `*.seg` when the cache is dropped. Readers read both kinds. When sealed segments
//! pile up, opening the cache merges them into one (under a lock file, through a temporary file
//! renamed into place before the merged files are removed). No step can lose a vector another
//! process still needs: at worst a vector is embedded again.
//!
//! The cache knows nothing about models beyond their identity; [`EmbeddingCache::embed`] takes the
//! [`Embedder`] that computes the misses.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::model::ModelIdentity;
use super::{DenseError, Embedder};

const MAGIC: &[u8; 8] = b"SWEXEMB1";
const HEADER_LEN: usize = 48;
const KEY_LEN: usize = 32;
const CHECK_LEN: usize = 8;
/// Sealed segments tolerated before opening the cache merges them.
const MERGE_THRESHOLD: usize = 32;
/// A merge lock older than this is taken to belong to a dead process.
const STALE_LOCK: Duration = Duration::from_secs(600);
/// Texts embedded between two appends to the segment: a crash loses at most this much work.
const EMBED_GROUP: usize = 256;

/// The key of one text under one model.
pub type TextKey = [u8; KEY_LEN];

/// What the cache holds and what it had to skip when it was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub entries: usize,
    pub segments: usize,
    /// Records skipped because their checksum did not match.
    pub corrupt_records: usize,
    /// Whole files skipped because their header was not a segment header of this model.
    pub foreign_segments: usize,
}

/// How many texts of one call came from the cache and how many were embedded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EmbedCounts {
    pub cached: usize,
    pub embedded: usize,
}

impl std::ops::AddAssign for EmbedCounts {
    fn add_assign(&mut self, other: EmbedCounts) {
        self.cached += other.cached;
        self.embedded += other.embedded;
    }
}

/// A persistent, process-safe map from texts to vectors for one model.
pub struct EmbeddingCache {
    dir: PathBuf,
    identity: ModelIdentity,
    hash_key: [u8; 32],
    /// Key of the keyed hash of [`EmbeddingCache::derived_key`], derived from `hash_key`.
    derived_hash_key: [u8; 32],
    state: RwLock<State>,
    writer: Mutex<Option<SegmentWriter>>,
}

#[derive(Default)]
struct State {
    slots: HashMap<TextKey, usize>,
    vectors: Vec<f32>,
    stats: CacheStats,
}

struct SegmentWriter {
    file: File,
    open_path: PathBuf,
}

impl std::fmt::Debug for EmbeddingCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingCache")
            .field("dir", &self.dir)
            .field("identity", &self.identity)
            .field("stats", &self.stats())
            .finish()
    }
}

impl EmbeddingCache {
    /// Opens (creating if needed) the cache of `identity` under a swex cache root.
    pub fn open(cache_root: &Path, identity: &ModelIdentity) -> Result<Self, DenseError> {
        Self::open_dir(
            &cache_root.join("embeddings").join(identity.key()),
            identity,
        )
    }

    /// Opens the cache in exactly `dir`.
    pub fn open_dir(dir: &Path, identity: &ModelIdentity) -> Result<Self, DenseError> {
        std::fs::create_dir_all(dir).map_err(|e| DenseError::io(dir, e))?;
        let hash_key = fingerprint_bytes(identity);
        let about = dir.join("model.json");
        if !about.exists() {
            // For people browsing the cache; never read back.
            let json = serde_json::to_vec_pretty(identity).expect("an identity always serializes");
            let _ = std::fs::write(&about, json);
        }
        let cache = EmbeddingCache {
            dir: dir.to_path_buf(),
            identity: identity.clone(),
            hash_key,
            derived_hash_key: *blake3::keyed_hash(&hash_key, b"swex derived embedding keys")
                .as_bytes(),
            state: RwLock::new(State::default()),
            writer: Mutex::new(None),
        };
        cache.merge_sealed_segments()?;
        cache.load()?;
        Ok(cache)
    }

    pub fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn stats(&self) -> CacheStats {
        let state = self.state.read().unwrap_or_else(|p| p.into_inner());
        CacheStats {
            entries: state.slots.len(),
            ..state.stats
        }
    }

    /// The key of a text: blake3 keyed by the model fingerprint, so even a segment copied into the
    /// wrong directory could not answer for another model.
    pub fn key(&self, text: &str) -> TextKey {
        *blake3::keyed_hash(&self.hash_key, text.as_bytes()).as_bytes()
    }

    /// The cached vector of a text, if any.
    pub fn get(&self, text: &str) -> Option<Vec<f32>> {
        let key = self.key(text);
        let state = self.state.read().unwrap_or_else(|p| p.into_inner());
        let dim = self.identity.dim;
        state
            .slots
            .get(&key)
            .map(|&slot| state.vectors[slot * dim..(slot + 1) * dim].to_vec())
    }

    /// A key for an item whose identity determines its text (a chunk's content key): lookups by
    /// such a key need no text, so a caller can ask what is cached without building texts.
    /// `domain` separates kinds of ids (and text units); derived keys live in another keyed-hash
    /// space than text keys, so the two never collide.
    pub fn derived_key(&self, domain: &str, id: &[u8]) -> TextKey {
        let mut hasher = blake3::Hasher::new_keyed(&self.derived_hash_key);
        hasher.update(&(domain.len() as u64).to_le_bytes());
        hasher.update(domain.as_bytes());
        hasher.update(id);
        *hasher.finalize().as_bytes()
    }

    /// Whether every key has a cached vector (stops at the first that has none).
    pub fn contains_all(&self, keys: &[TextKey]) -> bool {
        let state = self.state.read().unwrap_or_else(|p| p.into_inner());
        keys.iter().all(|key| state.slots.contains_key(key))
    }

    /// Positions of the keys that have no cached vector (every position, duplicates included).
    pub fn missing(&self, keys: &[TextKey]) -> Vec<usize> {
        let state = self.state.read().unwrap_or_else(|p| p.into_inner());
        (0..keys.len())
            .filter(|&i| !state.slots.contains_key(&keys[i]))
            .collect()
    }

    /// The cached vectors of `keys`, flattened in key order (`keys.len() × dim`), or `None` when
    /// any key is missing.
    pub fn lookup(&self, keys: &[TextKey]) -> Option<Vec<f32>> {
        let dim = self.identity.dim;
        let state = self.state.read().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::with_capacity(keys.len() * dim);
        for key in keys {
            let slot = *state.slots.get(key)?;
            out.extend_from_slice(&state.vectors[slot * dim..(slot + 1) * dim]);
        }
        Some(out)
    }

    /// Every cached vector, flattened, in the order they were loaded or added (for measurements
    /// and maintenance; a copy).
    pub fn all_vectors(&self) -> Vec<f32> {
        let state = self.state.read().unwrap_or_else(|p| p.into_inner());
        state.vectors.clone()
    }

    /// Embeds `texts` with `embedder`, computing only the texts not cached yet (each distinct text
    /// once), and returns all vectors in input order, flattened (`texts.len() × dim`).
    pub fn embed(
        &self,
        embedder: &Embedder,
        texts: &[&str],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(Vec<f32>, EmbedCounts), DenseError> {
        let keys: Vec<TextKey> = texts.iter().map(|t| self.key(t)).collect();
        self.embed_keyed(embedder, &keys, texts, progress)
    }

    /// [`EmbeddingCache::embed`] with the caller's keys (for example [`EmbeddingCache::derived_key`]s):
    /// `texts[i]` is the text of `keys[i]`, embedded only when that key is not cached yet.
    pub fn embed_keyed(
        &self,
        embedder: &Embedder,
        keys: &[TextKey],
        texts: &[&str],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(Vec<f32>, EmbedCounts), DenseError> {
        if embedder.identity() != &self.identity {
            return Err(DenseError::ModelMismatch {
                expected: self.identity.to_string(),
                got: embedder.identity().to_string(),
            });
        }
        self.embed_keyed_with(
            keys,
            texts,
            &mut |batch, p| embedder.embed_passages(batch, p),
            progress,
        )
    }

    /// [`EmbeddingCache::embed`] with any function computing vectors (tests, other backends). The
    /// function must return one vector of the identity's dimension per text.
    #[allow(clippy::type_complexity)]
    pub fn embed_with(
        &self,
        texts: &[&str],
        compute: &mut dyn FnMut(
            &[&str],
            &mut dyn FnMut(usize, usize),
        ) -> Result<Vec<Vec<f32>>, DenseError>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(Vec<f32>, EmbedCounts), DenseError> {
        let keys: Vec<TextKey> = texts.iter().map(|t| self.key(t)).collect();
        self.embed_keyed_with(&keys, texts, compute, progress)
    }

    /// [`EmbeddingCache::embed_keyed`] with any function computing vectors.
    #[allow(clippy::type_complexity)]
    pub fn embed_keyed_with(
        &self,
        keys: &[TextKey],
        texts: &[&str],
        compute: &mut dyn FnMut(
            &[&str],
            &mut dyn FnMut(usize, usize),
        ) -> Result<Vec<Vec<f32>>, DenseError>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(Vec<f32>, EmbedCounts), DenseError> {
        assert_eq!(keys.len(), texts.len(), "one text per key");
        let dim = self.identity.dim;

        // Distinct misses, longest first so that each group batches texts of similar length.
        let mut missing: Vec<usize> = {
            let state = self.state.read().unwrap_or_else(|p| p.into_inner());
            let mut seen = std::collections::HashSet::new();
            (0..texts.len())
                .filter(|&i| !state.slots.contains_key(&keys[i]) && seen.insert(keys[i]))
                .collect()
        };
        missing.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
        let total = missing.len();
        let mut done = 0;
        for group in missing.chunks(EMBED_GROUP) {
            let batch: Vec<&str> = group.iter().map(|&i| texts[i]).collect();
            let vectors = compute(&batch, &mut |n, _| progress(done + n, total))?;
            if vectors.len() != batch.len() || vectors.iter().any(|v| v.len() != dim) {
                return Err(DenseError::ModelMismatch {
                    expected: self.identity.to_string(),
                    got: format!(
                        "a model that returned {} vectors of dimension {:?} for {} texts",
                        vectors.len(),
                        vectors.first().map(Vec::len),
                        batch.len()
                    ),
                });
            }
            let entries: Vec<(TextKey, &[f32])> = group
                .iter()
                .zip(&vectors)
                .map(|(&i, v)| (keys[i], v.as_slice()))
                .collect();
            self.insert_many(&entries)?;
            done += group.len();
            progress(done, total);
        }

        let out = self
            .lookup(keys)
            .expect("every key was cached or has just been embedded");
        Ok((
            out,
            EmbedCounts {
                cached: texts.len() - total,
                embedded: total,
            },
        ))
    }

    /// Adds vectors to memory and appends them to this process's segment.
    pub fn insert_many(&self, entries: &[(TextKey, &[f32])]) -> Result<(), DenseError> {
        let dim = self.identity.dim;
        let mut bytes = Vec::with_capacity(entries.len() * record_len(dim));
        {
            let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
            for (key, vector) in entries {
                if vector.len() != dim {
                    return Err(DenseError::Dimension {
                        expected: dim,
                        got: vector.len(),
                    });
                }
                if state.slots.contains_key(key) {
                    continue;
                }
                let slot = state.slots.len();
                state.slots.insert(*key, slot);
                state.vectors.extend_from_slice(vector);
                encode_record(key, vector, &mut bytes);
            }
        }
        if bytes.is_empty() {
            return Ok(());
        }
        let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if writer.is_none() {
            *writer = Some(self.new_segment()?);
        }
        let w = writer.as_mut().expect("just created");
        w.file
            .write_all(&bytes)
            .map_err(|e| DenseError::io(&w.open_path, e))
    }

    fn new_segment(&self) -> Result<SegmentWriter, DenseError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros());
        let name = format!(
            "{stamp}-{}-{}.open",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let open_path = self.dir.join(name);
        let mut file = File::options()
            .create_new(true)
            .append(true)
            .open(&open_path)
            .map_err(|e| DenseError::io(&open_path, e))?;
        file.write_all(&self.header())
            .map_err(|e| DenseError::io(&open_path, e))?;
        Ok(SegmentWriter { file, open_path })
    }

    fn header(&self) -> Vec<u8> {
        let mut header = Vec::with_capacity(HEADER_LEN);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&crate::formats::EMBEDDING_CACHE_VERSION.to_le_bytes());
        header.extend_from_slice(&(self.identity.dim as u32).to_le_bytes());
        header.extend_from_slice(&self.hash_key);
        header
    }

    fn segment_files(&self) -> Result<Vec<PathBuf>, DenseError> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .map_err(|e| DenseError::io(&self.dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("seg" | "open")))
            .collect();
        files.sort();
        Ok(files)
    }

    fn load(&self) -> Result<(), DenseError> {
        let dim = self.identity.dim;
        let header = self.header();
        let mut state = State::default();
        for path in self.segment_files()? {
            let mut bytes = Vec::new();
            match File::open(&path).and_then(|mut f| f.read_to_end(&mut bytes)) {
                Ok(_) => {}
                // Merged away by another process between listing and opening: its records are
                // in the merged file, which a later open sees.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(DenseError::io(&path, e)),
            }
            state.stats.segments += 1;
            if bytes.len() < HEADER_LEN || bytes[..HEADER_LEN] != header[..] {
                state.stats.foreign_segments += 1;
                continue;
            }
            for record in bytes[HEADER_LEN..].chunks_exact(record_len(dim)) {
                match decode_record(record, dim) {
                    Some((key, vector)) => {
                        if !state.slots.contains_key(&key) {
                            let slot = state.slots.len();
                            state.slots.insert(key, slot);
                            state.vectors.extend(vector);
                        }
                    }
                    None => state.stats.corrupt_records += 1,
                }
            }
        }
        *self.state.write().unwrap_or_else(|p| p.into_inner()) = state;
        Ok(())
    }

    /// Merges sealed segments into one when there are many. Skipped (not an error) when another
    /// process holds the merge lock.
    fn merge_sealed_segments(&self) -> Result<(), DenseError> {
        let sealed: Vec<PathBuf> = self
            .segment_files()?
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "seg"))
            .collect();
        if sealed.len() < MERGE_THRESHOLD {
            return Ok(());
        }
        let lock_path = self.dir.join("merge.lock");
        let stale = std::fs::metadata(&lock_path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_LOCK);
        if stale {
            let _ = std::fs::remove_file(&lock_path);
        }
        if File::options()
            .create_new(true)
            .write(true)
            .open(&lock_path)
            .is_err()
        {
            return Ok(());
        }
        let result = self.merge_into_one(&sealed);
        let _ = std::fs::remove_file(&lock_path);
        result
    }

    fn merge_into_one(&self, sealed: &[PathBuf]) -> Result<(), DenseError> {
        let dim = self.identity.dim;
        let header = self.header();
        let mut merged =
            tempfile::NamedTempFile::new_in(&self.dir).map_err(|e| DenseError::io(&self.dir, e))?;
        let mut out = header.clone();
        let mut seen = std::collections::HashSet::new();
        for path in sealed {
            let Ok(bytes) = std::fs::read(path) else {
                continue;
            };
            if bytes.len() < HEADER_LEN || bytes[..HEADER_LEN] != header[..] {
                // Not ours to merge; it stays and is skipped by readers.
                continue;
            }
            for record in bytes[HEADER_LEN..].chunks_exact(record_len(dim)) {
                if let Some((key, _)) = decode_record(record, dim)
                    && seen.insert(key)
                {
                    out.extend_from_slice(record);
                }
            }
        }
        merged
            .write_all(&out)
            .map_err(|e| DenseError::io(merged.path(), e))?;
        let stamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros());
        let target = self
            .dir
            .join(format!("{stamp}-{}-merged.seg", std::process::id()));
        merged
            .persist(&target)
            .map_err(|e| DenseError::io(&target, e.error))?;
        for path in sealed {
            let header_ok = std::fs::File::open(path)
                .and_then(|mut f| {
                    let mut h = vec![0u8; HEADER_LEN];
                    f.read_exact(&mut h).map(|_| h)
                })
                .is_ok_and(|h| h == header);
            if header_ok {
                let _ = std::fs::remove_file(path);
            }
        }
        Ok(())
    }

    /// Seals the segment this cache has been writing, as dropping the cache does: a process that
    /// leaves its memory to the operating system at exit instead of dropping (see
    /// [`crate::index::SnapshotIndex::release_at_exit`]) seals here. Vectors embedded later go to
    /// a new segment.
    pub fn seal(&self) {
        let writer = self.writer.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(w) = writer {
            w.seal();
        }
    }
}

impl SegmentWriter {
    fn seal(self) {
        let _ = self.file.sync_data();
        let sealed = self.open_path.with_extension("seg");
        // If the rename fails the `.open` file is still read by everyone; nothing is lost.
        let _ = std::fs::rename(&self.open_path, sealed);
    }
}

impl Drop for EmbeddingCache {
    fn drop(&mut self) {
        let writer = self.writer.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(w) = writer.take() {
            w.seal();
        }
    }
}

fn fingerprint_bytes(identity: &ModelIdentity) -> [u8; 32] {
    *blake3::hash(identity.fingerprint.as_bytes()).as_bytes()
}

fn record_len(dim: usize) -> usize {
    KEY_LEN + dim * 4 + CHECK_LEN
}

fn encode_record(key: &TextKey, vector: &[f32], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(key);
    for x in vector {
        out.extend_from_slice(&x.to_le_bytes());
    }
    let check = blake3::hash(&out[start..]);
    out.extend_from_slice(&check.as_bytes()[..CHECK_LEN]);
}

fn decode_record(record: &[u8], dim: usize) -> Option<(TextKey, impl Iterator<Item = f32> + '_)> {
    let body = &record[..KEY_LEN + dim * 4];
    let check = &record[KEY_LEN + dim * 4..];
    if blake3::hash(body).as_bytes()[..CHECK_LEN] != *check {
        return None;
    }
    let key: TextKey = body[..KEY_LEN].try_into().ok()?;
    let vector = body[KEY_LEN..]
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    Some((key, vector))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    fn identity(name: &str, dim: usize) -> ModelIdentity {
        ModelIdentity {
            name: name.into(),
            fingerprint: blake3::hash(name.as_bytes()).to_hex().to_string(),
            dim,
        }
    }

    /// A deterministic stand-in for a model: the vector of a text is derived from its bytes.
    fn fake_vector(text: &str, dim: usize) -> Vec<f32> {
        let h = blake3::hash(text.as_bytes());
        (0..dim)
            .map(|i| h.as_bytes()[i % 32] as f32 / 255.0)
            .collect()
    }

    /// Embeds through the cache with the fake model; returns the vectors and the texts the model
    /// was actually asked for.
    fn embed(cache: &EmbeddingCache, texts: &[&str]) -> (Vec<f32>, EmbedCounts, Vec<String>) {
        let asked = RefCell::new(Vec::new());
        let dim = cache.identity().dim;
        let (vectors, counts) = cache
            .embed_with(
                texts,
                &mut |batch, _| {
                    asked
                        .borrow_mut()
                        .extend(batch.iter().map(|t| t.to_string()));
                    Ok(batch.iter().map(|t| fake_vector(t, dim)).collect())
                },
                &mut |_, _| {},
            )
            .unwrap();
        (vectors, counts, asked.into_inner())
    }

    #[test]
    fn derived_keys_embed_only_misses_and_answer_without_texts() {
        let root = tempfile::tempdir().unwrap();
        let id = identity("m", 4);
        let cache = EmbeddingCache::open(root.path(), &id).unwrap();
        let key = |n: u64| cache.derived_key("chunk/full", &n.to_le_bytes());
        // Derived keys depend on the domain and never equal the text key of the same bytes.
        assert_ne!(
            key(1),
            cache.derived_key("chunk/head:8", &1u64.to_le_bytes())
        );
        assert_ne!(
            key(1),
            cache.key(std::str::from_utf8(&[1, 0, 0, 0, 0, 0, 0, 0]).unwrap())
        );
        let keys = [key(1), key(2), key(1)];
        assert_eq!(cache.missing(&keys), vec![0, 1, 2]);
        assert!(!cache.contains_all(&keys) && cache.contains_all(&[]));
        assert_eq!(cache.lookup(&keys), None);

        let asked = RefCell::new(Vec::new());
        let mut compute = |batch: &[&str], _: &mut dyn FnMut(usize, usize)| {
            asked
                .borrow_mut()
                .extend(batch.iter().map(|t| t.to_string()));
            Ok(batch.iter().map(|t| fake_vector(t, 4)).collect())
        };
        let (vectors, counts) = cache
            .embed_keyed_with(&keys, &["one", "two", "one"], &mut compute, &mut |_, _| {})
            .unwrap();
        assert_eq!(
            counts,
            EmbedCounts {
                cached: 1,
                embedded: 2
            }
        );
        assert_eq!(asked.borrow().len(), 2);
        assert_eq!(&vectors[8..], fake_vector("one", 4).as_slice());
        // Known keys need no text: an empty one is never embedded.
        let (_, counts) = cache
            .embed_keyed_with(
                &[key(2), key(3)],
                &["", "three"],
                &mut compute,
                &mut |_, _| {},
            )
            .unwrap();
        assert_eq!(
            counts,
            EmbedCounts {
                cached: 1,
                embedded: 1
            }
        );
        assert_eq!(asked.borrow().last().map(String::as_str), Some("three"));
        assert!(cache.contains_all(&[key(1), key(2), key(3)]));
        assert_eq!(cache.lookup(&[key(3)]), Some(fake_vector("three", 4)));
        assert_eq!(cache.all_vectors().len(), 3 * 4);
    }

    #[test]
    fn only_misses_are_embedded_and_hits_survive_reopening() {
        let root = tempfile::tempdir().unwrap();
        let id = identity("m", 4);
        {
            let cache = EmbeddingCache::open(root.path(), &id).unwrap();
            let (vectors, counts, asked) = embed(&cache, &["a", "b", "a"]);
            assert_eq!(
                counts,
                EmbedCounts {
                    cached: 1,
                    embedded: 2
                }
            );
            assert_eq!(asked.len(), 2, "duplicates are embedded once: {asked:?}");
            assert_eq!(&vectors[..4], fake_vector("a", 4).as_slice());
            assert_eq!(&vectors[8..], fake_vector("a", 4).as_slice());
        }
        let cache = EmbeddingCache::open(root.path(), &id).unwrap();
        assert_eq!(cache.stats().entries, 2);
        let (vectors, counts, asked) = embed(&cache, &["b", "c", "a"]);
        assert_eq!(asked, vec!["c".to_string()]);
        assert_eq!(
            counts,
            EmbedCounts {
                cached: 2,
                embedded: 1
            }
        );
        assert_eq!(&vectors[..4], fake_vector("b", 4).as_slice());
        assert_eq!(cache.get("c"), Some(fake_vector("c", 4)));
        assert_eq!(cache.get("zzz"), None);
    }

    #[test]
    fn seal_closes_the_segment_while_the_cache_lives_on() {
        let root = tempfile::tempdir().unwrap();
        let id = identity("m", 4);
        let cache = EmbeddingCache::open(root.path(), &id).unwrap();
        let extensions = |cache: &EmbeddingCache| -> Vec<String> {
            let mut found: Vec<String> = std::fs::read_dir(cache.dir())
                .unwrap()
                .filter_map(|e| Some(e.ok()?.path().extension()?.to_str()?.to_owned()))
                .filter(|e| e == "seg" || e == "open")
                .collect();
            found.sort();
            found
        };
        embed(&cache, &["a"]);
        assert_eq!(extensions(&cache), ["open"]);
        cache.seal();
        assert_eq!(extensions(&cache), ["seg"]);
        // Sealing twice, or with nothing written, does nothing; later vectors start a segment.
        cache.seal();
        embed(&cache, &["b"]);
        assert_eq!(extensions(&cache), ["open", "seg"]);
        // A process that never drops its cache (it sealed instead) loses nothing.
        cache.seal();
        std::mem::forget(cache);
        let reopened = EmbeddingCache::open(root.path(), &id).unwrap();
        assert_eq!(reopened.get("a"), Some(fake_vector("a", 4)));
        assert_eq!(reopened.get("b"), Some(fake_vector("b", 4)));
    }

    #[test]
    fn models_never_share_vectors() {
        let root = tempfile::tempdir().unwrap();
        let first = EmbeddingCache::open(root.path(), &identity("m1", 4)).unwrap();
        embed(&first, &["shared text"]);
        drop(first);
        // Same dimension, other model: nothing is found.
        let second = EmbeddingCache::open(root.path(), &identity("m2", 4)).unwrap();
        assert_eq!(second.get("shared text"), None);
        let (_, counts, _) = embed(&second, &["shared text"]);
        assert_eq!(counts.embedded, 1);

        // A segment of m1 copied into m2's directory is refused by its header.
        let m1_dir = root.path().join("embeddings").join(identity("m1", 4).key());
        let seg = std::fs::read_dir(&m1_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "seg"))
            .unwrap();
        std::fs::copy(&seg, second.dir().join("copied.seg")).unwrap();
        drop(second);
        let second = EmbeddingCache::open(root.path(), &identity("m2", 4)).unwrap();
        assert_eq!(second.stats().foreign_segments, 1);
        assert_eq!(second.stats().entries, 1);
    }

    #[test]
    fn corrupt_and_torn_records_are_skipped() {
        let root = tempfile::tempdir().unwrap();
        let id = identity("m", 4);
        let dir = {
            let cache = EmbeddingCache::open(root.path(), &id).unwrap();
            embed(&cache, &["one", "two", "three"]);
            cache.dir().to_path_buf()
        };
        let seg = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "seg"))
            .unwrap();
        let mut bytes = std::fs::read(&seg).unwrap();
        // Flip a byte in the vector of the second record, and append half a record.
        let second_record = HEADER_LEN + record_len(4);
        bytes[second_record + KEY_LEN + 1] ^= 0x40;
        bytes.extend_from_slice(&[7u8; 20]);
        std::fs::write(&seg, &bytes).unwrap();

        let cache = EmbeddingCache::open(root.path(), &id).unwrap();
        assert_eq!(cache.stats().corrupt_records, 1);
        assert_eq!(cache.stats().entries, 2);
        // The damaged entry is simply embedded again, with the right vector.
        let (vectors, counts, asked) = embed(&cache, &["one", "two", "three"]);
        assert_eq!(counts.embedded, 1);
        assert_eq!(asked.len(), 1);
        for (i, t) in ["one", "two", "three"].iter().enumerate() {
            assert_eq!(&vectors[i * 4..(i + 1) * 4], fake_vector(t, 4).as_slice());
        }
    }

    #[test]
    fn concurrent_writers_each_keep_their_vectors() {
        let root = tempfile::tempdir().unwrap();
        let id = identity("m", 8);
        let a = EmbeddingCache::open(root.path(), &id).unwrap();
        let b = EmbeddingCache::open(root.path(), &id).unwrap();
        std::thread::scope(|s| {
            s.spawn(|| embed(&a, &["a1", "a2", "both"]));
            s.spawn(|| embed(&b, &["b1", "b2", "both"]));
        });
        // While both are open, a third reader already sees their unsealed segments.
        let reader = EmbeddingCache::open(root.path(), &id).unwrap();
        assert_eq!(reader.stats().entries, 5);
        drop((a, b, reader));
        let cache = EmbeddingCache::open(root.path(), &id).unwrap();
        assert_eq!(cache.stats().entries, 5);
        assert_eq!(cache.stats().corrupt_records, 0);
        assert_eq!(cache.get("b2"), Some(fake_vector("b2", 8)));
    }

    #[test]
    fn many_segments_are_merged_without_loss() {
        let root = tempfile::tempdir().unwrap();
        let id = identity("m", 2);
        let texts: Vec<String> = (0..MERGE_THRESHOLD + 3).map(|i| format!("t{i}")).collect();
        for t in &texts {
            let cache = EmbeddingCache::open(root.path(), &id).unwrap();
            embed(&cache, &[t.as_str()]);
        }
        let cache = EmbeddingCache::open(root.path(), &id).unwrap();
        assert_eq!(cache.stats().entries, texts.len());
        assert!(
            cache.stats().segments < MERGE_THRESHOLD,
            "{:?}",
            cache.stats()
        );
        for t in &texts {
            assert_eq!(cache.get(t), Some(fake_vector(t, 2)));
        }
    }

    #[test]
    fn a_model_returning_wrong_shapes_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        let cache = EmbeddingCache::open(root.path(), &identity("m", 4)).unwrap();
        let err = cache
            .embed_with(&["x"], &mut |_, _| Ok(vec![vec![0.0; 3]]), &mut |_, _| {})
            .unwrap_err();
        assert!(matches!(err, DenseError::ModelMismatch { .. }), "{err}");
        assert_eq!(cache.stats().entries, 0);
    }
}
