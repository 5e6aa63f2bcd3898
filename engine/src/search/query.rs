//! What a short search query asks for: its kind, its words, the identifiers in it, and whether it
//! asks for tests or documentation.
//!
//! Kinds ([`QueryKind`]):
//! - **symbol**: a single identifier, possibly qualified (`HttpClient`, `flat_hash_map`,
//!   `Rack::Response`, `absl::Status`, `Q`);
//! - **architecture**: a question about how the code is organised or behaves (`how are routes
//!   registered`, `where does the session expire`);
//! - **semantic**: any other description (`retry backoff with jitter`).
//!
//! Terms are the query's identifier-like runs (`[A-Za-z_][A-Za-z0-9_]*` joined by `::`, `.`,
//! `->` or `\`); each is classified by how much it looks like code ([`TermShape`]), which says how
//! strongly a definition of that name should count. Nothing here knows about an index.

use serde::{Deserialize, Serialize};
use std::sync::LazyLock;
use swex_issue::words::names_code;
use swex_text::stopwords::StopList;

use regex::Regex;

/// What kind of question a query is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryKind {
    Symbol,
    Semantic,
    Architecture,
}

impl QueryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            QueryKind::Symbol => "symbol",
            QueryKind::Semantic => "semantic",
            QueryKind::Architecture => "architecture",
        }
    }
}

/// How code-like a term is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TermShape {
    /// A lowercase word (`session`, `retry`).
    Word,
    /// A capitalised word (`Column`, `Request`): a type name or the start of a sentence.
    Capitalised,
    /// Unmistakably code: written like code (`swex_issue::words::is_code_like`: `camelCase`,
    /// `PascalCase` with a hump, `snake_case`, letters with digits), an acronym (`HTTP`),
    /// qualified (`a::b`, `a.b`), or the whole of a one-term query.
    Code,
}

/// One identifier-like term of a query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Term {
    /// As written (`absl::Status`).
    pub text: String,
    /// Its last component (`Status`): what definitions are named.
    pub name: String,
    /// The components before it (`absl`), if qualified.
    pub qualifier: Vec<String>,
    pub shape: TermShape,
    /// A stop word (`the`, `how`): it does not search.
    pub stop: bool,
}

/// The analysis of one query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryInfo {
    pub text: String,
    pub kind: QueryKind,
    pub terms: Vec<Term>,
    /// The query mentions tests (`test`, `tests`, `spec`, `testing`, ...): test files are not
    /// demoted.
    pub wants_tests: bool,
    /// The query mentions documentation or examples: those are not demoted.
    pub wants_docs: bool,
}

static TERM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:::|->|\.|\\)[A-Za-z_][A-Za-z0-9_]*)*")
        .expect("valid regex")
});

/// Words that open a question about behaviour or structure.
const QUESTION_WORDS: [&str; 8] = [
    "how", "where", "what", "which", "why", "when", "who", "does",
];

const TEST_WORDS: [&str; 7] = [
    "test", "tests", "testing", "spec", "specs", "unittest", "fixture",
];

const DOC_WORDS: [&str; 9] = [
    "doc",
    "docs",
    "documentation",
    "readme",
    "example",
    "examples",
    "tutorial",
    "guide",
    "changelog",
];

/// Stop words of short code queries ([`StopList::ShortQuery`]): English function words and
/// question words. Code keywords (`class`, `function`) are *not* stop words here: in a short
/// query they are deliberate.
fn is_stop_word(word: &str) -> bool {
    StopList::ShortQuery.contains(word)
}

/// A term's shape: code if written like code or an acronym ([`names_code`]: `snake_case`,
/// `HTTP`, `X509`), qualified (`a.b`, `a::b`, `$a->b`), or the whole query.
fn shape_of(text: &str, alone: bool) -> TermShape {
    let qualified = text.contains("::") || text.contains('.') || text.contains("->");
    if qualified || alone || names_code(text) {
        TermShape::Code
    } else if text.starts_with(|c: char| c.is_ascii_uppercase()) {
        TermShape::Capitalised
    } else {
        TermShape::Word
    }
}

