//! The ranking stage of [`super`]: candidates → file scores → spans.

use super::query::{QueryInfo, QueryKind, TermShape, analyze_query};
use super::{DenseUse, RankConfig, SearchHit, SearchOptions, SearchResults, Signals};
use crate::analysis::{Chunk, ChunkKind, Definition};
use crate::index::{DenseMode, DenseQuery, IndexError, SnapshotIndex};
use crate::lexical::{LexicalConfig, LexicalQuery};
use std::collections::HashMap;
use swex_issue::WeightedTerm;
use swex_text::identifiers::squash;
use swex_text::stems::{Inflection, same_word};

/// What one file has gathered.
#[derive(Default)]
struct FileScore {
    /// Its matching chunks: (BM25 score, chunk id), best first.
    lexical: Vec<(f32, u32)>,
    /// Per query term, the best definition strength, and the definition it came from.
    symbol: f32,
    symbol_definition: Option<(f32, u32)>,
    dense: f32,
    dense_chunk: Option<u32>,
}

fn kind_factor(kind: ChunkKind, config: &RankConfig) -> f32 {
    match kind {
        ChunkKind::Class
        | ChunkKind::Struct
        | ChunkKind::Enum
        | ChunkKind::Interface
        | ChunkKind::Trait
        | ChunkKind::Module
        | ChunkKind::Namespace
        | ChunkKind::Impl => 1.0,
        ChunkKind::Function | ChunkKind::Method => config.function_kind,
        ChunkKind::Constant | ChunkKind::TypeAlias | ChunkKind::Gap | ChunkKind::Window => {
            config.constant_kind
        }
    }
}

/// The multiplier of a file's score for its role: tests, docs and examples are demoted unless
/// the query asks for them, and when it does, the files that are not are demoted instead
/// (`tests of the retry logic` wants the tests first). Vendored, generated, auxiliary and stub
/// files are always demoted (unless `demote` is `Some(false)`).
fn role_multiplier(
    role: &super::paths::PathRole,
    info: &QueryInfo,
    demote: Option<bool>,
    config: &RankConfig,
) -> f32 {
    let (wants_tests, wants_docs) = match demote {
        Some(true) => (false, false),
        Some(false) => return 1.0,
        None => (info.wants_tests, info.wants_docs),
    };
    let mut m = 1.0;
    if role.test != wants_tests {
        m *= config.test_penalty;
    }
    let doc_like = role.docs || role.example;
    if doc_like != wants_docs {
        m *= if role.example {
            config.example_penalty
        } else {
            config.docs_penalty
        };
    }
    if role.vendored || role.generated || role.auxiliary {
        m *= config.example_penalty;
    }
    if role.declaration || role.barrel {
        m *= config.stub_penalty;
    }
    m
}

fn file_position(index: &SnapshotIndex, path: &str) -> Option<usize> {
    index
        .files()
        .binary_search_by(|f| f.path.as_str().cmp(path))
        .ok()
}

/// Ranked search: candidates from each signal, files ranked by their combined score, spans
/// picked in each file, and a grep of the query's names when nothing scored.
pub(super) fn search(
    index: &SnapshotIndex,
    text: &str,
    options: &SearchOptions,
) -> Result<SearchResults, IndexError> {
    let mut run = SearchRun::new(index, text, options);
    let lexical_query = run.add_lexical_candidates()?;
    let whole_file = run.whole_file_bm25(&lexical_query)?;
    run.add_definitions_named_by_the_query();
    let (dense_used, dense_note) = run.add_dense_candidates()?;
    let ranked = run.rank_files(&whole_file, dense_used);
    let mut hits = run.spans_of(ranked);
    let mut grep_fallback = false;
    if hits.is_empty() {
        hits = grep_fallback_hits(index, &run.info, options, &|pos| run.allowed(pos))?;
        grep_fallback = !hits.is_empty();
    }
    Ok(SearchResults {
        kind: run.info.kind,
        hits,
        dense: dense_used,
        dense_note,
        grep_fallback,
    })
}

