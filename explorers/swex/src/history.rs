//! Repository history: how well the commit messages of each candidate source file match the
//! issue — a term of the linear score ([`crate::rank::Weights::history`]) and features of the
//! learned file ranker ([`crate::learned::HISTORY_FEATURES`]).
//!
//! One `history_search` over the candidate sources: BM25 of the issue text against each file's
//! recent commit messages, with the statistics of those candidates (the engine's
//! `swex_engine::history`). A file's values are its score, its score over the best candidate's,
//! and the log of its rank; a file no message matches has 0, 0 and
//! [`crate::learned::ABSENT_RANK_LOG`]. A checkout without git history (a plain folder, a
//! snapshot whose git directory is gone) or a host without the engine gives every file those
//! absent values: the ranking is then the one without history.

use std::collections::HashMap;
use swex_plugin::types::HistorySearchArgs;
use swex_plugin::{ServiceError, Services};

/// Each scored file's history score and its rank among the files (best first).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    scores: HashMap<String, (f64, usize)>,
    top: f64,
}

impl History {
    /// The history search of `issue` over `paths`; the host's error when it has no history (no
    /// engine, no git history) or the search fails.
    pub fn measure(
        services: &Services<'_>,
        issue: &str,
        paths: Vec<String>,
    ) -> Result<History, ServiceError> {
        let args = HistorySearchArgs {
            query: issue.to_owned(),
            limit: paths.len(),
            paths: Some(paths),
        };
        let result = services.history_search(&args)?;
        Ok(History::of_scores(
            result.hits.into_iter().map(|h| (h.path, h.score)),
        ))
    }

    /// From (path, score) pairs in any order; scores that are not positive count as none.
    pub fn of_scores(scores: impl IntoIterator<Item = (String, f64)>) -> History {
        let mut files: Vec<(String, f64)> = scores.into_iter().filter(|s| s.1 > 0.0).collect();
        files.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let top = files.first().map_or(0.0, |f| f.1);
        History {
            scores: files
                .into_iter()
                .enumerate()
                .map(|(rank, (path, score))| (path, (score, rank)))
                .collect(),
            top,
        }
    }

    /// The file's score (0 when its messages match nothing).
    pub fn score(&self, path: &str) -> f64 {
        self.scores.get(path).map_or(0.0, |s| s.0)
    }

    /// The file's score over the best file's (0 when none).
    pub fn relative(&self, path: &str) -> f64 {
        if self.top <= 0.0 {
            return 0.0;
        }
        self.score(path) / self.top
    }

    /// ln(1 + the file's rank among the matched files), [`crate::learned::ABSENT_RANK_LOG`] when
    /// it has none.
    pub fn rank_log(&self, path: &str) -> f64 {
        crate::learned::rank_log(self.scores.get(path).map(|s| s.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_valued_by_their_score_against_the_best() {
        let history = History::of_scores([
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
        assert_eq!(History::of_scores([]), History::default());
        assert_eq!(History::default().relative("a.py"), 0.0);
    }
}
