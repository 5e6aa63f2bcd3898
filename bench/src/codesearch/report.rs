//! Means of code-search rows, the benchmark's way, next to the published methods.
//!
//! - A repository's score is the mean NDCG@10 over its queries (failed rows count as 0).
//! - The overall score is the mean over repositories of their scores; a category's (a
//!   language's) score is the mean over the repositories that have queries in that category (of
//!   that language) of their per-category score. The query-weighted mean is given too.
//! - Published methods are averaged over the same repositories as the run, so a run on a subset
//!   is compared on that subset; a method without a score for some of them says how many it has.
//!
//! Timings: p50/p90 of the per-query explorer time and the p50 of the per-repository service
//! opening time, as recorded in the rows.
//!
//! This module knows rows and published scores only; [`render_markdown`] formats.

use super::data::Category;
use super::published::Published;
use super::run::CodeSearchRow;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A score broken down the benchmark's way.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Breakdown {
    /// Repositories averaged.
    pub repos: usize,
    pub overall: f64,
    pub by_category: BTreeMap<Category, f64>,
    pub by_language: BTreeMap<String, f64>,
    pub per_repo: BTreeMap<String, f64>,
    /// Per repository and category (the repository's mean over its queries in the category).
    pub per_repo_category: BTreeMap<String, BTreeMap<Category, f64>>,
}

/// One explorer of the rows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExplorerScores {
    pub explorer: String,
    pub scores: Breakdown,
    pub queries: usize,
    pub failures: usize,
    /// Mean over all queries (not over repositories).
    pub query_weighted: f64,
    pub query_ms_p50: f64,
    pub query_ms_p90: f64,
    pub index_ms_p50: f64,
}

/// A published method over the run's repositories.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PublishedScores {
    pub key: String,
    pub label: String,
    pub scoring: super::metrics::Scoring,
    pub scores: Breakdown,
    /// Run repositories the method has no score for.
    pub missing_repos: Vec<String>,
}

/// A run's repository.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepoInfo {
    pub name: String,
    pub language: String,
    pub queries: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CodeSearchReport {
    pub repos: Vec<RepoInfo>,
    pub explorers: Vec<ExplorerScores>,
    pub published: Vec<PublishedScores>,
}

fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = values
        .into_iter()
        .fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// The `q`-quantile (nearest rank) of `values`.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Averages per-repository scores over repositories, categories and languages.
fn breakdown(
    per_repo: BTreeMap<String, f64>,
    per_repo_category: BTreeMap<String, BTreeMap<Category, f64>>,
    language_of: &BTreeMap<String, String>,
) -> Breakdown {
    let by_category = Category::ALL
        .iter()
        .filter_map(|&c| {
            let values: Vec<f64> = per_repo_category
                .values()
                .filter_map(|m| m.get(&c).copied())
                .collect();
            (!values.is_empty()).then(|| (c, mean(values)))
        })
        .collect();
    let mut languages: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (repo, score) in &per_repo {
        if let Some(language) = language_of.get(repo) {
            languages.entry(language.clone()).or_default().push(*score);
        }
    }
    Breakdown {
        repos: per_repo.len(),
        overall: mean(per_repo.values().copied()),
        by_category,
        by_language: languages.into_iter().map(|(l, v)| (l, mean(v))).collect(),
        per_repo,
        per_repo_category,
    }
}

