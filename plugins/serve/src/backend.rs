//! [`ServiceBackend`]: the typed Rust side of the services table. A backend implements the
//! services it can answer; the others default to a clear "not available" error. Every backend is
//! a [`RawServices`] through a blanket implementation that decodes arguments and encodes
//! results, so the C table and the isolated-mode proxy need nothing backend-specific.

use crate::services::RawServices;
use serde::Serialize;
use serde::de::DeserializeOwned;
use swex_plugin::types::*;
use swex_plugin::{ServiceError, ServiceErrorKind, ServiceId};

/// What a snapshot can answer. Implementations must accept concurrent calls.
pub trait ServiceBackend: Send + Sync {
    /// A short name for messages (`filesystem`, `engine`).
    fn backend_name(&self) -> &str;

    /// Whether `path` is a file of the snapshot (repository-relative, `/` separators).
    fn contains_file(&self, path: &str) -> bool;

    /// `list_files`: the snapshot's files (or those under `args.under`, a directory matched by
    /// prefix), sorted by path in byte order. [`crate::files::list_files`] implements it over a
    /// list of entries. Default: `Unavailable`.
    fn list_files(&self, _args: ListFilesArgs) -> Result<ListFilesResult, ServiceError> {
        Err(self.unavailable(ServiceId::ListFiles))
    }
    /// `file_info`: one file's entry with `line_count` filled in; `NotFound` for a path that is
    /// not a file of the snapshot ([`crate::files::file_info`], [`crate::files::not_found`]).
    /// Default: `Unavailable`.
    fn file_info(&self, _args: FileInfoArgs) -> Result<FileInfoResult, ServiceError> {
        Err(self.unavailable(ServiceId::FileInfo))
    }
    /// `read_lines`: lines `start..=end` of a file, 1-based, `end` absent or -1 meaning to the
    /// end, clamped to the file ([`crate::files::read_lines`]); `NotFound` for an unknown path.
    /// Default: `Unavailable`.
    fn read_lines(&self, _args: ReadLinesArgs) -> Result<ReadLinesResult, ServiceError> {
        Err(self.unavailable(ServiceId::ReadLines))
    }
    /// `chunks`: the engine's chunks of a file, ordered by line and covering it. Default:
    /// `Unavailable` (only the engine backend has chunks).
    fn chunks(&self, _args: ChunksArgs) -> Result<ChunksResult, ServiceError> {
        Err(self.unavailable(ServiceId::Chunks))
    }
    /// `lexical_search`: BM25-ranked chunks for `args.query` or `args.terms`, best first, at most
    /// `args.limit`. Default: `Unavailable` (needs the engine's index).
    fn lexical_search(&self, _args: SearchArgs) -> Result<SearchResult, ServiceError> {
        Err(self.unavailable(ServiceId::LexicalSearch))
    }
    /// `dense_search`: chunks ranked by embedding similarity, in the mode `args.mode` asks for;
    /// the result says which mode ran. Default: `Unavailable` (needs the engine's index and the
    /// embedding model).
    fn dense_search(&self, _args: DenseSearchArgs) -> Result<SearchResult, ServiceError> {
        Err(self.unavailable(ServiceId::DenseSearch))
    }
    /// `definitions`: definitions whose bare or qualified name is `args.name`, at most
    /// `args.limit`. Default: `Unavailable` (needs the engine's index).
    fn definitions(&self, _args: DefinitionsArgs) -> Result<DefinitionsResult, ServiceError> {
        Err(self.unavailable(ServiceId::Definitions))
    }
    /// `graph_neighbours`: the code graph's edges at `args.node` (outgoing first, then incoming).
    /// Default: `Unavailable` (needs the engine's graph).
    fn graph_neighbours(&self, _args: NeighboursArgs) -> Result<NeighboursResult, ServiceError> {
        Err(self.unavailable(ServiceId::GraphNeighbours))
    }
    /// `personalized_pagerank`: graph nodes ranked by PageRank personalised on `args.seeds`, best
    /// first. Default: `Unavailable` (needs the engine's graph).
    fn personalized_pagerank(&self, _args: PageRankArgs) -> Result<PageRankResult, ServiceError> {
        Err(self.unavailable(ServiceId::PersonalizedPagerank))
    }
    /// `grep`: lines matching `args.pattern`, in path then line order, binary files skipped, each
    /// line cut to `GrepMatch::TEXT_MAX_BYTES`, `truncated` when `args.limit` cut it
    /// ([`crate::files::Grep`] does all of this over files fed in path order). Default:
    /// `Unavailable`.
    fn grep(&self, _args: GrepArgs) -> Result<GrepResult, ServiceError> {
        Err(self.unavailable(ServiceId::Grep))
    }
    /// Pure text work, the same for every backend: the issue parser's clues.
    fn issue_clues(&self, args: IssueCluesArgs) -> Result<IssueClues, ServiceError> {
        Ok(swex_issue::parse(&args.text))
    }
    /// `code_search`: the engine's ranked code search for a short query, one best span per file by
    /// default. Default: `Unavailable` (engine backend only).
    fn code_search(&self, _args: CodeSearchArgs) -> Result<CodeSearchResult, ServiceError> {
        Err(self.unavailable(ServiceId::CodeSearch))
    }

