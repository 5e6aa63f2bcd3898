//! The learned file ranker: gradient-boosted trees (LambdaMART, trained by `swex train` on real
//! fixes; docs/ranker.md) over one feature row per candidate source file.
//!
//! The rows are built from the same evidence as the linear score ([`crate::rank::Features`]) plus
//! what a tree can use and a linear score could not: the file's role and kind (documentation,
//! barrel, vendored, header, config or prose), its depth and length, how common its extension
//! is among the candidates and among the best lexical hits, and the query's size. No feature
//! names a repository, an instance or a language: a model trained on some repositories must
//! carry over to others.
//!
//! Only source files are re-ranked: tests keep the linear order (the planner takes tests by
//! their partner rule, [`crate::locate::order_tests`]), and the fixes the model learns from edit
//! sources. The learned scores are divided by the model's `temperature`, calibrated on held-out
//! folds so that the planner's softmax over them ([`crate::locate`]) gives probabilities.

use crate::proximity::Proximity;
use crate::rank::{RankedFile, is_doc_path, is_header_path};
use serde::Serialize;
use std::collections::HashMap;
use swex_plugin::text::paths::path_role;
use swex_plugin::types::SearchHit;
use swex_rankkit::trees::{ModelError, TreeEnsemble};

/// The features of a row, in order. A model is checked against this list when it is loaded.
pub const FEATURES: &[&str] = &[
    "lexical",
    "lexical_rank_inverse",
    "source_lexical_rank_log",
    "title_lexical",
    "symbols",
    "title_symbols",
    "defined_names",
    "mentions",
    "frames",
    "last_frame",
    "names",
    "dirs",
    "partner_test",
    "is_doc",
    "is_barrel",
    "is_vendored",
    "is_header",
    "is_unparsed",
    "depth",
    "lines_log",
    "extension_share",
    "extension_share_top_hits",
    "candidates_log",
    "lexical_hits_log",
    "lexical_best_chunk",
    "title_lexical_rank_log",
    "symbols_rank_log",
    "directory_lexical",
    "directory_of_top_source",
    "title_file_lexical",
    "graph_issue",
    "graph_top",
    "dense",
    "dense_relative",
    "dense_rank_log",
    "history",
    "history_relative",
    "history_rank_log",
    "similar_commits_relative",
    "referenced_relative",
    "title_similar_commits_relative",
];

/// The features read from the code graph ([`crate::proximity`]), last in [`FEATURES`]: the graph
/// is built for them on a snapshot's first query, so they are computed only when the model reads
/// one or the features are emitted for training, and are 0 otherwise.
pub const GRAPH_FEATURES: &[&str] = &["graph_issue", "graph_top"];

/// The features of the dense layer ([`crate::similarity`]), last in [`FEATURES`]: they need the
/// embedding model and one embedded query per answer, so they are computed only when the model
/// reads one or the features are emitted, and take their absent values otherwise.
pub const DENSE_FEATURES: &[&str] = &["dense", "dense_relative", "dense_rank_log"];

/// The features of the repository history ([`crate::history`]), last in [`FEATURES`]: absent
/// values (0, 0, [`ABSENT_RANK_LOG`], 0, 0, 0) for a checkout without git history.
pub const HISTORY_FEATURES: &[&str] = &[
    "history",
    "history_relative",
    "history_rank_log",
    "similar_commits_relative",
    "referenced_relative",
    "title_similar_commits_relative",
];

/// The history feature that needs a second history search, of the issue's title alone: read
/// only when a model or the linear weights ask for it, or the features are emitted.
pub const TITLE_HISTORY_FEATURES: &[&str] = &["title_similar_commits_relative"];

/// The evidence that costs more than the ranking's own, asked for only when read: the code
/// graph's walks, the dense layer's similarities and the repository history (each absent when
/// not asked for).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExtraEvidence {
    pub proximity: Proximity,
    /// The dense similarities ([`crate::similarity`]).
    pub similarity: FileScores,
    /// The history's matches and similar commits ([`crate::history`]).
    pub history: crate::history::History,
}

