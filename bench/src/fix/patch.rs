//! Unified diffs as `git diff` writes them (SWE-bench's `patch`, Multi-SWE-bench's `fix_patch`):
//! parsed into files and hunks, read as the pre-fix lines they edit, and applied to a pre-fix text.
//!
//! Rules (docs/dataset.md, "Ground truth from the fix"):
//! - a file section starts at `diff --git a/X b/Y`, or at `--- ` directly followed by `+++ ` in a
//!   plain unified diff; `a/` and `b/` prefixes are dropped, `/dev/null` marks a created or
//!   deleted file, and `new file mode` / `deleted file mode` say the same;
//! - a hunk `@@ -a,b +c,d @@` holds exactly `b` old and `d` new lines (`,b` absent means 1); a
//!   `\ No newline at end of file` line is skipped; a hunk shorter than its header says is an error;
//! - binary sections (`Binary files … differ`, `GIT binary patch`) carry no lines;
//! - line numbers are git's: lines end at `\n`. The ground truth counts `str.splitlines()` lines
//!   (`swex_text::lines`), which part from these only where a line holds a lone `\r` or another
//!   boundary `\n` lines do not break at; with the pre-fix text at hand, [`FilePatch::edited_lines_in`]
//!   and [`FilePatch::claims_in`] give the edit in those lines.
//!
//! Edited pre-fix lines: every removed line; for a run of added lines with no removed line in the
//! same change (between two context lines), the pre-fix lines it is inserted between, `a` and
//! `a + 1`, as far as they exist in the hunk's old range (an insertion at the top of a file marks
//! line 1).
//!
//! This module knows text only: no files, no repositories.

use std::fmt;

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    Context(String),
    Removed(String),
    Added(String),
}

/// One `@@` hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: u64,
    pub old_len: u64,
    pub new_start: u64,
    pub new_len: u64,
    pub lines: Vec<HunkLine>,
}

/// The changes of one file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FilePatch {
    /// The pre-fix path; `None` for a file the fix creates.
    pub old_path: Option<String>,
    /// The post-fix path; `None` for a file the fix deletes.
    pub new_path: Option<String>,
    pub hunks: Vec<Hunk>,
    /// A binary change: no hunks to read.
    pub binary: bool,
}

impl FilePatch {
    /// The path that names the file in the ground truth: the pre-fix path, or the new path of a
    /// created file.
    pub fn path(&self) -> &str {
        self.old_path
            .as_deref()
            .or(self.new_path.as_deref())
            .unwrap_or_default()
    }

    /// Whether the file exists before the fix.
    pub fn is_new(&self) -> bool {
        self.old_path.is_none()
    }

    /// The pre-fix lines the fix edits (see the module docs), in the patch's `\n` lines, sorted
    /// and distinct.
    pub fn edited_lines(&self) -> Vec<u64> {
        self.edited_lines_in(&[])
    }

    /// [`Self::edited_lines`] in the `str.splitlines()` lines of the pre-fix text, given its
    /// [`swex_text::newline_line_spans`]: a removed line marks every splitlines line it holds, an
    /// insertion the splitlines lines it falls between. `\n`-lines past `spans` keep their number
    /// (`&[]`: the patch's own numbering).
    pub fn edited_lines_in(&self, spans: &[[u32; 2]]) -> Vec<u64> {
        let (removed, insertions) = self.claims_in(spans);
        let mut lines: Vec<u64> = removed;
        for (after, before) in insertions {
            if after >= 1 {
                lines.push(after);
            }
            lines.extend(before);
        }
        lines.sort_unstable();
        lines.dedup();
        lines
    }

