//! The parser: an issue text into [`IssueClues`] and the weighted query terms of lexical search.
//!
//! [`parse`] reads the issue's body as it renders, without its environment listings
//! ([`crate::environment::issue_as_read`]; a one-line query is read as written), and in it, in
//! order of first appearance:
//! - **traceback frames** ([`crate::frames`]);
//! - **file paths** (`foo/bar.py`, `bar.py`, `django/contrib/admin`; [`crate::paths`]), also as
//!   normalised hints (`site-packages/` prefixes, leading `/` and `./` removed);
//! - **identifiers** that look like code ([`crate::words::is_code_like`]): `CamelCase`,
//!   `snake_case`, `dotted.names`, `module::paths`, `calls(`;
//! - **code spans**: Markdown fenced blocks and backtick spans, reST ``literals``
//!   ([`crate::markup::fenced_blocks`], [`crate::markup::inline_code_spans`]);
//! - **weighted terms** for lexical search: every word that is not a stop word, prose words
//!   down-weighted relative to code-like tokens, repeated terms up-weighted (logarithmically).
//!
//! Words are runs of Unicode letters, digits and `_` (a word starts with a letter or `_`), so an
//! issue in Cyrillic or Greek gives terms as one in English does; lengths are counted in
//! characters. Chinese, Japanese and Korean write no space between words: a run of their
//! characters is a word of its own, set apart from the identifiers it touches
//! (`swex_text::identifiers::set_apart_cjk_runs`: `goctl生成代码` gives `goctl` and `生成代码`), and
//! counts as prose from two characters. Text without letters outside ASCII parses exactly as when
//! words were ASCII only.
//!
//! Work is linear in the text: every pass is one regex scan, de-duplication goes through hash
//! sets, and only the first [`IssueClues::MAX_LISTED`] entries of each list are kept (the terms
//! still count every word).
//!
//! The parser knows nothing about any index: terms are plain text which the engine's lexical
//! index analyses with its own analyser.

use crate::clues::{IssueClues, WeightedTerm};
use crate::environment::issue_as_read;
use crate::frames::extract_frames;
use crate::markup::{fenced_blocks, inline_code_spans, without_spans};
use crate::paths::{links_as_paths, looks_like_path};
use crate::words::{is_code_like, is_stop_word};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;
use swex_text::hints::normalize_path_hint;
use swex_text::identifiers::{is_cjk, set_apart_cjk_runs};
use swex_text::paths::{Extension, file_stem};

/// Weights of the term categories and the term cap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct QueryOptions {
    pub prose_weight: f32,
    pub code_weight: f32,
    pub path_weight: f32,
    pub frame_weight: f32,
    pub max_terms: usize,
}

impl Default for QueryOptions {
    fn default() -> Self {
        QueryOptions {
            prose_weight: 0.3,
            code_weight: 1.0,
            path_weight: 1.5,
            frame_weight: 2.0,
            max_terms: 96,
        }
    }
}

static WORD: LazyLock<Regex> = LazyLock::new(|| {
    // Identifier-ish words with dotted / `::` / path parts; a trailing `(` marks a call. No
    // capture group: a word cannot hold `(`, so a match ending in one is a call, and a pattern
    // without groups compiles in less than half the time (once per process, on every issue).
    Regex::new(r"[\p{Alphabetic}_][\w$-]*(?:(?:\.|::|/)[\p{Alphabetic}_0-9][\w$-]*)*\(?")
        .expect("valid regex")
});

/// [`parse_with`] with default options.
pub fn parse(text: &str) -> IssueClues {
    parse_with(text, &QueryOptions::default())
}

