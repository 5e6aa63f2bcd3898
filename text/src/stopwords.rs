//! Stop words: words too common to discriminate, as one home for every list swex uses.
//!
//! The lists differ on purpose, and each is a named [`StopList`]: what a word costs depends on
//! what the text is and what the words are for.
//! - [`StopList::IssueProse`]: the issue parser's lexical terms (`swex-issue`) — English
//!   function words, words of issue prose (`please`, `thanks`), and the code keywords that match
//!   nearly every chunk of their language (`self`, `def`, `return`).
//! - [`StopList::IssueRanking`]: the `swex` explorer's reading of an issue, which keeps words of
//!   three letters or more only — English words and the vocabulary of bug reports and tracebacks
//!   (`bug`, `expected`, `traceback`, `site`, `packages`, `usr`), which would otherwise point at
//!   files named like them.
//! - [`StopList::IssueNames`]: the `graph` explorer's seeds, code-like words only — the names
//!   every program has (`self`, `isinstance`, `ValueError`, `undefined`), which would seed
//!   nothing of the repository's own.
//! - [`StopList::ShortQuery`]: short code-search queries — English function and question words
//!   only: in a short query `class` or `function` is deliberate.
//! - [`StopList::TermWeighting`]: the `tfidf` explorer's cosines — English and code words that
//!   are frequent in every chunk (`def`, `self`, `py`).
//!
//! Every list holds lower-case words; [`StopList::contains`] takes a lower-cased word. (The
//! reference baseline `tfidf-ref` keeps scikit-learn's list with that explorer: it is the
//! reference's data, not a choice of swex's.)

/// Which stop words (see the module overview for why they differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopList {
    /// The issue parser's lexical terms.
    IssueProse,
    /// The `swex` explorer's reading of an issue.
    IssueRanking,
    /// The `graph` explorer's seeds.
    IssueNames,
    /// Short code-search queries.
    ShortQuery,
    /// The `tfidf` explorer's term weighting.
    TermWeighting,
}

impl StopList {
    /// The words of this list, lower case.
    pub fn words(self) -> &'static [&'static str] {
        match self {
            StopList::IssueProse => ISSUE_PROSE,
            StopList::IssueRanking => ISSUE_RANKING,
            StopList::IssueNames => ISSUE_NAMES,
            StopList::ShortQuery => SHORT_QUERY,
            StopList::TermWeighting => TERM_WEIGHTING,
        }
    }

    /// Whether the lower-cased `word` is a stop word of this list.
    pub fn contains(self, word_lower: &str) -> bool {
        self.words().contains(&word_lower)
    }
}

const ISSUE_PROSE: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
    "but", "by", "can", "cannot", "could", "did", "do", "does", "doing", "don", "down", "during",
    "each", "else", "etc", "even", "ever", "every", "few", "for", "from", "further", "get", "gets",
    "got", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how",
    "however", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "let", "like", "ll",
    "may", "me", "might", "more", "most", "much", "must", "my", "need", "needs", "no", "nor",
    "not", "now", "of", "off", "on", "once", "one", "only", "or", "other", "our", "ours", "out",
    "over", "own", "per", "please", "quite", "rather", "re", "really", "same", "see", "seems",
    "she", "should", "since", "so", "some", "still", "such", "than", "that", "the", "their",
    "theirs", "them", "then", "there", "these", "they", "this", "those", "though", "through",
    "thus", "to", "too", "under", "until", "up", "upon", "us", "use", "used", "using", "ve",
    "very", "via", "was", "we", "well", "were", "what", "when", "where", "whether", "which",
    "while", "who", "whom", "why", "will", "with", "within", "without", "would", "yet", "you",
    "your", "yours", "self", "def", "return", "import", "class", "none", "true", "false", "null",
    "nil", "var", "const", "function", "elif", "pass", "try", "except", "raise", "lambda",
    "thanks", "hi", "hello", "e.g", "i.e",
];

