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
    /// The regions a developer had to read to solve the issue (the benchmark's core regions), in
    /// the benchmark row's order: repository-relative `/` paths, 1-based closed intervals of
    /// `str.splitlines()` lines, `end = -1` for the whole rest of the file. Empty when the row has
    /// none.
    #[serde(default)]
    pub read_core_regions: Vec<Region>,
    /// Every other field of the row's `ground_truth` object, kept as it was read (and written back
    /// unchanged when the request is serialised).
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// One ranked region. `score` and `why` are optional provenance for people and for fusion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Region {
    /// Repository-relative path of the file, `/` separators: not absolute, no `..` segment, a file
    /// of the snapshot (the host drops regions that break this and removes a leading `./`).
    pub path: String,
    /// First line, 1-based, of Python `str.splitlines()` lines. The host keeps `start <= 0`: the
    /// metrics read 0 as 1 and a negative start as counted from the end of the file.
    pub start: i64,
    /// Last line, inclusive (the interval is `start..=end`); `-1` means to the end of the file.
    /// `0` and values below `-1` make the region empty, and `start > end >= 1` reversed: the host
    /// drops both.
    pub end: i64,
    /// How strongly the explorer ranks this region (higher is better; the scale is the explorer's
    /// own). `None`: no score. Not used to order the answer: the order of [`Response::regions`] is
    /// the ranking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// A short human-readable reason the region was chosen (`"defines parse_url"`), shown by `swex
    /// explore`. `None`: no reason given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl Region {
    /// Lines `start..=end` of `path` (1-based, closed; `end = -1`: to the end of the file),
    /// without score or reason.
    pub fn new(path: impl Into<String>, start: i64, end: i64) -> Region {
        Region {
            path: path.into(),
            start,
            end,
            score: None,
            why: None,
        }
    }

    /// Sets [`Region::score`] (higher is better).
    pub fn with_score(mut self, score: f64) -> Region {
        self.score = Some(score);
        self
    }

    /// Sets [`Region::why`], the reason shown to people.
    pub fn with_why(mut self, why: impl Into<String>) -> Region {
        self.why = Some(why.into());
        self
    }
}

/// What an explorer answers: regions, best first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Response {
    /// The regions to read, best first. The host validates them (invalid ones dropped and counted,
    /// the order kept), then cuts the list to the request's `top_k` and holds it to its
    /// `line_budget`.
    pub regions: Vec<Region>,
    /// Free-form remarks for the user (e.g. "dense index unavailable, fell back to lexical").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Response {
    /// An answer with these regions (best first) and no notes.
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
    /// `list_files`: the snapshot's files, or those under a directory ([`ListFilesArgs`] →
    /// [`ListFilesResult`]). Every host.
    ListFiles,
    /// `file_info`: one file's entry with its line count ([`FileInfoArgs`] → [`FileInfoResult`]).
    /// Every host.
    FileInfo,
    /// `read_lines`: a range of a file's `str.splitlines()` lines ([`ReadLinesArgs`] →
    /// [`ReadLinesResult`]). Every host.
    ReadLines,
    /// `chunks`: the engine's chunks of a file ([`ChunksArgs`] → [`ChunksResult`]). Engine backend
    /// only.
    Chunks,
    /// `lexical_search`: BM25-ranked chunks for a query or weighted terms ([`SearchArgs`] →
    /// [`SearchResult`]). Engine backend only.
    LexicalSearch,
    /// `dense_search`: chunks ranked by embedding similarity ([`DenseSearchArgs`] →
    /// [`SearchResult`]). Engine backend with the embedding model installed only.
    DenseSearch,
    /// `definitions`: definitions with a given bare or qualified name ([`DefinitionsArgs`] →
    /// [`DefinitionsResult`]). Engine backend only.
    Definitions,
    /// `graph_neighbours`: the code graph's edges at a node ([`NeighboursArgs`] →
    /// [`NeighboursResult`]). Engine backend only.
    GraphNeighbours,
    /// `personalized_pagerank`: graph nodes ranked by PageRank personalised on seeds
    /// ([`PageRankArgs`] → [`PageRankResult`]). Engine backend only.
    PersonalizedPagerank,
    /// `grep`: regex matches per line ([`GrepArgs`] → [`GrepResult`]). Every host.
    Grep,
    /// `issue_clues`: what the host's issue parser reads out of a text ([`IssueCluesArgs`] →
    /// [`IssueClues`]). Every host; needs no index. Appended after the first layout.
    IssueClues,
    /// Ranked code search for short queries (appended after `issue_clues`).
    CodeSearch,
    /// `history_search`: files ranked by how well their commit messages match a text
    /// ([`HistorySearchArgs`] → [`HistorySearchResult`]). Engine backend with the checkout's git
    /// history only (appended after `code_search`).
    HistorySearch,
}