/// A file model shipped with the explorer (trained on `../shared/data/train`; its `training`
/// field says on what, and its held-out metrics) and the languages whose lead it leaves to the
/// linear weights: those where, on held-out folds, the linear ranking picked the first file
/// better (docs/ranker.md); [`EVERY_LANGUAGE`] for all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShippedModel {
    pub json: &'static str,
    /// The languages whose lead the linear weights pick when the repository history says
    /// something of the candidates (the linear score reads it).
    pub linear_languages: &'static [&'static str],
    /// The same when it says nothing: a checkout without git history (a plain folder, a
    /// tarball, a shallow clone's single commit), or an issue no past commit matches. The linear
    /// score is then the one without history, and the lists differ because the held-out folds
    /// of the two rankings do.
    pub linear_languages_without_history: &'static [&'static str],
}

/// In a list of linear languages: every query, whatever its language (or none).
pub const EVERY_LANGUAGE: &str = "*";

/// The default file model: no graph, dense or history feature. Since the linear score reads the
/// repository history, the linear ranking picks the first file better in every language on
/// held-out folds (docs/ranker.md, "Repository history"): the lead is linear everywhere, the
/// trees order the sources below it. Without history the blend of the trees picks it better
/// outside Python and JavaScript (docs/ranker.md, "Without history").
pub const SHIPPED: ShippedModel = ShippedModel {
    json: include_str!("../model/file-ranker.json"),
    linear_languages: &[EVERY_LANGUAGE],
    linear_languages_without_history: &["python", "javascript"],
};

/// The file model that also reads the dense similarities (`"dense": true`; it needs the
/// embedding model). It beat the linear ranking on held-out folds in every language.
pub const SHIPPED_DENSE: ShippedModel = ShippedModel {
    json: include_str!("../model/file-ranker-dense.json"),
    linear_languages: &[],
    linear_languages_without_history: &[],
};

/// A learned file ranker: the trees and the temperature that calibrates their scores. Made only
/// by [`FileRanker::from_json`] (or [`FileRanker::of`]), which checks the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileRanker {
    #[serde(flatten)]
    pub ensemble: TreeEnsemble,
    /// Scores are divided by this before the planner's softmax (chosen on held-out folds).
    pub temperature: f64,
    /// The weight of a file's linear score added to its tree score (0: the trees alone). A model
    /// trained with `--linear-share` blends the two (the trainer folds the blend's calibration
    /// into this and the temperature), so it reads the linear weights' ranking as evidence.
    pub linear_weight: f64,
    /// What the model was trained on and how it did on held-out folds (kept as written).
    pub training: serde_json::Value,
    /// Whether some split reads each column of [`FEATURES`]: found once when the model is read,
    /// since the explorer asks it per answer.
    #[serde(skip)]
    columns_read: Vec<bool>,
}

impl FileRanker {
    /// The default shipped model ([`SHIPPED`]).
    pub fn shipped() -> FileRanker {
        FileRanker::of(SHIPPED)
    }

    /// A shipped model.
    pub fn of(model: ShippedModel) -> FileRanker {
        let value: serde_json::Value =
            serde_json::from_str(model.json).expect("a shipped model is JSON");
        FileRanker::from_json(&value).expect("a shipped model is valid")
    }

    /// Reads a model: a `swex-trees/1` ensemble over features among [`FEATURES`] (by name, in any
    /// order: models trained before a feature was added keep working), with a positive
    /// temperature.
    pub fn from_json(value: &serde_json::Value) -> Result<FileRanker, ModelError> {
        let (ensemble, temperature, training) = read_model(value, FEATURES)?;
        let linear_weight = value
            .get("linear_weight")
            .map_or(Some(0.0), serde_json::Value::as_f64)
            .filter(|w| w.is_finite() && *w >= 0.0)
            .ok_or_else(|| {
                ModelError(format!(
                    "linear_weight {} (must be a number, at least 0)",
                    value["linear_weight"]
                ))
            })?;
        let mut columns_read = vec![false; FEATURES.len()];
        for tree in &ensemble.trees {
            for &column in &tree.split_feature {
                if let Some(read) = columns_read.get_mut(column) {
                    *read = true;
                }
            }
        }
        Ok(FileRanker {
            ensemble,
            temperature,
            linear_weight,
            training,
            columns_read,
        })
    }

