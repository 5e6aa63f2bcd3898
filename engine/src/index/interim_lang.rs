//! TEMPORARY stand-in for `crate::lang` (task C1) until its analysers land on this branch: the
//! same function names and signatures, with extension-only language detection and line-window
//! chunks for every file. Replaced by `crate::lang` on merge; nothing else may depend on it.

use crate::analysis::{Chunk, ChunkKind, FileAnalysis, Language};

pub const ANALYZER_VERSION: u32 = 0;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AnalyzeOptions {
    pub window_lines: u32,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions { window_lines: 50 }
    }
}

pub fn detect_language(path: &str, _head: &[u8]) -> Option<Language> {
    let extension = path.rsplit_once('.').map(|(_, e)| e)?;
    Some(match extension {
        "py" => Language::Python,
        "js" => Language::JavaScript,
        "ts" => Language::TypeScript,
        "tsx" => Language::Tsx,
        "go" => Language::Go,
        "rs" => Language::Rust,
        "java" => Language::Java,
        "c" | "h" => Language::C,
        "cc" | "cpp" | "hpp" => Language::Cpp,
        "rb" => Language::Ruby,
        "php" => Language::Php,
        _ => return None,
    })
}

pub fn python_line_count(text: &str) -> u32 {
    let mut count = 0u32;
    let mut chars = text.chars().peekable();
    let mut in_line = false;
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                count += 1;
                in_line = false;
            }
            '\n' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}'
            | '\u{2029}' => {
                count += 1;
                in_line = false;
            }
            _ => in_line = true,
        }
    }
    count + u32::from(in_line)
}

pub fn analyze(
    _path: &str,
    language: Option<Language>,
    text: &str,
    options: &AnalyzeOptions,
) -> FileAnalysis {
    let lines = text.split_terminator('\n').count() as u32;
    let window = options.window_lines.max(1);
    let mut chunks = Vec::new();
    let mut start = 1;
    while start <= lines {
        let end = (start + window - 1).min(lines);
        chunks.push(Chunk {
            start,
            end,
            kind: ChunkKind::Window,
            name: None,
        });
        start = end + 1;
    }
    FileAnalysis {
        language,
        line_count: python_line_count(text),
        chunks,
        ..FileAnalysis::default()
    }
}
