//! [`EngineBackend`]: services answered by the engine's index of a snapshot
//! (`swex_engine::index::SnapshotIndex`).
//!
//! It answers `list_files`, `file_info`, `read_lines`, `chunks`, `lexical_search` (the engine's
//! BM25 over chunks, the query built from free text by the engine's issue query builder),
//! `dense_search` (the engine's dense search: the snapshot's full dense index when it has one,
//! else a rerank of lexical candidates), `definitions` and `grep`. The graph services answer "not
//! available" until the engine's index carries a code graph. Without the embedding model,
//! `dense_search` answers `Unavailable` with the engine's message, which names `swex models fetch`.
//!
//! `read_lines` keeps the services contract (Python `str.splitlines()` lines, invalid UTF-8 bytes
//! dropped) by reading the file itself: the engine's own `read_lines` splits on `\n` only, which
//! differs on files holding `\r`, `\x0b`, `\x0c`, `\x1c`–`\x1e`, `\x85`, U+2028 or U+2029.

use crate::backend::ServiceBackend;
use std::sync::Arc;
use swex_engine::index::glob::Glob;
use swex_engine::index::{
    CandidateRegion, DenseMode as EngineDenseMode, DenseQuery, IndexError, SearchFilters,
    SnapshotIndex,
};
use swex_plugin::text::{decode_utf8_ignore, split_lines_python};
use swex_plugin::types::*;
use swex_plugin::{ServiceError, ServiceErrorKind, ServiceId};

pub struct EngineBackend {
    index: Arc<SnapshotIndex>,
}

impl EngineBackend {
    pub fn new(index: Arc<SnapshotIndex>) -> EngineBackend {
        EngineBackend { index }
    }

    pub fn index(&self) -> &Arc<SnapshotIndex> {
        &self.index
    }

    fn not_found(service: ServiceId, path: &str) -> ServiceError {
        ServiceError::new(
            service,
            ServiceErrorKind::NotFound,
            format!("no indexed file `{path}` in the snapshot"),
        )
    }

    fn entry(&self, info: &swex_engine::index::FileInfo) -> FileEntry {
        FileEntry {
            path: info.path.clone(),
            size: info.size,
            language: info.language.map(|l| serde_name(&l)),
            line_count: Some(info.line_count),
        }
    }
}

/// The serde (lowercase / snake_case) name of an engine enum value.
fn serde_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => String::new(),
    }
}

fn failed(service: ServiceId, error: impl std::fmt::Display) -> ServiceError {
    ServiceError::new(service, ServiceErrorKind::Failed, error.to_string())
}

/// Search filters from the `under` argument of the search services.
fn under_filter(service: ServiceId, under: Option<&str>) -> Result<SearchFilters, ServiceError> {
    let mut filters = SearchFilters::default();
    if let Some(under) = under.map(|d| d.trim_end_matches('/')) {
        let glob = Glob::new(&format!("{under}/**")).map_err(|e| {
            ServiceError::new(service, ServiceErrorKind::InvalidArgs, e.to_string())
        })?;
        filters.path_glob = Some(glob);
    }
    Ok(filters)
}

/// A dense failure as a service error: what only means "not installed here" or "not built" is
/// `Unavailable` (callers may fall back), a region naming no file is `NotFound`.
fn dense_error(error: IndexError) -> ServiceError {
    let service = ServiceId::DenseSearch;
    let kind = match &error {
        IndexError::Dense(e) if e.is_absent() => ServiceErrorKind::Unavailable,
        IndexError::DenseNotBuilt { .. } => ServiceErrorKind::Unavailable,
        IndexError::UnknownFile(_) => ServiceErrorKind::NotFound,
        _ => ServiceErrorKind::Failed,
    };
    ServiceError::new(service, kind, error.to_string())
}