    /// Whether the model reads any of `features` (names of [`FEATURES`]), such as
    /// [`GRAPH_FEATURES`] or [`DENSE_FEATURES`].
    pub fn reads_any(&self, features: &[&str]) -> bool {
        features.iter().any(|name| {
            FEATURES
                .iter()
                .position(|f| f == name)
                .is_some_and(|column| self.columns_read[column])
        })
    }

    /// Re-ranks the source files of a linear ranking by the model: sources first, by calibrated
    /// learned score (`linear_weight` × the linear score + trees / `temperature`; ties by path),
    /// then the tests in their linear order.
    pub fn rerank(
        &self,
        ranked: Vec<RankedFile>,
        hits: &[SearchHit],
        extra: &ExtraEvidence,
    ) -> Vec<RankedFile> {
        let (rows, sources, tests) = rows_sources_tests(ranked, hits, extra);
        let mut out: Vec<RankedFile> = self
            .learned_order(sources, &rows)
            .into_iter()
            .map(|(score, mut file)| {
                file.score = score;
                file
            })
            .collect();
        out.extend(tests);
        out
    }

    /// Re-ranks the source files below the lead of a linear ranking by the model, the lead kept:
    /// for the languages where the linear ranking picks the first file better but the model
    /// orders the next ones better (docs/ranker.md, "The lead stays linear"). Each place keeps
    /// its linear score — the lead's, the second-best, … — so the beliefs the planner reads
    /// from the scores are those of the linear ranking, place by place. Sources first (ties by
    /// path), then the tests in their linear order.
    pub fn rerank_below_lead(
        &self,
        ranked: Vec<RankedFile>,
        hits: &[SearchHit],
        extra: &ExtraEvidence,
    ) -> Vec<RankedFile> {
        let (rows, mut sources, tests) = rows_sources_tests(ranked, hits, extra);
        sources.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
        let places: Vec<f64> = sources.iter().map(|f| f.score).collect();
        let below = sources.split_off(sources.len().min(1));
        for ((_, mut file), &place) in self
            .learned_order(below, &rows)
            .into_iter()
            .zip(places.iter().skip(1))
        {
            file.score = place;
            sources.push(file);
        }
        sources.extend(tests);
        sources
    }

    /// Files with their calibrated learned scores (`linear_weight` × the linear score + the
    /// trees' score / `temperature`), best first, ties by path.
    fn learned_order(
        &self,
        files: Vec<RankedFile>,
        rows: &HashMap<String, Vec<f64>>,
    ) -> Vec<(f64, RankedFile)> {
        let mut scored: Vec<(f64, RankedFile)> = files
            .into_iter()
            .map(|f| {
                let trees = self.ensemble.score(&rows[&f.path]);
                (self.linear_weight * f.score + trees / self.temperature, f)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.path.cmp(&b.1.path)));
        scored
    }
}

/// A ranking's feature rows (by path), and its source files and tests apart, each in the
/// ranking's order.
fn rows_sources_tests(
    ranked: Vec<RankedFile>,
    hits: &[SearchHit],
    extra: &ExtraEvidence,
) -> (HashMap<String, Vec<f64>>, Vec<RankedFile>, Vec<RankedFile>) {
    let rows = feature_rows(&ranked, hits, extra);
    let (sources, tests) = ranked.into_iter().partition(|f| !f.is_test);
    (rows, sources, tests)
}

/// A `swex-trees/1` model over features among `computed`: its ensemble re-pointed at rows of
/// `computed` ([`TreeEnsemble::over`]), its positive temperature (1 when it has none) and its
/// training record.
pub fn read_model(
    value: &serde_json::Value,
    computed: &[&str],
) -> Result<(TreeEnsemble, f64, serde_json::Value), ModelError> {
    let ensemble = TreeEnsemble::from_json(value)?.over(computed)?;
    let temperature = value
        .get("temperature")
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(1.0);
    if !(temperature.is_finite() && temperature > 0.0) {
        return Err(ModelError(format!(
            "temperature {temperature} (must be positive)"
        )));
    }
    let training = value.get("training").cloned().unwrap_or_default();
    Ok((ensemble, temperature, training))
}

