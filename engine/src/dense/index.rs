//! Vector search over one snapshot's chunks, and reranking of given candidates.
//!
//! [`DenseIndex`] holds one normalized vector per item. Below
//! [`IndexOptions::exact_below`] items it searches exactly (a dot product with every vector: at
//! 384 dimensions, 20k vectors take a few milliseconds, and exact is never wrong); above it, it also
//! builds an HNSW graph (hnsw_rs) and searches that. The index is rebuilt from the embedding cache
//! rather than persisted: vectors come from the cache in one read, and the graph build time is
//! recorded in `docs/dense.md`.
//!
//! [`rerank`] is the mode for when no full index exists: it embeds only the candidates it is given
//! (through the cache, so a candidate is embedded at most once per model) and orders them by
//! similarity to the query.
//!
//! Keys are opaque (`K`): the snapshot index decides whether a key is a chunk id, a path and line
//! range, or anything else. Scores are cosine similarities in `[-1, 1]`, higher is closer.

use std::time::Instant;

use hnsw_rs::prelude::{Distance, Hnsw};

use super::cache::{EmbedCounts, EmbeddingCache};
use super::model::ModelIdentity;
use super::{DenseError, Embedder};

/// How an index searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    Exact,
    Hnsw,
}

/// Options of a [`DenseIndex`].
#[derive(Debug, Clone)]
pub struct IndexOptions {
    /// Item count from which an HNSW graph is built; below it, search is exact.
    pub exact_below: usize,
    /// HNSW: links per node (hnsw_rs `max_nb_connection`).
    pub max_connections: usize,
    /// HNSW: candidate list size while building.
    pub ef_construction: usize,
    /// HNSW: candidate list size while searching (at least `k`).
    pub ef_search: usize,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            exact_below: 20_000,
            max_connections: 16,
            ef_construction: 200,
            ef_search: 96,
        }
    }
}

/// One search result.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseHit<K> {
    pub key: K,
    /// Cosine similarity to the query.
    pub score: f32,
}

/// What building an index cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BuildReport {
    pub counts: EmbedCounts,
    pub mode: SearchMode,
    pub embed_seconds: f64,
    pub graph_seconds: f64,
}

/// Cosine distance for normalized vectors, clamped at zero: rounding can push a dot product of
/// unit vectors a hair above one, which hnsw_rs's own `DistDot` turns into a panic.
#[derive(Debug, Clone, Copy, Default)]
pub struct UnitCosine;

impl Distance<f32> for UnitCosine {
    fn eval(&self, a: &[f32], b: &[f32]) -> f32 {
        (1.0 - dot(a, b)).max(0.0)
    }
}

/// Dot product with eight independent accumulators, which lets the compiler vectorize it.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let chunks = a.len() / 8 * 8;
    for (xa, xb) in a[..chunks].chunks_exact(8).zip(b[..chunks].chunks_exact(8)) {
        for i in 0..8 {
            acc[i] += xa[i] * xb[i];
        }
    }
    let tail: f32 = a[chunks..]
        .iter()
        .zip(&b[chunks..])
        .map(|(x, y)| x * y)
        .sum();
    acc.iter().sum::<f32>() + tail
}

/// Dense vectors of one snapshot, searchable by similarity.
pub struct DenseIndex<K> {
    identity: ModelIdentity,
    keys: Vec<K>,
    vectors: Vec<f32>,
    graph: Option<Hnsw<'static, f32, UnitCosine>>,
    ef_search: usize,
}

impl<K> std::fmt::Debug for DenseIndex<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DenseIndex")
            .field("identity", &self.identity)
            .field("len", &self.keys.len())
            .field("hnsw", &self.graph.is_some())
            .finish()
    }
}

