//! Vector search over one snapshot's chunks, and reranking of given candidates.
//!
//! [`DenseIndex`] holds one normalized vector per item and searches exactly (a dot product with
//! every vector: a few milliseconds for tens of thousands of vectors, and never wrong) unless it has
//! an HNSW graph (hnsw_rs). Where the graph comes from:
//! - [`DenseIndex::from_vectors`] builds one in memory when there are at least
//!   [`IndexOptions::exact_below`] items (library use: vectors the caller computed);
//! - [`DenseIndex::with_store`] looks the graph up in a [`GraphStore`] under a digest of the
//!   vectors. With `build` it builds and stores a missing graph (an explicit index build); without
//!   it, a missing graph means exact search, because one exact search costs milliseconds and a
//!   build minutes. A stored graph is loaded lazily, like renting before buying: searches stay
//!   exact until they have spent about what loading the graph costs
//!   ([`IndexOptions::graph_load_cost_per_mb`] times its size), then the graph is loaded. A
//!   process that asks one question never pays for a load; one that asks hundreds gets HNSW
//!   speed, and neither pays more than about twice the better of the two choices.
//!
//! [`rerank`] is the mode for when no full index exists: it embeds only the candidates it is given
//! (through the cache, so a candidate is embedded at most once per model) and orders them by
//! similarity to the query.
//!
//! Keys are opaque (`K`): the snapshot index decides whether a key is a chunk id, a path and line
//! range, or anything else. Scores are cosine similarities in `[-1, 1]`, higher is closer.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hnsw_rs::prelude::Distance;

use super::cache::{EmbedCounts, EmbeddingCache};
use super::graph_store::{Graph, GraphKey, GraphParams, GraphStore, LoadOutcome, build_graph};
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
    /// A stored graph is loaded once exact searches on the index have taken this long per
    /// megabyte of stored graph, an estimate of what loading it costs (measured: 4–6.5 ms per MB
    /// for django's 67 MB graph on a 2-core VM, see `docs/dense.md`). `Duration::ZERO` loads it at
    /// the first search.
    pub graph_load_cost_per_mb: Duration,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            exact_below: 20_000,
            max_connections: 16,
            ef_construction: 200,
            ef_search: 96,
            graph_load_cost_per_mb: Duration::from_millis(5),
        }
    }
}

