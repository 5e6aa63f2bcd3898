//! The `swex` explorer: swex's default explorer. No LLM, no network: it ranks the files of a
//! snapshot from the engine's evidence, finds where in the top files to look, and spends the
//! request's line budget on what it believes most (docs/explorer-swex.md).
//!
//! Pipeline (each stage is its own module):
//! 1. [`issue`]: read the issue as its readers see it (an issue template's HTML comments
//!    removed: `swex_issue::markup`) — title, body without environment dumps, identifiers,
//!    dotted names, paths, traceback frames, weighted words.
//! 2. Ask the engine (through the services table): the files of the snapshot, BM25 chunk hits for
//!    the cleaned issue and for its title, the title over whole files, the files that hold each
//!    of the title's rare words ([`rare`]), and the definitions of the names the issue gives.
//!    A one-line request of a few words is answered by the host's ranked code search instead.
//! 3. [`rank`]: one feature vector per touched file (lexical, symbols, mentions, frames, file and
//!    directory names, partner tests, kind priors) and a linear score, to which [`history`]
//!    adds how well each source's commit messages match the issue; then [`learned`]: the
//!    source files re-ranked by gradient-boosted trees trained on real fixes (`swex train`),
//!    blended with a share of the linear score (the model's `linear_weight`); for queries in the
//!    `linear_languages`, where the linear score picks the first file better (for the default
//!    model: every language when the history speaks, Python and JavaScript when it is silent),
//!    only the sources below the linear lead (`learned_below_linear_lead`). When the model reads
//!    them (or features are emitted), [`proximity`] adds each file's nearness in the code graph
//!    to the issue's names and to the best-ranked sources, and [`similarity`] its best chunk's
//!    similarity to the issue in the dense layer.
//! 4. [`locate`]: the top source files and their partner tests (tests named for them, by
//!    `swex_text::subjects`), each with its chunks, evidence marks and a belief.
//! 5. [`swex_rankkit::localize`]: candidate spans within each file, then the plan for the line
//!    budget — the believed lead file whole, a few-line pointer into each other file (and, in
//!    answers of `locate.lead_pointer_from` regions or more, into the whole lead before it), at
//!    most `top_k` regions, sources first and then tests, each part most confident first.
//!
//! Config (all optional): `{"ranker": "learned", "dense": false, "linear_languages": null,
//! "learned_below_linear_lead": true, "model": null, "span_ranker": "learned", "span_model": null,
//! "emit_features": false, "emit_dense": null, "weights": {...}, "locate": {...}, "candidates": 400,
//! "max_identifiers": 40, "max_dotted_names": 100, "partner_sources": 2, "debug": false,
//! "short_query_words": 12}`; see [`SwexConfig`]. The weights make ablations a config change.

/// The issue reading of this explorer lives with every other issue parser, in `swex-issue`.
pub use swex_issue::ranking as issue;

/// Whether a request is one line (blank lines around it aside): a question or a name, answered
/// as a search; an issue has a title and a body.
pub fn is_one_line(request_text: &str) -> bool {
    !request_text.trim().contains('\n')
}
pub mod history;
pub mod learned;
pub mod locate;
pub mod proximity;
pub mod rank;
pub mod rare;
pub mod similarity;
pub mod spans;

