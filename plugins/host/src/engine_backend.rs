//! [`EngineBackend`]: services answered by the engine's index of a snapshot
//! (`swex_engine::index::SnapshotIndex`).
//!
//! It answers `list_files`, `file_info`, `read_lines`, `chunks`, `lexical_search` (the engine's
//! BM25 over chunks, the query built from free text by the engine's issue query builder),
//! `definitions`, `graph_neighbours` and `personalized_pagerank` (the engine's code graph, built
//! on first use), `dense_search` (the engine's dense search: the snapshot's full dense index when
//! it has one, else a rerank of lexical candidates) and `grep`. Without the embedding model,
//! `dense_search` answers `Unavailable` with the engine's message, which names `swex models fetch`.
//!
//! Lines: the engine counts the lines Python's `str.splitlines()` yields on the UTF-8 text with
//! invalid bytes dropped, which is the services contract, so every line number here is the
//! engine's own.
//!
//! Graph nodes are named by [`NodeRef`]: a file by path, a definition by path and qualified name
//! (`Class.method`; `.`, `::`, `#` and `\` interchangeable), or by bare name when that is
//! unambiguous in the file. Edge kinds: `contains`, `imports`, `references` (alias `calls`),
//! `tests`.

use std::sync::Arc;
use swex_engine::graph::{CodeGraph, EdgeKind, NodeId, NodeKind, PageRankOptions};
use swex_engine::history::HistoryError;
use swex_engine::index::{
    CandidateRegion, DenseMode as EngineDenseMode, DenseQuery, IndexError, SearchFilters,
    SnapshotIndex,
};
use swex_engine::search::{DenseUse, SearchOptions};
use swex_plugin::text::Glob;
use swex_plugin::types::*;
use swex_plugin::{ServiceError, ServiceErrorKind, ServiceId};
use swex_plugin_serve::{ServiceBackend, files};

pub struct EngineBackend {
    index: Arc<SnapshotIndex>,
    dense_auto: DenseUse,
}

impl EngineBackend {
    pub fn new(index: Arc<SnapshotIndex>) -> EngineBackend {
        EngineBackend {
            index,
            dense_auto: DenseUse::Auto,
        }
    }

