//! The safe Rust view of the services table the host passes to `explore`.
//!
//! [`Services`] borrows the table for the duration of one `explore` call; every method encodes
//! its arguments as JSON, calls the host through the table, decodes the result and frees the
//! host's buffer. A slot the host does not provide (null, or past the table's `struct_size`)
//! answers [`ServiceErrorKind::Unavailable`], so explorers can fall back the same way whether the
//! host is old or merely lacks an index.

use crate::abi::{SWEX_OK, SwexBuffer, SwexBytes, SwexServiceFn, SwexServices};
use crate::error::{ServiceError, ServiceErrorKind};
use crate::types::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::mem::{offset_of, size_of};

/// The services of one `explore` call. Cheap to copy; `Send + Sync` because the host must accept
/// calls from any thread while `explore` runs.
#[derive(Clone, Copy)]
pub struct Services<'a> {
    raw: &'a SwexServices,
}

// SAFETY: the ABI requires hosts to accept service calls from any thread during `explore`.
unsafe impl Send for Services<'_> {}
// SAFETY: as above.
unsafe impl Sync for Services<'_> {}

impl std::fmt::Debug for Services<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let provided: Vec<&str> = ServiceId::ALL
            .iter()
            .filter(|id| self.provides(**id))
            .map(|id| id.as_str())
            .collect();
        f.debug_struct("Services")
            .field("provided", &provided)
            .finish()
    }
}

