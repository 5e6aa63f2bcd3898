//! The snapshot API explorers reach through the host: files, lines, chunks, lexical search (of
//! chunks and of whole files), definitions, the code graph (built on first use), path
//! resolution, grep, diagnostics and statistics of one [`SnapshotIndex`]. Everything here reads
//! the finished index (and the snapshot directory, for text); nothing builds or writes caches.

use super::build::NO_DOCUMENT;
use super::{
    ChunkHit, DefinitionHit, FileHit, FileInfo, GREP_LINE_MAX, GrepHit, IndexError, IndexStats,
    SearchFilters, SnapshotIndex,
};
use crate::analysis::{Chunk, FileAnalysis, name_hash};
use crate::graph::CodeGraph;
use crate::lexical::LexicalQuery;
use crate::lexical::pool::PoolView;
use crate::scan::Diagnostic;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use swex_text::hints::{BareName, normalize_path_hint, resolve_path_hint};
use swex_text::{Glob, LineIndex, split_lines};

/// BM25's `k1` of [`SnapshotIndex::file_lexical_search`]: code search's tuned file-level value
/// (`RankConfig::file_k1`).
pub const FILE_BM25_K1: f32 = 1.2;
/// BM25's `b` of [`SnapshotIndex::file_lexical_search`] (`RankConfig::file_b`).
pub const FILE_BM25_B: f32 = 0.5;

/// Every definition of the snapshot by its bare name, for [`SnapshotIndex::definitions`]: the
/// hash of the name, the file and the definition's index in its analysis, sorted, in one
/// allocation. Built from the hashes each analysis keeps ([`crate::analysis::Definitions`]),
/// without decoding any definition. (A map of owned names cloned every name of the snapshot: a tenth of a one-shot
/// `swex explore` on a large one.) Names can share a hash: [`DefinitionTable::named`] compares
/// the names themselves.
pub(crate) struct DefinitionTable(Vec<(u64, u32, u32)>);

impl DefinitionTable {
    fn build(analyses: &[Arc<FileAnalysis>]) -> DefinitionTable {
        let mut entries: Vec<(u64, u32, u32)> = analyses
            .iter()
            .enumerate()
            .flat_map(|(file, analysis)| {
                analysis
                    .definitions
                    .name_hashes()
                    .iter()
                    .enumerate()
                    .map(move |(index, &hash)| (hash, file as u32, index as u32))
            })
            .collect();
        entries.sort_unstable();
        DefinitionTable(entries)
    }

    /// `(file, definition)` of the definitions named `name`, in file then definition order.
    fn named<'t>(
        &'t self,
        name: &'t str,
        analyses: &'t [Arc<FileAnalysis>],
    ) -> impl Iterator<Item = (u32, u32)> + 't {
        let hash = name_hash(name);
        let first = self.0.partition_point(|&(h, _, _)| h < hash);
        self.0[first..]
            .iter()
            .take_while(move |&&(h, _, _)| h == hash)
            .filter(move |&&(_, file, index)| {
                analyses[file as usize].definitions[index as usize].name == name
            })
            .map(|&(_, file, index)| (file, index))
    }
}

impl SnapshotIndex {
    /// The canonical snapshot root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Indexed files, in path order.
    pub fn files(&self) -> &[FileInfo] {
        &self.files
    }

    pub fn file(&self, path: &str) -> Option<&FileInfo> {
        self.by_path.get(path).map(|&i| &self.files[i as usize])
    }

    pub(super) fn file_index(&self, path: &str) -> Result<usize, IndexError> {
        self.by_path
            .get(path)
            .map(|&i| i as usize)
            .ok_or_else(|| IndexError::UnknownFile(path.to_string()))
    }

    /// The analysis of an indexed file.
    pub fn analysis(&self, path: &str) -> Option<&FileAnalysis> {
        self.by_path.get(path).map(|&i| &*self.analyses[i as usize])
    }

    /// The chunks of an indexed file (ordered, covering every line).
    pub fn chunks_of(&self, path: &str) -> Option<&[Chunk]> {
        self.analysis(path).map(|a| a.chunks.as_slice())
    }