    /// What the fix touches in the pre-fix text's splitlines lines (as [`Self::edited_lines_in`]):
    /// every line a removed `\n`-line holds, in patch order; and per pure insertion, the line it
    /// follows (`0`: at the top) and the line it comes before, if that is in the hunk's old range.
    pub fn claims_in(&self, spans: &[[u32; 2]]) -> (Vec<u64>, Vec<(u64, Option<u64>)>) {
        let span = |line: u64| -> [u64; 2] {
            match usize::try_from(line - 1).ok().and_then(|i| spans.get(i)) {
                Some(&[first, last]) => [u64::from(first), u64::from(last)],
                None => [line, line],
            }
        };
        let (mut removed, mut insertions) = (Vec::new(), Vec::new());
        for change in self.changes() {
            match change {
                Change::Removed(line) => {
                    let [first, last] = span(line);
                    removed.extend(first..=last);
                }
                Change::Inserted {
                    after,
                    before_exists,
                } => insertions.push((
                    if after >= 1 { span(after)[1] } else { 0 },
                    before_exists.then(|| span(after + 1)[0]),
                )),
            }
        }
        (removed, insertions)
    }

    /// Every removed line, and every pure insertion, in patch order.
    fn changes(&self) -> impl Iterator<Item = Change> + '_ {
        self.hunks.iter().flat_map(|hunk| {
            let mut out = Vec::new();
            // An empty old range starts *after* line `old_start`.
            let first = if hunk.old_len == 0 {
                hunk.old_start + 1
            } else {
                hunk.old_start
            };
            let old_end = first + hunk.old_len; // one past the hunk's last old line
            let mut old = first; // the next old line
            let mut i = 0;
            while i < hunk.lines.len() {
                if let HunkLine::Context(_) = hunk.lines[i] {
                    old += 1;
                    i += 1;
                    continue;
                }
                // A change: a maximal run of removed and added lines between context lines.
                let before = old;
                let mut removed = false;
                while i < hunk.lines.len() && !matches!(hunk.lines[i], HunkLine::Context(_)) {
                    if let HunkLine::Removed(_) = hunk.lines[i] {
                        out.push(Change::Removed(old));
                        old += 1;
                        removed = true;
                    }
                    i += 1;
                }
                if !removed {
                    out.push(Change::Inserted {
                        after: before - 1,
                        before_exists: before < old_end,
                    });
                }
            }
            out
        })
    }

    /// The post-fix text: `old` with the hunks applied. Every context and removed line must match
    /// the pre-fix text where the hunk says it is.
    pub fn apply(&self, old: &str) -> Result<String, ApplyError> {
        let old_lines: Vec<&str> = if old.is_empty() {
            Vec::new()
        } else {
            old.split_terminator('\n').collect()
        };
        let mut out: Vec<&str> = Vec::with_capacity(old_lines.len());
        let mut next = 0usize; // index of the next old line not yet copied
        for (number, hunk) in self.hunks.iter().enumerate() {
            // An empty old range starts *after* line `old_start`.
            let start = if hunk.old_len == 0 {
                hunk.old_start as usize
            } else {
                (hunk.old_start as usize).saturating_sub(1)
            };
            if start < next {
                return Err(ApplyError {
                    hunk: number + 1,
                    line: hunk.old_start,
                    expected: String::new(),
                    found: None,
                });
            }
            if start > old_lines.len() {
                let expected = hunk.lines.iter().find_map(|l| match l {
                    HunkLine::Context(t) | HunkLine::Removed(t) => Some(t.clone()),
                    HunkLine::Added(_) => None,
                });
                return Err(ApplyError {
                    hunk: number + 1,
                    line: hunk.old_start,
                    expected: expected.unwrap_or_default(),
                    found: None,
                });
            }
            out.extend_from_slice(&old_lines[next..start]);
            let mut at = start;
            for line in &hunk.lines {
                match line {
                    HunkLine::Context(text) | HunkLine::Removed(text) => {
                        let found = old_lines.get(at).copied();
                        if found.map(|f| f.trim_end_matches('\r'))
                            != Some(text.trim_end_matches('\r'))
                        {
                            return Err(ApplyError {
                                hunk: number + 1,
                                line: at as u64 + 1,
                                expected: text.clone(),
                                found: found.map(str::to_string),
                            });
                        }
                        if let HunkLine::Context(_) = line {
                            out.push(old_lines[at]);
                        }
                        at += 1;
                    }
                    HunkLine::Added(text) => out.push(text),
                }
            }
            next = at;
        }
        out.extend_from_slice(&old_lines[next.min(old_lines.len())..]);
        let mut text = out.join("\n");
        if !out.is_empty() {
            text.push('\n');
        }
        Ok(text)
    }
}

