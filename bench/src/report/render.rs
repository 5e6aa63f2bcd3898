//! Text renderings of a [`Report`]: Markdown (for people and pull requests), CSV (one file per
//! table, every metric, for spreadsheets) and JSON (everything, for programs).
//!
//! Markdown shows four decimals, CSV six; JSON keeps full precision.

use super::{GroupMeans, MeanRow, Report};
use crate::metrics::Metrics;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// Metrics shown in the Markdown breakdown tables (all 17 are in the overall table and the CSV):
/// the key metrics of the metrics list.
pub const KEY_METRICS: [&str; 9] = crate::metric_list::KEY_NAMES;

fn md_table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let align: Vec<&str> = header
        .iter()
        .enumerate()
        .map(|(i, _)| if i == 0 { "---" } else { "---:" })
        .collect();
    let _ = writeln!(out, "| {} |", align.join(" | "));
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out.push('\n');
}

/// Metrics of the real-length tables: what a reader of the answer gets per line read.
pub const REAL_METRICS: [&str; 9] = crate::metric_list::REAL_LENGTH_VIEW;

/// The "lines returned" columns: median, mean and p90 of the lines per instance.
pub const LINES_COLUMNS: [&str; 3] = ["lines median", "lines mean", "lines p90"];

/// The lines-returned cells of a row (`–` when its rows were scored without the snapshots).
pub fn lines_cells(row: &MeanRow) -> Vec<String> {
    match &row.lines {
        Some(l) => vec![
            format!("{:.0}", l.median),
            format!("{:.0}", l.mean),
            format!("{:.0}", l.p90),
        ],
        None => vec!["–".into(); 3],
    }
}

fn mean_cells(row: &MeanRow, metrics: &[&str], decimals: usize) -> Vec<String> {
    let mut cells = vec![
        row.explorer.clone(),
        row.top_k.to_string(),
        row.instances.to_string(),
        row.failures.to_string(),
    ];
    cells.extend(
        metrics
            .iter()
            .map(|m| format!("{:.*}", decimals, row.mean.get(m).expect("known metric"))),
    );
    cells.extend(lines_cells(row));
    cells
}

