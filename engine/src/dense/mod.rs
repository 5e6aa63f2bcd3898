//! Dense retrieval: embedding models, a persistent embedding cache and per-snapshot vector indexes.
//!
//! The pieces, in the order data flows through them:
//! - [`assets`]: the files a model needs (ONNX Runtime library, `model.onnx`, tokenizer files), the
//!   pinned table of the offline default, and the fetch/check logic behind `swex models`.
//! - [`model`]: which model to use ([`ModelSpec`]): the offline default, a fastembed model by name,
//!   or a local directory; resolved to files, pooling and an identity.
//! - [`embedder`]: [`Embedder`] runs the model (fastembed on a dynamically loaded ONNX Runtime) with
//!   batching tuned for small machines; [`passage_text`] builds the text embedded for a chunk.
//! - [`cache`]: [`EmbeddingCache`], vectors keyed by (model identity, hash of the exact text), shared
//!   by all snapshots and persisted as append-only, checksummed segment files.
//! - [`index`]: [`DenseIndex`], exact search below a size threshold and HNSW (hnsw_rs) above it,
//!   plus [`rerank`], which embeds only given candidates when there is no full index.
//! - [`graph_store`]: [`GraphStore`], HNSW graphs persisted under a digest of the vectors they
//!   index, so a graph is built once per vector set and loaded afterwards.
//!
//! What this module does not know: files, chunkers, snapshots or lexical search. Callers hand it
//! `(key, text)` pairs and get keys back, so the snapshot index decides what a key is.
//!
//! Absence is an ordinary outcome: without the runtime library or the model files every entry point
//! returns a [`DenseError`] for which [`DenseError::is_absent`] is true and whose message names the
//! fix (`swex models fetch`). Nothing here panics on missing assets.
//!
//! ```no_run
//! use swex_engine::dense::{DenseIndex, Embedder, EmbedderConfig, EmbeddingCache, IndexOptions};
//! # fn main() -> Result<(), swex_engine::dense::DenseError> {
//! let root = swex_engine::dense::default_cache_root();
//! let embedder = Embedder::open(&root, &EmbedderConfig::default())?;
//! let cache = EmbeddingCache::open(&root, embedder.identity())?;
//! let items = [("a.py:1-9", "def parse_url(u): ..."), ("b.py:1-5", "class Session: ...")];
//! let (index, _report) = DenseIndex::build(&embedder, &cache, &items, &IndexOptions::default(), &mut |_done, _total| {})?;
//! let query = embedder.embed_query("url parsing fails")?;
//! for hit in index.search(&query, 5) {
//!     println!("{} {:.3}", hit.key, hit.score);
//! }
//! # Ok(()) }
//! ```

pub mod assets;
pub mod cache;
pub mod embedder;
pub mod graph_store;
pub mod index;
pub mod model;

use std::path::{Path, PathBuf};

pub use assets::{AssetStatus, FetchOutcome};
pub use cache::{CacheStats, EmbedCounts, EmbeddingCache, TextKey};
pub use embedder::{Embedder, EmbedderConfig, TextUnit, passage_text};
pub use graph_store::{GraphKey, GraphParams, GraphStore};
pub use index::{BuildReport, DenseHit, DenseIndex, GraphState, IndexOptions, SearchMode, rerank};
pub use model::{ModelIdentity, ModelSpec};

/// Environment variable naming the swex cache root (models, embeddings, indexes).
pub const CACHE_DIR_ENV: &str = "SWEX_CACHE_DIR";

/// The swex cache root: `$SWEX_CACHE_DIR` when set, else `<user cache dir>/swex` (for example
/// `~/.cache/swex`), else `.cache/swex` under the working directory when the system names no user
/// cache directory. Models live in `<root>/models`, embeddings in `<root>/embeddings`.
pub fn default_cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os(CACHE_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::cache_dir()
        .map(|d| d.join("swex"))
        .unwrap_or_else(|| PathBuf::from(".cache/swex"))
}

/// Where model assets live under a cache root.
pub fn models_dir(cache_root: &Path) -> PathBuf {
    cache_root.join("models")
}

/// Everything that can go wrong in the dense layer. Messages name the file and the fix.
#[derive(Debug, thiserror::Error)]
pub enum DenseError {
    #[error(
        "ONNX Runtime library not found at {}: run `swex models fetch` (or set ORT_DYLIB_PATH to a libonnxruntime 1.24 or newer)",
        path.display()
    )]
    RuntimeMissing { path: PathBuf },
    #[error(
        "could not load the ONNX Runtime library {}: {message}; run `swex models fetch` to install a compatible one (1.24 or newer)",
        path.display()
    )]
    RuntimeLoad { path: PathBuf, message: String },
    #[error("embedding model `{model}` is not installed: {} is missing; run `swex models fetch{fetch_args}`", path.display())]
    ModelMissing {
        model: String,
        path: PathBuf,
        /// Extra arguments of the fetch command for a non-default model (`" --model X"`).
        fetch_args: String,
    },
    #[error("embedding model `{model}`: {message}")]
    Model { model: String, message: String },
    #[error("unknown model `{name}`: {hint}")]
    UnknownModel { name: String, hint: String },
    #[error("fetching {asset} failed: {message}")]
    Fetch { asset: String, message: String },
    #[error(
        "checksum mismatch for {}: expected sha256 {expected}, got {actual} (delete it and run `swex models fetch`)",
        path.display()
    )]
    Checksum {
        path: PathBuf,
        expected: String,
        actual: String,
    },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("embedding cache {}: {message}", path.display())]
    Cache { path: PathBuf, message: String },
    #[error("vectors of model `{got}` cannot be used with model `{expected}`")]
    ModelMismatch { expected: String, got: String },
    #[error("query vector has {got} dimensions, the index has {expected}")]
    Dimension { expected: usize, got: usize },
}

impl DenseError {
    /// True when the error only means "dense retrieval is not installed here": callers may fall
    /// back to lexical retrieval and tell the user to run `swex models fetch`.
    pub fn is_absent(&self) -> bool {
        matches!(
            self,
            DenseError::RuntimeMissing { .. }
                | DenseError::RuntimeLoad { .. }
                | DenseError::ModelMissing { .. }
        )
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        DenseError::Io {
            path: path.into(),
            source,
        }
    }
}
