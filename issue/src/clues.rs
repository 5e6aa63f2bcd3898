//! The clue types: what the parser reads out of an issue, as the `issue_clues` service returns
//! them (JSON through serde). Always compiled, without the parser, so that the plugin SDK can
//! re-export them while depending on serde alone.

use serde::{Deserialize, Serialize};

/// Which traceback syntax a frame was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameStyle {
    Python,
    JavaScript,
    Rust,
    Java,
    Go,
    /// A bare `path.ext:line[:column]` location (compiler errors, pytest summaries).
    Location,
}

/// One stack frame or source location named by the issue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    pub style: FrameStyle,
    /// The path as written (absolute or relative; Java frames give `package/dirs/File.java`).
    pub path: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// The function, cleaned of decorations (`C.m` for Java, `T.Foo` for Go methods), when known;
    /// `None` for pseudo-functions such as Python's `<module>`.
    pub function: Option<String>,
}

/// A search term with its weight (1.0 for an ordinary code-like term).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WeightedTerm {
    pub text: String,
    pub weight: f32,
}

impl WeightedTerm {
    pub fn new(text: impl Into<String>, weight: f32) -> WeightedTerm {
        WeightedTerm {
            text: text.into(),
            weight,
        }
    }
}

/// Everything the parser reads out of one issue text, each list in order of first appearance.
///
/// The lists are capped at [`IssueClues::MAX_LISTED`] entries (a pasted log can name a hundred
/// thousand paths; the first ones are the useful ones); `terms` at the parser's `max_terms`.
/// New fields may be added (hence `#[non_exhaustive]`): build one with [`IssueClues::default`]
/// or, with the `parse` feature, the parser.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct IssueClues {
    /// Traceback frames and source locations, in text order.
    pub frames: Vec<Frame>,
    /// File paths as written (frames' paths first), de-duplicated.
    pub paths: Vec<String>,
    /// Code-like identifiers as written (`snake_case`, `CamelCase`, `dotted.names`,
    /// `module::paths`), de-duplicated.
    pub identifiers: Vec<String>,
    /// Markdown fenced blocks and inline code spans, reST literals (their contents).
    pub code_spans: Vec<String>,
    /// Weighted terms for lexical search, heaviest first: the query the engine's lexical search
    /// runs for this text.
    pub terms: Vec<WeightedTerm>,
}

impl IssueClues {
    /// The most entries `frames`, `paths`, `identifiers` and `code_spans` hold.
    pub const MAX_LISTED: usize = 1000;
}

/// The arguments of the `issue_clues` service.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct IssueCluesArgs {
    /// The text to read: usually the request's issue.
    pub text: String,
}

impl IssueCluesArgs {
    pub fn new(text: impl Into<String>) -> IssueCluesArgs {
        IssueCluesArgs { text: text.into() }
    }
}
