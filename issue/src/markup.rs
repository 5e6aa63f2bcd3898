//! What a reader of a rendered Markdown issue sees: the text without its HTML comments and tags,
//! and where its fenced code blocks are.
//!
//! Why: GitHub issue templates put their instructions in `<!-- … -->` comments ("PLEASE READ THE
//! FAQs", "Q: How to deploy on vercel", "Please check the existing issues first"), and an author
//! who fills the template in leaves them there. The rendered issue never shows them, but a word
//! search reads them and finds the files they were copied from or point to: the contributing
//! guide, the README, the template itself. On the train rows, 50 of 675 issues carry such
//! comments (10 of 78 in JavaScript), and a README or contributing guide was the first file of
//! several answers because of them. The same holds, less loudly, for the HTML that issues write
//! around their text — `<details><summary>`, `<img width="500" alt="image" src=…>`, `<kbd>`,
//! `<br>` (in about 60 of the 675): the tags render as layout, not words; the text between
//! them is kept.
//!
//! Code is kept as written: a `<!--` or a tag inside a fenced block (an HTML or XML
//! reproduction) or an inline code span is code, as in the Markdown renderers. A comment can hold
//! fences of its own (a template's example); they are part of the comment. Only the elements
//! GitHub renders are tags ([`HTML_TAG`]): `<QuerySet [...]>` and `std::vector<int>` are text.
//!
//! What a fenced code block is — a line opening with ```` ``` ```` or `~~~`, up to the next line
//! made of the same fence, or to the end of the text when none is (CommonMark, as it renders) —
//! has its one home here ([`Fence`], [`fenced_blocks`]), as has an inline code span
//! ([`inline_code_spans`]): the comment filter, both issue readings
//! ([`crate::parse()`], [`crate::ranking`]) and the history's issue numbers
//! (`swex_engine::history::references`) split the text by it.
//!
//! Invariant: linear in the text; text without `<` is returned as is, borrowed.

use regex::Regex;
use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

const OPEN: &str = "<!--";
const CLOSE: &str = "-->";

/// An opening, closing or empty tag of an element GitHub renders in issues (its name, then
/// attributes up to `>` on the same line); the name must end there, so `<bar>` is no `<b>`.
pub static HTML_TAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)</?(?:a|b|i|s|q|p|em|strong|code|pre|kbd|samp|var|sub|sup|ins|del|strike|tt|small|big|br|hr|img|picture|source|video|details|summary|div|span|center|table|thead|tbody|tfoot|tr|td|th|ul|ol|li|dl|dt|dd|h[1-6]|blockquote|input)(?:\s[^<>\n]*)?/?>",
    )
    .expect("valid regex")
});

/// `text` as it renders: without its HTML comments and the tags of [`HTML_TAG`] outside fenced
/// code blocks and inline code spans; an unclosed comment runs to the end (as it renders). A line
/// that held only comment is dropped; other lines keep their end.
pub fn as_rendered(text: &str) -> Cow<'_, str> {
    if !text.contains('<') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut fence: Option<Fence> = None;
    let mut in_comment = false;
    for line in text.split_inclusive('\n') {
        if let Some(open) = fence {
            out.push_str(line);
            if open.is_closed_by(line) {
                fence = None;
            }
            continue;
        }
        if !in_comment && let Some(open) = Fence::opened_by(line) {
            fence = Some(open);
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
            out.push_str(&without_tags(line));
        } else if !kept.trim().is_empty() {
            out.push_str(without_tags(&kept).trim_end_matches(['\n', '\r']));
            out.push('\n');
        }
    }
    if out == text {
        return Cow::Borrowed(text);
    }
    Cow::Owned(out)
}

/// One line without the tags of [`HTML_TAG`] outside its inline code spans; each tag becomes a
/// space, so the words around it stay apart.
fn without_tags(line: &str) -> Cow<'_, str> {
    if !line.contains('<') {
        return Cow::Borrowed(line);
    }
    let spans = inline_code_spans(line);
    // Tags and spans both come in order: one pass over each.
    let mut spans = spans.iter().peekable();
    let mut out = String::new();
    let mut at = 0;
    for tag in HTML_TAG.find_iter(line) {
        while spans
            .next_if(|span| span.range.end <= tag.start())
            .is_some()
        {}
        if spans
            .peek()
            .is_some_and(|span| span.range.start <= tag.start())
        {
            continue;
        }
        out.push_str(&line[at..tag.start()]);
        out.push(' ');
        at = tag.end();
    }
    if at == 0 {
        return Cow::Borrowed(line);
    }
    out.push_str(&line[at..]);
    Cow::Owned(out)
}

/// An open fenced code block: the character and length of the fence that opened it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fence {
    marker: char,
    length: usize,
}

