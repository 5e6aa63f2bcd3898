//! Read extraction: which lines of which repository files a trajectory read, step by step.
//!
//! Shell commands are parsed ([`super::shell`]), their pipelines evaluated into line selections
//! ([`super::commands`]) and, where the command line leaves it open (a `grep` keeps some lines,
//! a recursive search names files), resolved from the observation's numbered lines. Editor views
//! give their `view_range`; SWE-agent windows give the numbered lines they print. Paths are
//! resolved against the step's working directory and the snapshot ([`super::paths`],
//! [`super::repo`]).
//!
//! Two policies decide what counts as read:
//! - [`ReadPolicy::Reference`] reproduces how the official SWE-Explore ground truth counts reads
//!   (the reference `bench_build.py`): a content command (`cat`, `nl`, `head`, `tail`, `sed -n`,
//!   `less`, `more`) counts the lines its *source* selects, whatever filters follow in the
//!   pipeline (`nl -ba f | grep foo` is the whole of `f`); a search counts the `path:line` lines
//!   its output names and, when it names none (a single-file `grep`, `grep` without `-n`), the
//!   whole of each file operand.
//! - [`ReadPolicy::Shown`] counts only lines the agent was provably shown: the exact selection of
//!   a pipeline (`nl -ba f | sed -n '5,9p'` is 5–9), numbered output lines of filtered streams,
//!   nothing from outputs redirected away or cut by the harness beyond what survived.
//!
//! Anything that cannot be mapped to one file and an interval is discarded with a reason
//! ([`Discard`]), never guessed; the reasons feed the coverage report's miss analysis.

use super::commands::{self, Prefix, PrefixStyle, SourceKind, Stream};
use super::intervals::{Interval, LineSet};
use super::paths::{self, PathResolver, Resolved};
use super::repo::RepoView;
use super::shell::{self, Word};
use super::trajectory::{Action, Observation, Step, Trajectory};
use regex::Regex;
use std::collections::BTreeSet;
use std::fmt;
use std::sync::LazyLock;

/// What counts as read; see the module documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ReadPolicy {
    #[default]
    Reference,
    Shown,
}

impl ReadPolicy {
    pub fn name(self) -> &'static str {
        match self {
            ReadPolicy::Reference => "reference",
            ReadPolicy::Shown => "shown",
        }
    }
}

impl std::str::FromStr for ReadPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "reference" => Ok(ReadPolicy::Reference),
            "shown" => Ok(ReadPolicy::Shown),
            other => Err(format!(
                "unknown read policy `{other}` (expected `reference` or `shown`)"
            )),
        }
    }
}

/// Lines of one file read in one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    pub path: String,
    pub lines: LineSet,
    /// [`Step::index`] of the step.
    pub step: usize,
}

/// Why something that looked like a read was not counted.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DiscardReason {
    /// The lines cannot be determined (explanation attached).
    Unmappable(String),
    /// The output was redirected away from the agent (Shown policy).
    NotShown,
    /// Lines the source command addressed that the pipeline did not pass on to the agent
    /// (Shown policy; the Reference policy counts them). The text names the pipeline's shape,
    /// e.g. `nl | sed`, `grep (single file)`.
    Filtered(String),
    /// Lines the harness cut out of a long output (Shown policy).
    Cut,
    /// The path lies outside the repository.
    Outside,
    /// Not a file of the snapshot (a directory, a file the agent created, a typo).
    NotInSnapshot,
    /// An agent scratch file (`reproduce_*`, `debug_*`, …).
    Temporary,
    /// The path depends on shell expansion (`$f`, `*.py`, `$(…)`).
    Expansion,
    /// The harness refused to run the action.
    Rejected,
}

impl DiscardReason {
    /// A short stable label for reports (the `Unmappable` explanation dropped).
    pub fn label(&self) -> &'static str {
        match self {
            DiscardReason::Unmappable(_) => "unmappable",
            DiscardReason::NotShown => "output not shown",
            DiscardReason::Filtered(_) => "filtered out by the pipeline",
            DiscardReason::Cut => "cut from a long output",
            DiscardReason::Outside => "outside repository",
            DiscardReason::NotInSnapshot => "not in snapshot",
            DiscardReason::Temporary => "temporary file",
            DiscardReason::Expansion => "shell expansion",
            DiscardReason::Rejected => "rejected action",
        }
    }
}

