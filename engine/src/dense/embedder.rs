//! The embedder: one ONNX model behind fastembed, on an ONNX Runtime library loaded at run time.
//!
//! [`Embedder::open`] loads the runtime with `ort::init_from` (so a missing or wrong library is a
//! [`DenseError`], never a panic), reads the model and tokenizer files, and fingerprints everything
//! that changes a vector into a [`ModelIdentity`].
//!
//! Speed on small machines comes from three choices, measured in `docs/dense.md`:
//! - texts are sorted by length before batching, so a batch pads to similar lengths instead of to
//!   the longest text of the whole input;
//! - the token cap ([`EmbedderConfig::max_tokens`]) bounds the work per text (attention is
//!   quadratic, the rest linear in tokens); [`TextUnit::Head`] is a cheaper text unit;
//! - the batch size and intra-op thread count default to the values measured best on 2 cores.
//!
//! The embedder knows nothing about caching (see [`super::cache`]) or about what the texts are;
//! [`passage_text`] is the one place that says how a chunk becomes text.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use fastembed::{InitOptionsUserDefined, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel};

use super::model::{ModelFiles, ModelIdentity, ModelSpec};
use super::{DenseError, assets, models_dir};

/// How much of a chunk is embedded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextUnit {
    /// The whole chunk (up to the token cap).
    Full,
    /// Only the first `lines` non-blank lines: for a definition, its signature and the start of its
    /// docstring. Cheaper for large repositories.
    Head { lines: usize },
}

impl std::str::FromStr for TextUnit {
    type Err = String;
    /// `full` or `head:<lines>`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "full" => Ok(TextUnit::Full),
            _ => text
                .strip_prefix("head:")
                .and_then(|n| n.parse().ok())
                .filter(|n: &usize| *n > 0)
                .map(|lines| TextUnit::Head { lines })
                .ok_or_else(|| format!("text unit `{text}`: expected `full` or `head:<lines>`")),
        }
    }
}

/// Options of an [`Embedder`].
#[derive(Debug, Clone)]
pub struct EmbedderConfig {
    pub model: ModelSpec,
    /// Tokens per text after which the tokenizer truncates. Capped by the model's own limit.
    pub max_tokens: usize,
    /// Texts per ONNX Runtime call. 4 by default: on two cores 1 to 8 embed equally fast, and
    /// the runtime's memory grows with the largest call (32 texts of 256 tokens: 1.5 GB peak,
    /// 4: 345 MB; `docs/dense.md`).
    pub batch_size: usize,
    /// ONNX Runtime intra-op threads; `None` uses every available core.
    pub intra_threads: Option<usize>,
    /// Prepended to every passage (some models want `passage: ` or similar).
    pub passage_prefix: String,
    /// Prepended to every query (`query: `, `search_query: `, ...).
    pub query_prefix: String,
    /// The ONNX Runtime library; `None` uses `$ORT_DYLIB_PATH` or the fetched one.
    pub runtime_library: Option<PathBuf>,
    /// Let ONNX Runtime's worker threads spin while waiting for work. Off by default: on a machine
    /// shared with other work (builds, CI, other sessions) spinning threads take the cores the
    /// computation needs; see `docs/dense.md` for the measurement.
    pub spin: bool,
}

impl Default for EmbedderConfig {
    fn default() -> Self {
        EmbedderConfig {
            model: ModelSpec::Default,
            max_tokens: 256,
            batch_size: 4,
            intra_threads: None,
            passage_prefix: String::new(),
            query_prefix: String::new(),
            runtime_library: None,
            spin: false,
        }
    }
}

/// A loaded embedding model. Shareable across threads; calls into the model are serialized.
pub struct Embedder {
    model: Mutex<TextEmbedding>,
    identity: ModelIdentity,
    max_tokens: usize,
    batch_size: usize,
    passage_prefix: String,
    query_prefix: String,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("identity", &self.identity)
            .field("max_tokens", &self.max_tokens)
            .field("batch_size", &self.batch_size)
            .finish_non_exhaustive()
    }
}

/// Loads the ONNX Runtime library once per process. Later calls with another path keep the first
/// library (ONNX Runtime cannot be unloaded), which is what every caller wants in practice.
pub fn load_runtime(path: &Path) -> Result<(), DenseError> {
    let path = std::path::absolute(path).map_err(|e| DenseError::io(path, e))?;
    if !path.is_file() {
        return Err(DenseError::RuntimeMissing { path });
    }
    ort::init_from(&path)
        .map(|_builder| ())
        .map_err(|e| DenseError::RuntimeLoad {
            message: e.to_string(),
            path,
        })
}

