//! swex-refkit: what the reference-compatible explorers (`bm25-ref`, `tfidf-ref`,
//! `simple_rule`) share with the SWE-Explore reference release, written anew:
//!
//! - [`SourcePolicy`]: which files count as sources — an extension allow-list and directory
//!   names pruned at any depth, both case-insensitive; files in repository-relative path order.
//! - [`chunk_corpus`]: overlapping line windows over those files, in path order, stopping at a
//!   chunk budget (files past the budget are never read), blank windows skipped.
//!
//! It reads the snapshot only through the explorer [`Services`], so it works the same in process
//! and in isolated mode. It knows nothing about scoring.

use serde::{Deserialize, Serialize};
use swex_plugin::text::is_blank_python;
use swex_plugin::{ExplorerError, Services};

/// The extension allow-list of the reference release that produced the published numbers.
/// (Later reference versions add `.ets`, `.ts` and `.json5`.)
pub const DEFAULT_EXTENSIONS: &[&str] = &[
    ".py", ".md", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".rst",
];

/// Directory names the reference prunes at any depth.
pub const DEFAULT_EXCLUDED_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "oh_modules",
    "build",
    ".hvigor",
    "dist",
    ".venv",
    "venv",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
];

/// Which files are sources.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourcePolicy {
    /// File-name suffixes, with or without the leading dot, matched case-insensitively.
    #[serde(default = "default_extensions")]
    pub extensions: Vec<String>,
    /// Directory names skipped at any depth, case-insensitively.
    #[serde(default = "default_excluded_dirs")]
    pub excluded_dirs: Vec<String>,
}

fn default_extensions() -> Vec<String> {
    DEFAULT_EXTENSIONS.iter().map(|s| (*s).to_owned()).collect()
}

fn default_excluded_dirs() -> Vec<String> {
    DEFAULT_EXCLUDED_DIRS
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

impl Default for SourcePolicy {
    fn default() -> Self {
        SourcePolicy {
            extensions: default_extensions(),
            excluded_dirs: default_excluded_dirs(),
        }
    }
}

impl SourcePolicy {
    /// Whether a repository-relative path is a source file under this policy.
    pub fn accepts(&self, path: &str) -> bool {
        let mut segments: Vec<&str> = path.split('/').collect();
        let name = segments.pop().unwrap_or(path).to_lowercase();
        let excluded = segments.iter().any(|dir| {
            let dir = dir.to_lowercase();
            self.excluded_dirs
                .iter()
                .any(|x| x.trim_end_matches(['/', '\\']).to_lowercase() == dir)
        });
        if excluded {
            return false;
        }
        self.extensions.iter().any(|ext| {
            let ext = ext.to_lowercase();
            if ext.starts_with('.') {
                name.ends_with(&ext)
            } else {
                name.ends_with(&format!(".{ext}"))
            }
        })
    }

    /// The snapshot's source files, in path order.
    pub fn source_files(&self, services: &Services<'_>) -> Result<Vec<String>, ExplorerError> {
        Ok(services
            .list_files(None)?
            .into_iter()
            .map(|f| f.path)
            .filter(|p| self.accepts(p))
            .collect())
    }
}

/// Line-window chunking parameters (the reference's defaults: 80 lines, 20 overlap, 3000 chunks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Windowing {
    #[serde(default = "default_chunk_size")]
    pub chunk_size: usize,
    #[serde(default = "default_chunk_overlap")]
    pub chunk_overlap: usize,
    /// The corpus budget; `null` = no limit.
    #[serde(default = "default_max_chunks")]
    pub max_chunks: Option<usize>,
}

fn default_chunk_size() -> usize {
    80
}
fn default_chunk_overlap() -> usize {
    20
}
fn default_max_chunks() -> Option<usize> {
    Some(3000)
}

impl Default for Windowing {
    fn default() -> Self {
        Windowing {
            chunk_size: default_chunk_size(),
            chunk_overlap: default_chunk_overlap(),
            max_chunks: default_max_chunks(),
        }
    }
}

