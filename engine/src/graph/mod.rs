//! The code graph: files and definitions as nodes; containment, imports, references and
//! test ↔ subject relations as edges; name lookup and personalised PageRank as queries.
//!
//! [`CodeGraph::build`] takes the per-file analyses of a whole snapshot (from [`crate::lang`]) and
//! needs nothing else: no file contents, no file system.
//!
//! # Edges
//! - `Contains`: file → each top-level definition; definition → each nested definition.
//! - `Imports`: file → file, for every import that resolves inside the snapshot (rules in
//!   `resolve.rs`: Python module paths, packages and relative imports; JS/TS relative paths with
//!   extension and `index` resolution; Go packages through `go.mod`; Rust `mod`/`crate::`/`super::`
//!   paths; Java packages; C/C++ includes by relative path and by path suffix; Ruby
//!   `require_relative`/`require`; PHP PSR-4-style namespaces and `require` paths).
//! - `References`: innermost enclosing definition (or the file, for top-level code) → the
//!   definitions a name used there may denote. Resolution is by bare name, in tiers, and stops at
//!   the first tier that has candidates of a compatible kind (calls: functions, methods, classes,
//!   structs, constants; types: anything but functions, methods and impls; attribute/field names:
//!   anything but impls):
//!   1. definitions in the same file (other than the referring definition itself);
//!   2. definitions in files the file imports, in files those re-export when they are package
//!      entry points (`__init__.py`, `index.*`, `mod.rs`, `lib.rs`), in the C/C++ sources of the
//!      same stem as an included header (`vec.h` → `vec.c`), and in files of the same package
//!      (Go: same directory; Java: same `package`; PHP: same `namespace`), visible without import;
//!   3. anywhere in the snapshot, but only for calls and type names, and only when the name has at
//!      most [`MAX_GLOBAL_CANDIDATES`] compatible definitions: a name defined in many places
//!      (`get`, `save`, `__init__`) says too little on its own.
//!
//!   At most [`MAX_TARGETS_PER_REFERENCE`] edges leave one reference; duplicate edges are merged.
//!   This keeps the graph sparse and its edges meaningful, at the price of missing calls through
//!   common names that are neither local nor imported.
//! - `Tests`: test file → subject file, by file-name conventions (rules in `subjects.rs`).
//!
//! The graph does not know types, scopes or inheritance: `obj.save()` is a reference to the name
//! `save`, not to a particular class's method.

mod pagerank;
mod paths;
mod resolve;
mod subjects;

use std::collections::{HashMap, HashSet};

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

pub use pagerank::{EdgeWeights, PageRankMethod, PageRankOptions};

use crate::analysis::{ChunkKind, FileAnalysis, Language, ReferenceKind};
use paths::{dir_of, file_name};
use swex_text::paths::{Extension, file_stem};

/// Names with more compatible definitions than this in the whole snapshot are not resolved
/// globally (tier 3 of reference resolution).
pub const MAX_GLOBAL_CANDIDATES: usize = 3;
/// At most this many `References` edges leave one reference.
pub const MAX_TARGETS_PER_REFERENCE: usize = 8;

/// A node of the graph. Ids are dense (`0..node_count`) and stable for one built graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NodeId(pub u32);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    Contains,
    Imports,
    References,
    Tests,
}

impl EdgeKind {
    pub const ALL: [EdgeKind; 4] = [
        EdgeKind::Contains,
        EdgeKind::Imports,
        EdgeKind::References,
        EdgeKind::Tests,
    ];
}

/// Which edges of a node to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Outgoing,
    Incoming,
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    File,
    Definition(ChunkKind),
}

/// What a node stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeInfo {
    pub kind: NodeKind,
    /// Repository-relative path of the file (of the definition's file).
    pub path: String,
    /// The file node (itself, for files).
    pub file: NodeId,
    /// File name for files; the bare definition name otherwise.
    pub name: String,
    /// The path for files; the qualified name (`Class.method`) otherwise.
    pub qualified_name: String,
    /// 1-based closed line span (the whole file for files).
    pub start: u32,
    pub end: u32,
}

/// Node and edge counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphStats {
    pub files: usize,
    pub definitions: usize,
    pub contains: usize,
    pub imports: usize,
    pub references: usize,
    pub tests: usize,
}

