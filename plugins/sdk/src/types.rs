//! The JSON that crosses the boundary: the explore request and response, and the arguments and
//! results of every service.
//!
//! Conventions shared by all of them: paths are repository-relative with `/` separators; line
//! numbers are 1-based and intervals closed (`start..=end`); `end = -1` means "to the end of the
//! file". Results are objects (never bare arrays) so that fields can be added without breaking
//! older readers; unknown fields are ignored on reading.
//!
//! Types that will grow while the SDK is 0.x are `#[non_exhaustive]`: build them with their
//! constructors (`SearchArgs::new(query, limit).under("src")`, `Region::new(path, start, end)`)
//! and set optional fields with the `with_*`/named methods or by assignment, so that a field added
//! later does not break your code. Plain result wrappers (`ListFilesResult { files }`, ...) and
//! graph nodes stay open structs.

use serde::{Deserialize, Serialize};

/// The line budget `swex explore` asks for when the user gives none, and the one swex's own
/// explorer plans for when a request carries none: chosen from the measured trade-off between
/// lines read and what they hold (docs/explorer-swex.md, "Budget").
pub const DEFAULT_LINE_BUDGET: u64 = 3000;

/// The largest `top_k` a host sends (and `swex` accepts): far above any useful list of regions to
/// read, and small enough that an explorer sizing a buffer or a search by it stays cheap. A host
/// refuses a request outside `1..=MAX_TOP_K` before the explorer sees it.
pub const MAX_TOP_K: usize = 10_000;

/// What the host asks an explorer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Request {
    /// The benchmark instance (or a free-form id such as `adhoc` for interactive use).
    pub instance_id: String,
    /// The issue text, as the user or the benchmark wrote it.
    pub issue: String,
    /// How many regions the host keeps; an explorer may return more (the host cuts) or fewer.
    /// Always in `1..=`[`MAX_TOP_K`] when a swex host sends it.
    pub top_k: usize,
    /// The most lines the caller will read, when it says: the lines of all returned regions,
    /// counted with real file lengths (a whole-file region costs its file's line count; a line
    /// two regions share counts once), must not exceed it. Explorers should plan within it (spend
    /// it where the evidence is); the host cuts an answer that does not fit (the region that
    /// passes the budget keeps its first lines, later ones are dropped). `None`: the explorer's
    /// own default ([`DEFAULT_LINE_BUDGET`] for swex's engine-backed explorers that localise, no
    /// limit for plain rankers).
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
#[non_exhaustive]
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
#[non_exhaustive]
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
#[non_exhaustive]
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
    /// Ranked code search for short queries (appended after `issue_clues`).
    CodeSearch,
}

