//! `swex train`: fit the `swex` explorer's learned file ranker (or, `--unit spans`, its span
//! ranker) on a benchmark. Three steps, each
//! resumable from the work folder: run the explorer over the rows with its features note on (a
//! `swex bench` run, or `--answers` of one made elsewhere), join the notes with the rows' ground truth (`swex_bench::train`), and fit
//! LambdaMART with held-out folds (bench/python/train_ranker.py, pinned LightGBM). docs/ranker.md.

use super::bench::BenchArgs;
use super::search::DenseScores;
use anyhow::{Context, bail};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use swex_bench::dataset::{Benchmark, LoadOptions};
use swex_bench::results::read_results;
use swex_bench::runner::select_instances;
use swex_bench::train::Unit;
use swex_explorer_swex::learned::FEATURES_NOTE_PREFIX;
use swex_explorer_swex::spans::SPAN_FEATURES_NOTE_PREFIX;

/// The trainer, shipped inside the binary so that `swex train` works from any folder.
const TRAINER: &str = include_str!("../../bench/python/train_ranker.py");

#[derive(Args, Debug)]
pub struct TrainArgs {
    /// Benchmark rows (bench.jsonl, e.g. from `swex dataset import`): each row's ground truth
    /// `read_core_files` are the files a good ranking puts first.
    #[arg(long, value_name = "FILE")]
    pub bench: PathBuf,
    #[command(flatten)]
    pub snapshots: super::bench::SnapshotArgs,
    /// Work folder: the explorer's answers (`run/`), the dataset (`dataset.jsonl`) and the
    /// metrics (`report.json`). A second run resumes the answers already there.
    #[arg(long, value_name = "DIR", default_value = "train-work")]
    pub work: PathBuf,
    /// What the model ranks: `files` (the candidate source files of a row, against the files the
    /// fix changes) or `spans` (the candidate spans of each such file, against the lines it
    /// edits). One explorer run serves both.
    #[arg(long, value_enum, default_value = "files")]
    pub unit: UnitArg,
    /// Where to write the model [default: file-ranker.json, or span-ranker.json for spans]. Load
    /// it with `--explorer-config swex=@CONFIG` where CONFIG is `{"model": <the model>}`
    /// (`{"span_model": …}` for spans), or ship it in explorers/swex/model/.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Python with lightgbm, numpy and scipy (bench/python/requirements-ranker.txt;
    /// `scripts/ranker-env` makes one and prints its path).
    #[arg(long, env = "SWEX_RANKER_PYTHON", default_value = "python3")]
    pub python: PathBuf,
    /// Held-out folds to report, comma-separated keys of the examples (`repo`, `language`);
    /// empty for none. The temperature is always chosen on leave-one-repository-out scores.
    #[arg(long, default_value = "repo,language")]
    pub folds: String,
    /// Features to leave out of the fit, comma-separated (ablations; `""` for none). By default,
    /// for files, the code graph's, as in the shipped models: they gained nothing on held-out
    /// folds, and a model that reads them makes the explorer build the graph on a snapshot's
    /// first query (docs/ranker.md); for spans, none. The dense features are fitted when the
    /// features run had the embedding model; a model that reads them needs it at every query.
    #[arg(long, value_name = "FEATURE,…")]
    pub without: Option<String>,
    /// Files: blend the trees with each candidate's linear score, `A · linear + (1 − A) · trees`
    /// (0 ≤ A < 1; 0: the trees alone). The shipped default model is a blend with A = 0.25,
    /// which beat both parts on held-out folds (docs/ranker.md); held-out metrics are the blend's.
    #[arg(long, value_name = "A", default_value_t = 0.0)]
    pub linear_share: f64,
    /// Take the explorer's answers from this result file instead of running it: a `swex bench`
    /// run (shards merged with `swex merge`) of `swex` with the config
    /// `{"emit_features": true, "ranker": "linear", "span_ranker": "linear"}`.
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,
    /// Whether the features carry the dense similarities (the `dense` columns, which a fit uses
    /// unless `--without` drops them): `auto` when the embedding model is installed, `off` never
    /// (as on a machine without it), `on` always (without the model the run fails before its
    /// first row). With the model each row embeds its candidate chunks once (cached): a first
    /// run over hundreds of rows takes tens of minutes on two cores (one over the 675 train
    /// rows was stopped after 40) instead of a few.
    #[arg(long, value_enum, default_value_t = DenseScores::Auto, value_name = "WHEN")]
    pub dense_scores: DenseScores,
    /// Stop after writing the dataset (no Python needed).
    #[arg(long)]
    pub dataset_only: bool,
    /// Instances worked on at the same time [default: the number of CPUs].
    #[arg(long, short = 'w')]
    pub workers: Option<usize>,
    /// Only the first N instances (after --instances).
    #[arg(long, short = 'n')]
    pub limit: Option<usize>,
    /// Only these instances, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "ID,ID")]
    pub instances: Vec<String>,
    #[command(flatten)]
    pub engine: super::index::EngineArgs,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitArg {
    Files,
    Spans,
}

/// What the work folder holds for a unit, and the explorer's note it learns from.
struct UnitFiles {
    dataset: &'static str,
    report: &'static str,
    default_model: &'static str,
    note_prefix: &'static str,
    /// The features a fit leaves out unless `--without` says otherwise.
    default_without: &'static str,
}

impl UnitArg {
    fn unit(self) -> Unit {
        match self {
            UnitArg::Files => Unit::Files,
            UnitArg::Spans => Unit::Spans,
        }
    }