impl Fence {
    /// The fenced code block `line` opens, as CommonMark (and GitHub) read it: after any
    /// indentation, three or more backticks or tildes, then an info string (```` ```python ````)
    /// that for backticks holds no backtick — so ```` ```fit``` method ```` is an inline code
    /// span, not a fence. Indentation is not limited, since fences are indented inside list
    /// items.
    pub fn opened_by(line: &str) -> Option<Fence> {
        let trimmed = line.trim_start();
        let marker = trimmed.chars().next().filter(|c| matches!(c, '`' | '~'))?;
        let length = trimmed.chars().take_while(|&c| c == marker).count();
        let info = &trimmed[length..];
        (length >= 3 && !(marker == '`' && info.contains('`'))).then_some(Fence { marker, length })
    }

    /// Whether `line`, inside this block, ends it: it holds nothing but the opening fence's
    /// character, at least as many of them, and blanks (```` ```python ```` inside a block is
    /// code).
    pub fn is_closed_by(self, line: &str) -> bool {
        let trimmed = line.trim();
        trimmed.len() >= self.length && trimmed.chars().all(|c| c == self.marker)
    }
}

/// Code in a text: a fenced block ([`fenced_blocks`]) or an inline span
/// ([`inline_code_spans`]), as byte ranges of the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Code {
    /// All of it with its markers: a block from its opening fence line to the end of its closing
    /// one (that line's end included), or to the end of the text when it is not closed; a span
    /// with its backticks.
    pub range: Range<usize>,
    /// What it holds: a block's lines between the two fence lines, a span's text between the
    /// backticks.
    pub content: Range<usize>,
}

/// The fenced code blocks of `text`, in order ([`Fence`]): what renders as code, whatever the
/// backticks inside a line (```` run ``` here ```` opens nothing).
pub fn fenced_blocks(text: &str) -> Vec<Code> {
    let mut blocks = Vec::new();
    let mut open: Option<(Fence, usize, usize)> = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let end = at + line.len();
        match open {
            Some((fence, start, content)) if fence.is_closed_by(line) => {
                blocks.push(Code {
                    range: start..end,
                    content: content..at,
                });
                open = None;
            }
            Some(_) => {}
            None => open = Fence::opened_by(line).map(|fence| (fence, at, end)),
        }
        at = end;
    }
    if let Some((_, start, content)) = open {
        blocks.push(Code {
            range: start..text.len(),
            content: content..text.len(),
        });
    }
    blocks
}

/// The inline code spans of `text`, in order, by CommonMark's rule kept to one line: a run of
/// backticks opens a span that the next run of exactly as many backticks on the same line closes
/// (```` ```fit``` ```` is the span `fit`, ``` ``a`b`` ``` the span ``a`b``, and a reST literal
/// ``` ``x`` ``` reads as one); a run that nothing closes is text. Spans of blanks only are left
/// out. Apply it to the text outside [`fenced_blocks`].
pub fn inline_code_spans(text: &str) -> Vec<Code> {
    let mut spans = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.contains('`') {
            line_code_spans(line, at, &mut spans);
        }
        at += line.len();
    }
    spans
}

/// The inline code spans of one `line` that starts at `offset` in its text. Each run of
/// backticks is given the next run as long first (one pass from the right), so a line of many
/// runs that nothing closes is still read in linear time.
fn line_code_spans(line: &str, offset: usize, spans: &mut Vec<Code>) {
    let bytes = line.as_bytes();
    let mut runs: Vec<Range<usize>> = Vec::new();
    let mut at = 0;
    while let Some(found) = bytes[at..].iter().position(|&b| b == b'`') {
        let start = at + found;
        at = start + bytes[start..].iter().take_while(|&&b| b == b'`').count();
        runs.push(start..at);
    }
    let mut next_as_long: Vec<Option<usize>> = vec![None; runs.len()];
    let mut last_of_length: std::collections::HashMap<usize, usize> = Default::default();
    for (index, run) in runs.iter().enumerate().rev() {
        next_as_long[index] = last_of_length.insert(run.len(), index);
    }
    let mut index = 0;
    while index < runs.len() {
        let Some(closing) = next_as_long[index] else {
            // Nothing closes this run: it is text, and the next run may open a span.
            index += 1;
            continue;
        };
        let (open, close) = (&runs[index], &runs[closing]);
        if !line[open.end..close.start].trim().is_empty() {
            spans.push(Code {
                range: offset + open.start..offset + close.end,
                content: offset + open.end..offset + close.start,
            });
        }
        index = closing + 1;
    }
}