impl ServiceId {
    /// Every service, in the order of their slots in [`crate::abi::SwexServices`] (the services
    /// table after its header): [`ServiceId::index`] is the position here.
    pub const ALL: [ServiceId; 13] = [
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
        ServiceId::HistorySearch,
    ];

    /// The service's snake-case name (`list_files`, `read_lines`, ...): the name of its slot in
    /// the C table, of its method on [`crate::Services`], and the one used in messages and in the
    /// isolated-mode wire protocol. Also what `Display` writes.
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
            ServiceId::HistorySearch => "history_search",
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
    /// Repository-relative path, `/` separators.
    pub path: String,
    /// Size in bytes of the file as stored in the snapshot (before any decoding).
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
    /// An entry with `path` (repository-relative, `/` separators) and `size` (bytes); no language,
    /// no line count.
    pub fn new(path: impl Into<String>, size: u64) -> FileEntry {
        FileEntry {
            path: path.into(),
            size,
            language: None,
            line_count: None,
        }
    }

    /// Sets [`FileEntry::language`] (`python`, `rust`, ...).
    pub fn with_language(mut self, language: impl Into<String>) -> FileEntry {
        self.language = Some(language.into());
        self
    }

    /// Sets [`FileEntry::line_count`] (Python `str.splitlines()` lines).
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
    /// The files, sorted by path in byte order; empty when nothing is under the directory asked
    /// for (not an error).
    pub files: Vec<FileEntry>,
}

/// `file_info` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileInfoArgs {
    /// Repository-relative path of the file, `/` separators. A path that is not a file of the
    /// snapshot answers `NotFound`.
    pub path: String,
}

impl FileInfoArgs {
    /// Arguments for the file at `path` (repository-relative, `/` separators).
    pub fn new(path: impl Into<String>) -> FileInfoArgs {
        FileInfoArgs { path: path.into() }
    }
}

/// `file_info` result: the entry, with `line_count` always filled in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileInfoResult {
    /// The file's entry; [`FileEntry::line_count`] is always `Some` here.
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
    /// Repository-relative path of the file, `/` separators. A path that is not a file of the
    /// snapshot answers `NotFound`.
    pub path: String,
    /// First line, 1-based. `None` (and values below 1) mean line 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<u32>,
    /// Last line, inclusive. `None` or `-1`: to the end of the file; past the end: clamped to it;
    /// 0 or below (other than -1): no lines.
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
    /// The line number (1-based) of `lines[0]`: the `start` asked for, or 1 when it was absent or
    /// below 1.
    pub start: u32,
    /// The lines, decoded as UTF-8 with invalid bytes dropped, without their line terminators;
    /// empty when the range is empty or past the end of the file.
    pub lines: Vec<String>,
    /// The number of lines of the whole file (Python `str.splitlines()` lines), whatever range was
    /// read.
    pub total_lines: u32,
}

/// `chunks` arguments: the engine's chunks of one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunksArgs {
    /// Repository-relative path of the file, `/` separators. A file the index does not hold
    /// answers `NotFound`.
    pub path: String,
}

/// One chunk: definition-level for parsed languages, line windows otherwise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkEntry {
    /// First line of the chunk, 1-based.
    pub start: u32,
    /// Last line of the chunk, inclusive (1-based closed interval `start..=end`).
    pub end: u32,
    /// `function`, `method`, `class`, ..., `gap`, `window`.
    pub kind: String,
    /// The name of the definition the chunk holds (as written, e.g. `parse_url`); `None` for gaps,
    /// windows and unnamed definitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl ChunksArgs {
    /// Arguments for the chunks of the file at `path` (repository-relative, `/` separators).
    pub fn new(path: impl Into<String>) -> ChunksArgs {
        ChunksArgs { path: path.into() }
    }
}

