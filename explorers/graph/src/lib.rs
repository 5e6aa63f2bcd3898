//! The `graph` explorer: what the issue names, spread over the code graph.
//!
//! Pipeline (all through the services, so it runs on any host that serves the engine's index):
//! 1. **Seeds** from the issue ([`swex_issue::mentions::parse`]), each a graph node with a weight:
//!    - traceback frames (`File "x.py", line N, in f`, `at f (x.js:1:2)`, `x.rs:12:5`): the
//!      innermost definition named `f` around line N of the snapshot file the path resolves to
//!      (else the file), weighted up towards the end of the trace, where the error is;
//!    - file paths mentioned: the file;
//!    - code identifiers (`snake_case`, `CamelCase`, `a.b.c`, backticked), most mentioned first:
//!      their definitions (`definitions` service), when a name has at most
//!      `max_definitions_per_name` of them (weights shared between them);
//!    - the top `lexical_hits` chunks of the engine's BM25 for the issue text: their definition
//!      (or file), weighted by score relative to the best hit.
//! 2. **Personalised PageRank** from the seeds over the code graph (contains, imports,
//!    references, tests edges; `personalized_pagerank` service), `candidates` nodes kept.
//! 3. **Regions**: nodes by score (test files scaled by `test_penalty`): a definition gives its
//!    span, or, when longer than `max_region_lines`, the best lexical hit inside it (else its
//!    first `max_region_lines` lines); a file gives the whole file when it has at most
//!    `small_file_lines` lines, else its best lexical hit, else nothing. A region overlapping one
//!    already chosen is skipped, and each file gives at most `per_file` regions (diversity).
//!    If the graph yields fewer than `top_k` regions, lexical hits fill the rest. The choice is
//!    rankkit's [`swex_rankkit::select`] with [`Overlap::Skip`] and [`PerFile::AtMost`].
//!
//! It needs the engine's index (`swex explore --index`, `swex bench --index`); on a host without
//! the graph or lexical services it fails with a message saying so.

use serde::Deserialize;
use std::collections::HashMap;
use std::ffi::CStr;
use swex_plugin::text::hints::{BareName, normalize_path_hint, resolve_path_hint};
use swex_plugin::types::{
    FileEntry, NodeRef, PageRankArgs, RankedNode, SearchArgs, SearchHit, Seed,
};
use swex_plugin::{
    Explorer, ExplorerError, Request, Response, ServiceError, ServiceErrorKind, Services,
    parse_config,
};
use swex_rankkit::{Overlap, PerFile, Ranked, Selection};

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GraphConfig {
    /// Lexical hits used as seeds.
    pub lexical_hits: usize,
    /// Identifiers of the issue looked up as definitions.
    pub identifiers: usize,
    /// A name with more definitions than this is too ambiguous to seed.
    pub max_definitions_per_name: usize,
    /// PageRank damping (probability of following an edge rather than returning to the seeds).
    pub damping: f64,
    /// Ranked nodes read from PageRank.
    pub candidates: usize,
    /// At most this many regions from one file.
    pub per_file: usize,
    /// Longer definitions are cut (see the module docs).
    pub max_region_lines: u32,
    /// Files up to this many lines may be returned whole.
    pub small_file_lines: u32,
    /// Score factor of test files.
    pub test_penalty: f64,
}

impl Default for GraphConfig {
    fn default() -> Self {
        GraphConfig {
            lexical_hits: 20,
            identifiers: 25,
            max_definitions_per_name: 5,
            damping: 0.85,
            candidates: 200,
            per_file: 2,
            max_region_lines: 150,
            small_file_lines: 80,
            test_penalty: 0.5,
        }
    }
}

pub struct GraphExplorer {
    config: GraphConfig,
}

/// Seeds by node (`(path, qualified name)`, `None` for the file), with their total weight.
#[derive(Default)]
struct Seeds {
    weights: HashMap<(String, Option<String>), f64>,
    order: Vec<(String, Option<String>)>,
}