impl CodeSearchReport {
    /// Builds the report of `rows` (any number of explorers), with the published methods when
    /// given.
    pub fn build(rows: &[CodeSearchRow], published: Option<&Published>) -> CodeSearchReport {
        let mut repos: Vec<RepoInfo> = Vec::new();
        let mut explorers: Vec<String> = Vec::new();
        for row in rows {
            if !explorers.contains(&row.explorer) {
                explorers.push(row.explorer.clone());
            }
        }
        for row in rows.iter().filter(|r| r.explorer == explorers[0]) {
            match repos.iter_mut().find(|r| r.name == row.repo) {
                Some(info) => info.queries += 1,
                None => repos.push(RepoInfo {
                    name: row.repo.clone(),
                    language: row.language.clone(),
                    queries: 1,
                }),
            }
        }
        let language_of: BTreeMap<String, String> = repos
            .iter()
            .map(|r| (r.name.clone(), r.language.clone()))
            .collect();
        let explorers = explorers
            .iter()
            .map(|name| {
                let mine: Vec<&CodeSearchRow> =
                    rows.iter().filter(|r| &r.explorer == name).collect();
                let mut by_repo: BTreeMap<String, Vec<f64>> = BTreeMap::new();
                let mut by_repo_category: BTreeMap<String, BTreeMap<Category, Vec<f64>>> =
                    BTreeMap::new();
                let mut index_ms: BTreeMap<String, f64> = BTreeMap::new();
                for row in &mine {
                    by_repo
                        .entry(row.repo.clone())
                        .or_default()
                        .push(row.ndcg10);
                    by_repo_category
                        .entry(row.repo.clone())
                        .or_default()
                        .entry(row.category)
                        .or_default()
                        .push(row.ndcg10);
                    index_ms.insert(row.repo.clone(), row.timings.index_ms);
                }
                let per_repo = by_repo.into_iter().map(|(r, v)| (r, mean(v))).collect();
                let per_repo_category = by_repo_category
                    .into_iter()
                    .map(|(r, m)| (r, m.into_iter().map(|(c, v)| (c, mean(v))).collect()))
                    .collect();
                let query_ms: Vec<f64> = mine
                    .iter()
                    .filter(|r| r.error.is_none())
                    .map(|r| r.timings.query_ms)
                    .collect();
                let index_ms: Vec<f64> = index_ms.into_values().collect();
                ExplorerScores {
                    explorer: name.clone(),
                    scores: breakdown(per_repo, per_repo_category, &language_of),
                    queries: mine.len(),
                    failures: mine.iter().filter(|r| r.error.is_some()).count(),
                    query_weighted: mean(mine.iter().map(|r| r.ndcg10)),
                    query_ms_p50: quantile(&query_ms, 0.5),
                    query_ms_p90: quantile(&query_ms, 0.9),
                    index_ms_p50: quantile(&index_ms, 0.5),
                }
            })
            .collect();
        let published = published
            .map(|p| {
                p.methods
                    .iter()
                    .map(|method| {
                        let mut per_repo = BTreeMap::new();
                        let mut per_repo_category = BTreeMap::new();
                        let mut missing_repos = Vec::new();
                        for repo in &repos {
                            match method.per_repo.get(&repo.name) {
                                Some(score) => {
                                    per_repo.insert(repo.name.clone(), score.ndcg10);
                                    if !score.by_category.is_empty() {
                                        per_repo_category
                                            .insert(repo.name.clone(), score.by_category.clone());
                                    }
                                }
                                None => missing_repos.push(repo.name.clone()),
                            }
                        }
                        PublishedScores {
                            key: method.key.clone(),
                            label: method.label.clone(),
                            scoring: method.scoring,
                            scores: breakdown(per_repo, per_repo_category, &language_of),
                            missing_repos,
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        CodeSearchReport {
            repos,
            explorers,
            published,
        }
    }
}

fn cell(value: Option<f64>) -> String {
    value.map_or_else(|| "".to_string(), |v| format!("{v:.3}"))
}

/// The report as Markdown: the summary (overall and per category, timings), then per repository
/// and per language, swex explorers first and the published methods after them.
pub fn render_markdown(report: &CodeSearchReport) -> String {
    let mut out = String::new();
    let queries: usize = report.repos.iter().map(|r| r.queries).sum();
    let _ = writeln!(
        out,
        "# Code search: NDCG@10 on {} repositories, {queries} queries\n",
        report.repos.len()
    );
    let _ = writeln!(
        out,
        "Mean over repositories (category and language columns: mean over the repositories that \
         have them). Published methods are averaged over the same repositories.\n"
    );
    let _ = writeln!(
        out,
        "| method | repos | all | architecture | semantic | symbol | query-weighted | query p50 ms | query p90 ms | index p50 ms | failed |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for e in &report.explorers {
        let c = |cat| cell(e.scores.by_category.get(&cat).copied());
        let _ = writeln!(
            out,
            "| **{}** | {} | **{:.3}** | {} | {} | {} | {:.3} | {:.2} | {:.2} | {:.0} | {} |",
            e.explorer,
            e.scores.repos,
            e.scores.overall,
            c(Category::Architecture),
            c(Category::Semantic),
            c(Category::Symbol),
            e.query_weighted,
            e.query_ms_p50,
            e.query_ms_p90,
            e.index_ms_p50,
            e.failures
        );
    }
    for p in &report.published {
        let c = |cat| cell(p.scores.by_category.get(&cat).copied());
        let _ = writeln!(
            out,
            "| {} (published{}) | {} | {:.3} | {} | {} | {} | | | | | |",
            p.label,
            if p.scoring == super::metrics::Scoring::File {
                ", file-level"
            } else {
                ""
            },
            p.scores.repos,
            p.scores.overall,
            c(Category::Architecture),
            c(Category::Semantic),
            c(Category::Symbol),
        );
    }
    let columns: Vec<(&str, &Breakdown)> = report
        .explorers
        .iter()
        .map(|e| (e.explorer.as_str(), &e.scores))
        .chain(report.published.iter().map(|p| (p.key.as_str(), &p.scores)))
        .collect();
    let header = |out: &mut String, first: &str| {
        let _ = write!(out, "| {first} |");
        for (name, _) in &columns {
            let _ = write!(out, " {name} |");
        }
        let _ = write!(out, "\n|---|");
        for _ in &columns {
            let _ = write!(out, "---:|");
        }
        out.push('\n');
    };
    let _ = writeln!(out, "\n## Per repository\n");
    header(&mut out, "repository (language, queries)");
    for repo in &report.repos {
        let _ = write!(
            out,
            "| {} ({}, {}) |",
            repo.name, repo.language, repo.queries
        );
        for (_, scores) in &columns {
            let _ = write!(out, " {} |", cell(scores.per_repo.get(&repo.name).copied()));
        }
        out.push('\n');
    }
    let _ = writeln!(out, "\n## Per language\n");
    header(&mut out, "language");
    let mut languages: Vec<&str> = report.repos.iter().map(|r| r.language.as_str()).collect();
    languages.sort_unstable();
    languages.dedup();
    for language in languages {
        let _ = write!(out, "| {language} |");
        for (_, scores) in &columns {
            let _ = write!(
                out,
                " {} |",
                cell(scores.by_language.get(language).copied())
            );
        }
        out.push('\n');
    }
    let missing: Vec<String> = report
        .published
        .iter()
        .filter(|p| !p.missing_repos.is_empty())
        .map(|p| {
            format!(
                "{} has no score for {}",
                p.label,
                p.missing_repos.join(", ")
            )
        })
        .collect();
    if !missing.is_empty() {
        let _ = writeln!(out, "\nNote: {}.", missing.join("; "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codesearch::run::{QueryTimings, Scope, TASK};

    fn row(
        explorer: &str,
        repo: &str,
        language: &str,
        category: Category,
        ndcg: f64,
    ) -> CodeSearchRow {
        CodeSearchRow {
            task: TASK.into(),
            repo: repo.into(),
            language: language.into(),
            query_index: 0,
            query: "q".into(),
            category,
            explorer: explorer.into(),
            results: Vec::new(),
            ndcg10: ndcg,
            ranks: Vec::new(),
            targets: 1,
            scope: Scope::BenchmarkRoot,
            error: None,
            explorer_config: serde_json::Value::Null,
            timings: QueryTimings {
                query_ms: ndcg * 10.0,
                ..QueryTimings::default()
            },
        }
    }

    #[test]
    fn means_are_over_repositories_then_categories() {
        use Category::*;
        let rows = vec![
            // Repo a: two semantic queries (1.0, 0.0) and one symbol (1.0): repo mean 2/3.
            row("s", "a", "python", Semantic, 1.0),
            row("s", "a", "python", Semantic, 0.0),
            row("s", "a", "python", Symbol, 1.0),
            // Repo b: one architecture query (0.5).
            row("s", "b", "go", Architecture, 0.5),
        ];
        let report = CodeSearchReport::build(&rows, None);
        let s = &report.explorers[0];
        assert!((s.scores.overall - (2.0 / 3.0 + 0.5) / 2.0).abs() < 1e-12);
        assert_eq!(s.scores.by_category[&Semantic], 0.5);
        assert_eq!(s.scores.by_category[&Symbol], 1.0);
        assert_eq!(s.scores.by_category[&Architecture], 0.5);
        assert!((s.scores.by_language["python"] - 2.0 / 3.0).abs() < 1e-12);
        assert!((s.query_weighted - 2.5 / 4.0).abs() < 1e-12);
        assert_eq!(report.repos[0].queries, 3);
        assert_eq!(quantile(&[3.0, 1.0, 2.0], 0.5), 2.0);
        assert_eq!(quantile(&[4.0, 1.0, 2.0, 3.0], 0.5), 2.0);
    }

    #[test]
    fn published_methods_are_averaged_over_the_run_repositories() {
        let published = Published::parse(
            r#"{"methods": {"m": {"file": "f", "label": "M", "scoring": "chunk", "per_repo": {
                "a": {"ndcg10": 0.8, "by_category": {"semantic": 0.6}},
                "c": {"ndcg10": 0.0}}}}}"#,
            std::path::Path::new("p.json"),
        )
        .expect("valid");
        let rows = vec![
            row("s", "a", "python", Category::Semantic, 1.0),
            row("s", "b", "go", Category::Semantic, 1.0),
        ];
        let report = CodeSearchReport::build(&rows, Some(&published));
        let m = &report.published[0];
        assert_eq!(m.scores.overall, 0.8);
        assert_eq!(m.scores.by_category[&Category::Semantic], 0.6);
        assert_eq!(m.missing_repos, vec!["b".to_string()]);
        let markdown = render_markdown(&report);
        assert!(
            markdown.contains("| M (published) | 1 | 0.800 |"),
            "{markdown}"
        );
        assert!(markdown.contains("M has no score for b"), "{markdown}");
    }
}