enum Change {
    Removed(u64),
    /// Lines inserted after pre-fix line `after`; `before_exists` when line `after + 1` is in the
    /// hunk's old range (not past the end of the file).
    Inserted {
        after: u64,
        before_exists: bool,
    },
}

/// A hunk that does not match the pre-fix text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyError {
    /// 1-based hunk number in its file.
    pub hunk: usize,
    /// The pre-fix line where it stopped matching.
    pub line: u64,
    pub expected: String,
    /// `None`: the file ends before.
    pub found: Option<String>,
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.found {
            Some(found) => write!(
                f,
                "hunk {} does not apply at line {}: the patch expects {:?}, the file has {:?}",
                self.hunk,
                self.line,
                shorten(&self.expected),
                shorten(found)
            ),
            None if self.expected.is_empty() => {
                write!(
                    f,
                    "hunk {} does not apply at line {}: it overlaps the hunk before or the file ends before",
                    self.hunk, self.line
                )
            }
            None => write!(
                f,
                "hunk {} does not apply at line {}: the file ends before {:?}",
                self.hunk,
                self.line,
                shorten(&self.expected)
            ),
        }
    }
}

fn shorten(text: &str) -> String {
    text.chars().take(60).collect()
}

/// A patch that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("patch line {line}: {message}")]
pub struct PatchError {
    /// 1-based line of the patch text.
    pub line: usize,
    pub message: String,
}

/// Parses a unified diff into its files, in patch order.
pub fn parse(patch: &str) -> Result<Vec<FilePatch>, PatchError> {
    let lines: Vec<&str> = patch.split_terminator('\n').collect();
    let error = |line: usize, message: String| PatchError {
        line: line + 1,
        message,
    };
    let mut files: Vec<FilePatch> = Vec::new();
    // A `diff --git` header whose `---`/`+++` pair has not come yet: the pair refines its names.
    let mut git_header_open = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end_matches('\r');
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let (a, b) = split_git_header(rest)
                .ok_or_else(|| error(i, format!("cannot read the file names of {line:?}")))?;
            files.push(FilePatch {
                old_path: Some(a),
                new_path: Some(b),
                ..FilePatch::default()
            });
            git_header_open = true;
            i += 1;
            continue;
        }
        if line.starts_with("--- ")
            && lines
                .get(i + 1)
                .is_some_and(|next| next.starts_with("+++ "))
        {
            let old = header_path(&line[4..]);
            let new = header_path(lines[i + 1].trim_end_matches('\r')[4..].trim_end());
            match files.last_mut() {
                Some(file) if git_header_open => {
                    file.old_path = old;
                    file.new_path = new;
                }
                _ => files.push(FilePatch {
                    old_path: old,
                    new_path: new,
                    ..FilePatch::default()
                }),
            }
            git_header_open = false;
            i += 2;
            continue;
        }
        if line.starts_with("@@") {
            git_header_open = false;
            let file = files
                .last_mut()
                .ok_or_else(|| error(i, "a hunk before any file header".into()))?;
            let (old_start, old_len, new_start, new_len) = hunk_header(line)
                .ok_or_else(|| error(i, format!("cannot read the hunk header {line:?}")))?;
            let mut hunk = Hunk {
                old_start,
                old_len,
                new_start,
                new_len,
                lines: Vec::new(),
            };
            let (mut old_left, mut new_left) = (old_len, new_len);
            i += 1;
            while old_left > 0 || new_left > 0 {
                let Some(&raw) = lines.get(i) else {
                    return Err(error(
                        i,
                        format!(
                            "hunk `{line}` ends early: {old_left} old and {new_left} new lines missing"
                        ),
                    ));
                };
                i += 1;
                let text = raw.strip_suffix('\r').unwrap_or(raw);
                let (tag, body) = match text.chars().next() {
                    Some(c) => (c, &raw[1..]),
                    // An empty line stands for an empty context line (some tools strip the space).
                    None => (' ', ""),
                };
                match tag {
                    ' ' if old_left > 0 && new_left > 0 => {
                        old_left -= 1;
                        new_left -= 1;
                        hunk.lines.push(HunkLine::Context(body.to_string()));
                    }
                    '-' if old_left > 0 => {
                        old_left -= 1;
                        hunk.lines.push(HunkLine::Removed(body.to_string()));
                    }
                    '+' if new_left > 0 => {
                        new_left -= 1;
                        hunk.lines.push(HunkLine::Added(body.to_string()));
                    }
                    '\\' => {}
                    _ => {
                        return Err(error(
                            i - 1,
                            format!(
                                "hunk `{line}` ends early: {old_left} old and {new_left} new lines missing"
                            ),
                        ));
                    }
                }
            }
            file.hunks.push(hunk);
            continue;
        }
        if let Some(file) = files.last_mut() {
            if line.starts_with("new file mode") {
                file.old_path = None;
            } else if line.starts_with("deleted file mode") {
                file.new_path = None;
            } else if let Some(from) = line.strip_prefix("rename from ") {
                file.old_path = Some(unquote(from));
            } else if let Some(to) = line.strip_prefix("rename to ") {
                file.new_path = Some(unquote(to));
            } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
                file.binary = true;
            }
        }
        i += 1;
    }
    if files.is_empty() && !patch.trim().is_empty() {
        return Err(PatchError {
            line: 1,
            message: "no file header (`diff --git` or `---`/`+++`) in the patch".into(),
        });
    }
    for file in &mut files {
        file.old_path = file.old_path.take().filter(|p| !p.is_empty());
        file.new_path = file.new_path.take().filter(|p| !p.is_empty());
    }
    Ok(files)
}