impl Seeds {
    fn add(&mut self, path: &str, name: Option<&str>, weight: f64) {
        let key = (path.to_owned(), name.map(str::to_owned));
        match self.weights.get_mut(&key) {
            Some(total) => *total += weight,
            None => {
                self.weights.insert(key.clone(), weight);
                self.order.push(key);
            }
        }
    }

    fn to_args(&self, files_only: bool) -> Vec<Seed> {
        let mut merged = Seeds::default();
        for key in &self.order {
            let name = if files_only { None } else { key.1.as_deref() };
            merged.add(&key.0, name, self.weights[key]);
        }
        merged
            .order
            .iter()
            .map(|key| Seed {
                node: NodeRef {
                    path: key.0.clone(),
                    name: key.1.clone(),
                },
                weight: merged.weights[key],
            })
            .collect()
    }
}

/// The snapshot file a path as written in an issue names: the longest suffix of its components
/// that some file path ends with, then the shortest such path. A bare file name must be unique
/// (`swex_text::hints::resolve_path_hint` with `BareName::Unique`: a guess among several
/// `utils.py` would seed the wrong part of the graph).
pub fn resolve_path<'f>(hint: &str, files: &'f [FileEntry]) -> Option<&'f str> {
    resolve_path_hint(
        &normalize_path_hint(hint),
        files.iter().map(|f| f.path.as_str()),
        BareName::Unique,
    )
    .first()
    .copied()
}

/// Test files rank lower: the issue is usually about the code they test (the one rule of
/// `swex_plugin::text::paths`).
pub fn is_test_path(path: &str) -> bool {
    swex_plugin::text::paths::path_role(path).test
}

fn needs_index(error: ServiceError) -> ExplorerError {
    if error.is_unavailable() {
        ExplorerError::failed(format!(
            "graph needs the engine's index and code graph ({error}); serve it from the index: `swex explore` without `--no-index`, or `swex bench --index`"
        ))
    } else {
        error.into()
    }
}

impl GraphExplorer {
    /// Step 1: seeds from the issue. Returns the seeds, the lexical hits (for region fallbacks)
    /// and counts for the notes.
    fn seeds(
        &self,
        request: &Request,
        services: &Services<'_>,
        files: &[FileEntry],
    ) -> Result<(Seeds, Vec<SearchHit>, String), ExplorerError> {
        let config = &self.config;
        let names = swex_issue::mentions::parse(&request.issue);
        let mut seeds = Seeds::default();
        let (mut frames, mut paths, mut definitions) = (0, 0, 0);

        let frame_count = names.frames.len().max(1) as f64;
        for (position, frame) in names.frames.iter().enumerate() {
            let Some(path) = resolve_path(&frame.path, files) else {
                continue;
            };
            // Later frames are nearer the error.
            let weight = 1.0 + position as f64 / frame_count;
            let line = frame.line.unwrap_or(0);
            let around_line = frame.function.as_deref().and_then(|function| {
                services
                    .definitions(function)
                    .ok()?
                    .into_iter()
                    .filter(|d| d.path == path && d.start <= line && line <= d.end)
                    .min_by_key(|d| d.end - d.start)
            });
            match around_line {
                Some(definition) => seeds.add(path, Some(&definition.qualified_name), weight),
                None => seeds.add(path, None, weight),
            }
            frames += 1;
        }
        for hint in &names.paths {
            if let Some(path) = resolve_path(hint, files) {
                seeds.add(path, None, 1.0);
                paths += 1;
            }
        }
        for (rank, identifier) in names
            .identifiers
            .iter()
            .take(config.identifiers)
            .enumerate()
        {
            let found = lookup_definitions(services, identifier).map_err(needs_index)?;
            if found.is_empty() || found.len() > config.max_definitions_per_name {
                continue;
            }
            let weight = 1.0 / (1.0 + 0.1 * rank as f64) / found.len() as f64;
            for definition in &found {
                seeds.add(&definition.path, Some(&definition.qualified_name), weight);
            }
            definitions += found.len();
        }
        let hits = services
            .lexical_search(&SearchArgs::new(&request.issue, config.lexical_hits))
            .map_err(needs_index)?;
        let best = hits.first().map_or(1.0, |h| h.score.max(f64::MIN_POSITIVE));
        for hit in &hits {
            let name = match hit.kind.as_deref() {
                Some("gap" | "window") | None => None,
                Some(_) => hit.name.as_deref(),
            };
            seeds.add(&hit.path, name, hit.score / best);
        }
        let summary = format!(
            "seeds: {frames} traceback frames, {paths} paths, {definitions} definitions, {} lexical hits",
            hits.len()
        );
        Ok((seeds, hits, summary))
    }

