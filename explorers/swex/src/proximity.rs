//! Graph proximity: how near each candidate file lies, in the engine's code graph, to what the
//! issue names and to the sources the linear ranking puts first — two features of the learned
//! file ranker ([`crate::learned::GRAPH_FEATURES`]).
//!
//! Each is a personalised PageRank (the host's `personalized_pagerank`: contains, imports,
//! references and tests edges, walked both ways, damping 0.85) and a file's value is the walk's
//! mass on the file and its definitions, divided by the largest such mass among the candidate
//! sources, so it lies in [0, 1] and does not depend on the graph's size:
//! - **from the issue** (`graph_issue`): seeded on the definitions of the names the issue gives
//!   (a name with more than [`MAX_DEFINITIONS_PER_NAME`] definitions is too ambiguous to seed; a
//!   name's definitions share its weight) and on the files its traceback frames and path
//!   mentions point to. The layer a fix edits is often one call away from the layer the issue
//!   names (a `QuerySet` method calling into the SQL compiler); lexical evidence cannot see that.
//! - **from the top** (`graph_top`): seeded on the first [`TOP_SEEDS`] sources of the linear
//!   ranking (weights 1, 1/2, 1/3): the neighbourhood of the files the evidence favours.
//!
//! Building the graph costs a snapshot's first query (tens to hundreds of milliseconds on large
//! repositories), so the explorer asks for these walks only when its model reads them or the
//! features are emitted for training. A walk whose seeds do not resolve is tried again on their
//! files; a host without the graph, or a walk that still fails, gives 0 everywhere — proximity is
//! evidence, never a reason to fail an answer.

use crate::rank::RankedFile;
use std::collections::{BTreeMap, HashMap};
use swex_plugin::Services;
use swex_plugin::types::{DefinitionEntry, NodeRef, PageRankArgs, RankedNode, Seed};

/// A name with more definitions than this seeds nothing (`get`, `__init__`, `new`).
pub const MAX_DEFINITIONS_PER_NAME: usize = 4;
/// How many of the linear ranking's first sources seed the walk from the top.
pub const TOP_SEEDS: usize = 3;
/// Ranked nodes read from each walk: far more than the candidates' definitions need, and it
/// bounds the answer on large graphs.
const NODES_READ: usize = 3000;

/// The two proximities of every file a walk reached (absent: 0).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Proximity {
    issue: HashMap<String, f64>,
    top: HashMap<String, f64>,
}

impl Proximity {
    /// Proximity to what the issue names, in [0, 1].
    pub fn from_issue(&self, path: &str) -> f64 {
        self.issue.get(path).copied().unwrap_or(0.0)
    }

    /// Proximity to the linear ranking's first sources, in [0, 1].
    pub fn from_top(&self, path: &str) -> f64 {
        self.top.get(path).copied().unwrap_or(0.0)
    }

    /// Both walks for a ranking (`ranked`, in the linear order) and the definitions of the
    /// issue's names, normalised over the ranking's candidate sources.
    pub fn measure(
        services: &Services<'_>,
        definitions: &[(String, Vec<DefinitionEntry>)],
        ranked: &[RankedFile],
    ) -> Proximity {
        let sources: Vec<&RankedFile> = ranked.iter().filter(|f| !f.is_test).collect();
        let walked = |seeds: Vec<(NodeRef, f64)>| normalised(walk(services, seeds), &sources);
        Proximity {
            issue: walked(issue_seeds(definitions, ranked)),
            top: walked(top_seeds(&sources)),
        }
    }
}

/// The issue's seeds: its names' definitions (unambiguous enough), then the files of its frames
/// and path mentions.
pub fn issue_seeds(
    definitions: &[(String, Vec<DefinitionEntry>)],
    ranked: &[RankedFile],
) -> Vec<(NodeRef, f64)> {
    let mut seeds = Vec::new();
    for (_, found) in definitions {
        if found.len() > MAX_DEFINITIONS_PER_NAME {
            continue;
        }
        let weight = 1.0 / found.len() as f64;
        for definition in found {
            let node = NodeRef {
                path: definition.path.clone(),
                name: Some(definition.qualified_name.clone()),
            };
            seeds.push((node, weight));
        }
    }
    for file in ranked {
        let named = file.features.frames > 0.0 || file.features.mentions > 0.0;
        if named && file.language.is_some() {
            seeds.push((file_node(&file.path), 1.0));
        }
    }
    seeds
}

/// The first [`TOP_SEEDS`] parsed sources of the linear ranking, weights 1, 1/2, 1/3.
fn top_seeds(sources: &[&RankedFile]) -> Vec<(NodeRef, f64)> {
    sources
        .iter()
        .filter(|f| f.language.is_some())
        .take(TOP_SEEDS)
        .enumerate()
        .map(|(rank, f)| (file_node(&f.path), 1.0 / (1.0 + rank as f64)))
        .collect()
}

fn file_node(path: &str) -> NodeRef {
    NodeRef {
        path: path.to_owned(),
        name: None,
    }
}

