//! Packs: many small cache values (per-file analyses) in one immutable, self-checking file.
//!
//! One file per value would cost an inode, an open and a rename each (about a tenth of a cold
//! build of django went into creating 5,000 small files); a pack holds all values computed by one
//! open. Layout (integers little-endian):
//!
//! ```text
//! "SWXP" | format version: u32 | entry count: u32 | reserved: u32 | blake3(index): 32 bytes
//! index: per entry  key: 32 bytes | offset: u64 | length: u32 | xxh3-128(value)
//! values
//! ```
//!
//! Packs are written to a temporary name and renamed to the hash of their content, so they are
//! immutable and concurrent writers never collide. Readers map them into memory: a look-up is a
//! slice of the map, not a read (a warm open of a large snapshot looks up thousands of values). A reader checks the header and the index hash
//! when it opens a pack (a pack failing them is *damaged* and ignored as a whole) and each value's
//! checksum when it reads it (a value failing it is [`super::Lookup::Invalid`]). The value
//! checksum guards against damage, not tampering (a pack's name and the keys in it are blake3
//! hashes; nothing is trusted for matching its checksum): XXH3-128, several times faster than
//! blake3 on values of a few hundred bytes, which a warm open of a large snapshot checks by the
//! thousand.

use super::Lookup;
use super::entry::write_atomically;
use memmap2::Mmap;
use rustc_hash::FxHashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const MAGIC: &[u8; 4] = b"SWXP";
const HEADER_LEN: usize = 4 + 4 + 4 + 4 + 32;
const INDEX_ENTRY_LEN: usize = 32 + 8 + 4 + 16;

/// Writes a pack of `values` into `dir`; returns its path (`None` for no values).
pub fn write_pack(
    dir: &Path,
    format_version: u32,
    values: &[([u8; 32], Vec<u8>)],
) -> std::io::Result<Option<PathBuf>> {
    if values.is_empty() {
        return Ok(None);
    }
    let data_start = HEADER_LEN + INDEX_ENTRY_LEN * values.len();
    let mut index = Vec::with_capacity(INDEX_ENTRY_LEN * values.len());
    let mut offset = data_start as u64;
    for (key, value) in values {
        index.extend_from_slice(key);
        index.extend_from_slice(&offset.to_le_bytes());
        index.extend_from_slice(&(value.len() as u32).to_le_bytes());
        index.extend_from_slice(&value_checksum(value));
        offset += value.len() as u64;
    }
    let mut bytes = Vec::with_capacity(offset as usize);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&format_version.to_le_bytes());
    bytes.extend_from_slice(&(values.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&0u32.to_le_bytes());
    bytes.extend_from_slice(blake3::hash(&index).as_bytes());
    bytes.extend_from_slice(&index);
    for (_, value) in values {
        bytes.extend_from_slice(value);
    }
    let name = format!("{}.pack", &blake3::hash(&bytes).to_hex()[..32]);
    let path = dir.join(name);
    write_atomically(&path, &bytes)?;
    Ok(Some(path))
}

/// Checks a whole pack: header, index and every value.
pub fn verify(path: &Path, format_version: u32) -> Result<(), String> {
    let mut set = PackSet {
        files: Vec::new(),
        index: FxHashMap::default(),
        damaged: Mutex::new(Vec::new()),
        damaged_at_open: 0,
    };
    set.add(path, format_version)?;
    let keys: Vec<[u8; 32]> = set.index.keys().copied().collect();
    for key in keys {
        if let Lookup::Invalid(reason) = set.get(&key) {
            return Err(reason);
        }
    }
    Ok(())
}

/// The checksum of a value, as stored in its index entry.
fn value_checksum(value: &[u8]) -> [u8; 16] {
    twox_hash::XxHash3_128::oneshot(value).to_le_bytes()
}

struct Location {
    pack: usize,
    offset: u64,
    length: u32,
    checksum: [u8; 16],
}

/// The packs of a directory, opened for lookups.
pub struct PackSet {
    /// Each pack's path and map; every [`Location`] lies within its pack's map (checked at open).
    files: Vec<(PathBuf, Mmap)>,
    /// The keys are blake3 hashes already: FxHash is enough to spread them.
    index: FxHashMap<[u8; 32], Location>,
    /// Packs that failed their checks at open or, for a value, at a lookup.
    damaged: Mutex<Vec<(PathBuf, String)>>,
    damaged_at_open: usize,
}