/// `chunks` result: ordered by `start`, non-overlapping, covering the file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChunksResult {
    /// The file's chunks, ordered by `start`; together they cover the file without overlapping.
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
    /// The most hits to return. The engine never sizes work by it: `usize::MAX` costs no more than
    /// what the index holds.
    pub limit: usize,
    /// Only chunks of files under this directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under: Option<String>,
    /// `lexical_search` only: when not empty, these weighted terms are the query instead of the
    /// parser's terms of `query` — for instance the `issue_clues` terms, reweighted (`query` then
    /// only labels the search). Ignored by `dense_search`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terms: Vec<WeightedTerm>,
    /// `lexical_search` only: rank whole files instead of chunks. Each hit is a file (`start` 1,
    /// `end` its line count, no kind or name), scored by BM25 over the whole file: the query's
    /// term frequencies summed over the file, document frequencies counted in files, its line
    /// count as its length. It finds the files that hold most of the query's words wherever they
    /// are, where chunk hits find the passages that repeat them. Ignored by `dense_search`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub whole_files: bool,
}

impl SearchArgs {
    /// Search for `query` (free text), at most `limit` hits, over every file, with the parser's
    /// terms.
    pub fn new(query: impl Into<String>, limit: usize) -> SearchArgs {
        SearchArgs {
            query: query.into(),
            limit,
            under: None,
            terms: Vec::new(),
            whole_files: false,
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

    /// Rank whole files instead of chunks (`lexical_search` only; [`SearchArgs::whole_files`]).
    pub fn whole_files(mut self) -> SearchArgs {
        self.whole_files = true;
        self
    }
}

/// A chunk that matched, with its score (higher is better; scales differ between services).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SearchHit {
    /// Repository-relative path of the chunk's file, `/` separators.
    pub path: String,
    /// First line of the chunk, 1-based.
    pub start: u32,
    /// Last line of the chunk, inclusive (1-based closed interval).
    pub end: u32,
    /// The service's score for the chunk: higher is better. Scales differ between services (BM25
    /// for `lexical_search`, embedding similarity for `dense_search`, a fused score for
    /// `code_search`), so do not compare them across services.
    pub score: f64,
    /// The chunk's kind (`function`, `method`, `class`, ..., `gap`, `window`), when the service
    /// reports it (always for `code_search`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The name of the definition the chunk holds, when it has one; `None` for gaps and windows,
    /// or when the service does not report it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl SearchHit {
    /// A hit on lines `start..=end` (1-based, closed) of `path` with `score` (higher is better);
    /// no kind, no name.
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
    /// The hits, best first; at most the `limit` asked for, fewer when fewer chunks match.
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
    /// The query, the limit, the directory and (ignored here) the terms, as for `lexical_search`;
    /// flattened into the same JSON object.
    #[serde(flatten)]
    pub search: SearchArgs,
    /// How to find the hits. `None`: [`DenseMode::Auto`].
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
    /// A result with these hits (best first) and no dense details.
    pub fn new(hits: Vec<SearchHit>) -> SearchResult {
        SearchResult {
            hits,
            ..SearchResult::default()
        }
    }
}

impl DenseSearchArgs {
    /// Dense search for `query` (free text), at most `limit` hits, with the host's defaults (mode
    /// `auto`, the host's candidate count).
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
    /// The query: a symbol (`parse_url`, `Request.send`), a phrase or a question, in free text.
    pub query: String,
    /// The most hits to return.
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
    /// The hits, best first, with [`SearchHit::kind`] and [`SearchHit::name`] filled in (`name`
    /// stays `None` for spans that are not definitions).
    pub hits: Vec<SearchHit>,
    /// The kind of query the host detected: `symbol`, `semantic` or `architecture`.
    pub query_kind: String,
    /// Whether dense scores were fused into the ranking (`false` when the model is absent or
    /// `dense` was `off`).
    #[serde(default)]
    pub dense: bool,
}

// ---- history_search ----

/// `history_search` arguments: BM25 of `query` against each file's commit messages (the newest
/// 200 of the last 3,000 non-merge commits of the checkout's commit), with the statistics of the
/// files scored — those of `paths`, or every file some commit touched.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HistorySearchArgs {
    /// The text to match: an issue, a question, words.
    pub query: String,
    /// Score only these repository-relative paths (document frequencies and lengths are theirs);
    /// `None`: every file with history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<Vec<String>>,
    /// The most hits to return.
    pub limit: usize,
}