/// One search's state: the query, and what each file has gathered so far.
struct SearchRun<'a> {
    index: &'a SnapshotIndex,
    info: QueryInfo,
    options: &'a SearchOptions,
    config: &'a RankConfig,
    aids: &'a super::SearchAids,
    files: &'a [crate::index::FileInfo],
    scores: HashMap<usize, FileScore>,
}

impl<'a> SearchRun<'a> {
    fn new(index: &'a SnapshotIndex, text: &str, options: &'a SearchOptions) -> SearchRun<'a> {
        SearchRun {
            index,
            info: analyze_query(text),
            options,
            config: &options.config,
            aids: index.search_aids(),
            files: index.files(),
            scores: HashMap::new(),
        }
    }

    /// Whether the filters let the file at `pos` through.
    fn allowed(&self, pos: usize) -> bool {
        let file = &self.files[pos];
        let filters = &self.options.filters;
        filters
            .path_glob
            .as_ref()
            .is_none_or(|g| g.is_match(&file.path))
            && (filters.languages.is_empty()
                || file
                    .language
                    .is_some_and(|l| filters.languages.contains(&l)))
    }

    /// Lexical candidates: every searching term, whole identifiers above their sub-words, and
    /// their vocabulary expansions. Returns the query, which the whole-file BM25 reuses.
    fn add_lexical_candidates(&mut self) -> Result<LexicalQuery, IndexError> {
        let terms: Vec<WeightedTerm> = self
            .info
            .search_terms()
            .map(|t| WeightedTerm {
                text: t.text.clone(),
                weight: 1.0,
            })
            .collect();
        let lexical_config = LexicalConfig {
            subword_factor: self.config.subword_weight,
            ..LexicalConfig::default()
        };
        let mut lexical_query = LexicalQuery::from_terms(&terms, &lexical_config);
        expand_vocabulary(self.index, &self.info, &mut lexical_query, self.config)?;
        let hits = self.index.lexical_search(
            &lexical_query,
            self.config.lexical_candidates,
            &self.options.filters,
        )?;
        let best_lexical = hits.first().map_or(1.0, |h| h.score.max(f32::MIN_POSITIVE));
        for hit in &hits {
            if let Some(pos) = file_position(self.index, &hit.path) {
                self.scores
                    .entry(pos)
                    .or_default()
                    .lexical
                    .push((hit.score / best_lexical, hit.chunk_id));
            }
        }
        Ok(lexical_query)
    }

    /// The whole file's BM25 for the query (each file with a score becomes a candidate).
    fn whole_file_bm25(
        &mut self,
        lexical_query: &LexicalQuery,
    ) -> Result<HashMap<usize, f32>, IndexError> {
        let file_lexical = if self.config.file_lexical > 0.0 {
            self.index.whole_file_bm25(
                lexical_query,
                self.aids.mean_lines,
                self.config.file_k1,
                self.config.file_b,
            )?
        } else {
            HashMap::new()
        };
        for &pos in file_lexical.keys() {
            self.scores.entry(pos).or_default();
        }
        Ok(file_lexical)
    }

    /// Definitions named like a query term: per term, the strongest definition of each file.
    fn add_definitions_named_by_the_query(&mut self) {
        let (config, aids, files, index) = (self.config, self.aids, self.files, self.index);
        for term in self.info.search_terms() {
            let weight = if self.info.kind == QueryKind::Symbol {
                config.symbol
            } else {
                config.embedded_symbol
                    * match term.shape {
                        TermShape::Code => 1.0,
                        TermShape::Capitalised => config.capitalised_symbol_weight,
                        TermShape::Word => config.word_symbol_weight,
                    }
            };
            if weight <= 0.0 {
                continue;
            }
            let name_lower = term.name.to_lowercase();
            let Some(definitions) = aids.names.get(&name_lower) else {
                continue;
            };
            let qualifier: Vec<String> = term.qualifier.iter().map(|q| q.to_lowercase()).collect();
            // Best strength per file for this term.
            let mut per_file: HashMap<usize, (f32, u32)> = HashMap::new();
            for &(file, d) in definitions {
                let pos = file as usize;
                if !self.allowed(pos) {
                    continue;
                }
                let Some(definition) = index
                    .analysis(&files[pos].path)
                    .and_then(|a| a.definitions.get(d as usize))
                else {
                    continue;
                };
                let strength = definition_strength(
                    definition,
                    &term.name,
                    &name_lower,
                    &qualifier,
                    &aids.files[pos],
                    config,
                );
                let entry = per_file.entry(pos).or_insert((0.0, d));
                if strength > entry.0 {
                    *entry = (strength, d);
                }
            }
            for (pos, (strength, d)) in per_file {
                let score = self.scores.entry(pos).or_default();
                let value = weight * strength;
                score.symbol += value;
                if score.symbol_definition.is_none_or(|(best, _)| value > best) {
                    score.symbol_definition = Some((value, d));
                }
            }
        }
    }

    /// Dense candidates, when the options and the installed model allow: whether they were
    /// used, and why not when the model is absent.
    fn add_dense_candidates(&mut self) -> Result<(bool, Option<String>), IndexError> {
        let (config, options) = (self.config, self.options);
        if options.dense == DenseUse::Off || config.dense <= 0.0 || config.dense_candidates == 0 {
            return Ok((false, None));
        }
        let query = DenseQuery {
            text: self.info.text.clone(),
            limit: config.dense_candidates,
            mode: DenseMode::Auto,
            filters: options.filters.clone(),
            candidates: Some(config.dense_candidates),
            regions: Vec::new(),
        };
        match self.index.dense_search(&query) {
            Ok(result) => {
                let top = result.hits.first().map_or(0.0, |h| h.score);
                let bottom = result.hits.last().map_or(0.0, |h| h.score);
                let span = (top - bottom).max(1e-6);
                for hit in &result.hits {
                    let Some(pos) = file_position(self.index, &hit.path) else {
                        continue;
                    };
                    let value = (hit.score - bottom) / span;
                    let score = self.scores.entry(pos).or_default();
                    if value > score.dense {
                        score.dense = value;
                        score.dense_chunk = Some(hit.chunk_id);
                    }
                }
                Ok((!result.hits.is_empty(), None))
            }
            Err(IndexError::Dense(error))
                if error.is_absent() && options.dense == DenseUse::Auto =>
            {
                Ok((false, Some(error.to_string())))
            }
            Err(error) => Err(error),
        }
    }

    /// Every candidate file with its combined score (lexical, whole-file, definitions, path
    /// words, dense; times its role multiplier), best first, ties by path.
    fn rank_files(
        &self,
        file_lexical: &HashMap<usize, f32>,
        dense_used: bool,
    ) -> Vec<(f32, usize, Signals)> {
        let config = self.config;
        // Path words: the share of the query's words the file's name and folder repeat.
        let keywords: Vec<String> = self
            .info
            .search_terms()
            .flat_map(|t| {
                std::iter::once(t.name.to_lowercase())
                    .chain(t.qualifier.iter().map(|q| q.to_lowercase()))
            })
            .filter(|w| w.len() >= 3)
            .collect();
        let best_file = file_lexical.values().copied().fold(0.0f32, f32::max);
        let mut ranked: Vec<(f32, usize, Signals)> = self
            .scores
            .iter()
            .filter(|(pos, _)| self.allowed(**pos))
            .map(|(&pos, score)| {
                let aid = &self.aids.files[pos];
                let lexical = score.lexical.first().map_or(0.0, |(s, _)| *s)
                    + config.coherence
                        * score
                            .lexical
                            .iter()
                            .skip(1)
                            .take(4)
                            .map(|(s, _)| *s)
                            .sum::<f32>();
                let path = if keywords.is_empty() {
                    0.0
                } else {
                    let matched = keywords
                        .iter()
                        .filter(|k| {
                            aid.words.iter().any(|w| {
                                same_word(
                                    k,
                                    w,
                                    Inflection::Suffixes {
                                        min_stem: config.path_min_prefix,
                                    },
                                )
                            })
                        })
                        .count();
                    matched as f32 / keywords.len() as f32
                };
                let role = role_multiplier(&aid.role, &self.info, self.options.demote, config);
                let whole_file = file_lexical
                    .get(&pos)
                    .map_or(0.0, |s| s / best_file.max(1e-6));
                let signals = Signals {
                    lexical: config.lexical * lexical + config.file_lexical * whole_file,
                    symbol: score.symbol,
                    path: config.path * path,
                    dense: if dense_used {
                        config.dense * score.dense
                    } else {
                        0.0
                    },
                    role,
                };
                let total =
                    (signals.lexical + signals.symbol + signals.path + signals.dense) * role;
                (total, pos, signals)
            })
            .filter(|(total, _, _)| *total > 0.0)
            .collect();
        ranked.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| self.files[a.1].path.cmp(&self.files[b.1].path))
        });
        ranked
    }

    /// The hits of the ranked files, up to the limit: per file its strongest definition, then
    /// its best chunks that do not overlap, `per_file` spans at most.
    fn spans_of(&self, ranked: Vec<(f32, usize, Signals)>) -> Vec<SearchHit> {
        let options = self.options;
        let mut out = Vec::new();
        for (total, pos, signals) in ranked {
            if out.len() >= options.limit {
                break;
            }
            let score = &self.scores[&pos];
            let path = &self.files[pos].path;
            let Some(analysis) = self.index.analysis(path) else {
                continue;
            };
            let mut spans: Vec<(u32, u32, ChunkKind, Option<String>)> = Vec::new();
            if let Some((_, d)) = score.symbol_definition
                && let Some(definition) = analysis.definitions.get(d as usize)
            {
                let (start, end) = definition_span(definition, &analysis.chunks);
                spans.push((
                    start,
                    end,
                    definition.kind,
                    Some(definition.qualified_name.clone()),
                ));
            }
            let chunk_ids = score
                .lexical
                .iter()
                .map(|(_, id)| *id)
                .chain(score.dense_chunk);
            for id in chunk_ids {
                if spans.len() >= options.per_file.max(1) {
                    break;
                }
                let Some((_, chunk)) = self.index.chunk(id) else {
                    continue;
                };
                if spans
                    .iter()
                    .any(|&(s, e, _, _)| s <= chunk.end && chunk.start <= e)
                {
                    continue;
                }
                spans.push((chunk.start, chunk.end, chunk.kind, chunk.name.clone()));
            }
            if spans.is_empty()
                && let Some(chunk) = analysis.chunks.first()
            {
                spans.push((chunk.start, chunk.end, chunk.kind, chunk.name.clone()));
            }
            for (start, end, kind, name) in spans.into_iter().take(options.per_file.max(1)) {
                if out.len() >= options.limit {
                    break;
                }
                out.push(SearchHit {
                    path: path.clone(),
                    start,
                    end,
                    kind,
                    name,
                    score: total,
                    signals,
                });
            }
        }
        out
    }
}