impl<K: Clone> DenseIndex<K> {
    /// Embeds the items' texts (through the cache: only new texts reach the model) and indexes
    /// them. `progress` gets (texts embedded, texts to embed).
    pub fn build<T: AsRef<str>>(
        embedder: &Embedder,
        cache: &EmbeddingCache,
        items: &[(K, T)],
        options: &IndexOptions,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(Self, BuildReport), DenseError> {
        let texts: Vec<&str> = items.iter().map(|(_, t)| t.as_ref()).collect();
        let started = Instant::now();
        let (vectors, counts) = cache.embed(embedder, &texts, progress)?;
        let embed_seconds = started.elapsed().as_secs_f64();
        let keys = items.iter().map(|(k, _)| k.clone()).collect();
        let started = Instant::now();
        let index = Self::from_vectors(embedder.identity().clone(), keys, vectors, options)?;
        let report = BuildReport {
            counts,
            mode: index.mode(),
            embed_seconds,
            graph_seconds: started.elapsed().as_secs_f64(),
        };
        Ok((index, report))
    }

    /// Indexes vectors already computed: `vectors` holds `keys.len() × identity.dim` floats, each
    /// vector L2-normalized (as the embedder returns them).
    pub fn from_vectors(
        identity: ModelIdentity,
        keys: Vec<K>,
        vectors: Vec<f32>,
        options: &IndexOptions,
    ) -> Result<Self, DenseError> {
        let dim = identity.dim;
        if vectors.len() != keys.len() * dim {
            return Err(DenseError::Dimension {
                expected: keys.len() * dim,
                got: vectors.len(),
            });
        }
        let graph = (keys.len() >= options.exact_below.max(1)).then(|| {
            let graph = Hnsw::new(
                options.max_connections,
                keys.len(),
                16,
                options.ef_construction,
                UnitCosine,
            );
            let points: Vec<(&[f32], usize)> = vectors
                .chunks_exact(dim)
                .enumerate()
                .map(|(i, v)| (v, i))
                .collect();
            graph.parallel_insert_slice(&points);
            let mut graph = graph;
            graph.set_searching_mode(true);
            graph
        });
        Ok(DenseIndex {
            identity,
            keys,
            vectors,
            graph,
            ef_search: options.ef_search,
        })
    }

    pub fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn mode(&self) -> SearchMode {
        if self.graph.is_some() {
            SearchMode::Hnsw
        } else {
            SearchMode::Exact
        }
    }

    /// The `k` items closest to `query` (a normalized vector of the index's model), best first.
    /// A query of the wrong dimension finds nothing; use [`DenseIndex::try_search`] to be told.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<DenseHit<K>> {
        self.try_search(query, k).unwrap_or_default()
    }

    /// [`DenseIndex::search`] that reports a query of the wrong dimension.
    pub fn try_search(&self, query: &[f32], k: usize) -> Result<Vec<DenseHit<K>>, DenseError> {
        if query.len() != self.identity.dim {
            return Err(DenseError::Dimension {
                expected: self.identity.dim,
                got: query.len(),
            });
        }
        let ranked = match &self.graph {
            Some(graph) => graph
                .search(query, k, self.ef_search.max(k))
                .into_iter()
                .map(|n| (n.d_id, 1.0 - n.distance))
                .collect(),
            None => self.exact_ranking(query, k),
        };
        Ok(self.hits(ranked))
    }

    /// Exact search, whatever the index size (the reference the HNSW graph is measured against).
    pub fn exact_search(&self, query: &[f32], k: usize) -> Vec<DenseHit<K>> {
        if query.len() != self.identity.dim {
            return Vec::new();
        }
        self.hits(self.exact_ranking(query, k))
    }