impl fmt::Display for DiscardReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiscardReason::Unmappable(why) => write!(f, "unmappable: {why}"),
            DiscardReason::Filtered(shape) => write!(f, "filtered out by `{shape}`"),
            other => f.write_str(other.label()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discard {
    pub step: usize,
    /// Repository-relative path when it resolved to one.
    pub path: Option<String>,
    /// The raw path or command as written.
    pub raw: String,
    pub reason: DiscardReason,
    /// The lines the read would have covered under the Reference policy, when known.
    pub lines: Option<LineSet>,
}

/// Everything read extraction found in one trajectory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extraction {
    pub reads: Vec<Read>,
    pub discards: Vec<Discard>,
    /// Files the trajectory changed (submission diff and editor edits), repository-relative.
    pub modified: BTreeSet<String>,
}

impl Extraction {
    /// Union of all reads of `path`.
    pub fn lines_of(&self, path: &str) -> LineSet {
        self.reads
            .iter()
            .filter(|r| r.path == path)
            .fold(LineSet::new(), |acc, r| acc.union(&r.lines))
    }
}

/// Extract the reads of `trajectory` against the snapshot `repo`.
pub fn extract(trajectory: &Trajectory, repo: &dyn RepoView, policy: ReadPolicy) -> Extraction {
    let mut extractor = Extractor {
        repo,
        policy,
        resolver: PathResolver::new(trajectory.workdir.as_deref()),
        out: Extraction::default(),
    };
    for step in &trajectory.steps {
        extractor.step(step);
    }
    if let Some(diff) = &trajectory.submission {
        for path in diff_paths(diff) {
            extractor.modified(&path, None);
        }
    }
    extractor.out
}

/// Paths a unified diff changes (`diff --git a/X b/Y` and `+++ b/X` lines).
pub fn diff_paths(diff: &str) -> BTreeSet<String> {
    static DIFF_GIT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?m)^diff --git a/(.+?) b/").expect("valid regex"));
    static PLUS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?m)^\+\+\+ b/(.+?)\s*$").expect("valid regex"));
    DIFF_GIT
        .captures_iter(diff)
        .chain(PLUS.captures_iter(diff))
        .map(|c| c[1].trim().to_string())
        .collect()
}

#[derive(Debug, Clone)]
struct FileRef {
    path: String,
    count: u64,
}

/// The working directory while walking a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Cwd {
    /// Absolute directory (`None` in [`PathResolver::resolve`] means the repository root).
    Known(Option<String>),
    /// After `cd -` or `cd $X`.
    Unknown,
}

/// A pipeline evaluated against the snapshot.
/// Each file operand with the lines its source command selects.
type Addressed = Vec<(FileRef, LineSet)>;
/// Streams with the file they come from (none for tagged streams).
type Outputs = Vec<(Option<FileRef>, Stream)>;

struct Evaluated {
    cwd: Cwd,
    visible: bool,
    /// Reference policy: the lines each file operand's source command selects (the whole file
    /// when it cannot tell).
    addressed: Vec<(FileRef, LineSet)>,
    /// Reference policy: the source is a search, so output lines naming `path:line` replace
    /// `addressed` when there are any.
    search: bool,
    /// Final streams, with the file they come from (none for tagged streams).
    outputs: Vec<(Option<FileRef>, Stream)>,
    /// Programs of the pipeline, source first (`nl | sed`), for reports.
    shape: String,
}

struct Extractor<'a> {
    repo: &'a dyn RepoView,
    policy: ReadPolicy,
    resolver: PathResolver,
    out: Extraction,
}