use serde::Deserialize;
use std::collections::HashSet;
use std::ffi::CStr;
use swex_plugin::types::{DefinitionEntry, FileEntry, SearchArgs, SearchHit};
use swex_plugin::{
    DEFAULT_LINE_BUDGET, Explorer, ExplorerError, Request, Response, Services, parse_config,
};
use swex_rankkit::localize::{PlanLimits, SpanLimits, candidate_spans, plan_regions};

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SwexConfig {
    /// How source files are ranked: `learned` (the default: the shipped tree model, or `model`,
    /// except for the `linear_languages`) or `linear` (the hand-fitted [`rank::Weights`] alone,
    /// for comparison).
    pub ranker: RankerKind,
    /// Languages whose lead the `learned` ranker leaves to the linear weights (and, with
    /// `learned_below_linear_lead` false, the whole order); `"*"` is every language. Absent: the
    /// model's own — for a shipped model the languages where, on held-out folds of the training
    /// fixes, the linear ranking picked the first file better ([`learned::ShippedModel`]: for the
    /// default model every language when the repository history says something of the
    /// candidates, Python and JavaScript when it is silent; none for the dense one;
    /// docs/ranker.md), none for a model of one's own. A query's language is the most common
    /// language of its best lexical source files ([`learned::query_language`]).
    pub linear_languages: Option<Vec<String>>,
    /// In the `linear_languages`, the linear ranking keeps its first source and the model orders
    /// the sources below it (true, the default: on held-out folds of the training fixes the
    /// linear lead is the better first file there and the model the better next ones;
    /// docs/ranker.md), or the whole linear order stays (false).
    pub learned_below_linear_lead: bool,
    /// Rank with the shipped model that also reads the dense layer's similarity of each file to
    /// the issue ([`learned::SHIPPED_DENSE`]): better on held-out folds, but it needs the
    /// embedding model (`swex models fetch`; without it the explorer fails saying so) and costs
    /// one embedded query per answer, and more while the vector cache is cold.
    pub dense: bool,
    /// A model of one's own (`swex train`'s output, inline), used by the `learned` ranker instead
    /// of the shipped one.
    pub model: Option<serde_json::Value>,
    /// Where in a source file to point: `learned` (the default: the shipped span model, or
    /// `span_model`, orders each file's candidate spans; [`spans`]) or `linear` (the spans'
    /// hand-weighted evidence, [`locate::MarkWeights`], alone).
    pub span_ranker: RankerKind,
    /// A span model of one's own (`swex train --unit spans`'s output, inline).
    pub span_model: Option<serde_json::Value>,
    /// Add notes with every candidate source file's feature row and every candidate span's
    /// (what `swex train` learns from).
    pub emit_features: bool,
    /// With `emit_features`, whether the rows carry the dense similarities ([`similarity`]):
    /// `null` (the default) when the embedding model is installed, `false` never (without it a
    /// features run is fast; with it, every row embeds its candidate chunks once), `true` always
    /// (the explorer fails without the model, as a model that reads them does).
    pub emit_dense: Option<bool>,
    pub weights: rank::Weights,
    /// Localization and budget planning ([`locate`], [`swex_rankkit::localize`]).
    pub locate: locate::LocateConfig,
    /// Chunk hits asked from lexical search.
    pub candidates: usize,
    /// At most this many issue identifiers are looked up as definitions.
    pub max_identifiers: usize,
    /// At most this many more names, the last parts of the issue's dotted names
    /// (`astropy.modeling.separable` → `separable`), are looked up as definitions: one service
    /// call each, so the work of an issue naming thousands of dotted names stays bounded.
    pub max_dotted_names: usize,
    /// Test modules of this many top source files are preferred among tests.
    pub partner_sources: usize,
    /// Add the top ranked files with their features to the response notes.
    pub debug: bool,
    /// A one-line request of at most this many words (`HttpClient`, `where is the retry backoff
    /// computed?`) is answered by the host's ranked code search (`code_search`) instead of the
    /// issue pipeline, when the host provides it; 0 never does. 12: the code-search benchmark's
    /// questions have up to 14 words and gain from the search (NDCG@10 0.846 at 8, 0.865 at 12,
    /// 0.867 at 14), while one-line task statements (commit subjects of 16 words and more) lose
    /// from it (docs/explorer-swex.md).
    pub short_query_words: usize,
}

impl Default for SwexConfig {
    fn default() -> Self {
        SwexConfig {
            ranker: RankerKind::Learned,
            linear_languages: None,
            learned_below_linear_lead: true,
            dense: false,
            model: None,
            span_ranker: RankerKind::Learned,
            span_model: None,
            emit_features: false,
            emit_dense: None,
            weights: rank::Weights::default(),
            locate: locate::LocateConfig::default(),
            candidates: 400,
            max_identifiers: 40,
            max_dotted_names: 100,
            partner_sources: 2,
            debug: false,
            short_query_words: 12,
        }
    }
}

/// Which ranking orders the source files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankerKind {
    Learned,
    Linear,
}