/// `text` with each of `spans` (in order, not overlapping: the ranges of [`fenced_blocks`] or
/// [`inline_code_spans`]) replaced by one space.
pub fn without_spans(text: &str, spans: impl IntoIterator<Item = Range<usize>>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for span in spans {
        out.push_str(&text[at..span.start]);
        out.push(' ');
        at = span.end;
    }
    out.push_str(&text[at..]);
    out
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
            assert_eq!(as_rendered(text), *expected, "{text:?}");
        }
    }

    /// (text, each block's text, each block's contents).
    const BLOCKS: &[(&str, &[&str], &[&str])] = &[
        ("no code, `inline` and run ``` here\n", &[], &[]),
        (
            "a\n```python\nx = 1\n```\nb\n",
            &["```python\nx = 1\n```\n"],
            &["x = 1\n"],
        ),
        (
            "~~~\n```\n~~~\n  ```\nindented\n  ```",
            &["~~~\n```\n~~~\n", "  ```\nindented\n  ```"],
            &["```\n", "indented\n"],
        ),
        (
            "a\n```\nnever closed\n#12\n",
            &["```\nnever closed\n#12\n"],
            &["never closed\n#12\n"],
        ),
        ("```\n```\n", &["```\n```\n"], &[""]),
        // Inline spans of three backticks open nothing, even at the start of a line.
        (
            "```fit``` takes copy_X\n    ```def fit(self):```\nprose\n",
            &[],
            &[],
        ),
        // Only a line of the fence alone closes it, and a longer fence needs as many.
        (
            "````md\n```python\nx\n```\n````\nafter\n",
            &["````md\n```python\nx\n```\n````\n"],
            &["```python\nx\n```\n"],
        ),
        (
            "```\ncode\n```python\nmore\n``` \r\nafter\n",
            &["```\ncode\n```python\nmore\n``` \r\n"],
            &["code\n```python\nmore\n"],
        ),
    ];

    #[test]
    fn fenced_blocks_are_found_line_by_line() {
        for (text, whole, contents) in BLOCKS {
            let blocks = fenced_blocks(text);
            let texts: Vec<&str> = blocks.iter().map(|b| &text[b.range.clone()]).collect();
            let inner: Vec<&str> = blocks.iter().map(|b| &text[b.content.clone()]).collect();
            assert_eq!(texts, *whole, "{text:?}");
            assert_eq!(inner, *contents, "{text:?}");
        }
    }

    #[test]
    fn text_without_fenced_blocks_keeps_the_rest() {
        let text = "before\n```\ncode\n```\nbetween\n~~~\nmore\n";
        let blocks = fenced_blocks(text);
        assert_eq!(
            without_spans(text, blocks.iter().map(|b| b.range.clone())),
            "before\n between\n "
        );
    }

    /// (text, each span's contents).
    const INLINE: &[(&str, &[&str])] = &[
        ("call `f()` and `g`", &["f()", "g"]),
        ("```fit``` takes copy_X", &["fit"]),
        ("``a`b`` and ``x``", &["a`b", "x"]),
        ("`open\nnever` closed on its line", &[]),
        ("a lone ` then `code`", &[" then "]),
        ("blank ` ` spans and `` ``", &[]),
        ("runs differ: ``a` stays open", &[]),
        ("Unicode `Größe` too", &["Größe"]),
        ("two lines `a`\nand ``b`` `c", &["a", "b"]),
    ];

    #[test]
    fn inline_code_spans_pair_equal_runs_on_one_line() {
        for (text, expected) in INLINE {
            let spans = inline_code_spans(text);
            let contents: Vec<&str> = spans.iter().map(|s| &text[s.content.clone()]).collect();
            assert_eq!(contents, *expected, "{text:?}");
        }
        assert_eq!(
            without_spans(
                "x `a` y ``b`` z",
                inline_code_spans("x `a` y ``b`` z")
                    .into_iter()
                    .map(|s| s.range)
            ),
            "x   y   z"
        );
    }

    /// (text, as it renders): tags of rendered elements go, their text stays; code keeps them.
    const TAGS: &[(&str, &str)] = &[
        (
            "<details><summary>Versions</summary>\nnumpy 1.2\n</details>\n",
            "  Versions \nnumpy 1.2\n \n",
        ),
        (
            "Broken: <img width=\"500\" alt=\"image\" src=\"x.png\"> see <kbd>Ctrl</kbd>+<KBD>C</KBD><br/>\n",
            "Broken:   see  Ctrl + C  \n",
        ),
        // Not elements GitHub renders, or not tags: text.
        (
            "got <QuerySet [<User: a>]> and std::vector<int>, <bar> x < y > z\n",
            "got <QuerySet [<User: a>]> and std::vector<int>, <bar> x < y > z\n",
        ),
        // In code, tags are code.
        (
            "use `<details>` or\n```html\n<details><summary>x</summary></details>\n```\n<b>bold</b>\n",
            "use `<details>` or\n```html\n<details><summary>x</summary></details>\n```\n bold \n",
        ),
        // A comment and a tag on one line.
        ("a <!-- c --> <b>b</b>\n", "a   b \n"),
    ];

    #[test]
    fn tags_outside_code_are_removed() {
        for (text, expected) in TAGS {
            assert_eq!(as_rendered(text), *expected, "{text:?}");
        }
    }

    #[test]
    fn text_without_comments_is_borrowed() {
        assert!(matches!(
            as_rendered("a -- b --> c <!- d"),
            Cow::Borrowed(_)
        ));
        assert!(matches!(
            as_rendered("x < y and <QuerySet []>\n"),
            Cow::Borrowed(_)
        ));
    }
}