/// How many of the best lexical sources say a query's language.
const LANGUAGE_VOTERS: usize = 20;

/// The language of a query: the most common language (as the engine names it) of the best
/// lexical source files of the ranking, ties by name; `None` when no such file has one.
pub fn query_language(ranked: &[RankedFile]) -> Option<&str> {
    let lexical = lexical_sources(ranked);
    let mut votes: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for f in lexical.iter().take(LANGUAGE_VOTERS) {
        if let Some(l) = f.language.as_deref() {
            *votes.entry(l).or_default() += 1;
        }
    }
    votes
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
        .map(|(l, _)| l)
}

/// The source files of a ranking that lexical search found, in its order (ties by path).
fn lexical_sources(ranked: &[RankedFile]) -> Vec<&RankedFile> {
    let mut lexical: Vec<&RankedFile> = ranked
        .iter()
        .filter(|f| !f.is_test && f.features.lexical_rank.is_some())
        .collect();
    lexical.sort_by_key(|f| (f.features.lexical_rank, f.path.as_str()));
    lexical
}

/// The value of a rank feature (`ln(1 + rank)`) for a file without that rank: above any rank a
/// candidate list reaches.
pub const ABSENT_RANK_LOG: f64 = 10.0;

/// `ln(1 + rank)`, or [`ABSENT_RANK_LOG`] without a rank.
pub fn rank_log(rank: Option<usize>) -> f64 {
    rank.map_or(ABSENT_RANK_LOG, |r| (1.0 + r as f64).ln())
}

/// Per-file scores of one kind of evidence (the dense similarities, the history matches), ranked:
/// the three values a feature row reads of each — the score, the score over the best one's, and
/// the log of the rank.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileScores {
    /// Each scored file's score and rank (best first, ties by path).
    scores: HashMap<String, (f64, usize)>,
    top: f64,
}

impl FileScores {
    /// From (path, score) pairs, one per file, in any order.
    pub fn ranked(files: impl IntoIterator<Item = (String, f64)>) -> FileScores {
        let mut files: Vec<(String, f64)> = files.into_iter().collect();
        files.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let top = files.first().map_or(0.0, |f| f.1);
        FileScores {
            scores: files
                .into_iter()
                .enumerate()
                .map(|(rank, (path, score))| (path, (score, rank)))
                .collect(),
            top,
        }
    }

    /// Whether no file has a score.
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    /// The file's score (0 when it has none).
    pub fn score(&self, path: &str) -> f64 {
        self.scores.get(path).map_or(0.0, |s| s.0)
    }

    /// The file's score over the best file's (0 when it has none, or when the best is not
    /// positive).
    pub fn relative(&self, path: &str) -> f64 {
        if self.top <= 0.0 {
            return 0.0;
        }
        self.scores.get(path).map_or(0.0, |s| s.0 / self.top)
    }

    /// ln(1 + the file's rank among the scored files), [`ABSENT_RANK_LOG`] when it has none.
    pub fn rank_log(&self, path: &str) -> f64 {
        rank_log(self.scores.get(path).map(|s| s.1))
    }
}