    /// How step 3 picks regions: each candidate whole (a definition inside a chosen one adds no
    /// line, and a merged region would outgrow the node PageRank scored), at most `per_file` of a
    /// file even when places are left (diversity; the lexical fallbacks at the end of the ranking
    /// fill them), within the request's top-k and line budget.
    fn selection(&self, request: &Request) -> Selection {
        Selection {
            top_k: request.top_k,
            per_file: PerFile::AtMost(self.config.per_file),
            line_budget: request.line_budget,
            overlap: Overlap::Skip,
        }
    }

    /// Step 3: ranked nodes to candidate regions, best first.
    fn candidates(&self, ranked: &[RankedNode], hits: &[SearchHit]) -> Vec<Ranked> {
        let config = &self.config;
        let best_hit_inside = |path: &str, start: u32, end: u32| {
            hits.iter()
                .find(|h| h.path == path && start <= h.start && h.end <= end)
                .map(|h| (h.start, h.end))
        };
        let mut candidates: Vec<Ranked> = Vec::new();
        for ranked_node in ranked {
            let node = &ranked_node.node;
            let mut score = ranked_node.score;
            if is_test_path(&node.path) {
                score *= config.test_penalty;
            }
            let length = node.end.saturating_sub(node.start) + 1;
            let span = if node.kind == "file" {
                if node.end <= config.small_file_lines {
                    Some((1, node.end.max(1)))
                } else {
                    best_hit_inside(&node.path, 1, node.end)
                }
            } else if length <= config.max_region_lines {
                Some((node.start, node.end))
            } else {
                Some(
                    best_hit_inside(&node.path, node.start, node.end)
                        .unwrap_or((node.start, node.start + config.max_region_lines - 1)),
                )
            };
            let Some((start, end)) = span else { continue };
            let label = match (&node.name, (start, end) == (1, node.end)) {
                (Some(name), _) => name.as_str(),
                (None, true) => "whole file",
                (None, false) => "its best lexical hit",
            };
            candidates.push(Ranked {
                path: node.path.clone(),
                start: i64::from(start),
                end: i64::from(end),
                score,
                why: format!(
                    "graph: {} {label} (PageRank {:.4})",
                    node.kind, ranked_node.score
                ),
            });
        }
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score));
        candidates
    }
}

/// Definitions a name may denote: the name as written, else shorter dotted suffixes (`a.b.C.m`
/// → `b.C.m` → `C.m` → `m`, the bare name only when it is at least 4 characters).
fn lookup_definitions(
    services: &Services<'_>,
    name: &str,
) -> Result<Vec<swex_plugin::types::DefinitionEntry>, ServiceError> {
    let normalized = name.replace("::", ".");
    let parts: Vec<&str> = normalized.split('.').collect();
    for skip in 0..parts.len() {
        let candidate = parts[skip..].join(".");
        if skip + 1 == parts.len() && skip > 0 && candidate.len() < 4 {
            break;
        }
        let found = services.definitions(&candidate)?;
        if !found.is_empty() {
            return Ok(found);
        }
    }
    Ok(Vec::new())
}

