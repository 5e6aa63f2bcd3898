//! Line windows for files without a grammar (docs, configs, data) and for over-long gaps.
//!
//! Windows never overlap and cover their range exactly. Markdown and reStructuredText files are cut
//! preferably just before a heading, so that a window tends to hold whole sections; other text is
//! cut every `window_lines` lines. This module knows nothing about the file's meaning beyond
//! headings.

use crate::analysis::{Chunk, ChunkKind};

/// Splits `start..=end` into `ceil(len / max_len)` nearly equal pieces, each at most `max_len`
/// lines, all with the given kind and name. Equal pieces avoid a one-line tail window.
pub(crate) fn even_windows(
    start: u32,
    end: u32,
    max_len: u32,
    kind: ChunkKind,
    name: Option<&str>,
    out: &mut Vec<Chunk>,
) {
    if start > end {
        return;
    }
    let max_len = max_len.max(1);
    let len = end - start + 1;
    let pieces = len.div_ceil(max_len);
    // The first `len % pieces` pieces are one line longer than the others.
    let (base, longer) = (len / pieces, len % pieces);
    let mut piece_start = start;
    for piece in 0..pieces {
        let piece_len = base + u32::from(piece < longer);
        let piece_end = piece_start + (piece_len - 1);
        out.push(Chunk {
            start: piece_start,
            end: piece_end,
            kind,
            name: name.map(str::to_owned),
        });
        piece_start = piece_end.saturating_add(1);
    }
}

/// Whether headings of this file should guide the window cuts.
fn heading_syntax(path: &str) -> Option<HeadingSyntax> {
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".md") || lower.ends_with(".markdown") || lower.ends_with(".mdx") {
        Some(HeadingSyntax::Markdown)
    } else if lower.ends_with(".rst") || lower.ends_with(".rest") {
        Some(HeadingSyntax::Rest)
    } else {
        None
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum HeadingSyntax {
    Markdown,
    Rest,
}

/// Window chunks for a whole text file of `line_count` lines (see [`super::lines`]).
pub(crate) fn text_windows(
    path: &str,
    text: &str,
    line_count: u32,
    window_lines: u32,
) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    if line_count == 0 {
        return chunks;
    }
    let window_lines = window_lines.max(1);
    let Some(syntax) = heading_syntax(path) else {
        fixed_windows(1, line_count, window_lines, &mut chunks);
        return chunks;
    };
    let heading_starts = heading_starts(text, syntax);
    // A heading closes the current window only when the window already has a quarter of its
    // size, so that runs of tiny sections are grouped rather than cut into one-line chunks.
    let min_lines = (window_lines / 4).max(1);
    let mut start = 1u32;
    let mut headings = heading_starts.iter().copied().peekable();
    while start <= line_count {
        let hard_end = start.saturating_add(window_lines - 1).min(line_count);
        while headings.peek().is_some_and(|&h| h < start + min_lines) {
            headings.next();
        }
        let end = match headings.peek() {
            Some(&heading) if heading <= hard_end => heading - 1,
            _ => hard_end,
        };
        chunks.push(Chunk {
            start,
            end,
            kind: ChunkKind::Window,
            name: None,
        });
        start = end + 1;
    }
    chunks
}

fn fixed_windows(start: u32, end: u32, window_lines: u32, out: &mut Vec<Chunk>) {
    let mut piece_start = start;
    while piece_start <= end {
        let piece_end = piece_start.saturating_add(window_lines - 1).min(end);
        out.push(Chunk {
            start: piece_start,
            end: piece_end,
            kind: ChunkKind::Window,
            name: None,
        });
        piece_start = piece_end + 1;
    }
}

/// 1-based line numbers where a section starts (ATX `#` headings and setext/reST underlined titles,
/// with their overline if any). Markdown code fences are skipped.
fn heading_starts(text: &str, syntax: HeadingSyntax) -> Vec<u32> {
    let lines = swex_text::split_lines(text);
    let mut starts = Vec::new();
    let mut in_fence = false;
    for (index, line) in lines.iter().enumerate() {
        let line_number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        if syntax == HeadingSyntax::Markdown {
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                in_fence = !in_fence;
                continue;
            }
            if in_fence {
                continue;
            }
            if is_atx_heading(line) {
                starts.push(line_number);
                continue;
            }
        }
        // An underline marks the line above as a title.
        if index >= 1 && is_underline(line) {
            let title = lines[index - 1];
            if !title.trim().is_empty() && !is_underline(title) {
                let overlined = index >= 2 && is_underline(lines[index - 2]);
                let title_line = line_number - 1;
                let section_start = if overlined {
                    title_line - 1
                } else {
                    title_line
                };
                if starts.last() != Some(&section_start) {
                    starts.push(section_start);
                }
            }
        }
    }
    starts
}

fn is_atx_heading(line: &str) -> bool {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&hashes) && matches!(line.as_bytes().get(hashes), None | Some(b' ' | b'\t'))
}

/// A line made of one repeated punctuation character, at least three long (`====`, `----`, `~~~`).
fn is_underline(line: &str) -> bool {
    let line = line.trim_end();
    let mut bytes = line.bytes();
    let Some(first) = bytes.next() else {
        return false;
    };
    const ADORNMENTS: &[u8] = b"=-~^\"'`#*+<>:._";
    line.len() >= 3 && ADORNMENTS.contains(&first) && bytes.all(|b| b == first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(chunks: &[Chunk]) -> Vec<(u32, u32)> {
        chunks.iter().map(|c| (c.start, c.end)).collect()
    }

    #[test]
    fn even_windows_split_into_equal_pieces() {
        let check = |start, end, max, expected: &[(u32, u32)]| {
            let mut out = Vec::new();
            even_windows(start, end, max, ChunkKind::Gap, None, &mut out);
            assert_eq!(spans(&out), expected, "{start}..={end} max {max}");
        };
        check(1, 10, 10, &[(1, 10)]);
        check(1, 11, 10, &[(1, 6), (7, 11)]);
        check(5, 5, 3, &[(5, 5)]);
        check(3, 2, 3, &[]);
        check(
            1,
            7,
            0,
            &[(1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6), (7, 7)],
        );
    }

    #[test]
    fn plain_text_gets_fixed_windows() {
        let text = "x\n".repeat(25);
        assert_eq!(
            spans(&text_windows("a.toml", &text, 25, 10)),
            [(1, 10), (11, 20), (21, 25)]
        );
        assert!(text_windows("a.txt", "", 0, 10).is_empty());
    }

    #[test]
    fn markdown_windows_end_before_headings() {
        // Headings at lines 1, 4, 9 and 14; code fence hides the `# not a heading` at line 11.
        let text = "# A\nx\nx\n## B\nx\nx\nx\nx\n# C\nx\n```\n# not a heading\n```\n# D\nx\n";
        let chunks = text_windows("README.md", text, 15, 8);
        // min window = 2 lines: the heading at 4 closes the first window; 9 closes the second;
        // 14 closes the third.
        assert_eq!(spans(&chunks), [(1, 3), (4, 8), (9, 13), (14, 15)]);
    }

    #[test]
    fn rest_titles_with_overlines_start_sections() {
        let text = "=====\nTitle\n=====\nintro\nintro\nintro\nSection\n-------\nbody\nbody\n";
        let chunks = text_windows("doc/index.rst", text, 10, 8);
        assert_eq!(spans(&chunks), [(1, 6), (7, 10)]);
    }
}