/// Reads the [`IssueClues`] of an issue text.
pub fn parse_with(text: &str, options: &QueryOptions) -> IssueClues {
    // The body as it renders: a template's HTML comments and the HTML tags around the text are
    // not the author's words, nor are its environment listings.
    let text = issue_as_read(text);
    let mut clues = Collector {
        frames: extract_frames(&text),
        ..Collector::default()
    };
    // `goctl生成代码的import包`: the identifiers of a Chinese or Japanese sentence are words of
    // their own.
    let text = set_apart_cjk_runs(&text);

    // URLs: only a file path inside a source-browser link is worth keeping.
    let mut prose = links_as_paths(&text).into_owned();

    // Code spans: everything inside counts as code.
    let blocks = fenced_blocks(&prose);
    let mut spans: Vec<String> = blocks
        .iter()
        .map(|block| prose[block.content.clone()].trim().to_string())
        .collect();
    let without_fences = without_spans(&prose, blocks.iter().map(|b| b.range.clone()));
    let inline = inline_code_spans(&without_fences);
    spans.extend(
        inline
            .iter()
            .map(|span| without_fences[span.content.clone()].trim().to_string()),
    );
    prose = without_spans(&without_fences, inline.iter().map(|s| s.range.clone()));

    let frames = std::mem::take(&mut clues.frames);
    for frame in &frames {
        clues.paths.push(&frame.path);
        // Windows frames write `\`; the stem is the file name's, without its last extension.
        let path = frame.path.replace('\\', "/");
        clues
            .terms
            .add_words(file_stem(&path, Extension::Last), options.frame_weight);
        if let Some(function) = &frame.function {
            clues.terms.add_identifier(function, options.frame_weight);
        }
    }
    clues.frames = frames;
    for span in &spans {
        collect_words(span, true, options, &mut clues);
    }
    collect_words(&prose, false, options, &mut clues);
    spans.truncate(IssueClues::MAX_LISTED);
    let mut frames = clues.frames;
    frames.truncate(IssueClues::MAX_LISTED);
    IssueClues {
        frames,
        paths: clues.paths.list,
        identifiers: clues.identifiers.list,
        code_spans: spans,
        terms: clues.terms.finish(options.max_terms),
    }
}

/// The clues under construction.
#[derive(Default)]
struct Collector {
    frames: Vec<crate::clues::Frame>,
    paths: UniqueList,
    identifiers: UniqueList,
    terms: TermCollector,
}

/// The first [`IssueClues::MAX_LISTED`] distinct strings, in order of first appearance.
#[derive(Default)]
struct UniqueList {
    list: Vec<String>,
    seen: HashSet<String>,
}

impl UniqueList {
    fn push(&mut self, item: &str) {
        if self.list.len() < IssueClues::MAX_LISTED && self.seen.insert(item.to_owned()) {
            self.list.push(item.to_owned());
        }
    }
}

/// Walks the words of `text`, classifying each as path, identifier or prose.
fn collect_words(text: &str, in_code: bool, options: &QueryOptions, clues: &mut Collector) {
    for whole in WORD.find_iter(text) {
        let is_call = whole.as_str().ends_with('(');
        let word = whole.as_str().trim_end_matches('(');
        let word = word.trim_end_matches(['.', '-', '/']);
        if word.is_empty() {
            continue;
        }
        // `response.json()` is a call, not a file.
        if !is_call && looks_like_path(word) {
            clues.paths.push(word);
            clues
                .terms
                .add_identifier(&normalize_path_hint(word), options.path_weight);
            continue;
        }
        // Slashes that are not a path ("and/or", "input/output") are just separators.
        for word in word.split('/').filter(|w| !w.is_empty()) {
            classify_word(word, in_code || is_call, options, clues);
        }
    }
}

fn classify_word(word: &str, in_code: bool, options: &QueryOptions, clues: &mut Collector) {
    let lower = word.to_lowercase();
    if is_stop_word(&lower) {
        return;
    }
    let code_like = is_code_like(word);
    if code_like || (in_code && word.chars().any(|c| c.is_alphabetic())) {
        if code_like {
            clues.identifiers.push(word);
        }
        clues.terms.add_identifier(word, options.code_weight);
    } else if char_count_at_least(word, prose_min_chars(word))
        && !word.chars().all(|c| c.is_ascii_digit())
    {
        clues.terms.add_words(word, options.prose_weight);
    }
}

/// The fewest characters of a prose word: three, or two in a script written without spaces
/// (`过期`, `错误`: most Chinese words are two characters).
fn prose_min_chars(word: &str) -> usize {
    if word.starts_with(is_cjk) { 2 } else { 3 }
}

/// Whether `word` has at least `n` characters (for ASCII, bytes).
fn char_count_at_least(word: &str, n: usize) -> bool {
    word.chars().nth(n - 1).is_some()
}