fn search_hit(h: swex_engine::index::ChunkHit) -> SearchHit {
    SearchHit {
        path: h.path,
        start: h.start,
        end: h.end,
        score: h.score as f64,
        kind: Some(serde_name(&h.kind)),
        name: h.name,
    }
}

impl ServiceBackend for EngineBackend {
    fn backend_name(&self) -> &str {
        "engine"
    }

    fn contains_file(&self, path: &str) -> bool {
        self.index.file(path).is_some()
    }

    fn list_files(&self, args: ListFilesArgs) -> Result<ListFilesResult, ServiceError> {
        let prefix = args
            .under
            .as_deref()
            .map(|d| d.trim_end_matches('/'))
            .filter(|d| !d.is_empty() && *d != ".")
            .map(|d| format!("{d}/"));
        let files = self
            .index
            .files()
            .iter()
            .filter(|f| prefix.as_ref().is_none_or(|p| f.path.starts_with(p)))
            .map(|f| self.entry(f))
            .collect();
        Ok(ListFilesResult { files })
    }

    fn file_info(&self, args: FileInfoArgs) -> Result<FileInfoResult, ServiceError> {
        let info = self
            .index
            .file(&args.path)
            .ok_or_else(|| Self::not_found(ServiceId::FileInfo, &args.path))?;
        Ok(FileInfoResult {
            file: self.entry(info),
        })
    }

    fn read_lines(&self, args: ReadLinesArgs) -> Result<ReadLinesResult, ServiceError> {
        let service = ServiceId::ReadLines;
        if self.index.file(&args.path).is_none() {
            return Err(Self::not_found(service, &args.path));
        }
        let bytes = std::fs::read(self.index.root().join(&args.path))
            .map_err(|e| failed(service, format!("reading {}: {e}", args.path)))?;
        let text = decode_utf8_ignore(&bytes);
        let lines = split_lines_python(&text);
        let total = lines.len();
        let start = args.start.unwrap_or(1).max(1);
        let end = match args.end {
            None | Some(-1) => total,
            Some(end) if end < 1 => 0,
            Some(end) => (end as usize).min(total),
        };
        let first = start as usize - 1;
        let selected = if first < end {
            lines[first..end].iter().map(|l| (*l).to_owned()).collect()
        } else {
            Vec::new()
        };
        Ok(ReadLinesResult {
            start,
            lines: selected,
            total_lines: total as u32,
        })
    }

    fn chunks(&self, args: ChunksArgs) -> Result<ChunksResult, ServiceError> {
        let chunks = self
            .index
            .chunks_of(&args.path)
            .ok_or_else(|| Self::not_found(ServiceId::Chunks, &args.path))?;
        Ok(ChunksResult {
            chunks: chunks
                .iter()
                .map(|c| ChunkEntry {
                    start: c.start,
                    end: c.end,
                    kind: serde_name(&c.kind),
                    name: c.name.clone(),
                })
                .collect(),
        })
    }

    fn lexical_search(&self, args: SearchArgs) -> Result<SearchResult, ServiceError> {
        let service = ServiceId::LexicalSearch;
        let filters = under_filter(service, args.under.as_deref())?;
        let hits = self
            .index
            .search_text(&args.query, args.limit, &filters)
            .map_err(|e| failed(service, e))?;
        Ok(SearchResult {
            hits: hits.into_iter().map(search_hit).collect(),
            ..SearchResult::default()
        })
    }