/// The most lines a hit on a matched definition spans. A hit is where to start reading: a class
/// of thousands of lines (FastAPI's `FastAPI`, 4,705; commons-lang's `StringUtils`, 9,619) given
/// whole would fill a reader's budget by itself and push every other hit out of it.
const LONGEST_DEFINITION_HIT: u32 = 200;

/// The lines a hit on `definition` covers: all of it when it is at most
/// [`LONGEST_DEFINITION_HIT`] lines, else its head — the chunk that opens it (a class's header
/// and docstring, up to its first member; the first window of a split function), at most that
/// many lines.
fn definition_span(definition: &Definition, chunks: &[Chunk]) -> (u32, u32) {
    let (start, end) = (definition.start, definition.end);
    if end.saturating_sub(start) < LONGEST_DEFINITION_HIT {
        return (start, end);
    }
    let head_end = chunks
        .iter()
        .find(|c| c.start <= start && start <= c.end)
        .map_or(end, |c| c.end.min(end));
    (start, head_end.min(start + LONGEST_DEFINITION_HIT - 1))
}

fn definition_strength(
    definition: &Definition,
    name: &str,
    name_lower: &str,
    qualifier: &[String],
    aid: &super::FileAid,
    config: &RankConfig,
) -> f32 {
    let mut strength = kind_factor(definition.kind, config);
    if definition.name != name {
        strength *= config.case_mismatch;
    }
    // The file named for the symbol, up to number (`headers.py` for `Header`).
    if same_word(&aid.stem, &squash(name_lower), Inflection::Plural) {
        strength *= config.symbol_stem;
    }
    if !qualifier.is_empty() {
        let qualified = definition.qualified_name.to_lowercase();
        let named = qualifier
            .iter()
            .all(|q| qualified.contains(q.as_str()) || aid.words.iter().any(|w| w == q));
        if !named {
            strength *= 0.7;
        }
    }
    if definition.parent.is_some() {
        strength *= 0.85;
    }
    strength
}