impl<'a> Services<'a> {
    /// Wraps the host's table.
    ///
    /// # Safety
    /// `raw` must be null or point to a services table that stays valid for `'a`.
    pub unsafe fn from_raw(raw: *const SwexServices) -> Option<Services<'a>> {
        // SAFETY: upheld by the caller.
        unsafe { raw.as_ref() }.map(|raw| Services { raw })
    }

    /// The raw table, for passing on (e.g. to an explorer that wraps another one).
    pub fn as_raw(&self) -> *const SwexServices {
        self.raw
    }

    /// The service's slot, if the host's table has it and it is not null.
    fn slot(&self, id: ServiceId) -> Option<SwexServiceFn> {
        let offset = offset_of!(SwexServices, list_files) + id.index() * size_of::<usize>();
        if (self.raw.struct_size as usize) < offset + size_of::<usize>() {
            return None;
        }
        match id {
            ServiceId::ListFiles => self.raw.list_files,
            ServiceId::FileInfo => self.raw.file_info,
            ServiceId::ReadLines => self.raw.read_lines,
            ServiceId::Chunks => self.raw.chunks,
            ServiceId::LexicalSearch => self.raw.lexical_search,
            ServiceId::DenseSearch => self.raw.dense_search,
            ServiceId::Definitions => self.raw.definitions,
            ServiceId::GraphNeighbours => self.raw.graph_neighbours,
            ServiceId::PersonalizedPagerank => self.raw.personalized_pagerank,
            ServiceId::Grep => self.raw.grep,
            ServiceId::IssueClues => self.raw.issue_clues,
            ServiceId::CodeSearch => self.raw.code_search,
            ServiceId::HistorySearch => self.raw.history_search,
        }
    }

    /// Whether the host's table has a slot for this service (it may still answer `Unavailable`).
    pub fn provides(&self, id: ServiceId) -> bool {
        self.slot(id).is_some()
    }

    /// Calls a service with raw JSON arguments and returns its raw JSON result.
    pub fn call_raw(&self, id: ServiceId, args: &[u8]) -> Result<Vec<u8>, ServiceError> {
        let Some(function) = self.slot(id) else {
            return Err(ServiceError::unavailable(
                id,
                "the host does not provide this service",
            ));
        };
        let Some(free) = self.raw.free_buffer else {
            return Err(ServiceError::new(
                id,
                ServiceErrorKind::Failed,
                "the host's services table has no free_buffer",
            ));
        };
        let mut out = SwexBuffer::EMPTY;
        // SAFETY: the table is valid for 'a (from_raw's contract); `args` outlives the call.
        let status = unsafe { function(self.raw.context, SwexBytes::from_slice(args), &mut out) };
        // SAFETY: the host filled `out` (or left it empty); we copy it before freeing it.
        let bytes = unsafe { out.as_slice() }.to_vec();
        // SAFETY: `out` was allocated by the host and is released exactly once, by the host.
        unsafe { free(self.raw.context, out) };
        if status == SWEX_OK {
            Ok(bytes)
        } else {
            Err(ServiceError::new(
                id,
                ServiceErrorKind::from_status(status),
                String::from_utf8_lossy(&bytes).into_owned(),
            ))
        }
    }

    /// Calls a service with typed arguments and result.
    pub fn call<A: Serialize, R: DeserializeOwned>(
        &self,
        id: ServiceId,
        args: &A,
    ) -> Result<R, ServiceError> {
        let args = serde_json::to_vec(args).map_err(|e| {
            ServiceError::new(id, ServiceErrorKind::InvalidArgs, format!("encoding: {e}"))
        })?;
        let result = self.call_raw(id, &args)?;
        serde_json::from_slice(&result).map_err(|e| {
            ServiceError::new(
                id,
                ServiceErrorKind::Failed,
                format!("the host's answer is not a valid {id} result: {e}"),
            )
        })
    }

    /// Every file of the snapshot (or under a directory), sorted by path.
    pub fn list_files(&self, under: Option<&str>) -> Result<Vec<FileEntry>, ServiceError> {
        let args = ListFilesArgs {
            under: under.map(str::to_owned),
        };
        let result: ListFilesResult = self.call(ServiceId::ListFiles, &args)?;
        Ok(result.files)
    }

    /// One file's entry, with its line count.
    pub fn file_info(&self, path: &str) -> Result<FileEntry, ServiceError> {
        let args = FileInfoArgs {
            path: path.to_owned(),
        };
        let result: FileInfoResult = self.call(ServiceId::FileInfo, &args)?;
        Ok(result.file)
    }

    /// Lines `start..=end` of a file (`None`/-1 end = to the end); see [`ReadLinesArgs`].
    pub fn read_lines(
        &self,
        path: &str,
        start: Option<u32>,
        end: Option<i64>,
    ) -> Result<ReadLinesResult, ServiceError> {
        let mut args = ReadLinesArgs::new(path);
        args.start = start;
        args.end = end;
        self.call(ServiceId::ReadLines, &args)
    }

    /// All lines of a file.
    pub fn read_file_lines(&self, path: &str) -> Result<Vec<String>, ServiceError> {
        Ok(self.read_lines(path, None, None)?.lines)
    }

    /// The engine's chunks of the file at `path` (repository-relative, `/` separators), ordered by
    /// line, covering the file: definition-level for parsed languages (`function`, `class`, ...
    /// and the `gap`s between them), line windows otherwise. `NotFound` for a file the index does
    /// not hold; `Unavailable` from hosts without the engine (filesystem and memory backends).
    pub fn chunks(&self, path: &str) -> Result<Vec<ChunkEntry>, ServiceError> {
        let args = ChunksArgs {
            path: path.to_owned(),
        };
        let result: ChunksResult = self.call(ServiceId::Chunks, &args)?;
        Ok(result.chunks)
    }

    /// The chunks that best match `args.query` (or `args.terms` when given) by the engine's BM25,
    /// best first, at most `args.limit`. `Unavailable` from hosts without the engine.
    pub fn lexical_search(&self, args: &SearchArgs) -> Result<Vec<SearchHit>, ServiceError> {
        let result: SearchResult = self.call(ServiceId::LexicalSearch, args)?;
        Ok(result.hits)
    }

    /// Dense search with the host's defaults (mode `auto`); see [`Services::dense_search_with`].
    pub fn dense_search(&self, args: &SearchArgs) -> Result<Vec<SearchHit>, ServiceError> {
        let result: SearchResult = self.call(ServiceId::DenseSearch, args)?;
        Ok(result.hits)
    }

    /// Dense search with a mode, a rerank candidate count or candidate regions; the result says
    /// how the hits were found (`mode`, `scored`, `embedded`). A host without the embedding model
    /// answers [`ServiceErrorKind::Unavailable`](crate::ServiceErrorKind) with the fix.
    pub fn dense_search_with(&self, args: &DenseSearchArgs) -> Result<SearchResult, ServiceError> {
        self.call(ServiceId::DenseSearch, args)
    }

    /// The definitions whose bare (`send`) or qualified (`Request.send`) name is `name`, all of
    /// them; empty when there are none. `Unavailable` from hosts without the engine.
    pub fn definitions(&self, name: &str) -> Result<Vec<DefinitionEntry>, ServiceError> {
        let args = DefinitionsArgs::new(name);
        let result: DefinitionsResult = self.call(ServiceId::Definitions, &args)?;
        Ok(result.definitions)
    }

    /// The code graph's edges at `args.node` (outgoing, incoming or both; edge kinds `contains`,
    /// `imports`, `references`, `tests`). `NotFound` for an unknown node; `Unavailable` from hosts
    /// without the engine.
    pub fn graph_neighbours(&self, args: &NeighboursArgs) -> Result<Vec<Neighbour>, ServiceError> {
        let result: NeighboursResult = self.call(ServiceId::GraphNeighbours, args)?;
        Ok(result.neighbours)
    }

    /// Graph nodes ranked by PageRank personalised on `args.seeds`, best first (`args.limit` of
    /// them; 0: every node with a positive score). `Unavailable` from hosts without the engine.
    pub fn personalized_pagerank(
        &self,
        args: &PageRankArgs,
    ) -> Result<Vec<RankedNode>, ServiceError> {
        let result: PageRankResult = self.call(ServiceId::PersonalizedPagerank, args)?;
        Ok(result.nodes)
    }

    /// Lines matching `args.pattern` (Rust `regex` syntax), in path then line order, each cut to
    /// [`GrepMatch::TEXT_MAX_BYTES`]; binary files are skipped. [`GrepResult::truncated`] says
    /// when `args.limit` cut the answer; a bad pattern or glob is `InvalidArgs`. Every host
    /// answers it.
    pub fn grep(&self, args: &GrepArgs) -> Result<GrepResult, ServiceError> {
        self.call(ServiceId::Grep, args)
    }

    /// What the host's issue parser reads out of `text` (usually `request.issue`): frames,
    /// paths, identifiers, code spans and the weighted terms of its lexical search.
    pub fn issue_clues(&self, text: &str) -> Result<IssueClues, ServiceError> {
        self.call(ServiceId::IssueClues, &IssueCluesArgs::new(text))
    }

    /// Ranked code search (see [`CodeSearchArgs`]); `Unavailable` from hosts without the engine.
    pub fn code_search(&self, args: &CodeSearchArgs) -> Result<CodeSearchResult, ServiceError> {
        self.call(ServiceId::CodeSearch, args)
    }

    /// Files ranked by their commit messages (see [`HistorySearchArgs`]); `Unavailable` from
    /// hosts without the engine and for checkouts without git history.
    pub fn history_search(
        &self,
        args: &HistorySearchArgs,
    ) -> Result<HistorySearchResult, ServiceError> {
        self.call(ServiceId::HistorySearch, args)
    }
}
