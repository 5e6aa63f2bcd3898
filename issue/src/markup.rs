//! What a reader of a rendered Markdown issue sees: the text without its HTML comments.
//!
//! Why: GitHub issue templates put their instructions in `<!-- … -->` comments ("PLEASE READ THE
//! FAQs", "Q: How to deploy on vercel", "Please check the existing issues first"), and an author
//! who fills the template in leaves them there. The rendered issue never shows them, but a word
//! search reads them and finds the files they were copied from or point to: the contributing
//! guide, the README, the template itself. On the train rows, 50 of 675 issues carry such
//! comments (10 of 78 in JavaScript), and a README or contributing guide was the first file of
//! several answers because of them.
//!
//! Code is kept as written: a `<!--` inside a fenced block (an HTML or XML reproduction) is code,
//! not a comment, as in the Markdown renderers. A comment can hold fences of its own (a template's
//! example); they are part of the comment.
//!
//! Invariant: linear in the text; text without `<!--` is returned as is, borrowed.

use std::borrow::Cow;

const OPEN: &str = "<!--";
const CLOSE: &str = "-->";

/// `text` without its HTML comments outside fenced code blocks; an unclosed comment runs to the
/// end (as it renders). A line that held only comment is dropped; other lines keep their end.
pub fn without_html_comments(text: &str) -> Cow<'_, str> {
    if !text.contains(OPEN) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut fence: Option<&str> = None;
    let mut in_comment = false;
    for line in text.split_inclusive('\n') {
        if let Some(marker) = fence {
            out.push_str(line);
            if line.trim_start().starts_with(marker) {
                fence = None;
            }
            continue;
        }
        if !in_comment && let Some(marker) = fence_marker(line) {
            fence = Some(marker);
            out.push_str(line);
            continue;
        }
        let mut kept = String::new();
        let mut rest = line;
        loop {
            if in_comment {
                match rest.find(CLOSE) {
                    Some(end) => {
                        in_comment = false;
                        rest = &rest[end + CLOSE.len()..];
                    }
                    None => break,
                }
            } else {
                match rest.find(OPEN) {
                    Some(start) => {
                        kept.push_str(&rest[..start]);
                        in_comment = true;
                        rest = &rest[start + OPEN.len()..];
                    }
                    None => {
                        kept.push_str(rest);
                        break;
                    }
                }
            }
        }
        if kept.len() == line.len() {
            out.push_str(line);
        } else if !kept.trim().is_empty() {
            out.push_str(kept.trim_end_matches(['\n', '\r']));
            out.push('\n');
        }
    }
    Cow::Owned(out)
}

/// The marker of a fenced code block this line opens (```` ``` ```` or `~~~`, indented at most as
/// the line allows), if any.
fn fence_marker(line: &str) -> Option<&'static str> {
    let trimmed = line.trim_start();
    ["```", "~~~"]
        .into_iter()
        .find(|marker| trimmed.starts_with(marker))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (text, expected visible text).
    const CASES: &[(&str, &str)] = &[
        ("no comment here\n", "no comment here\n"),
        (
            "Bug: word wrapping\n<!--\nPLEASE READ THE FAQs!!!\nQ: deploy?\n-->\nReal text\n",
            "Bug: word wrapping\nReal text\n",
        ),
        (
            "before <!-- hidden --> after\nnext\n",
            "before  after\nnext\n",
        ),
        ("a <!-- one --> b <!-- two --> c\n", "a  b  c\n"),
        ("title\n<!-- unclosed\nrest is hidden\n", "title\n"),
        (
            "title\n```html\n<!-- kept: code -->\n```\n<!-- gone -->\n",
            "title\n```html\n<!-- kept: code -->\n```\n",
        ),
        (
            "title\n<!-- example:\n```python\nx = 1\n```\n-->\nafter\n",
            "title\nafter\n",
        ),
        ("text <!-- open\nclose --> tail\n", "text \n tail\n"),
        ("~~~\n<!-- x -->\n~~~\nend", "~~~\n<!-- x -->\n~~~\nend"),
        ("last <!-- x -->", "last \n"),
    ];

    #[test]
    fn comments_outside_code_are_removed() {
        for (text, expected) in CASES {
            assert_eq!(without_html_comments(text), *expected, "{text:?}");
        }
    }

    #[test]
    fn text_without_comments_is_borrowed() {
        assert!(matches!(
            without_html_comments("a -- b --> c <!- d"),
            Cow::Borrowed(_)
        ));
    }
}
