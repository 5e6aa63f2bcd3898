//! Personalised PageRank over the code graph.
//!
//! A random walker starts at the seeds, follows an edge with probability `damping` (choosing among
//! a node's edges in proportion to their kind's weight) and otherwise jumps back to a seed (in
//! proportion to the seed weights). Nodes without usable edges send their walker back to the
//! seeds too. The stationary distribution ranks nodes by how reachable they are from the seeds.
//!
//! Two solvers over one compressed adjacency built with the graph:
//! - `Push`: the local "forward push" of Andersen, Chung and Lang. Mass moves from the seeds
//!   outwards only while a node's residual exceeds `tolerance` × its degree, so the cost depends
//!   on the seeds' neighbourhood (at most about `1 / (tolerance × (1 − damping))` edge visits),
//!   not on the size of the graph. Scores under-estimate the exact values by at most that
//!   residual; the ranking of the nodes that matter is unaffected.
//! - `PowerIteration`: the textbook global iteration, `max_iterations` passes over all edges;
//!   exact up to `tolerance` (L1 change), used as the reference in tests.
//!
//! `Auto` (the default) takes whichever has the smaller worst-case cost: power iteration on small
//! graphs, push on large ones.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::{Direction, EdgeKind, NodeId};

/// Relative weight of each edge kind for the walk.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EdgeWeights {
    pub contains: f64,
    pub imports: f64,
    pub references: f64,
    pub tests: f64,
}

impl Default for EdgeWeights {
    fn default() -> Self {
        Self {
            contains: 1.0,
            imports: 0.5,
            references: 1.0,
            tests: 1.0,
        }
    }
}

impl EdgeWeights {
    pub fn of(&self, kind: EdgeKind) -> f64 {
        match kind {
            EdgeKind::Contains => self.contains,
            EdgeKind::Imports => self.imports,
            EdgeKind::References => self.references,
            EdgeKind::Tests => self.tests,
        }
    }
}

/// How [`PageRankOptions`] are solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageRankMethod {
    /// Push on large graphs, power iteration on small ones (by worst-case cost).
    #[default]
    Auto,
    /// Local forward push: fast, slightly under-estimating.
    Push,
    /// Global power iteration: exact up to `tolerance`, linear in the graph per iteration.
    PowerIteration,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PageRankOptions {
    /// Probability of following an edge rather than jumping back to the seeds.
    pub damping: f64,
    /// Upper bound on power iterations (`PowerIteration` only).
    pub max_iterations: u32,
    /// `Push`: stop pushing from a node once its residual is at most this × its degree.
    /// `PowerIteration`: stop when the L1 change of the scores falls below this.
    pub tolerance: f64,
    /// Which way edges may be walked; `Both` treats the graph as undirected, so callers and
    /// callees, importers and imports are both reached.
    pub direction: Direction,
    pub weights: EdgeWeights,
    /// Return at most this many nodes (0: all nodes with a positive score).
    pub limit: usize,
    pub method: PageRankMethod,
}

impl Default for PageRankOptions {
    fn default() -> Self {
        Self {
            damping: 0.85,
            max_iterations: 50,
            tolerance: 1e-6,
            direction: Direction::Both,
            weights: EdgeWeights::default(),
            limit: 0,
            method: PageRankMethod::Auto,
        }
    }
}

/// Both directions of every edge in compressed sparse rows.
pub(crate) struct Adjacency {
    offsets: Vec<u32>,
    entries: Vec<Entry>,
    /// Per node, the number of edges of each kind in each direction (`kind * 2 + outgoing`), so
    /// that a node's degree and total edge weight cost O(1) whatever the options.
    kind_counts: Vec<[u32; 8]>,
}

#[derive(Clone, Copy)]
struct Entry {
    neighbour: u32,
    kind: EdgeKind,
    outgoing: bool,
}

fn kind_slot(kind: EdgeKind, outgoing: bool) -> usize {
    let kind_index = match kind {
        EdgeKind::Contains => 0,
        EdgeKind::Imports => 1,
        EdgeKind::References => 2,
        EdgeKind::Tests => 3,
    };
    kind_index * 2 + usize::from(outgoing)
}

