//! Per-file analysis: the contract between the language analysers ([`crate::lang`]) and the
//! indexes built on top of them (lexical, graph, dense, cache).
//!
//! All line numbers are 1-based and intervals are closed (`start..=end`), like the benchmark's
//! regions, and count the lines Python's `str.splitlines()` yields (see [`swex_text::lines`]). A [`FileAnalysis`] is a pure function of (path, language, file bytes, analyser
//! version), which is what makes it cacheable by content.

use serde::{Deserialize, Serialize};

pub use crate::lang::Language;

/// What a chunk is. Definition-level chunks carry the kind of the definition; `Gap` chunks hold the
/// lines of a source file between definitions (imports, module-level code), and `Window` chunks are
/// fixed line windows of non-source text files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChunkKind {
    Function,
    Method,
    Class,
    Struct,
    Enum,
    Interface,
    Trait,
    Impl,
    Module,
    Namespace,
    Constant,
    TypeAlias,
    Gap,
    Window,
}

/// One indexable unit of a file. The chunks of a file are ordered by `start`, do not overlap, and
/// together cover every line `1..=line_count` of the file (see [`crate::lang`] for the rules).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    pub start: u32,
    pub end: u32,
    pub kind: ChunkKind,
    /// Qualified name (`Outer.method`, `pkg::Type::f`) for definition chunks, including each window
    /// of a split definition; for `Gap` chunks inside a split class-like definition, that
    /// definition's name; `None` for top-level gaps and for text windows.
    pub name: Option<String>,
}

/// A named definition, possibly nested. Unlike chunks, definitions nest and overlap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    /// The bare name as written (`method`).
    pub name: String,
    /// Qualified by its enclosing definitions (`Outer.method`; `::` in Rust and C++).
    pub qualified_name: String,
    pub kind: ChunkKind,
    pub start: u32,
    pub end: u32,
    /// Index of the enclosing definition in the same `definitions` vector.
    pub parent: Option<u32>,
}

/// An import as written in the source. Resolution to files happens in the graph, which sees the
/// whole snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// Module path as written: `os.path`, `./util`, `github.com/x/y`, `java.util.List`,
    /// `"foo.h"`, `crate::a::b`. Relative Python imports keep their leading dots (`..mod`).
    pub module: String,
    /// Imported names (`from m import a, b` gives `["a", "b"]`); empty for whole-module imports.
    pub names: Vec<String>,
    pub line: u32,
}

/// A use of an identifier that may refer to a definition elsewhere (calls, attribute accesses,
/// type names). Names are bare identifiers; resolution happens in the graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    pub name: String,
    pub line: u32,
    pub kind: ReferenceKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceKind {
    Call,
    Type,
    Name,
}

/// A list of an analysis decoded from the cache only when first read: a file's chunks, imports
/// and references.
///
/// Why: an index opened from the cache loads every file's analysis, but a query reads the
/// chunks and definitions of only the few files it points into or that define a name it asks
/// for (the definitions table is built from the names' hashes, [`Definitions`]); imports and
/// references only the code graph reads. Decoding every chunk name,
/// import and reference of every file was most of a warm open (on sympy's 1,420 files, 38k
/// chunks and 143k references, one allocation each). In a binary format (the cache's postcard)
/// each list is stored as one encoded block, copied at load and decoded on the first read; in a
/// human-readable format (JSON) it is the plain list.
///
/// Invariant: the list is the one the analyser produced; equality, cloning and serialisation
/// see the decoded list, and [`LazyList::len`] answers without decoding.
pub struct LazyList<T> {
    /// The postcard encoding of the list, when it came from a binary format undecoded.
    encoded: Option<Box<[u8]>>,
    decoded: std::sync::OnceLock<Vec<T>>,
}

/// A file's references ([`LazyList`]).
pub type References = LazyList<Reference>;

impl<T: serde::de::DeserializeOwned> LazyList<T> {
    /// The list, decoded on the first call. A block that does not decode (the cache's packs are
    /// checksummed and versioned, so only a format bug gets here) reads as empty.
    pub fn as_slice(&self) -> &[T] {
        self.decoded.get_or_init(|| match &self.encoded {
            Some(bytes) => postcard::from_bytes(bytes).unwrap_or_else(|err| {
                debug_assert!(false, "undecodable list: {err}");
                Vec::new()
            }),
            None => Vec::new(),
        })
    }