/// One feature row per candidate source file of a ranking, by path (see [`FEATURES`]); the graph
/// and dense features from `extra` (absent values when it has none).
pub fn feature_rows(
    ranked: &[RankedFile],
    hits: &[SearchHit],
    extra: &ExtraEvidence,
) -> HashMap<String, Vec<f64>> {
    let sources: Vec<&RankedFile> = ranked.iter().filter(|f| !f.is_test).collect();
    // A rank among sources, not among all files (tests and docs crowd the top of a lexical list
    // in some repositories and not in others).
    let lexical = lexical_sources(ranked);
    let source_rank: HashMap<&str, usize> = lexical
        .iter()
        .enumerate()
        .map(|(rank, f)| (f.path.as_str(), rank))
        .collect();
    let share = |paths: &mut dyn Iterator<Item = &str>| -> HashMap<String, f64> {
        let mut counts: HashMap<String, f64> = HashMap::new();
        let mut total = 0.0;
        for path in paths {
            *counts.entry(extension(path).to_owned()).or_default() += 1.0;
            total += 1.0;
        }
        counts.values_mut().for_each(|c| *c /= f64::max(total, 1.0));
        counts
    };
    let all_share = share(&mut sources.iter().map(|f| f.path.as_str()));
    let top_share = share(&mut lexical.iter().take(20).map(|f| f.path.as_str()));
    let candidates_log = (1.0 + sources.len() as f64).ln();
    // Breadth and peak of the lexical evidence: how many chunk hits a file has, and its best
    // chunk against the best chunk of all.
    let best_hit = hits.iter().map(|h| h.score).fold(0.0, f64::max);
    let mut file_hits: HashMap<&str, (usize, f64)> = HashMap::new();
    for hit in hits {
        let entry = file_hits.entry(hit.path.as_str()).or_default();
        entry.0 += 1;
        entry.1 = entry.1.max(hit.score);
    }
    let rank_by = |key: &dyn Fn(&RankedFile) -> f64| -> HashMap<&str, usize> {
        let mut touched: Vec<&RankedFile> =
            sources.iter().copied().filter(|f| key(f) > 0.0).collect();
        touched.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.path.cmp(&b.path)));
        touched
            .iter()
            .enumerate()
            .map(|(rank, f)| (f.path.as_str(), rank))
            .collect()
    };
    let title_rank = rank_by(&|f| f.features.title_lexical);
    let symbols_rank = rank_by(&|f| f.features.symbols);
    // Directory evidence: the lexical of the other sources of the file's folder (an issue about
    // one area of the code matches several of its files), and whether the folder is the best
    // lexical source's.
    let mut folder_lexical: HashMap<&str, f64> = HashMap::new();
    for f in &sources {
        *folder_lexical.entry(folder(&f.path)).or_default() += f.features.lexical;
    }
    let top_folder = lexical.first().map(|f| folder(&f.path));
    let log_rank = |rank: Option<&usize>| rank_log(rank.copied());
    sources
        .iter()
        .map(|file| {
            let path = file.path.as_str();
            let f = &file.features;
            let role = path_role(path);
            let ext = extension(path);
            let flag = |b: bool| if b { 1.0 } else { 0.0 };
            let row = vec![
                f.lexical,
                f.lexical_rank.map_or(0.0, |r| 1.0 / (1.0 + r as f64)),
                log_rank(source_rank.get(path)),
                f.title_lexical,
                f.symbols.ln_1p(),
                f.title_symbols.ln_1p(),
                f.defined.len() as f64,
                f.mentions.min(3.0),
                f.frames.min(3.0),
                f.last_frame,
                f.names.ln_1p(),
                f.dirs.ln_1p(),
                f.partner_test,
                flag(is_doc_path(path)),
                flag(role.barrel),
                flag(file.vendored),
                flag(is_header_path(path)),
                flag(file.language.is_none()),
                path.matches('/').count() as f64,
                file.line_count.map_or(0.0, |n| (1.0 + f64::from(n)).ln()),
                all_share.get(ext).copied().unwrap_or(0.0),
                top_share.get(ext).copied().unwrap_or(0.0),
                candidates_log,
                file_hits
                    .get(path)
                    .map_or(0.0, |(n, _)| (1.0 + *n as f64).ln()),
                file_hits
                    .get(path)
                    .map_or(0.0, |(_, best)| best / best_hit.max(f64::MIN_POSITIVE)),
                log_rank(title_rank.get(path)),
                log_rank(symbols_rank.get(path)),
                folder_lexical[folder(path)] - f.lexical,
                flag(top_folder == Some(folder(path))),
                f.title_file_lexical,
                extra.proximity.from_issue(path),
                extra.proximity.from_top(path),
                extra.similarity.score(path),
                extra.similarity.relative(path),
                extra.similarity.rank_log(path),
                extra.history.matches.score(path),
                extra.history.matches.relative(path),
                extra.history.matches.rank_log(path),
                extra.history.similar_commits.relative(path),
                extra.history.referenced.relative(path),
                extra.history.title_similar_commits.relative(path),
            ];
            debug_assert_eq!(row.len(), FEATURES.len());
            (file.path.clone(), row)
        })
        .collect()
}

