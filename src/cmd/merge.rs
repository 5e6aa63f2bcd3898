//! `swex merge`: merge result files (the shards of a run) into one file per explorer and k,
//! refusing rows that conflict. Argument parsing and writing; the work is
//! `swex_bench::results::merge`.

use anyhow::{Context, bail};
use clap::Args;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;
use swex_bench::dataset::{Benchmark, LoadOptions};
use swex_bench::results::{ResultRow, merge, rewrite_ordered};
use swex_bench::runner::{DEFAULT_OUTPUT, OutputTemplate};
use swex_engine::snapshot::PlainName;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Result files to merge.
    #[arg(required = true, value_name = "RESULTS")]
    pub inputs: Vec<PathBuf>,
    /// Output path template ({explorer}, {k}); without placeholders, one file for everything.
    #[arg(long, short = 'o', default_value = DEFAULT_OUTPUT)]
    pub output: String,
    /// Order rows as the benchmark does (otherwise by instance id).
    #[arg(long, value_name = "FILE")]
    pub bench: Option<PathBuf>,
    /// Replace output files that exist.
    #[arg(long)]
    pub overwrite: bool,
}

pub fn run(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let template = OutputTemplate::new(args.output.clone())?;
    if template.has("shard") {
        bail!("--output: {{shard}} makes no sense for a merge");
    }
    let position: HashMap<String, usize> = match &args.bench {
        Some(path) => Benchmark::load(path, &LoadOptions::default())?
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.instance_id.clone(), i))
            .collect(),
        None => HashMap::new(),
    };
    let merged = merge(&args.inputs, &|id| position.get(id).copied())?;
    let mut files: BTreeMap<PathBuf, Vec<ResultRow>> = BTreeMap::new();
    for row in merged.rows {
        let k = row.top_k.expect("read rows have a top_k");
        // `{explorer}` comes from the rows: a plain name, or no path at all.
        let explorer = PlainName::new(row.explorer.as_str())
            .with_context(|| format!("the row of instance `{}`: explorer", row.instance_id))?;
        files
            .entry(template.path(&explorer, k, ""))
            .or_default()
            .push(row);
    }
    for path in files.keys() {
        if args.inputs.contains(path) {
            bail!("{} is both an input and an output", path.display());
        }
        if !args.overwrite && std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
            bail!("{} exists; pass --overwrite to replace it", path.display());
        }
    }
    for (path, rows) in &files {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        rewrite_ordered(path, rows)?;
        eprintln!("{}: {} rows", path.display(), rows.len());
    }
    if merged.identical_duplicates > 0 {
        eprintln!(
            "note: {} rows were in more than one input with the same content; kept once",
            merged.identical_duplicates
        );
    }
    Ok(ExitCode::SUCCESS)
}