    fn dense_search(&self, args: DenseSearchArgs) -> Result<SearchResult, ServiceError> {
        let service = ServiceId::DenseSearch;
        let mut regions = Vec::with_capacity(args.rerank_regions.len());
        for region in &args.rerank_regions {
            let end = match region.end {
                -1 => None,
                end if end >= 1 && end >= region.start => Some(end.min(u32::MAX as i64) as u32),
                _ => {
                    return Err(ServiceError::new(
                        service,
                        ServiceErrorKind::InvalidArgs,
                        format!(
                            "rerank region {}:{}-{} is empty or reversed",
                            region.path, region.start, region.end
                        ),
                    ));
                }
            };
            regions.push(CandidateRegion {
                path: region.path.clone(),
                start: region.start.clamp(1, u32::MAX as i64) as u32,
                end,
            });
        }
        let query = DenseQuery {
            text: args.search.query,
            limit: args.search.limit,
            mode: match args.mode.unwrap_or_default() {
                DenseMode::Auto => EngineDenseMode::Auto,
                DenseMode::Full => EngineDenseMode::Full,
                DenseMode::Rerank => EngineDenseMode::Rerank,
            },
            filters: under_filter(service, args.search.under.as_deref())?,
            candidates: args.candidates,
            regions,
        };
        let result = self.index.dense_search(&query).map_err(dense_error)?;
        Ok(SearchResult {
            hits: result.hits.into_iter().map(search_hit).collect(),
            mode: Some(match result.mode {
                EngineDenseMode::Full => DenseMode::Full,
                _ => DenseMode::Rerank,
            }),
            scored: Some(result.scored),
            embedded: Some(result.counts.embedded),
        })
    }

    fn definitions(&self, args: DefinitionsArgs) -> Result<DefinitionsResult, ServiceError> {
        let mut definitions: Vec<DefinitionEntry> = self
            .index
            .definitions(&args.name)
            .into_iter()
            .map(|d| DefinitionEntry {
                path: d.path,
                name: d.name,
                qualified_name: d.qualified_name,
                kind: serde_name(&d.kind),
                start: d.start,
                end: d.end,
            })
            .collect();
        if let Some(limit) = args.limit {
            definitions.truncate(limit);
        }
        Ok(DefinitionsResult { definitions })
    }

    fn grep(&self, args: GrepArgs) -> Result<GrepResult, ServiceError> {
        let pattern = if args.case_insensitive {
            format!("(?i){}", args.pattern)
        } else {
            args.pattern.clone()
        };
        // One more than asked tells whether the limit cut the answer.
        let mut hits = self
            .index
            .grep(
                &pattern,
                args.path_glob.as_deref(),
                args.limit.saturating_add(1),
            )
            .map_err(|e| {
                ServiceError::new(
                    ServiceId::Grep,
                    ServiceErrorKind::InvalidArgs,
                    e.to_string(),
                )
            })?;
        let truncated = hits.len() > args.limit;
        hits.truncate(args.limit);
        Ok(GrepResult {
            matches: hits
                .into_iter()
                .map(|h| GrepMatch {
                    path: h.path,
                    line: h.line,
                    text: h.text,
                })
                .collect(),
            truncated,
        })
    }