const ISSUE_RANKING: &[&str] = &[
    "the",
    "and",
    "for",
    "not",
    "but",
    "with",
    "this",
    "that",
    "from",
    "are",
    "was",
    "when",
    "which",
    "would",
    "should",
    "can",
    "have",
    "has",
    "use",
    "using",
    "used",
    "does",
    "get",
    "set",
    "none",
    "true",
    "false",
    "self",
    "return",
    "def",
    "class",
    "import",
    "new",
    "all",
    "any",
    "some",
    "more",
    "like",
    "also",
    "there",
    "then",
    "than",
    "these",
    "those",
    "such",
    "into",
    "only",
    "just",
    "what",
    "how",
    "why",
    "where",
    "who",
    "way",
    "make",
    "made",
    "may",
    "might",
    "will",
    "could",
    "here",
    "see",
    "file",
    "line",
    "code",
    "example",
    "error",
    "bug",
    "issue",
    "problem",
    "expected",
    "behavior",
    "behaviour",
    "actual",
    "result",
    "results",
    "output",
    "input",
    "value",
    "values",
    "following",
    "case",
    "cases",
    "work",
    "works",
    "working",
    "version",
    "python",
    "print",
    "test",
    "tests",
    "traceback",
    "recent",
    "call",
    "last",
    "most",
    "raise",
    "raises",
    "lib",
    "site",
    "packages",
    "usr",
    "local",
    "home",
    "users",
    "you",
    "your",
    "our",
    "its",
    "one",
    "two",
    "out",
    "now",
    "want",
    "need",
    "instead",
    "because",
    "same",
    "other",
    "each",
    "both",
    "either",
    "well",
    "still",
    "already",
    "however",
    "though",
    "thanks",
    "please",
    "seems",
    "seem",
    "think",
    "know",
    "got",
    "let",
    "lets",
    "being",
    "been",
    "were",
    "them",
    "they",
    "their",
    "his",
    "her",
    "she",
    "him",
    "own",
    "yes",
    "via",
    "per",
];

const ISSUE_NAMES: &[&str] = &[
    "self",
    "cls",
    "none",
    "true",
    "false",
    "print",
    "len",
    "str",
    "int",
    "float",
    "dict",
    "list",
    "tuple",
    "set",
    "type",
    "object",
    "super",
    "isinstance",
    "range",
    "return",
    "import",
    "from",
    "def",
    "class",
    "lambda",
    "yield",
    "raise",
    "except",
    "exception",
    "valueerror",
    "typeerror",
    "keyerror",
    "attributeerror",
    "indexerror",
    "runtimeerror",
    "assert",
    "args",
    "kwargs",
    "this",
    "null",
    "undefined",
    "function",
    "var",
    "let",
    "const",
    "new",
    "e.g",
    "i.e",
    "etc",
    "traceback",
    "file",
    "line",
    "error",
    "http",
    "https",
    "www",
    "com",
    "github",
];

const SHORT_QUERY: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "before", "between", "both", "but", "by", "can", "do", "does", "each", "for", "from", "get",
    "gets", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "of", "on", "or",
    "out", "over", "should", "so", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "those", "to", "up", "via", "was", "what", "when", "where", "which", "with",
    "why", "who", "we", "you", "our", "my",
];

const TERM_WEIGHTING: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from",
    "has", "have", "if", "in", "into", "is", "it", "its", "not", "of", "on", "or", "so", "such",
    "that", "the", "their", "then", "there", "these", "this", "to", "was", "when", "which",
    "while", "will", "with", "would", "should", "could", "we", "i", "you", "he", "she", "they",
    "them", "me", "my", "our", "your", "what", "how", "why", "also", "just", "only", "like", "def",
    "self", "return", "none", "true", "false", "import", "class", "py",
];

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [StopList; 5] = [
        StopList::IssueProse,
        StopList::IssueRanking,
        StopList::IssueNames,
        StopList::ShortQuery,
        StopList::TermWeighting,
    ];

    #[test]
    fn lists_are_lower_case_without_repeats() {
        for list in ALL {
            let words = list.words();
            for (i, w) in words.iter().enumerate() {
                assert_eq!(*w, w.to_lowercase(), "{list:?}: {w}");
                assert!(!words[..i].contains(w), "{list:?} repeats {w}");
            }
        }
    }

    /// The differences the lists exist for, one row each: (word, prose, ranking, names, query,
    /// tfidf).
    #[test]
    fn the_lists_differ_where_their_uses_do() {
        let cases: &[(&str, [bool; 5])] = &[
            // English function words: stop words everywhere but among code-like names.
            ("the", [true, true, false, true, true]),
            ("why", [true, true, false, true, true]),
            // Short words: the explorer's reading drops them by length, not by list.
            ("if", [true, false, false, true, true]),
            // Code keywords: noise in issue terms, names and cosines, deliberate in a short query.
            ("class", [true, true, true, false, true]),
            ("function", [true, false, true, false, false]),
            // Issue boilerplate: not a word of a short query or of code.
            ("please", [true, true, false, false, false]),
            // Bug-report and traceback vocabulary: the explorer's reading and the names drop it.
            ("traceback", [false, true, true, false, false]),
            ("expected", [false, true, false, false, false]),
            // Names every program has: only among the names, where they would be seeds.
            ("isinstance", [false, false, true, false, false]),
            ("valueerror", [false, false, true, false, false]),
            // A word frequent in every Python chunk's path: only for cosines.
            ("py", [false, false, false, false, true]),
            // Words that name code are stop words nowhere.
            ("queryset", [false, false, false, false, false]),
            ("render", [false, false, false, false, false]),
        ];
        for (word, expected) in cases {
            let got = ALL.map(|list| list.contains(word));
            assert_eq!(
                &got, expected,
                "{word}: prose, ranking, names, query, tfidf"
            );
        }
    }
}
