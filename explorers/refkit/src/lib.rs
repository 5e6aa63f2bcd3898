//! swex-refkit: what the reference-compatible explorers (`bm25-ref`, `tfidf-ref`,
//! `simple_rule`) share with the SWE-Explore reference release, written anew:
//!
//! - [`SourcePolicy`]: which files count as sources — an extension allow-list and directory
//!   names pruned at any depth, both case-insensitive; files in repository-relative path order.
//! - [`window_corpus`]: overlapping line windows over those files, in path order, stopping at a
//!   chunk budget (files past the budget are never read), blank windows skipped; each file read
//!   once, windows as line ranges into it, and [`WindowedCorpus::for_each_window_tokens`] to
//!   analyse each line once for all the windows that share it. [`chunk_corpus`] gives the same
//!   windows with their joined text.
//!
//! It reads the snapshot only through the explorer [`Services`], so it works the same in process
//! and in isolated mode. It knows nothing about scoring.

use serde::{Deserialize, Serialize};
use swex_plugin::text::python::is_blank;
use swex_plugin::types::ReadLinesArgs;
use swex_plugin::{ExplorerError, ServiceError, ServiceId, Services};

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

/// A source file read once, its lines as Python's `str.splitlines()` gives them, stored joined
/// by `\n` (no line contains one), so a run of lines is one slice: a window's text as the
/// reference builds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    pub path: String,
    /// The lines, each followed by `\n` except the last.
    text: String,
    /// Byte offset where each line starts in `text`, plus `text.len() + 1` at the end.
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new<S: AsRef<str>>(path: impl Into<String>, lines: &[S]) -> SourceFile {
        let mut packed = PackedLines::default();
        for line in lines {
            packed.push(line.as_ref());
        }
        packed.into_file(path.into())
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len() - 1
    }

    /// Line `number` (1-based).
    pub fn line(&self, number: usize) -> &str {
        &self.text[self.line_starts[number - 1]..self.line_starts[number] - 1]
    }

    /// Lines `start..=end` (1-based) joined by `\n`.
    pub fn joined(&self, start: usize, end: usize) -> &str {
        &self.text[self.line_starts[start - 1]..self.line_starts[end] - 1]
    }
}

/// The `lines` of a `read_lines` answer packed into one string as they are parsed: one
/// allocation per file instead of one per line.
#[derive(Debug)]
struct PackedLines {
    text: String,
    line_starts: Vec<usize>,
}

impl Default for PackedLines {
    fn default() -> Self {
        PackedLines {
            text: String::new(),
            line_starts: vec![0],
        }
    }
}

impl PackedLines {
    fn push(&mut self, line: &str) {
        if self.line_starts.len() > 1 {
            self.text.push('\n');
        }
        self.text.push_str(line);
        self.line_starts.push(self.text.len() + 1);
    }

    fn into_file(self, path: String) -> SourceFile {
        SourceFile {
            path,
            text: self.text,
            line_starts: self.line_starts,
        }
    }
}

/// The part of `read_lines`' answer the corpus needs (the other fields are ignored).
#[derive(Deserialize)]
struct ReadLinesPacked {
    lines: PackedLines,
}

impl<'de> Deserialize<'de> for PackedLines {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LinesVisitor;
        impl<'de> serde::de::Visitor<'de> for LinesVisitor {
            type Value = PackedLines;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of lines")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<PackedLines, A::Error> {
                let mut packed = PackedLines::default();
                while seq.next_element_seed(AppendLine(&mut packed))?.is_some() {}
                Ok(packed)
            }
        }
        deserializer.deserialize_seq(LinesVisitor)
    }
}

/// Appends one line to [`PackedLines`] straight from the parser's buffer.
struct AppendLine<'p>(&'p mut PackedLines);

impl<'de> serde::de::DeserializeSeed<'de> for AppendLine<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for AppendLine<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a line")
    }
    fn visit_str<E: serde::de::Error>(self, line: &str) -> Result<(), E> {
        self.0.push(line);
        Ok(())
    }
}

