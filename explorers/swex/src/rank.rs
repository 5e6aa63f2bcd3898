//! File ranking: every file of the snapshot that any signal touches becomes a candidate with a
//! feature vector; a linear score ranks them.
//!
//! Signals (each can be switched off for ablations through [`Weights`]):
//! - `lexical`: the engine's BM25 over definition-level chunks, aggregated per file (best chunk
//!   plus a decaying share of the next ones, so a file with several matching functions beats a file
//!   with one lucky chunk), normalised by the best file.
//! - `symbols`: identifiers of the issue that some file *defines* (a class, function, method). A
//!   name defined in few files is strong evidence; a name defined in many is none.
//! - `mentions`: paths and dotted module names written in the issue (`astropy/io/ascii/rst.py`,
//!   `astropy.modeling.separable`), and files of traceback frames.
//! - `names`: the file's own name or its directories equal a word of the issue (`rst.py` for
//!   "RestructuredText … ascii.rst", `conditionset.py` for `ConditionSet`), weighted by how rare
//!   that file name is in the repository.
//! - `title_rare_words`: the rarest word of the title the file holds, among the words only a
//!   handful of the snapshot's code files hold ([`crate::rare`]).
//! - kind priors: documentation and `__init__.py` files are rarely what an issue needs first.

use crate::issue::{Issue, is_stop};
use crate::rare::RareWord;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use swex_plugin::text::hints::path_suffixes;
use swex_plugin::text::identifiers::{Digits, identifier_parts, squash};
use swex_plugin::text::paths::{
    BundledLibraries, is_unparsed_source, mirrored_sources, module_stem, path_role,
};
use swex_plugin::text::subjects::{names_subject, subject_key, subject_keys};
use swex_plugin::types::{DefinitionEntry, FileEntry, SearchHit};

/// Weights of the linear file score. Zero switches a signal off.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Weights {
    pub lexical: f64,
    pub lexical_rank: f64,
    pub symbols: f64,
    pub mentions: f64,
    pub frames: f64,
    pub names: f64,
    pub dirs: f64,
    pub doc_penalty: f64,
    /// Examples, demos and benchmarks (`examples/`, `benchmarks/`, …: the `example` path role):
    /// code that shows or measures the project, which a fix seldom edits. A prior, the size of
    /// `doc_penalty` (docs/ranker.md, "Languages without train rows").
    pub example_penalty: f64,
    pub init_penalty: f64,
    pub test_penalty: f64,
    pub vendor_penalty: f64,
    /// `title_symbols`: names the issue's title writes that the file defines.
    pub title_symbols: f64,
    /// `last_frame`: the file holds the deepest frame of a traceback in the issue (where the
    /// error surfaced, inside the repository).
    pub last_frame: f64,
    /// `title_lexical`: BM25 of the title alone, aggregated per file like `lexical`.
    pub title_lexical: f64,
    /// `title_file_lexical`: BM25 of the title's words over each whole file (the files that hold
    /// most of them, wherever they are), over the best candidate source's.
    pub title_file_lexical: f64,
    /// `title_rare_words`: the rarest word of the title the file holds, among the words at most
    /// [`crate::rare::RARE_WORD_MAX_FILES`] code files hold (its inverse document frequency over
    /// the best candidate source's).
    pub title_rare_words: f64,
    /// `partner_test`: the best `lexical` of a test file that tests this file by name
    /// (`test_<stem>.py`, `<stem>_test.go`, ...): a matching test points at its subject.
    pub partner_test: f64,
    /// `history`: how well the file's commit messages match the issue, over the best candidate
    /// code file's ([`crate::history`]; 0 for every file of a checkout without git history).
    pub history: f64,
    /// `similar_commits`: the file's share of the past commits most like the issue, over the
    /// best candidate code file's ([`crate::history`]; 0 without git history).
    pub similar_commits: f64,
    /// `referenced`: the file's share of the past commits that name an issue or pull request
    /// the issue names (`#1234`), over the best candidate code file's ([`crate::history`]).
    pub referenced: f64,
    /// `title_similar_commits`: the file's share of the past commits most like the issue's
    /// title, when one of them covers the title well ([`crate::history::TITLE_COVERAGE`]), over
    /// the best candidate code file's ([`crate::history`]; 0 otherwise).
    pub title_similar_commits: f64,
}

impl Default for Weights {
    /// Fitted on the 66 dev instances (docs/explorer-swex.md, "Ranking"): a conditional logit
    /// over each instance's candidate source files, L2 0.1, target = the files the ground truth
    /// reads whole; leave-one-repository-out top-1 accuracy equals the in-sample one (53/66).
    /// `vendor_penalty` is a prior (the dev set has no vendored code to learn it from).
    fn default() -> Self {
        Weights {
            lexical: 2.98,
            lexical_rank: 1.95,
            symbols: 0.43,
            mentions: 0.46,
            frames: -1.55,
            names: 0.14,
            dirs: 2.48,
            doc_penalty: 1.12,
            example_penalty: 1.12,
            init_penalty: 0.48,
            test_penalty: 0.0,
            vendor_penalty: 6.0,
            title_symbols: 0.0,
            last_frame: 0.32,
            title_lexical: 3.97,
            title_file_lexical: TITLE_FILE_LEXICAL_WEIGHT,
            title_rare_words: TITLE_RARE_WORDS_WEIGHT,
            partner_test: 2.83,
            history: HISTORY_WEIGHT,
            similar_commits: SIMILAR_COMMITS_WEIGHT,
            referenced: REFERENCED_WEIGHT,
            title_similar_commits: TITLE_SIMILAR_COMMITS_WEIGHT,
        }
    }
}