    /// Number of chunks; chunk ids are `0..num_chunks()`.
    pub fn num_chunks(&self) -> u32 {
        self.total_chunks
    }

    /// File index and chunk of a chunk id.
    pub(super) fn locate(&self, chunk_id: u32) -> Option<(usize, &Chunk)> {
        if chunk_id >= self.total_chunks {
            return None;
        }
        let file = self.first_chunk.partition_point(|&first| first <= chunk_id) - 1;
        let chunk = self.analyses[file]
            .chunks
            .get((chunk_id - self.first_chunk[file]) as usize)?;
        Some((file, chunk))
    }

    /// Path and chunk of a chunk id.
    pub fn chunk(&self, chunk_id: u32) -> Option<(&str, &Chunk)> {
        self.locate(chunk_id)
            .map(|(file, chunk)| (self.files[file].path.as_str(), chunk))
    }

    /// A content key of a chunk: a 64-bit hash of its path, kind, name, symbols and text (and
    /// rank among identical chunks of its file), stable across snapshots that share the chunk;
    /// `None` for blank chunks, which have no lexical document. Caches of per-chunk data
    /// (embeddings) can use it.
    pub fn chunk_key(&self, chunk_id: u32) -> Option<u64> {
        self.chunk_keys
            .get(chunk_id as usize)
            .copied()
            .filter(|&k| k != NO_DOCUMENT)
    }

    /// The text of a chunk (read from the snapshot).
    pub fn chunk_text(&self, chunk_id: u32) -> Result<String, IndexError> {
        let (path, chunk) = self
            .chunk(chunk_id)
            .ok_or_else(|| IndexError::UnknownFile(format!("chunk #{chunk_id}")))?;
        Ok(self.read_lines(path, chunk.start, chunk.end)?.join("\n"))
    }

    /// Lines `start..=end` of an indexed file, without terminators, exactly as the benchmark sees
    /// them: the file decoded as UTF-8 with invalid bytes dropped (Python's `errors="ignore"`) and
    /// split like `str.splitlines()` (see [`swex_text::lines`]). `end` is clamped to the file,
    /// and `start > end` gives no lines.
    pub fn read_lines(&self, path: &str, start: u32, end: u32) -> Result<Vec<String>, IndexError> {
        self.file_index(path)?;
        let text = self.read_text(path)?;
        let start = start.max(1);
        if end < start {
            return Ok(Vec::new());
        }
        Ok(split_lines(&text)
            .into_iter()
            .skip(start as usize - 1)
            .take((end - start) as usize + 1)
            .map(str::to_owned)
            .collect())
    }

    /// The file's text as the benchmark reads it: UTF-8 with invalid bytes dropped. (The analyses
    /// saw replacement characters there instead; neither is a line boundary, so lines agree.)
    /// Read through the snapshot's one reader ([`crate::scan::CheckoutRoot::read`]): never out
    /// of the snapshot, never a FIFO, never more than the index's size limit.
    fn read_text(&self, path: &str) -> Result<String, IndexError> {
        let bytes = self
            .checkout
            .read(Path::new(path), self.max_file_size)
            .map_err(|refused| IndexError::Read {
                path: path.to_string(),
                source: refused.into_io(),
            })?;
        Ok(swex_text::decode_utf8_ignore(&bytes))
    }

    /// The files `filters` lets through by path and language (`None`: every file), by file index.
    fn allowed_files(&self, filters: &SearchFilters) -> Option<Vec<bool>> {
        let by_file = filters.path_glob.is_some() || !filters.languages.is_empty();
        by_file.then(|| {
            self.files
                .iter()
                .map(|f| {
                    filters
                        .path_glob
                        .as_ref()
                        .is_none_or(|g| g.is_match(&f.path))
                        && (filters.languages.is_empty()
                            || f.language.is_some_and(|l| filters.languages.contains(&l)))
                })
                .collect()
        })
    }