/// Analyses a query.
pub fn analyze_query(text: &str) -> QueryInfo {
    let text = text.trim();
    let found: Vec<&str> = TERM.find_iter(text).map(|m| m.as_str()).collect();
    // One term and nothing but punctuation around it: a symbol lookup.
    let alone = found.len() == 1
        && text
            .chars()
            .filter(|c| !c.is_whitespace())
            .count()
            .saturating_sub(found[0].len())
            <= 2;
    let terms: Vec<Term> = found
        .iter()
        .map(|&t| {
            let parts: Vec<&str> = t
                .split("::")
                .flat_map(|p| p.split("->"))
                .flat_map(|p| p.split('\\'))
                .flat_map(|p| p.split('.'))
                .filter(|p| !p.is_empty())
                .collect();
            let name = parts.last().copied().unwrap_or(t).to_string();
            let lower = t.to_ascii_lowercase();
            Term {
                text: t.to_string(),
                qualifier: parts[..parts.len().saturating_sub(1)]
                    .iter()
                    .map(|p| p.to_string())
                    .collect(),
                name,
                shape: shape_of(t, alone),
                stop: !alone && is_stop_word(&lower),
            }
        })
        .collect();
    let lower_words: Vec<String> = terms.iter().map(|t| t.text.to_ascii_lowercase()).collect();
    let first = lower_words.first().map(String::as_str).unwrap_or("");
    let kind = if alone {
        QueryKind::Symbol
    } else if QUESTION_WORDS.contains(&first) {
        QueryKind::Architecture
    } else {
        QueryKind::Semantic
    };
    QueryInfo {
        text: text.to_string(),
        kind,
        wants_tests: lower_words.iter().any(|w| TEST_WORDS.contains(&w.as_str())),
        wants_docs: lower_words.iter().any(|w| DOC_WORDS.contains(&w.as_str())),
        terms,
    }
}

impl QueryInfo {
    /// The terms that search (not stop words).
    pub fn search_terms(&self) -> impl Iterator<Item = &Term> {
        self.terms.iter().filter(|t| !t.stop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(query: &str, kind: QueryKind, terms: &[(&str, TermShape, bool)]) {
        let info = analyze_query(query);
        assert_eq!(info.kind, kind, "{query}");
        let got: Vec<(&str, TermShape, bool)> = info
            .terms
            .iter()
            .map(|t| (t.text.as_str(), t.shape, t.stop))
            .collect();
        assert_eq!(got, terms, "{query}");
    }

    #[test]
    fn kinds_and_term_shapes() {
        use QueryKind::*;
        use TermShape::*;
        check("HttpClient", Symbol, &[("HttpClient", Code, false)]);
        check("Q", Symbol, &[("Q", Code, false)]);
        check("session", Symbol, &[("session", Code, false)]);
        check(
            "  `Rack::Response` ",
            Symbol,
            &[("Rack::Response", Code, false)],
        );
        check(
            "how are routes registered",
            Architecture,
            &[
                ("how", Word, true),
                ("are", Word, true),
                ("routes", Word, false),
                ("registered", Word, false),
            ],
        );
        check(
            "Column definition and column types in Exposed",
            Semantic,
            &[
                ("Column", Capitalised, false),
                ("definition", Word, false),
                ("and", Word, true),
                ("column", Word, false),
                ("types", Word, false),
                ("in", Word, true),
                ("Exposed", Capitalised, false),
            ],
        );
        check(
            "absl::Status and StatusOr for ABSL_LOG",
            Semantic,
            &[
                ("absl::Status", Code, false),
                ("and", Word, true),
                ("StatusOr", Code, false),
                ("for", Word, true),
                ("ABSL_LOG", Code, false),
            ],
        );
        check(
            "how optional fields use (.:?) with a default via .refine",
            Architecture,
            &[
                ("how", Word, true),
                ("optional", Word, false),
                ("fields", Word, false),
                ("use", Word, false),
                ("with", Word, true),
                ("a", Word, true),
                ("default", Word, false),
                ("via", Word, true),
                ("refine", Word, false),
            ],
        );
        let info = analyze_query("absl::Status");
        assert_eq!(info.terms[0].name, "Status");
        assert_eq!(info.terms[0].qualifier, vec!["absl".to_string()]);
    }

    #[test]
    fn tests_and_docs_are_asked_for_by_name() {
        assert!(analyze_query("tests of the retry logic").wants_tests);
        assert!(!analyze_query("retry logic").wants_tests);
        assert!(analyze_query("examples of middleware").wants_docs);
    }
}