impl Embedder {
    /// Loads the runtime and the model named by `config` from the cache root.
    pub fn open(cache_root: &Path, config: &EmbedderConfig) -> Result<Self, DenseError> {
        let models = models_dir(cache_root);
        let files = config.model.resolve(&models)?;
        // Model files are checked before the runtime is loaded: both failures name the same fix,
        // and this order lets the model's absence be reported (and tested) without a runtime.
        for path in std::iter::once(&files.onnx).chain(files.tokenizer.iter()) {
            if !path.is_file() {
                return Err(DenseError::ModelMissing {
                    model: files.name.clone(),
                    path: path.clone(),
                    fetch_args: files.fetch_args.clone(),
                });
            }
        }
        let runtime = config
            .runtime_library
            .clone()
            .unwrap_or_else(|| assets::runtime_library_path(&models));
        load_runtime(&runtime)?;
        Self::from_files(&files, config)
    }

    fn from_files(files: &ModelFiles, config: &EmbedderConfig) -> Result<Self, DenseError> {
        let missing = |path: &Path| DenseError::ModelMissing {
            model: files.name.clone(),
            path: path.to_path_buf(),
            fetch_args: files.fetch_args.clone(),
        };
        let read = |path: &Path| -> Result<Vec<u8>, DenseError> {
            std::fs::read(path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => missing(path),
                _ => DenseError::io(path, e),
            })
        };
        let onnx = read(&files.onnx)?;
        let [tokenizer, config_json, special_tokens, tokenizer_config] = [
            read(&files.tokenizer[0])?,
            read(&files.tokenizer[1])?,
            read(&files.tokenizer[2])?,
            read(&files.tokenizer[3])?,
        ];
        let max_tokens = files
            .native_max_tokens
            .map_or(config.max_tokens, |native| config.max_tokens.min(native))
            .max(8);

        let mut hasher = blake3::Hasher::new();
        hasher.update(&crate::formats::PASSAGE_TEXT_VERSION.to_le_bytes());
        for part in [
            &onnx,
            &tokenizer,
            &config_json,
            &special_tokens,
            &tokenizer_config,
        ] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        hasher.update(format!("{:?}", files.pooling).as_bytes());
        hasher.update(&(max_tokens as u64).to_le_bytes());
        hasher.update(config.passage_prefix.as_bytes());
        hasher.update(&[0]);
        hasher.update(config.query_prefix.as_bytes());