    /// BM25 search over chunks (best first).
    pub fn lexical_search(
        &self,
        query: &LexicalQuery,
        limit: usize,
        filters: &SearchFilters,
    ) -> Result<Vec<ChunkHit>, IndexError> {
        let allowed = self.allowed_files(filters);
        let accept = |chunk_id: u32| -> bool {
            let Some((file, chunk)) = self.locate(chunk_id) else {
                return false;
            };
            allowed.as_ref().is_none_or(|a| a[file])
                && (filters.kinds.is_empty() || filters.kinds.contains(&chunk.kind))
        };
        let hits = self
            .lexical
            .search(query, &self.lexical_config, limit, &accept)?;
        Ok(hits
            .into_iter()
            .filter_map(|(chunk_id, score)| self.chunk_hit(chunk_id, score))
            .collect())
    }

    /// Whole files ranked by BM25 for `query` (best first, ties by path; at most `limit`):
    /// `SnapshotIndex::whole_file_bm25` with [`FILE_BM25_K1`] and [`FILE_BM25_B`], over the
    /// files `filters` lets through by path and language (chunk kinds do not apply to a file).
    /// Where a chunk search finds the passages that repeat a query's words, this finds the files
    /// that hold most of them, wherever they are in the file.
    pub fn file_lexical_search(
        &self,
        query: &LexicalQuery,
        limit: usize,
        filters: &SearchFilters,
    ) -> Result<Vec<FileHit>, IndexError> {
        let allowed = self.allowed_files(filters);
        let scores = self.whole_file_bm25(query, self.mean_lines(), FILE_BM25_K1, FILE_BM25_B)?;
        let mut hits: Vec<(usize, f32)> = scores
            .into_iter()
            .filter(|&(file, score)| score > 0.0 && allowed.as_ref().is_none_or(|a| a[file]))
            .collect();
        // Files are in path order, so the index breaks ties by path.
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(limit);
        Ok(hits
            .into_iter()
            .map(|(file, score)| {
                let info = &self.files[file];
                FileHit {
                    path: info.path.clone(),
                    lines: info.line_count,
                    score,
                }
            })
            .collect())
    }

    /// BM25 of whole files for the query's tokens, by file index: term frequencies summed over
    /// each file's chunks (the body field), document frequencies counted in files, the line
    /// count over `mean_lines` as the length. Code search weighs it into its file score; the
    /// `lexical_search` service serves it as [`SnapshotIndex::file_lexical_search`].
    pub(crate) fn whole_file_bm25(
        &self,
        query: &LexicalQuery,
        mean_lines: f32,
        k1: f32,
        b: f32,
    ) -> Result<HashMap<usize, f32>, IndexError> {
        let view = self.lexical_view();
        let n = self.files.len() as f32;
        let mut scores: HashMap<usize, f32> = HashMap::new();
        let mut tf: HashMap<usize, u32> = HashMap::new();
        for (token, weight) in &query.tokens {
            tf.clear();
            for (chunk, freq) in view.body_postings(token)? {
                if let Some(file) = self.chunk_file(chunk) {
                    *tf.entry(file).or_default() += freq;
                }
            }
            let df = tf.len() as f32;
            if df == 0.0 {
                continue;
            }
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for (&file, &freq) in &tf {
                let freq = freq as f32;
                let length = self.files[file].line_count.max(1) as f32 / mean_lines;
                let saturated = freq * (k1 + 1.0) / (freq + k1 * (1.0 - b + b * length));
                *scores.entry(file).or_default() += weight * idf * saturated;
            }
        }
        Ok(scores)
    }

    /// The mean line count of the snapshot's files (at least 1): the whole-file BM25's average
    /// length.
    pub(crate) fn mean_lines(&self) -> f32 {
        let lines: u64 = self.files.iter().map(|f| u64::from(f.line_count)).sum();
        (lines as f32 / self.files.len().max(1) as f32).max(1.0)
    }

    /// The lexical query of free text (an issue, a phrase), as [`SnapshotIndex::search_text`]
    /// builds it.
    pub fn query_of_text(&self, text: &str) -> LexicalQuery {
        LexicalQuery::from_text(text, &self.lexical_config)
    }

    /// The lexical query of weighted terms, as [`SnapshotIndex::search_terms`] builds it.
    pub fn query_of_terms(&self, terms: &[swex_issue::WeightedTerm]) -> LexicalQuery {
        LexicalQuery::from_terms(terms, &self.lexical_config)
    }