/// All lines of a file through the `read_lines` service, packed.
fn read_source_file(services: &Services<'_>, path: &str) -> Result<SourceFile, ServiceError> {
    let args = ReadLinesArgs::new(path);
    let answer: ReadLinesPacked = services.call(ServiceId::ReadLines, &args)?;
    Ok(answer.lines.into_file(path.to_owned()))
}

/// One window over [`WindowedCorpus::files`]: lines `start..=end` (1-based) of file `file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub file: usize,
    pub start: usize,
    pub end: usize,
}

/// The windows of [`chunk_corpus`] without their joined text: the lines stay in their files, so
/// that an explorer can analyse every line once and combine the lines of each window (windows
/// overlap, so joining and re-analysing them would repeat the work for the shared lines).
#[derive(Debug, Clone, Default)]
pub struct WindowedCorpus {
    /// The files the windows come from, in path order (files past the budget are not read).
    pub files: Vec<SourceFile>,
    /// Non-blank windows in corpus order, at most the budget.
    pub windows: Vec<Window>,
    /// Files that could not be read (the reference skips them too), with the reason.
    pub unreadable: Vec<String>,
}

impl WindowedCorpus {
    /// A corpus of one file with the given windows (1-based inclusive line spans, in order): how
    /// tests and small tools build a corpus without a snapshot.
    pub fn one_file<S: AsRef<str>>(
        path: &str,
        lines: &[S],
        spans: &[(usize, usize)],
    ) -> WindowedCorpus {
        WindowedCorpus {
            files: vec![SourceFile::new(path, lines)],
            windows: spans
                .iter()
                .map(|&(start, end)| Window {
                    file: 0,
                    start,
                    end,
                })
                .collect(),
            unreadable: Vec::new(),
        }
    }

    /// The joined text of every window, in corpus order.
    pub fn texts(&self) -> Vec<&str> {
        self.windows.iter().map(|w| self.text(w)).collect()
    }

    /// Window `index` as an answer region (its file's path and line span).
    pub fn region(&self, index: usize) -> swex_plugin::Region {
        let window = &self.windows[index];
        swex_plugin::Region::new(
            self.file_of(window).path.clone(),
            window.start as i64,
            window.end as i64,
        )
    }

    /// The source file a window belongs to.
    pub fn file_of(&self, window: &Window) -> &SourceFile {
        &self.files[window.file]
    }

    /// The window's text: its lines joined by `\n`.
    pub fn text(&self, window: &Window) -> &str {
        self.files[window.file].joined(window.start, window.end)
    }

    /// Calls `visit(window index, tokens)` for every window in corpus order, where `tokens` are
    /// the tokens of the window's lines concatenated. `tokenize_line` runs once per line read by
    /// a window, lines in file order, so token ids handed out inside it come in first-seen order
    /// over the corpus. This equals analysing the joined window text whenever the analysis never
    /// makes a token across a `\n` (true of whitespace splitting and of word-character runs).
    pub fn for_each_window_tokens<'c, T>(
        &'c self,
        mut tokenize_line: impl FnMut(&'c str, &mut Vec<T>),
        mut visit: impl FnMut(usize, &[T]),
    ) {
        let mut current_file = usize::MAX;
        // Tokens of the current file's lines read so far, and where each line's tokens start
        // (`line_starts[i]` for line i + 1; one extra entry closes the last line).
        let mut tokens: Vec<T> = Vec::new();
        let mut line_starts: Vec<usize> = Vec::new();
        for (index, window) in self.windows.iter().enumerate() {
            if window.file != current_file {
                current_file = window.file;
                tokens.clear();
                line_starts.clear();
                line_starts.push(0);
            }
            let file = &self.files[window.file];
            while line_starts.len() <= window.end {
                tokenize_line(file.line(line_starts.len()), &mut tokens);
                line_starts.push(tokens.len());
            }
            visit(
                index,
                &tokens[line_starts[window.start - 1]..line_starts[window.end]],
            );
        }
    }
}

