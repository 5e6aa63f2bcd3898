//! `swex report RESULTS…`: means, breakdowns, paired comparisons, charts and an HTML page from
//! result files. Argument parsing and writing files; the work is `swex_bench::report`, and for
//! code-search rows (`swex bench --task codesearch`) `swex_bench::codesearch::report`.

use anyhow::{Context, bail};
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use swex_bench::codesearch;
use swex_bench::dataset::{Benchmark, LoadOptions};
use swex_bench::report::{CompareOptions, Report, chart, html, render};
use swex_bench::results::read_results;
use swex_bench::score::fill_real_metrics;

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Result files (JSONL rows of `swex bench`, or of the reference runner named `top<k>.jsonl`).
    #[arg(required = true, value_name = "RESULTS")]
    pub results: Vec<PathBuf>,
    /// The benchmark file: repositories, languages and the ground truth for the drill-down. For
    /// code-search rows: the data folder, whose published.json gives the published methods' scores.
    #[arg(long, value_name = "PATH")]
    pub bench: Option<PathBuf>,
    /// Snapshot folders (DIR/<instance_id>): rows without real-length metrics (the reference
    /// runner's, a peer's) are scored with every predicted file's real length and their lines
    /// counted, next to the reference counting. Needs --bench.
    #[arg(long, value_name = "DIR", requires = "bench")]
    pub repos: Option<PathBuf>,
    /// Output folder.
    #[arg(long, short = 'o', default_value = "report", value_name = "DIR")]
    pub out: PathBuf,
    /// Compare two explorers per instance: `A,B`. Repeatable.
    #[arg(long, value_name = "A,B")]
    pub compare: Vec<String>,
    /// The metric of the paired comparisons.
    #[arg(long, default_value = "recall")]
    pub metric: String,
    /// Bootstrap resamples of the paired comparisons.
    #[arg(long, default_value_t = 10_000)]
    pub resamples: usize,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = 20_260_607)]
    pub seed: u64,
    /// Skip the PNG copies of the charts (SVG only).
    #[arg(long)]
    pub no_png: bool,
}

fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

pub fn run(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let codesearch = args
        .results
        .iter()
        .filter(|p| codesearch::is_codesearch_file(p))
        .count();
    if codesearch == args.results.len() {
        return codesearch_report(&args);
    }
    if codesearch > 0 {
        bail!("some inputs are code-search rows and some SWE-Explore rows: report them separately");
    }
    let mut rows = Vec::new();
    for path in &args.results {
        rows.extend(read_results(path)?.into_iter().map(|r| r.row));
    }
    // The same key in two inputs would be averaged twice (runs at different line budgets are
    // different series, see `swex_bench::report::series_name`).
    let mut seen = std::collections::HashSet::new();
    for row in &rows {
        if !seen.insert((row.key(), row.line_budget)) {
            bail!(
                "{} appears in more than one input file; merge shards with `swex merge` first",
                row.key()
            );
        }
    }
    let bench = match &args.bench {
        Some(path) => Some(Benchmark::load(path, &LoadOptions::default())?),
        None => None,
    };
    if let (Some(root), Some(bench)) = (&args.repos, &bench) {
        anyhow::ensure!(root.is_dir(), "--repos {}: not a folder", root.display());
        let filled = fill_real_metrics(&mut rows, bench, root);
        if filled.filled > 0 {
            eprintln!(
                "{}: scored {} rows with real file lengths",
                root.display(),
                filled.filled
            );
        }
        if !filled.unavailable.is_empty() {
            eprintln!(
                "warning: {} rows have no snapshot or benchmark row to count real lengths with (e.g. {}); their real-length columns are left empty",
                filled.unavailable.len(),
                filled.unavailable[0]
            );
        }
    }
    let mut compare = Vec::new();
    for pair in &args.compare {
        let (a, b) = pair
            .split_once(',')
            .with_context(|| format!("--compare {pair:?}: expected A,B"))?;
        compare.push(CompareOptions {
            metric: args.metric.clone(),
            resamples: args.resamples,
            seed: args.seed,
            ..CompareOptions::new(a.trim(), b.trim())
        });
    }
    let sources = args
        .results
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let report = Report::build(sources, rows, bench.as_ref(), &compare)?;
    if !report.unknown_instances.is_empty() {
        errln!(
            "warning: {} result instances are not in the benchmark (e.g. {})",
            report.unknown_instances.len(),
            report.unknown_instances[0]
        );
    }

    let out = &args.out;
    std::fs::create_dir_all(out.join("charts"))
        .with_context(|| format!("creating {}", out.display()))?;
    let markdown = render::markdown(&report);
    write(&out.join("report.md"), markdown.as_bytes())?;
    write(&out.join("report.json"), render::json(&report).as_bytes())?;
    write(
        &out.join("means.csv"),
        render::csv_means(&report).as_bytes(),
    )?;
    write(
        &out.join("breakdown.csv"),
        render::csv_breakdown(&report).as_bytes(),
    )?;
    write(
        &out.join("paired.csv"),
        render::csv_paired(&report).as_bytes(),
    )?;
    let charts = chart::charts(&report);
    if !args.no_png && !chart::have_fonts() {
        errln!(
            "warning: no system fonts found: PNG charts are drawn without text (install \
             fonts-dejavu-core)"
        );
    }
    for c in &charts {
        let svg = chart::svg(c);
        write(
            &out.join("charts").join(format!("{}.svg", c.id)),
            svg.as_bytes(),
        )?;
        if !args.no_png {
            let png = chart::png(&svg)?;
            write(&out.join("charts").join(format!("{}.png", c.id)), &png)?;
        }
    }
    let page = html::page(&report, &charts);
    write(&out.join("report.html"), page.as_bytes())?;

    out!("{markdown}");
    errln!(
        "wrote {0}/report.md, report.json, means.csv, breakdown.csv, paired.csv, report.html and {1} charts in {0}/charts",
        out.display(),
        charts.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// The code-search report: Markdown and JSON in `--out`, the Markdown on stdout.
fn codesearch_report(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    if !args.compare.is_empty() {
        bail!("--compare is for SWE-Explore rows; the code-search report lists every explorer");
    }
    let mut rows = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for path in &args.results {
        for row in codesearch::read_rows(path)? {
            if !seen.insert(row.key()) {
                bail!(
                    "{} on {}#{} appears in more than one input file",
                    row.explorer,
                    row.repo,
                    row.query_index
                );
            }
            rows.push(row);
        }
    }
    let published = match &args.bench {
        Some(dir) => {
            let path = dir.join("published.json");
            if !path.is_file() {
                bail!(
                    "--bench {}: no published.json there (give the code-search data folder)",
                    dir.display()
                );
            }
            Some(codesearch::Published::load(&path)?)
        }
        None => None,
    };
    let report = codesearch::CodeSearchReport::build(&rows, published.as_ref());
    let markdown = codesearch::render_markdown(&report);
    let out = &args.out;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    write(&out.join("codesearch.md"), markdown.as_bytes())?;
    let json = serde_json::to_string_pretty(&report)? + "\n";
    write(&out.join("codesearch.json"), json.as_bytes())?;
    out!("{markdown}");
    errln!(
        "wrote {0}/codesearch.md and {0}/codesearch.json",
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}