/// The names whose definitions are asked for, in order: the first `max_identifiers` identifiers,
/// then the last parts (three characters or more) of the first `max_dotted_names` dotted names
/// that add a new name. At most `max_identifiers + max_dotted_names` names, whatever the issue's
/// size.
pub fn definition_names(issue: &issue::Issue, config: &SwexConfig) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for name in issue.identifiers.iter().take(config.max_identifiers) {
        if seen.insert(name) {
            names.push(name.clone());
        }
    }
    let lasts = issue
        .dotted
        .iter()
        .filter_map(|dotted| dotted.rsplit('.').next())
        .filter(|last| last.len() >= 3);
    let mut added = 0;
    for last in lasts {
        if added == config.max_dotted_names {
            break;
        }
        if seen.insert(last) {
            names.push(last.to_owned());
            added += 1;
        }
    }
    names
}

pub struct Swex {
    config: SwexConfig,
    /// The learned ranker, when `ranker` is `learned`.
    learned: Option<FileModel>,
    /// The learned span ranker, when `span_ranker` is `learned`.
    span_ranker: Option<spans::SpanRanker>,
}

/// The learned file ranker: the one a config gave (read, and checked, when the explorer is
/// created), or a shipped one, read on first use (about a millisecond) — a one-shot process
/// that leaves the whole order to the linear weights never consults it.
enum FileModel {
    Given(learned::FileRanker),
    Shipped(
        learned::ShippedModel,
        std::sync::OnceLock<learned::FileRanker>,
    ),
}

impl FileModel {
    fn get(&self) -> &learned::FileRanker {
        match self {
            FileModel::Given(model) => model,
            FileModel::Shipped(shipped, model) => {
                model.get_or_init(|| learned::FileRanker::of(*shipped))
            }
        }
    }

    /// The languages this model leaves to the linear weights, unless the config names them; a
    /// shipped model's depend on whether the repository history says anything
    /// ([`learned::ShippedModel`]).
    fn linear_languages(&self, history_silent: bool) -> &'static [&'static str] {
        match self {
            FileModel::Given(_) => &[],
            FileModel::Shipped(shipped, _) if history_silent => {
                shipped.linear_languages_without_history
            }
            FileModel::Shipped(shipped, _) => shipped.linear_languages,
        }
    }
}