/// Accumulates weighted terms keyed by lower-cased text: the weight of a term is the largest
/// category weight it was seen with, times `1 + ln(occurrences)` (capped at 3×).
#[derive(Default)]
struct TermCollector {
    /// Lower-cased text → (order of first appearance, text as first written, weight, count).
    terms: HashMap<String, (usize, String, f32, u32)>,
    next_order: usize,
}

impl TermCollector {
    fn add_identifier(&mut self, text: &str, weight: f32) {
        let text = text.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        if text.is_empty() {
            return;
        }
        self.add(text, weight);
    }

    /// Adds each plain word of `text` (used for prose and file stems).
    fn add_words(&mut self, text: &str, weight: f32) {
        for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !char_count_at_least(word, 2) {
                continue;
            }
            let lower = word.to_lowercase();
            if !is_stop_word(&lower) {
                self.add(word, weight);
            }
        }
    }

    fn add(&mut self, text: &str, weight: f32) {
        let key = text.to_lowercase();
        let order = self.next_order;
        let entry = self
            .terms
            .entry(key)
            .or_insert_with(|| (order, text.to_string(), weight, 0));
        if entry.3 == 0 {
            self.next_order += 1;
        }
        entry.2 = entry.2.max(weight);
        entry.3 += 1;
    }

    fn finish(self, max_terms: usize) -> Vec<WeightedTerm> {
        let mut terms: Vec<(usize, WeightedTerm)> = self
            .terms
            .into_values()
            .map(|(order, text, weight, count)| {
                let factor = (1.0 + (count as f32).ln()).min(3.0);
                (order, WeightedTerm::new(text, weight * factor))
            })
            .collect();
        terms.sort_by(|a, b| b.1.weight.total_cmp(&a.1.weight).then(a.0.cmp(&b.0)));
        terms.truncate(max_terms);
        terms.into_iter().map(|(_, term)| term).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term_texts(clues: &IssueClues) -> Vec<&str> {
        clues.terms.iter().map(|t| t.text.as_str()).collect()
    }

    fn weight(clues: &IssueClues, text: &str) -> Option<f32> {
        clues
            .terms
            .iter()
            .find(|t| t.text == text)
            .map(|t| t.weight)
    }

    #[test]
    fn identifiers_paths_and_spans() {
        let clues = parse(
            "When calling `QuerySet.bulk_create()` on a model, django/db/models/query.py fails. \
             The get_or_create method and myVar are fine, also see models.py and \
             https://github.com/django/django/blob/main/django/db/utils.py#L10. \
             Use crate::io::Read too, e.g. this.",
        );
        assert_eq!(clues.code_spans, vec!["QuerySet.bulk_create()"]);
        assert_eq!(
            clues.paths,
            vec![
                "django/db/models/query.py",
                "models.py",
                "django/db/utils.py"
            ]
        );
        assert_eq!(
            clues.identifiers,
            vec![
                "QuerySet.bulk_create",
                "get_or_create",
                "myVar",
                "crate::io::Read"
            ]
        );
        let texts = term_texts(&clues);
        // Code-like terms outweigh prose; stop words are gone.
        assert!(weight(&clues, "get_or_create").unwrap() > weight(&clues, "calling").unwrap());
        assert!(
            !texts
                .iter()
                .any(|t| t.eq_ignore_ascii_case("the") || *t == "e.g")
        );
        assert!(weight(&clues, "django/db/models/query.py").unwrap() >= 1.5);
    }

    #[test]
    fn a_word_called_is_code_not_a_file() {
        let clues = parse("then response.json() fails, and tally(x) too; see setup.py");
        assert_eq!(clues.paths, vec!["setup.py"]);
        assert!(clues.identifiers.iter().any(|i| i == "response.json"));
        // A call in prose is code: `tally` weighs as an identifier, not as a prose word.
        assert!(weight(&clues, "tally").unwrap() > weight(&clues, "fails").unwrap());
    }

    #[test]
    fn repeated_terms_weigh_more() {
        let clues = parse("migration migration migration squash");
        assert!(weight(&clues, "migration") > weight(&clues, "squash"));
        assert!(weight(&clues, "migration").unwrap() <= 3.0 * QueryOptions::default().prose_weight);
    }

    #[test]
    fn frames_feed_terms() {
        let clues = parse(
            "Traceback:\n  File \"/x/site-packages/django/forms/formsets.py\", line 5, in full_clean\n",
        );
        assert_eq!(clues.frames.len(), 1);
        // The frame's file stem and function lead the terms.
        let mut top: Vec<&str> = term_texts(&clues)[0..2].to_vec();
        top.sort();
        assert_eq!(top, ["formsets", "full_clean"]);
        // The traceback path enters as a repository-relative hint, not with its prefix.
        assert!(term_texts(&clues).contains(&"django/forms/formsets.py"));
    }

    /// A frame's file gives its name without the last extension; a dot file's name is all stem
    /// (`.pythonrc` gives `pythonrc`), and a Windows path its last component.
    #[test]
    fn frame_files_give_their_stem() {
        for (frame_path, stem) in [
            ("/home/u/.pythonrc", "pythonrc"),
            ("C:\\proj\\app\\views.py", "views"),
        ] {
            let clues = parse(&format!(
                "Traceback:\n  File \"{frame_path}\", line 5, in run_it\n"
            ));
            assert_eq!(clues.frames.len(), 1, "{frame_path}");
            // At the frame's weight, not only as a word of the prose around it.
            assert!(
                weight(&clues, stem) >= Some(QueryOptions::default().frame_weight),
                "{frame_path}: {:?}",
                clues.terms
            );
        }
    }

    /// Words in any alphabet are terms: prose of three letters or more (two in Chinese, Japanese
    /// and Korean), code spans whole; shorter words are dropped as in English.
    #[test]
    fn unicode_words_are_terms() {
        let check = |text: &str, expected: &[&str]| {
            let clues = parse(text);
            let mut texts = term_texts(&clues);
            texts.sort();
            assert_eq!(texts, expected, "terms of {text:?}");
        };
        check(
            "Ошибка в функции обработать_данные: да",
            &["Ошибка", "обработать_данные", "функции"],
        );
        check(
            "Η συνάρτηση `υπολογισμός` αποτυγχάνει",
            &["αποτυγχάνει", "συνάρτηση", "υπολογισμός"],
        );
        check(
            "データベース接続に失敗しました",
            &["データベース接続に失敗しました"],
        );
        // Identifiers inside a sentence without spaces are words of their own; a two-character
        // Chinese word is a term.
        check(
            "goctl生成代码的import包路径错误",
            &["goctl", "包路径错误", "生成代码的"],
        );
        check(
            "jwt过期 返回cors错误",
            &["cors", "jwt", "过期", "返回", "错误"],
        );
        assert_eq!(
            parse("调用`rest.WithCors`后 WithJwt过期").identifiers,
            ["rest.WithCors", "WithJwt"]
        );
        check("ℤ π café", &["café"]);
        assert_eq!(
            parse("обработать_данные").identifiers,
            ["обработать_данные"]
        );
    }

    /// A 5 MB issue of distinct identifiers and paths: the lists stop at their cap and the terms
    /// at `max_terms`. Comparing each new path and identifier with every one listed before
    /// (`Vec::contains`) and every frame with every frame would be quadratic: this input would
    /// not finish in minutes. Its speed is measured by this crate's `parse` benchmark.
    #[test]
    fn huge_issues_are_bounded() {
        let mut text = String::with_capacity(5 << 20);
        let mut n = 0u32;
        while text.len() < 5 << 20 {
            text.push_str(&format!(
                "pkg{n}/module_{n}.py:{} calls handler_{n}() and `Value{n}Error`\n",
                n % 997 + 1
            ));
            n += 1;
        }
        let clues = parse(&text);
        assert_eq!(clues.frames.len(), IssueClues::MAX_LISTED);
        assert_eq!(clues.paths.len(), IssueClues::MAX_LISTED);
        assert_eq!(clues.identifiers.len(), IssueClues::MAX_LISTED);
        assert_eq!(clues.code_spans.len(), IssueClues::MAX_LISTED);
        assert_eq!(clues.terms.len(), QueryOptions::default().max_terms);
        assert_eq!(clues.paths[0], "pkg0/module_0.py");
        // The frames' file stems weigh most; ties keep the order of first appearance.
        assert_eq!(clues.terms[0], WeightedTerm::new("module_0", 2.0));
        assert_eq!(clues.terms[95], WeightedTerm::new("module_95", 2.0));
    }
}
