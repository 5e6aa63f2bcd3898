//! The JSON that crosses the boundary: the explore request and response, and the arguments and
//! results of every service.
//!
//! Conventions shared by all of them: paths are repository-relative with `/` separators; line
//! numbers are 1-based and intervals closed (`start..=end`); `end = -1` means "to the end of the
//! file". Results are objects (never bare arrays) so that fields can be added without breaking
//! older readers; unknown fields are ignored on reading.

use serde::{Deserialize, Serialize};

/// The largest `top_k` a host sends (and `swex` accepts): far above any useful list of regions to
/// read, and small enough that an explorer sizing a buffer or a search by it stays cheap. A host
/// refuses a request outside `1..=MAX_TOP_K` before the explorer sees it.
pub const MAX_TOP_K: usize = 10_000;

/// What the host asks an explorer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The benchmark instance (or a free-form id such as `adhoc` for interactive use).
    pub instance_id: String,
    /// The issue text, as the user or the benchmark wrote it.
    pub issue: String,
    /// How many regions the host keeps; an explorer may return more (the host cuts) or fewer.
    /// Always in `1..=`[`MAX_TOP_K`] when a swex host sends it.
    pub top_k: usize,
    /// A soft limit on the total number of lines the caller wants to read, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_budget: Option<u64>,
    /// Per-request settings for the explorer (the per-instance config is given to `create`).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub config: serde_json::Value,
    /// The instance's ground truth, given only to explorers that are meant to see it (oracle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ground_truth: Option<GroundTruth>,
    /// Absolute path of the snapshot on the host's file system, when it has one. For explorers
    /// that run external tools in the checkout (`command`); others should use the services.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_root: Option<String>,
}

impl Request {
    /// A request with only the required fields set.
    pub fn new(instance_id: impl Into<String>, issue: impl Into<String>, top_k: usize) -> Request {
        Request {
            instance_id: instance_id.into(),
            issue: issue.into(),
            top_k,
            line_budget: None,
            config: serde_json::Value::Null,
            ground_truth: None,
            repo_root: None,
        }
    }
}

/// The part of a benchmark row's `ground_truth` that explorers may use; other fields are kept in
/// `extra` untouched.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroundTruth {
    #[serde(default)]
    pub read_core_regions: Vec<Region>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// One ranked region. `score` and `why` are optional provenance for people and for fusion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Region {
    pub path: String,
    pub start: i64,
    pub end: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl Region {
    pub fn new(path: impl Into<String>, start: i64, end: i64) -> Region {
        Region {
            path: path.into(),
            start,
            end,
            score: None,
            why: None,
        }
    }

    pub fn with_score(mut self, score: f64) -> Region {
        self.score = Some(score);
        self
    }

    pub fn with_why(mut self, why: impl Into<String>) -> Region {
        self.why = Some(why.into());
        self
    }
}

/// What an explorer answers: regions, best first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub regions: Vec<Region>,
    /// Free-form remarks for the user (e.g. "dense index unavailable, fell back to lexical").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Response {
    pub fn new(regions: Vec<Region>) -> Response {
        Response {
            regions,
            notes: Vec::new(),
        }
    }
}

/// The services, in the order of their slots in [`crate::abi::SwexServices`]. The snake-case name
/// is the one used in messages and in the isolated-mode wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceId {
    ListFiles,
    FileInfo,
    ReadLines,
    Chunks,
    LexicalSearch,
    DenseSearch,
    Definitions,
    GraphNeighbours,
    PersonalizedPagerank,
    Grep,
    IssueClues,
}

