//! Self-checking cache entries and atomic writes.
//!
//! Every cache file written by swex (except tantivy's own files) is an *entry*:
//!
//! ```text
//! "SWEX" | kind: 4 bytes | format version: u32 LE | payload length: u64 LE | blake3(payload): 32 bytes | payload
//! ```
//!
//! A reader accepts an entry only if all five header fields match and the hash of the payload is
//! right; anything else (truncated, garbled, older format, wrong kind) is reported as
//! [`EntryError::Invalid`] and the caller rebuilds it. Writes go to a uniquely named temporary
//! file in the same directory and are renamed into place, so readers never see half an entry and
//! two writers of the same entry (same content, by construction of the keys) do not interfere.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: &[u8; 4] = b"SWEX";
const HEADER_LEN: usize = 4 + 4 + 4 + 8 + 32;

/// Why an entry could not be read.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    #[error("cache entry {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// Present but not trustworthy; the caller should rebuild and overwrite it.
    #[error("cache entry {path} is invalid: {reason}")]
    Invalid { path: String, reason: String },
}

/// Reads the payload of the entry at `path`. `Ok(None)` when there is no entry.
pub fn read_entry(path: &Path, kind: [u8; 4], version: u32) -> Result<Option<Vec<u8>>, EntryError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(EntryError::Io {
                path: path.display().to_string(),
                source,
            });
        }
    };
    let payload_len = decode(&bytes, kind, version)
        .map_err(|reason| EntryError::Invalid {
            path: path.display().to_string(),
            reason,
        })?
        .len();
    // The payload is the tail: shifted into place rather than copied into a second buffer (a
    // repository's history, read on every answer, is about a megabyte).
    let mut bytes = bytes;
    bytes.drain(..bytes.len() - payload_len);
    Ok(Some(bytes))
}

/// Checks an entry's header and hash and returns its payload.
pub fn decode(bytes: &[u8], kind: [u8; 4], version: u32) -> Result<&[u8], String> {
    if bytes.len() < HEADER_LEN {
        return Err(format!("{} bytes, shorter than the header", bytes.len()));
    }
    if &bytes[0..4] != MAGIC {
        return Err("bad magic".into());
    }
    if bytes[4..8] != kind {
        return Err(format!(
            "kind {:?}, expected {:?}",
            String::from_utf8_lossy(&bytes[4..8]),
            String::from_utf8_lossy(&kind)
        ));
    }
    let found_version = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    if found_version != version {
        return Err(format!(
            "format version {found_version}, expected {version}"
        ));
    }
    let length = u64::from_le_bytes(bytes[12..20].try_into().expect("8 bytes"));
    let payload = &bytes[HEADER_LEN..];
    if payload.len() as u64 != length {
        return Err(format!(
            "payload of {} bytes, header says {length} (truncated or appended)",
            payload.len()
        ));
    }
    if blake3::hash(payload).as_bytes() != &bytes[20..52] {
        return Err("checksum mismatch".into());
    }
    Ok(payload)
}

/// Encodes an entry (header and payload).
pub fn encode(kind: [u8; 4], version: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&kind);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(blake3::hash(payload).as_bytes());
    out.extend_from_slice(payload);
    out
}

/// Writes an entry atomically (temporary file + rename), creating the directory if needed.
pub fn write_entry(
    path: &Path,
    kind: [u8; 4],
    version: u32,
    payload: &[u8],
) -> std::io::Result<()> {
    write_atomically(path, &encode(kind, version, payload))
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` through a temporary sibling and a rename: readers see the old file or
/// the new one, never a part. The temporary name is unique per process and call, so concurrent
/// writers never share one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let temp = dir.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(bytes)?;
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIND: [u8; 4] = *b"TEST";

    #[test]
    fn roundtrip_and_every_kind_of_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/entry.bin");
        assert!(read_entry(&path, KIND, 1).unwrap().is_none());
        write_entry(&path, KIND, 1, b"hello payload").unwrap();
        assert_eq!(
            read_entry(&path, KIND, 1).unwrap().unwrap(),
            b"hello payload"
        );

        let good = std::fs::read(&path).unwrap();
        let damaged: Vec<(&str, Vec<u8>)> = vec![
            ("truncated", good[..good.len() - 3].to_vec()),
            ("header only part", good[..10].to_vec()),
            ("garbled payload", {
                let mut b = good.clone();
                let last = b.len() - 1;
                b[last] ^= 0xff;
                b
            }),
            ("appended", {
                let mut b = good.clone();
                b.push(0);
                b
            }),
            ("empty", Vec::new()),
        ];
        for (what, bytes) in damaged {
            std::fs::write(&path, &bytes).unwrap();
            assert!(
                matches!(read_entry(&path, KIND, 1), Err(EntryError::Invalid { .. })),
                "{what} must be rejected"
            );
        }
        std::fs::write(&path, &good).unwrap();
        assert!(matches!(
            read_entry(&path, KIND, 2),
            Err(EntryError::Invalid { .. })
        ));
        assert!(matches!(
            read_entry(&path, *b"OTHR", 1),
            Err(EntryError::Invalid { .. })
        ));
    }

    #[test]
    fn atomic_write_leaves_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        write_atomically(&path, b"1").unwrap();
        write_atomically(&path, b"22").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"22");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