    /// `history_search`: files ranked by their commit messages. Default: `Unavailable` (engine
    /// backend over a checkout with git history only).
    fn history_search(
        &self,
        _args: HistorySearchArgs,
    ) -> Result<HistorySearchResult, ServiceError> {
        Err(self.unavailable(ServiceId::HistorySearch))
    }

    /// The error a backend gives for a service it does not have.
    fn unavailable(&self, service: ServiceId) -> ServiceError {
        ServiceError::unavailable(
            service,
            format!(
                "the {} backend does not provide {service} (it needs the engine's indexes)",
                self.backend_name()
            ),
        )
    }
}

fn typed<A, R>(
    service: ServiceId,
    args: &[u8],
    run: impl FnOnce(A) -> Result<R, ServiceError>,
) -> Result<Vec<u8>, ServiceError>
where
    A: DeserializeOwned,
    R: Serialize,
{
    let args: A = serde_json::from_slice(args).map_err(|e| {
        ServiceError::new(
            service,
            ServiceErrorKind::InvalidArgs,
            format!("arguments are not valid {service} arguments: {e}"),
        )
    })?;
    let result = run(args)?;
    serde_json::to_vec(&result).map_err(|e| {
        ServiceError::new(
            service,
            ServiceErrorKind::Failed,
            format!("encoding the result: {e}"),
        )
    })
}

impl<B: ServiceBackend> RawServices for B {
    fn call(&self, service: ServiceId, args: &[u8]) -> Result<Vec<u8>, ServiceError> {
        match service {
            ServiceId::ListFiles => typed(service, args, |a| self.list_files(a)),
            ServiceId::FileInfo => typed(service, args, |a| self.file_info(a)),
            ServiceId::ReadLines => typed(service, args, |a| self.read_lines(a)),
            ServiceId::Chunks => typed(service, args, |a| self.chunks(a)),
            ServiceId::LexicalSearch => typed(service, args, |a| self.lexical_search(a)),
            ServiceId::DenseSearch => typed(service, args, |a| self.dense_search(a)),
            ServiceId::Definitions => typed(service, args, |a| self.definitions(a)),
            ServiceId::GraphNeighbours => typed(service, args, |a| self.graph_neighbours(a)),
            ServiceId::PersonalizedPagerank => {
                typed(service, args, |a| self.personalized_pagerank(a))
            }
            ServiceId::Grep => typed(service, args, |a| self.grep(a)),
            ServiceId::IssueClues => typed(service, args, |a| self.issue_clues(a)),
            ServiceId::CodeSearch => typed(service, args, |a| self.code_search(a)),
            ServiceId::HistorySearch => typed(service, args, |a| self.history_search(a)),
            // A service newer than this backend knows.
            _ => Err(self.unavailable(service)),
        }
    }

    fn contains_file(&self, path: &str) -> bool {
        ServiceBackend::contains_file(self, path)
    }
}