/// The files that mention the query's terms as whole words, most mentions first, each with the
/// chunk of its first mention.
fn grep_fallback_hits(
    index: &SnapshotIndex,
    info: &QueryInfo,
    options: &SearchOptions,
    allowed: &dyn Fn(usize) -> bool,
) -> Result<Vec<SearchHit>, IndexError> {
    let names: Vec<String> = info
        .search_terms()
        .map(|t| regex::escape(&t.name))
        .collect();
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let pattern = format!(r"\b(?:{})\b", names.join("|"));
    let glob = options
        .filters
        .path_glob
        .as_ref()
        .map(|g| g.as_str().to_string());
    let lines = index.grep(&pattern, glob.as_deref(), 2000)?;
    let mut per_file: Vec<(String, u32, usize)> = Vec::new();
    for line in lines {
        match per_file.iter_mut().find(|(p, _, _)| *p == line.path) {
            Some(entry) => entry.2 += 1,
            None => per_file.push((line.path, line.line, 1)),
        }
    }
    per_file.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    let mut hits = Vec::new();
    for (path, line, count) in per_file {
        if hits.len() >= options.limit {
            break;
        }
        let Some(pos) = file_position(index, &path) else {
            continue;
        };
        if !allowed(pos) {
            continue;
        }
        let chunk = index
            .chunks_of(&path)
            .and_then(|chunks| chunks.iter().find(|c| c.start <= line && line <= c.end));
        let (start, end, kind, name) = chunk.map_or((line, line, ChunkKind::Window, None), |c| {
            (c.start, c.end, c.kind, c.name.clone())
        });
        hits.push(SearchHit {
            path,
            start,
            end,
            kind,
            name,
            score: count as f32,
            signals: Signals {
                role: 1.0,
                ..Signals::default()
            },
        });
    }
    Ok(hits)
}

