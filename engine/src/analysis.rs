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

/// A file's references, decoded from the cache only when first read.
///
/// Why: an index opened from the cache loads every file's analysis, and the references are most
/// of its bytes (every call, type name and attribute access of the file) while only the code
/// graph reads them. In a binary format (the cache's postcard) they are stored as one encoded
/// block, copied at load and decoded on the first read; an index that never builds the graph
/// never decodes them. In a human-readable format (JSON) they are the plain list.
///
/// Invariant: the list is the one the analyser produced; equality, cloning and serialisation
/// see the decoded list.
#[derive(Default)]
pub struct References {
    /// The postcard encoding of the list, when it came from a binary format undecoded.
    encoded: Option<Box<[u8]>>,
    decoded: std::sync::OnceLock<Vec<Reference>>,
}

impl References {
    /// The references, decoded on the first call. A block that does not decode (the cache's
    /// packs are checksummed and versioned, so only a format bug gets here) reads as none.
    pub fn as_slice(&self) -> &[Reference] {
        self.decoded.get_or_init(|| match &self.encoded {
            Some(bytes) => postcard::from_bytes(bytes).unwrap_or_else(|err| {
                debug_assert!(false, "undecodable references: {err}");
                Vec::new()
            }),
            None => Vec::new(),
        })
    }
}

impl From<Vec<Reference>> for References {
    fn from(list: Vec<Reference>) -> References {
        References {
            encoded: None,
            decoded: std::sync::OnceLock::from(list),
        }
    }
}

impl std::ops::Deref for References {
    type Target = [Reference];
    fn deref(&self) -> &[Reference] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a References {
    type Item = &'a Reference;
    type IntoIter = std::slice::Iter<'a, Reference>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl Clone for References {
    fn clone(&self) -> References {
        match (self.decoded.get(), &self.encoded) {
            (None, Some(bytes)) => References {
                encoded: Some(bytes.clone()),
                decoded: std::sync::OnceLock::new(),
            },
            _ => References::from(self.as_slice().to_vec()),
        }
    }
}

impl PartialEq for References {
    fn eq(&self, other: &References) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for References {}

impl std::fmt::Debug for References {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl Serialize for References {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            return self.as_slice().serialize(serializer);
        }
        match &self.encoded {
            Some(bytes) => serializer.serialize_bytes(bytes),
            None => {
                let bytes =
                    postcard::to_allocvec(self.as_slice()).map_err(serde::ser::Error::custom)?;
                serializer.serialize_bytes(&bytes)
            }
        }
    }
}

impl<'de> Deserialize<'de> for References {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<References, D::Error> {
        if deserializer.is_human_readable() {
            return Vec::<Reference>::deserialize(deserializer).map(References::from);
        }
        struct Block;
        impl<'de> serde::de::Visitor<'de> for Block {
            type Value = References;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("the encoded references")
            }
            fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<References, E> {
                Ok(References {
                    encoded: Some(bytes.into()),
                    decoded: std::sync::OnceLock::new(),
                })
            }
            fn visit_byte_buf<E: serde::de::Error>(self, bytes: Vec<u8>) -> Result<References, E> {
                Ok(References {
                    encoded: Some(bytes.into_boxed_slice()),
                    decoded: std::sync::OnceLock::new(),
                })
            }
        }
        deserializer.deserialize_bytes(Block)
    }
}

/// Everything the engine derives from one file's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct FileAnalysis {
    pub language: Option<Language>,
    /// Number of lines as Python's `str.splitlines()` would count them on the UTF-8 (lossy) text.
    pub line_count: u32,
    pub chunks: Vec<Chunk>,
    pub definitions: Vec<Definition>,
    pub imports: Vec<Import>,
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

    #[test]
    fn references_come_back_from_the_cache_encoding_decoded_on_first_read() {
        let original = analysis();
        let bytes = postcard::to_allocvec(&original).unwrap();
        let loaded: FileAnalysis = postcard::from_bytes(&bytes).unwrap();
        // Loaded undecoded: only the block is held.
        assert!(loaded.references.decoded.get().is_none());
        assert!(loaded.references.encoded.is_some());
        // A clone of an undecoded list stays undecoded, and encodes to the same bytes.
        let copy = loaded.clone();
        assert!(copy.references.decoded.get().is_none());
        assert_eq!(postcard::to_allocvec(&copy).unwrap(), bytes);
        // Read: the analyser's list.
        assert_eq!(loaded.references.len(), 2);
        assert_eq!(loaded.references[1].name, "Path");
        assert_eq!(loaded, original);
        let names: Vec<&str> = (&loaded.references)
            .into_iter()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(names, ["open", "Path"]);
    }

    #[test]
    fn references_are_a_plain_list_in_json() {
        let json = serde_json::to_value(analysis()).unwrap();
        assert_eq!(json["references"][0]["name"], "open");
        assert_eq!(json["references"][1]["kind"], "type");
        let back: FileAnalysis = serde_json::from_value(json).unwrap();
        assert_eq!(back, analysis());
        // No references: an empty list both ways.
        let empty = FileAnalysis::default();
        let bytes = postcard::to_allocvec(&empty).unwrap();
        let loaded: FileAnalysis = postcard::from_bytes(&bytes).unwrap();
        assert!(loaded.references.is_empty());
    }
}