    /// [`SnapshotIndex::lexical_search`] for free text (issue text, a phrase), through the issue
    /// query builder.
    pub fn search_text(
        &self,
        text: &str,
        limit: usize,
        filters: &SearchFilters,
    ) -> Result<Vec<ChunkHit>, IndexError> {
        self.lexical_search(&self.query_of_text(text), limit, filters)
    }

    /// BM25 search for weighted terms (the issue parser's, possibly reweighted by the caller).
    pub fn search_terms(
        &self,
        terms: &[swex_issue::WeightedTerm],
        limit: usize,
        filters: &SearchFilters,
    ) -> Result<Vec<ChunkHit>, IndexError> {
        self.lexical_search(&self.query_of_terms(terms), limit, filters)
    }

    /// The hit of chunk `chunk_id` with `score` (lexical and dense search).
    pub(super) fn chunk_hit(&self, chunk_id: u32, score: f32) -> Option<ChunkHit> {
        let (path, chunk) = self.chunk(chunk_id)?;
        Some(ChunkHit {
            path: path.to_string(),
            start: chunk.start,
            end: chunk.end,
            kind: chunk.kind,
            name: chunk.name.clone(),
            score,
            chunk_id,
        })
    }

    /// The code graph of the snapshot (built on first call, then shared).
    pub fn graph(&self) -> &CodeGraph {
        self.graph.get_or_init(|| {
            let files: Vec<(&str, &FileAnalysis)> = self
                .files
                .iter()
                .zip(&self.analyses)
                .map(|(f, a)| (f.path.as_str(), &**a))
                .collect();
            CodeGraph::build(&files)
        })
    }

    /// The checkout's repository history ([`crate::history`]): from its snapshot marker's git
    /// directory and commit, or its work tree's `HEAD`; read on the first call (one `git log`,
    /// then from the cache by commit). [`HistoryError::Absent`] for a checkout without one.
    ///
    /// [`HistoryError::Absent`]: crate::history::HistoryError::Absent
    pub fn history(
        &self,
    ) -> Result<Arc<crate::history::FileHistory>, crate::history::HistoryError> {
        self.history_and_origin().map(|(history, _)| history)
    }

    /// [`SnapshotIndex::history`] and where it came from: the cache, the history of an earlier
    /// commit extended, or a whole `git log`.
    pub fn history_and_origin(
        &self,
    ) -> Result<
        (
            Arc<crate::history::FileHistory>,
            crate::history::HistoryOrigin,
        ),
        crate::history::HistoryError,
    > {
        use crate::history::{FileHistory, HistoryLimits, HistorySource};
        self.history
            .get_or_init(|| {
                let source = HistorySource::of_checkout(&self.root)?;
                let limits = HistoryLimits::default();
                FileHistory::load_or_build_from(&self.cache_dir, &source, &limits)
                    .map(|(history, origin)| (Arc::new(history), origin))
            })
            .clone()
    }

    /// The position in [`SnapshotIndex::files`] of a chunk's file.
    pub(crate) fn chunk_file(&self, chunk_id: u32) -> Option<usize> {
        self.locate(chunk_id).map(|(file, _)| file)
    }

    /// The snapshot's lexical view (postings and vocabulary for ranked search).
    pub(crate) fn lexical_view(&self) -> &PoolView {
        &self.lexical
    }

    /// The tables of ranked search, built on first use.
    pub(crate) fn search_aids(&self) -> &crate::search::SearchAids {
        self.search_aids
            .get_or_init(|| crate::search::SearchAids::build(self))
    }

    /// Whether [`SnapshotIndex::graph`] has been built already.
    pub fn graph_is_built(&self) -> bool {
        self.graph.get().is_some()
    }

