//! What in an issue is the reporter's environment, not their words: `key: version` listings
//! (`numpy: 1.23.4`, `python: 3.10.8 (main, …)`, `- OS: Linux (x86_64)`) and lines naming
//! `site-packages` paths outside a traceback frame.
//!
//! Why: issue templates end with such listings. Their words are rare in a repository and
//! therefore score high in BM25, pulling version-printing helpers (`print_versions.py`) and
//! configuration modules to the top; they never say where the bug is. Every reading drops them
//! from the body — the parser ([`crate::parse()`], so the engine's lexical search and every
//! explorer that asks it) and the `graph` seeds through [`issue_as_read`], the `swex` explorer's
//! reading ([`crate::ranking`]) through [`without_environment_lines`]; the first line (the title,
//! or a one-line query such as `timeout: None`) is kept as written.

use crate::frames::heads_python_frame;
use crate::paths::has_path_extension;
use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

/// An environment-listing line (`numpy: 1.23.4`, `- Python version: 3.11`, `OS : Linux (x86)`): a
/// key of word characters, dots, dashes and spaces, then a version, `None` or a value with a
/// parenthesised detail. The key's length (at most [`ENV_KEY_CHARS`]) is checked in code
/// ([`is_environment_line`]): a bounded repetition of Unicode `\w` in the pattern took 12 ms to
/// compile, once per process, a fifth of a one-shot `swex explore`.
static ENV_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*[-*]?\s*([\w\-. ]+)\s*:\s*(None|[vV]?\d.*|\S+\s*\(.*\))\s*$")
        .expect("valid regex")
});

/// The most characters of an environment line's key, spaces at its ends not counted.
const ENV_KEY_CHARS: usize = 40;

/// Whether `line` is an environment-listing line ([`ENV_LINE`] with the key at most
/// [`ENV_KEY_CHARS`] characters long). The key runs to the line's first colon, since its
/// characters hold none, so the pattern's only freedom is where the spaces around the key go; the
/// shortest the key can be is its length without them (and at least one character, which the
/// pattern requires).
fn is_environment_line(line: &str) -> bool {
    ENV_LINE.captures(line).is_some_and(|c| {
        let key = c.get(1).map_or("", |m| m.as_str());
        key.trim_matches(char::is_whitespace).chars().count() <= ENV_KEY_CHARS
    })
}

/// The key of a listing line: what comes before its first colon, without the blanks and the list
/// marker around it.
fn listing_key(line: &str) -> &str {
    let key = line.split(':').next().unwrap_or("");
    key.trim().trim_start_matches(['-', '*']).trim()
}

/// An issue as the parser and the `graph` seeds read it: the first line (a title, or the whole of
/// a one-line query such as `timeout: None` or `<kbd>`) as written; the body as it renders
/// ([`crate::markup::as_rendered`]: no HTML comments or tags outside code) without its
/// environment lines ([`without_environment_lines`]). Borrowed when nothing changes.
pub fn issue_as_read(text: &str) -> Cow<'_, str> {
    let Some((first, body)) = text.split_once('\n') else {
        return Cow::Borrowed(text);
    };
    let rendered = crate::markup::as_rendered(body);
    if matches!(rendered, Cow::Borrowed(_)) && !body.lines().any(is_noise_line) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(format!("{first}\n{}", without_environment_lines(&rendered)))
}

/// Whether a body line is environment, not words: a listing line ([`is_environment_line`]) whose
/// key is no file name, or a line naming `site-packages` / `dist-packages` that heads no
/// traceback frame (Python's or IPython's, [`heads_python_frame`]: the frame of an installed copy
/// of the project names its file).
fn is_noise_line(line: &str) -> bool {
    if is_environment_line(line) {
        // `index.rst:155: WARNING: …` is a location, not a listing.
        return !has_path_extension(listing_key(line));
    }
    let lower = line.to_ascii_lowercase();
    (lower.contains("site-packages") || lower.contains("dist-packages"))
        && !heads_python_frame(line)
}