fn mean_header(metrics: &[&str]) -> Vec<String> {
    let mut header: Vec<String> = ["explorer", "k", "n", "failed"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    header.extend(metrics.iter().map(|m| m.to_string()));
    header.extend(LINES_COLUMNS.iter().map(|c| c.to_string()));
    header
}

/// The real-length cells of a row: its means with real lengths, then the lines.
fn real_cells(row: &MeanRow, real: &Metrics, decimals: usize) -> Vec<String> {
    let mut cells = vec![
        row.explorer.clone(),
        row.top_k.to_string(),
        row.instances.to_string(),
    ];
    cells.extend(
        REAL_METRICS
            .iter()
            .map(|m| format!("{:.*}", decimals, real.get(m).expect("known metric"))),
    );
    cells.extend(lines_cells(row));
    cells
}

/// The localization metrics' columns shown in Markdown (every one is in the CSV and JSON).
fn loc_columns(report: &Report) -> Vec<String> {
    let mut keys: BTreeSet<&str> = BTreeSet::new();
    for row in &report.overall {
        keys.extend(row.loc.keys().map(String::as_str));
    }
    let mut keys: Vec<String> = keys.into_iter().map(str::to_string).collect();
    keys.sort_by_key(|k| crate::locmetrics::display_order(k));
    keys
}

/// Markdown tables of the localization metrics, overall and per language, when rows have them.
fn loc_sections(out: &mut String, report: &Report) {
    let columns = loc_columns(report);
    if columns.is_empty() {
        return;
    }
    let acc: Vec<&String> = columns
        .iter()
        .filter(|c| crate::locmetrics::is_headline(c))
        .collect();
    out.push_str("## Localization metrics (LocAgent's definitions)\n\n");
    out.push_str(
        "File-, module- and function-level metrics of the ranked distinct files and definitions \
         of each answer (cut at its k) against the gold of the fix, as LocAgent's evaluator \
         defines them (docs/metrics.md), and Hit@k (not LocAgent's: a gold location within the \
         first k); each mean is over the instances with gold at its level.\n\n",
    );
    let mut header: Vec<String> = ["explorer", "k"].map(String::from).to_vec();
    header.extend(columns.iter().cloned());
    let cell = |row: &MeanRow, c: &String| {
        row.loc
            .get(c)
            .map_or_else(|| "-".to_string(), |v| format!("{v:.4}"))
    };
    let rows: Vec<Vec<String>> = report
        .overall
        .iter()
        .filter(|r| !r.loc.is_empty())
        .map(|r| {
            let mut cells = vec![r.explorer.clone(), r.top_k.to_string()];
            cells.extend(columns.iter().map(|c| cell(r, c)));
            cells
        })
        .collect();
    md_table(out, &header, &rows);
    for (title, groups) in [
        ("Acc@k and file Hit@k per language", &report.by_language),
        ("Acc@k and file Hit@k per repository", &report.by_repo),
    ] {
        let _ = writeln!(out, "### {title}\n");
        let mut header: Vec<String> = ["group", "explorer", "k", "n"].map(String::from).to_vec();
        header.extend(acc.iter().map(|c| c.to_string()));
        let rows: Vec<Vec<String>> = groups
            .iter()
            .flat_map(|g| {
                g.means.iter().filter(|m| !m.loc.is_empty()).map(|m| {
                    let mut cells = vec![
                        g.group.clone(),
                        m.explorer.clone(),
                        m.top_k.to_string(),
                        m.instances.to_string(),
                    ];
                    cells.extend(acc.iter().map(|c| cell(m, c)));
                    cells
                })
            })
            .collect();
        md_table(out, &header, &rows);
    }
}

/// The report as Markdown.
pub fn markdown(report: &Report) -> String {
    let mut out = String::from("# swex report\n\n");
    let _ = writeln!(out, "Results: {}\n", report.sources.join(", "));
    out.push_str(
        "Means over instances; a failed explorer call (`error` row) counts as 0 on every metric \
         and is counted under *failed*.\n\n",
    );
    out.push_str("## Means per explorer and k\n\n");
    let all: Vec<&str> = Metrics::NAMES.to_vec();
    let rows: Vec<Vec<String>> = report
        .overall
        .iter()
        .map(|r| mean_cells(r, &all, 4))
        .collect();
    md_table(&mut out, &mean_header(&all), &rows);

    let real: Vec<Vec<String>> = report
        .overall
        .iter()
        .filter_map(|r| Some(real_cells(r, r.real.as_ref()?, 4)))
        .collect();
    if !real.is_empty() {
        out.push_str(
            "## Counted with every file's real length

",
        );
        out.push_str(
            "The reference evaluator knows the line counts of ground-truth files only, so a \
             whole-file region on any other file costs it nothing. Here every predicted file \
             counts its real length (regions clipped to the end of their file), as a reader pays \
             for them; *lines* are the distinct lines an answer holds.\n\n",
        );
        let mut header: Vec<String> = ["explorer", "k", "n"].map(String::from).to_vec();
        header.extend(REAL_METRICS.iter().map(|m| m.to_string()));
        header.extend(LINES_COLUMNS.iter().map(|c| c.to_string()));
        md_table(&mut out, &header, &real);
    }

    for (title, groups) in [
        ("Per repository", &report.by_repo),
        ("Per language", &report.by_language),
    ] {
        let _ = writeln!(out, "## {title}\n");
        let mut header = vec!["group".to_string()];
        header.extend(mean_header(&KEY_METRICS));
        let rows: Vec<Vec<String>> = groups
            .iter()
            .flat_map(|g| {
                g.means.iter().map(|m| {
                    let mut cells = vec![g.group.clone()];
                    cells.extend(mean_cells(m, &KEY_METRICS, 4));
                    cells
                })
            })
            .collect();
        md_table(&mut out, &header, &rows);
    }

    loc_sections(&mut out, report);

    if !report.paired.is_empty() {
        out.push_str("## Paired comparisons\n\n");
        out.push_str(
            "Per instance, *wins* counts instances where the first explorer scores higher. The \
             interval is a percentile bootstrap of the mean difference (first − second).\n\n",
        );
        let header: Vec<String> = [
            "first",
            "second",
            "k",
            "metric",
            "n",
            "wins",
            "losses",
            "ties",
            "mean diff",
            "CI",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let rows: Vec<Vec<String>> = report
            .paired
            .iter()
            .map(|p| {
                vec![
                    p.a.clone(),
                    p.b.clone(),
                    p.top_k.to_string(),
                    p.metric.clone(),
                    p.instances.to_string(),
                    p.wins.to_string(),
                    p.losses.to_string(),
                    p.ties.to_string(),
                    format!("{:+.4}", p.mean_difference),
                    format!(
                        "{:.0}% [{:+.4}, {:+.4}] ({} resamples, seed {})",
                        p.confidence * 100.0,
                        p.ci_low,
                        p.ci_high,
                        p.resamples,
                        p.seed
                    ),
                ]
            })
            .collect();
        md_table(&mut out, &header, &rows);
    }
    if !report.unknown_instances.is_empty() {
        let _ = writeln!(
            out,
            "Note: {} instances of the results are not in the benchmark: {}\n",
            report.unknown_instances.len(),
            report.unknown_instances.join(", ")
        );
    }
    out
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn csv_line(cells: &[String]) -> String {
    let mut line = cells
        .iter()
        .map(|c| csv_field(c))
        .collect::<Vec<_>>()
        .join(",");
    line.push('\n');
    line
}

fn csv_header(prefix: &[&str]) -> String {
    let mut header: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
    header.extend(
        ["explorer", "top_k", "instances", "failures"]
            .iter()
            .map(|s| s.to_string()),
    );
    header.extend(Metrics::NAMES.iter().map(|s| s.to_string()));
    header.extend(["lines_median", "lines_mean", "lines_p90"].map(String::from));
    header.extend(Metrics::NAMES.iter().map(|s| format!("real_{s}")));
    csv_line(&header)
}

/// A CSV line of a mean row: counts, the 17 means, lines returned and the 17 real-length means
/// (empty cells when the rows were scored without the snapshots).
fn csv_mean_cells(row: &MeanRow) -> Vec<String> {
    let mut cells = mean_cells(row, &Metrics::NAMES, 6);
    let lines = cells.len() - 3;
    if row.lines.is_none() {
        for cell in &mut cells[lines..] {
            cell.clear();
        }
    }
    match &row.real {
        Some(real) => cells.extend(real.values().iter().map(|v| format!("{v:.6}"))),
        None => cells.extend(std::iter::repeat_n(String::new(), 17)),
    }
    cells
}

/// `means.csv`: explorer, k, counts and the 17 means.
pub fn csv_means(report: &Report) -> String {
    let mut out = csv_header(&[]);
    for row in &report.overall {
        out.push_str(&csv_line(&csv_mean_cells(row)));
    }
    out
}

/// `breakdown.csv`: the per-repository and per-language means, `kind` = `repo` or `language`.
pub fn csv_breakdown(report: &Report) -> String {
    let mut out = csv_header(&["kind", "group"]);
    for (kind, groups) in [("repo", &report.by_repo), ("language", &report.by_language)] {
        for group in groups.iter() {
            out.push_str(&breakdown_lines(kind, group));
        }
    }
    out
}

fn breakdown_lines(kind: &str, group: &GroupMeans) -> String {
    group
        .means
        .iter()
        .map(|m| {
            let mut cells = vec![kind.to_string(), group.group.clone()];
            cells.extend(csv_mean_cells(m));
            csv_line(&cells)
        })
        .collect()
}

/// `paired.csv`: one line per comparison and k.
pub fn csv_paired(report: &Report) -> String {
    let mut out = csv_line(
        &[
            "first",
            "second",
            "top_k",
            "metric",
            "instances",
            "wins",
            "losses",
            "ties",
            "mean_difference",
            "ci_low",
            "ci_high",
            "confidence",
            "resamples",
            "seed",
        ]
        .map(String::from),
    );
    for p in &report.paired {
        out.push_str(&csv_line(&[
            p.a.clone(),
            p.b.clone(),
            p.top_k.to_string(),
            p.metric.clone(),
            p.instances.to_string(),
            p.wins.to_string(),
            p.losses.to_string(),
            p.ties.to_string(),
            format!("{:.6}", p.mean_difference),
            format!("{:.6}", p.ci_low),
            format!("{:.6}", p.ci_high),
            p.confidence.to_string(),
            p.resamples.to_string(),
            p.seed.to_string(),
        ]));
    }
    out
}

/// The report as pretty JSON (without the per-instance drill-down, which is in the HTML).
pub fn json(report: &Report) -> String {
    let mut text = serde_json::to_string_pretty(report).expect("a report serialises");
    text.push('\n');
    text
}
