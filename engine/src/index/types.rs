//! The engine API's plain data: indexed files, hits of each query, search filters, and the
//! statistics of an open. No behaviour beyond trivial helpers.

use crate::analysis::{ChunkKind, Language};
use crate::scan::ContentHash;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use swex_text::Glob;

/// One indexed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileInfo {
    pub path: String,
    pub language: Option<Language>,
    pub size: u64,
    /// Lines as the benchmark counts them (Python `str.splitlines()`).
    pub line_count: u32,
    pub content_hash: ContentHash,
}

/// A chunk found by lexical search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkHit {
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub kind: ChunkKind,
    pub name: Option<String>,
    pub score: f32,
    pub chunk_id: u32,
}

/// A whole file found by [`super::SnapshotIndex::file_lexical_search`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileHit {
    pub path: String,
    /// The file's line count.
    pub lines: u32,
    pub score: f32,
}

/// A definition found by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefinitionHit {
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub kind: ChunkKind,
    pub name: String,
    pub qualified_name: String,
}

/// A line matched by [`SnapshotIndex::grep`](crate::index::SnapshotIndex::grep).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrepHit {
    pub path: String,
    pub line: u32,
    /// The line, cut to [`GREP_LINE_MAX`] bytes.
    pub text: String,
}

/// Longest line text returned by grep. The services contract's limit is
/// `swex_plugin::types::GrepMatch::TEXT_MAX_BYTES` (the engine does not know the SDK): the host cuts
/// to that, and the conformance suite checks that both agree.
pub const GREP_LINE_MAX: usize = 400;

/// Restricts lexical search results. Empty lists mean "any".
#[derive(Debug, Clone, Default)]
pub struct SearchFilters {
    pub path_glob: Option<Glob>,
    pub languages: Vec<Language>,
    pub kinds: Vec<ChunkKind>,
}

impl SearchFilters {
    pub fn is_empty(&self) -> bool {
        self.path_glob.is_none() && self.languages.is_empty() && self.kinds.is_empty()
    }
}

/// Counts and timings of one [`Engine::open`](crate::index::Engine::open).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexStats {
    pub files: usize,
    pub files_by_language: BTreeMap<String, usize>,
    pub bytes: u64,
    pub lines: u64,
    pub chunks: usize,
    pub definitions: usize,
    pub diagnostics_by_kind: BTreeMap<String, usize>,
    /// What the checkout's ignore rules left out ([`crate::scan::CheckoutRules`]).
    #[serde(default)]
    pub ignored: crate::scan::IgnoreReport,
    pub cache: CacheStats,
    pub pool: PoolStats,
    pub timings_ms: Timings,
}

/// How much of the cache was reused.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheStats {
    /// Files whose content hash came from the stat manifest without reading them.
    pub stat_fast_path: usize,
    pub files_read: usize,
    pub analyses_reused: usize,
    pub analyses_computed: usize,
    /// Cache entries found damaged or foreign (rebuilt).
    pub invalid_entries: usize,
    /// Cache writes that failed (the index is still complete; the next open redoes the work).
    pub write_errors: usize,
    pub first_write_error: Option<String>,
    /// Pools found damaged and rebuilt, with the reason.
    pub pool_repairs: Vec<String>,
}

/// The lexical pool the snapshot uses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolStats {
    pub id: String,
    /// Documents (chunks) added by this open.
    pub docs_added: u64,
    /// Documents in the pool over all file versions.
    pub docs_total: u64,
    /// Documents of this snapshot.
    pub snapshot_docs: u64,
    pub segments: usize,
    pub size_bytes: u64,
}

/// Wall-clock milliseconds per stage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    pub walk: f64,
    pub read: f64,
    pub analyze: f64,
    pub lexical: f64,
    pub total: f64,
}