/// The lines of an issue's body without its environment (listing lines whose key is no file
/// name, `site-packages` lines that head no frame), each ending in `\n`.
pub fn without_environment_lines(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    for line in body.lines().filter(|line| !is_noise_line(line)) {
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key's bound checked in code answers as the bounded pattern did, on keys around the bound,
    /// with spaces and dashes at either end, non-ASCII words and other colons.
    #[test]
    fn environment_lines_as_the_bounded_pattern_decides() {
        let bounded =
            Regex::new(r"^\s*[-*]?\s*[\w\-. ]{1,40}\s*:\s*(None|[vV]?\d.*|\S+\s*\(.*\))\s*$")
                .unwrap();
        let mut lines: Vec<String> = [
            "numpy: 1.23.4",
            "- Python version: 3.11",
            "* OS : Linux (x86_64)",
            "  : 1.0",
            ": 1.0",
            "-: 1.0",
            "Système d'exploitation: 12",
            "Système: Linux (x86)",
            "a: b: 1.0",
            "matplotlib backend: None",
            "This is prose: it has a colon",
            "\tkey: 1",
        ]
        .map(String::from)
        .to_vec();
        for n in [38, 39, 40, 41, 42] {
            for (pre, post) in [("", ""), ("  ", "  "), ("- ", ""), ("-", ""), ("", " ")] {
                lines.push(format!("{pre}{}{post}: 2.0", "k".repeat(n)));
                lines.push(format!(
                    "{pre}{} {}{post}: v1",
                    "é".repeat(n / 2),
                    "x".repeat(n / 2)
                ));
                lines.push(format!("{pre}-{}{post}: 3", "k".repeat(n)));
                lines.push(format!("{pre}{} {post}: 3", " k".repeat(n / 2)));
            }
        }
        for line in &lines {
            assert_eq!(
                is_environment_line(line),
                bounded.is_match(line),
                "{line:?}"
            );
        }
    }

    #[test]
    fn environment_listings_are_removed() {
        let body = "Bug text\nINSTALLED VERSIONS\ncommit: None\npython: 3.10.8 (main, Oct 13 2022, 10:17:43) [Clang 14.0.0]\nnumpy: 1.23.4\nxarray: 2022.10.0\nreal sentence: with words here\n";
        let cleaned = without_environment_lines(body);
        assert!(cleaned.contains("Bug text"));
        assert!(!cleaned.contains("numpy"));
        assert!(!cleaned.contains("python"));
        assert!(!cleaned.contains("xarray"));
        assert!(cleaned.contains("real sentence"));
    }

    /// Locations and frames are not environment, even where they look like a listing or name
    /// `site-packages`.
    #[test]
    fn locations_and_frames_stay() {
        let body = "index.rst.rst:155: WARNING: non-whitespace stripped by dedent\n\
            sphinx: 4.4.0\n\
            [/usr/local/lib/python3.9/dist-packages/sklearn/x/_validation.py](https://localhost:8080/#) in f(s)\n\
            File ~/lib/python3.9/site-packages/xarray/core/dataset.py:4001, in Dataset.merge(self)\n\
            /usr/lib/python3/site-packages/numpy/core/fromnumeric.py:43: VisibleDeprecationWarning\n";
        let kept = without_environment_lines(body);
        let lines: Vec<&str> = kept.lines().collect();
        assert_eq!(lines.len(), 3, "{kept}");
        assert!(lines[0].starts_with("index.rst.rst:155"));
        assert!(lines[1].contains("_validation.py"));
        assert!(lines[2].contains("dataset.py:4001"));
    }

    /// A one-line query is read as written, markup and all; an issue's body as it renders.
    #[test]
    fn issues_are_read_from_the_second_line() {
        for query in ["<kbd>", "timeout: None", "<!-- x --> y"] {
            assert!(matches!(issue_as_read(query), Cow::Borrowed(_)), "{query}");
        }
        assert_eq!(
            issue_as_read("Title <b>x</b>\n<details>\nnumpy: 1.2\nbody <!-- hidden -->\n"),
            "Title <b>x</b>\n \nbody \n"
        );
        assert!(matches!(
            issue_as_read("title\nplain body\n"),
            Cow::Borrowed(_)
        ));
    }

    /// The title, or a one-line query, is kept as written; only the body is read for listings.
    #[test]
    fn the_first_line_is_kept() {
        assert_eq!(issue_as_read("timeout: None"), "timeout: None");
        assert_eq!(
            issue_as_read("numpy: 1.2 breaks\nnumpy: 1.23.4\ntext\n"),
            "numpy: 1.2 breaks\ntext\n"
        );
        assert!(matches!(
            issue_as_read("title\nno listing here\n"),
            Cow::Borrowed(_)
        ));
    }
}
