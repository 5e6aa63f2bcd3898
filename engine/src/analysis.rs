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

/// Everything the engine derives from one file's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct FileAnalysis {
    pub language: Option<Language>,
    /// Number of lines as Python's `str.splitlines()` would count them on the UTF-8 (lossy) text.
    pub line_count: u32,
    pub chunks: Vec<Chunk>,
    pub definitions: Vec<Definition>,
    pub imports: Vec<Import>,
    pub references: Vec<Reference>,
    /// The package or namespace the file declares, when the language has one: Go `package x`,
    /// Java `package a.b`, PHP `namespace A\B`; for manifests, the module path of a Go `go.mod`
    /// and the crate name of a `Cargo.toml` (with `-` read as `_`).
    #[serde(default)]
    pub package: Option<String>,
    /// True when the parser reported syntax errors; the chunks are still usable.
    pub has_syntax_errors: bool,
}