        let mut model = UserDefinedEmbeddingModel::new(
            onnx,
            TokenizerFiles {
                tokenizer_file: tokenizer,
                config_file: config_json,
                special_tokens_map_file: special_tokens,
                tokenizer_config_file: tokenizer_config,
            },
        )
        .with_pooling(files.pooling.clone());
        for (name, path) in &files.external_data {
            let bytes = read(path)?;
            hasher.update(&bytes);
            model = model.with_external_initializer(name.clone(), bytes);
        }
        let threads = config
            .intra_threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let options = InitOptionsUserDefined::new()
            .with_max_length(max_tokens)
            .with_intra_threads(threads.max(1))
            .with_session_config(
                "session.intra_op.allow_spinning",
                if config.spin { "1" } else { "0" },
            );
        let model_error = |e: fastembed::Error| DenseError::Model {
            model: files.name.clone(),
            message: e.to_string(),
        };
        let mut model =
            TextEmbedding::try_new_from_user_defined(model, options).map_err(model_error)?;
        let dim = model
            .embed(["dimension probe"], None)
            .map_err(model_error)?
            .first()
            .map_or(0, Vec::len);
        if dim == 0 {
            return Err(DenseError::Model {
                model: files.name.clone(),
                message: "the model produced an empty vector".into(),
            });
        }
        Ok(Embedder {
            model: Mutex::new(model),
            identity: ModelIdentity {
                name: files.name.clone(),
                fingerprint: hasher.finalize().to_hex().to_string(),
                dim,
            },
            max_tokens,
            batch_size: config.batch_size.max(1),
            passage_prefix: config.passage_prefix.clone(),
            query_prefix: config.query_prefix.clone(),
        })
    }

    pub fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    pub fn dim(&self) -> usize {
        self.identity.dim
    }

    /// The effective token cap (the configured one, bounded by the model's).
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// A character budget safely above the token cap: text past it can never reach the model, so
    /// cutting it early saves tokenizer work and cache-key hashing.
    pub fn max_chars(&self) -> usize {
        self.max_tokens * 12
    }

    /// Embeds passages (chunk texts from [`passage_text`]); vectors are L2-normalized and returned
    /// in input order. `progress` gets (texts done, total) after each batch.
    pub fn embed_passages(
        &self,
        texts: &[&str],
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Vec<Vec<f32>>, DenseError> {
        self.embed_sorted(texts, &self.passage_prefix, progress)
    }

    /// Embeds a query (an issue text or a search phrase).
    pub fn embed_query(&self, query: &str) -> Result<Vec<f32>, DenseError> {
        let mut vectors = self.embed_sorted(&[query], &self.query_prefix, &mut |_, _| {})?;
        Ok(vectors.pop().unwrap_or_default())
    }

    fn embed_sorted(
        &self,
        texts: &[&str],
        prefix: &str,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Vec<Vec<f32>>, DenseError> {
        // Longest first: batches pad to similar lengths, and the slowest batches come first, so
        // progress estimates only improve.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(texts[i].len()));
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        let mut model = self.model.lock().unwrap_or_else(|p| p.into_inner());
        let mut done = 0;
        for batch in order.chunks(self.batch_size) {
            let inputs: Vec<String> = batch
                .iter()
                .map(|&i| format!("{prefix}{}", texts[i]))
                .collect();
            let vectors =
                model
                    .embed(&inputs, Some(inputs.len()))
                    .map_err(|e| DenseError::Model {
                        model: self.identity.name.clone(),
                        message: e.to_string(),
                    })?;
            for (&i, v) in batch.iter().zip(vectors) {
                out[i] = v;
            }
            done += batch.len();
            progress(done, texts.len());
        }
        Ok(out)
    }

    /// [`passage_text`] with this embedder's character budget.
    pub fn passage_text(
        &self,
        path: &str,
        name: Option<&str>,
        body: &str,
        unit: TextUnit,
    ) -> String {
        passage_text(path, name, body, unit, self.max_chars())
    }
}

/// The text embedded for a chunk: its path, its qualified name (when it has one) and its body,
/// reduced to `unit` and cut to `max_chars` characters. Path and name come first because they
/// carry much of a chunk's meaning and must survive truncation.
pub fn passage_text(
    path: &str,
    name: Option<&str>,
    body: &str,
    unit: TextUnit,
    max_chars: usize,
) -> String {
    let mut text = String::with_capacity(body.len().min(max_chars) + path.len() + 64);
    text.push_str(path);
    text.push('\n');
    if let Some(name) = name.filter(|n| !n.is_empty()) {
        text.push_str(name);
        text.push('\n');
    }
    match unit {
        TextUnit::Full => text.push_str(body),
        TextUnit::Head { lines } => {
            for line in body.lines().filter(|l| !l.trim().is_empty()).take(lines) {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    if text.len() > max_chars {
        let mut cut = max_chars;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: Option<&str>, body: &str, unit: TextUnit, max_chars: usize, expected: &str) {
        assert_eq!(
            passage_text("src/a.py", name, body, unit, max_chars),
            expected
        );
    }

    #[test]
    fn passage_texts() {
        let body = "def f(x):\n\n    \"\"\"Doc.\"\"\"\n    return x\n";
        check(
            Some("A.f"),
            body,
            TextUnit::Full,
            1000,
            &format!("src/a.py\nA.f\n{body}"),
        );
        check(
            None,
            body,
            TextUnit::Full,
            1000,
            &format!("src/a.py\n{body}"),
        );
        check(
            Some("A.f"),
            body,
            TextUnit::Head { lines: 2 },
            1000,
            "src/a.py\nA.f\ndef f(x):\n    \"\"\"Doc.\"\"\"\n",
        );
        check(Some("A.f"), body, TextUnit::Full, 12, "src/a.py\nA.f");
        // Cuts never split a character.
        check(None, "ééé", TextUnit::Full, 12, "src/a.py\né");
    }

    #[test]
    fn text_units_parse() {
        assert_eq!("full".parse(), Ok(TextUnit::Full));
        assert_eq!("head:6".parse(), Ok(TextUnit::Head { lines: 6 }));
        assert!("head:0".parse::<TextUnit>().is_err());
        assert!("all".parse::<TextUnit>().is_err());
    }

    /// A cache root whose default model files exist (with dummy contents), so that only the
    /// runtime decides the outcome.
    fn root_with_dummy_model() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let files = ModelSpec::Default
            .resolve(&models_dir(root.path()))
            .unwrap();
        std::fs::create_dir_all(files.onnx.parent().unwrap()).unwrap();
        for path in std::iter::once(&files.onnx).chain(files.tokenizer.iter()) {
            std::fs::write(path, b"{}").unwrap();
        }
        root
    }

    fn check_absent(root: &Path, runtime: PathBuf, expected: &str) {
        let config = EmbedderConfig {
            runtime_library: Some(runtime),
            ..EmbedderConfig::default()
        };
        let err = Embedder::open(root, &config).unwrap_err();
        assert!(err.is_absent(), "{err:?}");
        let message = err.to_string();
        assert!(message.starts_with(expected), "{message}");
        assert!(message.contains("swex models fetch"), "{message}");
    }

    #[test]
    fn missing_model_is_a_typed_absent_error() {
        let root = tempfile::tempdir().unwrap();
        check_absent(
            root.path(),
            root.path().join("libonnxruntime.so"),
            "embedding model `all-minilm-l6-v2-int8` is not installed",
        );
    }

    #[test]
    fn missing_runtime_is_a_typed_absent_error() {
        let root = root_with_dummy_model();
        let runtime = root.path().join("no/libonnxruntime.so");
        check_absent(root.path(), runtime, "ONNX Runtime library not found");
    }

    #[test]
    fn unloadable_runtime_is_a_typed_absent_error() {
        let root = root_with_dummy_model();
        let fake = root.path().join("libonnxruntime.so");
        std::fs::write(&fake, b"not a shared library").unwrap();
        check_absent(root.path(), fake, "could not load the ONNX Runtime library");
    }
}