impl PackSet {
    /// Opens every `*.pack` of `dir` (none if `dir` does not exist). Damaged packs are listed by
    /// [`PackSet::damaged`] and ignored.
    pub fn open(dir: &Path, format_version: u32) -> PackSet {
        let mut set = PackSet {
            files: Vec::new(),
            index: FxHashMap::default(),
            damaged: Mutex::new(Vec::new()),
            damaged_at_open: 0,
        };
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "pack"))
                    .collect()
            })
            .unwrap_or_default();
        paths.sort();
        for path in paths {
            if let Err(reason) = set.add(&path, format_version) {
                set.damaged.get_mut().expect("damaged").push((path, reason));
                set.damaged_at_open += 1;
            }
        }
        set
    }

    fn add(&mut self, path: &Path, format_version: u32) -> Result<(), String> {
        let file = File::open(path).map_err(|e| e.to_string())?;
        let size = file.metadata().map_err(|e| e.to_string())?.len();
        if size < HEADER_LEN as u64 {
            return Err("shorter than its header".to_string());
        }
        // SAFETY: a pack is never written after it is renamed into place (packs are immutable,
        // see the module docs), and removing one (compaction, repair) unlinks it, which leaves an
        // existing map valid. Only a file truncated in place by something else would fault a
        // reader — the exposure tantivy's memory-mapped lexical pools in the same cache have.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| e.to_string())?;
        let header: &[u8] = &map[..HEADER_LEN];
        if &header[0..4] != MAGIC {
            return Err("bad magic".into());
        }
        let version = u32::from_le_bytes(header[4..8].try_into().expect("4 bytes"));
        if version != format_version {
            return Err(format!(
                "format version {version}, expected {format_version}"
            ));
        }
        let count = u32::from_le_bytes(header[8..12].try_into().expect("4 bytes")) as usize;
        let index_len = count
            .checked_mul(INDEX_ENTRY_LEN)
            .filter(|&n| (HEADER_LEN + n) as u64 <= size)
            .ok_or("index runs past the end (truncated)")?;
        let index = &map[HEADER_LEN..HEADER_LEN + index_len];
        if blake3::hash(index).as_bytes() != &header[16..48] {
            return Err("index checksum mismatch".into());
        }
        let pack = self.files.len();
        let mut entries = Vec::with_capacity(count);
        for entry in index.chunks_exact(INDEX_ENTRY_LEN) {
            let key: [u8; 32] = entry[0..32].try_into().expect("32 bytes");
            let offset = u64::from_le_bytes(entry[32..40].try_into().expect("8 bytes"));
            let length = u32::from_le_bytes(entry[40..44].try_into().expect("4 bytes"));
            if offset + u64::from(length) > size {
                return Err("a value runs past the end (truncated)".into());
            }
            let checksum: [u8; 16] = entry[44..60].try_into().expect("16 bytes");
            entries.push((
                key,
                Location {
                    pack,
                    offset,
                    length,
                    checksum,
                },
            ));
        }
        self.index.extend(entries);
        self.files.push((path.to_path_buf(), map));
        Ok(())
    }

    /// Packs that failed their header or index checks, or a value's check in a lookup so far,
    /// with the reason. A pack appears once.
    pub fn damaged(&self) -> Vec<(PathBuf, String)> {
        self.damaged.lock().expect("damaged").clone()
    }

    /// Packs that failed their header or index checks when the set was opened.
    pub fn damaged_at_open(&self) -> usize {
        self.damaged_at_open
    }

    fn note_damage<T>(&self, path: &Path, reason: String) -> Lookup<T> {
        let mut damaged = self.damaged.lock().expect("damaged");
        if !damaged.iter().any(|(p, _)| p == path) {
            damaged.push((path.to_path_buf(), reason.clone()));
        }
        Lookup::Invalid(format!("{}: {reason}", path.display()))
    }

    /// Number of usable packs.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The value stored under `key`.
    pub fn get(&self, key: &[u8; 32]) -> Lookup<&[u8]> {
        let Some(location) = self.index.get(key) else {
            return Lookup::Miss;
        };
        let (path, map) = &self.files[location.pack];
        let start = location.offset as usize;
        let value = &map[start..start + location.length as usize];
        if value_checksum(value) != location.checksum {
            return self.note_damage(path, "value checksum mismatch".into());
        }
        Lookup::Hit(value)
    }

    /// Keys of all values (a key stored in several packs appears once per pack).
    pub fn keys(&self) -> impl Iterator<Item = &[u8; 32]> {
        self.index.keys()
    }

    /// Paths of the usable packs.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|(p, _)| p.as_path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> [u8; 32] {
        [n; 32]
    }

    #[test]
    fn roundtrip_across_packs() {
        let dir = tempfile::tempdir().unwrap();
        assert!(write_pack(dir.path(), 1, &[]).unwrap().is_none());
        write_pack(
            dir.path(),
            1,
            &[(key(1), b"one".to_vec()), (key(2), b"".to_vec())],
        )
        .unwrap();
        write_pack(dir.path(), 1, &[(key(3), b"three".to_vec())]).unwrap();
        let set = PackSet::open(dir.path(), 1);
        assert_eq!(set.len(), 2);
        assert!(matches!(set.get(&key(1)), Lookup::Hit(v) if v == b"one"));
        assert!(matches!(set.get(&key(2)), Lookup::Hit(v) if v.is_empty()));
        assert!(matches!(set.get(&key(3)), Lookup::Hit(v) if v == b"three"));
        assert!(matches!(set.get(&key(4)), Lookup::Miss));
        assert!(PackSet::open(&dir.path().join("absent"), 1).is_empty());
    }

    #[test]
    fn damage_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let values = [
            (key(1), b"first value".to_vec()),
            (key(2), b"second value".to_vec()),
        ];
        let path = write_pack(dir.path(), 1, &values).unwrap().unwrap();
        let good = std::fs::read(&path).unwrap();

        // A garbled value: the pack opens, that value is invalid, the other is fine.
        let mut bytes = good.clone();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let set = PackSet::open(dir.path(), 1);
        assert!(matches!(set.get(&key(1)), Lookup::Hit(_)));
        assert!(set.damaged().is_empty());
        assert!(matches!(set.get(&key(2)), Lookup::Invalid(_)));
        assert_eq!(set.damaged().len(), 1);

        // A garbled index, a truncated pack, another format version: the pack is damaged.
        let mut garbled_index = good.clone();
        garbled_index[HEADER_LEN + 3] ^= 1;
        for (what, bytes, version) in [
            ("index", garbled_index, 1),
            ("truncated", good[..HEADER_LEN + 10].to_vec(), 1),
            ("truncated values", good[..good.len() - 4].to_vec(), 1),
            ("version", good.clone(), 2),
        ] {
            std::fs::write(&path, &bytes).unwrap();
            let set = PackSet::open(dir.path(), version);
            assert_eq!(set.damaged().len(), 1, "{what}");
            assert!(matches!(set.get(&key(1)), Lookup::Miss), "{what}");
        }
    }
}