impl Extractor<'_> {
    fn step(&mut self, step: &Step) {
        match &step.action {
            Action::Shell { command } => self.shell(step, command),
            Action::View { path, range } => self.view(step, path, *range),
            Action::Window { path, opens } => self.window(step, path.as_deref(), *opens),
            Action::Edit { path } => self.modified(path, step.cwd.as_deref()),
            Action::Rejected { text } => {
                // Evaluate what the refused command would have read, for the miss analysis.
                let mut shadow = Extractor {
                    repo: self.repo,
                    policy: ReadPolicy::Reference,
                    resolver: self.resolver.clone(),
                    out: Extraction::default(),
                };
                shadow.shell(step, text);
                for read in shadow.out.reads {
                    self.out.discards.push(Discard {
                        step: step.index,
                        path: Some(read.path.clone()),
                        raw: read.path,
                        reason: DiscardReason::Rejected,
                        lines: Some(read.lines),
                    });
                }
            }
            Action::Other => {}
        }
    }

    fn read(&mut self, step: &Step, file: &FileRef, lines: LineSet) {
        let lines = lines.clip(file.count);
        if !lines.is_empty() {
            self.out.reads.push(Read {
                path: file.path.clone(),
                lines,
                step: step.index,
            });
        }
    }

    fn discard(
        &mut self,
        step: &Step,
        path: Option<&FileRef>,
        raw: &str,
        reason: DiscardReason,
        lines: Option<LineSet>,
    ) {
        self.out.discards.push(Discard {
            step: step.index,
            path: path.map(|f| f.path.clone()),
            raw: raw.to_string(),
            reason,
            lines,
        });
    }

    fn modified(&mut self, raw: &str, cwd: Option<&str>) {
        if let Resolved::Repo(path) = self.resolver.resolve(raw, cwd)
            && !path.is_empty()
            && !paths::is_temporary(&path)
        {
            self.out.modified.insert(path);
        }
    }

    /// Resolve a path operand to a snapshot file, recording why when it does not resolve.
    fn file(&mut self, step: &Step, word: &Word, cwd: &Cwd) -> Option<FileRef> {
        self.file_operand(step, word, cwd, false)
    }

    /// [`Self::file`] for operands that may be directories (a search's), which are not reads and
    /// so are not reported when absent from the snapshot's files.
    fn file_operand(
        &mut self,
        step: &Step,
        word: &Word,
        cwd: &Cwd,
        may_be_directory: bool,
    ) -> Option<FileRef> {
        let fail = |this: &mut Self, path: Option<String>, reason: DiscardReason| {
            if may_be_directory && reason == DiscardReason::NotInSnapshot {
                return None;
            }
            this.out.discards.push(Discard {
                step: step.index,
                path,
                raw: word.text.clone(),
                reason,
                lines: None,
            });
            None
        };
        if word.expands {
            return fail(self, None, DiscardReason::Expansion);
        }
        let Cwd::Known(dir) = cwd else {
            return fail(
                self,
                None,
                DiscardReason::Unmappable("working directory unknown".into()),
            );
        };
        match self.resolver.resolve(&word.text, dir.as_deref()) {
            Resolved::Outside(_) => fail(self, None, DiscardReason::Outside),
            Resolved::Repo(path) if paths::is_temporary(&path) => {
                fail(self, Some(path), DiscardReason::Temporary)
            }
            Resolved::Repo(path) => match self.repo.line_count(&path) {
                Some(count) => Some(FileRef { path, count }),
                None => fail(self, Some(path), DiscardReason::NotInSnapshot),
            },
        }
    }

    fn view(&mut self, step: &Step, raw: &str, range: Option<(i64, i64)>) {
        let word = Word {
            text: raw.to_string(),
            expands: false,
        };
        let cwd = Cwd::Known(step.cwd.clone());
        let Some(file) = self.file(step, &word, &cwd) else {
            return;
        };
        let lines = match range {
            None => LineSet::whole(file.count),
            Some((start, end)) => {
                let start = start.max(1) as u64;
                let end = if end < 0 { file.count } else { end as u64 };
                LineSet::from_interval(Interval::new(start, end))
            }
        };
        self.read(step, &file, lines);
    }

    /// SWE-agent windowed viewers: the observation prints `[File: PATH (N lines total)]` and
    /// numbered lines `12:text`, or `search_file`'s `Line 12:text`.
    fn window(&mut self, step: &Step, raw: Option<&str>, opens: bool) {
        let text = step.observation.as_ref().map_or("", |o| o.text.as_str());
        let (header_path, lines) = parse_window(text);
        let Some(raw) = raw.or(header_path.as_deref()) else {
            self.discard(
                step,
                None,
                text.lines().next().unwrap_or(""),
                DiscardReason::Unmappable("window without a file".into()),
                None,
            );
            return;
        };
        let word = Word {
            text: raw.to_string(),
            expands: false,
        };
        let Some(file) = self.file(step, &word, &Cwd::Known(step.cwd.clone())) else {
            return;
        };
        let shown = LineSet::from_lines(lines);
        let lines = match self.policy {
            // The reference converts `open` to `cat`: the whole file.
            ReadPolicy::Reference if opens => LineSet::whole(file.count),
            _ => shown,
        };
        self.read(step, &file, lines);
    }

    fn shell(&mut self, step: &Step, command: &str) {
        let mut cwd = Cwd::Known(step.cwd.clone());
        let mut evaluated = Vec::new();
        for pipeline in shell::parse(command) {
            let Some(first) = pipeline.commands.first() else {
                continue;
            };
            if pipeline.commands.len() == 1 && matches!(first.program(), Some("cd" | "pushd")) {
                let target = first.words.get(1);
                cwd = match (&cwd, target) {
                    (_, Some(t)) if t.expands => Cwd::Unknown,
                    (Cwd::Known(dir), t) => match self
                        .resolver
                        .change_dir(t.map(|w| w.text.as_str()), dir.as_deref())
                    {
                        Some(d) => Cwd::Known(Some(d)),
                        None => Cwd::Unknown,
                    },
                    (Cwd::Unknown, _) => Cwd::Unknown,
                };
                continue;
            }
            if let Some(e) = self.evaluate(step, &pipeline, &cwd) {
                evaluated.push(e);
            }
        }
        let observation = step.observation.as_ref();
        let visible = evaluated.iter().filter(|e| e.visible).count();
        // Numbered lines of a filtered stream can be told apart only when the output belongs to
        // one such stream, or to several numbering the same file the same way
        // (`grep -n a f; grep -n b f`).
        let mut numbered_streams = evaluated
            .iter()
            .filter(|e| e.visible)
            .flat_map(|e| e.outputs.iter())
            .filter(|(_, s)| matches!(s, Stream::Subset { .. } | Stream::Tagged { .. }))
            .map(|(file, s)| (file.as_ref().map(|f| f.path.as_str()), s));
        let output_shareable = match numbered_streams.next() {
            None => true,
            Some(first @ (Some(_), Stream::Subset { .. })) => {
                numbered_streams.all(|other| other == first)
            }
            Some(_) => numbered_streams.next().is_none(),
        };
        for e in evaluated {
            match self.policy {
                ReadPolicy::Reference => self.count_reference(step, e, observation),
                ReadPolicy::Shown => {
                    self.count_shown(step, e, observation, visible, output_shareable)
                }
            }
        }
    }

    fn count_reference(&mut self, step: &Step, e: Evaluated, observation: Option<&Observation>) {
        if e.search {
            let mut named = Vec::new();
            for (_, stream) in &e.outputs {
                if let (Stream::Tagged { numbered: true }, Some(o)) = (stream, observation) {
                    named.extend(self.tagged_lines(&o.text, &e.cwd));
                }
            }
            if !named.is_empty() {
                for (file, line) in named {
                    self.read(step, &file, LineSet::from_lines([line]));
                }
                return;
            }
        }
        for (file, lines) in e.addressed {
            self.read(step, &file, lines);
        }
    }

    fn count_shown(
        &mut self,
        step: &Step,
        e: Evaluated,
        observation: Option<&Observation>,
        visible_pipelines: usize,
        output_shareable: bool,
    ) {
        if !e.visible {
            for (file, lines) in &e.addressed {
                self.discard(
                    step,
                    Some(file),
                    &file.path,
                    DiscardReason::NotShown,
                    Some(lines.clone()),
                );
            }
            return;
        }
        let addressed_of = |file: &FileRef| {
            e.addressed
                .iter()
                .find(|(a, _)| a.path == file.path)
                .map_or_else(LineSet::new, |(_, l)| l.clone())
        };
        let unmappable = |why: &str| DiscardReason::Unmappable(why.to_string());
        for (file, stream) in &e.outputs {
            let Some(file) = file else {
                // A tagged search: its output lines name their files.
                match (stream, observation) {
                    (Stream::Tagged { numbered: true }, Some(o)) => {
                        for (file, line) in self.tagged_lines(&o.text, &e.cwd) {
                            self.read(step, &file, LineSet::from_lines([line]));
                        }
                    }
                    (Stream::Tagged { numbered: false }, _) => self.discard(
                        step,
                        None,
                        &e.shape,
                        unmappable("search output has no line numbers"),
                        None,
                    ),
                    _ => self.discard(step, None, &e.shape, unmappable("no output recorded"), None),
                }
                continue;
            };
            let addressed = addressed_of(file);
            // `passed`: what the pipeline let through; `shown`: what of it reached the agent.
            let outcome: Result<(LineSet, LineSet), DiscardReason> = match stream {
                Stream::Lines { seq, .. } => {
                    let passed = LineSet::from_intervals(seq.iter().copied());
                    match observation.and_then(|o| o.elided.as_ref()) {
                        None => Ok((passed.clone(), passed)),
                        Some(elided) if visible_pipelines == 1 => {
                            let total = commands::seq_len(seq);
                            let head = text_lines(&elided.head).min(total);
                            let tail = text_lines(&elided.tail).min(total - head);
                            let mut positions: Vec<Interval> =
                                Interval::new(1, head).into_iter().collect();
                            positions.extend(Interval::new(total - tail + 1, total));
                            let kept = LineSet::from_intervals(commands::pick(seq, &positions));
                            Ok((passed, kept))
                        }
                        Some(_) => Err(unmappable(
                            "output cut by the harness and shared by several commands",
                        )),
                    }
                }
                Stream::Subset { seq, prefixes } => match observation {
                    None => Err(unmappable("no output recorded")),
                    Some(_) if !output_shareable => {
                        Err(unmappable("several commands share one output"))
                    }
                    Some(_) if !prefixes.iter().any(|p| p.map.is_some()) => {
                        Err(unmappable("filtered output carries no line numbers"))
                    }
                    Some(o) => {
                        let within = LineSet::from_intervals(seq.iter().copied());
                        let shown = LineSet::from_lines(numbered_lines(&o.text, prefixes))
                            .intersection(&within);
                        Ok((shown.clone(), shown))
                    }
                },
                Stream::Tagged { .. } => Err(unmappable("search output without its file")),
                Stream::Opaque(why) => Err(unmappable(why)),
            };
            match outcome {
                Ok((passed, shown)) => {
                    let filtered = addressed.difference(&passed);
                    let cut = passed.difference(&shown);
                    self.read(step, file, shown);
                    if !filtered.is_empty() {
                        let reason = DiscardReason::Filtered(e.shape.clone());
                        self.discard(step, Some(file), &file.path, reason, Some(filtered));
                    }
                    if !cut.is_empty() {
                        self.discard(step, Some(file), &file.path, DiscardReason::Cut, Some(cut));
                    }
                }
                Err(reason) => self.discard(step, Some(file), &file.path, reason, Some(addressed)),
            }
        }
    }

    /// Evaluate one pipeline: its source's file operands and selection, then every filter.
    fn evaluate(
        &mut self,
        step: &Step,
        pipeline: &shell::Pipeline,
        cwd: &Cwd,
    ) -> Option<Evaluated> {
        let (source, search, filters) = pipeline_source(pipeline)?;
        let files: Vec<FileRef> = source
            .files
            .iter()
            .filter_map(|w| self.file_operand(step, w, cwd, search))
            .collect();
        let (addressed, mut outputs) = match &source.kind {
            SourceKind::Content(selector) => content_streams(selector, &files),
            SourceKind::Search(options) => search_streams(options, &files),
        };
        let filters = &pipeline.commands[filters..];
        join_streams(&source.kind, !filters.is_empty(), &mut outputs);
        for stage in filters {
            apply_stage(stage, &mut outputs);
        }
        Some(Evaluated {
            shape: pipeline_shape(pipeline, search, &outputs),
            cwd: cwd.clone(),
            visible: pipeline.output_visible(),
            addressed,
            search,
            outputs,
        })
    }

    /// Lines of a tagged search output (`path:12:text`, `path-12-text`) that name a snapshot
    /// file. The split between path and number is found by trying each `:N:`/`-N-` position
    /// until the prefix is a file, since paths may contain `-` and digits.
    fn tagged_lines(&mut self, text: &str, cwd: &Cwd) -> Vec<(FileRef, u64)> {
        let Cwd::Known(dir) = cwd else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for line in text.lines() {
            let bytes = line.as_bytes();
            for (i, &b) in bytes.iter().enumerate() {
                if b != b':' && b != b'-' || i == 0 {
                    continue;
                }
                let digits = bytes[i + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                if digits == 0 || bytes.get(i + 1 + digits) != Some(&b) {
                    continue;
                }
                let candidate = &line[..i];
                let Resolved::Repo(path) = self.resolver.resolve(candidate, dir.as_deref()) else {
                    continue;
                };
                if paths::is_temporary(&path) {
                    break;
                }
                if let Some(count) = self.repo.line_count(&path) {
                    let number: u64 = line[i + 1..i + 1 + digits].parse().unwrap_or(0);
                    if number >= 1 {
                        found.push((FileRef { path, count }, number));
                    }
                    break;
                }
            }
        }
        found
    }
}

