//! The `swex` explorer's reading of an issue, for its file ranking: the title, the body without
//! environment dumps, code-like identifiers, dotted names, file paths, traceback frames, and a
//! weighted bag of normalised words for matching file and directory names. The body is read
//! without its environment listings ([`crate::environment`]). The explorer hands it
//! the issue as it renders ([`crate::markup::as_rendered`]), which its history and dense searches
//! read too.
//!
//! The parts are the parser's: frames are the Python frames of [`crate::frames`]; code blocks
//! and inline code spans those of [`crate::markup`]; path extensions the parser's
//! ([`crate::paths::PATH_EXTENSIONS`]); a word is code-like by [`crate::words::is_code_like`],
//! and acronyms ([`crate::words::is_acronym`]) name code here too; words are read without the
//! issue's links, as the parser reads them ([`crate::paths::links_as_paths`]). What this reading
//! does its own way, and why: it weighs every word by the segment it occurs in (below), takes
//! words as ASCII identifiers (the file and definition names it matches are), and finds paths
//! over the raw text, links included (a documentation link's page can name a file).
//!
//! Why weight by segment: the title and inline code spans name the subject of the issue far more
//! often than the prose around them; fenced code blocks are reproductions that mention the public
//! API (useful) along with much incidental code.

use regex::Regex;
use std::collections::{BTreeMap, HashSet};
use std::sync::LazyLock;
use swex_text::identifiers::{Digits, identifier_parts, squash};
use swex_text::stopwords::StopList;

pub use crate::clues::Frame;
use crate::clues::FrameStyle;
use crate::environment::without_environment_lines;
use crate::markup::{fenced_blocks, inline_code_spans, without_spans};
use crate::paths::links_as_paths;
use crate::words::names_code;

#[derive(Debug, Clone, Default)]
pub struct Issue {
    pub title: String,
    /// Title and body, environment dumps removed.
    pub cleaned: String,
    /// Code-like identifiers as written (`separability_matrix`, `CompoundModel`, `RST`), in order
    /// of first appearance, deduplicated.
    pub identifiers: Vec<String>,
    /// Dotted names as written (`astropy.modeling.separable`, `m.Pix2Sky_TAN`).
    pub dotted: Vec<String>,
    /// Path-like words (`django/db/models/base.py`, `setup.cfg`).
    pub paths: Vec<String>,
    /// Python traceback frames, paths with `/` separators.
    pub frames: Vec<Frame>,
    /// Normalised word (lowercase, underscores removed) → weight from the segments it occurs in.
    pub words: BTreeMap<String, f64>,
    /// The same for words that occur outside plain prose (title, code spans, code blocks) or look
    /// like code anywhere: the words that can name a file or a definition.
    pub strong_words: BTreeMap<String, f64>,
    /// Identifier as written → the heaviest segment weight it occurs in (title 3, inline code 2,
    /// code block 1, prose 0.7).
    pub identifier_weight: BTreeMap<String, f64>,
}

static IDENT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z_][A-Za-z0-9_]*").expect("valid regex"));
static DOTTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+").expect("valid regex")
});
/// A path-like word ending in one of the extensions that make a word a file path
/// ([`crate::paths::PATH_EXTENSIONS`], the parser's list: every language the engine reads).
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    let extensions = crate::paths::PATH_EXTENSIONS.join("|");
    Regex::new(&format!(
        r"[A-Za-z0-9_.\-/\\]*[A-Za-z0-9_\-]\.(?:{extensions})\b"
    ))
    .expect("valid regex")
});

/// Words that never discriminate between files, even when written like code: shorter than two
/// letters, or in [`StopList::IssueRanking`].
pub fn is_stop(word: &str) -> bool {
    let lower = word.to_ascii_lowercase();
    lower.len() < 2 || StopList::IssueRanking.contains(&lower)
}