fn split_git_header(rest: &str) -> Option<(String, String)> {
    let rest = rest.trim_end();
    if let Some(quoted) = rest.strip_prefix('"') {
        let end = quoted.find('"')? + 1;
        let a = unquote(&rest[..=end]);
        let b = unquote(rest[end + 1..].trim_start());
        return Some((strip_side(&a, "a/"), strip_side(&b, "b/")));
    }
    // `a/X b/X`: the names are equal unless renamed, so split at the middle ` b/` when it is.
    let bytes = rest.len();
    if bytes % 2 == 1 {
        let half = bytes / 2;
        if &rest[half..half + 1] == " "
            && rest[..half].strip_prefix("a/") == rest[half + 1..].strip_prefix("b/")
        {
            return Some((rest[2..half].to_string(), rest[half + 3..].to_string()));
        }
    }
    let at = rest.find(" b/")?;
    Some((strip_side(&rest[..at], "a/"), rest[at + 3..].to_string()))
}

fn strip_side(path: &str, side: &str) -> String {
    path.strip_prefix(side).unwrap_or(path).to_string()
}

fn header_path(raw: &str) -> Option<String> {
    // `--- a/x.py\t2020-01-01 ...`: a tab ends the name.
    let name = raw.split('\t').next().unwrap_or(raw).trim_end();
    let name = unquote(name);
    if name == "/dev/null" {
        return None;
    }
    Some(
        name.strip_prefix("a/")
            .or_else(|| name.strip_prefix("b/"))
            .unwrap_or(&name)
            .to_string(),
    )
}

/// Drops the quotes git puts around a name with special characters (escapes other than `\"` and
/// `\\` are kept as written).
fn unquote(name: &str) -> String {
    let name = name.trim();
    match name.strip_prefix('"').and_then(|n| n.strip_suffix('"')) {
        Some(inner) => inner.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => name.to_string(),
    }
}

fn hunk_header(line: &str) -> Option<(u64, u64, u64, u64)> {
    let body = line.strip_prefix("@@ -")?;
    let (ranges, _) = body.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |r: &str| -> Option<(u64, u64)> {
        match r.split_once(',') {
            Some((s, l)) => Some((s.parse().ok()?, l.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old)?;
    let (c, d) = range(new)?;
    Some((a, b, c, d))
}