/// The weights of [`Weights::history`] and [`Weights::similar_commits`]: not fitted with the
/// others (they were fitted on dev before the history was read) but chosen on the 516 training
/// fixes' candidates and dev as the terms added to the fitted score (docs/ranker.md,
/// "Repository history", "Similar commits").
pub const HISTORY_WEIGHT: f64 = 3.0;
/// See [`HISTORY_WEIGHT`].
pub const SIMILAR_COMMITS_WEIGHT: f64 = 2.0;
/// The weight of [`Weights::title_similar_commits`]: off. Picked at 2 with
/// [`crate::history::TITLE_COVERAGE`] on the 516 training fixes' candidates (the same pick in
/// every leave-one-repository-out fold), it gains leads on the 516 and the 159 unseen fixes
/// end to end but loses a lead on dev and first regions on the commit-message proxy, and every
/// coverage and weight tried lowers dev's objective (docs/ranker.md, "Similar commits"); the
/// feature rows carry it as `title_similar_commits_relative`.
pub const TITLE_SIMILAR_COMMITS_WEIGHT: f64 = 0.0;
/// The weight of [`Weights::referenced`]: off. Measured at 1, 2 and 4 like [`HISTORY_WEIGHT`]:
/// the 516 training fixes it would be chosen on do not move (file Hit@1 / 3 / 5 the same at
/// each), dev loses a lead at 4 (an issue citing a ticket for context, not the place of the
/// fix), and the 159 unseen fixes gain two leads at 4 — too little to choose a weight by
/// (docs/ranker.md, "Issues the issue refers to").
pub const REFERENCED_WEIGHT: f64 = 0.0;
/// The weight of [`Weights::title_file_lexical`]: not fitted with the others either (it came
/// after them), chosen as the term added to the fitted score on the 516 training fixes'
/// candidates and checked on the 159 unseen fixes and dev (docs/ranker.md, "The title over
/// whole files").
pub const TITLE_FILE_LEXICAL_WEIGHT: f64 = 0.5;
/// The weight of [`Weights::title_rare_words`]: chosen like [`TITLE_FILE_LEXICAL_WEIGHT`], as the
/// term added to the score on the 516 training fixes' candidates (0.25–2 tried), checked on the
/// 159 unseen fixes and dev (docs/ranker.md, "Rare title words").
pub const TITLE_RARE_WORDS_WEIGHT: f64 = 1.0;

/// Evidence for one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Features {
    pub lexical: f64,
    pub lexical_rank: Option<usize>,
    pub symbols: f64,
    pub mentions: f64,
    pub frames: f64,
    pub names: f64,
    pub dirs: f64,
    pub title_symbols: f64,
    pub last_frame: f64,
    pub title_lexical: f64,
    /// The title's whole-file BM25 over the best candidate source's (0 for tests).
    pub title_file_lexical: f64,
    /// The rarest title word the file holds, over the best candidate source's (0 for tests).
    pub title_rare_words: f64,
    pub partner_test: f64,
    /// The history match over the best candidate source's ([`crate::learned::FileScores::relative`];
    /// set by [`add_history`], 0 for tests and documentation).
    pub history: f64,
    /// The share of the similar commits over the best candidate's (set by [`add_history`]).
    pub similar_commits: f64,
    /// The share of the commits naming the issue's issues over the best candidate's (set by
    /// [`add_history`]).
    pub referenced: f64,
    /// The share of the title's similar commits over the best candidate's, when one covers the
    /// title (set by [`add_history`]).
    pub title_similar_commits: f64,
    /// Names of the definitions this file holds that the issue names (for provenance).
    pub defined: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RankedFile {
    pub path: String,
    pub score: f64,
    pub features: Features,
    pub is_test: bool,
    /// Code a fix never edits ([`is_vendored_path`], or in a bundled library:
    /// `swex_plugin::text::paths::BundledLibraries`).
    pub vendored: bool,
    pub line_count: Option<u32>,
    /// The language the engine parses the file as (`None`: configuration or prose).
    pub language: Option<String>,
}

/// Test code by path convention, across the languages the engine parses (the one rule of
/// `swex_plugin::text::paths`, which the engine's search uses too).
pub fn is_test_path(path: &str) -> bool {
    path_role(path).test
}

/// Documentation: `doc/`, `docs/` folders and prose files (`.rst`, `.md`, `.txt`, …), and rendered
/// `.html` outside template folders.
pub fn is_doc_path(path: &str) -> bool {
    path_role(path).docs
        || path.to_ascii_lowercase().ends_with(".html") && !path.contains("templates/")
}

/// Code a fix never edits, kept in the repository for other reasons: vendored copies of other
/// projects (`vendor/`, `third_party/`, `node_modules/`, `extern/`, a top-level `deps/` or
/// `dependencies/`, versioned copies in `static/`) and generated or bundled files (`dist/`, a
/// top-level `build/`, `*.min.js`, bundles, `single_include/`, amalgamations, lock files), and
/// auxiliary files: the repository's tooling (`.github/` issue templates and CI files) and a
/// top-level `contrib/`.
/// Their words match issues by accident (a bundled `underscore-1.13.1.js` mentions every common
/// identifier; an issue written from a template repeats it). Demoted, still searchable.
pub fn is_vendored_path(path: &str) -> bool {
    let role = path_role(path);
    role.vendored || role.generated || role.auxiliary
}

/// Source code: a file of a language the engine parses, or of one it indexes without a grammar
/// (`swex_text::paths::is_unparsed_source`: `builtin.jq`, `parser.y`, `lexer.l`).
pub fn is_code_file(file: &FileEntry) -> bool {
    file.language.is_some() || is_unparsed_source(&file.path)
}

/// Files an explorer may return as code to read: source files ([`is_code_file`]) plus
/// configuration files. Data files, images and the like never become candidates.
pub fn is_candidate(file: &FileEntry) -> bool {
    is_code_file(file)
        || [
            ".py", ".pyi", ".cfg", ".toml", ".ini", ".rst", ".md", ".txt",
        ]
        .iter()
        .any(|e| file.path.ends_with(e))
}

/// The Python module path of a file (`swex_text::paths::Modules::Python`): the issue's dotted
/// names are Python imports.
fn module_path(path: &str) -> Option<String> {
    swex_plugin::text::paths::module_path(path, swex_plugin::text::paths::Modules::Python)
}