    /// Exact search among the items `accept` admits (a path filter, a subset): scores only those,
    /// whatever the index size, so a narrow filter never misses what an approximate graph would.
    pub fn search_where(
        &self,
        query: &[f32],
        k: usize,
        accept: &dyn Fn(&K) -> bool,
    ) -> Result<Vec<DenseHit<K>>, DenseError> {
        if query.len() != self.identity.dim {
            return Err(DenseError::Dimension {
                expected: self.identity.dim,
                got: query.len(),
            });
        }
        let scores: Vec<(usize, f32)> = self
            .vectors
            .chunks_exact(self.identity.dim)
            .enumerate()
            .filter(|(i, _)| accept(&self.keys[*i]))
            .map(|(i, v)| (i, dot(query, v)))
            .collect();
        Ok(self.hits(top_k(scores, k)))
    }

    /// Embeds `query` with `embedder` (which must be the index's model) and searches.
    pub fn search_text(
        &self,
        embedder: &Embedder,
        query: &str,
        k: usize,
    ) -> Result<Vec<DenseHit<K>>, DenseError> {
        if embedder.identity() != &self.identity {
            return Err(DenseError::ModelMismatch {
                expected: self.identity.to_string(),
                got: embedder.identity().to_string(),
            });
        }
        self.try_search(&embedder.embed_query(query)?, k)
    }

    fn exact_ranking(&self, query: &[f32], k: usize) -> Vec<(usize, f32)> {
        let scores: Vec<(usize, f32)> = self
            .vectors
            .chunks_exact(self.identity.dim)
            .map(|v| dot(query, v))
            .enumerate()
            .collect();
        top_k(scores, k)
    }

    fn hits(&self, ranked: Vec<(usize, f32)>) -> Vec<DenseHit<K>> {
        ranked
            .into_iter()
            .map(|(i, score)| DenseHit {
                key: self.keys[i].clone(),
                score,
            })
            .collect()
    }
}

/// The `k` best (index, score) pairs, best first; ties go to the lower index, so results are
/// deterministic.
fn top_k(mut scores: Vec<(usize, f32)>, k: usize) -> Vec<(usize, f32)> {
    let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if k == 0 {
        return Vec::new();
    }
    if scores.len() > k {
        scores.select_nth_unstable_by(k - 1, order);
        scores.truncate(k);
    }
    scores.sort_by(order);
    scores
}