impl Swex {
    /// The answer to a short query: the host's ranked code search, one span per file; `None`
    /// for issues, or when the host has no `code_search`.
    fn short_query(
        &self,
        request: &Request,
        services: &Services<'_>,
    ) -> Result<Option<Response>, ExplorerError> {
        let text = request.issue.trim();
        let words = text.split_whitespace().count();
        if words == 0
            || words > self.config.short_query_words
            || !is_one_line(text)
            || !services.provides(swex_plugin::ServiceId::CodeSearch)
        {
            return Ok(None);
        }
        let args = swex_plugin::types::CodeSearchArgs {
            query: text.to_owned(),
            limit: request.top_k,
            ..Default::default()
        };
        let result = match services.code_search(&args) {
            Ok(result) => result,
            Err(e) if e.is_unavailable() => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let regions = result
            .hits
            .iter()
            .map(|h| {
                swex_plugin::types::Region::new(
                    h.path.clone(),
                    i64::from(h.start),
                    i64::from(h.end),
                )
                .with_score(h.score)
            })
            .collect();
        let mut response = Response::new(regions);
        response.notes.push(format!(
            "short {} query: ranked code search{}",
            result.query_kind,
            if result.dense {
                ", dense scores fused"
            } else {
                ""
            }
        ));
        Ok(Some(response))
    }

    /// Whether the query's language ([`learned::query_language`]) is one the learned ranker
    /// leaves to the linear weights ([`learned::EVERY_LANGUAGE`] in the list: every query), with
    /// the repository history saying something of the candidates or not.
    fn linear_language(&self, ranked: &[rank::RankedFile], history: &history::History) -> bool {
        let listed: Vec<&str> = match (&self.config.linear_languages, &self.learned) {
            (Some(listed), _) => listed.iter().map(String::as_str).collect(),
            (None, Some(model)) => model.linear_languages(history.is_silent()).to_vec(),
            (None, None) => Vec::new(),
        };
        if listed.contains(&learned::EVERY_LANGUAGE) {
            return true;
        }
        learned::query_language(ranked).is_some_and(|language| listed.contains(&language))
    }

    /// The graph's walks and the dense similarities, each only when the model reads it or the
    /// features are emitted: the graph is built on a snapshot's first walk, and the dense layer
    /// loads the embedding model. A host without the dense layer gives its absent values and a
    /// note saying why.
    fn extra_evidence(
        &self,
        issue_text: &str,
        services: &Services<'_>,
        model: Option<&learned::FileRanker>,
        gathered: &Gathered,
        ranked: &[rank::RankedFile],
        notes: &mut Vec<String>,
    ) -> Result<learned::ExtraEvidence, ExplorerError> {
        let reads = |features: &[&str]| model.is_some_and(|m| m.reads_any(features));
        let emitted_dense = self.config.emit_features && self.config.emit_dense != Some(false);
        let needs_dense = reads(learned::DENSE_FEATURES)
            || (self.config.emit_features && self.config.emit_dense == Some(true));
        let mut extra = learned::ExtraEvidence::default();
        if self.config.emit_features || reads(learned::GRAPH_FEATURES) {
            extra.proximity =
                proximity::Proximity::measure(services, &gathered.definitions, ranked);
        }
        if emitted_dense || needs_dense {
            match similarity::measure(services, issue_text) {
                Ok(similarity) => extra.similarity = similarity,
                // A model that reads the similarities would rank worse without them, quietly;
                // features asked for with them would train a model on their absent values.
                Err(e) if needs_dense => {
                    let (what, other_way) = if reads(learned::DENSE_FEATURES) {
                        ("this file model reads", "leave out \"dense\"")
                    } else {
                        (
                            "\"emit_dense\": true asks for",
                            "\"emit_dense\": null or false",
                        )
                    };
                    return Err(ExplorerError::failed(format!(
                        "{what} the dense similarities, which need the embedding model (or {other_way}): {e}"
                    )));
                }
                Err(e) => notes.push(format!("dense features absent: {e}")),
            }
        } else if self.config.emit_features {
            notes.push("dense features absent: left out (\"emit_dense\": false)".into());
        }
        Ok(extra)
    }

    /// The repository history of the ranking's code files ([`history`]; not tests, and not
    /// documentation, whose history is every feature's), when the linear
    /// weights or the model read it or the features are emitted. Without it (no git history, no
    /// engine) every file has the absent values, so the ranking is the one without history; a
    /// note says so when features are emitted, and always when the search failed.
    fn history(
        &self,
        (issue_text, title): (&str, &str),
        services: &Services<'_>,
        model: Option<&learned::FileRanker>,
        ranked: &[rank::RankedFile],
        notes: &mut Vec<String>,
    ) -> history::History {
        let weights = &self.config.weights;
        let read = weights.history != 0.0
            || weights.similar_commits != 0.0
            || weights.title_similar_commits != 0.0
            || weights.referenced != 0.0
            || self.config.emit_features
            || model.is_some_and(|m| m.reads_any(learned::HISTORY_FEATURES));
        if !read {
            return history::History::default();
        }
        let sources: Vec<String> = ranked
            .iter()
            .filter(|f| !f.is_test && !rank::is_doc_path(&f.path))
            .map(|f| f.path.clone())
            .collect();
        if sources.is_empty() {
            return history::History::default();
        }
        let title = (weights.title_similar_commits != 0.0
            || self.config.emit_features
            || model.is_some_and(|m| m.reads_any(learned::TITLE_HISTORY_FEATURES)))
        .then_some(title);
        match history::measure(services, issue_text, title, sources) {
            Ok(history) => history,
            Err(e) => {
                if self.config.emit_features || !e.is_unavailable() {
                    notes.push(format!("history features absent: {e}"));
                }
                history::History::default()
            }
        }
    }

    fn unavailable(e: swex_plugin::ServiceError) -> ExplorerError {
        if e.is_unavailable() {
            ExplorerError::failed(format!(
                "swex needs the engine's index ({e}); serve it from the index: `swex explore` without `--no-index`, or `swex bench --index`"
            ))
        } else {
            e.into()
        }
    }
}

impl Explorer for Swex {
    const NAME: &'static CStr = c"swex";
    const DESCRIPTION: &'static CStr = c"swex's default explorer: files ranked from lexical, symbol, path and name evidence; regions planned for the line budget (needs the engine's index)";

    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError> {
        let config: SwexConfig = parse_config(config)?;
        if config.candidates == 0 {
            return Err(ExplorerError::InvalidConfig(
                "candidates must be positive".into(),
            ));
        }
        if config.dense && (config.model.is_some() || config.ranker == RankerKind::Linear) {
            return Err(ExplorerError::InvalidConfig(
                "dense chooses the shipped dense model: leave it out with a model of your own or the linear ranker".into(),
            ));
        }
        let shipped = if config.dense {
            learned::SHIPPED_DENSE
        } else {
            learned::SHIPPED
        };
        let learned = match (config.ranker, &config.model) {
            (RankerKind::Linear, _) => None,
            (RankerKind::Learned, None) => Some(FileModel::Shipped(shipped, Default::default())),
            (RankerKind::Learned, Some(model)) => Some(FileModel::Given(
                learned::FileRanker::from_json(model)
                    .map_err(|e| ExplorerError::InvalidConfig(format!("model: {e}")))?,
            )),
        };
        let span_ranker = match (config.span_ranker, &config.span_model) {
            (RankerKind::Linear, _) => None,
            (RankerKind::Learned, None) => Some(spans::SpanRanker::shipped()),
            (RankerKind::Learned, Some(model)) => Some(
                spans::SpanRanker::from_json(model)
                    .map_err(|e| ExplorerError::InvalidConfig(format!("span_model: {e}")))?,
            ),
        };
        Ok(Swex {
            config,
            learned,
            span_ranker,
        })
    }

    fn explore(
        &self,
        request: &Request,
        services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        if let Some(response) = self.short_query(request, services)? {
            return Ok(response);
        }
        let mut stages = Stages::start();
        // The issue as its readers see it: an issue template's HTML comments are not the
        // author's words (`swex_issue::markup`).
        let issue_text = swex_issue::markup::as_rendered(&request.issue);
        let issue = issue::parse(&issue_text);
        stages.lap("parse");
        let gathered = self.gather(&issue, services, &mut stages)?;
        let ranked = rank::rank_files(&gathered.evidence(&issue), &self.config.weights);
        stages.lap("linear");
        let mut notes: Vec<String> = Vec::new();
        let history = self.history(
            (&issue.cleaned, &issue.title),
            services,
            self.learned.as_ref().map(FileModel::get),
            &ranked,
            &mut notes,
        );
        let ranked = rank::add_history(ranked, &history, &self.config.weights);
        stages.lap("history");
        // Who picks the first file depends on the language and on whether the history spoke.
        let linear_lead = self.linear_language(&ranked, &history);
        let model = match &self.learned {
            Some(model) if !linear_lead || self.config.learned_below_linear_lead => {
                Some(model.get())
            }
            _ => None,
        };
        let mut extra =
            self.extra_evidence(&issue_text, services, model, &gathered, &ranked, &mut notes)?;
        extra.history = history;
        stages.lap("extra");
        if self.config.emit_features {
            notes.push(learned::features_note(&ranked, &gathered.hits, &extra));
        }
        let ranked = match model {
            Some(model) if linear_lead => model.rerank_below_lead(ranked, &gathered.hits, &extra),
            Some(model) => model.rerank(ranked, &gathered.hits, &extra),
            None => ranked,
        };
        let tests = self.order_tests(&ranked, &gathered.files);
        stages.lap("rank");
        let mut debug_notes = Vec::new();
        let inputs = locate::Inputs {
            issue: &issue,
            ranked: &ranked,
            tests: &tests,
            hits: &gathered.hits,
            definitions: &gathered.definitions,
            files: &gathered.files,
            top_k: request.top_k,
        };
        let regions = self.plan_budget(
            request,
            services,
            &inputs,
            &mut stages,
            &mut notes,
            &mut debug_notes,
        );
        stages.lap("plan");
        let mut response = Response::new(regions);
        response.notes.extend(notes);
        if self.config.debug {
            add_debug_notes(&mut response, &stages, &ranked, debug_notes);
        }
        Ok(response)
    }
}

/// The time each stage of an answer ended at, in milliseconds from its start (debug notes).
struct Stages {
    started: std::time::Instant,
    laps: Vec<(&'static str, f64)>,
}

impl Stages {
    fn start() -> Stages {
        Stages {
            started: std::time::Instant::now(),
            laps: Vec::new(),
        }
    }

