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

    fn list_files(&self, _args: ListFilesArgs) -> Result<ListFilesResult, ServiceError> {
        Err(self.unavailable(ServiceId::ListFiles))
    }
    fn file_info(&self, _args: FileInfoArgs) -> Result<FileInfoResult, ServiceError> {
        Err(self.unavailable(ServiceId::FileInfo))
    }
    fn read_lines(&self, _args: ReadLinesArgs) -> Result<ReadLinesResult, ServiceError> {
        Err(self.unavailable(ServiceId::ReadLines))
    }
    fn chunks(&self, _args: ChunksArgs) -> Result<ChunksResult, ServiceError> {
        Err(self.unavailable(ServiceId::Chunks))
    }
    fn lexical_search(&self, _args: SearchArgs) -> Result<SearchResult, ServiceError> {
        Err(self.unavailable(ServiceId::LexicalSearch))
    }
    fn dense_search(&self, _args: DenseSearchArgs) -> Result<SearchResult, ServiceError> {
        Err(self.unavailable(ServiceId::DenseSearch))
    }
    fn definitions(&self, _args: DefinitionsArgs) -> Result<DefinitionsResult, ServiceError> {
        Err(self.unavailable(ServiceId::Definitions))
    }
    fn graph_neighbours(&self, _args: NeighboursArgs) -> Result<NeighboursResult, ServiceError> {
        Err(self.unavailable(ServiceId::GraphNeighbours))
    }
    fn personalized_pagerank(&self, _args: PageRankArgs) -> Result<PageRankResult, ServiceError> {
        Err(self.unavailable(ServiceId::PersonalizedPagerank))
    }
    fn grep(&self, _args: GrepArgs) -> Result<GrepResult, ServiceError> {
        Err(self.unavailable(ServiceId::Grep))
    }
    /// Pure text work, the same for every backend: the issue parser's clues.
    fn issue_clues(&self, args: IssueCluesArgs) -> Result<IssueClues, ServiceError> {
        Ok(swex_issue::parse(&args.text))
    }
    fn code_search(&self, _args: CodeSearchArgs) -> Result<CodeSearchResult, ServiceError> {
        Err(self.unavailable(ServiceId::CodeSearch))
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
            // A service newer than this backend knows.
            _ => Err(self.unavailable(service)),
        }
    }

    fn contains_file(&self, path: &str) -> bool {
        ServiceBackend::contains_file(self, path)
    }
}