/// One file's scores in a `history_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryHit {
    /// Repository-relative path, `/` separators.
    pub path: String,
    /// BM25 of the query against the file's commit messages (0 when none matches).
    pub score: f64,
    /// The file's share of the query's similar commits: over the 20 commits whose own messages
    /// match the query best (BM25 over the commits), Σ of each one that changed the file's score
    /// over the best one's, divided by √(files it changed); 0 when none changed it.
    #[serde(default)]
    pub similar_commits: f64,
    /// The file's share of the commits whose message names an issue or pull request the query
    /// names (`#1234`, `…/issues/1234`): Σ over those that changed it of 1 / √(files they
    /// changed); 0 when none did.
    #[serde(default)]
    pub referenced: f64,
}

/// `history_search` result: files whose messages match some query term or that a similar commit
/// changed, best first by `score` (ties by path), and which history was read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HistorySearchResult {
    /// The files, best first.
    pub hits: Vec<HistoryHit>,
    /// The commit whose past was read (the snapshot's commit, or the work tree's `HEAD`).
    pub commit: String,
    /// How many commits were read.
    pub commits: u32,
    /// How much of the query its most similar commit says: that commit's BM25 over the sum of
    /// the inverse document frequencies of the query's terms some commit holds (about 1 when a
    /// past message repeats the query's words; 0 without a similar commit). An issue's title
    /// that one past message covers names that commit's files more surely.
    #[serde(default)]
    pub similar_coverage: f64,
}

// ---- definitions ----

/// `definitions` arguments: definitions whose bare or qualified name equals `name`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DefinitionsArgs {
    /// The name to look up: bare (`send`) or qualified with its containers (`Request.send`).
    pub name: String,
    /// The most definitions to return; `None`: all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<usize>,
}

/// One definition found by `definitions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DefinitionEntry {
    /// Repository-relative path of the file that holds it, `/` separators.
    pub path: String,
    /// The name as written in the source (`send`).
    pub name: String,
    /// The name with its containers, `.`-separated (`Request.send`); equal to `name` at top level.
    pub qualified_name: String,
    /// What kind of definition it is: `function`, `method`, `class`, ...
    pub kind: String,
    /// First line of the definition, 1-based.
    pub start: u32,
    /// Last line of the definition, inclusive (1-based closed interval).
    pub end: u32,
}

impl DefinitionsArgs {
    /// The definitions named `name` (bare or qualified), all of them.
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

/// `definitions` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DefinitionsResult {
    /// The definitions with the name asked for, at most `limit`; empty when none has that name
    /// (not an error).
    pub definitions: Vec<DefinitionEntry>,
}

// ---- graph ----

/// Names a graph node: a file (`name` absent) or a definition in it by qualified name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeRef {
    /// Repository-relative path of the file, `/` separators. A file the graph does not hold
    /// answers `NotFound`.
    pub path: String,
    /// `None`: the file node itself. Otherwise a definition in the file, by qualified name
    /// (`Class.method`; `.`, `::`, `#` and `\` are interchangeable) or by bare name when the file
    /// has only one definition of it (else `InvalidArgs` listing them); an unknown name answers
    /// `NotFound`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A node of the code graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphNode {
    /// Repository-relative path of the file (of the definition's file, for a definition node), `/`
    /// separators.
    pub path: String,
    /// Qualified name of a definition node; absent for file nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `file`, `function`, `class`, ...
    pub kind: String,
    /// First line of the node's span, 1-based (1 for a file node).
    pub start: u32,
    /// Last line of the node's span, inclusive: the definition's last line, or the file's last
    /// line for a file node.
    pub end: u32,
}

/// Which edges of a node `graph_neighbours` follows, and which way an edge of its answer goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Direction {
    /// Outgoing edges: from the asked node to others (`a.py` imports `b.py`: `b.py` is an outgoing
    /// neighbour of `a.py`). The default.
    #[default]
    Out,
    /// Incoming edges: from other nodes to the asked node.
    In,
    /// Both: the outgoing edges first, then the incoming ones. Only used in arguments; each
    /// neighbour of the answer is `Out` or `In`.
    Both,
}

/// `graph_neighbours` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NeighboursArgs {
    /// The node whose neighbours are asked for.
    pub node: NodeRef,
    /// Edge kinds to follow (`imports`, `calls`, `contains`, ...); empty = all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edge_kinds: Vec<String>,
    /// Which edges: [`Direction::Out`] (the default), [`Direction::In`] or [`Direction::Both`].
    #[serde(default)]
    pub direction: Direction,
    /// The most neighbours to return, cut from the end of the list (outgoing edges come first);
    /// `None`: all of them.
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