    /// Definitions named `name`: bare (`save`), qualified (`Model.save`; `.`, `::`, `#` and `\`
    /// interchangeable) or a dotted suffix of a module-qualified name, as
    /// [`CodeGraph::definitions_named`] resolves them. In path then line order.
    pub fn definitions(&self, name: &str) -> Vec<DefinitionHit> {
        let Some(query) = crate::graph::DefinitionQuery::new(name) else {
            return Vec::new();
        };
        let table = self
            .definition_table
            .get_or_init(|| DefinitionTable::build(&self.analyses));
        let candidates = table.named(query.bare(), &self.analyses);
        let mut hits: Vec<DefinitionHit> = candidates
            .filter_map(|(file, index)| {
                let path = &self.files[file as usize].path;
                let definition = &self.analyses[file as usize].definitions[index as usize];
                query
                    .matches(&definition.qualified_name, path)
                    .then(|| DefinitionHit {
                        path: path.clone(),
                        start: definition.start,
                        end: definition.end,
                        kind: definition.kind,
                        name: definition.name.clone(),
                        qualified_name: definition.qualified_name.clone(),
                    })
            })
            .collect();
        hits.sort_by(|a, b| a.path.cmp(&b.path).then(a.start.cmp(&b.start)));
        hits
    }

    /// Indexed files whose path ends with the normalised hint (whole path components), best
    /// (longest hint match, then shortest path) first; every file of the name for a bare file
    /// name (`swex_text::hints::resolve_path_hint`, [`BareName::Any`]). Turns traceback paths
    /// into snapshot paths.
    pub fn resolve_path(&self, hint: &str) -> Vec<&str> {
        resolve_path_hint(
            &normalize_path_hint(hint),
            self.files.iter().map(|f| f.path.as_str()),
            BareName::Any,
        )
    }

    /// Lines matching `pattern` (a regular expression), in path then line order, at most `limit`;
    /// `path_glob` restricts the files.
    pub fn grep(
        &self,
        pattern: &str,
        path_glob: Option<&str>,
        limit: usize,
    ) -> Result<Vec<GrepHit>, IndexError> {
        let regex = regex::Regex::new(pattern)?;
        // A match inside a line is a match in the whole text, so the whole text can be searched
        // at once, except for anchored patterns: `^`/`$`/`\A`/`\z` mean line edges here.
        let whole_text = !(pattern.contains('^')
            || pattern.contains('$')
            || pattern.contains("\\A")
            || pattern.contains("\\z"));
        let glob = path_glob.map(Glob::new).transpose()?;
        let candidates: Vec<&FileInfo> = self
            .files
            .iter()
            .filter(|f| glob.as_ref().is_none_or(|g| g.is_match(&f.path)))
            .collect();
        let mut hits = Vec::new();
        // Batches in path order, searched in parallel, stop as soon as the limit is reached.
        for batch in candidates.chunks(128) {
            if hits.len() >= limit {
                break;
            }
            let found: Vec<Vec<GrepHit>> = batch
                .par_iter()
                .map(|file| {
                    let Ok(text) = self.read_text(&file.path) else {
                        return Vec::new();
                    };
                    let matching = if whole_text {
                        lines_matching_in_text(&regex, &text, limit)
                    } else {
                        lines_matching_one_by_one(&regex, &text, limit)
                    };
                    matching
                        .into_iter()
                        .map(|(line, body)| GrepHit {
                            path: file.path.clone(),
                            line,
                            text: swex_text::cut_to_bytes(body, GREP_LINE_MAX).to_string(),
                        })
                        .collect()
                })
                .collect();
            hits.extend(found.into_iter().flatten());
        }
        hits.truncate(limit);
        Ok(hits)
    }

    /// Files not indexed or indexed with a caveat, in path order.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    pub fn stats(&self) -> &IndexStats {
        &self.stats
    }
}

/// The lines of `text` (1-based, without terminators) that `regex` matches, at most `limit`,
/// found by searching the whole text: the regex's literal prefilters skip the lines that cannot
/// match instead of each line being tried. For patterns without line anchors, exactly the lines
/// [`lines_matching_one_by_one`] gives: a line that matches on its own holds a match of the
/// whole text starting in it (a line's edges are non-word characters or the text's edges, so
/// `\b` reads the same), and each line where a match of the whole text starts is checked on its
/// own (a match may run across lines); the search goes on from the next line's start.
fn lines_matching_in_text<'t>(
    regex: &regex::Regex,
    text: &'t str,
    limit: usize,
) -> Vec<(u32, &'t str)> {
    let lines = LineIndex::new(text);
    let mut out = Vec::new();
    let mut from = 0;
    let mut last_line = 0;
    while out.len() < limit && from <= text.len() {
        let Some(found) = regex.find_at(text, from) else {
            break;
        };
        let line = lines.line_of_byte(found.start());
        if line <= last_line || line > lines.line_count() {
            break;
        }
        last_line = line;
        let body = lines.line(text, line);
        if regex.is_match(body) {
            out.push((line, body));
        }
        from = lines.byte_range(line, line).end;
    }
    out
}