    fn lap(&mut self, stage: &'static str) {
        self.laps
            .push((stage, self.started.elapsed().as_secs_f64() * 1e3));
    }
}

/// What the services say about an issue, before ranking.
struct Gathered {
    files: Vec<FileEntry>,
    hits: Vec<SearchHit>,
    /// Hits of the title alone.
    title_hits: Vec<SearchHit>,
    /// Whole files ranked for the title alone.
    title_files: Vec<SearchHit>,
    /// The title's rare words and the code files that hold them.
    title_rare_words: Vec<rare::RareWord>,
    /// The definitions of each name the issue gives that has any.
    definitions: Vec<(String, Vec<DefinitionEntry>)>,
}

impl Gathered {
    fn evidence<'a>(&'a self, issue: &'a issue::Issue) -> rank::Evidence<'a> {
        rank::Evidence {
            issue,
            files: &self.files,
            hits: &self.hits,
            title_hits: &self.title_hits,
            title_files: &self.title_files,
            title_rare_words: &self.title_rare_words,
            definitions: &self.definitions,
        }
    }
}

impl Swex {
    /// The files, the lexical hits of the issue and of its title, and the definitions of the
    /// names it gives.
    fn gather(
        &self,
        issue: &issue::Issue,
        services: &Services<'_>,
        stages: &mut Stages,
    ) -> Result<Gathered, ExplorerError> {
        let config = &self.config;
        let files = services.list_files(None).map_err(Self::unavailable)?;
        stages.lap("list_files");
        let hits = services
            .lexical_search(&SearchArgs::new(
                issue::lexical_query(issue),
                config.candidates,
            ))
            .map_err(Self::unavailable)?;
        stages.lap("lexical_search");
        let (title_hits, title_files) = if issue.title.trim().is_empty() {
            (Vec::new(), Vec::new())
        } else {
            let title = SearchArgs::new(issue.title.clone(), config.candidates);
            let hits = services.lexical_search(&title).map_err(Self::unavailable)?;
            let files = services
                .lexical_search(&title.whole_files())
                .map_err(Self::unavailable)?;
            (hits, files)
        };
        stages.lap("title_search");
        let title_rare_words =
            rare::rare_title_words(&issue.title, services, &files).map_err(Self::unavailable)?;
        stages.lap("title_rare_words");
        let mut definitions = Vec::new();
        for name in definition_names(issue, config) {
            let defs = services.definitions(&name).map_err(Self::unavailable)?;
            if !defs.is_empty() {
                definitions.push((name, defs));
            }
        }
        stages.lap("definitions");
        Ok(Gathered {
            files,
            hits,
            title_hits,
            title_files,
            title_rare_words,
            definitions,
        })
    }

