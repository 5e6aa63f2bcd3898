//! Repository history: how well the commit messages of each candidate code file match the
//! issue, how much of the past commits most like the issue changed it, and how much of the
//! commits naming an issue the issue names (`#1234`) — terms of the linear score
//! ([`crate::rank::Weights::history`], [`crate::rank::Weights::similar_commits`],
//! [`crate::rank::Weights::referenced`], 0 by default) and features of the learned file ranker
//! ([`crate::learned::HISTORY_FEATURES`]).
//!
//! One `history_search` over the candidates (the engine's `swex_engine::history`): BM25 of the
//! issue text against each file's recent commit messages, with the statistics of those
//! candidates, and each file's share of the issue's similar commits. A file's match values are
//! its score, its score over the best candidate's, and the log of its rank; a file no message
//! matches has 0, 0 and [`crate::learned::ABSENT_RANK_LOG`]. Its similar-commit value is its
//! share over the best candidate's (0 when no similar commit changed it), and so is its share
//! of the commits naming the issue's issues. A checkout without git history (a plain folder, a
//! snapshot whose git directory is gone) or a host without the engine gives every file those
//! absent values: the ranking is then the one without history.

use crate::learned::FileScores;
use swex_plugin::types::HistorySearchArgs;
use swex_plugin::{ServiceError, Services};

/// What the history says of the candidates: their messages' matches and their shares of the
/// similar commits and of the commits naming the issue's issues, each ranked (files without one
/// have none). Empty without history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    pub matches: FileScores,
    pub similar_commits: FileScores,
    /// The files' shares of the commits naming an issue the issue names (`#1234`).
    pub referenced: FileScores,
    /// The files' shares of the similar commits of the issue's title alone, when the most
    /// similar one covers at least [`TITLE_COVERAGE`] of the title (a past message that repeats
    /// it: often the fix of the same thing before); empty otherwise.
    pub title_similar_commits: FileScores,
}

/// How much of an issue's title its most similar commit must cover
/// (`swex_plugin::types::HistorySearchResult::similar_coverage`) for the title's similar commits
/// to count: chosen with [`crate::rank::TITLE_SIMILAR_COMMITS_WEIGHT`] on the 516 training
/// fixes' candidates, the same pick in every leave-one-repository-out fold (docs/ranker.md,
/// "Similar commits").
pub const TITLE_COVERAGE: f64 = 0.4;

impl History {
    /// Whether the history says nothing of the candidates: no git history, no host history
    /// service, or no past commit whose words match the issue. The linear score is then the one
    /// without history, but for the commits naming an issue the issue names (`referenced`, whose
    /// weight is 0 by default: they leave the choice of the shipped model's linear languages as
    /// it was without them).
    pub fn is_silent(&self) -> bool {
        self.matches.is_empty() && self.similar_commits.is_empty()
    }
}

/// The history search of `issue` over `paths`, and of its `title` alone when given (a second
/// search: its similar commits count when the best one covers the title); the host's error when
/// it has no history (no engine, no git history) or a search fails.
pub fn measure(
    services: &Services<'_>,
    issue: &str,
    title: Option<&str>,
    paths: Vec<String>,
) -> Result<History, ServiceError> {
    let search = |query: &str, paths: Vec<String>| {
        services.history_search(&HistorySearchArgs {
            query: query.to_owned(),
            limit: paths.len(),
            paths: Some(paths),
        })
    };
    // The paths are copied only when a second search, of the title, needs them too.
    let (hits, title_similar_commits) = match title.filter(|t| !t.trim().is_empty()) {
        None => (search(issue, paths)?.hits, FileScores::default()),
        Some(title) => {
            let hits = search(issue, paths.clone())?.hits;
            let found = search(title, paths)?;
            let title_similar_commits = if found.similar_coverage >= TITLE_COVERAGE {
                of_scores(found.hits.into_iter().map(|h| (h.path, h.similar_commits)))
            } else {
                FileScores::default()
            };
            (hits, title_similar_commits)
        }
    };
    Ok(History {
        matches: of_scores(hits.iter().map(|h| (h.path.clone(), h.score))),
        similar_commits: of_scores(hits.iter().map(|h| (h.path.clone(), h.similar_commits))),
        referenced: of_scores(hits.into_iter().map(|h| (h.path, h.referenced))),
        title_similar_commits,
    })
}

/// From (path, score) pairs in any order; scores that are not positive count as none.
pub fn of_scores(scores: impl IntoIterator<Item = (String, f64)>) -> FileScores {
    FileScores::ranked(scores.into_iter().filter(|s| s.1 > 0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_valued_by_their_score_against_the_best() {
        let history = of_scores([
            ("a.py".to_string(), 2.0),
            ("b.py".to_string(), 4.0),
            ("c.py".to_string(), 0.0),
        ]);
        assert_eq!(history.score("a.py"), 2.0);
        assert_eq!(history.relative("a.py"), 0.5);
        assert_eq!(history.relative("b.py"), 1.0);
        assert_eq!(history.rank_log("b.py"), 0.0);
        assert_eq!(history.rank_log("a.py"), 2f64.ln());
        for absent in ["c.py", "d.py"] {
            assert_eq!(
                (
                    history.score(absent),
                    history.relative(absent),
                    history.rank_log(absent)
                ),
                (0.0, 0.0, 10.0)
            );
        }
        assert_eq!(of_scores([]), FileScores::default());
    }
}