impl Adjacency {
    pub fn new(node_count: usize, edges: &[(u32, u32, EdgeKind)]) -> Self {
        let mut kind_counts = vec![[0u32; 8]; node_count];
        for &(from, to, kind) in edges {
            kind_counts[from as usize][kind_slot(kind, true)] += 1;
            kind_counts[to as usize][kind_slot(kind, false)] += 1;
        }
        let mut offsets = Vec::with_capacity(node_count + 1);
        let mut running = 0u32;
        for counts in &kind_counts {
            offsets.push(running);
            running += counts.iter().sum::<u32>();
        }
        offsets.push(running);
        let mut fill = offsets.clone();
        let placeholder = Entry {
            neighbour: 0,
            kind: EdgeKind::Contains,
            outgoing: true,
        };
        let mut entries = vec![placeholder; running as usize];
        for &(from, to, kind) in edges {
            let slot = &mut fill[from as usize];
            entries[*slot as usize] = Entry {
                neighbour: to,
                kind,
                outgoing: true,
            };
            *slot += 1;
            let slot = &mut fill[to as usize];
            entries[*slot as usize] = Entry {
                neighbour: from,
                kind,
                outgoing: false,
            };
            *slot += 1;
        }
        Self {
            offsets,
            entries,
            kind_counts,
        }
    }

    fn of(&self, node: usize) -> &[Entry] {
        &self.entries[self.offsets[node] as usize..self.offsets[node + 1] as usize]
    }

    fn usable(direction: Direction, entry: &Entry) -> bool {
        match direction {
            Direction::Outgoing => entry.outgoing,
            Direction::Incoming => !entry.outgoing,
            Direction::Both => true,
        }
    }

    /// Edges of one kind a walk in `direction` may take from `node`.
    fn usable_count(&self, node: usize, kind: EdgeKind, direction: Direction) -> u32 {
        let counts = &self.kind_counts[node];
        let outgoing = counts[kind_slot(kind, true)];
        let incoming = counts[kind_slot(kind, false)];
        match direction {
            Direction::Outgoing => outgoing,
            Direction::Incoming => incoming,
            Direction::Both => outgoing + incoming,
        }
    }

    fn degree(&self, node: usize, direction: Direction) -> u32 {
        EdgeKind::ALL
            .iter()
            .map(|&kind| self.usable_count(node, kind, direction))
            .sum()
    }

    /// Total weight of a node's usable edges.
    fn out_weight(&self, node: usize, options: &PageRankOptions) -> f64 {
        EdgeKind::ALL
            .iter()
            .map(|&kind| {
                f64::from(self.usable_count(node, kind, options.direction))
                    * options.weights.of(kind).max(0.0)
            })
            .sum()
    }