    /// The number of elements, without decoding them: postcard writes a list's length first.
    pub fn len(&self) -> usize {
        match (self.decoded.get(), &self.encoded) {
            (Some(list), _) => list.len(),
            (None, Some(bytes)) => match postcard::take_from_bytes::<u64>(bytes) {
                Ok((len, _)) => len as usize,
                Err(_) => self.as_slice().len(),
            },
            (None, None) => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Default for LazyList<T> {
    fn default() -> LazyList<T> {
        LazyList {
            encoded: None,
            decoded: std::sync::OnceLock::new(),
        }
    }
}

impl<T> From<Vec<T>> for LazyList<T> {
    fn from(list: Vec<T>) -> LazyList<T> {
        LazyList {
            encoded: None,
            decoded: std::sync::OnceLock::from(list),
        }
    }
}

impl<T: serde::de::DeserializeOwned> std::ops::Deref for LazyList<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<'a, T: serde::de::DeserializeOwned> IntoIterator for &'a LazyList<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<T: serde::de::DeserializeOwned + Clone> Clone for LazyList<T> {
    fn clone(&self) -> LazyList<T> {
        match (self.decoded.get(), &self.encoded) {
            (None, Some(bytes)) => LazyList {
                encoded: Some(bytes.clone()),
                decoded: std::sync::OnceLock::new(),
            },
            _ => LazyList::from(self.as_slice().to_vec()),
        }
    }
}

impl<T: serde::de::DeserializeOwned + PartialEq> PartialEq for LazyList<T> {
    fn eq(&self, other: &LazyList<T>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: serde::de::DeserializeOwned + Eq> Eq for LazyList<T> {}

impl<T: serde::de::DeserializeOwned + std::fmt::Debug> std::fmt::Debug for LazyList<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl<T: serde::de::DeserializeOwned + Serialize> Serialize for LazyList<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            return self.as_slice().serialize(serializer);
        }
        match (&self.encoded, self.decoded.get()) {
            (Some(bytes), _) => serializer.serialize_bytes(bytes),
            (None, list) => {
                let bytes = postcard::to_allocvec(list.map_or(&[][..], Vec::as_slice))
                    .map_err(serde::ser::Error::custom)?;
                serializer.serialize_bytes(&bytes)
            }
        }
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for LazyList<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<LazyList<T>, D::Error> {
        if deserializer.is_human_readable() {
            return Vec::<T>::deserialize(deserializer).map(LazyList::from);
        }
        struct Block<T>(std::marker::PhantomData<T>);
        impl<'de, T> serde::de::Visitor<'de> for Block<T> {
            type Value = LazyList<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an encoded list")
            }
            fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<LazyList<T>, E> {
                Ok(LazyList {
                    encoded: Some(bytes.into()),
                    decoded: std::sync::OnceLock::new(),
                })
            }
            fn visit_byte_buf<E: serde::de::Error>(self, bytes: Vec<u8>) -> Result<LazyList<T>, E> {
                Ok(LazyList {
                    encoded: Some(bytes.into_boxed_slice()),
                    decoded: std::sync::OnceLock::new(),
                })
            }
        }
        deserializer.deserialize_bytes(Block(std::marker::PhantomData))
    }
}

/// A file's definitions ([`LazyList`]) with the hash of each one's bare name
/// ([`Definitions::name_hashes`]), which a binary format stores beside the list: the
/// definitions table of a snapshot ([`crate::index::SnapshotIndex::definitions`]) is built from
/// every file's hashes, and only the files whose hashes match a name asked for decode their
/// definitions. In a human-readable format (JSON) it is the plain list, the hashes recomputed.
///
/// Invariant: `name_hashes[i]` is [`name_hash`] of the `i`-th definition's `name`.
#[derive(Default, Clone)]
pub struct Definitions {
    list: LazyList<Definition>,
    name_hashes: Box<[u64]>,
}

/// The hash a definitions table files a bare name under: the low 64 bits of its XXH3-128, an
/// algorithm fixed by its specification, so hashes stored in the cache stay valid across builds.
pub fn name_hash(name: &str) -> u64 {
    twox_hash::XxHash3_128::oneshot(name.as_bytes()) as u64
}

impl Definitions {
    /// The hashes of the definitions' bare names, in order, without decoding the definitions.
    pub fn name_hashes(&self) -> &[u64] {
        &self.name_hashes
    }

    pub fn as_slice(&self) -> &[Definition] {
        self.list.as_slice()
    }

    /// The number of definitions, without decoding them.
    pub fn len(&self) -> usize {
        self.name_hashes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.name_hashes.is_empty()
    }
}

impl From<Vec<Definition>> for Definitions {
    fn from(list: Vec<Definition>) -> Definitions {
        Definitions {
            name_hashes: list.iter().map(|d| name_hash(&d.name)).collect(),
            list: LazyList::from(list),
        }
    }
}

impl std::ops::Deref for Definitions {
    type Target = [Definition];
    fn deref(&self) -> &[Definition] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a Definitions {
    type Item = &'a Definition;
    type IntoIter = std::slice::Iter<'a, Definition>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl PartialEq for Definitions {
    fn eq(&self, other: &Definitions) -> bool {
        self.list == other.list
    }
}

impl Eq for Definitions {}

impl std::fmt::Debug for Definitions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.list.fmt(f)
    }
}

impl Serialize for Definitions {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            self.list.serialize(serializer)
        } else {
            (&self.list, &self.name_hashes).serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for Definitions {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Definitions, D::Error> {
        if deserializer.is_human_readable() {
            return Vec::<Definition>::deserialize(deserializer).map(Definitions::from);
        }
        let (list, name_hashes) = <(LazyList<Definition>, Box<[u64]>)>::deserialize(deserializer)?;
        if list.len() != name_hashes.len() {
            return Err(serde::de::Error::custom(format!(
                "{} definitions with {} name hashes",
                list.len(),
                name_hashes.len()
            )));
        }
        Ok(Definitions { list, name_hashes })
    }
}

/// Everything the engine derives from one file's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct FileAnalysis {
    pub language: Option<Language>,
    /// Number of lines as Python's `str.splitlines()` would count them on the UTF-8 (lossy) text.
    pub line_count: u32,
    /// Decoded from the cache on first read ([`LazyList`]).
    pub chunks: LazyList<Chunk>,
    /// Decoded from the cache on first read; their names' hashes are read at load
    /// ([`Definitions`]).
    pub definitions: Definitions,
    /// Decoded from the cache on first read (only the code graph reads them).
    pub imports: LazyList<Import>,
    /// Decoded from the cache on first read (only the code graph reads them).
    pub references: References,
    /// The package or namespace the file declares, when the language has one: Go `package x`,
    /// Java `package a.b`, PHP `namespace A\B`; for manifests, the module path of a Go `go.mod`
    /// and the crate name of a `Cargo.toml` (with `-` read as `_`).
    #[serde(default)]
    pub package: Option<String>,
    /// True when the parser reported syntax errors; the chunks are still usable.
    pub has_syntax_errors: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analysis() -> FileAnalysis {
        FileAnalysis {
            line_count: 3,
            chunks: vec![
                Chunk {
                    start: 1,
                    end: 1,
                    kind: ChunkKind::Gap,
                    name: None,
                },
                Chunk {
                    start: 2,
                    end: 3,
                    kind: ChunkKind::Function,
                    name: Some("load".into()),
                },
            ]
            .into(),
            definitions: vec![Definition {
                name: "load".into(),
                qualified_name: "load".into(),
                kind: ChunkKind::Function,
                start: 2,
                end: 3,
                parent: None,
            }]
            .into(),
            imports: vec![Import {
                module: "pathlib".into(),
                names: vec!["Path".into()],
                line: 1,
            }]
            .into(),
            references: vec![
                Reference {
                    name: "open".into(),
                    line: 2,
                    kind: ReferenceKind::Call,
                },
                Reference {
                    name: "Path".into(),
                    line: 3,
                    kind: ReferenceKind::Type,
                },
            ]
            .into(),
            ..FileAnalysis::default()
        }
    }

    fn undecoded<T>(list: &LazyList<T>) -> bool {
        list.encoded.is_some() && list.decoded.get().is_none()
    }

    #[test]
    fn lazy_lists_come_back_from_the_cache_encoding_decoded_on_first_read() {
        let original = analysis();
        let bytes = postcard::to_allocvec(&original).unwrap();
        let loaded: FileAnalysis = postcard::from_bytes(&bytes).unwrap();
        // Loaded undecoded: only the blocks are held, and the definitions' name hashes.
        assert!(undecoded(&loaded.chunks) && undecoded(&loaded.imports));
        assert!(undecoded(&loaded.references) && undecoded(&loaded.definitions.list));
        assert_eq!(loaded.definitions.name_hashes(), [name_hash("load")]);
        assert_eq!(loaded.definitions.len(), 1);
        assert!(undecoded(&loaded.definitions.list));
        // The length is read from the block's head, without decoding it.
        assert_eq!(
            (
                loaded.chunks.len(),
                loaded.imports.len(),
                loaded.references.len()
            ),
            (2, 1, 2)
        );
        assert!(!loaded.chunks.is_empty());
        assert!(undecoded(&loaded.chunks) && undecoded(&loaded.references));
        // A clone of an undecoded list stays undecoded, and encodes to the same bytes.
        let copy = loaded.clone();
        assert!(undecoded(&copy.chunks) && undecoded(&copy.references));
        assert_eq!(postcard::to_allocvec(&copy).unwrap(), bytes);
        // Read: the analyser's lists, decoded once.
        assert_eq!(loaded.definitions[0].name, "load");
        assert_eq!(loaded.references[1].name, "Path");
        assert_eq!(loaded.chunks[1].name.as_deref(), Some("load"));
        assert!(loaded.chunks.decoded.get().is_some());
        assert_eq!(loaded.chunks.len(), 2);
        assert_eq!(loaded, original);
        let names: Vec<&str> = (&loaded.references)
            .into_iter()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(names, ["open", "Path"]);
        // A decoded list encodes to the same bytes as the undecoded one.
        assert_eq!(postcard::to_allocvec(&loaded).unwrap(), bytes);
    }

    #[test]
    fn lazy_lists_are_plain_lists_in_json() {
        let json = serde_json::to_value(analysis()).unwrap();
        assert_eq!(json["references"][0]["name"], "open");
        assert_eq!(json["references"][1]["kind"], "type");
        assert_eq!(json["chunks"][1]["name"], "load");
        assert_eq!(json["imports"][0]["module"], "pathlib");
        assert_eq!(json["definitions"][0]["name"], "load");
        let back: FileAnalysis = serde_json::from_value(json).unwrap();
        assert_eq!(back, analysis());
        // Empty lists: empty both ways, and in the cache encoding.
        let empty = FileAnalysis::default();
        let bytes = postcard::to_allocvec(&empty).unwrap();
        let loaded: FileAnalysis = postcard::from_bytes(&bytes).unwrap();
        assert!(loaded.references.is_empty() && loaded.chunks.is_empty());
        assert_eq!(loaded.imports.len(), 0);
        assert_eq!(
            serde_json::to_value(&empty).unwrap()["chunks"],
            serde_json::json!([])
        );
        // Read back from JSON, the hashes are computed again.
        assert_eq!(back.definitions.name_hashes(), [name_hash("load")]);
    }

    #[test]
    fn definitions_with_a_wrong_number_of_name_hashes_do_not_load() {
        let good = analysis().definitions;
        let bad = (&good.list, vec![1u64, 2]);
        let bytes = postcard::to_allocvec(&bad).unwrap();
        assert!(postcard::from_bytes::<Definitions>(&bytes).is_err());
        let bytes = postcard::to_allocvec(&good).unwrap();
        let back: Definitions = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back, good);
        assert_eq!(back.name_hashes(), good.name_hashes());
        // The hash is the name's: the same name files under the same hash, another name (case
        // included) under another.
        assert_eq!(name_hash("load"), name_hash(&(String::from("lo") + "ad")));
        assert_ne!(name_hash("load"), name_hash("Load"));
    }
}