    fn unavailable(&self, service: ServiceId) -> ServiceError {
        let why = match service {
            ServiceId::GraphNeighbours | ServiceId::PersonalizedPagerank => {
                "the engine's index has no code graph yet"
            }
            _ => "the engine backend does not provide it",
        };
        ServiceError::unavailable(service, why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swex_engine::index::{Engine, EngineConfig};

    #[test]
    fn engine_services_answer_from_the_index() {
        let repo = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join("pkg")).unwrap();
        std::fs::write(
            repo.path().join("pkg/urls.py"),
            "import re\n\n\ndef parse_url(url):\n    return re.split('/', url)\n",
        )
        .unwrap();
        std::fs::write(
            repo.path().join("pkg/db.py"),
            "def connect():\n    return None\n",
        )
        .unwrap();
        std::fs::write(repo.path().join("notes.txt"), "a\x0cb\n").unwrap();
        let config = EngineConfig {
            cache_dir: cache.path().to_owned(),
            ..EngineConfig::default()
        };
        let engine = Engine::new(config);
        let backend = EngineBackend::new(engine.open(repo.path()).unwrap());

        let files = backend
            .list_files(ListFilesArgs {
                under: Some("pkg".into()),
            })
            .unwrap();
        let paths: Vec<&str> = files.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["pkg/db.py", "pkg/urls.py"]);
        assert_eq!(files.files[1].language.as_deref(), Some("python"));

        // Python line splitting: the form feed breaks a line.
        let read = backend
            .read_lines(ReadLinesArgs {
                path: "notes.txt".into(),
                start: None,
                end: None,
            })
            .unwrap();
        assert_eq!(
            (read.lines, read.total_lines),
            (vec!["a".to_owned(), "b".to_owned()], 2)
        );

        let hits = backend
            .lexical_search(SearchArgs {
                query: "parse_url crashes".into(),
                limit: 3,
                under: None,
            })
            .unwrap();
        assert_eq!(hits.hits[0].path, "pkg/urls.py", "{hits:?}");

        let grep = backend
            .grep(GrepArgs {
                pattern: "RETURN".into(),
                path_glob: Some("*.py".into()),
                case_insensitive: true,
                limit: 1,
            })
            .unwrap();
        assert_eq!((grep.matches.len(), grep.truncated), (1, true));

        let chunks = backend
            .chunks(ChunksArgs {
                path: "pkg/urls.py".into(),
            })
            .unwrap();
        assert!(!chunks.chunks.is_empty());
        assert_eq!(
            backend
                .file_info(FileInfoArgs {
                    path: "nope.py".into()
                })
                .unwrap_err()
                .kind,
            ServiceErrorKind::NotFound
        );
        let graph = backend
            .graph_neighbours(NeighboursArgs {
                node: NodeRef {
                    path: "pkg/urls.py".into(),
                    name: None,
                },
                edge_kinds: Vec::new(),
                direction: Direction::Out,
                limit: None,
            })
            .unwrap_err();
        assert_eq!(graph.kind, ServiceErrorKind::Unavailable);
    }

    #[test]
    fn dense_search_without_the_model_is_unavailable_with_the_fix() {
        let repo = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let no_models = tempfile::tempdir().unwrap();
        std::fs::write(
            repo.path().join("a.py"),
            "def parse_url(url):\n    return url\n",
        )
        .unwrap();
        let config = EngineConfig {
            cache_dir: cache.path().to_owned(),
            dense: swex_engine::index::DenseConfig {
                models_root: Some(no_models.path().to_owned()),
                ..Default::default()
            },
            ..EngineConfig::default()
        };
        let backend = EngineBackend::new(Engine::new(config).open(repo.path()).unwrap());
        let call = |args: &str| {
            crate::services::RawServices::call(&backend, ServiceId::DenseSearch, args.as_bytes())
        };
        // Plain search arguments are valid dense arguments; every mode gives the same answer.
        for args in [
            r#"{"query": "parse_url", "limit": 3}"#,
            r#"{"query": "parse_url", "limit": 3, "mode": "full"}"#,
            r#"{"query": "parse_url", "limit": 3, "mode": "rerank", "candidates": 10}"#,
        ] {
            let err = call(args).unwrap_err();
            assert_eq!(err.kind, ServiceErrorKind::Unavailable, "{args}: {err}");
            assert!(err.message.contains("swex models fetch"), "{err}");
        }
        let err = call(r#"{"query": "x", "limit": 3, "mode": "fastest"}"#).unwrap_err();
        assert_eq!(err.kind, ServiceErrorKind::InvalidArgs, "{err}");
        let err = call(
            r#"{"query": "x", "limit": 3, "rerank_regions": [{"path": "a.py", "start": 5, "end": 2}]}"#,
        )
        .unwrap_err();
        assert_eq!(err.kind, ServiceErrorKind::InvalidArgs, "{err}");
        // Nothing else is affected.
        let hits = backend
            .lexical_search(SearchArgs {
                query: "parse_url".into(),
                limit: 3,
                under: None,
            })
            .unwrap();
        assert_eq!(hits.hits[0].path, "a.py");
    }
}
