//! Dense similarity: how close each candidate file's best chunk is to the issue in the embedding
//! space of the engine's dense layer — features of the learned file ranker
//! ([`crate::learned::DENSE_FEATURES`]).
//!
//! One `dense_search` in rerank mode: the engine embeds the issue and the top
//! [`DENSE_CANDIDATES`] BM25 chunks of the issue text (vectors cached by text, shared with the
//! `hybrid` explorer, which asks the same) and orders them by cosine similarity. A file's values
//! are its best chunk's similarity, that similarity over the best file's, and the log of its rank
//! among the files; a file with no chunk among the candidates has 0, 0 and
//! [`crate::learned::ABSENT_RANK_LOG`] (the value every rank feature gives the absent).
//!
//! It needs the embedding model (`swex models fetch`) and costs the model's start and one
//! embedded query per answer (more while the cache is cold), so the explorer asks for it only
//! when its model reads these features or the features are emitted for training. Without the
//! model the features are absent (the values above) and a note says so.

use crate::learned::FileScores;
use std::collections::HashMap;
use swex_plugin::types::{DenseMode, DenseSearchArgs, SearchHit};
use swex_plugin::{ServiceError, Services};

/// BM25 chunks of the issue text that are embedded and compared with it (the `hybrid`
/// explorer's default, so the two share their vectors).
pub const DENSE_CANDIDATES: usize = 100;

/// The dense search for `issue`: each file's best chunk similarity, ranked; the host's error when
/// it has no dense layer (no embedding model) or the search fails.
pub fn measure(services: &Services<'_>, issue: &str) -> Result<FileScores, ServiceError> {
    let mut args = DenseSearchArgs::new(issue, DENSE_CANDIDATES);
    args.mode = Some(DenseMode::Rerank);
    args.candidates = Some(DENSE_CANDIDATES);
    let result = services.dense_search_with(&args)?;
    Ok(of_hits(&result.hits))
}

/// Each file's best chunk similarity, from chunk hits scored by similarity, in any order.
pub fn of_hits(hits: &[SearchHit]) -> FileScores {
    let mut best: HashMap<&str, f64> = HashMap::new();
    for hit in hits {
        let entry = best.entry(hit.path.as_str()).or_insert(f64::NEG_INFINITY);
        *entry = entry.max(hit.score);
    }
    FileScores::ranked(
        best.into_iter()
            .map(|(path, score)| (path.to_owned(), score)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_valued_by_its_best_chunk() {
        let hits = [
            SearchHit::new("a.py", 1, 5, 0.25),
            SearchHit::new("b.py", 1, 5, 0.5),
            SearchHit::new("a.py", 10, 20, 0.4),
            SearchHit::new("c.py", 1, 5, -0.1),
        ];
        let s = of_hits(&hits);
        assert_eq!(s.score("a.py"), 0.4);
        assert_eq!(s.relative("a.py"), 0.8);
        assert_eq!(s.relative("b.py"), 1.0);
        assert_eq!(s.rank_log("b.py"), 0.0);
        assert_eq!(s.rank_log("a.py"), 2f64.ln());
        assert_eq!(s.rank_log("c.py"), 3f64.ln());
        assert_eq!(s.score("c.py"), -0.1);
        // Not scored: the absent values.
        assert_eq!(
            (s.score("d.py"), s.relative("d.py"), s.rank_log("d.py")),
            (0.0, 0.0, 10.0)
        );
        let none = of_hits(&[]);
        assert_eq!(none.relative("a.py"), 0.0);
        assert_eq!(none, FileScores::default());
    }
}