/// A pipeline's source command, whether it is a search, and the position of its first filter.
/// `find … | xargs grep -n x` is a search over the files named on stdin, its filters after the
/// `xargs` stage.
fn pipeline_source(pipeline: &shell::Pipeline) -> Option<(commands::Source, bool, usize)> {
    let (name, args, _) = commands::program(&pipeline.commands[0])?;
    if let Some(source) = commands::source(&name, args) {
        let search = matches!(source.kind, SourceKind::Search(_));
        return Some((source, search, 1));
    }
    let (position, options) = pipeline.commands[1..]
        .iter()
        .enumerate()
        .find_map(|(i, c)| {
            let (n, a, from_xargs) = commands::program(c)?;
            from_xargs
                .then(|| commands::xargs_search(&n, a))
                .flatten()
                .map(|o| (i, o))
        })?;
    let source = commands::Source {
        files: Vec::new(),
        kind: SourceKind::Search(options),
    };
    Some((source, true, 2 + position))
}

/// What each file of a content source (`cat`, `sed -n`, `head`, …) addresses and puts out: the
/// selected lines, numbered when the program numbers them; a selection it cannot tell is the
/// whole file addressed and an opaque stream.
fn content_streams(selector: &commands::Selector, files: &[FileRef]) -> (Addressed, Outputs) {
    let mut addressed = Vec::new();
    let mut outputs = Vec::new();
    for file in files {
        match selector.positions(file.count) {
            Ok((seq, repeats)) => {
                addressed.push((file.clone(), LineSet::from_intervals(seq.iter().copied())));
                let prefixes = match selector {
                    commands::Selector::Whole {
                        prefix: Some(style),
                    } => vec![Prefix {
                        style: style.clone(),
                        map: Some(seq.clone()),
                    }],
                    _ => Vec::new(),
                };
                let stream = Stream::Lines {
                    seq,
                    repeats,
                    prefixes,
                };
                outputs.push((Some(file.clone()), stream));
            }
            Err(why) => {
                addressed.push((file.clone(), LineSet::whole(file.count)));
                outputs.push((Some(file.clone()), Stream::Opaque(why)));
            }
        }
    }
    (addressed, outputs)
}