/// Windows over every source file in path order, blank windows skipped, cut at the budget; each
/// file is read once and the windows point into it.
pub fn window_corpus(
    services: &Services<'_>,
    policy: &SourcePolicy,
    windowing: &Windowing,
) -> Result<WindowedCorpus, ExplorerError> {
    windowing.check()?;
    let mut corpus = WindowedCorpus::default();
    let budget = windowing.max_chunks.unwrap_or(usize::MAX);
    if budget == 0 {
        return Ok(corpus);
    }
    for path in policy.source_files(services)? {
        let file = match read_source_file(services, &path) {
            Ok(file) => file,
            Err(e) if e.is_unavailable() => return Err(e.into()),
            Err(e) => {
                corpus.unreadable.push(format!("{path}: {}", e.message));
                continue;
            }
        };
        // A window is blank when all its lines are: `\n` joins them and is whitespace itself.
        let blank: Vec<bool> = (1..=file.line_count())
            .map(|number| is_blank(file.line(number)))
            .collect();
        let index = corpus.files.len();
        for (start, end) in windowing.windows(file.line_count()) {
            if blank[start - 1..end].iter().all(|b| *b) {
                continue;
            }
            corpus.windows.push(Window {
                file: index,
                start,
                end,
            });
            if corpus.windows.len() == budget {
                break;
            }
        }
        corpus.files.push(file);
        if corpus.windows.len() == budget {
            break;
        }
    }
    Ok(corpus)
}

/// Windows over every source file in path order, blank windows skipped, cut at the budget, each
/// with its joined text.
pub fn chunk_corpus(
    services: &Services<'_>,
    policy: &SourcePolicy,
    windowing: &Windowing,
) -> Result<Corpus, ExplorerError> {
    let windowed = window_corpus(services, policy, windowing)?;
    let chunks = windowed
        .windows
        .iter()
        .map(|window| Chunk {
            path: windowed.file_of(window).path.clone(),
            start: window.start,
            end: window.end,
            content: windowed.text(window).to_owned(),
        })
        .collect();
    Ok(Corpus {
        chunks,
        unreadable: windowed.unreadable,
    })
}

/// Each document's distinct term ids with their counts, gathered one document at a time into
/// flat rows (no map per document). Shared by `bm25-ref` (rows in first-seen order) and
/// `tfidf-ref` (rows in term id order, the order of scikit-learn's CSR rows).
#[derive(Debug, Default)]
pub struct TermRows {
    /// Entries of document `d`: `entries[starts[d]..starts[d + 1]]`.
    starts: Vec<usize>,
    entries: Vec<(u32, u32)>,
    doc_len: Vec<usize>,
    /// Scratch: per term id, its count in the document being added (zero outside `add`).
    scratch: Vec<u32>,
}

impl TermRows {
    /// Adds a document given its token ids; its row lists each distinct id once, in the order of
    /// first occurrence.
    pub fn add(&mut self, ids: &[u32]) {
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        let first = self.entries.len();
        for &id in ids {
            let id = id as usize;
            if id >= self.scratch.len() {
                self.scratch.resize(id + 1, 0);
            }
            if self.scratch[id] == 0 {
                self.entries.push((id as u32, 0));
            }
            self.scratch[id] += 1;
        }
        for entry in &mut self.entries[first..] {
            entry.1 = self.scratch[entry.0 as usize];
            self.scratch[entry.0 as usize] = 0;
        }
        self.starts.push(self.entries.len());
        self.doc_len.push(ids.len());
    }

    /// [`Self::add`], then the new row in term id order.
    pub fn add_sorted(&mut self, ids: &[u32]) {
        self.add(ids);
        let first = self.starts[self.starts.len() - 2];
        self.entries[first..].sort_unstable();
    }

    pub fn documents(&self) -> usize {
        self.doc_len.len()
    }

    /// The range of `entries()` holding document `document`'s row.
    pub fn range(&self, document: usize) -> std::ops::Range<usize> {
        self.starts[document]..self.starts[document + 1]
    }

    pub fn row(&self, document: usize) -> &[(u32, u32)] {
        &self.entries[self.range(document)]
    }

    /// All rows, one after the other.
    pub fn entries(&self) -> &[(u32, u32)] {
        &self.entries
    }