/// The folder of a path (`""` at the top).
fn folder(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// The part of the file name after its last dot (`""` for none).
fn extension(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').map_or("", |(_, ext)| ext)
}

/// The note that carries the candidates' feature rows (for `swex train`): one JSON object
/// `{"features": [...], "candidates": [{"path", "row", "linear"}]}` after the prefix.
pub const FEATURES_NOTE_PREFIX: &str = "swex-features ";

/// The features note of a ranking (sources only, in the linear order).
pub fn features_note(ranked: &[RankedFile], hits: &[SearchHit], extra: &ExtraEvidence) -> String {
    let rows = feature_rows(ranked, hits, extra);
    let candidates: Vec<serde_json::Value> = ranked
        .iter()
        .filter(|f| !f.is_test)
        .map(|f| serde_json::json!({"path": f.path, "row": rows[&f.path], "linear": f.score}))
        .collect();
    format!(
        "{FEATURES_NOTE_PREFIX}{}",
        serde_json::json!({"features": FEATURES, "candidates": candidates})
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rank::Features;

    fn ranked(path: &str, score: f64, lexical_rank: Option<usize>) -> RankedFile {
        RankedFile {
            path: path.to_owned(),
            score,
            features: Features {
                lexical: 0.5,
                lexical_rank,
                ..Features::default()
            },
            is_test: crate::rank::is_test_path(path),
            vendored: false,
            line_count: Some(100),
            language: None,
        }
    }

    /// `ranked` with the engine's language of the file.
    fn ranked_in(
        language: &str,
        path: &str,
        score: f64,
        lexical_rank: Option<usize>,
    ) -> RankedFile {
        RankedFile {
            language: Some(language.to_owned()),
            ..ranked(path, score, lexical_rank)
        }
    }

    #[test]
    fn rows_describe_role_kind_and_rank_among_sources() {
        let list = vec![
            ranked("tests/test_core.py", 3.0, Some(0)),
            ranked_in("python", "pkg/core.py", 2.0, Some(1)),
            ranked_in("c", "include/core.h", 1.0, Some(2)),
            ranked("docs/core.rst", 0.5, None),
        ];
        let rows = feature_rows(&list, &[], &ExtraEvidence::default());
        assert!(!rows.contains_key("tests/test_core.py"), "tests get no row");
        let value = |path: &str, feature: &str| {
            rows[path][FEATURES.iter().position(|f| *f == feature).unwrap()]
        };
        assert_eq!(value("pkg/core.py", "source_lexical_rank_log"), 1f64.ln());
        assert_eq!(
            value("include/core.h", "source_lexical_rank_log"),
            2f64.ln()
        );
        assert_eq!(value("docs/core.rst", "source_lexical_rank_log"), 10.0);
        assert_eq!(value("include/core.h", "is_header"), 1.0);
        assert_eq!(value("docs/core.rst", "is_doc"), 1.0);
        assert_eq!(value("docs/core.rst", "is_unparsed"), 1.0);
        assert_eq!(value("pkg/core.py", "is_unparsed"), 0.0);
        assert_eq!(value("pkg/core.py", "extension_share"), 1.0 / 3.0);
        assert_eq!(value("pkg/core.py", "extension_share_top_hits"), 0.5);
        assert_eq!(value("pkg/core.py", "depth"), 1.0);
    }

    #[test]
    fn a_querys_language_is_the_most_common_among_its_best_lexical_sources() {
        let list = vec![
            ranked_in("rust", "src/a.rs", 1.0, Some(0)),
            ranked_in("python", "tests/test_x.py", 1.0, Some(1)),
            ranked_in("python", "tests/test_y.py", 1.0, Some(2)),
            ranked_in("python", "b.py", 1.0, Some(3)),
            ranked_in("rust", "src/c.rs", 1.0, Some(4)),
            ranked_in("python", "d.py", 1.0, None),
            ranked_in("python", "e.py", 1.0, None),
        ];
        // Tests and files without a lexical hit do not vote: rust 2, python 1.
        assert_eq!(query_language(&list), Some("rust"));
        assert_eq!(query_language(&list[1..4]), Some("python"));
        assert_eq!(query_language(&[]), None);
    }

    #[test]
    fn the_default_model_reads_neither_graph_nor_dense_features_and_the_dense_one_reads_dense() {
        // What the explorer asks the host for follows from this: the default answers need no
        // code graph and no embedding model.
        let default = FileRanker::shipped();
        assert!(!default.reads_any(GRAPH_FEATURES));
        assert!(!default.reads_any(DENSE_FEATURES));
        let dense = FileRanker::of(SHIPPED_DENSE);
        assert!(dense.reads_any(DENSE_FEATURES));
        assert!(!dense.reads_any(GRAPH_FEATURES));
    }

    #[test]
    fn the_shipped_models_reproduce_their_trainers_scores() {
        // The trainer stores rows with LightGBM's own predictions next to the model: the pure
        // Rust inference must give the same numbers, for the file and the span model alike.
        // The rows are in the order of the model's features; the explorer scores rows of every
        // feature it computes, so each value is put at its feature's place there by name.
        let files = FileRanker::shipped();
        let dense = FileRanker::of(SHIPPED_DENSE);
        let spans = crate::spans::SpanRanker::shipped();
        for (name, ensemble, training, json) in [
            ("file", &files.ensemble, &files.training, SHIPPED.json),
            (
                "dense file",
                &dense.ensemble,
                &dense.training,
                SHIPPED_DENSE.json,
            ),
            (
                "span",
                &spans.ensemble,
                &spans.training,
                crate::spans::DEFAULT_MODEL,
            ),
        ] {
            let trained: serde_json::Value = serde_json::from_str(json).unwrap();
            let trained: Vec<String> = serde_json::from_value(trained["features"].clone()).unwrap();
            let checks = training["checks"]
                .as_array()
                .unwrap_or_else(|| panic!("the shipped {name} model carries checks"));
            assert!(checks.len() >= 10, "{name}");
            for check in checks {
                let row: Vec<f64> = serde_json::from_value(check["row"].clone()).unwrap();
                let expected = check["score"].as_f64().unwrap();
                let wide: Vec<f64> = ensemble
                    .features
                    .iter()
                    .map(|f| trained.iter().position(|t| t == f).map_or(0.0, |i| row[i]))
                    .collect();
                let got = ensemble.score(&wide);
                assert!(
                    (got - expected).abs() <= 1e-9 * expected.abs().max(1.0),
                    "{name} model, {row:?}: {got} vs LightGBM {expected}"
                );
            }
        }
    }

    #[test]
    fn sources_are_reranked_and_tests_keep_their_order() {
        let ranker = FileRanker::shipped();
        let list = vec![
            ranked("tests/test_b.py", 5.0, Some(0)),
            ranked("pkg/a.py", 4.0, Some(1)),
            ranked("tests/test_a.py", 3.0, Some(2)),
            ranked("pkg/b.py", 2.0, Some(3)),
        ];
        let out = ranker.rerank(list, &[], &ExtraEvidence::default());
        let paths: Vec<&str> = out.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(&paths[2..], ["tests/test_b.py", "tests/test_a.py"]);
        assert!(out[0].score >= out[1].score);
    }

    /// A model with a `linear_weight` adds that share of each file's linear score to its trees'
    /// score: with trees that score every file alike, the linear order decides, and the scores are
    /// the linear ones times the weight plus the trees' constant over the temperature.
    #[test]
    fn a_linear_weight_blends_the_linear_score_into_the_trees() {
        let model = |linear_weight: serde_json::Value| {
            serde_json::json!({"format": "swex-trees/1", "features": ["lexical"], "temperature": 2.0,
                "linear_weight": linear_weight,
                "trees": [{"split_feature": [], "threshold": [], "left_child": [], "right_child": [], "leaf_value": [1.0]}]})
        };
        let ranker = FileRanker::from_json(&model(0.5.into())).unwrap();
        let list = vec![
            ranked("pkg/low.py", 1.0, Some(1)),
            ranked("pkg/high.py", 3.0, Some(0)),
        ];
        let out = ranker.rerank(list, &[], &ExtraEvidence::default());
        let got: Vec<(&str, f64)> = out.iter().map(|f| (f.path.as_str(), f.score)).collect();
        assert_eq!(
            got,
            [
                ("pkg/high.py", 0.5 * 3.0 + 0.5),
                ("pkg/low.py", 0.5 * 1.0 + 0.5)
            ]
        );
        // Without one, the trees alone: a tie, broken by path.
        let mut alone = model(0.0.into());
        alone.as_object_mut().unwrap().remove("linear_weight");
        let ranker = FileRanker::from_json(&alone).unwrap();
        let list = vec![
            ranked("pkg/low.py", 1.0, Some(1)),
            ranked("pkg/high.py", 3.0, Some(0)),
        ];
        let out = ranker.rerank(list, &[], &ExtraEvidence::default());
        assert_eq!(out[0].path, "pkg/high.py");
        assert_eq!((out[0].score, out[1].score), (0.5, 0.5));
        for bad in [serde_json::json!(-1.0), serde_json::json!("much")] {
            let error = FileRanker::from_json(&model(bad)).unwrap_err();
            assert!(error.0.contains("linear_weight"), "{error}");
        }
    }

    /// Below a linear lead, the model orders the sources and each place keeps the linear score
    /// it had: here trees that prefer the sources third and later in lexical rank.
    #[test]
    fn below_a_linear_lead_the_model_orders_the_places_and_they_keep_their_scores() {
        let ranker = FileRanker::from_json(&serde_json::json!({
            "format": "swex-trees/1", "features": ["source_lexical_rank_log"],
            "trees": [{"split_feature": [0], "threshold": [0.9], "left_child": [-1],
                "right_child": [-2], "leaf_value": [0.0, 1.0]}]}))
        .unwrap();
        let list = || {
            vec![
                ranked("tests/test_a.py", 5.0, None),
                ranked("pkg/a.py", 4.0, Some(0)),
                ranked("pkg/b.py", 3.0, Some(1)),
                ranked("pkg/c.py", 2.0, Some(2)),
                ranked("pkg/d.py", 1.0, Some(3)),
            ]
        };
        let scored = |out: Vec<RankedFile>| -> Vec<(String, f64)> {
            out.into_iter().map(|f| (f.path, f.score)).collect()
        };
        let below = scored(ranker.rerank_below_lead(list(), &[], &ExtraEvidence::default()));
        let expected = [
            ("pkg/a.py", 4.0),
            ("pkg/c.py", 3.0),
            ("pkg/d.py", 2.0),
            ("pkg/b.py", 1.0),
            ("tests/test_a.py", 5.0),
        ];
        let expected: Vec<(String, f64)> =
            expected.iter().map(|(p, s)| (p.to_string(), *s)).collect();
        assert_eq!(below, expected);
        // The whole re-ranking would have put the lead below the two the trees prefer.
        let whole = scored(ranker.rerank(list(), &[], &ExtraEvidence::default()));
        assert_eq!(whole[0].0, "pkg/c.py");
        assert_eq!(whole[2].0, "pkg/a.py");
        // One source or none: nothing to re-order.
        let one = vec![ranked("pkg/a.py", 4.0, Some(0))];
        let out = ranker.rerank_below_lead(one, &[], &ExtraEvidence::default());
        assert_eq!(scored(out), [("pkg/a.py".to_string(), 4.0)]);
        let tests_only = vec![ranked("tests/test_a.py", 5.0, None)];
        let out = ranker.rerank_below_lead(tests_only, &[], &ExtraEvidence::default());
        assert_eq!(scored(out), [("tests/test_a.py".to_string(), 5.0)]);
    }

    #[test]
    fn a_model_over_other_features_is_refused() {
        let mut value: serde_json::Value = serde_json::from_str(SHIPPED.json).unwrap();
        value["features"][0] = "something_else".into();
        let error = FileRanker::from_json(&value).unwrap_err();
        assert!(error.0.contains("something_else"), "{error}");
    }
}