impl Explorer for GraphExplorer {
    const NAME: &'static CStr = c"graph";
    const DESCRIPTION: &'static CStr = c"issue symbols, traceback frames, paths and BM25 hits ranked by personalised PageRank over the code graph (needs the engine's index)";

    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError> {
        let config: GraphConfig = parse_config(config)?;
        if !(config.damping > 0.0 && config.damping < 1.0) {
            return Err(ExplorerError::InvalidConfig(format!(
                "damping must be in (0, 1), got {}",
                config.damping
            )));
        }
        if config.per_file == 0 || config.max_region_lines == 0 || config.candidates == 0 {
            return Err(ExplorerError::InvalidConfig(
                "per_file, max_region_lines and candidates must be positive".to_owned(),
            ));
        }
        Ok(GraphExplorer { config })
    }

    fn explore(
        &self,
        request: &Request,
        services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        let files = services.list_files(None).map_err(needs_index)?;
        let (seeds, hits, summary) = self.seeds(request, services, &files)?;
        let mut notes = vec![summary];
        let mut ranked = Vec::new();
        if !seeds.order.is_empty() {
            let mut args = PageRankArgs::new(seeds.to_args(false), self.config.candidates);
            args.damping = Some(self.config.damping);
            ranked = match services.personalized_pagerank(&args) {
                Ok(ranked) => ranked,
                // A name the graph resolves differently (ambiguous, renamed): seed files instead.
                Err(e)
                    if matches!(
                        e.kind,
                        ServiceErrorKind::NotFound | ServiceErrorKind::InvalidArgs
                    ) =>
                {
                    notes.push(format!("seeding by definition failed ({e}); seeded files"));
                    args.seeds = seeds.to_args(true);
                    services.personalized_pagerank(&args).map_err(needs_index)?
                }
                Err(e) => return Err(needs_index(e)),
            };
        }
        let mut candidates = self.candidates(&ranked, &hits);
        // Lexical hits after every graph candidate: they only fill what the graph left empty.
        candidates.extend(hits.iter().map(|h| Ranked {
            path: h.path.clone(),
            start: i64::from(h.start),
            end: i64::from(h.end),
            score: 0.0,
            why: format!("lexical fallback: {}", h.name.as_deref().unwrap_or("chunk")),
        }));
        let regions =
            swex_rankkit::select(&candidates, &self.selection(request), &mut |_, _, _| false);
        let mut response = Response::new(regions);
        response.notes = notes;
        Ok(response)
    }
}

swex_plugin::export_vtable!(GraphExplorer);

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str) -> FileEntry {
        FileEntry::new(path, 1).with_line_count(10)
    }

    #[test]
    fn paths_resolve_by_longest_suffix() {
        let files = [
            file("django/db/models/query.py"),
            file("django/db/models/sql/query.py"),
            file("tests/queries/models.py"),
            file("setup.py"),
        ];
        let check = |hint: &str, expected: Option<&str>| {
            assert_eq!(resolve_path(hint, &files), expected, "{hint}");
        };
        check(
            "/usr/lib/python3/site-packages/django/db/models/query.py",
            Some("django/db/models/query.py"),
        );
        check("sql/query.py", Some("django/db/models/sql/query.py"));
        check("query.py", None); // two files of that name
        check("./setup.py", Some("setup.py"));
        check(
            "C:\\proj\\tests\\queries\\models.py",
            Some("tests/queries/models.py"),
        );
        check("nothing/here.py", None);
    }

    #[test]
    fn test_paths() {
        for (path, expected) in [
            ("tests/test_query.py", true),
            ("django/tests/x.py", true),
            ("pkg/test_x.py", true),
            ("pkg/x_test.py", true),
            ("app/tests.py", true),
            ("pkg/testing.py", false),
            ("django/db/models/query.py", false),
        ] {
            assert_eq!(is_test_path(path), expected, "{path}");
        }
    }

    #[test]
    fn bad_config_is_refused() {
        for config in [
            serde_json::json!({"damping": 1.0}),
            serde_json::json!({"per_file": 0}),
            serde_json::json!({"nope": 1}),
        ] {
            assert!(GraphExplorer::create(&config).is_err(), "{config}");
        }
        assert!(GraphExplorer::create(&serde_json::Value::Null).is_ok());
    }
}