    /// What `code_search`'s `dense: "auto"` (its default) means here. [`DenseUse::Auto`], the
    /// default, fuses dense scores when the embedding model is installed: right for a process
    /// that keeps the model loaded across many queries (the MCP server, `swex bench`). A process
    /// that answers once (`swex explore`) passes [`DenseUse::Off`]: loading the model for one
    /// query costs more than everything else it does (a one-line `swex explore` on swex's own
    /// checkout: 0.4–0.5 s and about 270 MB with the model loaded, 0.03–0.05 s without). An
    /// explicit `dense: "on"` still loads it.
    pub fn with_dense_auto(mut self, dense_auto: DenseUse) -> EngineBackend {
        self.dense_auto = dense_auto;
        self
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
        let entry = FileEntry::new(info.path.clone(), info.size).with_line_count(info.line_count);
        match info.language {
            Some(language) => entry.with_language(serde_name(&language)),
            None => entry,
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
    if let Some(under) = under {
        // A directory, not a pattern: `Glob::under` escapes what its name holds.
        let glob = Glob::under(under).map_err(|e| {
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
    SearchHit::new(h.path, h.start, h.end, h.score as f64).with_chunk(serde_name(&h.kind), h.name)
}

fn invalid(service: ServiceId, message: impl Into<String>) -> ServiceError {
    ServiceError::new(service, ServiceErrorKind::InvalidArgs, message)
}

/// The engine's edge kinds for the services' names; empty means all.
fn edge_kinds(names: &[String], service: ServiceId) -> Result<Vec<EdgeKind>, ServiceError> {
    names
        .iter()
        .map(|name| match name.as_str() {
            "contains" => Ok(EdgeKind::Contains),
            "imports" => Ok(EdgeKind::Imports),
            "references" | "calls" => Ok(EdgeKind::References),
            "tests" => Ok(EdgeKind::Tests),
            other => Err(invalid(
                service,
                format!(
                    "unknown edge kind `{other}` (known: contains, imports, references, calls, tests)"
                ),
            )),
        })
        .collect()
}

/// The graph node a [`NodeRef`] names: the file, else the definition of the file whose qualified
/// name matches (`.`, `::`, `#`, `\` interchangeable), else the only one with that bare name.
fn resolve_node(
    graph: &CodeGraph,
    node: &NodeRef,
    service: ServiceId,
) -> Result<NodeId, ServiceError> {
    let not_found = |what: String| ServiceError::new(service, ServiceErrorKind::NotFound, what);
    let file = graph
        .file_node(&node.path)
        .ok_or_else(|| not_found(format!("no file `{}` in the code graph", node.path)))?;
    let Some(name) = node.name.as_deref() else {
        return Ok(file);
    };
    let normalize = |s: &str| s.replace("::", ".").replace(['#', '\\'], ".");
    let wanted = normalize(name.trim());
    let in_file: Vec<NodeId> = graph
        .definitions_named(&wanted)
        .into_iter()
        .filter(|&id| graph.node(id).file == file)
        .collect();
    let exact: Vec<NodeId> = in_file
        .iter()
        .copied()
        .filter(|&id| normalize(&graph.node(id).qualified_name) == wanted)
        .collect();
    match (exact.as_slice(), in_file.as_slice()) {
        ([id, ..], _) => Ok(*id),
        ([], [id]) => Ok(*id),
        ([], []) => Err(not_found(format!(
            "no definition `{name}` in `{}`",
            node.path
        ))),
        ([], several) => Err(ServiceError::new(
            service,
            ServiceErrorKind::InvalidArgs,
            format!(
                "`{name}` names {} definitions in `{}` ({}); give the qualified name",
                several.len(),
                node.path,
                several
                    .iter()
                    .map(|&id| graph.node(id).qualified_name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

fn graph_node(graph: &CodeGraph, id: NodeId) -> GraphNode {
    let info = graph.node(id);
    let (name, kind) = match info.kind {
        NodeKind::File => (None, "file".to_owned()),
        NodeKind::Definition(kind) => (Some(info.qualified_name.clone()), serde_name(&kind)),
    };
    GraphNode {
        path: info.path.clone(),
        name,
        kind,
        start: info.start,
        end: info.end,
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
        let prefix = files::under_prefix(args.under.as_deref());
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
        let info = self
            .index
            .file(&args.path)
            .ok_or_else(|| Self::not_found(service, &args.path))?;
        let total = info.line_count;
        let start = args.start.unwrap_or(1).max(1);
        let end = match args.end {
            None | Some(-1) => total,
            Some(end) if end < 1 => 0,
            Some(end) => u32::try_from(end).unwrap_or(u32::MAX).min(total),
        };
        let lines = if start <= end {
            self.index
                .read_lines(&args.path, start, end)
                .map_err(|e| failed(service, e))?
        } else {
            Vec::new()
        };
        Ok(ReadLinesResult {
            start,
            lines,
            total_lines: total,
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
        let query = if args.terms.is_empty() {
            self.index.query_of_text(&args.query)
        } else {
            self.index.query_of_terms(&args.terms)
        };
        let hits = if args.whole_files {
            let files = self
                .index
                .file_lexical_search(&query, args.limit, &filters)
                .map_err(|e| failed(service, e))?;
            files
                .into_iter()
                .map(|f| SearchHit::new(f.path, 1, f.lines.max(1), f64::from(f.score)))
                .collect()
        } else {
            let chunks = self
                .index
                .lexical_search(&query, args.limit, &filters)
                .map_err(|e| failed(service, e))?;
            chunks.into_iter().map(search_hit).collect()
        };
        Ok(SearchResult::new(hits))
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
                other => {
                    return Err(ServiceError::new(
                        service,
                        ServiceErrorKind::InvalidArgs,
                        format!("dense mode {other:?} is not one this host knows"),
                    ));
                }
            },
            filters: under_filter(service, args.search.under.as_deref())?,
            candidates: args.candidates,
            regions,
        };
        let result = self.index.dense_search(&query).map_err(dense_error)?;
        let mut answer = SearchResult::new(result.hits.into_iter().map(search_hit).collect());
        answer.mode = Some(match result.mode {
            EngineDenseMode::Full => DenseMode::Full,
            _ => DenseMode::Rerank,
        });
        answer.scored = Some(result.scored);
        answer.embedded = Some(result.counts.embedded);
        Ok(answer)
    }

    fn definitions(&self, args: DefinitionsArgs) -> Result<DefinitionsResult, ServiceError> {
        let mut definitions: Vec<DefinitionEntry> = self
            .index
            .definitions(&args.name)
            .into_iter()
            .map(|d| {
                let kind = serde_name(&d.kind);
                DefinitionEntry::new(d.path, d.name, d.qualified_name, kind, d.start, d.end)
            })
            .collect();
        if let Some(limit) = args.limit {
            definitions.truncate(limit);
        }
        Ok(DefinitionsResult { definitions })
    }

    fn graph_neighbours(&self, args: NeighboursArgs) -> Result<NeighboursResult, ServiceError> {
        let service = ServiceId::GraphNeighbours;
        let graph = self.index.graph();
        let node = resolve_node(graph, &args.node, service)?;
        let kinds = edge_kinds(&args.edge_kinds, service)?;
        let mut neighbours = Vec::new();
        let directions: &[(swex_engine::graph::Direction, Direction)] = match args.direction {
            Direction::Out => &[(swex_engine::graph::Direction::Outgoing, Direction::Out)],
            Direction::In => &[(swex_engine::graph::Direction::Incoming, Direction::In)],
            Direction::Both => &[
                (swex_engine::graph::Direction::Outgoing, Direction::Out),
                (swex_engine::graph::Direction::Incoming, Direction::In),
            ],
            other => {
                return Err(ServiceError::new(
                    service,
                    ServiceErrorKind::InvalidArgs,
                    format!("direction {other:?} is not one this host knows"),
                ));
            }
        };
        for &(engine_direction, direction) in directions {
            for (id, kind) in graph.neighbours(node, &kinds, engine_direction) {
                neighbours.push(Neighbour {
                    node: graph_node(graph, id),
                    edge: serde_name(&kind),
                    direction,
                });
            }
        }
        if let Some(limit) = args.limit {
            neighbours.truncate(limit);
        }
        Ok(NeighboursResult { neighbours })
    }

    fn personalized_pagerank(&self, args: PageRankArgs) -> Result<PageRankResult, ServiceError> {
        let service = ServiceId::PersonalizedPagerank;
        let graph = self.index.graph();
        let mut seeds = Vec::with_capacity(args.seeds.len());
        for seed in &args.seeds {
            if !seed.weight.is_finite() || seed.weight < 0.0 {
                return Err(invalid(
                    service,
                    format!(
                        "seed {:?} has weight {}; weights must be finite and >= 0",
                        seed.node, seed.weight
                    ),
                ));
            }
            seeds.push((resolve_node(graph, &seed.node, service)?, seed.weight));
        }
        let mut options = PageRankOptions {
            limit: args.limit,
            ..PageRankOptions::default()
        };
        if let Some(damping) = args.damping {
            if !(damping > 0.0 && damping < 1.0) {
                return Err(invalid(
                    service,
                    format!("damping {damping} is outside (0, 1)"),
                ));
            }
            options.damping = damping;
        }
        let kinds = edge_kinds(&args.edge_kinds, service)?;
        if !kinds.is_empty() {
            let weights = &mut options.weights;
            for kind in EdgeKind::ALL {
                if !kinds.contains(&kind) {
                    match kind {
                        EdgeKind::Contains => weights.contains = 0.0,
                        EdgeKind::Imports => weights.imports = 0.0,
                        EdgeKind::References => weights.references = 0.0,
                        EdgeKind::Tests => weights.tests = 0.0,
                    }
                }
            }
        }
        let nodes = graph
            .personalized_pagerank(&seeds, &options)
            .into_iter()
            .map(|(id, score)| RankedNode {
                node: graph_node(graph, id),
                score,
            })
            .collect();
        Ok(PageRankResult { nodes })
    }

    fn code_search(&self, args: CodeSearchArgs) -> Result<CodeSearchResult, ServiceError> {
        let service = ServiceId::CodeSearch;
        let dense = match args.dense.as_deref() {
            None | Some("auto") => self.dense_auto,
            Some("off") => DenseUse::Off,
            Some("on") => DenseUse::On,
            Some(other) => {
                return Err(ServiceError::new(
                    service,
                    ServiceErrorKind::InvalidArgs,
                    format!("dense {other:?}: expected \"auto\", \"off\" or \"on\""),
                ));
            }
        };
        let options = SearchOptions {
            limit: args.limit,
            per_file: args.per_file.unwrap_or(1).max(1),
            filters: under_filter(service, args.under.as_deref())?,
            dense,
            ..SearchOptions::default()
        };
        let results = self
            .index
            .search(&args.query, &options)
            .map_err(|e| match &e {
                // `dense: on` without the model: the caller may retry with `auto`.
                IndexError::Dense(d) if d.is_absent() => {
                    ServiceError::new(service, ServiceErrorKind::Unavailable, e.to_string())
                }
                _ => failed(service, e),
            })?;
        Ok(CodeSearchResult {
            hits: results
                .hits
                .into_iter()
                .map(|h| {
                    SearchHit::new(h.path, h.start, h.end, f64::from(h.score))
                        .with_chunk(serde_name(&h.kind), h.name)
                })
                .collect(),
            query_kind: results.kind.as_str().to_string(),
            dense: results.dense,
        })
    }

    fn history_search(&self, args: HistorySearchArgs) -> Result<HistorySearchResult, ServiceError> {
        let service = ServiceId::HistorySearch;
        let history = self.index.history().map_err(|e| match e {
            HistoryError::Absent(_) => {
                ServiceError::new(service, ServiceErrorKind::Unavailable, e.to_string())
            }
            HistoryError::Git(_) => failed(service, e),
        })?;
        let found = history.search_with_coverage(&args.query, args.paths.as_deref());
        let mut hits = found.hits;
        hits.truncate(args.limit);
        Ok(HistorySearchResult {
            hits: hits
                .into_iter()
                .map(|h| HistoryHit {
                    path: h.path,
                    score: h.score,
                    similar_commits: h.similar_commits,
                    referenced: h.referenced,
                })
                .collect(),
            commit: history.commit().to_owned(),
            commits: history.commits(),
            similar_coverage: found.similar_coverage,
        })
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
        let matches = hits
            .into_iter()
            .map(|h| GrepMatch {
                text: GrepMatch::cut_text(&h.text).to_owned(),
                path: h.path,
                line: h.line,
            })
            .collect();
        Ok(GrepResult::new(matches, truncated))
    }

    fn unavailable(&self, service: ServiceId) -> ServiceError {
        ServiceError::unavailable(service, "the engine backend does not provide it")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swex_engine::index::{Engine, EngineConfig};
    use swex_plugin::Services;

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
        let read = backend.read_lines(ReadLinesArgs::new("notes.txt")).unwrap();
        assert_eq!(
            (read.lines, read.total_lines),
            (vec!["a".to_owned(), "b".to_owned()], 2)
        );

        let hits = backend
            .lexical_search(SearchArgs::new("parse_url crashes", 3))
            .unwrap();
        assert_eq!(hits.hits[0].path, "pkg/urls.py", "{hits:?}");

        let grep = backend
            .grep(
                GrepArgs::new("RETURN", 1)
                    .in_files("*.py")
                    .case_insensitive(),
            )
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
    }

    fn open(files: &[(&str, &str)]) -> (tempfile::TempDir, tempfile::TempDir, EngineBackend) {
        let repo = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let abs = repo.path().join(path);
            std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
            std::fs::write(abs, text).unwrap();
        }
        let engine = Engine::new(EngineConfig {
            cache_dir: cache.path().to_owned(),
            ..EngineConfig::default()
        });
        let backend = EngineBackend::new(engine.open(repo.path()).unwrap());
        (repo, cache, backend)
    }

    /// What `code_search`'s `dense: "auto"` means is the host's: a host that answers once
    /// (`with_dense_auto(Off)`) never loads the model for it, and an explicit `on` still does; a
    /// long-lived host fuses dense scores whenever the model is installed.
    #[test]
    fn code_search_auto_means_what_the_host_says() {
        let (_repo, _cache, long_lived) = open(&[(
            "pkg/urls.py",
            "def parse_url(url):\n    \"\"\"Split a URL into scheme, host and path.\"\"\"\n    return url.split('/')\n",
        )]);
        let one_shot =
            EngineBackend::new(long_lived.index().clone()).with_dense_auto(DenseUse::Off);
        let ask = |backend: &EngineBackend, dense: Option<&str>| {
            backend.code_search(CodeSearchArgs {
                query: "split a url into its parts".into(),
                limit: 3,
                dense: dense.map(str::to_owned),
                ..CodeSearchArgs::default()
            })
        };
        for dense in [None, Some("auto"), Some("off")] {
            let result = ask(&one_shot, dense).unwrap();
            assert!(!result.dense, "{dense:?}");
            assert_eq!(result.hits[0].path, "pkg/urls.py");
        }
        let root = swex_engine::dense::default_cache_root();
        match swex_engine::dense::Embedder::open(&root, &Default::default()) {
            Ok(_) => {
                assert!(ask(&long_lived, None).unwrap().dense);
                assert!(ask(&one_shot, Some("on")).unwrap().dense);
            }
            Err(e) if e.is_absent() => {
                // Without the model `auto` is lexical everywhere and `on` says what is missing.
                assert!(!ask(&long_lived, None).unwrap().dense);
                let error = ask(&one_shot, Some("on")).unwrap_err();
                assert_eq!(error.kind, ServiceErrorKind::Unavailable, "{error}");
                swex_testkit::available::<(), _>(swex_testkit::Needs::Model, Err(e));
            }
            Err(e) => panic!("the model is installed but does not load: {e}"),
        }
    }

    /// `code_search` through the C table: one span per file, the definition for a symbol, the
    /// query kind, and a clear error for a bad `dense` value.
    #[test]
    fn code_search_serves_ranked_spans_through_the_table() {
        let (_repo, _cache, backend) = open(&[
            (
                "pkg/client.py",
                "class HttpClient:\n    def send(self):\n        return 1\n\n\ndef helper():\n    return HttpClient()\n",
            ),
            (
                "pkg/use.py",
                "from pkg.client import HttpClient\n\nHttpClient().send()\n",
            ),
        ]);
        let table = swex_plugin_serve::ServicesTable::new(&backend);
        // SAFETY: the table outlives `services`.
        let services = unsafe { Services::from_raw(table.as_ptr()) }.expect("table");
        assert!(services.provides(ServiceId::CodeSearch));
        let result = services
            .code_search(&CodeSearchArgs {
                query: "HttpClient".into(),
                limit: 5,
                dense: Some("off".into()),
                ..CodeSearchArgs::default()
            })
            .unwrap();
        assert_eq!(result.query_kind, "symbol");
        assert!(!result.dense);
        let spans: Vec<String> = result
            .hits
            .iter()
            .map(|h| format!("{}:{}-{} {:?}", h.path, h.start, h.end, h.name))
            .collect();
        assert_eq!(
            spans[0], "pkg/client.py:1-3 Some(\"HttpClient\")",
            "{spans:?}"
        );
        assert_eq!(spans.len(), 2, "one span per file: {spans:?}");
        let error = services
            .code_search(&CodeSearchArgs {
                query: "x".into(),
                limit: 1,
                dense: Some("sometimes".into()),
                ..CodeSearchArgs::default()
            })
            .unwrap_err();
        assert_eq!(error.kind, ServiceErrorKind::InvalidArgs);
    }

    /// `history_search` through the C table: in a git work tree, files ranked by the messages of
    /// the commits that changed them (limit, chosen paths, the commit read); a folder without
    /// history answers `Unavailable` with the reason.
    #[test]
    fn history_search_ranks_files_by_their_commit_messages() {
        let (repo, _cache, _) = open(&[]);
        let root = repo.path();
        swex_testkit::git(root, &["init", "-q"]);
        for (path, message) in [
            ("pkg/filters.py", "Add the floatformat filter"),
            ("pkg/urls.py", "Add URL routing"),
            (
                "pkg/filters.py",
                "Fix floatformat rounding of negative numbers",
            ),
            ("pkg/other.py", "Round numbers in reports"),
        ] {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            let old = std::fs::read_to_string(&file).unwrap_or_default();
            std::fs::write(&file, format!("{old}x = 1\n")).unwrap();
            swex_testkit::git(root, &["add", "."]);
            swex_testkit::git(root, &["commit", "-q", "-m", message]);
        }
        let head = swex_testkit::git(root, &["rev-parse", "HEAD"]);
        let cache = tempfile::tempdir().unwrap();
        let engine = Engine::new(EngineConfig {
            cache_dir: cache.path().to_owned(),
            ..EngineConfig::default()
        });
        let backend = EngineBackend::new(engine.open(root).unwrap());
        let table = swex_plugin_serve::ServicesTable::new(&backend);
        // SAFETY: the table outlives `services`.
        let services = unsafe { Services::from_raw(table.as_ptr()) }.expect("table");
        let search = |query: &str, paths: Option<&[&str]>, limit| {
            services.history_search(&HistorySearchArgs {
                query: query.into(),
                paths: paths.map(|p| p.iter().map(|s| s.to_string()).collect()),
                limit,
            })
        };
        let result = search("floatformat rounds negative numbers wrongly", None, 10).unwrap();
        // The root commit is left out (it adds every file).
        assert_eq!((result.commit.as_str(), result.commits), (head.as_str(), 3));
        let paths: Vec<&str> = result.hits.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(paths, ["pkg/filters.py", "pkg/other.py"]);
        assert!(result.hits.iter().all(|h| h.score > 0.0));
        // The commit most like the query ("Fix floatformat rounding of negative numbers") gives
        // its one file a full share; the report one a smaller one.
        assert_eq!(result.hits[0].similar_commits, 1.0);
        assert!(
            (0.0..1.0).contains(&result.hits[1].similar_commits)
                && result.hits[1].similar_commits > 0.0
        );
        // A message that says the query's every word covers it more than the best of two
        // messages that say one word each.
        let said = search("Fix floatformat rounding of negative numbers", None, 1).unwrap();
        let split = search("floatformat routing", None, 1).unwrap();
        assert!(said.similar_coverage > 0.5, "{said:?}");
        assert!(0.0 < split.similar_coverage, "{split:?}");
        assert!(split.similar_coverage < said.similar_coverage, "{split:?}");
        assert_eq!(
            search("floatformat numbers", None, 1).unwrap().hits.len(),
            1
        );
        let chosen = search("numbers", Some(&["pkg/other.py", "pkg/urls.py"]), 10).unwrap();
        let paths: Vec<&str> = chosen.hits.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(paths, ["pkg/other.py"]);

        let (_plain, _cache, plain) = open(&[("a.py", "x = 1\n")]);
        let table = swex_plugin_serve::ServicesTable::new(&plain);
        // SAFETY: the table outlives `services`.
        let services = unsafe { Services::from_raw(table.as_ptr()) }.expect("table");
        let error = services
            .history_search(&HistorySearchArgs {
                query: "x".into(),
                paths: None,
                limit: 1,
            })
            .unwrap_err();
        assert_eq!(error.kind, ServiceErrorKind::Unavailable);
        assert!(error.message.contains("no repository history"), "{error:?}");
    }

    /// The engine answers `read_lines` exactly as the filesystem backend, which splits files
    /// itself like Python, whatever the separators and invalid bytes.
    #[test]
    fn read_lines_agree_with_the_filesystem_backend() {
        let (repo, _cache, backend) = open(&[
            ("ff.py", "import os\n\x0c\ndef f():\r\n    return 1\n"),
            ("cr.c", "int a;\rint b;\r"),
            ("odd.txt", "a\u{85}b\u{2028}c\u{2029}d\x0be\x1cf\x1dg\x1eh"),
            ("bad.txt", "x\u{fffd}\x0cy\n"),
            ("empty.txt", ""),
            ("newline.txt", "\n"),
        ]);
        // Invalid UTF-8 (dropped by both) where the fixture above had a placeholder.
        std::fs::write(repo.path().join("bad.txt"), b"x\xff\x0cy\n").unwrap();
        let fs = crate::FsBackend::new(repo.path());
        let ranges = [
            (None, None),
            (Some(2), Some(3)),
            (Some(1), Some(-1)),
            (Some(3), Some(1)),
            (Some(1), Some(0)),
            (Some(4), Some(99)),
        ];
        for path in [
            "ff.py",
            "cr.c",
            "odd.txt",
            "bad.txt",
            "empty.txt",
            "newline.txt",
        ] {
            for (start, end) in ranges {
                let mut args = ReadLinesArgs::new(path);
                args.start = start;
                args.end = end;
                let expected = fs.read_lines(args.clone()).unwrap();
                let got = backend.read_lines(args).unwrap();
                assert_eq!(got, expected, "{path} {start:?}..{end:?}");
            }
        }
    }

    /// Graph services through the C services table, as a plugin calls them.
    #[test]
    fn graph_services_through_the_services_table() {
        let (_repo, _cache, backend) = open(&[
            (
                "shop/cart.py",
                "from shop.prices import total\n\n\nclass Cart:\n    def checkout(self):\n        return total(self)\n",
            ),
            (
                "shop/prices.py",
                "def total(cart):\n    return 0\n\n\ndef unused():\n    return 1\n",
            ),
            ("shop/__init__.py", ""),
            (
                "tests/test_cart.py",
                "from shop.cart import Cart\n\n\ndef test_checkout():\n    Cart().checkout()\n",
            ),
        ]);
        let table = swex_plugin_serve::ServicesTable::new(&backend);
        // SAFETY: the table outlives `services`.
        let services = unsafe { Services::from_raw(table.as_ptr()) }.unwrap();

        let neighbours = |path: &str, name: Option<&str>, kinds: &[&str], direction: Direction| {
            let mut args = NeighboursArgs::new(NodeRef {
                path: path.into(),
                name: name.map(str::to_owned),
            });
            args.edge_kinds = kinds.iter().map(|k| k.to_string()).collect();
            args.direction = direction;
            services
                .graph_neighbours(&args)
                .unwrap()
                .into_iter()
                .map(|n| {
                    let label = n.node.name.clone().unwrap_or(n.node.path.clone());
                    format!(
                        "{:?} {} {label} {}-{}",
                        n.direction, n.edge, n.node.start, n.node.end
                    )
                })
                .collect::<Vec<_>>()
        };
        let check = |got: Vec<String>, expected: &[&str]| {
            assert_eq!(
                got,
                expected.iter().map(|s| s.to_string()).collect::<Vec<_>>()
            );
        };
        check(
            neighbours(
                "shop/cart.py",
                None,
                &["contains", "imports"],
                Direction::Out,
            ),
            &["Out contains Cart 4-6", "Out imports shop/prices.py 1-6"],
        );
        check(
            neighbours(
                "shop/cart.py",
                Some("Cart.checkout"),
                &["calls"],
                Direction::Both,
            ),
            &[
                "Out references total 1-2",
                "In references test_checkout 4-5",
            ],
        );
        check(
            neighbours("shop/cart.py", None, &["tests"], Direction::In),
            &["In tests tests/test_cart.py 1-5"],
        );
        // A bare name works when the file has one definition of it.
        check(
            neighbours(
                "shop/cart.py",
                Some("checkout"),
                &["contains"],
                Direction::In,
            ),
            &["In contains Cart 4-6"],
        );

        let error = |args: NeighboursArgs| services.graph_neighbours(&args).unwrap_err().kind;
        let node = |path: &str, name: Option<&str>| NodeRef {
            path: path.into(),
            name: name.map(str::to_owned),
        };
        let args = |node: NodeRef, kinds: &[&str]| {
            let mut args = NeighboursArgs::new(node);
            args.edge_kinds = kinds.iter().map(|k| k.to_string()).collect();
            args.direction = Direction::Both;
            args.limit = Some(1);
            args
        };
        assert_eq!(
            error(args(node("nope.py", None), &[])),
            ServiceErrorKind::NotFound
        );
        assert_eq!(
            error(args(node("shop/cart.py", Some("nope")), &[])),
            ServiceErrorKind::NotFound
        );
        assert_eq!(
            error(args(node("shop/cart.py", None), &["friends"])),
            ServiceErrorKind::InvalidArgs
        );
        assert_eq!(
            services
                .graph_neighbours(&args(node("shop/cart.py", None), &[]))
                .unwrap()
                .len(),
            1
        );

        // PageRank from the method: what it calls and its class come first, the unrelated
        // function last (or not at all).
        let ranked = services
            .personalized_pagerank(&PageRankArgs::new(
                vec![Seed {
                    node: node("shop/cart.py", Some("Cart.checkout")),
                    weight: 1.0,
                }],
                0,
            ))
            .unwrap();
        let names: Vec<String> = ranked
            .iter()
            .map(|r| r.node.name.clone().unwrap_or(r.node.path.clone()))
            .collect();
        assert_eq!(names[0], "Cart.checkout", "{names:?}");
        let position = |name: &str| names.iter().position(|n| n == name);
        assert!(
            position("total") < position("unused").or(Some(usize::MAX)),
            "{names:?}"
        );
        assert!(ranked.windows(2).all(|w| w[0].score >= w[1].score));
        // Only `contains` edges: the walk stays inside the class and its file.
        let mut args = PageRankArgs::new(
            vec![Seed {
                node: node("shop/cart.py", Some("Cart.checkout")),
                weight: 1.0,
            }],
            10,
        );
        args.damping = Some(0.5);
        args.edge_kinds = vec!["contains".into()];
        let contained = services.personalized_pagerank(&args).unwrap();
        let paths: Vec<&str> = contained.iter().map(|r| r.node.path.as_str()).collect();
        assert!(paths.iter().all(|p| *p == "shop/cart.py"), "{paths:?}");
        let bad = |damping: Option<f64>, weight: f64| {
            let mut args = PageRankArgs::new(
                vec![Seed {
                    node: node("shop/cart.py", None),
                    weight,
                }],
                1,
            );
            args.damping = damping;
            services.personalized_pagerank(&args).unwrap_err().kind
        };
        assert_eq!(bad(Some(1.5), 1.0), ServiceErrorKind::InvalidArgs);
        assert_eq!(bad(None, f64::NAN), ServiceErrorKind::InvalidArgs);
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
            swex_plugin_serve::RawServices::call(&backend, ServiceId::DenseSearch, args.as_bytes())
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
            .lexical_search(SearchArgs::new("parse_url", 3))
            .unwrap();
        assert_eq!(hits.hits[0].path, "a.py");
    }
}