impl ServiceId {
    pub const ALL: [ServiceId; 11] = [
        ServiceId::ListFiles,
        ServiceId::FileInfo,
        ServiceId::ReadLines,
        ServiceId::Chunks,
        ServiceId::LexicalSearch,
        ServiceId::DenseSearch,
        ServiceId::Definitions,
        ServiceId::GraphNeighbours,
        ServiceId::PersonalizedPagerank,
        ServiceId::Grep,
        ServiceId::IssueClues,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ServiceId::ListFiles => "list_files",
            ServiceId::FileInfo => "file_info",
            ServiceId::ReadLines => "read_lines",
            ServiceId::Chunks => "chunks",
            ServiceId::LexicalSearch => "lexical_search",
            ServiceId::DenseSearch => "dense_search",
            ServiceId::Definitions => "definitions",
            ServiceId::GraphNeighbours => "graph_neighbours",
            ServiceId::PersonalizedPagerank => "personalized_pagerank",
            ServiceId::Grep => "grep",
            ServiceId::IssueClues => "issue_clues",
        }
    }

    /// Position in [`ServiceId::ALL`] (and in the services table after its header).
    pub fn index(self) -> usize {
        ServiceId::ALL
            .iter()
            .position(|id| *id == self)
            .expect("every id is in ALL")
    }
}

impl std::fmt::Display for ServiceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

// ---- list_files / file_info ----

/// `list_files` arguments. Every file of the snapshot, or those under a directory.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListFilesArgs {
    /// Only files under this repository-relative directory (`src/`, `src`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under: Option<String>,
}

/// A file of the snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    pub path: String,
    pub size: u64,
    /// Language name when the backend detected one (`python`, `rust`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Number of lines as Python's `str.splitlines()` counts them, when the backend knows it
    /// without reading the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_count: Option<u32>,
}

/// `list_files` result: files sorted by path (byte order).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListFilesResult {
    pub files: Vec<FileEntry>,
}

/// `file_info` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileInfoArgs {
    pub path: String,
}

/// `file_info` result: the entry, with `line_count` always filled in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileInfoResult {
    pub file: FileEntry,
}

// ---- read_lines / chunks ----

/// `read_lines` arguments: lines `start..=end` of a file (1-based; `end` absent or -1 = to the
/// end). Lines are the file decoded as UTF-8 with invalid bytes dropped, split the way Python's
/// `str.splitlines()` splits (on `\n`, `\r\n`, `\r`, `\x0b`, `\x0c`, `\x1c`–`\x1e`, `\x85`,
/// U+2028, U+2029), without their terminators: the same lines the benchmark's metrics count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadLinesArgs {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<i64>,
}

/// `read_lines` result. `lines[0]` is line `start`; `total_lines` is the file's line count.
/// A range past the end yields fewer (or no) lines, not an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadLinesResult {
    pub start: u32,
    pub lines: Vec<String>,
    pub total_lines: u32,
}

/// `chunks` arguments: the engine's chunks of one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunksArgs {
    pub path: String,
}

/// One chunk: definition-level for parsed languages, line windows otherwise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkEntry {
    pub start: u32,
    pub end: u32,
    /// `function`, `method`, `class`, ..., `gap`, `window`.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `chunks` result: ordered by `start`, non-overlapping, covering the file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChunksResult {
    pub chunks: Vec<ChunkEntry>,
}

// ---- lexical_search / dense_search ----

/// `lexical_search` and `dense_search` arguments (`dense_search` takes more, optional, settings:
/// [`DenseSearchArgs`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchArgs {
    pub query: String,
    pub limit: usize,
    /// Only chunks of files under this directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under: Option<String>,
}

/// A chunk that matched, with its score (higher is better; scales differ between services).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub score: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Search result: best first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    pub hits: Vec<SearchHit>,
    /// `dense_search` only: how the hits were found, `full` (the snapshot's full dense index) or
    /// `rerank` (candidates embedded and ordered by similarity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<DenseMode>,
    /// `dense_search` only: chunks scored against the query.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scored: Option<usize>,
    /// `dense_search` only: how many of them had to be embedded during this call (the others
    /// came from the embedding cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedded: Option<usize>,
}