impl Windowing {
    /// Rejects windows that would not advance or would be empty.
    pub fn check(&self) -> Result<(), ExplorerError> {
        if self.chunk_size < 1 {
            return Err(ExplorerError::InvalidConfig(format!(
                "chunk_size must be positive, got {}",
                self.chunk_size
            )));
        }
        if self.chunk_overlap >= self.chunk_size {
            return Err(ExplorerError::InvalidConfig(format!(
                "chunk_overlap must be in [0, {}), got {}",
                self.chunk_size, self.chunk_overlap
            )));
        }
        Ok(())
    }

    /// The windows `(start, end)` (1-based, inclusive) of a file with `line_count` lines.
    pub fn windows(&self, line_count: usize) -> Vec<(usize, usize)> {
        let step = self.chunk_size - self.chunk_overlap;
        let mut windows = Vec::new();
        let mut first = 0;
        while first < line_count {
            let end = (first + self.chunk_size).min(line_count);
            windows.push((first + 1, end));
            if end >= line_count {
                break;
            }
            first += step;
        }
        windows
    }
}

/// One window of a file, with its text (lines joined by `\n`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub path: String,
    pub start: usize,
    pub end: usize,
    pub content: String,
}

/// What [`chunk_corpus`] built, and what it had to skip.
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    pub chunks: Vec<Chunk>,
    /// Files that could not be read (the reference skips them too), with the reason.
    pub unreadable: Vec<String>,
}

/// Windows over every source file in path order, blank windows skipped, cut at the budget.
pub fn chunk_corpus(
    services: &Services<'_>,
    policy: &SourcePolicy,
    windowing: &Windowing,
) -> Result<Corpus, ExplorerError> {
    windowing.check()?;
    let mut corpus = Corpus::default();
    let budget = windowing.max_chunks.unwrap_or(usize::MAX);
    if budget == 0 {
        return Ok(corpus);
    }
    for path in policy.source_files(services)? {
        let lines = match services.read_file_lines(&path) {
            Ok(lines) => lines,
            Err(e) if e.is_unavailable() => return Err(e.into()),
            Err(e) => {
                corpus.unreadable.push(format!("{path}: {}", e.message));
                continue;
            }
        };
        for (start, end) in windowing.windows(lines.len()) {
            let content = lines[start - 1..end].join("\n");
            if is_blank_python(&content) {
                continue;
            }
            corpus.chunks.push(Chunk {
                path: path.clone(),
                start,
                end,
                content,
            });
            if corpus.chunks.len() == budget {
                return Ok(corpus);
            }
        }
    }
    Ok(corpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_accepts(path: &str, expected: bool) {
        assert_eq!(SourcePolicy::default().accepts(path), expected, "{path}");
    }

    #[test]
    fn source_policy() {
        check_accepts("a.py", true);
        check_accepts("docs/INDEX.RST", true);
        check_accepts("a.pyc", false);
        check_accepts("src/x.ts", false);
        check_accepts("node_modules/x.py", false);
        check_accepts("pkg/Build/x.py", false);
        check_accepts("pkg/builds/x.py", true);
        check_accepts("pkg/__pycache__/x.py", false);
        check_accepts("setup.cfg", true);
        check_accepts(".py", true);
    }

    fn check_windows(size: usize, overlap: usize, lines: usize, expected: &[(usize, usize)]) {
        let w = Windowing {
            chunk_size: size,
            chunk_overlap: overlap,
            max_chunks: None,
        };
        assert_eq!(w.windows(lines), expected, "{size}/{overlap} over {lines}");
    }

    #[test]
    fn windows() {
        check_windows(80, 20, 0, &[]);
        check_windows(80, 20, 10, &[(1, 10)]);
        check_windows(80, 20, 80, &[(1, 80)]);
        check_windows(80, 20, 81, &[(1, 80), (61, 81)]);
        check_windows(80, 20, 200, &[(1, 80), (61, 140), (121, 200)]);
        check_windows(3, 0, 7, &[(1, 3), (4, 6), (7, 7)]);
    }

    #[test]
    fn bad_windowing_is_refused() {
        let w = Windowing {
            chunk_size: 10,
            chunk_overlap: 10,
            max_chunks: None,
        };
        assert!(
            matches!(w.check(), Err(ExplorerError::InvalidConfig(m)) if m.contains("chunk_overlap"))
        );
    }
}