    fn files(self) -> UnitFiles {
        match self {
            UnitArg::Files => UnitFiles {
                dataset: "dataset.jsonl",
                report: "report.json",
                default_model: "file-ranker.json",
                note_prefix: FEATURES_NOTE_PREFIX,
                default_without: "graph_issue,graph_top",
            },
            UnitArg::Spans => UnitFiles {
                dataset: "span-dataset.jsonl",
                report: "span-report.json",
                default_model: "span-ranker.json",
                note_prefix: SPAN_FEATURES_NOTE_PREFIX,
                default_without: "",
            },
        }
    }
}

pub fn run(args: TrainArgs) -> anyhow::Result<ExitCode> {
    if args.linear_share != 0.0 && args.unit == UnitArg::Spans {
        bail!(
            "--linear-share blends a file model with the linear file ranking; the span ranker reads no such blend"
        );
    }
    if args.answers.is_some() && args.dense_scores != DenseScores::Auto {
        bail!(
            "--dense-scores decides what the explorer run measures; the rows of --answers carry what theirs did"
        );
    }
    std::fs::create_dir_all(&args.work)
        .with_context(|| format!("--work {}", args.work.display()))?;
    let answers = match &args.answers {
        Some(answers) => answers.clone(),
        None => run_explorer(&args)?,
    };
    let dataset = args.work.join(args.unit.files().dataset);
    write_dataset(&args, &answers, &dataset)?;
    if args.dataset_only {
        return Ok(ExitCode::SUCCESS);
    }
    fit(&args, &dataset)?;
    Ok(ExitCode::SUCCESS)
}

/// Step 1: the `swex` explorer over the rows, linear ranking, features note on; a `swex bench`
/// run into the work folder, resumed when answers are already there. Returns the answers' file.
fn run_explorer(args: &TrainArgs) -> anyhow::Result<PathBuf> {
    if args.dense_scores == DenseScores::On {
        // Every row would fail on its own, after its index; say it once, before the first.
        args.engine
            .engine()
            .open_dense_model()
            .context("--dense-scores on needs the embedding model")?;
    }
    let template = args.work.join("run/{explorer}/top{k}.jsonl");
    let answers = args.work.join("run/swex/top10.jsonl");
    let bench = BenchArgs {
        bench: args.bench.clone(),
        task: super::bench::Task::SweExplore,
        whole_checkout: false,
        issue_map: None,
        snapshots: args.snapshots.clone(),
        explorers: vec!["swex".into()],
        top_k: Some("10".into()),
        budget: None,
        loc_k: None,
        workers: args.workers,
        output: Some(template.to_string_lossy().into_owned()),
        resume: answers.exists(),
        overwrite: false,
        shard: None,
        isolated: false,
        timeout: 600.0,
        limit: args.limit,
        instances: args.instances.clone(),
        explorer_configs: vec![format!("swex={}", features_config(args.dense_scores))],
        ground_truth_for: Vec::new(),
        plugins: Vec::new(),
        plain: false,
        index: true,
        engine: args.engine.clone(),
        // Issues are not short queries: the `swex` explorer's code search never runs here.
        dense_scores: args.dense_scores,
    };
    let code = super::bench::run(bench)?;
    if code != ExitCode::SUCCESS {
        bail!("the explorer run did not finish (its rows so far are kept; run again to resume)");
    }
    Ok(answers)
}

/// The `swex` explorer's config of a features run: every feature row noted, the linear
/// rankings (what a model is fitted beside), and the dense similarities as `dense_scores` says.
fn features_config(dense_scores: DenseScores) -> serde_json::Value {
    let emit_dense = match dense_scores {
        DenseScores::Auto => None,
        DenseScores::Off => Some(false),
        DenseScores::On => Some(true),
    };
    serde_json::json!({
        "emit_features": true,
        "emit_dense": emit_dense,
        "ranker": "linear",
        "span_ranker": "linear",
    })
}

/// Step 2: the examples, written as the trainer's dataset; the rows that are not, said.
fn write_dataset(args: &TrainArgs, answers: &Path, dataset: &Path) -> anyhow::Result<()> {
    let bench = Benchmark::load(&args.bench, &LoadOptions::default())?;
    let rows = select_instances(&bench, &args.instances, args.limit, None)?;
    let ids: Vec<&str> = rows.iter().map(|r| r.instance_id.as_str()).collect();
    let results: Vec<_> = read_results(answers)?.into_iter().map(|r| r.row).collect();
    let set = swex_bench::train::training_set(
        &bench,
        &ids,
        &results,
        args.unit.files().note_prefix,
        args.unit.unit(),
        swex_explorer_swex::rank::is_test_path,
    );
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(dataset).with_context(|| dataset.display().to_string())?,
    );
    for example in &set.examples {
        serde_json::to_writer(&mut out, example)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    let with_gold = set
        .examples
        .iter()
        .filter(|e| e.has_gold_candidate())
        .count();
    errln!(
        "dataset {}: {} examples ({} with a gold file among the candidates), {} rows left out",
        dataset.display(),
        set.examples.len(),
        with_gold,
        set.missing.len()
    );
    for missing in set.missing.iter().take(20) {
        errln!("  {}: {}", missing.id, missing.reason);
    }
    if set.missing.len() > 20 {
        errln!("  … and {} more", set.missing.len() - 20);
    }
    if with_gold == 0 {
        bail!("no example has a gold file among its candidates: nothing to learn from");
    }
    Ok(())
}

/// Step 3: the trainer (LambdaMART with held-out folds) writes the model.
fn fit(args: &TrainArgs, dataset: &Path) -> anyhow::Result<()> {
    let script = args.work.join("train_ranker.py");
    std::fs::write(&script, TRAINER).with_context(|| script.display().to_string())?;
    let files = args.unit.files();
    let report = args.work.join(files.report);
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from(files.default_model));
    let status = std::process::Command::new(&args.python)
        .arg(&script)
        .arg(dataset)
        .arg("--output")
        .arg(&output)
        .arg("--folds")
        .arg(&args.folds)
        .arg("--without")
        .arg(args.without.as_deref().unwrap_or(files.default_without))
        .arg("--linear-share")
        .arg(args.linear_share.to_string())
        .arg("--report")
        .arg(&report)
        .status()
        .with_context(|| {
            format!(
                "--python {}: cannot run it (scripts/ranker-env makes a Python with the trainer's packages)",
                args.python.display()
            )
        })?;
    if !status.success() {
        bail!(
            "the trainer failed ({status}); if a module is missing, use a Python made by scripts/ranker-env (--python or SWEX_RANKER_PYTHON)"
        );
    }
    errln!("model {} (metrics: {})", output.display(), report.display());
    Ok(())
}