    /// The test files in the order [`locate`] takes them: partners of the top sources first.
    fn order_tests(&self, ranked: &[rank::RankedFile], files: &[FileEntry]) -> Vec<String> {
        let all_tests: Vec<String> = files
            .iter()
            .filter(|f| rank::is_candidate(f) && rank::is_test_path(&f.path))
            .map(|f| f.path.clone())
            .collect();
        locate::order_tests(ranked, &all_tests, self.config.partner_sources)
    }

    /// The plan: evidence per file, candidate spans, then regions within the line budget.
    fn plan_budget(
        &self,
        request: &Request,
        services: &Services<'_>,
        inputs: &locate::Inputs<'_>,
        stages: &mut Stages,
        notes: &mut Vec<String>,
        debug_notes: &mut Vec<String>,
    ) -> Vec<swex_plugin::Region> {
        let config = &self.config;
        let files = locate::gather(services, inputs, &config.locate);
        stages.lap("locate");
        let limits = SpanLimits {
            join_gap_lines: config.locate.join_gap_lines,
            ..SpanLimits::default()
        };
        let mut spans: Vec<_> = files.iter().map(|f| candidate_spans(f, &limits)).collect();
        if config.emit_features {
            notes.push(spans::span_features_note(
                &files,
                &spans,
                rank::is_test_path,
            ));
        }
        if let Some(model) = &self.span_ranker {
            for (file, spans) in files.iter().zip(&mut spans) {
                if !rank::is_test_path(&file.path) {
                    *spans = model.order(file, std::mem::take(spans));
                }
            }
        }
        if config.debug {
            for (file, spans) in files.iter().zip(&spans) {
                debug_notes.push(
                    serde_json::json!({
                        "file": file.path,
                        "lines": file.line_count,
                        "confidence": file.confidence,
                        "spans": spans.iter().take(8).map(|s| (s.start, s.end, s.evidence, &s.why)).collect::<Vec<_>>(),
                        // The marks inside the best span: where its pointer can open.
                        "best_span_marks": spans.first().map(|best| file
                            .marks
                            .iter()
                            .filter(|m| m.start <= best.end && best.start <= m.end)
                            .map(|m| (m.start, m.end, m.weight, m.kind))
                            .collect::<Vec<_>>()),
                    })
                    .to_string(),
                );
            }
        }
        let plan = plan_regions(
            &files,
            &spans,
            &PlanLimits {
                budget: request.line_budget.unwrap_or(DEFAULT_LINE_BUDGET),
                top_k: request.top_k,
                whole_confidence: config.locate.whole_confidence,
                whole_max_waste: config.locate.whole_max_waste,
                small_file_lines: config.locate.small_file_lines,
                lead_focus_lines: config.locate.lead_focus_lines,
                pointer_lines: config.locate.pointer_lines,
                min_confidence: config.locate.min_confidence,
                lead_pointer: config.locate.lead_pointer(request.top_k, &request.issue),
            },
        );
        let mut regions: Vec<swex_plugin::Region> = plan.into_iter().map(|p| p.region).collect();
        if config.locate.tests_last {
            regions.sort_by_key(|r| rank::is_test_path(&r.path));
        }
        regions
    }
}

/// The debug notes of an answer: the stages' times, the top files' features (one line each, then
/// as JSON), and the plan's notes.
fn add_debug_notes(
    response: &mut Response,
    stages: &Stages,
    ranked: &[rank::RankedFile],
    mut debug_notes: Vec<String>,
) {
    response.notes.push(
        stages
            .laps
            .iter()
            .map(|(stage, ms)| format!("{stage} {ms:.1} ms"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    for f in ranked.iter().take(40) {
        debug_notes.push(
            serde_json::json!({
                "rank_file": f.path,
                "score": f.score,
                "is_test": f.is_test,
                "lines": f.line_count,
                "lexical": f.features.lexical,
                "lexical_rank": f.features.lexical_rank,
                "symbols": f.features.symbols,
                "title_symbols": f.features.title_symbols,
                "mentions": f.features.mentions,
                "frames": f.features.frames,
                "last_frame": f.features.last_frame,
                "title_lexical": f.features.title_lexical,
                "title_file_lexical": f.features.title_file_lexical,
                "title_rare_words": f.features.title_rare_words,
                "partner_test": f.features.partner_test,
                "names": f.features.names,
                "dirs": f.features.dirs,
                "history": f.features.history,
                "doc": rank::is_doc_path(&f.path),
                "init": swex_plugin::text::paths::path_role(&f.path).barrel,
                "vendor": f.vendored,
            })
            .to_string(),
        );
    }
    for f in ranked.iter().take(12) {
        response.notes.push(format!(
            "{:.2} {} lex={:.2}@{:?} sym={:.2} men={} fr={} names={:.2} dirs={:.2} defs={:?}",
            f.score,
            f.path,
            f.features.lexical,
            f.features.lexical_rank,
            f.features.symbols,
            f.features.mentions,
            f.features.frames,
            f.features.names,
            f.features.dirs,
            f.features.defined
        ));
    }
    response.notes.extend(debug_notes);
}

swex_plugin::export_vtable!(Swex);

#[cfg(test)]
mod tests {
    use super::*;

    fn ranked(language: &str, path: &str, lexical_rank: usize) -> rank::RankedFile {
        rank::RankedFile {
            path: path.to_owned(),
            score: 1.0,
            features: rank::Features {
                lexical_rank: Some(lexical_rank),
                ..rank::Features::default()
            },
            is_test: false,
            vendored: false,
            line_count: Some(10),
            language: Some(language.to_owned()),
        }
    }

    #[test]
    fn who_picks_the_lead_depends_on_the_language_and_on_the_history() {
        // Where the linear ranking picked the first file better on held-out folds: everywhere
        // when the history speaks (the linear score reads it), Python and JavaScript when it is
        // silent (docs/ranker.md).
        let swex = Swex::create(&serde_json::json!({})).unwrap();
        let query = |language: &str, extension: &str| {
            vec![
                ranked(language, &format!("src/a.{extension}"), 0),
                ranked(language, &format!("src/b.{extension}"), 1),
            ]
        };
        let silent = history::History::default();
        let spoken = history::History {
            matches: history::of_scores([("src/b.rs".to_string(), 1.5)]),
            ..Default::default()
        };
        let voted = history::History {
            similar_commits: history::of_scores([("src/a.rs".to_string(), 0.5)]),
            ..Default::default()
        };
        assert!(silent.is_silent());
        assert!(!spoken.is_silent() && !voted.is_silent());
        // (language, extension, linear lead without history)
        for (language, extension, without) in [
            ("python", "py", true),
            ("javascript", "js", true),
            ("rust", "rs", false),
            ("c", "c", false),
            ("cpp", "cc", false),
            ("go", "go", false),
            ("java", "java", false),
            ("zig", "zig", false),
        ] {
            let files = query(language, extension);
            assert!(swex.linear_language(&files, &spoken), "{language}");
            assert!(swex.linear_language(&files, &voted), "{language}");
            assert_eq!(swex.linear_language(&files, &silent), without, "{language}");
        }
        assert!(
            swex.linear_language(&[], &spoken),
            "a query of no language too"
        );
        assert!(!swex.linear_language(&[], &silent));
        // The list is a config, whatever the history: empty sends every query to the trees, a
        // list sends its own.
        let trees = Swex::create(&serde_json::json!({"linear_languages": []})).unwrap();
        assert!(!trees.linear_language(&query("python", "py"), &spoken));
        let go = Swex::create(&serde_json::json!({"linear_languages": ["go"]})).unwrap();
        for history in [&spoken, &silent] {
            assert!(go.linear_language(&query("go", "go"), history));
            assert!(!go.linear_language(&query("python", "py"), history));
            assert!(!go.linear_language(&[], history));
        }
        let every = Swex::create(&serde_json::json!({"linear_languages": ["*"]})).unwrap();
        assert!(every.linear_language(&query("rust", "rs"), &silent));
        // The dense model beat the linear ranking everywhere; a model of one's own ranks every
        // query unless the config says otherwise; the linear ranker is linear everywhere anyway.
        let dense = Swex::create(&serde_json::json!({"dense": true})).unwrap();
        let own = Swex::create(&serde_json::json!({
            "model": serde_json::from_str::<serde_json::Value>(learned::SHIPPED.json).unwrap()
        }))
        .unwrap();
        for swex in [dense, own] {
            for history in [&spoken, &silent] {
                assert!(!swex.linear_language(&query("python", "py"), history));
                assert!(!swex.linear_language(&query("javascript", "js"), history));
            }
        }
    }

    #[test]
    fn dense_chooses_the_shipped_dense_model_and_nothing_else() {
        let dense = Swex::create(&serde_json::json!({"dense": true})).unwrap();
        let model = dense.learned.as_ref().unwrap().get();
        assert_eq!(
            model.training,
            learned::FileRanker::of(learned::SHIPPED_DENSE).training
        );
        assert!(model.reads_any(learned::DENSE_FEATURES));
        // With a model of one's own, or the linear ranker, it would mean nothing: refused.
        for config in [
            serde_json::json!({"dense": true, "ranker": "linear"}),
            serde_json::json!({"dense": true, "model": serde_json::from_str::<serde_json::Value>(learned::SHIPPED.json).unwrap()}),
        ] {
            let Err(ExplorerError::InvalidConfig(message)) = Swex::create(&config) else {
                panic!("{config} accepted");
            };
            assert!(message.contains("dense"), "{message}");
        }
    }

    #[test]
    fn the_shipped_file_model_is_read_on_first_use_and_once() {
        let swex = Swex::create(&serde_json::json!({})).unwrap();
        let Some(FileModel::Shipped(_, cell)) = &swex.learned else {
            panic!("the default ranks with the shipped model");
        };
        assert!(
            cell.get().is_none(),
            "not read when the explorer is created"
        );
        let model = swex.learned.as_ref().unwrap().get();
        assert_eq!(model.training, learned::FileRanker::shipped().training);
        assert!(std::ptr::eq(model, swex.learned.as_ref().unwrap().get()));
        // A model given in the config is read (and checked) at once.
        let linear = Swex::create(&serde_json::json!({"ranker": "linear"})).unwrap();
        assert!(linear.learned.is_none());
        let bad = Swex::create(&serde_json::json!({"model": {"format": "nonsense"}}));
        assert!(bad.is_err());
    }
}