/// The lines of `text` that `regex` matches, at most `limit`, each line tried on its own.
fn lines_matching_one_by_one<'t>(
    regex: &regex::Regex,
    text: &'t str,
    limit: usize,
) -> Vec<(u32, &'t str)> {
    (1u32..)
        .zip(split_lines(text))
        .filter(|(_, line)| regex.is_match(line))
        .take(limit)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{ChunkKind, Definition};

    fn analysis(names: &[&str]) -> Arc<FileAnalysis> {
        let definitions: Vec<Definition> = names
            .iter()
            .enumerate()
            .map(|(i, name)| Definition {
                name: name.to_string(),
                qualified_name: name.to_string(),
                kind: ChunkKind::Function,
                start: i as u32 + 1,
                end: i as u32 + 1,
                parent: None,
            })
            .collect();
        Arc::new(FileAnalysis {
            definitions: definitions.into(),
            ..FileAnalysis::default()
        })
    }

    #[test]
    fn the_definition_table_finds_every_definition_of_a_name_in_order() {
        let analyses = [analysis(&["save", "load", "save"]), analysis(&["save"])];
        let table = DefinitionTable::build(&analyses);
        let named = |name| table.named(name, &analyses).collect::<Vec<_>>();
        assert_eq!(named("save"), [(0, 0), (0, 2), (1, 0)]);
        assert_eq!(named("load"), [(0, 1)]);
        assert_eq!(named("Save"), []);
        assert_eq!(named(""), []);
    }

    #[test]
    fn names_that_share_a_hash_are_told_apart() {
        let analyses = [analysis(&["save", "load"])];
        // As if "save" hashed like "load": the bucket holds both, the look-up gives only its own.
        let load = name_hash("load");
        let table = DefinitionTable(vec![(load, 0, 0), (load, 0, 1)]);
        assert_eq!(table.named("load", &analyses).collect::<Vec<_>>(), [(0, 1)]);
    }

    #[test]
    fn searching_the_whole_text_finds_the_lines_a_line_by_line_search_finds() {
        let texts = [
            "",
            "foo",
            "foo\n",
            "a foo\nbar\n\nfoo bar foo\r\nfoobar\rbaz",
            "x\u{2028}foo\u{85}é foo\x0bfoo\x0c\x1cbar",
            "a\nb\na b\n a\n\nb",
            "\n\n\n",
            "tail without terminator foo",
        ];
        let patterns = [
            "foo", "foo|bar", r"\bfoo\b", r"\Bfoo", r"a\s+b", r"(?s)a.b", "x*", r"\n", "é",
            "(?i)FOO", "[^a-z ]", "",
        ];
        for text in texts {
            for pattern in patterns {
                let regex = regex::Regex::new(pattern).unwrap();
                let expected = lines_matching_one_by_one(&regex, text, usize::MAX);
                assert_eq!(
                    lines_matching_in_text(&regex, text, usize::MAX),
                    expected,
                    "{pattern:?} in {text:?}"
                );
                let first_two: Vec<_> = expected.iter().take(2).copied().collect();
                assert_eq!(
                    lines_matching_in_text(&regex, text, 2),
                    first_two,
                    "{pattern:?} in {text:?}, limit 2"
                );
            }
        }
        // Checked against the lines themselves, not only against each other.
        let regex = regex::Regex::new(r"\bfoo\b").unwrap();
        assert_eq!(
            lines_matching_in_text(&regex, "a foo\nfoobar\r\nfoo.\n", 10),
            [(1, "a foo"), (3, "foo.")]
        );
    }
}
