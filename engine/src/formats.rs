//! Every on-disk format version of the engine, in one place.
//!
//! Each number names what it covers and where it takes effect; bump it whenever what it covers
//! changes, so that no cache of another version is ever read as this one's. What a newer version
//! supersedes is removed when it writes: older `index-v*` trees and folders of an older analyser
//! or tokenizer when it writes a snapshot's manifest ([`crate::cache::CacheLayout::remove_superseded`]),
//! older `history-v*` folders when it stores a history; embedding segments and stored graphs of
//! another version are replaced as they are rebuilt:
//!
//! | version | covers | takes effect in |
//! |---|---|---|
//! | [`CACHE_FORMAT_VERSION`] | the cache layout, root manifests, analysis packs, pool key files | the `index-v{N}/` directory ([`crate::cache`]) |
//! | [`ANALYZER_VERSION`] | what [`crate::lang::analyze`] returns for a file | the analysis tag of `roots-*`/`pools-*` directories ([`analysis_tag`]) |
//! | [`TOKENIZER_VERSION`] | the lexical analyser and the pool's tantivy schema | the `pools-*-t{N}` directory |
//! | [`EMBEDDING_CACHE_VERSION`] | the segments of the embedding cache | each segment's header ([`crate::dense::cache`]) |
//! | [`PASSAGE_TEXT_VERSION`] | the text embedded for a chunk ([`crate::dense::passage_text`]) | every model identity, so vectors of another layout are never reused |
//! | [`HISTORY_FORMAT_VERSION`] | the history documents' layout, terms and what their key covers | the `history-v{N}/` directory and every key ([`crate::history`]) |
//! | [`GRAPH_STORE_VERSION`] | stored HNSW graphs and what their key covers | each stored graph's manifest and key ([`crate::dense::graph_store`]) |
//!
//! The analysis tag also covers the analyser's options ([`AnalyzeOptions`]), serialised: a new
//! option or value gives a new tag.

use crate::lang::AnalyzeOptions;
use serde::Serialize;

/// The cache layout and entry formats. 3: analysis pack values are checked with XXH3-128. 4: an
/// analysis's chunks and imports are encoded blocks, decoded on first read, like its references
/// ([`crate::analysis::LazyList`]). 5: its definitions too, stored with the hashes of their names
/// ([`crate::analysis::Definitions`]).
pub const CACHE_FORMAT_VERSION: u32 = 5;

/// The analysis output: bump on every change that alters what [`crate::lang::analyze`] returns
/// for some input. 5: Vue and Svelte components are TypeScript, their `<script>` elements
/// analysed in place.
pub const ANALYZER_VERSION: u32 = 5;

/// The lexical analyser and pool schema. 2: the CJK bigram field. 3: a run of CJK characters is
/// a sub-word of its own (`调用getUser函数` gives `get`, `user`: `swex_text::identifiers`).
pub const TOKENIZER_VERSION: u32 = 3;

/// The embedding cache's segment layout.
pub const EMBEDDING_CACHE_VERSION: u32 = 1;

/// The layout of the text embedded for a chunk; part of every model identity.
pub const PASSAGE_TEXT_VERSION: u32 = 1;

/// The stored HNSW graphs' layout and what their key covers.
pub const GRAPH_STORE_VERSION: u32 = 1;

/// The layout of a cached history ([`crate::history::FileHistory`]), the terms it is cut into,
/// the commits it reads and what its key covers. 2: commits without parents left out. 3: each
/// commit's terms and files kept too (the similar commits of a query). 4: the issue numbers a
/// commit names (`#1234`) are terms of its own too ([`crate::history::references`]). 5: numbers
/// inside fenced code blocks and debugger frames (`#10 0x…`) are not issue numbers.
pub const HISTORY_FORMAT_VERSION: u32 = 5;

/// What the analysis tag hashes: the analyser version and its options, serialised as JSON (not
/// their `Debug` output, which is not a format).
#[derive(Serialize)]
struct AnalysisIdentity<'a> {
    analyzer_version: u32,
    options: &'a AnalyzeOptions,
}

/// Identifies the analyser and its options in cache paths: `a{ANALYZER_VERSION}-{hash}`.
pub fn analysis_tag(options: &AnalyzeOptions) -> String {
    let identity = AnalysisIdentity {
        analyzer_version: ANALYZER_VERSION,
        options,
    };
    let json = serde_json::to_vec(&identity).expect("analysis options serialize");
    let hash = blake3::hash(&json);
    format!("a{ANALYZER_VERSION}-{}", &hash.to_hex()[..8])
}

/// The analyser version an analysis tag names (`a{N}-…` → `N`; the reverse of [`analysis_tag`]'s
/// prefix), `None` for a tag not of that form.
pub(crate) fn analyzer_version_of(tag: &str) -> Option<u32> {
    let rest = tag.strip_prefix('a')?;
    let digits = rest.split('-').next()?;
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn analysis_tags_follow_the_serialised_options() {
        let default = analysis_tag(&AnalyzeOptions::default());
        assert!(
            default.starts_with(&format!("a{ANALYZER_VERSION}-")),
            "{default}"
        );
        assert_eq!(default.len(), format!("a{ANALYZER_VERSION}-").len() + 8);
        // Deterministic, and every option counts.
        assert_eq!(analysis_tag(&AnalyzeOptions::default()), default);
        let wider = AnalyzeOptions {
            window_lines: 61,
            ..AnalyzeOptions::default()
        };
        let longer = AnalyzeOptions {
            max_chunk_lines: 151,
            ..AnalyzeOptions::default()
        };
        assert_ne!(analysis_tag(&wider), default);
        assert_ne!(analysis_tag(&longer), default);
        assert_ne!(analysis_tag(&wider), analysis_tag(&longer));
        // The cache reads the version back from the tag (to remove an older analyser's folders).
        assert_eq!(analyzer_version_of(&default), Some(ANALYZER_VERSION));
        assert_eq!(analyzer_version_of("custom"), None);
        // The tag hashes this JSON, field names included: renaming a field is a new tag.
        let json = serde_json::to_string(&AnalysisIdentity {
            analyzer_version: ANALYZER_VERSION,
            options: &AnalyzeOptions::default(),
        })
        .unwrap();
        assert_eq!(
            json,
            format!(
                r#"{{"analyzer_version":{ANALYZER_VERSION},"options":{{"window_lines":60,"max_chunk_lines":150}}}}"#
            )
        );
    }
}