pub fn parse(text: &str) -> Issue {
    let text = text.replace("\r\n", "\n");
    let (title, body) = match text.split_once('\n') {
        Some((t, b)) => (t.trim().to_owned(), b.to_owned()),
        None => (text.trim().to_owned(), String::new()),
    };
    let body = without_environment_lines(&body);
    let mut issue = Issue {
        title: title.clone(),
        cleaned: format!("{title}\n{body}"),
        ..Issue::default()
    };

    // Segments and their weights, over the text without its links (their hosts, user names and
    // image ids are no words of the issue; a source-browser link leaves its file path).
    let title = links_as_paths(&title);
    let body = links_as_paths(&body);
    let fenced = fenced_blocks(&body);
    let blocks: Vec<&str> = fenced.iter().map(|b| &body[b.range.clone()]).collect();
    let prose = without_spans(&body, fenced.iter().map(|b| b.range.clone()));
    let inline_spans = inline_code_spans(&prose);
    let inline: Vec<&str> = inline_spans
        .iter()
        .map(|span| &prose[span.content.clone()])
        .collect();
    let plain = without_spans(&prose, inline_spans.iter().map(|s| s.range.clone()));
    let mut segments: Vec<(f64, &str)> = vec![(3.0, &title)];
    segments.extend(inline.iter().map(|s| (2.0, *s)));
    segments.extend(blocks.iter().map(|s| (1.0, *s)));
    segments.push((0.7, &plain));

    let mut seen_ident = HashSet::new();
    for (weight, segment) in &segments {
        for m in IDENT.find_iter(segment) {
            let word = m.as_str();
            if is_stop(word) {
                continue;
            }
            let code_like = names_code(word);
            let boost = if code_like { 1.5 } else { 1.0 };
            let strong = code_like || *weight >= 1.0;
            *issue.words.entry(squash(word)).or_default() += weight * boost;
            if strong {
                *issue.strong_words.entry(squash(word)).or_default() += weight * boost;
            }
            let best = issue.identifier_weight.entry(word.to_owned()).or_default();
            *best = best.max(*weight);
            let parts = identifier_parts(word, Digits::Attached);
            if parts.len() > 1 {
                for part in parts {
                    if part.len() > 2 && !is_stop(&part) {
                        *issue.words.entry(part.clone()).or_default() += 0.3 * weight;
                        if strong {
                            *issue.strong_words.entry(part).or_default() += 0.3 * weight;
                        }
                    }
                }
            }
            if (code_like || *weight >= 2.0)
                && word.len() >= 3
                && seen_ident.insert(word.to_owned())
            {
                issue.identifiers.push(word.to_owned());
            }
        }
    }
    // Plain words of the title and code spans are candidate names too (`Subs`, `rst`).
    let mut seen_dotted = HashSet::new();
    for (_, segment) in &segments {
        for m in DOTTED.find_iter(segment) {
            let word = m.as_str().trim_matches('.');
            if seen_dotted.insert(word.to_owned()) {
                issue.dotted.push(word.to_owned());
            }
        }
    }
    let mut seen_path = HashSet::new();
    for m in PATH.find_iter(&text) {
        let path = m.as_str().replace('\\', "/");
        if seen_path.insert(path.clone()) {
            issue.paths.push(path);
        }
    }
    issue.frames = crate::frames::extract_frames(&text)
        .into_iter()
        .filter(|f| f.style == FrameStyle::Python)
        .map(|f| Frame {
            path: f.path.replace('\\', "/"),
            ..f
        })
        .collect();
    issue
}

/// The text handed to the engine's lexical search: the title, the title again, then the cleaned
/// text, which starts with the title too. Three mentions steer the parser's term weights (a term
/// seen `n` times weighs `1 + ln n` times more, [`crate::parse()`]) towards the title's words.
pub fn lexical_query(issue: &Issue) -> String {
    format!("{}\n{}\n{}", issue.title, issue.title, issue.cleaned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_give_no_words_but_their_file_paths() {
        let issue = parse(
            "Docs tab fails to render\n\
             See https://github.com/Kong/insomnia/blob/main/src/render.ts#L3 and ![shot]\
             (https://github.com/Kong/insomnia/assets/172393376/57e81925-9b2f-4971-8f28-6a87e482fab0)\n",
        );
        assert!(issue.words.contains_key("render"));
        for word in ["github", "kong", "assets", "a87e482fab0", "blob"] {
            assert!(!issue.words.contains_key(word), "{word}");
        }
        assert!(!issue.identifiers.iter().any(|i| i.contains("a87e")));
        // Paths are read over the raw text, links included.
        assert!(issue.paths.iter().any(|p| p.ends_with("src/render.ts")));
    }

    #[test]
    fn names_paths_and_frames_are_extracted() {
        let text = "Modeling's `separability_matrix` fails for nested CompoundModels\n\
            ```python\nfrom astropy.modeling.separable import separability_matrix\n```\n\
            Traceback (most recent call last):\n  File \"/usr/lib/python3/dist-packages/astropy/io/ascii/ui.py\", line 856, in write\n\
            see astropy/io/ascii/rst.py too\n";
        let issue = parse(text);
        assert!(issue.identifiers.iter().any(|i| i == "separability_matrix"));
        assert!(issue.identifiers.iter().any(|i| i == "CompoundModels"));
        assert!(
            issue
                .dotted
                .iter()
                .any(|d| d == "astropy.modeling.separable")
        );
        assert!(issue.paths.iter().any(|p| p == "astropy/io/ascii/rst.py"));
        let other = parse(
            "Update fails in `UpdateStatement.kt`\nsee lua/lazy/view/commands.lua, Sources/App/Route.swift, \
             lib/plug/conn.ex and src/Data/Aeson.hs; not e.g. or self.x\n",
        );
        assert_eq!(
            other.paths,
            [
                "UpdateStatement.kt",
                "lua/lazy/view/commands.lua",
                "Sources/App/Route.swift",
                "lib/plug/conn.ex",
                "src/Data/Aeson.hs"
            ]
        );
        assert_eq!(issue.frames.len(), 1);
        assert_eq!(issue.frames[0].line, Some(856));
        assert_eq!(issue.frames[0].function.as_deref(), Some("write"));
        assert!(
            issue.words["separabilitymatrix"] > issue.words.get("nested").copied().unwrap_or(0.0)
        );
    }
}