/// What a search source addresses (every file whole) and puts out: nothing per file with `-l`
/// and the like, one tagged stream when lines name their files, else the one file's matching
/// lines (a subset, numbered with `-n`).
fn search_streams(options: &commands::SearchOptions, files: &[FileRef]) -> (Addressed, Outputs) {
    let addressed = files
        .iter()
        .map(|file| (file.clone(), LineSet::whole(file.count)))
        .collect();
    let mut outputs = Vec::new();
    if options.no_lines {
        for file in files {
            let stream = Stream::Lines {
                seq: Vec::new(),
                repeats: false,
                prefixes: Vec::new(),
            };
            outputs.push((Some(file.clone()), stream));
        }
    } else if options.with_filename {
        let stream = Stream::Tagged {
            numbered: options.numbered,
        };
        outputs.push((None, stream));
    } else if let [file] = files {
        let seq: Vec<Interval> = Interval::new(1, file.count).into_iter().collect();
        let prefixes = if options.numbered {
            vec![Prefix {
                style: PrefixStyle::GrepNumber,
                map: Some(seq.clone()),
            }]
        } else {
            Vec::new()
        };
        outputs.push((Some(file.clone()), Stream::Subset { seq, prefixes }));
    }
    (addressed, outputs)
}

/// Streams that one output mixes become opaque: without -s, sed numbers the concatenation of its
/// files, so only the first file's lines are where the script says; and a filter after several
/// files sees one stream it cannot split.
fn join_streams(kind: &SourceKind, filtered: bool, outputs: &mut Outputs) {
    if matches!(kind, SourceKind::Content(commands::Selector::Sed(_))) {
        for (_, stream) in outputs.iter_mut().skip(1) {
            *stream = Stream::Opaque("sed joins several files into one stream".into());
        }
    }
    if filtered && outputs.len() > 1 {
        for (_, stream) in outputs.iter_mut() {
            *stream = Stream::Opaque("several files in one stream".into());
        }
    }
}