pub struct CodeGraph {
    graph: DiGraph<NodeInfo, EdgeKind, u32>,
    files: HashMap<String, NodeId>,
    by_name: HashMap<String, Vec<NodeId>>,
    /// Definition nodes of each file in document order (parents before children).
    file_definitions: HashMap<NodeId, Vec<NodeId>>,
    adjacency: pagerank::Adjacency,
    stats: GraphStats,
}

impl std::fmt::Debug for CodeGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CodeGraph")
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl CodeGraph {
    /// Builds the graph of a snapshot from its files' analyses. Paths are repository-relative with
    /// `/` separators; a path given twice keeps its first analysis.
    pub fn build(files: &[(&str, &FileAnalysis)]) -> CodeGraph {
        let mut seen = HashSet::with_capacity(files.len());
        let files: Vec<(&str, &FileAnalysis)> = files
            .iter()
            .copied()
            .filter(|(path, _)| seen.insert(*path))
            .collect();
        let (nodes, mut edges) = Nodes::of_files(&files);
        let resolver = resolve::Resolver::new(&files);
        let imports = resolved_imports(&files, &resolver);
        edges.extend(import_edges(&imports, &nodes.file_nodes));
        edges.extend(reference_edges(&files, &resolver, &imports, &nodes));
        edges.extend(test_edges(&files, &resolver, &nodes.file_nodes));
        CodeGraph::assemble(&files, nodes, &edges)
    }

    /// The graph from its nodes and edges (in the order they were found: edge ids follow it),
    /// with its counts, PageRank adjacency and look-up tables.
    fn assemble(files: &[(&str, &FileAnalysis)], nodes: Nodes, edges: &[Edge]) -> CodeGraph {
        let Nodes {
            mut graph,
            file_nodes,
            definition_nodes,
            by_name,
            ..
        } = nodes;
        let mut stats = GraphStats {
            files: files.len(),
            definitions: graph.node_count() - files.len(),
            ..GraphStats::default()
        };
        for &(from, to, kind) in edges {
            graph.add_edge(
                NodeIndex::new(from as usize),
                NodeIndex::new(to as usize),
                kind,
            );
            match kind {
                EdgeKind::Contains => stats.contains += 1,
                EdgeKind::Imports => stats.imports += 1,
                EdgeKind::References => stats.references += 1,
                EdgeKind::Tests => stats.tests += 1,
            }
        }
        let adjacency = pagerank::Adjacency::new(graph.node_count(), edges);
        let files_by_path = files
            .iter()
            .zip(&file_nodes)
            .map(|((path, _), id)| ((*path).to_owned(), *id))
            .collect();
        let file_definitions = file_nodes.iter().copied().zip(definition_nodes).collect();
        CodeGraph {
            graph,
            files: files_by_path,
            by_name,
            file_definitions,
            adjacency,
            stats,
        }
    }

    pub fn stats(&self) -> &GraphStats {
        &self.stats
    }

    pub fn node_count(&self) -> usize {
        self.graph.node_count()
    }

    pub fn edge_count(&self) -> usize {
        self.graph.edge_count()
    }

    /// The node of a file, by repository-relative path.
    pub fn file_node(&self, path: &str) -> Option<NodeId> {
        self.files.get(path).copied()
    }

    /// The node's description. Panics on an id that does not come from this graph.
    pub fn node(&self, id: NodeId) -> &NodeInfo {
        &self.graph[NodeIndex::new(id.0 as usize)]
    }

    /// Every node id, files and definitions.
    pub fn nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.graph.node_count() as u32).map(NodeId)
    }

    /// The innermost definition of `path` whose span holds `line`, else the file's node; `None`
    /// for unknown paths.
    pub fn node_at(&self, path: &str, line: u32) -> Option<NodeId> {
        let file = self.file_node(path)?;
        let innermost = self.file_definitions.get(&file).and_then(|definitions| {
            // Document order puts nested definitions after their parents: the last hit is the
            // innermost.
            definitions.iter().rev().copied().find(|&d| {
                let info = self.node(d);
                info.start <= line && line <= info.end
            })
        });
        Some(innermost.unwrap_or(file))
    }

    /// Definitions matching `name`: a bare name (`save`), a qualified name (`Model.save`,
    /// `Type::method`; `.`, `::`, `#` and `\` are interchangeable), or a dotted suffix of the
    /// module-qualified name (`base.Model.save` for `Model.save` in `…/base.py`). Sorted by path
    /// and line.
    pub fn definitions_named(&self, name: &str) -> Vec<NodeId> {
        let Some(query) = DefinitionQuery::new(name) else {
            return Vec::new();
        };
        let Some(candidates) = self.by_name.get(query.bare()) else {
            return Vec::new();
        };
        let mut found: Vec<NodeId> = candidates
            .iter()
            .copied()
            .filter(|&id| {
                let info = self.node(id);
                query.matches(&info.qualified_name, &info.path)
            })
            .collect();
        found.sort_by(|&a, &b| {
            let (x, y) = (self.node(a), self.node(b));
            (&x.path, x.start, a).cmp(&(&y.path, y.start, b))
        });
        found
    }

    /// Neighbours over edges of the given kinds (all kinds when `kinds` is empty), in the given
    /// direction, sorted by node id and deduplicated per (node, kind).
    pub fn neighbours(
        &self,
        id: NodeId,
        kinds: &[EdgeKind],
        direction: Direction,
    ) -> Vec<(NodeId, EdgeKind)> {
        let index = NodeIndex::new(id.0 as usize);
        if index.index() >= self.graph.node_count() {
            return Vec::new();
        }
        let wanted = |kind: &EdgeKind| kinds.is_empty() || kinds.contains(kind);
        let mut found = Vec::new();
        if matches!(direction, Direction::Outgoing | Direction::Both) {
            for edge in self
                .graph
                .edges_directed(index, petgraph::Direction::Outgoing)
            {
                if wanted(edge.weight()) {
                    found.push((NodeId(edge.target().index() as u32), *edge.weight()));
                }
            }
        }
        if matches!(direction, Direction::Incoming | Direction::Both) {
            for edge in self
                .graph
                .edges_directed(index, petgraph::Direction::Incoming)
            {
                if wanted(edge.weight()) {
                    found.push((NodeId(edge.source().index() as u32), *edge.weight()));
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// Personalised PageRank from weighted seeds: nodes by descending score (ties by id). Seeds
    /// with non-positive or non-finite weight, or unknown ids, are ignored; no usable seed gives
    /// an empty result.
    pub fn personalized_pagerank(
        &self,
        seeds: &[(NodeId, f64)],
        options: &PageRankOptions,
    ) -> Vec<(NodeId, f64)> {
        self.adjacency.personalized_pagerank(seeds, options)
    }
}

/// `a.b.c` for `a/b/c.py`, `a/b/c/__init__.py`, `a/b/c.rs`…: the path without extension, with
/// package entry-point names dropped, dotted.
/// A definitions-by-name query: a bare name (`save`), a qualified one (`Model.save`; `.`, `::`,
/// `#` and `\` interchangeable) or a dotted suffix of a module-qualified name
/// (`models.base.Model.save`). Shared by the graph and the index's definition table so both
/// answer the same.
#[derive(Debug, Clone)]
pub struct DefinitionQuery {
    query: String,
    bare_start: usize,
}

impl DefinitionQuery {
    /// `None` when the name has no bare part (empty, or ending with a separator).
    pub fn new(name: &str) -> Option<DefinitionQuery> {
        let query = normalize_qualified(name.trim());
        let bare_start = query.rfind('.').map_or(0, |dot| dot + 1);
        (bare_start < query.len()).then_some(DefinitionQuery { query, bare_start })
    }

    /// The last component: definitions are looked up by it.
    pub fn bare(&self) -> &str {
        &self.query[self.bare_start..]
    }

    /// Whether a definition whose bare name is [`Self::bare`] answers the query, given its
    /// qualified name and file path.
    pub fn matches(&self, qualified_name: &str, path: &str) -> bool {
        if self.bare_start == 0 {
            return true;
        }
        let dotted_suffix = format!(".{}", self.query);
        let qualified = normalize_qualified(qualified_name);
        let module_qualified = format!("{}.{qualified}", module_path(path));
        qualified == self.query
            || qualified.ends_with(&dotted_suffix)
            || module_qualified == self.query
            || module_qualified.ends_with(&dotted_suffix)
    }
}

/// The code graph's module path of any file (`swex_text::paths::Modules::AnyLanguage`).
fn module_path(path: &str) -> String {
    swex_text::paths::module_path(path, swex_text::paths::Modules::AnyLanguage)
        .expect("every file has a module path under AnyLanguage")
}

fn normalize_qualified(name: &str) -> String {
    name.replace("::", ".").replace(['#', '\\'], ".")
}

/// Whether a reference of this kind may denote a definition of that kind. A Rust `impl` block is
/// never the target: the type it implements is.
/// Files grouped by declared Java package or PHP namespace.
fn package_members<'a>(
    files: &[(&'a str, &'a FileAnalysis)],
) -> HashMap<(Language, &'a str), Vec<u32>> {
    let mut members: HashMap<(Language, &str), Vec<u32>> = HashMap::new();
    for (index, (_, analysis)) in files.iter().enumerate() {
        if let (Some(language @ (Language::Java | Language::Php)), Some(package)) =
            (analysis.language, &analysis.package)
        {
            members
                .entry((language, package.as_str()))
                .or_default()
                .push(index as u32);
        }
    }
    members
}

fn compatible(reference: ReferenceKind, definition: ChunkKind) -> bool {
    use ChunkKind::*;
    match reference {
        ReferenceKind::Call => matches!(definition, Function | Method | Class | Struct | Constant),
        ReferenceKind::Type => !matches!(definition, Function | Method | Impl),
        ReferenceKind::Name => definition != Impl,
    }
}

const C_SOURCE_EXTENSIONS: [&str; 5] = ["c", "cc", "cpp", "cxx", "c++"];

fn is_c_header(path: &str) -> bool {
    let extension = path.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(extension, "h" | "hh" | "hpp" | "hxx" | "h++")
}

/// Package entry points whose imports count as re-exports for name resolution.
fn is_package_entry(path: &str) -> bool {
    let name = file_name(path);
    name == "__init__.py" || name == "mod.rs" || name == "lib.rs" || name.starts_with("index.")
}

/// An edge while the graph is built: (from, to, kind) by node index.
type Edge = (u32, u32, EdgeKind);

/// The nodes of a graph being built: a file node per file, then its definitions in document
/// order, with the tables the edges are found with.
struct Nodes {
    graph: DiGraph<NodeInfo, EdgeKind, u32>,
    file_nodes: Vec<NodeId>,
    /// Each file's definition nodes, by file index.
    definition_nodes: Vec<Vec<NodeId>>,
    by_name: HashMap<String, Vec<NodeId>>,
    /// The file each node belongs to, by file index.
    node_file: Vec<u32>,
}

impl Nodes {
    /// Every file's node and its definitions' nodes, and the `Contains` edges between them (a
    /// definition's parent, else its file).
    fn of_files(files: &[(&str, &FileAnalysis)]) -> (Nodes, Vec<Edge>) {
        let mut nodes = Nodes {
            graph: DiGraph::default(),
            file_nodes: Vec::with_capacity(files.len()),
            definition_nodes: Vec::with_capacity(files.len()),
            by_name: HashMap::new(),
            node_file: Vec::new(),
        };
        let mut edges = Vec::new();
        for (file_index, (path, analysis)) in files.iter().enumerate() {
            let file_id = nodes.add_file(file_index, path, analysis);
            let mut ids = Vec::with_capacity(analysis.definitions.len());
            for definition in &analysis.definitions {
                let id = nodes.add_node(
                    file_index,
                    NodeInfo {
                        kind: NodeKind::Definition(definition.kind),
                        path: (*path).to_owned(),
                        file: file_id,
                        name: definition.name.clone(),
                        qualified_name: definition.qualified_name.clone(),
                        start: definition.start,
                        end: definition.end,
                    },
                );
                let parent = definition
                    .parent
                    .and_then(|p| ids.get(p as usize).copied())
                    .unwrap_or(file_id);
                edges.push((parent.0, id.0, EdgeKind::Contains));
                nodes
                    .by_name
                    .entry(definition.name.clone())
                    .or_default()
                    .push(id);
                ids.push(id);
            }
            nodes.file_nodes.push(file_id);
            nodes.definition_nodes.push(ids);
        }
        (nodes, edges)
    }

    /// A file's node: lines 1 to its last chunk's end (its line count without chunks).
    fn add_file(&mut self, file_index: usize, path: &str, analysis: &FileAnalysis) -> NodeId {
        let end = analysis
            .chunks
            .last()
            .map_or(analysis.line_count, |c| c.end)
            .max(1);
        let file_id = NodeId(self.graph.node_count() as u32);
        self.add_node(
            file_index,
            NodeInfo {
                kind: NodeKind::File,
                path: path.to_owned(),
                file: file_id,
                name: file_name(path).to_owned(),
                qualified_name: path.to_owned(),
                start: 1,
                end,
            },
        )
    }

    fn add_node(&mut self, file_index: usize, info: NodeInfo) -> NodeId {
        let id = NodeId(self.graph.node_count() as u32);
        self.graph.add_node(info);
        self.node_file.push(file_index as u32);
        id
    }
}

/// Each file's imports resolved to file indexes inside the snapshot, sorted and distinct.
fn resolved_imports(
    files: &[(&str, &FileAnalysis)],
    resolver: &resolve::Resolver<'_>,
) -> Vec<Vec<u32>> {
    files
        .par_iter()
        .enumerate()
        .map(|(index, (_, analysis))| {
            let mut targets: Vec<u32> = analysis
                .imports
                .iter()
                .flat_map(|import| resolver.resolve(index as u32, import))
                .collect();
            targets.sort_unstable();
            targets.dedup();
            targets
        })
        .collect()
}

/// `Imports` edges, file node to file node.
fn import_edges(imports: &[Vec<u32>], file_nodes: &[NodeId]) -> Vec<Edge> {
    let mut edges = Vec::new();
    for (from, targets) in imports.iter().enumerate() {
        for &to in targets {
            edges.push((
                file_nodes[from].0,
                file_nodes[to as usize].0,
                EdgeKind::Imports,
            ));
        }
    }
    edges
}

/// `References` edges of every file (see the module docs for the tiers), files in order.
fn reference_edges(
    files: &[(&str, &FileAnalysis)],
    resolver: &resolve::Resolver<'_>,
    imports: &[Vec<u32>],
    nodes: &Nodes,
) -> Vec<Edge> {
    let context = ReferenceContext {
        files,
        resolver,
        imports,
        definition_nodes: &nodes.definition_nodes,
        file_nodes: &nodes.file_nodes,
        node_file: &nodes.node_file,
        by_name: &nodes.by_name,
        graph: &nodes.graph,
        packages: package_members(files),
    };
    let per_file: Vec<Vec<(u32, u32)>> = (0..files.len())
        .into_par_iter()
        .map(|file| context.references_of(file))
        .collect();
    per_file
        .into_iter()
        .flatten()
        .map(|(from, to)| (from, to, EdgeKind::References))
        .collect()
}

/// `Tests` edges: each test file to its subject file, by file-name conventions (`subjects.rs`).
fn test_edges(
    files: &[(&str, &FileAnalysis)],
    resolver: &resolve::Resolver<'_>,
    file_nodes: &[NodeId],
) -> Vec<Edge> {
    let by_stem = subjects::stem_table(&resolver.files);
    let languages: Vec<Option<Language>> = files.iter().map(|(_, a)| a.language).collect();
    (0..files.len())
        .into_par_iter()
        .filter_map(|test| {
            let pattern = subjects::subject_of(files[test].0, languages[test])?;
            let subject = subjects::find_subject(
                test as u32,
                &pattern,
                &resolver.files,
                &by_stem,
                &languages,
            )?;
            Some((
                file_nodes[test].0,
                file_nodes[subject as usize].0,
                EdgeKind::Tests,
            ))
        })
        .collect()
}

struct ReferenceContext<'a> {
    files: &'a [(&'a str, &'a FileAnalysis)],
    resolver: &'a resolve::Resolver<'a>,
    imports: &'a [Vec<u32>],
    definition_nodes: &'a [Vec<NodeId>],
    file_nodes: &'a [NodeId],
    node_file: &'a [u32],
    by_name: &'a HashMap<String, Vec<NodeId>>,
    graph: &'a DiGraph<NodeInfo, EdgeKind, u32>,
    /// Files by (language, declared package) for Java packages and PHP namespaces.
    packages: HashMap<(Language, &'a str), Vec<u32>>,
}

impl ReferenceContext<'_> {
    fn kind_of(&self, id: NodeId) -> Option<ChunkKind> {
        match self.graph[NodeIndex::new(id.0 as usize)].kind {
            NodeKind::Definition(kind) => Some(kind),
            NodeKind::File => None,
        }
    }

    /// Files whose definitions a file sees besides its own (tier 2 of reference resolution): the
    /// files it imports; what imported package entry points (`__init__.py`, `index.*`, `mod.rs`,
    /// `lib.rs`) import in turn; for an included C/C++ header, the source files of the same stem
    /// (`vec.h` → `vec.c`), where the definitions behind its prototypes live; and the files of the
    /// same Java package or PHP namespace, which need no import.
    fn visible_files(&self, file: usize) -> HashSet<u32> {
        let (_, analysis) = self.files[file];
        let mut visible: HashSet<u32> = HashSet::new();
        for &target in &self.imports[file] {
            visible.insert(target);
            let target_path = self.resolver.files.path(target);
            if is_package_entry(target_path) {
                visible.extend(self.imports[target as usize].iter().copied());
            }
            if matches!(analysis.language, Some(Language::C | Language::Cpp))
                && is_c_header(target_path)
            {
                let stem = file_stem(target_path, Extension::Last);
                for extension in C_SOURCE_EXTENSIONS {
                    visible.extend(
                        self.resolver
                            .files
                            .named(&format!("{stem}.{extension}"))
                            .iter()
                            .copied(),
                    );
                }
            }
        }
        if let (Some(language @ (Language::Java | Language::Php)), Some(package)) =
            (analysis.language, &analysis.package)
            && let Some(members) = self.packages.get(&(language, package.as_str()))
        {
            visible.extend(members.iter().copied());
        }
        visible.remove(&(file as u32));
        visible
    }

    /// `References` edges leaving one file's definitions (and its top-level code).
    fn references_of(&self, file: usize) -> Vec<(u32, u32)> {
        let (path, analysis) = self.files[file];
        if analysis.references.is_empty() {
            return Vec::new();
        }
        let definitions = &self.definition_nodes[file];
        // innermost[line] = index + 1 of the innermost definition holding the line, 0 for none.
        let last_line = analysis
            .references
            .iter()
            .map(|r| r.line)
            .max()
            .unwrap_or(0) as usize;
        let mut innermost = vec![0u32; last_line + 1];
        for (index, definition) in analysis.definitions.iter().enumerate() {
            let start = (definition.start as usize).min(last_line + 1);
            let end = (definition.end as usize).min(last_line);
            for slot in innermost.iter_mut().take(end + 1).skip(start) {
                *slot = index as u32 + 1;
            }
        }
        let visible = self.visible_files(file);
        // A Go package is a directory: its files see each other without imports.
        let same_directory_visible = analysis.language == Some(Language::Go);
        let directory = dir_of(path);
        let is_visible = |other: u32| {
            visible.contains(&other)
                || (same_directory_visible && dir_of(self.resolver.files.path(other)) == directory)
        };

        let mut edges = Vec::new();
        let mut tier = Vec::new();
        for reference in &analysis.references {
            let Some(candidates) = self.by_name.get(&reference.name) else {
                continue;
            };
            let source = match innermost.get(reference.line as usize).copied().unwrap_or(0) {
                0 => self.file_nodes[file],
                index => definitions[index as usize - 1],
            };
            let usable = |&&id: &&NodeId| {
                id != source
                    && self
                        .kind_of(id)
                        .is_some_and(|k| compatible(reference.kind, k))
            };
            tier.clear();
            tier.extend(
                candidates
                    .iter()
                    .filter(usable)
                    .filter(|id| self.node_file[id.0 as usize] as usize == file),
            );
            if tier.is_empty() {
                tier.extend(
                    candidates
                        .iter()
                        .filter(usable)
                        .filter(|id| is_visible(self.node_file[id.0 as usize])),
                );
            }
            if tier.is_empty() && reference.kind != ReferenceKind::Name {
                let global: Vec<NodeId> = candidates.iter().filter(usable).copied().collect();
                if global.len() <= MAX_GLOBAL_CANDIDATES {
                    tier.extend(global);
                }
            }
            edges.extend(
                tier.iter()
                    .take(MAX_TARGETS_PER_REFERENCE)
                    .map(|target| (source.0, target.0)),
            );
        }
        edges.sort_unstable();
        edges.dedup();
        edges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_graph_can_be_shared_across_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<CodeGraph>();
    }

    /// Analyses `(path, text)` pairs with the real analysers and builds their graph.
    fn graph_of(files: &[(&str, &str)]) -> CodeGraph {
        let analyses: Vec<(&str, FileAnalysis)> = files
            .iter()
            .map(|(path, text)| {
                let language = crate::lang::detect_language(path, text.as_bytes());
                (
                    *path,
                    crate::lang::analyze(path, language, text, &Default::default()),
                )
            })
            .collect();
        let pairs: Vec<(&str, &FileAnalysis)> = analyses.iter().map(|(p, a)| (*p, a)).collect();
        CodeGraph::build(&pairs)
    }

    /// Targets of the `References` edges leaving the definition `qualified` of `path`, as
    /// `path#qualified`.
    fn referenced_from(graph: &CodeGraph, path: &str, qualified: &str) -> Vec<String> {
        let source = graph
            .nodes()
            .find(|&id| graph.node(id).path == path && graph.node(id).qualified_name == qualified)
            .expect("source definition");
        let mut targets: Vec<String> = graph
            .neighbours(source, &[EdgeKind::References], Direction::Outgoing)
            .into_iter()
            .map(|(id, _)| format!("{}#{}", graph.node(id).path, graph.node(id).qualified_name))
            .collect();
        targets.sort();
        targets
    }

    #[test]
    fn common_names_resolve_through_visibility_not_globally() {
        // `reset` is defined in five files: too common to resolve globally (tier 3), so only the
        // definition behind the included header (tier 2) is linked.
        let mut files = vec![
            ("include/a.h", "void reset(void);\n"),
            (
                "src/main.c",
                "#include \"a.h\"\nint main(void) { reset(); return 0; }\n",
            ),
            ("src/a.c", "#include \"a.h\"\nvoid reset(void) {}\n"),
        ];
        let others = ["src/b.c", "src/c.c", "src/d.c", "src/e.c"];
        for path in others {
            files.push((path, "void reset(void) {}\n"));
        }
        let graph = graph_of(&files);
        assert_eq!(
            referenced_from(&graph, "src/main.c", "main"),
            ["src/a.c#reset"]
        );

        // A name with few definitions resolves globally, to all of them.
        let graph = graph_of(&[
            ("src/main.c", "int main(void) { tidy(); return 0; }\n"),
            ("src/x.c", "void tidy(void) {}\n"),
            ("src/y.c", "void tidy(void) {}\n"),
        ]);
        assert_eq!(
            referenced_from(&graph, "src/main.c", "main"),
            ["src/x.c#tidy", "src/y.c#tidy"]
        );
    }

    #[test]
    fn java_packages_and_php_namespaces_see_their_members_without_imports() {
        let mut files = vec![
            (
                "src/main/java/a/Cart.java",
                "package a;\nclass Cart { void add() {} }\n",
            ),
            (
                "src/test/java/a/CartTest.java",
                "package a;\nclass CartTest { void t() { new Cart().add(); } }\n",
            ),
        ];
        let others = ["b", "c", "d", "e"];
        let texts: Vec<(String, String)> = others
            .iter()
            .map(|p| {
                (
                    format!("src/main/java/{p}/Other.java"),
                    format!("package {p};\nclass Other {{ void add() {{}} }}\n"),
                )
            })
            .collect();
        for (path, text) in &texts {
            files.push((path.as_str(), text.as_str()));
        }
        let graph = graph_of(&files);
        assert_eq!(
            referenced_from(&graph, "src/test/java/a/CartTest.java", "CartTest.t"),
            [
                "src/main/java/a/Cart.java#Cart",
                "src/main/java/a/Cart.java#Cart.add"
            ]
        );

        let graph = graph_of(&[
            (
                "src/A.php",
                "<?php\nnamespace App;\nclass A { function run() { helper(); } }\n",
            ),
            ("src/B.php", "<?php\nnamespace App;\nfunction helper() {}\n"),
            ("lib/C.php", "<?php\nnamespace Lib;\nfunction helper() {}\n"),
            (
                "lib/D.php",
                "<?php\nnamespace Lib2;\nfunction helper() {}\n",
            ),
            (
                "lib/E.php",
                "<?php\nnamespace Lib3;\nfunction helper() {}\n",
            ),
            (
                "lib/F.php",
                "<?php\nnamespace Lib4;\nfunction helper() {}\n",
            ),
        ]);
        assert_eq!(
            referenced_from(&graph, "src/A.php", "A.run"),
            ["src/B.php#helper"]
        );
    }

    #[test]
    fn an_empty_snapshot_gives_an_empty_graph() {
        let graph = CodeGraph::build(&[]);
        assert_eq!(graph.node_count(), 0);
        assert!(graph.definitions_named("x").is_empty());
        assert!(
            graph
                .personalized_pagerank(&[(NodeId(0), 1.0)], &PageRankOptions::default())
                .is_empty()
        );
        assert!(graph.neighbours(NodeId(3), &[], Direction::Both).is_empty());
    }
}