/// How `dense_search` finds its hits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DenseMode {
    /// The full index when the snapshot has one (every chunk embedded), else `rerank`.
    #[default]
    Auto,
    /// The full index only; `Unavailable` when the snapshot has none (`swex index --dense`).
    Full,
    /// Embed (cache first) and order candidates: the top lexical hits of the same query, or the
    /// chunks of `rerank_regions`.
    Rerank,
}

/// `dense_search` arguments: [`SearchArgs`] plus optional dense settings. On the wire these are
/// extra optional fields of the same object, so plain `SearchArgs` are valid `dense_search`
/// arguments (mode `auto`, the host's candidate count).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DenseSearchArgs {
    #[serde(flatten)]
    pub search: SearchArgs,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<DenseMode>,
    /// Rerank: how many top lexical hits are the candidates (the host's default when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates: Option<usize>,
    /// Rerank the chunks overlapping these regions instead of lexical candidates (implies
    /// `rerank`); `end = -1` runs to the end of the file, `score` and `why` are ignored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rerank_regions: Vec<Region>,
}

impl DenseSearchArgs {
    pub fn new(query: impl Into<String>, limit: usize) -> DenseSearchArgs {
        DenseSearchArgs {
            search: SearchArgs {
                query: query.into(),
                limit,
                under: None,
            },
            ..DenseSearchArgs::default()
        }
    }
}

// ---- definitions ----

/// `definitions` arguments: definitions whose bare or qualified name equals `name`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DefinitionsArgs {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DefinitionEntry {
    pub path: String,
    pub name: String,
    pub qualified_name: String,
    pub kind: String,
    pub start: u32,
    pub end: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DefinitionsResult {
    pub definitions: Vec<DefinitionEntry>,
}

// ---- graph ----

/// Names a graph node: a file (`name` absent) or a definition in it by qualified name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeRef {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A node of the code graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphNode {
    pub path: String,
    /// Qualified name of a definition node; absent for file nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `file`, `function`, `class`, ...
    pub kind: String,
    pub start: u32,
    pub end: u32,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[default]
    Out,
    In,
    Both,
}

/// `graph_neighbours` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeighboursArgs {
    pub node: NodeRef,
    /// Edge kinds to follow (`imports`, `calls`, `contains`, ...); empty = all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edge_kinds: Vec<String>,
    #[serde(default)]
    pub direction: Direction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Neighbour {
    pub node: GraphNode,
    pub edge: String,
    /// `out` when the edge leaves the asked node, `in` when it arrives.
    pub direction: Direction,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NeighboursResult {
    pub neighbours: Vec<Neighbour>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Seed {
    pub node: NodeRef,
    pub weight: f64,
}

/// `personalized_pagerank` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageRankArgs {
    pub seeds: Vec<Seed>,
    pub limit: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edge_kinds: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankedNode {
    pub node: GraphNode,
    pub score: f64,
}

/// `personalized_pagerank` result: best first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PageRankResult {
    pub nodes: Vec<RankedNode>,
}

// ---- grep ----

/// `grep` arguments: a regular expression (Rust `regex` syntax) matched against each line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrepArgs {
    pub pattern: String,
    /// Only files whose path matches this glob (`*` within a segment, `**` across, `?`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_glob: Option<String>,
    #[serde(default)]
    pub case_insensitive: bool,
    pub limit: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrepMatch {
    pub path: String,
    pub line: u32,
    pub text: String,
}

/// `grep` result: matches in path order, then line order; `truncated` when `limit` cut it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GrepResult {
    pub matches: Vec<GrepMatch>,
    #[serde(default)]
    pub truncated: bool,
}

// ---- issue_clues ----

/// `issue_clues` arguments ([`IssueCluesArgs::new`]`(text)`) and result: what the host's issue
/// parser reads out of a text — traceback frames, paths, identifiers, code spans and the
/// weighted terms its lexical search runs — so that explorers need not parse issues themselves.
/// Every host answers it (it needs no index). The types are those of the `swex-issue` crate.
pub use swex_issue::{Frame, FrameStyle, IssueClues, IssueCluesArgs, WeightedTerm};