    /// Tokens per document (repeats counted).
    pub fn doc_lens(&self) -> &[usize] {
        &self.doc_len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn term_rows_count_distinct_ids_per_document() {
        let mut rows = TermRows::default();
        assert_eq!(rows.documents(), 0);
        // (ids, expected row in first-seen order, expected row sorted)
        type Row = &'static [(u32, u32)];
        let cases: [(&[u32], Row, Row); 4] = [
            (
                &[5, 1, 5, 3, 1, 5],
                &[(5, 3), (1, 2), (3, 1)],
                &[(1, 2), (3, 1), (5, 3)],
            ),
            (&[], &[], &[]),
            (&[0], &[(0, 1)], &[(0, 1)]),
            (&[9, 9, 2], &[(9, 2), (2, 1)], &[(2, 1), (9, 2)]),
        ];
        let mut sorted = TermRows::default();
        for (ids, first_seen, in_id_order) in cases {
            rows.add(ids);
            sorted.add_sorted(ids);
            let last = rows.documents() - 1;
            assert_eq!(rows.row(last), first_seen, "{ids:?}");
            assert_eq!(sorted.row(last), in_id_order, "{ids:?}");
            assert_eq!(rows.doc_lens()[last], ids.len());
        }
        assert_eq!(rows.documents(), 4);
        // Earlier rows are untouched by later documents (the scratch counts are reset).
        assert_eq!(rows.row(0), &[(5, 3), (1, 2), (3, 1)]);
        // Rows of 3, 0, 1 and 2 distinct ids.
        assert_eq!(rows.entries().len(), 6);
        assert_eq!(rows.range(3), 4..6);
    }

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

    /// Each window gets the tokens of its joined text; each line is analysed once, in order.
    #[test]
    fn window_tokens_combine_lines_analysed_once() {
        let file = |path: &str, lines: &[&str]| SourceFile::new(path, lines);
        let corpus = WindowedCorpus {
            files: vec![
                file("a.py", &["x y", "", "z", "x w", "v"]),
                file("b.py", &["q", "r s"]),
            ],
            windows: vec![
                Window {
                    file: 0,
                    start: 1,
                    end: 3,
                },
                Window {
                    file: 0,
                    start: 3,
                    end: 5,
                },
                Window {
                    file: 1,
                    start: 1,
                    end: 2,
                },
            ],
            unreadable: Vec::new(),
        };
        let mut analysed = Vec::new();
        let mut seen = Vec::new();
        corpus.for_each_window_tokens(
            |line, out: &mut Vec<String>| {
                analysed.push(line.to_owned());
                out.extend(line.split_whitespace().map(str::to_owned));
            },
            |index, tokens| seen.push((index, tokens.to_vec())),
        );
        assert_eq!(analysed, ["x y", "", "z", "x w", "v", "q", "r s"]);
        for (index, tokens) in &seen {
            let joined = corpus.text(&corpus.windows[*index]);
            let expected: Vec<&str> = joined.split_whitespace().collect();
            assert_eq!(tokens, &expected, "window {index}");
        }
        assert_eq!(seen.len(), 3);
    }

    /// `read_lines` answers pack into one text, escapes decoded, the other fields ignored.
    #[test]
    fn read_lines_answers_pack() {
        let answer = r#"{"start":1,"lines":["def f():","","    return \"a\\tb\"\t\u00e9",""],"total_lines":4}"#;
        let packed: ReadLinesPacked = serde_json::from_str(answer).unwrap();
        let file = packed.lines.into_file("f.py".to_owned());
        assert_eq!(file.line_count(), 4);
        let lines: Vec<&str> = (1..=4).map(|n| file.line(n)).collect();
        assert_eq!(lines, ["def f():", "", "    return \"a\\tb\"\t\u{e9}", ""]);
        assert_eq!(file.joined(1, 2), "def f():\n");
        assert_eq!(file.joined(3, 4), "    return \"a\\tb\"\t\u{e9}\n");
        assert_eq!(file.joined(4, 4), "");
        let empty: ReadLinesPacked = serde_json::from_str(r#"{"lines":[]}"#).unwrap();
        assert_eq!(empty.lines.into_file("e".to_owned()).line_count(), 0);
        assert_eq!(SourceFile::new("g", &["a", "b"]), {
            let p: ReadLinesPacked = serde_json::from_str(r#"{"lines":["a","b"]}"#).unwrap();
            p.lines.into_file("g".to_owned())
        });
    }
}