/// One filter stage of a pipeline applied to every stream.
fn apply_stage(stage: &shell::SimpleCommand, outputs: &mut Outputs) {
    let filter = match commands::program(stage) {
        Some((n, a, false)) => commands::filter(&n, a),
        Some((n, _, true)) => commands::Filter::Opaque(format!("xargs {n}")),
        None => commands::Filter::Opaque("empty command".into()),
    };
    for (_, stream) in outputs.iter_mut() {
        *stream = apply(
            std::mem::replace(stream, Stream::Opaque(String::new())),
            &filter,
        );
    }
}

/// The programs of a pipeline, source first (`nl | sed`), for reports; a lone search of one file
/// says so.
fn pipeline_shape(pipeline: &shell::Pipeline, search: bool, outputs: &Outputs) -> String {
    let mut shape: Vec<String> = pipeline
        .commands
        .iter()
        .filter_map(|c| commands::program(c).map(|(n, _, _)| n))
        .collect();
    if search
        && shape.len() == 1
        && outputs
            .iter()
            .any(|(_, s)| matches!(s, Stream::Subset { .. }))
    {
        shape[0].push_str(" (one file)");
    }
    shape.join(" | ")
}

/// Apply a mid-pipeline command to a stream.
fn apply(stream: Stream, filter: &commands::Filter) -> Stream {
    use commands::Filter;
    match (stream, filter) {
        (s @ Stream::Opaque(_), _) => s,
        (_, Filter::Opaque(why)) => Stream::Opaque(why.clone()),
        (s, Filter::Identity) => s,
        (
            Stream::Lines {
                seq,
                repeats,
                mut prefixes,
            },
            Filter::Number(style),
        ) => {
            prefixes.push(Prefix {
                style: style.clone(),
                map: (!repeats).then(|| seq.clone()),
            });
            Stream::Lines {
                seq,
                repeats,
                prefixes,
            }
        }
        (Stream::Subset { seq, mut prefixes }, Filter::Number(style)) => {
            prefixes.push(Prefix {
                style: style.clone(),
                map: None,
            });
            Stream::Subset { seq, prefixes }
        }
        (Stream::Tagged { .. }, Filter::Number(_)) => {
            Stream::Opaque("numbered search output".into())
        }
        (
            Stream::Lines {
                seq,
                repeats,
                prefixes,
            },
            Filter::Position(selector),
        ) => {
            if repeats {
                return Stream::Opaque("positions unclear after repeated lines".into());
            }
            match selector.positions(commands::seq_len(&seq)) {
                Ok((positions, again)) => Stream::Lines {
                    seq: commands::pick(&seq, &positions),
                    repeats: again,
                    prefixes,
                },
                Err(why) => Stream::Opaque(why),
            }
        }
        // Keeping lines of an unknown subset by position leaves an unknown subset.
        (s @ (Stream::Subset { .. } | Stream::Tagged { .. }), Filter::Position(_)) => s,
        (Stream::Lines { .. } | Stream::Subset { .. }, Filter::Search { no_lines: true, .. }) => {
            Stream::Lines {
                seq: Vec::new(),
                repeats: false,
                prefixes: Vec::new(),
            }
        }
        (Stream::Tagged { .. }, Filter::Search { no_lines: true, .. }) => {
            Stream::Opaque("search prints no lines".into())
        }
        (
            Stream::Lines {
                seq,
                repeats,
                mut prefixes,
            },
            Filter::Search {
                numbered,
                only_matching,
                ..
            },
        ) => {
            if *only_matching {
                prefixes.clear();
            }
            if *numbered {
                prefixes.push(Prefix {
                    style: PrefixStyle::GrepNumber,
                    map: (!repeats).then(|| seq.clone()),
                });
            }
            Stream::Subset { seq, prefixes }
        }
        (
            Stream::Subset { seq, mut prefixes },
            Filter::Search {
                numbered,
                only_matching,
                ..
            },
        ) => {
            if *only_matching {
                prefixes.clear();
            }
            if *numbered {
                prefixes.push(Prefix {
                    style: PrefixStyle::GrepNumber,
                    map: None,
                });
            }
            Stream::Subset { seq, prefixes }
        }
        (
            Stream::Tagged { numbered },
            Filter::Search {
                numbered: false,
                only_matching: false,
                ..
            },
        ) => Stream::Tagged { numbered },
        (Stream::Tagged { .. }, Filter::Search { .. }) => {
            Stream::Opaque("search output rewritten by a second search".into())
        }
        (Stream::Lines { seq, prefixes, .. }, Filter::Reorder) => Stream::Subset { seq, prefixes },
        (s @ (Stream::Subset { .. } | Stream::Tagged { .. }), Filter::Reorder) => s,
    }
}