    pub fn personalized_pagerank(
        &self,
        seeds: &[(NodeId, f64)],
        options: &PageRankOptions,
    ) -> Vec<(NodeId, f64)> {
        let n = self.offsets.len() - 1;
        let mut teleport: Vec<(usize, f64)> = seeds
            .iter()
            .filter(|(id, weight)| (id.0 as usize) < n && weight.is_finite() && *weight > 0.0)
            .map(|(id, weight)| (id.0 as usize, *weight))
            .collect();
        let total: f64 = teleport.iter().map(|(_, w)| w).sum();
        if teleport.is_empty() || !total.is_finite() || total <= 0.0 {
            return Vec::new();
        }
        for (_, weight) in &mut teleport {
            *weight /= total;
        }
        let scores = match options.method {
            PageRankMethod::Auto if self.power_iteration_is_cheaper(options) => {
                self.power_iteration(&teleport, options)
            }
            PageRankMethod::Auto | PageRankMethod::Push => self.push(&teleport, options),
            PageRankMethod::PowerIteration => self.power_iteration(&teleport, options),
        };
        let mut ranked: Vec<(NodeId, f64)> = scores
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0.0)
            .map(|(i, s)| (NodeId(i as u32), *s))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if options.limit > 0 {
            ranked.truncate(options.limit);
        }
        ranked
    }

    /// Compares the worst-case work of the two solvers (edge visits).
    fn power_iteration_is_cheaper(&self, options: &PageRankOptions) -> bool {
        let n = self.offsets.len() - 1;
        let power = f64::from(options.max_iterations) * (self.entries.len() + n) as f64;
        let push = 1.0 / (options.tolerance.max(1e-15) * (1.0 - options.damping.clamp(0.0, 0.999)));
        power <= push
    }

    /// Forward push from the seeds: the score estimate of every node.
    fn push(&self, teleport: &[(usize, f64)], options: &PageRankOptions) -> Vec<f64> {
        let n = self.offsets.len() - 1;
        let damping = options.damping.clamp(0.0, 1.0);
        let tolerance = options.tolerance.max(1e-15);
        let threshold =
            |node: usize| tolerance * f64::from(self.degree(node, options.direction).max(1));
        let mut estimate = vec![0.0f64; n];
        let mut residual = vec![0.0f64; n];
        let mut queued = vec![false; n];
        let mut queue = VecDeque::new();
        for &(node, weight) in teleport {
            residual[node] += weight;
            if !queued[node] {
                queued[node] = true;
                queue.push_back(node);
            }
        }
        // A hard bound on the work, far above what converging pushes need.
        let mut budget: u64 = 200 * (self.entries.len() as u64 + n as u64);
        while let Some(node) = queue.pop_front() {
            queued[node] = false;
            let mass = residual[node];
            if mass <= threshold(node) {
                continue;
            }
            residual[node] = 0.0;
            estimate[node] += (1.0 - damping) * mass;
            let spread = damping * mass;
            let mut give = |target: usize, amount: f64| {
                residual[target] += amount;
                if !queued[target] && residual[target] > threshold(target) {
                    queued[target] = true;
                    queue.push_back(target);
                }
            };
            let total_weight = self.out_weight(node, options);
            if total_weight > 0.0 {
                for entry in self
                    .of(node)
                    .iter()
                    .filter(|e| Self::usable(options.direction, e))
                {
                    let share = spread * options.weights.of(entry.kind).max(0.0) / total_weight;
                    if share > 0.0 {
                        give(entry.neighbour as usize, share);
                    }
                }
            } else {
                // A dead end sends its walkers back to the seeds.
                for &(seed, weight) in teleport {
                    give(seed, spread * weight);
                }
            }
            budget = budget.saturating_sub(self.of(node).len() as u64 + 1);
            if budget == 0 {
                break;
            }
        }
        estimate
    }

    /// Global power iteration: the score of every node.
    fn power_iteration(&self, teleport: &[(usize, f64)], options: &PageRankOptions) -> Vec<f64> {
        let n = self.offsets.len() - 1;
        let out_weight: Vec<f64> = (0..n).map(|node| self.out_weight(node, options)).collect();
        let damping = options.damping.clamp(0.0, 1.0);
        let mut rank = vec![0.0f64; n];
        for &(node, weight) in teleport {
            rank[node] += weight;
        }
        let mut next = vec![0.0f64; n];
        for _ in 0..options.max_iterations {
            next.iter_mut().for_each(|x| *x = 0.0);
            // Mass is conserved: what does not follow an edge returns to the seeds.
            let mut returning = 1.0 - damping;
            for node in 0..n {
                let mass = rank[node];
                if mass == 0.0 {
                    continue;
                }
                if out_weight[node] <= 0.0 {
                    returning += damping * mass;
                    continue;
                }
                let share = damping * mass / out_weight[node];
                for entry in self
                    .of(node)
                    .iter()
                    .filter(|e| Self::usable(options.direction, e))
                {
                    next[entry.neighbour as usize] +=
                        share * options.weights.of(entry.kind).max(0.0);
                }
            }
            for &(node, weight) in teleport {
                next[node] += returning * weight;
            }
            let change: f64 = rank.iter().zip(&next).map(|(a, b)| (a - b).abs()).sum();
            std::mem::swap(&mut rank, &mut next);
            if change < options.tolerance {
                break;
            }
        }
        rank
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic sparse graph: a ring plus pseudo-random chords of every edge kind.
    fn synthetic(nodes: u32, chords: u32) -> Adjacency {
        let mut edges: Vec<(u32, u32, EdgeKind)> = (0..nodes)
            .map(|i| (i, (i + 1) % nodes, EdgeKind::Contains))
            .collect();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..chords {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let (from, to) = (
                (state % u64::from(nodes)) as u32,
                ((state >> 32) % u64::from(nodes)) as u32,
            );
            edges.push((from, to, EdgeKind::ALL[(i % 4) as usize]));
        }
        Adjacency::new(nodes as usize, &edges)
    }

    #[test]
    fn auto_picks_power_iteration_on_small_graphs_and_push_on_large_ones() {
        let options = PageRankOptions::default();
        assert!(synthetic(100, 300).power_iteration_is_cheaper(&options));
        assert!(!synthetic(100_000, 300_000).power_iteration_is_cheaper(&options));
    }

    #[test]
    fn push_matches_power_iteration_on_a_larger_graph() {
        let graph = synthetic(20_000, 60_000);
        let seeds = [(NodeId(7), 1.0), (NodeId(12_345), 3.0)];
        let push = graph.personalized_pagerank(
            &seeds,
            &PageRankOptions {
                method: PageRankMethod::Push,
                tolerance: 1e-8,
                ..PageRankOptions::default()
            },
        );
        let exact = graph.personalized_pagerank(
            &seeds,
            &PageRankOptions {
                method: PageRankMethod::PowerIteration,
                max_iterations: 200,
                tolerance: 1e-12,
                ..PageRankOptions::default()
            },
        );
        let top = |ranked: &[(NodeId, f64)]| {
            ranked
                .iter()
                .take(10)
                .map(|(id, _)| *id)
                .collect::<Vec<_>>()
        };
        assert_eq!(top(&push), top(&exact));
        let exact_of: std::collections::HashMap<NodeId, f64> = exact.into_iter().collect();
        for (id, score) in push.iter().take(100) {
            let reference = exact_of.get(id).copied().unwrap_or(0.0);
            assert!(*score <= reference + 1e-9, "push over-estimates {id:?}");
            assert!(
                reference - score < 1e-4,
                "{id:?}: push {score} vs exact {reference}"
            );
        }
    }

    #[test]
    fn direction_and_weights_restrict_the_walk() {
        // 0 -> 1 -> 2, and 3 -> 0.
        let graph = Adjacency::new(
            4,
            &[
                (0, 1, EdgeKind::Imports),
                (1, 2, EdgeKind::References),
                (3, 0, EdgeKind::Tests),
            ],
        );
        let reached = |options: PageRankOptions| {
            let mut ids: Vec<u32> = graph
                .personalized_pagerank(&[(NodeId(0), 1.0)], &options)
                .into_iter()
                .map(|(id, _)| id.0)
                .collect();
            ids.sort_unstable();
            ids
        };
        for method in [PageRankMethod::Push, PageRankMethod::PowerIteration] {
            let base = PageRankOptions {
                method,
                ..PageRankOptions::default()
            };
            assert_eq!(
                reached(PageRankOptions {
                    direction: Direction::Outgoing,
                    ..base.clone()
                }),
                [0, 1, 2]
            );
            assert_eq!(
                reached(PageRankOptions {
                    direction: Direction::Incoming,
                    ..base.clone()
                }),
                [0, 3]
            );
            assert_eq!(reached(base.clone()), [0, 1, 2, 3]);
            let no_imports = EdgeWeights {
                imports: 0.0,
                ..EdgeWeights::default()
            };
            assert_eq!(
                reached(PageRankOptions {
                    weights: no_imports,
                    ..base.clone()
                }),
                [0, 3]
            );
        }
    }
}