/// One edge at the asked node, as `graph_neighbours` answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Neighbour {
    /// The node at the other end of the edge.
    pub node: GraphNode,
    /// The edge's kind: `contains` (file → definition → nested definition), `imports` (file →
    /// file), `references` (the definition or file using a name → the definitions it resolves to)
    /// or `tests` (test file → subject file).
    pub edge: String,
    /// `out` when the edge leaves the asked node, `in` when it arrives.
    pub direction: Direction,
}

/// `graph_neighbours` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NeighboursResult {
    /// The neighbours: outgoing edges first, then incoming ones, each group by node; at most
    /// `limit`.
    pub neighbours: Vec<Neighbour>,
}

/// A node PageRank restarts from, with its weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Seed {
    /// The seed node (a file, or a definition in it).
    pub node: NodeRef,
    /// The seed's weight: finite and `>= 0` (else `InvalidArgs`). The weights are normalised to
    /// sum to 1, so only their ratios matter; a seed of weight 0 is ignored, and when every weight
    /// is 0 the result is empty.
    pub weight: f64,
}

/// `personalized_pagerank` arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PageRankArgs {
    /// The nodes the walk restarts from, with their weights; every node must resolve (else
    /// `NotFound` or `InvalidArgs`).
    pub seeds: Vec<Seed>,
    /// The most nodes to return; `0`: every node with a positive score.
    pub limit: usize,
    /// The damping factor (probability of following an edge rather than restarting at a seed), in
    /// the open interval (0, 1); `None`: 0.85.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping: Option<f64>,
    /// Edge kinds to walk (`contains`, `imports`, `references`, `tests`); the others get weight 0.
    /// Empty: all kinds. The walk follows edges both ways.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edge_kinds: Vec<String>,
}

impl PageRankArgs {
    /// PageRank personalised on `seeds`, at most `limit` nodes (`0`: all with a positive score),
    /// damping 0.85, every edge kind.
    pub fn new(seeds: Vec<Seed>, limit: usize) -> PageRankArgs {
        PageRankArgs {
            seeds,
            limit,
            damping: None,
            edge_kinds: Vec::new(),
        }
    }
}

/// A node with its personalised PageRank score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankedNode {
    /// The node.
    pub node: GraphNode,
    /// Its PageRank score: the walk's stationary probability of the node (computed
    /// approximately), always positive; higher is more central to the seeds.
    pub score: f64,
}

/// `personalized_pagerank` result: best first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PageRankResult {
    /// The nodes with a positive score, best first: at most `limit`, all of them
    /// when `limit` was 0.
    pub nodes: Vec<RankedNode>,
}

// ---- grep ----

/// `grep` arguments: a regular expression (Rust `regex` syntax) matched against each line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GrepArgs {
    /// The regular expression, in Rust `regex` syntax, matched against each line (without its
    /// terminator); a match anywhere in the line counts. An invalid pattern answers `InvalidArgs`.
    pub pattern: String,
    /// Only files whose path matches this glob ([`crate::text::Glob`]: `*` within a segment, `**`
    /// across, `?`, `[...]`, `{a,b}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_glob: Option<String>,
    /// Match letters without regard to case (default `false`).
    #[serde(default)]
    pub case_insensitive: bool,
    /// The most matches to return; [`GrepResult::truncated`] says when it cut the answer.
    pub limit: usize,
}

impl GrepArgs {
    /// Search for `pattern` (Rust `regex` syntax) in every file, case-sensitive, at most `limit`
    /// matches.
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

    /// Match without regard to case.
    pub fn case_insensitive(mut self) -> GrepArgs {
        self.case_insensitive = true;
        self
    }
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GrepMatch {
    /// Repository-relative path of the file, `/` separators.
    pub path: String,
    /// The line number, 1-based, in Python `str.splitlines()` lines.
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
    /// The matches, in path order (byte order) then line order; at most `limit`.
    pub matches: Vec<GrepMatch>,
    /// `true` when more lines matched than `limit`: the answer was cut.
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
    /// A result with these matches (path order, then line order) and whether `limit` cut them.
    pub fn new(matches: Vec<GrepMatch>, truncated: bool) -> GrepResult {
        GrepResult { matches, truncated }
    }
}