/// File lines named by the numbered lines of `text`: each line's prefixes are stripped from the
/// outermost (last added) inwards until one whose numbering maps to file lines.
fn numbered_lines(text: &str, prefixes: &[Prefix]) -> Vec<u64> {
    let mut lines = Vec::new();
    'line: for line in text.lines() {
        let mut rest = line;
        for prefix in prefixes.iter().rev() {
            let Some((number, after)) = strip_number(rest, &prefix.style) else {
                continue 'line;
            };
            if let Some(map) = &prefix.map {
                if let Some(file_line) = commands::nth_line(map, number) {
                    lines.push(file_line);
                }
                continue 'line;
            }
            rest = after;
        }
    }
    lines
}

fn strip_number<'t>(line: &'t str, style: &PrefixStyle) -> Option<(u64, &'t str)> {
    match style {
        PrefixStyle::Counter { sep } => {
            let trimmed = line.trim_start_matches(' ');
            let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
            let rest = trimmed[digits..].strip_prefix(sep.as_str())?;
            Some((trimmed[..digits].parse().ok()?, rest))
        }
        PrefixStyle::GrepNumber => {
            let digits = line.bytes().take_while(u8::is_ascii_digit).count();
            let rest = line[digits..].strip_prefix([':', '-'])?;
            Some((line[..digits].parse().ok()?, rest))
        }
    }
}

/// Number of lines a text shows, a final partial line included.
fn text_lines(text: &str) -> u64 {
    text.lines().count() as u64
}

/// A SWE-agent window: the file its header names and the line numbers it prints.
fn parse_window(text: &str) -> (Option<String>, Vec<u64>) {
    static HEADER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)^\[File: (.+?) \(\d+ lines total\)\]").expect("valid regex")
    });
    static FOUND: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"(?m)^Found \d+ matches for ".*" in (.+?):?\s*$"#).expect("valid regex")
    });
    static NUMBERED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?m)^(?:Line )?(\d+):").expect("valid regex"));
    let path = HEADER
        .captures(text)
        .or_else(|| FOUND.captures(text))
        .map(|c| c[1].to_string());
    let lines = NUMBERED
        .captures_iter(text)
        .filter_map(|c| c[1].parse().ok())
        .collect();
    (path, lines)
}