/// Adds to `query` the snapshot's tokens that inflect one of the query's plain words
/// (`composition` → `compose`, `scheduled` → `scheduler`), at [`RankConfig::expansion`] of its
/// weight: BM25 has no stemming, and short queries rarely use the code's own word form.
fn expand_vocabulary(
    index: &SnapshotIndex,
    info: &QueryInfo,
    query: &mut LexicalQuery,
    config: &RankConfig,
) -> Result<(), IndexError> {
    if config.expansion <= 0.0 {
        return Ok(());
    }
    let view = index.lexical_view();
    let mut added: Vec<(String, f32)> = Vec::new();
    for term in info.search_terms() {
        if term.shape != TermShape::Word || term.text.len() < 5 {
            continue;
        }
        let word = term.text.to_lowercase();
        let Some(weight) = query
            .tokens
            .iter()
            .find(|(t, _)| *t == word)
            .map(|(_, w)| *w)
        else {
            continue;
        };
        let prefix: String = word.chars().take(5).collect();
        for token in view.body_tokens_with_prefix(&prefix, 24)? {
            if token != word
                && same_word(&word, &token, Inflection::Suffixes { min_stem: 5 })
                && !query.tokens.iter().any(|(t, _)| *t == token)
                && !added.iter().any(|(t, _)| *t == token)
            {
                added.push((token, weight * config.expansion));
            }
        }
    }
    query.tokens.extend(added);
    Ok(())
}
