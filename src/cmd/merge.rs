//! `swex merge`: merge result files (the shards of a run) into one file per explorer and k,
//! refusing rows that conflict, a missing shard (unless allowed) and rows of different runs in
//! one file, and reporting instances outside `--bench` or without rows. Argument parsing, printing
//! and writing; the work is `swex_bench::results::merge` and `swex_bench::mergecheck`.

use anyhow::{Context, bail};
use clap::Args;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;
use swex_bench::dataset::{Benchmark, LoadOptions};
use swex_bench::mergecheck;
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
    /// Write the merge even when some shard of a sharded run has no rows.
    #[arg(long)]
    pub allow_missing_shards: bool,
}

/// At most this many ids are named in one message.
const SHOWN: usize = 5;

fn examples(ids: &[String]) -> String {
    let more = if ids.len() > SHOWN { ", ..." } else { "" };
    format!("{}{more}", ids[..ids.len().min(SHOWN)].join(", "))
}

pub fn run(args: MergeArgs) -> anyhow::Result<ExitCode> {
    let template = OutputTemplate::new(args.output.clone())?;
    if template.has("shard") {
        bail!("--output: {{shard}} makes no sense for a merge");
    }
    let bench_ids: Option<Vec<String>> = match &args.bench {
        Some(path) => Some(
            Benchmark::load(path, &LoadOptions::default())?
                .rows
                .iter()
                .map(|r| r.instance_id.clone())
                .collect(),
        ),
        None => None,
    };
    let position: HashMap<&str, usize> = bench_ids
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let merged = merge(&args.inputs, &|id| position.get(id).copied())?;

    // Everything is checked before anything is written.
    let found = mergecheck::check(&merged.rows, bench_ids.as_deref());
    let shard_problems: Vec<String> = found
        .shard_problems()
        .map(|g| {
            let counts: Vec<String> = g.shard_counts.iter().map(usize::to_string).collect();
            if g.shard_counts.len() > 1 {
                format!(
                    "{} top{}: rows of different shard splits (of {})",
                    g.explorer,
                    g.top_k,
                    counts.join(" and ")
                )
            } else {
                let missing: Vec<String> = g.missing_shards.iter().map(usize::to_string).collect();
                format!(
                    "{} top{}: shard {} of {} missing",
                    g.explorer,
                    g.top_k,
                    missing.join(", "),
                    counts[0]
                )
            }
        })
        .collect();
    if !shard_problems.is_empty() {
        let message = format!(
            "the inputs do not hold every shard: {}",
            shard_problems.join("; ")
        );
        if !args.allow_missing_shards {
            bail!("{message}; add the missing shard files, or pass --allow-missing-shards");
        }
        errln!("warning: {message} (merged anyway: --allow-missing-shards)");
    }
    if let Some((explorer, differences)) = found.mixed_producers.first()
        && !template.has("run")
    {
        bail!(
            "rows of explorer `{explorer}` were made by different runs ({}); merge each run on its \
             own, or keep them apart with {{run}} in --output",
            differences.join("; ")
        );
    }
    if !found.unknown_instances.is_empty() {
        errln!(
            "warning: rows of {} instances not in {} (e.g. {}); they are merged, after the others",
            found.unknown_instances.len(),
            args.bench.as_ref().expect("known with --bench").display(),
            examples(&found.unknown_instances)
        );
    }
    for group in found
        .groups
        .iter()
        .filter(|g| !g.missing_instances.is_empty())
    {
        errln!(
            "warning: {} top{}: {} of {} benchmark instances have no row (e.g. {})",
            group.explorer,
            group.top_k,
            group.missing_instances.len(),
            position.len(),
            examples(&group.missing_instances)
        );
    }
    let mut files: BTreeMap<PathBuf, Vec<ResultRow>> = BTreeMap::new();
    for mut row in merged.rows {
        // The shards are whole again: merged rows are those of an unsharded run.
        row.shard = None;
        let k = row.top_k.expect("read rows have a top_k");
        let run = row
            .produced_by
            .as_ref()
            .map_or_else(|| "unrecorded".to_string(), |p| p.run_id(&row.explorer));
        // `{explorer}` comes from the rows: a plain name, or no path at all.
        let explorer = PlainName::new(row.explorer.as_str())
            .with_context(|| format!("the row of instance `{}`: explorer", row.instance_id))?;
        files
            .entry(template.path(&explorer, k, "", &run))
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
        errln!("{}: {} rows", path.display(), rows.len());
    }
    if merged.identical_duplicates > 0 {
        errln!(
            "note: {} rows were in more than one input with the same content; kept once",
            merged.identical_duplicates
        );
    }
    Ok(ExitCode::SUCCESS)
}