/// One walk: the ranked nodes, or none. Seeds that do not resolve (a qualified name two
/// definitions of a file share, a file the graph lacks) fail the whole call, so a failed walk is
/// tried once more on the seeds' files alone, then on nothing.
fn walk(services: &Services<'_>, seeds: Vec<(NodeRef, f64)>) -> Vec<RankedNode> {
    if seeds.is_empty() {
        return Vec::new();
    }
    let call = |seeds: &[(NodeRef, f64)]| {
        let seeds = seeds
            .iter()
            .map(|(node, weight)| Seed {
                node: node.clone(),
                weight: *weight,
            })
            .collect();
        services.personalized_pagerank(&PageRankArgs::new(seeds, NODES_READ))
    };
    if let Ok(nodes) = call(&seeds) {
        return nodes;
    }
    // The files of the seeds, each with the weight of its seeds, in path order.
    let mut files: BTreeMap<String, f64> = BTreeMap::new();
    for (node, weight) in &seeds {
        *files.entry(node.path.clone()).or_default() += weight;
    }
    let files: Vec<(NodeRef, f64)> = files
        .into_iter()
        .map(|(path, weight)| (file_node(&path), weight))
        .collect();
    call(&files).unwrap_or_default()
}

/// Each source's mass (its file node's and its definitions'), over the largest among `sources`.
fn normalised(nodes: Vec<RankedNode>, sources: &[&RankedFile]) -> HashMap<String, f64> {
    let mut mass: HashMap<String, f64> = HashMap::new();
    for ranked in nodes {
        *mass.entry(ranked.node.path).or_default() += ranked.score;
    }
    let best = sources
        .iter()
        .filter_map(|f| mass.get(&f.path))
        .fold(0.0, |a: f64, &b| a.max(b));
    if best <= 0.0 {
        return HashMap::new();
    }
    sources
        .iter()
        .filter_map(|f| Some((f.path.clone(), mass.get(&f.path)? / best)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::Features;

    fn source(path: &str, frames: f64, mentions: f64, language: Option<&str>) -> RankedFile {
        RankedFile {
            path: path.to_owned(),
            score: 1.0,
            features: Features {
                frames,
                mentions,
                ..Features::default()
            },
            is_test: crate::rank::is_test_path(path),
            vendored: false,
            line_count: Some(10),
            language: language.map(str::to_owned),
        }
    }

    fn definition(path: &str, qualified_name: &str) -> DefinitionEntry {
        let name = qualified_name.rsplit('.').next().unwrap();
        DefinitionEntry::new(path, name, qualified_name, "function", 1, 2)
    }

    #[test]
    fn issue_seeds_share_a_names_weight_and_skip_ambiguous_names() {
        let many: Vec<DefinitionEntry> = (0..=MAX_DEFINITIONS_PER_NAME)
            .map(|i| definition(&format!("m{i}.py"), "get"))
            .collect();
        let definitions = vec![
            (
                "apply".to_owned(),
                vec![definition("a.py", "A.apply"), definition("b.py", "B.apply")],
            ),
            ("get".to_owned(), many),
        ];
        let ranked = vec![
            source("c.py", 1.0, 0.0, Some("python")),
            source("README.md", 0.0, 1.0, None),
            source("d.py", 0.0, 0.0, Some("python")),
        ];
        let seeds: Vec<(String, Option<String>, f64)> = issue_seeds(&definitions, &ranked)
            .into_iter()
            .map(|(node, weight)| (node.path, node.name, weight))
            .collect();
        assert_eq!(
            seeds,
            [
                ("a.py".to_owned(), Some("A.apply".to_owned()), 0.5),
                ("b.py".to_owned(), Some("B.apply".to_owned()), 0.5),
                // Framed and parsed; the README is mentioned but not in the graph.
                ("c.py".to_owned(), None, 1.0),
            ]
        );
    }

    #[test]
    fn top_seeds_are_the_first_parsed_sources() {
        let sources = [
            source("README.md", 0.0, 0.0, None),
            source("a.py", 0.0, 0.0, Some("python")),
            source("b.py", 0.0, 0.0, Some("python")),
            source("c.py", 0.0, 0.0, Some("python")),
            source("d.py", 0.0, 0.0, Some("python")),
        ];
        let refs: Vec<&RankedFile> = sources.iter().collect();
        let seeds: Vec<(String, f64)> = top_seeds(&refs)
            .into_iter()
            .map(|(node, weight)| (node.path, weight))
            .collect();
        assert_eq!(
            seeds,
            [
                ("a.py".to_owned(), 1.0),
                ("b.py".to_owned(), 0.5),
                ("c.py".to_owned(), 1.0 / 3.0)
            ]
        );
    }

    #[test]
    fn a_files_mass_sums_its_nodes_over_the_best_candidate() {
        let node = |path: &str, name: Option<&str>, score: f64| RankedNode {
            node: swex_plugin::types::GraphNode {
                path: path.to_owned(),
                name: name.map(str::to_owned),
                kind: "function".to_owned(),
                start: 1,
                end: 1,
            },
            score,
        };
        let nodes = vec![
            node("a.py", None, 0.25),
            node("a.py", Some("f"), 0.25),
            node("b.py", Some("g"), 0.125),
            // Not a candidate source: no value, and not the scale either.
            node("elsewhere.py", None, 0.9),
        ];
        let sources = [
            source("a.py", 0.0, 0.0, Some("python")),
            source("b.py", 0.0, 0.0, Some("python")),
            source("c.py", 0.0, 0.0, Some("python")),
        ];
        let refs: Vec<&RankedFile> = sources.iter().collect();
        let values = normalised(nodes, &refs);
        assert_eq!(values.get("a.py"), Some(&1.0));
        assert_eq!(values.get("b.py"), Some(&0.25));
        assert_eq!(values.get("c.py"), None);
        assert_eq!(values.get("elsewhere.py"), None);
        assert!(normalised(Vec::new(), &refs).is_empty());
    }
}