impl IndexOptions {
    /// The parameters that shape a graph (part of a stored graph's key).
    pub fn graph_params(&self) -> GraphParams {
        GraphParams {
            max_connections: self.max_connections,
            ef_construction: self.ef_construction,
            max_layers: 16,
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

/// Where an index's HNSW graph stands.
#[derive(Debug, Clone, PartialEq)]
pub enum GraphState {
    /// Fewer items than [`IndexOptions::exact_below`]: exact search, no graph wanted.
    NotNeeded,
    /// Enough items for a graph, but none was built or stored: exact search.
    Missing,
    /// A graph is stored and will be loaded once exact searches have cost about as much.
    Stored,
    /// The graph was loaded from the store and is searched.
    Loaded { seconds: f64 },
    /// The graph was built here (and stored, when the index has a store) and is searched.
    Built { seconds: f64 },
    /// The stored graph could not be used (it was removed from the store; exact search).
    Failed { reason: String },
}

impl GraphState {
    /// A short description for people (`swex index`).
    pub fn describe(&self) -> String {
        match self {
            GraphState::NotNeeded => "exact search (below the HNSW threshold)".to_owned(),
            GraphState::Missing => "exact search (no HNSW graph built)".to_owned(),
            GraphState::Stored => "HNSW graph stored (loaded when searches warrant it)".to_owned(),
            GraphState::Loaded { seconds } => format!("HNSW graph loaded in {seconds:.2} s"),
            GraphState::Built { seconds } => format!("HNSW graph built in {seconds:.1} s"),
            GraphState::Failed { reason } => {
                format!("exact search (stored graph unusable: {reason})")
            }
        }
    }
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

/// Dot product of two vectors of equal length: AVX2 with FMA when the CPU has them (detected at
/// run time, so one binary serves every x86-64 machine), else eight independent accumulators,
/// which the compiler vectorizes with the baseline instruction set. Exact search and every HNSW
/// distance go through here.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports the features `dot_avx2` is compiled for (checked just above).
        return unsafe { dot_avx2(a, b) };
    }
    dot_portable(a, b)
}

fn dot_portable(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let chunks = a.len().min(b.len()) / 8 * 8;
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

/// Four 8-lane FMA accumulators (32 floats per step) hide the FMA latency.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
    use std::arch::x86_64::*;
    let len = a.len().min(b.len());
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let mut acc = [_mm256_setzero_ps(); 4];
    let mut i = 0;
    // Every load below reads 8 floats inside both slices (each holds at least `len`); unaligned
    // loads accept any address.
    while i + 32 <= len {
        for (lane, sum) in acc.iter_mut().enumerate() {
            let offset = i + lane * 8;
            *sum = _mm256_fmadd_ps(
                // SAFETY: `offset + 8 <= i + 32 <= len`.
                unsafe { _mm256_loadu_ps(pa.add(offset)) },
                // SAFETY: `offset + 8 <= i + 32 <= len`.
                unsafe { _mm256_loadu_ps(pb.add(offset)) },
                *sum,
            );
        }
        i += 32;
    }
    while i + 8 <= len {
        acc[0] = _mm256_fmadd_ps(
            // SAFETY: `i + 8 <= len`.
            unsafe { _mm256_loadu_ps(pa.add(i)) },
            // SAFETY: `i + 8 <= len`.
            unsafe { _mm256_loadu_ps(pb.add(i)) },
            acc[0],
        );
        i += 8;
    }
    let sum = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
    let mut lanes = [0f32; 8];
    // SAFETY: `lanes` holds 8 floats.
    unsafe { _mm256_storeu_ps(lanes.as_mut_ptr(), sum) };
    let tail: f32 = a[i..len].iter().zip(&b[i..len]).map(|(x, y)| x * y).sum();
    lanes.iter().sum::<f32>() + tail
}

/// A graph in the store that this index may load.
struct StoredGraph {
    store: GraphStore,
    key: GraphKey,
    /// Exact-search time after which the graph is loaded.
    budget_nanos: u64,
    spent_nanos: AtomicU64,
}

/// Dense vectors of one snapshot, searchable by similarity.
pub struct DenseIndex<K> {
    identity: ModelIdentity,
    keys: Vec<K>,
    vectors: Vec<f32>,
    /// Set once: the graph searched from then on, or `None` when exact search stays.
    graph: OnceLock<Option<Box<Graph>>>,
    /// How `graph` was (or will be) filled.
    state: OnceLock<GraphState>,
    initial_state: GraphState,
    stored: Option<StoredGraph>,
    ef_search: usize,
}

impl<K> std::fmt::Debug for DenseIndex<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DenseIndex")
            .field("identity", &self.identity)
            .field("len", &self.keys.len())
            .field("graph", self.state.get().unwrap_or(&self.initial_state))
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
    /// vector L2-normalized (as the embedder returns them). Builds an HNSW graph in memory when
    /// there are at least `options.exact_below` items.
    pub fn from_vectors(
        identity: ModelIdentity,
        keys: Vec<K>,
        vectors: Vec<f32>,
        options: &IndexOptions,
    ) -> Result<Self, DenseError> {
        let mut index = Self::exact(identity, keys, vectors, options)?;
        if index.keys.len() >= options.exact_below.max(1) {
            let (graph, seconds) = build_graph(
                &index.vectors,
                index.identity.dim,
                &options.graph_params(),
                &|_, _| {},
            );
            index.set_graph(graph, GraphState::Built { seconds });
        }
        Ok(index)
    }

    /// Indexes vectors with the HNSW graph of `store` (see the module docs): below
    /// `options.exact_below` items no graph is used; otherwise a stored graph of exactly these
    /// vectors is loaded lazily, and a missing one is built and stored when `build` is given (it
    /// gets (points inserted, points) as the build goes); without it, search is exact. Errors: the
    /// vectors do not fit `identity`, or a graph built here could not be stored.
    pub fn with_store(
        identity: ModelIdentity,
        keys: Vec<K>,
        vectors: Vec<f32>,
        options: &IndexOptions,
        store: &GraphStore,
        build: Option<&dyn Fn(usize, usize)>,
    ) -> Result<Self, DenseError> {
        let mut index = Self::exact(identity, keys, vectors, options)?;
        if index.keys.len() < options.exact_below.max(1) {
            return Ok(index);
        }
        let dim = index.identity.dim;
        let params = options.graph_params();
        let key = GraphKey::of(&index.vectors, dim, &params);
        if let Some(bytes) = store.stored_bytes(&key) {
            let budget = options.graph_load_cost_per_mb.as_nanos() as f64 * bytes as f64 / 1e6;
            index.initial_state = GraphState::Stored;
            index.stored = Some(StoredGraph {
                store: store.clone(),
                key,
                budget_nanos: budget as u64,
                spent_nanos: AtomicU64::new(0),
            });
            if budget == 0.0 {
                index.load_stored();
            }
        } else if let Some(progress) = build {
            let (graph, seconds) = build_graph(&index.vectors, dim, &params, progress);
            store.save(&key, &graph, index.keys.len(), dim, params, seconds)?;
            index.set_graph(graph, GraphState::Built { seconds });
        } else {
            index.initial_state = GraphState::Missing;
        }
        Ok(index)
    }

    /// An index that searches exactly (checks the vector count).
    fn exact(
        identity: ModelIdentity,
        keys: Vec<K>,
        vectors: Vec<f32>,
        options: &IndexOptions,
    ) -> Result<Self, DenseError> {
        if vectors.len() != keys.len() * identity.dim {
            return Err(DenseError::Dimension {
                expected: keys.len() * identity.dim,
                got: vectors.len(),
            });
        }
        Ok(DenseIndex {
            identity,
            keys,
            vectors,
            graph: OnceLock::new(),
            state: OnceLock::new(),
            initial_state: GraphState::NotNeeded,
            stored: None,
            ef_search: options.ef_search,
        })
    }

    fn set_graph(&mut self, graph: Graph, state: GraphState) {
        self.graph = OnceLock::from(Some(Box::new(graph)));
        self.state = OnceLock::from(state);
    }

    /// Loads the stored graph (once; concurrent searches wait for it).
    fn load_stored(&self) {
        let Some(stored) = &self.stored else {
            return;
        };
        self.graph.get_or_init(|| {
            let started = Instant::now();
            let outcome = stored
                .store
                .load(&stored.key, self.keys.len(), self.identity.dim);
            let (graph, state) = match outcome {
                LoadOutcome::Loaded(graph) => (
                    Some(graph),
                    GraphState::Loaded {
                        seconds: started.elapsed().as_secs_f64(),
                    },
                ),
                LoadOutcome::Absent => (
                    None,
                    GraphState::Failed {
                        reason: "removed from the store".to_owned(),
                    },
                ),
                LoadOutcome::Invalid(reason) => (None, GraphState::Failed { reason }),
            };
            let _ = self.state.set(state);
            graph
        });
    }

    /// Where the index's graph stands.
    pub fn graph_state(&self) -> GraphState {
        self.state
            .get()
            .cloned()
            .unwrap_or_else(|| self.initial_state.clone())
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

    /// How the next search runs (a stored graph not loaded yet counts as exact).
    pub fn mode(&self) -> SearchMode {
        if self.loaded_graph().is_some() {
            SearchMode::Hnsw
        } else {
            SearchMode::Exact
        }
    }

    fn loaded_graph(&self) -> Option<&Graph> {
        self.graph.get().and_then(|g| g.as_deref())
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
        // The graph sizes its search by `k`: never by more than there is to find.
        let k = k.min(self.keys.len());
        if let Some(graph) = self.loaded_graph() {
            let ranked = graph
                .search(query, k, self.ef_search.max(k))
                .into_iter()
                .map(|n| (n.d_id, 1.0 - n.distance))
                .collect();
            return Ok(self.hits(ranked));
        }
        let started = Instant::now();
        let ranked = self.exact_ranking(query, k);
        self.account_exact(started.elapsed());
        Ok(self.hits(ranked))
    }

    /// Counts exact-search time against a stored graph's load budget; loads it when spent.
    fn account_exact(&self, elapsed: Duration) {
        let Some(stored) = &self.stored else {
            return;
        };
        if self.graph.get().is_some() {
            return;
        }
        let nanos = elapsed.as_nanos() as u64;
        let spent = stored.spent_nanos.fetch_add(nanos, Ordering::Relaxed) + nanos;
        if spent >= stored.budget_nanos {
            self.load_stored();
        }
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
pub(crate) mod tests {
    use super::*;

    pub(crate) fn identity(dim: usize) -> ModelIdentity {
        ModelIdentity {
            name: "synthetic".into(),
            fingerprint: "00".repeat(32),
            dim,
        }
    }

    /// Deterministic pseudo-random unit vectors (xorshift), clustered a little like real
    /// embeddings: each is a random mix around one of a few centres.
    pub(crate) fn synthetic(n: usize, dim: usize, seed: u64) -> Vec<f32> {
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
    fn dot_matches_naive_at_every_length_on_every_path() {
        // Lengths around the 8- and 32-float steps, and the model's 384.
        for len in [0, 1, 7, 8, 9, 19, 31, 32, 33, 40, 63, 64, 65, 100, 384] {
            let a: Vec<f32> = (0..len).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..len).map(|i| 1.0 - i as f32 * 0.01).collect();
            let naive: f64 = a.iter().zip(&b).map(|(x, y)| *x as f64 * *y as f64).sum();
            let tolerance = 1e-5 * (1.0 + len as f64);
            assert!((dot(&a, &b) as f64 - naive).abs() < tolerance, "dot, {len}");
            assert!(
                (dot_portable(&a, &b) as f64 - naive).abs() < tolerance,
                "portable, {len}"
            );
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                // SAFETY: the features were just detected.
                let fast = unsafe { dot_avx2(&a, &b) } as f64;
                assert!((fast - naive).abs() < tolerance, "avx2, {len}");
            }
        }
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

    /// A small index over the store: 600 clustered vectors of 24 dimensions, graph from 100.
    fn stored_index(store: &GraphStore, build: bool, cost_per_mb: Duration) -> DenseIndex<usize> {
        let options = IndexOptions {
            exact_below: 100,
            graph_load_cost_per_mb: cost_per_mb,
            ..IndexOptions::default()
        };
        let vectors = synthetic(600, 24, 5);
        let progress = |_: usize, _: usize| {};
        let build: Option<&dyn Fn(usize, usize)> = if build { Some(&progress) } else { None };
        DenseIndex::with_store(
            identity(24),
            (0..600).collect(),
            vectors,
            &options,
            store,
            build,
        )
        .unwrap()
    }

    fn recall_against_exact(index: &DenseIndex<usize>) -> f64 {
        let probes = synthetic(40, 24, 77);
        let mut found = 0;
        for q in probes.chunks_exact(24) {
            let exact: Vec<usize> = index.exact_search(q, 10).iter().map(|h| h.key).collect();
            found += index
                .search(q, 10)
                .iter()
                .filter(|h| exact.contains(&h.key))
                .count();
        }
        found as f64 / 400.0
    }

    #[test]
    fn a_graph_is_built_and_stored_only_when_asked_and_then_found_by_its_vectors() {
        let dir = tempfile::tempdir().unwrap();
        let store = GraphStore::new(dir.path(), 4);
        let never = Duration::from_secs(3600);

        // Not asked to build: exact search, nothing stored.
        let missing = stored_index(&store, false, never);
        assert_eq!(missing.graph_state(), GraphState::Missing);
        assert_eq!(missing.mode(), SearchMode::Exact);
        assert!(store.keys().is_empty());

        // Asked: built, stored, searched.
        let built = stored_index(&store, true, never);
        assert!(matches!(built.graph_state(), GraphState::Built { .. }));
        assert_eq!(built.mode(), SearchMode::Hnsw);
        assert_eq!(store.keys().len(), 1);
        assert!(recall_against_exact(&built) >= 0.9);

        // The same vectors find the stored graph (and do not build another one, even when asked).
        let found = stored_index(&store, true, never);
        assert_eq!(found.graph_state(), GraphState::Stored);
        assert_eq!(store.keys().len(), 1);

        // Other vectors do not.
        let options = IndexOptions {
            exact_below: 100,
            ..IndexOptions::default()
        };
        let other = DenseIndex::with_store(
            identity(24),
            (0..600).collect(),
            synthetic(600, 24, 6),
            &options,
            &store,
            None,
        )
        .unwrap();
        assert_eq!(other.graph_state(), GraphState::Missing);

        // Below the threshold no graph is wanted.
        let small = DenseIndex::with_store(
            identity(24),
            (0..50).collect(),
            synthetic(50, 24, 5),
            &options,
            &store,
            Some(&|_, _| panic!("no graph below the threshold")),
        )
        .unwrap();
        assert_eq!(small.graph_state(), GraphState::NotNeeded);
        assert_eq!(store.keys().len(), 1);
    }

    #[test]
    fn a_stored_graph_is_loaded_once_exact_searches_have_cost_about_as_much() {
        let dir = tempfile::tempdir().unwrap();
        let store = GraphStore::new(dir.path(), 4);
        let built = stored_index(&store, true, Duration::ZERO);
        let probes = synthetic(20, 24, 31);

        // Loading costs nothing: loaded at once, and it answers like the graph it was saved from.
        let eager = stored_index(&store, false, Duration::ZERO);
        assert!(matches!(eager.graph_state(), GraphState::Loaded { .. }));
        assert_eq!(eager.mode(), SearchMode::Hnsw);
        for q in probes.chunks_exact(24) {
            assert_eq!(eager.search(q, 10), built.search(q, 10));
        }

        // Loading is dear: searches stay exact.
        let never = stored_index(&store, false, Duration::from_secs(3600));
        for q in probes.chunks_exact(24) {
            assert_eq!(never.search(q, 10), never.exact_search(q, 10));
        }
        assert_eq!(never.graph_state(), GraphState::Stored);
        assert_eq!(never.mode(), SearchMode::Exact);

        // Loading is cheap (a nanosecond per MB): the first search is exact and pays for it.
        let lazy = stored_index(&store, false, Duration::from_nanos(1));
        assert_eq!(lazy.mode(), SearchMode::Exact);
        let q = &probes[..24];
        assert_eq!(lazy.search(q, 10), lazy.exact_search(q, 10));
        assert!(matches!(lazy.graph_state(), GraphState::Loaded { .. }));
        assert_eq!(lazy.search(q, 10), built.search(q, 10));
    }

    #[test]
    fn a_damaged_stored_graph_falls_back_to_exact_search_and_is_rebuilt_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        let store = GraphStore::new(dir.path(), 4);
        stored_index(&store, true, Duration::ZERO);
        let key = store.keys().pop().unwrap();
        let data = dir.path().join(key.as_str()).join("hnsw.hnsw.data");
        let mut bytes = std::fs::read(&data).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x40;
        std::fs::write(&data, bytes).unwrap();

        let damaged = stored_index(&store, false, Duration::ZERO);
        match damaged.graph_state() {
            GraphState::Failed { reason } => assert!(reason.contains("blake3"), "{reason}"),
            other => panic!("expected Failed, got {other:?}"),
        }
        assert_eq!(damaged.mode(), SearchMode::Exact);
        let q = &synthetic(1, 24, 3)[..];
        assert_eq!(damaged.search(q, 10), damaged.exact_search(q, 10));
        assert!(store.keys().is_empty(), "the damaged graph is removed");

        let rebuilt = stored_index(&store, true, Duration::ZERO);
        assert!(matches!(rebuilt.graph_state(), GraphState::Built { .. }));
        assert_eq!(store.keys(), vec![key]);
    }
}