/// Aggregates chunk hits per file: best chunk + 0.5 × second + 0.25 × third … (decaying).
pub fn aggregate_lexical(hits: &[SearchHit]) -> BTreeMap<String, f64> {
    let mut per_file: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for hit in hits {
        per_file
            .entry(hit.path.clone())
            .or_default()
            .push(hit.score);
    }
    per_file
        .into_iter()
        .map(|(path, mut scores)| {
            scores.sort_by(|a, b| b.total_cmp(a));
            let total = scores
                .iter()
                .take(4)
                .enumerate()
                .map(|(i, s)| s * 0.5f64.powi(i as i32))
                .sum();
            (path, total)
        })
        .collect()
}

pub struct Evidence<'a> {
    pub issue: &'a Issue,
    pub files: &'a [FileEntry],
    pub hits: &'a [SearchHit],
    /// Hits of the title alone.
    pub title_hits: &'a [SearchHit],
    /// Whole files ranked for the title alone (`lexical_search` with `whole_files`).
    pub title_files: &'a [SearchHit],
    /// The title's rare words and the code files that hold them ([`crate::rare`]).
    pub title_rare_words: &'a [RareWord],
    /// Definitions found for each identifier of the issue.
    pub definitions: &'a [(String, Vec<DefinitionEntry>)],
}

/// C and C++ headers: declarations, usually next to the source that defines the behaviour.
pub fn is_header_path(path: &str) -> bool {
    [".h", ".hh", ".hpp", ".hxx", ".h++"]
        .iter()
        .any(|e| path.to_ascii_lowercase().ends_with(e))
}

/// How much a definition says "the behaviour is here", among all the definitions of its name:
/// 1 for an implementation; 0.5 for a place that only declares or documents it when the name is
/// also implemented elsewhere — a C/C++ header when a source file defines the name too, a
/// one-line declaration (a prototype, an abstract or interface method) when a longer definition
/// exists, an interface or trait when something else of that name is not one. (A PHP trait's
/// *methods* are implementations and keep 1.)
pub fn behaviour_weight(def: &DefinitionEntry, all: &[DefinitionEntry]) -> f64 {
    let is_header = |path: &str| is_header_path(path);
    let is_contract = |d: &DefinitionEntry| matches!(d.kind.as_str(), "interface" | "trait");
    let declared_only = is_header(&def.path) && all.iter().any(|d| !is_header(&d.path))
        || def.start == def.end && all.iter().any(|d| d.end > d.start)
        || is_contract(def) && all.iter().any(|d| !is_contract(d));
    if declared_only { 0.5 } else { 1.0 }
}

/// The segment weight of the issue's title (see [`crate::issue::Issue::identifier_weight`]).
const TITLE_WEIGHT: f64 = 3.0;

/// Ranks every candidate file touched by a signal, best first (ties by path).
pub fn rank_files(evidence: &Evidence<'_>, weights: &Weights) -> Vec<RankedFile> {
    let issue = evidence.issue;
    let candidates = Candidates::of(evidence.files);
    let mut features: FeatureMap = BTreeMap::new();
    add_lexical(&mut features, &candidates, evidence.hits);
    add_title_lexical(&mut features, &candidates, evidence.title_hits);
    add_symbols(&mut features, &candidates, issue, evidence.definitions);
    add_path_mentions(&mut features, &candidates, issue);
    add_module_mentions(&mut features, &candidates, issue);
    add_frames(&mut features, &candidates, issue);
    add_names(&mut features, &candidates, issue);
    // After the lexical signal: a test is a partner when it matched the issue's words.
    add_partner_tests(&mut features, &candidates);
    add_title_file_lexical(&mut features, evidence.title_files);
    add_title_rare_words(&mut features, evidence.title_rare_words);
    score_files(features, &candidates, weights)
}

/// The features of each file a signal touched, by path.
type FeatureMap = BTreeMap<String, Features>;

/// The files that can be ranked ([`is_candidate`]), by path.
struct Candidates<'a> {
    files: HashMap<&'a str, &'a FileEntry>,
    /// The libraries bundled from other projects (found among all files, licences included).
    bundled: BundledLibraries,
    /// How many there are (at least 1): the base of the rarity of a signal.
    count: f64,
    /// The longest path: longer suffixes of a mention cannot name a file.
    longest: usize,
}