/// Orders `candidates` by similarity to `query`, embedding only the candidates (through the
/// cache). For when there is no full index: give it the top lexical candidates.
pub fn rerank<K: Clone, T: AsRef<str>>(
    embedder: &Embedder,
    cache: &EmbeddingCache,
    query: &str,
    candidates: &[(K, T)],
) -> Result<(Vec<DenseHit<K>>, EmbedCounts), DenseError> {
    let texts: Vec<&str> = candidates.iter().map(|(_, t)| t.as_ref()).collect();
    let (vectors, counts) = cache.embed(embedder, &texts, &mut |_, _| {})?;
    let query = embedder.embed_query(query)?;
    let scores = vectors
        .chunks_exact(embedder.dim())
        .map(|v| dot(&query, v))
        .enumerate()
        .collect();
    let hits = top_k(scores, candidates.len())
        .into_iter()
        .map(|(i, score)| DenseHit {
            key: candidates[i].0.clone(),
            score,
        })
        .collect();
    Ok((hits, counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(dim: usize) -> ModelIdentity {
        ModelIdentity {
            name: "synthetic".into(),
            fingerprint: "00".repeat(32),
            dim,
        }
    }

    /// Deterministic pseudo-random unit vectors (xorshift), clustered a little like real
    /// embeddings: each is a random mix around one of a few centres.
    fn synthetic(n: usize, dim: usize, seed: u64) -> Vec<f32> {
        let mut state = seed.max(1);
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f32 / (1u64 << 53) as f32 - 0.5
        };
        let centres: Vec<Vec<f32>> = (0..8).map(|_| (0..dim).map(|_| next()).collect()).collect();
        let mut out = Vec::with_capacity(n * dim);
        for i in 0..n {
            let c = &centres[i % centres.len()];
            let v: Vec<f32> = c.iter().map(|x| x + 0.8 * next()).collect();
            let norm = dot(&v, &v).sqrt();
            out.extend(v.iter().map(|x| x / norm));
        }
        out
    }

    #[test]
    fn dot_matches_naive() {
        let a: Vec<f32> = (0..19).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..19).map(|i| 1.0 - i as f32 * 0.1).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-4);
    }

    #[test]
    fn exact_search_ranks_by_cosine() {
        let vectors = vec![1.0, 0.0, 0.0, 1.0, 0.6, 0.8];
        let index = DenseIndex::from_vectors(
            identity(2),
            vec!["x", "y", "xy"],
            vectors,
            &IndexOptions::default(),
        )
        .unwrap();
        assert_eq!(index.mode(), SearchMode::Exact);
        let hits = index.search(&[0.8, 0.6], 2);
        let keys: Vec<&str> = hits.iter().map(|h| h.key).collect();
        assert_eq!(keys, vec!["xy", "x"]);
        assert!((hits[0].score - 0.96).abs() < 1e-6);
        assert!(index.search(&[1.0], 2).is_empty());
        assert!(matches!(
            index.try_search(&[1.0], 2),
            Err(DenseError::Dimension {
                expected: 2,
                got: 1
            })
        ));
        assert_eq!(index.search(&[1.0, 0.0], 10).len(), 3);
        assert!(index.search(&[1.0, 0.0], 0).is_empty());
    }

    #[test]
    fn hnsw_agrees_with_exact_search() {
        let (n, dim, queries, k) = (3000, 48, 100, 10);
        let vectors = synthetic(n, dim, 7);
        let options = IndexOptions {
            exact_below: 1000,
            ..IndexOptions::default()
        };
        let index =
            DenseIndex::from_vectors(identity(dim), (0..n).collect(), vectors, &options).unwrap();
        assert_eq!(index.mode(), SearchMode::Hnsw);
        let probes = synthetic(queries, dim, 99);
        let mut found = 0;
        for q in probes.chunks_exact(dim) {
            let exact: Vec<usize> = index.exact_search(q, k).iter().map(|h| h.key).collect();
            let approx = index.search(q, k);
            assert_eq!(approx.len(), k);
            // Scores are true cosines of the returned items, best first.
            for pair in approx.windows(2) {
                assert!(pair[0].score >= pair[1].score - 1e-6);
            }
            found += approx.iter().filter(|h| exact.contains(&h.key)).count();
        }
        let recall = found as f64 / (queries * k) as f64;
        assert!(recall >= 0.95, "recall@{k} of HNSW vs exact: {recall}");
    }

    #[test]
    fn filtered_search_scores_only_admitted_items() {
        let vectors = vec![1.0, 0.0, 0.0, 1.0, 0.6, 0.8];
        let index = DenseIndex::from_vectors(
            identity(2),
            vec!["x", "y", "xy"],
            vectors,
            &IndexOptions::default(),
        )
        .unwrap();
        let hits = index
            .search_where(&[1.0, 0.0], 5, &|k: &&str| *k != "x")
            .unwrap();
        let keys: Vec<&str> = hits.iter().map(|h| h.key).collect();
        assert_eq!(keys, vec!["xy", "y"]);
        assert!(index.search_where(&[1.0], 5, &|_| true).is_err());
    }

    #[test]
    fn top_k_is_deterministic_on_ties() {
        let scores = vec![(0, 0.5), (1, 0.9), (2, 0.5), (3, 0.1)];
        assert_eq!(top_k(scores.clone(), 3), vec![(1, 0.9), (0, 0.5), (2, 0.5)]);
        assert_eq!(top_k(scores, 9).len(), 4);
    }

    #[test]
    fn mismatched_vector_count_is_an_error() {
        let err = DenseIndex::from_vectors(
            identity(3),
            vec![1, 2],
            vec![0.0; 5],
            &IndexOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(
            err,
            DenseError::Dimension {
                expected: 6,
                got: 5
            }
        ));
    }
}