impl ServiceId {
    pub const ALL: [ServiceId; 12] = [
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
        ServiceId::CodeSearch,
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
            ServiceId::CodeSearch => "code_search",
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
#[non_exhaustive]
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

impl FileEntry {
    pub fn new(path: impl Into<String>, size: u64) -> FileEntry {
        FileEntry {
            path: path.into(),
            size,
            language: None,
            line_count: None,
        }
    }

    pub fn with_language(mut self, language: impl Into<String>) -> FileEntry {
        self.language = Some(language.into());
        self
    }

    pub fn with_line_count(mut self, line_count: u32) -> FileEntry {
        self.line_count = Some(line_count);
        self
    }
}

impl ListFilesArgs {
    /// Every file under `dir` (`None`: every file).
    pub fn under(dir: Option<&str>) -> ListFilesArgs {
        ListFilesArgs {
            under: dir.map(str::to_owned),
        }
    }
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

impl FileInfoArgs {
    pub fn new(path: impl Into<String>) -> FileInfoArgs {
        FileInfoArgs { path: path.into() }
    }
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
#[non_exhaustive]
pub struct ReadLinesArgs {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<i64>,
}

impl ReadLinesArgs {
    /// The whole file.
    pub fn new(path: impl Into<String>) -> ReadLinesArgs {
        ReadLinesArgs {
            path: path.into(),
            start: None,
            end: None,
        }
    }

    /// Lines `start..=end` (`end = -1`: to the end of the file).
    pub fn lines(mut self, start: u32, end: i64) -> ReadLinesArgs {
        self.start = Some(start);
        self.end = Some(end);
        self
    }
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

impl ChunksArgs {
    pub fn new(path: impl Into<String>) -> ChunksArgs {
        ChunksArgs { path: path.into() }
    }
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
#[non_exhaustive]
pub struct SearchArgs {
    /// Free text (an issue, a phrase): the host's issue parser turns it into weighted terms.
    pub query: String,
    pub limit: usize,
    /// Only chunks of files under this directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under: Option<String>,
    /// `lexical_search` only: when not empty, these weighted terms are the query instead of the
    /// parser's terms of `query` — for instance the `issue_clues` terms, reweighted (`query` then
    /// only labels the search). Ignored by `dense_search`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terms: Vec<WeightedTerm>,
}

impl SearchArgs {
    pub fn new(query: impl Into<String>, limit: usize) -> SearchArgs {
        SearchArgs {
            query: query.into(),
            limit,
            under: None,
            terms: Vec::new(),
        }
    }

    /// Only chunks of files under `dir`.
    pub fn under(mut self, dir: impl Into<String>) -> SearchArgs {
        self.under = Some(dir.into());
        self
    }

    /// Search for these weighted terms instead of the parser's terms of the query text.
    pub fn with_terms(mut self, terms: Vec<WeightedTerm>) -> SearchArgs {
        self.terms = terms;
        self
    }
}

/// A chunk that matched, with its score (higher is better; scales differ between services).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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

impl SearchHit {
    pub fn new(path: impl Into<String>, start: u32, end: u32, score: f64) -> SearchHit {
        SearchHit {
            path: path.into(),
            start,
            end,
            score,
            kind: None,
            name: None,
        }
    }

    /// The chunk's kind (`function`, `gap`, ...) and name, when it has one.
    pub fn with_chunk(mut self, kind: impl Into<String>, name: Option<String>) -> SearchHit {
        self.kind = Some(kind.into());
        self.name = name;
        self
    }
}

/// Search result: best first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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
#[non_exhaustive]
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
#[non_exhaustive]
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

impl SearchResult {
    pub fn new(hits: Vec<SearchHit>) -> SearchResult {
        SearchResult {
            hits,
            ..SearchResult::default()
        }
    }
}

impl DenseSearchArgs {
    pub fn new(query: impl Into<String>, limit: usize) -> DenseSearchArgs {
        DenseSearchArgs {
            search: SearchArgs::new(query, limit),
            ..DenseSearchArgs::default()
        }
    }

    /// Plain search arguments with the host's dense defaults.
    pub fn from_search(search: SearchArgs) -> DenseSearchArgs {
        DenseSearchArgs {
            search,
            ..DenseSearchArgs::default()
        }
    }
}

// ---- code_search ----

/// `code_search` arguments: a short query (a symbol, a phrase, a question) ranked for people and
/// agents: one best span per file unless `per_file` says otherwise, definition-level spans with
/// their names, symbol and path matches, tests and docs demoted unless the query asks for them,
/// dense scores fused when the host has the embedding model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CodeSearchArgs {
    pub query: String,
    pub limit: usize,
    /// Spans per file (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_file: Option<usize>,
    /// Only files under this directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under: Option<String>,
    /// `auto` (default: dense when the model is installed), `off`, or `on` (fail without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dense: Option<String>,
}

/// `code_search` result: hits best first (`kind` and `name` filled in), the query kind the host
/// detected (`symbol`, `semantic`, `architecture`), and whether dense scores were fused.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CodeSearchResult {
    pub hits: Vec<SearchHit>,
    pub query_kind: String,
    #[serde(default)]
    pub dense: bool,
}

// ---- definitions ----

/// `definitions` arguments: definitions whose bare or qualified name equals `name`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DefinitionsArgs {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DefinitionEntry {
    pub path: String,
    pub name: String,
    pub qualified_name: String,
    pub kind: String,
    pub start: u32,
    pub end: u32,
}

impl DefinitionsArgs {
    pub fn new(name: impl Into<String>) -> DefinitionsArgs {
        DefinitionsArgs {
            name: name.into(),
            limit: None,
        }
    }
}

impl DefinitionEntry {
    /// A definition: `name` as written, `qualified_name` with its containers (`Class.method`),
    /// `kind` (`function`, `class`, ...), lines `start..=end`.
    pub fn new(
        path: impl Into<String>,
        name: impl Into<String>,
        qualified_name: impl Into<String>,
        kind: impl Into<String>,
        start: u32,
        end: u32,
    ) -> DefinitionEntry {
        DefinitionEntry {
            path: path.into(),
            name: name.into(),
            qualified_name: qualified_name.into(),
            kind: kind.into(),
            start,
            end,
        }
    }
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
#[non_exhaustive]
pub enum Direction {
    #[default]
    Out,
    In,
    Both,
}

/// `graph_neighbours` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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

impl NodeRef {
    /// A file node.
    pub fn file(path: impl Into<String>) -> NodeRef {
        NodeRef {
            path: path.into(),
            name: None,
        }
    }

    /// A definition node, by qualified name.
    pub fn definition(path: impl Into<String>, name: impl Into<String>) -> NodeRef {
        NodeRef {
            path: path.into(),
            name: Some(name.into()),
        }
    }
}

impl NeighboursArgs {
    /// Every neighbour along outgoing edges of every kind.
    pub fn new(node: NodeRef) -> NeighboursArgs {
        NeighboursArgs {
            node,
            edge_kinds: Vec::new(),
            direction: Direction::Out,
            limit: None,
        }
    }
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
#[non_exhaustive]
pub struct PageRankArgs {
    pub seeds: Vec<Seed>,
    pub limit: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edge_kinds: Vec<String>,
}

impl PageRankArgs {
    pub fn new(seeds: Vec<Seed>, limit: usize) -> PageRankArgs {
        PageRankArgs {
            seeds,
            limit,
            damping: None,
            edge_kinds: Vec::new(),
        }
    }
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
#[non_exhaustive]
pub struct GrepArgs {
    pub pattern: String,
    /// Only files whose path matches this glob ([`crate::text::Glob`]: `*` within a segment, `**`
    /// across, `?`, `[...]`, `{a,b}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_glob: Option<String>,
    #[serde(default)]
    pub case_insensitive: bool,
    pub limit: usize,
}

impl GrepArgs {
    pub fn new(pattern: impl Into<String>, limit: usize) -> GrepArgs {
        GrepArgs {
            pattern: pattern.into(),
            path_glob: None,
            case_insensitive: false,
            limit,
        }
    }

    /// Only files whose path matches `glob` ([`crate::text::Glob`] syntax).
    pub fn in_files(mut self, glob: impl Into<String>) -> GrepArgs {
        self.path_glob = Some(glob.into());
        self
    }

    pub fn case_insensitive(mut self) -> GrepArgs {
        self.case_insensitive = true;
        self
    }
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrepMatch {
    pub path: String,
    pub line: u32,
    /// The line, cut to [`GrepMatch::TEXT_MAX_BYTES`] bytes (on a character boundary).
    pub text: String,
}

impl GrepMatch {
    /// Longest line text a match carries: minified and generated files have lines of megabytes.
    pub const TEXT_MAX_BYTES: usize = 400;

    /// `line` cut to [`GrepMatch::TEXT_MAX_BYTES`] bytes, on a character boundary.
    pub fn cut_text(line: &str) -> &str {
        crate::text::cut_to_bytes(line, Self::TEXT_MAX_BYTES)
    }
}

/// `grep` result: matches in path order, then line order; `truncated` when `limit` cut it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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

impl GrepResult {
    pub fn new(matches: Vec<GrepMatch>, truncated: bool) -> GrepResult {
        GrepResult { matches, truncated }
    }
}