impl<'a> Candidates<'a> {
    fn of(files: &'a [FileEntry]) -> Candidates<'a> {
        let bundled = BundledLibraries::find(files.iter().map(|f| f.path.as_str()));
        let mut files: HashMap<&str, &FileEntry> = files
            .iter()
            .filter(|f| is_candidate(f))
            .map(|f| (f.path.as_str(), f))
            .collect();
        // A Python stub beside its module (`figure.pyi` next to `figure.py`) repeats the
        // module's names without its code: the module is the candidate, and each name is
        // counted once. (Modules are always candidates, so the map itself says which stubs
        // have one beside them; only `.pyi` paths allocate anything here.)
        let stub_twins: Vec<&str> = files
            .keys()
            .copied()
            .filter(|path| {
                mirrored_sources(path)
                    .iter()
                    .any(|source| files.contains_key(source.as_str()))
            })
            .collect();
        for stub in stub_twins {
            files.remove(stub);
        }
        Candidates {
            bundled,
            count: files.len().max(1) as f64,
            longest: files.keys().map(|p| p.len()).max().unwrap_or(0),
            files,
        }
    }

    fn contains(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    /// Whether `path` is code a fix never edits: vendored by its path, or in a bundled library.
    fn is_vendored(&self, path: &str) -> bool {
        is_vendored_path(path) || self.bundled.holds(path)
    }

    /// The candidate's own copy of `path`, if `path` is one.
    fn get(&self, path: &str) -> Option<&'a str> {
        self.files.get_key_value(path).map(|(p, _)| *p)
    }

    fn paths(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.files.keys().copied()
    }
}

/// Lexical: each file's best BM25 chunk scores relative to the best file, and its rank.
fn add_lexical(features: &mut FeatureMap, candidates: &Candidates<'_>, hits: &[SearchHit]) {
    let lexical = aggregate_lexical(hits);
    let best = lexical.values().copied().fold(0.0, f64::max);
    let mut by_score: Vec<(&String, &f64)> = lexical.iter().collect();
    by_score.sort_by(|a, b| b.1.total_cmp(a.1).then(a.0.cmp(b.0)));
    for (rank, (path, score)) in by_score.into_iter().enumerate() {
        if !candidates.contains(path) {
            continue;
        }
        let f = features.entry(path.clone()).or_default();
        f.lexical = if best > 0.0 { score / best } else { 0.0 };
        f.lexical_rank = Some(rank);
    }
}

/// The title alone, relative to its best file.
fn add_title_lexical(
    features: &mut FeatureMap,
    candidates: &Candidates<'_>,
    title_hits: &[SearchHit],
) {
    let title_lexical = aggregate_lexical(title_hits);
    let best_title = title_lexical.values().copied().fold(0.0, f64::max);
    for (path, score) in &title_lexical {
        if candidates.contains(path) && best_title > 0.0 {
            features.entry(path.clone()).or_default().title_lexical = score / best_title;
        }
    }
}

/// The title over whole files, relative to the best candidate source among them; for the
/// sources some other signal touched (it adds no candidate). A host that predates whole-file
/// search answers chunks instead: the best chunk of each file then stands for the file.
fn add_title_file_lexical(features: &mut FeatureMap, title_files: &[SearchHit]) {
    let scores = title_files.iter().map(|hit| (hit.path.as_str(), hit.score));
    set_relative_to_best_source(features, scores, |f, value| f.title_file_lexical = value);
}

/// The title's rare words: each source some other signal touched gets the inverse document
/// frequency of the rarest one it holds, over the best such source's (it adds no candidate).
fn add_title_rare_words(features: &mut FeatureMap, rare_words: &[RareWord]) {
    let idfs = rare_words
        .iter()
        .flat_map(|word| word.files.iter().map(|path| (path.as_str(), word.idf)));
    set_relative_to_best_source(features, idfs, |f, value| f.title_rare_words = value);
}

/// Each touched source's best value among `values` (path, value; a path may come several
/// times), over the best source's, given to it by `set`. Files no other signal touched and
/// tests get nothing; nothing is set when no value is positive.
fn set_relative_to_best_source<'a>(
    features: &mut FeatureMap,
    values: impl IntoIterator<Item = (&'a str, f64)>,
    set: fn(&mut Features, f64),
) {
    let mut per_file: HashMap<&str, f64> = HashMap::new();
    for (path, value) in values {
        if !is_test_path(path) && features.contains_key(path) {
            let best = per_file.entry(path).or_default();
            *best = best.max(value);
        }
    }
    let best = per_file.values().copied().fold(0.0, f64::max);
    if best <= 0.0 {
        return;
    }
    for (path, value) in per_file {
        if let Some(f) = features.get_mut(path) {
            set(f, value / best);
        }
    }
}

/// Symbols defined by files.
fn add_symbols(
    features: &mut FeatureMap,
    candidates: &Candidates<'_>,
    issue: &Issue,
    definitions: &[(String, Vec<DefinitionEntry>)],
) {
    for (name, defs) in definitions {
        let files: HashSet<&str> = defs
            .iter()
            .map(|d| d.path.as_str())
            .filter(|path| candidates.contains(path))
            .collect();
        if files.is_empty() || files.len() > 8 {
            continue;
        }
        // A name the title or a code span gives, written like code (`separability_matrix`,
        // `ConditionSet`), is specific; a plain word that a code block happens to use (`path`,
        // `build`) is not.
        let segment = issue.identifier_weight.get(name).copied().unwrap_or(1.0);
        let specificity = if identifier_parts(name, Digits::Attached).len() > 1 || name.len() >= 12
        {
            1.0
        } else {
            0.35
        };
        let rarity = (1.0 + candidates.count / files.len() as f64).ln();
        let in_title = segment >= TITLE_WEIGHT;
        for path in files {
            let behaviour = defs
                .iter()
                .filter(|d| d.path == path)
                .map(|d| behaviour_weight(d, defs))
                .fold(0.0, f64::max);
            let f = features.entry(path.to_owned()).or_default();
            f.symbols += behaviour * rarity * specificity * segment.ln_1p();
            if in_title {
                f.title_symbols += rarity;
            }
            if !f.defined.contains(name) {
                f.defined.push(name.clone());
            }
        }
    }
}

/// Paths written in the issue: hash look-ups of the path suffixes that can name a candidate
/// (never a scan of every file per path, which made this quadratic in the issue for an issue
/// naming thousands of paths).
fn add_path_mentions(features: &mut FeatureMap, candidates: &Candidates<'_>, issue: &Issue) {
    let mut mentioned: HashSet<&str> = HashSet::new();
    let mut mention_set: HashSet<&str> = HashSet::new();
    for m in &issue.paths {
        let m = m.trim_start_matches("./");
        mention_set.insert(m);
        // `m == path`, or `m` ends with `/path`.
        for suffix in path_suffixes(m, candidates.longest) {
            if let Some(path) = candidates.get(suffix) {
                mentioned.insert(path);
            }
        }
    }
    for path in candidates.paths() {
        // `path` ends with `/m` for a mention `m` of two components or more.
        let named = path_suffixes(path, usize::MAX)
            .skip(1)
            .any(|suffix| suffix.contains('/') && mention_set.contains(suffix));
        if named || mentioned.contains(path) {
            features.entry(path.to_owned()).or_default().mentions += 1.0;
        }
    }
}

/// Dotted names written in the issue that name a module of the repository.
fn add_module_mentions(features: &mut FeatureMap, candidates: &Candidates<'_>, issue: &Issue) {
    let modules: HashMap<String, &str> = candidates
        .paths()
        .filter_map(|p| module_path(p).map(|m| (m, p)))
        .collect();
    let longest_module = modules.keys().map(String::len).max().unwrap_or(0);
    for dotted in &issue.dotted {
        // The longest prefix of the dotted name that is a module of the repository; prefixes
        // longer than every module name are not looked up.
        let ends = dotted
            .match_indices('.')
            .map(|(i, _)| i)
            .chain([dotted.len()])
            .take_while(|&end| end <= longest_module);
        let found = ends
            .enumerate()
            .filter_map(|(parts, end)| modules.get(&dotted[..end]).map(|path| (parts + 1, path)))
            .last();
        if let Some((parts, path)) = found
            && parts >= 2
        {
            features.entry((*path).to_owned()).or_default().mentions += 1.0;
        }
    }
}

/// Traceback frames, and the deepest one: the most specific file of the last frame that names
/// one.
fn add_frames(features: &mut FeatureMap, candidates: &Candidates<'_>, issue: &Issue) {
    let mut deepest: Option<&str> = None;
    for frame in &issue.frames {
        let frame_path = frame.path.trim_start_matches('/');
        let mut first = None;
        for suffix in path_suffixes(frame_path, candidates.longest) {
            if let Some(path) = candidates.get(suffix) {
                features.entry(path.to_owned()).or_default().frames += 1.0;
                first = first.or(Some(path));
            }
        }
        deepest = first.or(deepest);
    }
    if let Some(path) = deepest {
        features.entry(path.to_owned()).or_default().last_frame = 1.0;
    }
}

/// File and directory names equal to issue words. A directory name only adds to a file some
/// signal (its own name included) already touched.
fn add_names(features: &mut FeatureMap, candidates: &Candidates<'_>, issue: &Issue) {
    // Each path's squashed stem, once (a repository has thousands of candidates).
    let stems: Vec<(&str, String)> = candidates
        .paths()
        .map(|path| (path, squash(module_stem(path))))
        .collect();
    let mut stem_counts: HashMap<&str, usize> = HashMap::new();
    for (_, stem) in &stems {
        *stem_counts.entry(stem.as_str()).or_default() += 1;
    }
    // A folder's score depends on the folder alone: computed once per folder.
    let mut folder_scores: HashMap<&str, f64> = HashMap::new();
    for (path, stem) in &stems {
        // The issue's strong words are looked up first: the stop-word test allocates.
        if stem.len() >= 3
            && let Some(weight) = issue.strong_words.get(stem)
            && !is_stop(stem)
        {
            let rarity = (1.0 + candidates.count / stem_counts[stem.as_str()] as f64).ln();
            features.entry((*path).to_owned()).or_default().names += weight.ln_1p() * rarity;
        }
        if !features.contains_key(*path) {
            continue;
        }
        let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
        let dir_score = *folder_scores
            .entry(folder)
            .or_insert_with(|| folder_score(folder, issue));
        if dir_score > 0.0 {
            features.get_mut(*path).expect("checked").dirs = dir_score;
        }
    }
}

/// The `dirs` evidence of a folder: Σ ln(1 + weight) of the issue's strong words among its
/// distinct squashed segments (three letters or more, not stop words).
fn folder_score(folder: &str, issue: &Issue) -> f64 {
    // Ordered, so that the sum adds in one order in every process (a hash set's order changes
    // between runs, and with it the last bits of the sum).
    let dirs: BTreeSet<String> = folder
        .split('/')
        .filter(|d| !d.is_empty())
        .map(squash)
        .filter(|d| d.len() >= 3 && issue.strong_words.contains_key(d) && !is_stop(d))
        .collect();
    dirs.iter()
        .filter_map(|d| issue.strong_words.get(d))
        .map(|w| w.ln_1p())
        .sum()
}

/// Tests that match the issue point at the files they test. Sources are found by their subject
/// key (one hash look-up per test, not a scan of every file per test), then checked with the
/// exact naming rule. Only the keys the matched tests ask for are indexed: the path rules
/// (`is_test_path`) run for the few candidates whose key is one of them, not for every file.
fn add_partner_tests(features: &mut FeatureMap, candidates: &Candidates<'_>) {
    let tests: Vec<(&String, f64, Vec<String>)> = features
        .iter()
        .filter(|(p, f)| f.lexical > 0.0 && is_test_path(p))
        .map(|(test, f)| (test, f.lexical, subject_keys(test)))
        .collect();
    let wanted: HashSet<&str> = tests
        .iter()
        .flat_map(|(_, _, keys)| keys.iter().map(String::as_str))
        .collect();
    if wanted.is_empty() {
        return;
    }
    let mut by_subject: HashMap<String, Vec<&str>> = HashMap::new();
    for path in candidates.paths() {
        let key = subject_key(path);
        if wanted.contains(key.as_str()) && !is_test_path(path) {
            by_subject.entry(key).or_default().push(path);
        }
    }
    let mut partner: BTreeMap<String, f64> = BTreeMap::new();
    for (test, lexical, keys) in &tests {
        for key in keys {
            for source in by_subject.get(key).into_iter().flatten() {
                if names_subject(test, source) {
                    let best = partner.entry((*source).to_owned()).or_default();
                    *best = best.max(*lexical);
                }
            }
        }
    }
    for (path, best) in partner {
        features.entry(path).or_default().partner_test = best;
    }
}

/// The linear score of each file's features, minus the penalties of its role; best first, ties
/// by path.
fn score_files(
    features: FeatureMap,
    candidates: &Candidates<'_>,
    weights: &Weights,
) -> Vec<RankedFile> {
    let mut ranked: Vec<RankedFile> = features
        .into_iter()
        .map(|(path, f)| {
            let entry = candidates.files[path.as_str()];
            let is_test = is_test_path(&path);
            let mut score = weights.lexical * f.lexical
                + weights.lexical_rank * f.lexical_rank.map_or(0.0, |r| 1.0 / (1.0 + r as f64))
                + weights.symbols * f.symbols.ln_1p()
                + weights.mentions * f.mentions.min(3.0)
                + weights.frames * f.frames.min(3.0)
                + weights.names * f.names.ln_1p()
                + weights.dirs * f.dirs.ln_1p()
                + weights.title_symbols * f.title_symbols.ln_1p()
                + weights.last_frame * f.last_frame
                + weights.title_lexical * f.title_lexical
                + weights.title_file_lexical * f.title_file_lexical
                + weights.title_rare_words * f.title_rare_words
                + weights.partner_test * f.partner_test;
            let role = path_role(&path);
            if is_doc_path(&path) {
                score -= weights.doc_penalty;
            }
            if role.example {
                score -= weights.example_penalty;
            }
            if role.barrel {
                score -= weights.init_penalty;
            }
            let vendored = candidates.is_vendored(&path);
            if vendored {
                score -= weights.vendor_penalty;
            }
            if is_test {
                score -= weights.test_penalty;
            }
            RankedFile {
                vendored,
                line_count: entry.line_count,
                language: entry.language.clone(),
                path,
                score,
                features: f,
                is_test,
            }
        })
        .collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    ranked
}

/// Adds the history terms to the linear score of each source file of a ranking (tests keep
/// theirs: their history says what was tested, and the planner orders them by their subjects);
/// best first again, ties by path. With no history every score stays as it was.
pub fn add_history(
    mut ranked: Vec<RankedFile>,
    history: &crate::history::History,
    weights: &Weights,
) -> Vec<RankedFile> {
    for file in ranked.iter_mut().filter(|f| !f.is_test) {
        let matched = history.matches.relative(&file.path);
        let similar = history.similar_commits.relative(&file.path);
        let referenced = history.referenced.relative(&file.path);
        let title_similar = history.title_similar_commits.relative(&file.path);
        file.features.history = matched;
        file.features.similar_commits = similar;
        file.features.referenced = referenced;
        file.features.title_similar_commits = title_similar;
        file.score += weights.history * matched
            + weights.similar_commits * similar
            + weights.referenced * referenced
            + weights.title_similar_commits * title_similar;
    }
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Evidence of lexical hits alone; other signals are set with `..` on it.
    fn lexical_evidence<'a>(
        issue: &'a Issue,
        files: &'a [FileEntry],
        hits: &'a [SearchHit],
    ) -> Evidence<'a> {
        Evidence {
            issue,
            files,
            hits,
            title_hits: &[],
            title_files: &[],
            title_rare_words: &[],
            definitions: &[],
        }
    }

    #[test]
    fn definitions_count_most_where_the_behaviour_lives() {
        let def = |path: &str, kind: &str, start: u32, end: u32| {
            DefinitionEntry::new(path, "parse", "parse", kind, start, end)
        };
        let header = def("include/parser.h", "function", 10, 10);
        let source = def("src/parser.cc", "function", 40, 90);
        let both = [header.clone(), source.clone()];
        assert_eq!(behaviour_weight(&header, &both), 0.5);
        assert_eq!(behaviour_weight(&source, &both), 1.0);
        // Alone, a header (an inline or header-only library) is where the behaviour is.
        let inline = def("include/parser.hpp", "function", 10, 30);
        assert_eq!(
            behaviour_weight(&inline, std::slice::from_ref(&inline)),
            1.0
        );
        // An interface method (one line) against its implementation; the interface itself.
        let abstract_method = def("api/Parser.java", "method", 5, 5);
        let implementation = def("impl/DefaultParser.java", "method", 20, 60);
        let pair = [abstract_method.clone(), implementation.clone()];
        assert_eq!(behaviour_weight(&abstract_method, &pair), 0.5);
        assert_eq!(behaviour_weight(&implementation, &pair), 1.0);
        let interface = def("api/Parser.kt", "interface", 1, 12);
        let class = def("impl/Parser.kt", "class", 1, 80);
        assert_eq!(
            behaviour_weight(&interface, &[interface.clone(), class.clone()]),
            0.5
        );
        // A PHP trait's method is an implementation.
        let trait_method = def("src/Concerns/Parses.php", "method", 10, 40);
        assert_eq!(
            behaviour_weight(&trait_method, &[trait_method.clone(), class]),
            1.0
        );
    }

    /// Which files the issue's paths, dotted names and frames point at, as the look-ups by path
    /// suffix find them: the rule is `m == path`, `path` ends with `/m` (`m` of two components or
    /// more), or `m` ends with `/path`.
    #[test]
    fn mentions_and_frames_by_path_suffix() {
        let files: Vec<FileEntry> = [
            "pkg/core.py",
            "src/pkg/util.py",
            "util.py",
            "a/b/c/deep.py",
            "b/c/deep.py",
            "mod/__init__.py",
            "mod/sub.py",
        ]
        .iter()
        .map(|p| FileEntry::new(*p, 10))
        .collect();
        let frame = |path: &str| crate::issue::Frame {
            style: swex_issue::clues::FrameStyle::Python,
            path: path.to_owned(),
            line: Some(3),
            column: None,
            function: None,
        };
        let issue = Issue {
            paths: vec![
                "./pkg/core.py".into(), // pkg/core.py itself
                "pkg/util.py".into(),   // src/pkg/util.py ends with it
                "x/y/util.py".into(),   // ends with /util.py
                "nothing/here.py".into(),
            ],
            dotted: vec!["mod.sub.func".into(), "mod.other".into()],
            frames: vec![frame("/usr/lib/a/b/c/deep.py"), frame("/nowhere.py")],
            ..Issue::default()
        };
        let ranked = rank_files(&lexical_evidence(&issue, &files, &[]), &Weights::default());
        let found: BTreeMap<&str, (f64, f64, f64)> = ranked
            .iter()
            .map(|f| {
                let x = &f.features;
                (f.path.as_str(), (x.mentions, x.frames, x.last_frame))
            })
            .collect();
        let expected: BTreeMap<&str, (f64, f64, f64)> = [
            ("pkg/core.py", (1.0, 0.0, 0.0)),
            ("src/pkg/util.py", (1.0, 0.0, 0.0)),
            ("util.py", (1.0, 0.0, 0.0)),
            // Both files are the frame's; the deeper path is its file.
            ("a/b/c/deep.py", (0.0, 1.0, 1.0)),
            ("b/c/deep.py", (0.0, 1.0, 0.0)),
            // `mod.sub.func`: the longest module prefix is `mod.sub`; `mod.other` only `mod`,
            // one part, not a mention.
            ("mod/sub.py", (1.0, 0.0, 0.0)),
        ]
        .into_iter()
        .collect();
        assert_eq!(found, expected);
    }

    /// The title's whole-file scores: over the best candidate source among them, for the files
    /// another signal touched (no new candidates), never for tests; the weight adds them to the
    /// score.
    #[test]
    fn title_over_whole_files() {
        let files: Vec<FileEntry> = ["src/a.py", "src/b.py", "src/c.py", "tests/test_a.py"]
            .iter()
            .map(|p| FileEntry::new(*p, 10))
            .collect();
        let hit = |path: &str, score: f64| SearchHit::new(path, 1, 10, score);
        // `src/c.py` has no other evidence; the test file scores best of all.
        let hits = [
            hit("src/a.py", 1.0),
            hit("src/b.py", 1.0),
            hit("tests/test_a.py", 1.0),
        ];
        let title_files = [
            hit("tests/test_a.py", 8.0),
            hit("src/c.py", 6.0),
            hit("src/b.py", 4.0),
            hit("src/a.py", 2.0),
        ];
        let issue = Issue::default();
        let evidence = Evidence {
            title_files: &title_files,
            ..lexical_evidence(&issue, &files, &hits)
        };
        let found = feature_by_path(&evidence, |f| f.title_file_lexical);
        assert_eq!(
            found,
            [
                ("src/a.py".to_string(), 0.5),
                ("src/b.py".to_string(), 1.0),
                ("tests/test_a.py".to_string(), 0.0)
            ]
        );
        assert_weight_adds_feature(
            &evidence,
            |w, x| w.title_file_lexical = x,
            |f| f.title_file_lexical,
        );
    }

    /// A library bundled with its own licence (jq's `src/decNumber/`) is vendored: it takes the
    /// vendor penalty and says so; the project's own files under the same root do not.
    #[test]
    fn a_bundled_library_is_vendored() {
        let rank_of = |paths: &[&str]| {
            let files: Vec<FileEntry> = paths
                .iter()
                .map(|p| FileEntry::new(*p, 10).with_language("c"))
                .collect();
            let hits: Vec<SearchHit> = [
                "src/jv.c",
                "src/decNumber/decNumber.c",
                "src/decNumberish.c",
            ]
            .iter()
            .map(|p| SearchHit::new(*p, 1, 10, 1.0))
            .collect();
            let issue = Issue::default();
            rank_files(
                &lexical_evidence(&issue, &files, &hits),
                &Weights::default(),
            )
        };
        let plain = [
            "COPYING",
            "src/jv.c",
            "src/decNumber/decNumber.c",
            "src/decNumberish.c",
        ];
        let mut bundled = plain.to_vec();
        bundled.push("src/decNumber/ICU-license.html");
        let (before, after) = (rank_of(&plain), rank_of(&bundled));
        let get = |ranked: &[RankedFile], path: &str| -> (bool, f64) {
            let f = ranked.iter().find(|f| f.path == path).unwrap();
            (f.vendored, f.score)
        };
        let penalty = Weights::default().vendor_penalty;
        let copy = "src/decNumber/decNumber.c";
        assert!(!get(&before, copy).0);
        assert!(get(&after, copy).0);
        assert!((get(&before, copy).1 - get(&after, copy).1 - penalty).abs() < 1e-9);
        for own in ["src/jv.c", "src/decNumberish.c"] {
            assert_eq!(get(&before, own), get(&after, own), "{own}");
            assert!(!get(&after, own).0);
        }
    }

    /// The title's rare words: each touched source gets the rarest word it holds, over the best
    /// such source's; files no other signal touched and tests get nothing; the weight adds
    /// weight × value to the score.
    #[test]
    fn title_rare_words_give_the_rarest_word_held() {
        let files: Vec<FileEntry> = [
            "src/a.py",
            "src/b.py",
            "src/c.py",
            "src/d.py",
            "tests/test_a.py",
        ]
        .iter()
        .map(|p| FileEntry::new(*p, 10))
        .collect();
        let hits: Vec<SearchHit> = ["src/a.py", "src/b.py", "src/c.py", "tests/test_a.py"]
            .iter()
            .map(|p| SearchHit::new(*p, 1, 10, 1.0))
            .collect();
        let word = |idf: f64, files: &[&str]| RareWord {
            word: format!("w{idf}"),
            idf,
            files: files.iter().map(|f| f.to_string()).collect(),
        };
        // `src/a.py` holds both words (the rarer counts); `src/d.py` holds the rarest but no
        // signal touched it; the test holds it too.
        let rare = [
            word(4.0, &["src/d.py", "tests/test_a.py"]),
            word(2.0, &["src/a.py", "src/b.py"]),
            word(1.0, &["src/a.py", "src/c.py"]),
        ];
        let issue = Issue::default();
        let evidence = Evidence {
            title_rare_words: &rare,
            ..lexical_evidence(&issue, &files, &hits)
        };
        let found = feature_by_path(&evidence, |f| f.title_rare_words);
        assert_eq!(
            found,
            [
                ("src/a.py".to_string(), 1.0),
                ("src/b.py".to_string(), 1.0),
                ("src/c.py".to_string(), 0.5),
                ("tests/test_a.py".to_string(), 0.0)
            ]
        );
        assert_weight_adds_feature(
            &evidence,
            |w, x| w.title_rare_words = x,
            |f| f.title_rare_words,
        );
    }

    /// Each ranked file's `feature` (default weights), by path.
    fn feature_by_path(
        evidence: &Evidence<'_>,
        feature: fn(&Features) -> f64,
    ) -> Vec<(String, f64)> {
        let mut found: Vec<(String, f64)> = rank_files(evidence, &Weights::default())
            .into_iter()
            .map(|f| (f.path, feature(&f.features)))
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0));
        found
    }

    /// Setting a signal's weight (`set`) to 3 instead of 0 adds exactly 3 × its feature to every
    /// file's score.
    fn assert_weight_adds_feature(
        evidence: &Evidence<'_>,
        set: fn(&mut Weights, f64),
        feature: fn(&Features) -> f64,
    ) {
        let scores = |weight: f64| {
            let mut weights = Weights::default();
            set(&mut weights, weight);
            let mut ranked: Vec<(String, f64, f64)> = rank_files(evidence, &weights)
                .into_iter()
                .map(|f| (f.path, feature(&f.features), f.score))
                .collect();
            ranked.sort_by(|a, b| a.0.cmp(&b.0));
            ranked
        };
        let (without, with) = (scores(0.0), scores(3.0));
        assert_eq!(without.len(), with.len());
        for ((path, _, before), (_, value, after)) in without.iter().zip(&with) {
            assert!((after - before - 3.0 * value).abs() < 1e-9, "{path}");
        }
    }

    /// A Python stub beside its module is left out and does not count as a second definer of a
    /// name; a stub without a module beside it (a compiled extension's) stays a candidate.
    #[test]
    fn python_stubs_beside_their_modules_are_no_candidates() {
        let symbols_of = |paths: &[&str]| -> BTreeMap<String, f64> {
            let files: Vec<FileEntry> = paths
                .iter()
                .map(|p| FileEntry::new(*p, 10).with_language("python"))
                .collect();
            let definitions = vec![(
                "set_xlim".to_owned(),
                paths
                    .iter()
                    .filter(|p| p.starts_with("lib/axes"))
                    .map(|p| DefinitionEntry::new(*p, "set_xlim", "Axes.set_xlim", "method", 1, 2))
                    .collect(),
            )];
            let issue = Issue::default();
            let evidence = Evidence {
                definitions: &definitions,
                ..lexical_evidence(&issue, &files, &[])
            };
            rank_files(&evidence, &Weights::default())
                .into_iter()
                .map(|f| (f.path, f.features.symbols))
                .collect()
        };
        let alone = symbols_of(&["lib/axes.py", "lib/ext.pyi", "lib/other.py"]);
        let with_stub = symbols_of(&["lib/axes.py", "lib/axes.pyi", "lib/ext.pyi", "lib/other.py"]);
        assert!(!with_stub.contains_key("lib/axes.pyi"));
        assert!(alone["lib/axes.py"] > 0.0);
        assert_eq!(with_stub["lib/axes.py"], alone["lib/axes.py"]);
        let files = [
            FileEntry::new("lib/axes.py", 10).with_language("python"),
            FileEntry::new("lib/axes.pyi", 10).with_language("python"),
            FileEntry::new("lib/ext.pyi", 10).with_language("python"),
        ];
        let candidates = Candidates::of(&files);
        assert!(candidates.contains("lib/axes.py"));
        assert!(!candidates.contains("lib/axes.pyi"));
        assert!(candidates.contains("lib/ext.pyi"));
    }

    /// Code in a language the engine does not parse is a candidate like parsed code; data is not.
    #[test]
    fn candidates_include_source_without_a_grammar() {
        for (path, language, expected) in [
            ("src/builtin.c", Some("c"), true),
            ("src/builtin.jq", None, true),
            ("src/parser.y", None, true),
            ("setup.cfg", None, true),
            ("docs/content/manual/manual.yml", None, false),
            ("tests/data/sample.json", None, false),
            ("assets/logo.png", None, false),
        ] {
            let mut file = FileEntry::new(path, 10);
            if let Some(language) = language {
                file = file.with_language(language);
            }
            assert_eq!(is_candidate(&file), expected, "{path}");
        }
    }

    #[test]
    fn vendored_paths() {
        for (path, expected) in [
            ("sphinx/themes/basic/static/underscore-1.13.1.js", true),
            ("web/app.min.js", true),
            ("src/vendor/lib.go", true),
            ("pip/_vendor/requests/models.py", true),
            ("third_party/zlib/inflate.c", true),
            ("sphinx/themes/basic/static/searchtools.js", false),
            ("sphinx/builders/html/__init__.py", false),
            ("lib/vendors.py", false),
            ("dist/zod.min.js", true),
            ("single_include/nlohmann/json.hpp", true),
            ("Cargo.lock", true),
            (".github/ISSUE_TEMPLATE/feature_request.md", true),
            ("contrib/adaptive-compression/adapt.c", true),
            ("django/contrib/auth/models.py", false),
        ] {
            assert_eq!(is_vendored_path(path), expected, "{path}");
        }
    }

    #[test]
    fn test_paths_by_convention() {
        for (path, expected) in [
            ("astropy/modeling/tests/test_separable.py", true),
            ("testing/test_capture.py", true),
            ("tests/backends/sqlite/tests.py", true),
            ("src/foo_test.go", true),
            ("web/app.spec.ts", true),
            ("src/main/java/FooTest.java", true),
            ("sklearn/utils/_testing.py", false),
            ("src/_pytest/capture.py", false),
            ("django/test/utils.py", true),
        ] {
            assert_eq!(is_test_path(path), expected, "{path}");
        }
    }

    #[test]
    fn module_paths() {
        assert_eq!(module_path("a/b/c.py").as_deref(), Some("a.b.c"));
        assert_eq!(module_path("a/b/__init__.py").as_deref(), Some("a.b"));
        assert_eq!(module_path("a/b/c.rs"), None);
    }

    #[test]
    fn lexical_aggregation_decays() {
        let hit = |p: &str, s: f64| SearchHit::new(p, 1, 2, s);
        let agg = aggregate_lexical(&[hit("a", 10.0), hit("b", 8.0), hit("b", 6.0), hit("a", 2.0)]);
        assert_eq!(agg["a"], 11.0);
        assert_eq!(agg["b"], 11.0);
    }
}
