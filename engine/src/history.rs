//! Repository history: what the commits that changed a file said, searchable by an issue.
//!
//! A fix usually lands in a file whose earlier commits were about the same thing: an issue about
//! `floatformat` rounding matches "Fixed #35627 -- … floatformat …" in the log of
//! `django/template/defaultfilters.py` even when the file's code shares few words with the issue.
//! On the train rows (docs/ranker.md, "Repository history") this is the strongest file-ranking
//! signal after the linear ranking itself.
//!
//! - [`HistorySource`]: where a checkout's history is — a `swex snapshot` folder's marker names
//!   its git directory and commit; a git work tree has its `HEAD` (commits that touched the
//!   folder the checkout's root is, paths relative to it); anything else has none.
//! - [`FileHistory::build`]: one `git log` of the last [`HistoryLimits::max_commits`] non-merge
//!   commits reachable from the commit (never later ones: a benchmark snapshot sees only the
//!   past of its base commit), each file's document the messages of its newest
//!   [`HistoryLimits::messages_per_file`] commits, cut into [`terms`]. A commit without parents
//!   (a root commit, or the boundary of a shallow clone such as a one-commit fetch) is left out:
//!   it "adds" every file, so its message would be every file's. A clone that lacks old objects
//!   (a partial mirror) gives the commits before the first one it cannot read.
//! - [`FileHistory::load_or_build`]: cached by commit, folder and limits (a commit's ancestry
//!   never changes, so the key is its content), as a checksummed entry ([`crate::cache::entry`])
//!   in a flat layout that is searched in place: reading it costs one file read and a checksum.
//!   All entries together stay under [`HISTORY_CACHE_BYTES`] (the least recently used go), and a
//!   write removes the folders of older format versions. A work tree that moved on by a chain of
//!   commits since its history was last read extends that one with a `git log` of the new
//!   commits alone, to the same bytes ([`FileHistory::load_or_build_from`]).
//! - [`FileHistory::search`]: BM25 of a query's distinct terms against the documents of the given
//!   files, with the statistics (document frequencies, mean length) of those files: the scores
//!   rank the files a caller compares, whatever the rest of the repository did. And each file's
//!   share of the query's *similar commits*: the [`SIMILAR_COMMITS`] commits whose own messages
//!   match the query best (BM25 over the commits), each giving the files it changed its score
//!   over the best one's, divided by the square root of how many files it changed. A file's
//!   document mixes up to 200 messages; one commit that reads like the issue names its files
//!   more sharply (docs/ranker.md, "Similar commits"); with how much of the query the most
//!   similar commit says ([`HistorySearch::similar_coverage`]). And each file's share of the commits
//!   that name an issue or pull request the query names ([`references`]: `#1234`, a
//!   `…/issues/1234` link), kept as terms of their own that no word of a query is, so they
//!   change no BM25 score (docs/ranker.md, "Issues the issue refers to").
//!
//! Knows git's log format and nothing of plugins or explorers; the host serves it as the
//! `history_search` service.

use crate::cache::entry::{read_entry, write_entry};
use crate::snapshot;
use crate::snapshot::git::GitDir;
use rustc_hash::FxHashMap;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use swex_text::identifiers::{Digits, identifier_parts};
use swex_text::stopwords::StopList;

/// Why a checkout has no searchable history, or why reading it failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// The checkout has no history to read: not a git work tree nor a `swex snapshot` folder,
    /// or the git directory its marker names is gone.
    #[error("no repository history: {0}")]
    Absent(String),
    /// `git` could not be run or failed.
    #[error("reading the repository history failed: {0}")]
    Git(String),
}

/// How much history a document holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryLimits {
    /// The newest non-merge commits read.
    pub max_commits: usize,
    /// The newest commit messages of one file that make its document.
    pub messages_per_file: usize,
    /// The most bytes of `git log` output read (a history of huge commits is cut, not held in
    /// memory whole): the commits read before it are kept.
    pub max_log_bytes: u64,
    /// At most this many new commits extend the history last read
    /// ([`FileHistory::load_or_build_from`]); a checkout further on is read whole. Not part of
    /// what a history holds: either way gives the same bytes.
    pub extend_commits: usize,
}

impl Default for HistoryLimits {
    /// The limits of the measurement in docs/ranker.md ("Repository history").
    fn default() -> Self {
        HistoryLimits {
            max_commits: 3000,
            messages_per_file: 200,
            max_log_bytes: 64 << 20,
            extend_commits: 100,
        }
    }
}

/// Where a checkout's history is: a git directory, a commit, and the folder of the repository the
/// checkout's root is (`""` for the whole repository; with a trailing `/` otherwise).
///
/// Finding it runs no `git` for a snapshot (its marker says all) nor, mostly, in a work tree
/// (its `HEAD` is read from its files: [`snapshot::read_work_tree_head`]; other layouts ask
/// `git rev-parse`); the git directory is opened only to build a history the cache does not
/// hold.
#[derive(Debug, Clone)]
pub struct HistorySource {
    git_dir: PathBuf,
    commit: String,
    prefix: String,
}

impl HistorySource {
    /// The history of the checkout at `root` (see the module overview).
    pub fn of_checkout(root: &Path) -> Result<HistorySource, HistoryError> {
        let absent = |why: String| HistoryError::Absent(why);
        if let Some(marker) = snapshot::marker_at(root) {
            return Ok(HistorySource {
                git_dir: PathBuf::from(marker.git_dir),
                commit: marker.report.commit,
                prefix: String::new(),
            });
        }
        if snapshot::work_tree_top(root).is_none() {
            return Err(absent(format!(
                "{} is neither a git work tree nor a swex snapshot",
                root.display()
            )));
        }
        if let Some(head) = snapshot::read_work_tree_head(root) {
            return Ok(HistorySource {
                git_dir: head.git_dir,
                commit: head.commit,
                prefix: head.prefix,
            });
        }
        // Other layouts: one call for the git directory, the root's folder in the repository,
        // and `HEAD`.
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args([
                "rev-parse",
                "--absolute-git-dir",
                "--show-prefix",
                "--verify",
                "HEAD",
            ])
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| HistoryError::Git(format!("cannot run git: {e}")))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        match (
            out.status.success(),
            lines.next(),
            lines.next(),
            lines.next(),
        ) {
            (true, Some(git_dir), Some(prefix), Some(commit)) => Ok(HistorySource {
                git_dir: PathBuf::from(git_dir),
                commit: commit.to_owned(),
                prefix: prefix.to_owned(),
            }),
            _ => Err(absent(format!(
                "no commit to read in the work tree at {} ({})",
                root.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            ))),
        }
    }

    /// The commit whose past is read.
    pub fn commit(&self) -> &str {
        &self.commit
    }

    /// The cache key: what the history's content depends on.
    fn key(&self, limits: &HistoryLimits) -> String {
        let identity = format!(
            "{}\0{}\0{}\0{}\0{}\0{}",
            crate::formats::HISTORY_FORMAT_VERSION,
            self.commit,
            self.prefix,
            limits.max_commits,
            limits.messages_per_file,
            limits.max_log_bytes
        );
        blake3::hash(identity.as_bytes()).to_hex()[..32].to_string()
    }

    /// `git log` of the commit: each commit's message and the files it changed (under the
    /// prefix, relative to it), newest first.
    fn log(&self, limits: &HistoryLimits) -> Result<Vec<(String, Vec<String>)>, HistoryError> {
        let git = self.git()?;
        let mut command = log_command(&git, &["--no-merges"], limits.max_commits, &self.commit);
        command.arg("--");
        if !self.prefix.is_empty() {
            command.arg(&self.prefix);
        }
        let spawn_error = |e: std::io::Error| HistoryError::Git(format!("cannot run git: {e}"));
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(spawn_error)?;
        // stderr is drained beside stdout, so that neither pipe can fill and stall git.
        let mut stderr = child.stderr.take().expect("piped");
        let errors = std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = (&mut stderr).take(64 * 1024).read_to_end(&mut text);
            let _ = std::io::copy(&mut stderr, &mut std::io::sink());
            text
        });
        let mut stdout = Vec::new();
        let read = child
            .stdout
            .take()
            .expect("piped")
            .take(limits.max_log_bytes + 1)
            .read_to_end(&mut stdout);
        let cut = stdout.len() as u64 > limits.max_log_bytes;
        if cut {
            // Enough history: the rest is older.
            let _ = child.kill();
        }
        let status = child.wait().map_err(spawn_error)?;
        let errors = errors.join().unwrap_or_default();
        read.map_err(spawn_error)?;
        let text = String::from_utf8_lossy(&stdout);
        let complete = status.success() && !cut;
        // Cut at the byte limit, or a clone without every old object (a partial or shallow
        // mirror) that stops where one is missing: the commits before the last record begun are
        // the newest history, whole.
        let whole = if complete {
            &text[..]
        } else {
            &text[..text.rfind('\x1e').unwrap_or(0)]
        };
        let commits: Vec<(String, Vec<String>)> = parse_log(whole, &self.prefix)
            .into_iter()
            .filter(|record| !record.parents.is_empty())
            .map(|record| (record.message, record.files))
            .collect();
        if !complete && !commits.is_empty() {
            return Ok(commits);
        }
        if !complete {
            return Err(HistoryError::Git(format!(
                "`git log {}` in {}: {}",
                self.commit,
                self.git_dir.display(),
                String::from_utf8_lossy(&errors).trim()
            )));
        }
        Ok(commits)
    }

    /// The git directory the history is in, opened (one `git rev-parse` checks it).
    fn git(&self) -> Result<GitDir, HistoryError> {
        GitDir::open(&self.git_dir).map_err(|e| {
            HistoryError::Absent(format!(
                "the history is in {}, which cannot be read ({e})",
                self.git_dir.display()
            ))
        })
    }

    /// The commits after `since` up to this source's commit, newest first, as (message, files),
    /// when they are a chain of at most `window` commits of one parent each whose oldest's parent
    /// is `since`: then a `git log` of this commit lists exactly them and then `since`'s own log
    /// (a linear walk has one commit to go on at each step). Found with a `git rev-list
    /// --first-parent --parents` of at most `window + 1` commits, which stops there and diffs
    /// nothing (a range `since..` would make git walk all of it first), then read with a `git
    /// log` of just those commits. `None` for anything else — a merge among them, `since` not on
    /// the chain (a branch switched, a rebase, more than `window` commits), a subfolder's history
    /// (path limiting skips commits of the chain), a `git` that fails — and the caller reads the
    /// whole log.
    fn log_since(&self, since: &str, window: usize) -> Option<Vec<(String, Vec<String>)>> {
        if !self.prefix.is_empty() {
            return None;
        }
        let run = |command: &mut std::process::Command| {
            let output = command
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .output()
                .ok()?;
            output
                .status
                .success()
                .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
        };
        let git = self.git().ok()?;
        let chain = run(git
            .command()
            .args(["rev-list", "--first-parent", "--parents"])
            .arg(format!("--max-count={}", window + 1))
            .arg(&self.commit)
            .arg("--"))?;
        // Each line: a commit, then its parents.
        let lines: Vec<Vec<&str>> = chain
            .lines()
            .map(|line| line.split_whitespace().collect())
            .collect();
        let new_commits = lines.iter().position(|ids| ids.first() == Some(&since))?;
        let one_parent_each = lines[..new_commits].iter().all(|ids| ids.len() == 2);
        if new_commits == 0 || !one_parent_each {
            return None;
        }
        let log = run(log_command(&git, &[], new_commits, &self.commit).arg("--"))?;
        let records = parse_log(&log, "");
        let as_listed = records
            .iter()
            .map(|record| record.hash.as_str())
            .eq(lines[..new_commits].iter().map(|ids| ids[0]));
        as_listed.then(|| {
            records
                .into_iter()
                .map(|record| (record.message, record.files))
                .collect()
        })
    }
}

/// A `git log` of `revision` in `git` in the format [`parse_log`] reads, at most `max_count`
/// commits, with `options` (the caller adds the paths).
fn log_command(
    git: &GitDir,
    options: &[&str],
    max_count: usize,
    revision: &str,
) -> std::process::Command {
    let mut command = git.command();
    command
        .args(["log", "--no-color", "--no-show-signature"])
        .args(options)
        .args(["--no-relative", "-z", "--name-only"])
        .arg("--format=%x1e%H %P%x1d%s%n%b%x1f")
        .arg(format!("--max-count={max_count}"))
        .arg(revision);
    command
}

/// One commit of a `git log` in [`log_command`]'s format.
#[derive(Debug, Clone, PartialEq)]
struct LogRecord {
    hash: String,
    parents: Vec<String>,
    message: String,
    files: Vec<String>,
}

/// Commits of `git log -z --name-only --format=%x1e%H %P%x1d%s%n%b%x1f`: each record is
/// `\x1e`, the commit and its parents, `\x1d`, the message, `\x1f`, then NUL-terminated file
/// names (git puts a newline before the first), those under `prefix` kept relative to it. The
/// documents leave out a commit without parents: a root commit, or the boundary of a shallow
/// clone (a one-commit fetch), "adds" every file of its tree, so its message would be every
/// file's, about none of them.
fn parse_log(text: &str, prefix: &str) -> Vec<LogRecord> {
    text.split('\x1e')
        .filter_map(|record| {
            let (head, names) = record.split_once('\x1f')?;
            let (ids, message) = head.split_once('\x1d')?;
            let mut ids = ids.split_whitespace().map(str::to_owned);
            let hash = ids.next()?;
            let files = names
                .split('\0')
                .map(|name| name.trim_start_matches('\n'))
                .filter_map(|name| name.strip_prefix(prefix))
                .filter(|name| !name.is_empty())
                .map(str::to_owned)
                .collect();
            Some(LogRecord {
                hash,
                parents: ids.collect(),
                message: message.to_owned(),
                files,
            })
        })
        .collect()
}

/// Calls `each` with the terms of `text`: every ASCII word (letters, digits and `_`, from its
/// first letter on, without trailing `_`) lowercased, and its identifier parts (`QuerySet` → `queryset`, `query`,
/// `set`), each once per word; three characters or more, not a stop word of the issue ranking
/// (`StopList::IssueRanking`). Commit messages and queries are cut alike.
pub fn terms(text: &str, mut each: impl FnMut(&str)) {
    let mut seen: Vec<String> = Vec::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        let word = word
            .trim_start_matches(|c: char| !c.is_ascii_alphabetic())
            .trim_end_matches('_');
        if word.len() < 2 {
            continue;
        }
        seen.clear();
        seen.push(word.to_ascii_lowercase());
        for part in identifier_parts(word, Digits::Attached) {
            if !seen.contains(&part) {
                seen.push(part);
            }
        }
        for term in &seen {
            if term.len() >= 3 && !StopList::IssueRanking.contains(term) {
                each(term);
            }
        }
    }
}

/// BM25's parameters (the usual ones, as in the measurement).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The (slot in `wanted`, count) of each wanted term a document has: a merge of its (term, count)
/// pairs and `wanted`, both sorted by term.
fn matches(postings: impl Iterator<Item = (u32, u32)>, wanted: &[u32]) -> Vec<(usize, u32)> {
    let mut found = Vec::new();
    let mut want = wanted.iter().enumerate().peekable();
    for (term, tf) in postings {
        while want.next_if(|&(_, &w)| w < term).is_some() {}
        match want.peek() {
            Some(&(slot, &w)) if w == term => found.push((slot, tf)),
            Some(_) => {}
            None => break,
        }
    }
    found
}

/// BM25 of a document's matches ([`matches`]) given the wanted terms' document frequencies, the
/// number of documents, the document's length and the mean length.
fn bm25(found: &[(usize, u32)], df: &[u32], n: f64, length: f64, mean_length: f64) -> f64 {
    found
        .iter()
        .map(|&(slot, tf)| {
            let tf = f64::from(tf);
            idf(df[slot], n) * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / mean_length))
        })
        .sum()
}

/// BM25's inverse document frequency of a term `df` of `n` documents hold.
fn idf(df: u32, n: f64) -> f64 {
    let df = f64::from(df);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The history documents of a checkout's files, in a flat layout searched in place (see
/// `FileHistory::to_bytes` for the layout).
#[derive(Debug, Clone, PartialEq)]
pub struct FileHistory {
    /// The commit whose past this is (empty when made from commits given by hand).
    commit: String,
    bytes: Vec<u8>,
    terms: u32,
    files: u32,
    commits: u32,
    /// Byte offsets of the sections.
    term_offsets: usize,
    file_offsets: usize,
    lengths: usize,
    posting_starts: usize,
    term_blob: usize,
    path_blob: usize,
    postings: usize,
    /// The commit section: each commit's length, first posting and first file (commits + 1),
    /// then the postings and the file ids.
    commit_lengths: usize,
    commit_posting_starts: usize,
    commit_file_starts: usize,
    commit_postings: usize,
    commit_files: usize,
}

/// Where [`FileHistory::load_or_build_from`] got a history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryOrigin {
    /// The cache held it.
    Cached,
    /// The cached history of the commit last read, extended by this many newer commits.
    Extended { new_commits: usize },
    /// One `git log` of the whole history.
    Read,
}

/// A file's BM25 score against a query's terms, and its share of the query's similar commits.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryHit {
    pub path: String,
    /// BM25 of the query against the file's document (0 when no term matches it).
    pub score: f64,
    /// Σ over the [`SIMILAR_COMMITS`] commits most like the query that changed the file of the
    /// commit's score over the best commit's, divided by √(files the commit changed); 0 if none.
    pub similar_commits: f64,
    /// Σ over the commits whose message names an issue or pull request the query names
    /// ([`references`]) that changed the file of 1 / √(files the commit changed); 0 if none.
    pub referenced: f64,
}

/// What [`FileHistory::search_with_coverage`] finds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistorySearch {
    /// The files, best first ([`FileHistory::search`]).
    pub hits: Vec<HistoryHit>,
    /// How much of the query the most similar commit says: its BM25 over the sum of the
    /// inverse document frequencies of the query's terms that some commit holds (what a
    /// commit of the mean length holding each once would score), so about 1 when a past
    /// message repeats the query's words and 0 without a similar commit. A short query that
    /// one message covers (an issue's title and the commit that fixed the same thing before)
    /// names that commit's files more surely than a long one any message half matches.
    pub similar_coverage: f64,
}

/// The issue and pull-request numbers `text` names, each once, as the terms a commit that names
/// them holds (`#1234`): a `#` and two to seven digits, not inside a word, a path or an HTML
/// entity (`a#12`, `/#12`, `&#12;`), not followed by a letter or digit; and the number of an
/// `…/issues/1234` or `…/pull/1234` link. "Fixed #22414 -- …" (Django's tickets) and
/// "Fix … (#1234)" (GitHub's squashed pull requests) are how commits name them.
///
/// Not in fenced code blocks ([`swex_issue::markup::fenced_blocks`]: pasted output, where `#39`
/// is an item of a quoted message and `#839496` a colour), and not a debugger's frame number
/// (a line starting `#10 0x5613e8b415a6 in yyparse …`, as sanitizers and gdb print them, pasted
/// without a fence).
pub fn references(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let digits_at = |start: usize| {
        let end = start
            + bytes[start..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
        let ends_clean = bytes.get(end).is_none_or(|b| !b.is_ascii_alphanumeric());
        ((2..=7).contains(&(end - start)) && ends_clean).then(|| &text[start..end])
    };
    let blocks = swex_issue::markup::fenced_blocks(text);
    // Positions are asked in increasing order within each pass below, so a cursor over the
    // blocks keeps the check linear in the text.
    let in_code = |cursor: &mut usize, at: usize| {
        while blocks
            .get(*cursor)
            .is_some_and(|block| block.range.end <= at)
        {
            *cursor += 1;
        }
        blocks
            .get(*cursor)
            .is_some_and(|block| block.range.contains(&at))
    };
    // `#10 0x…` opening a line: only blanks before it, blanks and a hexadecimal address after.
    let is_frame_number = |at: usize, number: &str| {
        let before = text[..at].trim_end_matches([' ', '\t']);
        let after = &text[at + 1 + number.len()..];
        (before.is_empty() || before.ends_with('\n'))
            && after.starts_with([' ', '\t'])
            && after.trim_start_matches([' ', '\t']).starts_with("0x")
    };
    let mut found: Vec<String> = Vec::new();
    let mut add = |number: &str| {
        let term = format!("#{number}");
        if !found.contains(&term) {
            found.push(term);
        }
    };
    let mut cursor = 0;
    for (at, _) in text.match_indices('#') {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'/' | b'&')) {
            continue;
        }
        if let Some(number) = digits_at(at + 1)
            && !in_code(&mut cursor, at)
            && !is_frame_number(at, number)
        {
            add(number);
        }
    }
    for link in ["/issues/", "/pull/"] {
        let mut cursor = 0;
        for (at, _) in text.match_indices(link) {
            if let Some(number) = digits_at(at + link.len())
                && !in_code(&mut cursor, at)
            {
                add(number);
            }
        }
    }
    found
}

/// How many of the commits most like a query vote for their files (picked on the train rows:
/// docs/ranker.md, "Similar commits").
pub const SIMILAR_COMMITS: usize = 20;

const HISTORY_ENTRY_KIND: [u8; 4] = *b"HIST";

/// The most bytes the records of the commit each checkout last read may take (`heads/`, 40 bytes
/// each: about 1,600 checkouts).
const HEADS_BYTES: u64 = 64 << 10;

/// The most bytes the cached histories of every checkout may take together: a work tree gets a
/// new one with each commit it is explored at, so the least recently used go beyond this
/// (the 675 train rows' 659 commits take 433 MB).
pub const HISTORY_CACHE_BYTES: u64 = 1 << 30;

/// Removes the least recently used (oldest modified) entries of the history cache folder `dir`
/// until the rest take at most `limit` bytes; never `keep`, the entry just written.
fn prune(dir: &Path, keep: &Path, limit: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path() != keep)
        .filter_map(|e| {
            let meta = e.metadata().ok().filter(|m| m.is_file())?;
            Some((meta.modified().ok()?, meta.len(), e.path()))
        })
        .collect();
    let kept = std::fs::metadata(keep).map_or(0, |m| m.len());
    let mut total: u64 = kept + files.iter().map(|f| f.1).sum::<u64>();
    files.sort();
    for (_, size, path) in files {
        if total <= limit {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            total -= size;
        }
    }
}

/// A file's document while it is laid out: its path, its length in terms and its (term, count)
/// pairs by term.
type Document<'a> = (&'a str, u32, Vec<(u32, u32)>);

/// A commit as the documents are made from it: its message's terms with their counts, its
/// length in terms (with repeats), the files it changed.
struct CommitTerms<'a> {
    length: u32,
    counts: Vec<(Cow<'a, str>, u32)>,
    files: Vec<&'a str>,
}

impl<'a> CommitTerms<'a> {
    fn of_message(message: &str, files: &'a [String]) -> CommitTerms<'a> {
        let mut counts: HashMap<String, u32> = HashMap::new();
        let mut length = 0;
        terms(message, |term| {
            length += 1;
            match counts.get_mut(term) {
                Some(count) => *count += 1,
                None => {
                    counts.insert(term.to_owned(), 1);
                }
            }
        });
        // The numbers it names, as terms of their own outside the length: no query's words are
        // such terms, so every BM25 score (files, similar commits) is what it was without them.
        for reference in references(message) {
            counts.insert(reference, 1);
        }
        CommitTerms {
            length,
            counts: counts
                .into_iter()
                .map(|(term, count)| (Cow::Owned(term), count))
                .collect(),
            files: files.iter().map(String::as_str).collect(),
        }
    }
}

/// A commit as laid out: its length in terms, its (term, count) pairs by term, the ids of the
/// files it changed.
type CommitRecord = (u32, Vec<(u32, u32)>, Vec<u32>);

impl FileHistory {
    /// Reads the history of `source` from the cache under `cache_dir`, or builds and stores it
    /// (a cache that cannot be written only costs the next call the build again).
    pub fn load_or_build(
        cache_dir: &Path,
        source: &HistorySource,
        limits: &HistoryLimits,
    ) -> Result<FileHistory, HistoryError> {
        Self::load_or_build_from(cache_dir, source, limits).map(|(history, _)| history)
    }

    /// [`FileHistory::load_or_build`], saying where the history came from.
    ///
    /// A work tree that moved on by a few commits since its history was last read (an agent's
    /// or a user's own commits) extends that one: one `git log` of the new commits instead of
    /// the last [`HistoryLimits::max_commits`], the same bytes as reading them all, when the new
    /// commits are a chain of one parent each on top of the commit last read (no merge, no
    /// branch switch or rebase, fewer than `max_commits`, the whole repository's history). The commit last read is kept per repository folder and
    /// limits (`heads/` in the cache folder). A shorter history than `max_commits` is read whole
    /// instead: it may have been cut (missing objects, the byte limit), and reading it is cheap.
    pub fn load_or_build_from(
        cache_dir: &Path,
        source: &HistorySource,
        limits: &HistoryLimits,
    ) -> Result<(FileHistory, HistoryOrigin), HistoryError> {
        let path = Self::cache_path(cache_dir, source, limits);
        let version = crate::formats::HISTORY_FORMAT_VERSION;
        if let Ok(Some(bytes)) = read_entry(&path, HISTORY_ENTRY_KIND, version)
            && let Some(mut history) = FileHistory::from_bytes(bytes)
        {
            // Used now: the last to be pruned (a read-only cache stays as it is).
            if let Ok(file) = std::fs::File::options().append(true).open(&path) {
                let _ = file.set_modified(std::time::SystemTime::now());
            }
            history.commit = source.commit.clone();
            Self::remember_head(cache_dir, source, limits);
            return Ok((history, HistoryOrigin::Cached));
        }
        let (mut history, origin) = match Self::extend_last_read(cache_dir, source, limits) {
            Some((history, new_commits)) => (history, HistoryOrigin::Extended { new_commits }),
            None => (FileHistory::build(source, limits)?, HistoryOrigin::Read),
        };
        history.commit = source.commit.clone();
        if write_entry(&path, HISTORY_ENTRY_KIND, version, &history.bytes).is_ok() {
            prune(
                path.parent().expect("in a folder"),
                &path,
                HISTORY_CACHE_BYTES,
            );
            // `history-v1/`, `history-v2/`, … of an older swex: the bound on all histories
            // together would not hold with them.
            crate::cache::remove_older_versions(cache_dir, "history-v", version);
            Self::remember_head(cache_dir, source, limits);
        }
        Ok((history, origin))
    }

    /// Where the commit last read for the repository folder and limits of `source` is kept.
    fn head_path(cache_dir: &Path, source: &HistorySource, limits: &HistoryLimits) -> PathBuf {
        let identity = format!(
            "{}\0{}\0{}\0{}\0{}",
            source.git_dir.display(),
            source.prefix,
            limits.max_commits,
            limits.messages_per_file,
            limits.max_log_bytes
        );
        let key = &blake3::hash(identity.as_bytes()).to_hex()[..32];
        Self::history_dir(cache_dir).join("heads").join(key)
    }

    /// The folder of this format's histories in `cache_dir` (`history-v{N}/`).
    fn history_dir(cache_dir: &Path) -> PathBuf {
        cache_dir.join(format!(
            "history-v{}",
            crate::formats::HISTORY_FORMAT_VERSION
        ))
    }

    /// Records `source`'s commit as the last read (written whole or not at all: a temporary file
    /// renamed into place; failures only cost the next commit a whole read).
    fn remember_head(cache_dir: &Path, source: &HistorySource, limits: &HistoryLimits) {
        Self::remember_head_within(cache_dir, source, limits, HEADS_BYTES);
    }

    /// [`FileHistory::remember_head`], keeping the records of at most `heads_bytes` bytes (the
    /// least recently written go: a checkout that lost its record reads its next history whole).
    fn remember_head_within(
        cache_dir: &Path,
        source: &HistorySource,
        limits: &HistoryLimits,
        heads_bytes: u64,
    ) {
        let path = Self::head_path(cache_dir, source, limits);
        if std::fs::read_to_string(&path).is_ok_and(|last| last == source.commit) {
            return;
        }
        if crate::cache::entry::write_atomically(&path, source.commit.as_bytes()).is_ok()
            && let Some(dir) = path.parent()
        {
            // One record per git folder, prefix and limits: a user or an agent that makes a
            // worktree per task would pile them up.
            prune(dir, &path, heads_bytes);
        }
    }

    /// The history of `source` made from the cached one of the commit last read, when `source`'s
    /// commit is a short chain of commits on top of it; with the number of new commits.
    fn extend_last_read(
        cache_dir: &Path,
        source: &HistorySource,
        limits: &HistoryLimits,
    ) -> Option<(FileHistory, usize)> {
        let last = std::fs::read_to_string(Self::head_path(cache_dir, source, limits)).ok()?;
        if last == source.commit || !last.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let last_source = HistorySource {
            commit: last.clone(),
            ..source.clone()
        };
        let version = crate::formats::HISTORY_FORMAT_VERSION;
        let entry = Self::cache_path(cache_dir, &last_source, limits);
        let older =
            FileHistory::from_bytes(read_entry(&entry, HISTORY_ENTRY_KIND, version).ok()??)?;
        if older.commits() as usize != limits.max_commits {
            return None;
        }
        let newer = source.log_since(&last, limits.extend_commits)?;
        let history = FileHistory::extended(&newer, &older, limits);
        Some((history, newer.len()))
    }

    /// Where the cache keeps the history of `source`.
    pub fn cache_path(cache_dir: &Path, source: &HistorySource, limits: &HistoryLimits) -> PathBuf {
        Self::history_dir(cache_dir).join(format!("{}.bin", source.key(limits)))
    }

    /// Reads the log of `source` into documents.
    pub fn build(
        source: &HistorySource,
        limits: &HistoryLimits,
    ) -> Result<FileHistory, HistoryError> {
        let log = source.log(limits)?;
        let mut history = FileHistory::of_commits(&log, limits.messages_per_file);
        history.commit = source.commit.clone();
        Ok(history)
    }

    /// The documents of commits given newest first as (message, files).
    pub fn of_commits(commits: &[(String, Vec<String>)], messages_per_file: usize) -> FileHistory {
        let commits: Vec<CommitTerms> = commits
            .iter()
            .map(|(message, files)| CommitTerms::of_message(message, files))
            .collect();
        Self::of_commit_terms(&commits, messages_per_file)
    }

    /// The commits read, newest first, as the documents were made from them.
    fn commit_terms(&self) -> impl Iterator<Item = CommitTerms<'_>> + '_ {
        (0..self.commits as usize).map(|i| CommitTerms {
            length: self.word(self.commit_lengths + 4 * i),
            counts: self
                .commit_postings_of(i)
                .map(|(term, count)| {
                    let term = self.string(self.term_offsets, self.term_blob, term as usize);
                    (Cow::Borrowed(term), count)
                })
                .collect(),
            files: self
                .commit_files_of(i)
                .map(|file| self.string(self.file_offsets, self.path_blob, file as usize))
                .collect(),
        })
    }

    /// The history of `newer` commits (newest first) followed by those of `older`, cut to
    /// `limits.max_commits`: what a `git log` of the newest commit gives when `newer` leads to
    /// `older`'s commit by a chain ([`HistorySource::log_since`]). Byte for byte the history
    /// read whole (tested).
    fn extended(
        newer: &[(String, Vec<String>)],
        older: &FileHistory,
        limits: &HistoryLimits,
    ) -> FileHistory {
        let commits: Vec<CommitTerms> = newer
            .iter()
            .map(|(message, files)| CommitTerms::of_message(message, files))
            .chain(older.commit_terms())
            .take(limits.max_commits)
            .collect();
        Self::of_commit_terms(&commits, limits.messages_per_file)
    }

    fn of_commit_terms(commits: &[CommitTerms], messages_per_file: usize) -> FileHistory {
        let mut term_ids: HashMap<&str, u32> = HashMap::new();
        // Per file: messages taken, length in terms, term counts.
        // Term ids are small numbers this function hands out: FxHash spreads them well enough.
        let mut docs: HashMap<&str, (usize, u32, FxHashMap<u32, u32>)> = HashMap::new();
        // Per commit: its terms (old ids) with counts, and its length.
        let mut commit_terms: Vec<(u32, Vec<(u32, u32)>)> = Vec::with_capacity(commits.len());
        for commit in commits {
            let counts: Vec<(u32, u32)> = commit
                .counts
                .iter()
                .map(|(term, count)| {
                    let next = term_ids.len() as u32;
                    (*term_ids.entry(term.as_ref()).or_insert(next), *count)
                })
                .collect();
            for &file in &commit.files {
                let doc = docs.entry(file).or_default();
                if doc.0 >= messages_per_file {
                    continue;
                }
                doc.0 += 1;
                doc.1 += commit.length;
                for &(term, count) in &counts {
                    *doc.2.entry(term).or_default() += count;
                }
            }
            commit_terms.push((commit.length, counts));
        }
        // Terms in byte order, files in path order: both are found by binary search.
        let mut vocabulary: Vec<(&str, u32)> = term_ids.iter().map(|(t, &id)| (*t, id)).collect();
        vocabulary.sort_unstable();
        let mut renumber = vec![0u32; vocabulary.len()];
        for (new, (_, old)) in vocabulary.iter().enumerate() {
            renumber[*old as usize] = new as u32;
        }
        let mut files: Vec<Document<'_>> = docs
            .into_iter()
            .map(|(path, (_, length, counts))| {
                let mut postings: Vec<(u32, u32)> = counts
                    .into_iter()
                    .map(|(term, tf)| (renumber[term as usize], tf))
                    .collect();
                postings.sort_unstable();
                (path, length, postings)
            })
            .collect();
        files.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let file_ids: HashMap<&str, u32> = files
            .iter()
            .enumerate()
            .map(|(id, doc)| (doc.0, id as u32))
            .collect();
        let records: Vec<CommitRecord> = commits
            .iter()
            .zip(commit_terms)
            .map(|(commit, (length, counts))| {
                let mut postings: Vec<(u32, u32)> = counts
                    .into_iter()
                    .map(|(term, tf)| (renumber[term as usize], tf))
                    .collect();
                postings.sort_unstable();
                let mut ids: Vec<u32> = commit
                    .files
                    .iter()
                    .filter_map(|f| file_ids.get(f).copied())
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                (length, postings, ids)
            })
            .collect();
        let bytes = Self::to_bytes(
            &vocabulary.iter().map(|(t, _)| *t).collect::<Vec<_>>(),
            &files,
            &records,
        );
        FileHistory::from_bytes(bytes).expect("a history just laid out reads back")
    }

    /// The flat layout, every number a little-endian `u32`: the counts (terms, files, commits),
    /// the term offsets (terms + 1, into the term blob), the path offsets (files + 1, into the
    /// path blob), each file's length in terms, each file's first posting (files + 1), the term
    /// blob, the path blob, the postings: (term, count) pairs, each file's sorted by term; then
    /// the commits, newest first: each one's length in terms, first posting (commits + 1) and
    /// first file (commits + 1), their (term, count) pairs, each commit's sorted by term, and
    /// their file ids, each commit's sorted.
    fn to_bytes(vocabulary: &[&str], files: &[Document<'_>], commits: &[CommitRecord]) -> Vec<u8> {
        let mut out = Vec::new();
        let put = |out: &mut Vec<u8>, n: usize| out.extend_from_slice(&(n as u32).to_le_bytes());
        // The offsets of consecutive parts: 0, then the running sum of their lengths.
        let put_offsets = |out: &mut Vec<u8>, lengths: &mut dyn Iterator<Item = usize>| {
            let mut offset = 0;
            put(out, 0);
            for length in lengths {
                offset += length;
                put(out, offset);
            }
        };
        let put_pairs = |out: &mut Vec<u8>, pairs: &[(u32, u32)]| {
            for &(term, tf) in pairs {
                put(out, term as usize);
                put(out, tf as usize);
            }
        };
        put(&mut out, vocabulary.len());
        put(&mut out, files.len());
        put(&mut out, commits.len());
        put_offsets(&mut out, &mut vocabulary.iter().map(|term| term.len()));
        put_offsets(&mut out, &mut files.iter().map(|(path, _, _)| path.len()));
        for (_, length, _) in files {
            put(&mut out, *length as usize);
        }
        put_offsets(
            &mut out,
            &mut files.iter().map(|(_, _, postings)| postings.len()),
        );
        for term in vocabulary {
            out.extend_from_slice(term.as_bytes());
        }
        for (path, _, _) in files {
            out.extend_from_slice(path.as_bytes());
        }
        for (_, _, postings) in files {
            put_pairs(&mut out, postings);
        }
        for (length, _, _) in commits {
            put(&mut out, *length as usize);
        }
        put_offsets(
            &mut out,
            &mut commits.iter().map(|(_, postings, _)| postings.len()),
        );
        put_offsets(&mut out, &mut commits.iter().map(|(_, _, ids)| ids.len()));
        for (_, postings, _) in commits {
            put_pairs(&mut out, postings);
        }
        for (_, _, ids) in commits {
            for &id in ids {
                put(&mut out, id as usize);
            }
        }
        out
    }

    /// Reads the layout of [`FileHistory::to_bytes`]; `None` when it is inconsistent (sizes,
    /// offsets out of order or out of range, a term or path that is not UTF-8).
    fn from_bytes(bytes: Vec<u8>) -> Option<FileHistory> {
        let word = |at: usize| -> Option<u32> {
            Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
        };
        let (terms, files, commits) = (word(0)?, word(4)?, word(8)?);
        let (t, f) = (terms as usize, files as usize);
        let term_offsets: usize = 12;
        let file_offsets = term_offsets.checked_add(4 * (t + 1))?;
        let lengths = file_offsets.checked_add(4 * (f + 1))?;
        let posting_starts = lengths.checked_add(4 * f)?;
        let term_blob = posting_starts.checked_add(4 * (f + 1))?;
        let term_bytes = word(term_offsets + 4 * t)? as usize;
        let path_blob = term_blob.checked_add(term_bytes)?;
        let path_bytes = word(file_offsets + 4 * f)? as usize;
        let postings = path_blob.checked_add(path_bytes)?;
        let pairs = word(posting_starts + 4 * f)? as usize;
        let c = commits as usize;
        let commit_lengths = postings.checked_add(8 * pairs)?;
        let commit_posting_starts = commit_lengths.checked_add(4 * c)?;
        let commit_file_starts = commit_posting_starts.checked_add(4 * (c + 1))?;
        let commit_postings = commit_file_starts.checked_add(4 * (c + 1))?;
        let commit_pairs = word(commit_posting_starts + 4 * c)? as usize;
        let commit_files = commit_postings.checked_add(8 * commit_pairs)?;
        let file_ids = word(commit_file_starts + 4 * c)? as usize;
        if commit_files.checked_add(4 * file_ids)? != bytes.len() {
            return None;
        }
        let monotone = |start: usize, count: usize| {
            (0..count).all(|i| match (word(start + 4 * i), word(start + 4 * i + 4)) {
                (Some(a), Some(b)) => a <= b,
                _ => false,
            })
        };
        if !(monotone(term_offsets, t)
            && monotone(file_offsets, f)
            && monotone(posting_starts, f)
            && monotone(commit_posting_starts, c)
            && monotone(commit_file_starts, c))
        {
            return None;
        }
        // Every commit's file is a file of the layout (the votes index by it).
        if (0..file_ids).any(|i| word(commit_files + 4 * i).is_none_or(|id| id >= files)) {
            return None;
        }
        std::str::from_utf8(&bytes[term_blob..path_blob]).ok()?;
        std::str::from_utf8(&bytes[path_blob..postings]).ok()?;
        Some(FileHistory {
            commit: String::new(),
            bytes,
            terms,
            files,
            commits,
            term_offsets,
            file_offsets,
            lengths,
            posting_starts,
            term_blob,
            path_blob,
            postings,
            commit_lengths,
            commit_posting_starts,
            commit_file_starts,
            commit_postings,
            commit_files,
        })
    }

    fn word(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.bytes[at..at + 4].try_into().expect("4 bytes"))
    }

    /// The `i`th string of a blob whose offsets start at `offsets`.
    fn string(&self, offsets: usize, blob: usize, i: usize) -> &str {
        let range = self.range_at(offsets, i);
        // Checked as UTF-8 when read; a boundary inside a character cannot come from to_bytes.
        std::str::from_utf8(&self.bytes[blob + range.start..blob + range.end]).unwrap_or("")
    }

    fn find(&self, offsets: usize, blob: usize, count: u32, wanted: &str) -> Option<u32> {
        let (mut low, mut high) = (0u32, count);
        while low < high {
            let mid = low + (high - low) / 2;
            match self.string(offsets, blob, mid as usize).cmp(wanted) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// The commit whose past this is.
    pub fn commit(&self) -> &str {
        &self.commit
    }

    /// How many commits were read.
    pub fn commits(&self) -> u32 {
        self.commits
    }

    /// How many files have a document.
    pub fn files(&self) -> u32 {
        self.files
    }

    /// The paths that have a document, in path order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        (0..self.files as usize).map(|i| self.string(self.file_offsets, self.path_blob, i))
    }

    /// How many times `term` occurs in the document of `path` (0 when either is unknown).
    pub fn count(&self, path: &str, term: &str) -> u32 {
        match (self.file_id(path), self.term_id(term)) {
            (Some(file), Some(term)) => self
                .postings_of(file)
                .find(|p| p.0 == term)
                .map_or(0, |p| p.1),
            _ => 0,
        }
    }

    fn term_id(&self, term: &str) -> Option<u32> {
        self.find(self.term_offsets, self.term_blob, self.terms, term)
    }

    fn file_id(&self, path: &str) -> Option<u32> {
        self.find(self.file_offsets, self.path_blob, self.files, path)
    }

    fn length(&self, file: u32) -> u32 {
        self.word(self.lengths + 4 * file as usize)
    }

    /// The (term, count) pairs of a file's document, by term.
    fn postings_of(&self, file: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.pairs(
            self.postings,
            self.range_at(self.posting_starts, file as usize),
        )
    }

    /// The (term, count) pairs of a commit's message, by term.
    fn commit_postings_of(&self, commit: usize) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.pairs(
            self.commit_postings,
            self.range_at(self.commit_posting_starts, commit),
        )
    }

    /// The ids of the files a commit changed.
    fn commit_files_of(&self, commit: usize) -> impl Iterator<Item = u32> + '_ {
        self.range_at(self.commit_file_starts, commit)
            .map(move |i| self.word(self.commit_files + 4 * i))
    }

    /// The `i`th part's range of an offsets array at `starts` (its entries `i` and `i + 1`).
    fn range_at(&self, starts: usize, i: usize) -> std::ops::Range<usize> {
        self.word(starts + 4 * i) as usize..self.word(starts + 4 * i + 4) as usize
    }

    /// The (term, count) pairs at positions `range` of a pairs section at `section`.
    fn pairs(
        &self,
        section: usize,
        range: std::ops::Range<usize>,
    ) -> impl Iterator<Item = (u32, u32)> + '_ {
        range.map(move |i| {
            let at = section + 8 * i;
            (self.word(at), self.word(at + 4))
        })
    }

    /// Each file's share of the [`SIMILAR_COMMITS`] commits whose messages match the `wanted`
    /// terms best (BM25 over every commit read; ties: the newer commit), indexed by file id; and
    /// how much of the query the best of them covers ([`HistorySearch::similar_coverage`]).
    fn similar_commit_votes(&self, wanted: &[u32]) -> (HashMap<u32, f64>, f64) {
        let commits = self.commits as usize;
        let counts: Vec<Vec<(usize, u32)>> = (0..commits)
            .map(|commit| matches(self.commit_postings_of(commit), wanted))
            .collect();
        let mut df = vec![0u32; wanted.len()];
        for found in &counts {
            for &(slot, _) in found {
                df[slot] += 1;
            }
        }
        let length = |commit: usize| f64::from(self.word(self.commit_lengths + 4 * commit));
        let mean_length = (0..commits).map(length).sum::<f64>() / commits.max(1) as f64;
        let mean_length = if mean_length > 0.0 { mean_length } else { 1.0 };
        let n = commits as f64;
        let mut scored: Vec<(f64, usize)> = counts
            .iter()
            .enumerate()
            .filter(|(commit, found)| {
                !found.is_empty() && self.commit_files_of(*commit).next().is_some()
            })
            .map(|(commit, found)| (bm25(found, &df, n, length(commit), mean_length), commit))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(SIMILAR_COMMITS);
        let mut votes: HashMap<u32, f64> = HashMap::new();
        let Some(&(best, _)) = scored.first() else {
            return (votes, 0.0);
        };
        for &(score, commit) in &scored {
            self.vote_for_files_of(commit, score / best, &mut votes);
        }
        // A term's most in a commit of the mean length that holds it once is its idf: the sum
        // over the terms some commit holds is what a commit saying all of them would score.
        let most: f64 = df.iter().filter(|&&df| df > 0).map(|&df| idf(df, n)).sum();
        (votes, if most > 0.0 { best / most } else { 0.0 })
    }

    /// Adds `weight` / √(files `commit` changed) to the vote of each file it changed: a commit
    /// that changed many files says less about each.
    fn vote_for_files_of(&self, commit: usize, weight: f64, votes: &mut HashMap<u32, f64>) {
        let changed = self.commit_files_of(commit).count() as f64;
        for file in self.commit_files_of(commit) {
            *votes.entry(file).or_default() += weight / changed.sqrt();
        }
    }

    /// Per file, Σ over the commits holding one of the `wanted` reference terms of 1 / √(files
    /// the commit changed) ([`HistoryHit::referenced`]).
    fn referenced_votes(&self, wanted: &[u32]) -> HashMap<u32, f64> {
        let mut votes: HashMap<u32, f64> = HashMap::new();
        if wanted.is_empty() {
            return votes;
        }
        for commit in 0..self.commits as usize {
            if !matches(self.commit_postings_of(commit), wanted).is_empty() {
                self.vote_for_files_of(commit, 1.0, &mut votes);
            }
        }
        votes
    }

    /// BM25 of the distinct [`terms`] of `query` against the documents of `paths` (every file
    /// with a document when `None`), with the statistics of those files: `N` is how many paths
    /// are scored, document frequencies and the mean length count those that have a document;
    /// and each one's share of the query's similar commits ([`HistoryHit::similar_commits`]) and
    /// of the commits naming what the query names ([`HistoryHit::referenced`]). Files that match
    /// no term, no similar and no referencing commit are left out; best first (by the BM25),
    /// ties by path.
    pub fn search(&self, query: &str, paths: Option<&[String]>) -> Vec<HistoryHit> {
        self.search_with_coverage(query, paths).hits
    }

    /// [`FileHistory::search`], and how much of the query its best similar commit covers.
    pub fn search_with_coverage(&self, query: &str, paths: Option<&[String]>) -> HistorySearch {
        let mut wanted: Vec<u32> = Vec::new();
        terms(query, |term| {
            if let Some(id) = self.term_id(term) {
                wanted.push(id);
            }
        });
        wanted.sort_unstable();
        wanted.dedup();
        let mut named: Vec<u32> = references(query)
            .iter()
            .filter_map(|term| self.term_id(term))
            .collect();
        named.sort_unstable();
        let scored: Vec<(&str, Option<u32>)> = match paths {
            Some(paths) => {
                // A path given twice is one file.
                let mut seen = std::collections::HashSet::new();
                paths
                    .iter()
                    .filter(|p| seen.insert(p.as_str()))
                    .map(|p| (p.as_str(), self.file_id(p)))
                    .collect()
            }
            None => self.paths().zip((0..self.files).map(Some)).collect(),
        };
        let documents: Vec<(&str, u32)> = scored
            .iter()
            .filter_map(|&(path, id)| id.map(|id| (path, id)))
            .collect();
        if wanted.is_empty() && named.is_empty() || documents.is_empty() {
            return HistorySearch::default();
        }
        let counts: Vec<Vec<(usize, u32)>> = documents
            .iter()
            .map(|&(_, file)| matches(self.postings_of(file), &wanted))
            .collect();
        let mut df = vec![0u32; wanted.len()];
        for found in &counts {
            for &(slot, _) in found {
                df[slot] += 1;
            }
        }
        let n = scored.len() as f64;
        let mean_length = documents
            .iter()
            .map(|&(_, file)| f64::from(self.length(file)))
            .sum::<f64>()
            / documents.len() as f64;
        let mean_length = if mean_length > 0.0 { mean_length } else { 1.0 };
        let (votes, similar_coverage) = self.similar_commit_votes(&wanted);
        let referenced = self.referenced_votes(&named);
        let mut hits: Vec<HistoryHit> = documents
            .iter()
            .zip(&counts)
            .map(|(&(path, file), found)| {
                let length = f64::from(self.length(file));
                HistoryHit {
                    path: path.to_owned(),
                    score: bm25(found, &df, n, length, mean_length),
                    similar_commits: votes.get(&file).copied().unwrap_or(0.0),
                    referenced: referenced.get(&file).copied().unwrap_or(0.0),
                }
            })
            .filter(|hit| hit.score > 0.0 || hit.similar_commits > 0.0 || hit.referenced > 0.0)
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
        HistorySearch {
            hits,
            similar_coverage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use swex_testkit::git;

    fn commits(log: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
        log.iter()
            .map(|(m, files)| (m.to_string(), files.iter().map(|f| f.to_string()).collect()))
            .collect()
    }

    #[test]
    fn terms_are_words_and_their_identifier_parts_once_per_word() {
        let mut found = Vec::new();
        terms(
            "Fixed QuerySet.only() with 2to3 and the __init__ of a_b",
            |t| found.push(t.to_owned()),
        );
        assert_eq!(
            found,
            ["fixed", "queryset", "query", "to3", "init", "a_b"],
            "`set`, `only` and `the` are stop words; `a_b` has no part of three letters"
        );
    }

    #[test]
    /// Each record: the commit, its parents, the message and the files under the prefix.
    fn log_records_give_messages_and_the_files_under_the_prefix() {
        let text = "\x1e9f9f ab12\x1dFix typo\n\x1f\0\ndocs/config.rst\0\x1eab12 cd34 ef56\x1dRemove tests\nbody line\n\x1f\0\nsrc/a.py\0lib/b.py\0\x1ecd34\x1dInitial commit\n\x1f\0\nsrc/a.py\0docs/config.rst\0";
        let record = |hash: &str, parents: &[&str], message: &str, files: &[&str]| LogRecord {
            hash: hash.into(),
            parents: parents.iter().map(|p| p.to_string()).collect(),
            message: message.into(),
            files: files.iter().map(|f| f.to_string()).collect(),
        };
        assert_eq!(
            parse_log(text, ""),
            [
                record("9f9f", &["ab12"], "Fix typo\n", &["docs/config.rst"]),
                record(
                    "ab12",
                    &["cd34", "ef56"],
                    "Remove tests\nbody line\n",
                    &["src/a.py", "lib/b.py"]
                ),
                record(
                    "cd34",
                    &[],
                    "Initial commit\n",
                    &["src/a.py", "docs/config.rst"]
                ),
            ]
        );
        let under_src: Vec<Vec<String>> = parse_log(text, "src/")
            .into_iter()
            .map(|r| r.files)
            .collect();
        assert_eq!(
            under_src,
            [vec![], vec!["a.py".to_owned()], vec!["a.py".to_owned()]]
        );
    }

    #[test]
    fn a_file_document_holds_its_newest_messages_up_to_the_limit() {
        let log = commits(&[
            ("floatformat rounding", &["filters.py", "tests.py"]),
            ("floatformat again", &["filters.py"]),
            ("oldest floatformat", &["filters.py"]),
        ]);
        let history = FileHistory::of_commits(&log, 2);
        assert_eq!(history.commits(), 3);
        assert_eq!(
            history.paths().collect::<Vec<_>>(),
            ["filters.py", "tests.py"]
        );
        assert_eq!(history.count("filters.py", "floatformat"), 2);
        assert_eq!(history.count("filters.py", "oldest"), 0, "beyond the limit");
        assert_eq!(history.count("tests.py", "rounding"), 1);
        assert_eq!(history.count("nothing.py", "rounding"), 0);
        // The bytes read back as the same history.
        assert_eq!(
            FileHistory::from_bytes(history.bytes.clone()),
            Some(history.clone())
        );
    }

    #[test]
    fn inconsistent_bytes_are_refused() {
        let history = FileHistory::of_commits(&commits(&[("alpha beta", &["a.py", "b.py"])]), 5);
        let mut bytes = history.bytes.clone();
        bytes.pop();
        assert_eq!(FileHistory::from_bytes(bytes), None);
        let mut swapped = history.bytes.clone();
        // The first term offset after 0 made larger than the next one.
        swapped[16..20].copy_from_slice(&1000u32.to_le_bytes());
        assert_eq!(FileHistory::from_bytes(swapped), None);
        assert_eq!(FileHistory::from_bytes(Vec::new()), None);
        // The last word is the last commit's last file id: one past the files is refused.
        let mut stray = history.bytes.clone();
        let at = stray.len() - 4;
        stray[at..].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(FileHistory::from_bytes(stray), None);
        assert!(FileHistory::from_bytes(history.bytes.clone()).is_some());
    }

    #[test]
    fn issue_numbers_are_found_where_they_are_written_as_such() {
        let cases: [(&str, &[&str]); 12] = [
            ("the reappearance of #22414 after it was fixed", &["#22414"]),
            (
                "Fix crash in parser (#1234)\n\nFixes #1200.",
                &["#1234", "#1200"],
            ),
            (
                "see https://github.com/o/r/issues/5678 and https://github.com/o/r/pull/91#x",
                &["#5678", "#91"],
            ),
            ("#12 and #12 again", &["#12"]),
            ("not a#12, x/#34, &#39; or _#56", &[]),
            ("#7 (one digit), #12345678 (eight), #123abc, C#, #", &[]),
            ("[#4096](url), (#77)", &["#4096", "#77"]),
            (
                "Crash (#2839):\n```\n    #10 0x5613e8b415a6 in yyparse src/parser.y:466\nitem #39\n```\nsee #40",
                &["#2839", "#40"],
            ),
            (
                "unfenced trace\n    #10 0x454ab2 in fuzzer::Fuzzer\n#11\t0x440c32 in main\nnot #12 0x1",
                &["#12"],
            ),
            (
                "~~~\nhttps://github.com/o/r/issues/5678\n~~~\nafter it #13",
                &["#13"],
            ),
            ("```\nan unclosed block runs to the end #14", &[]),
            (
                "```\n#15\n```\nfixed in #16 0xbeef, then\n```\n#17\n```\n#18 and #19",
                &["#16", "#18", "#19"],
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(references(text), expected, "{text:?}");
        }
    }

    #[test]
    fn commits_naming_the_querys_issues_vote_for_their_files_and_change_no_other_score() {
        let messages = [
            ("widget render crash", &["a.py", "b.py"][..], " (#4521)"),
            ("widget cleanup", &["c.py"][..], ", #4521, #77"),
            ("zebra quokka", &["d.py"][..], ""),
            ("quokka tidy", &["e.py"][..], " #4521"),
        ];
        let plain: Vec<(&str, &[&str])> = messages.iter().map(|m| (m.0, m.1)).collect();
        let named_text: Vec<String> = messages.iter().map(|m| format!("{}{}", m.0, m.2)).collect();
        let named: Vec<(&str, &[&str])> = named_text
            .iter()
            .zip(&messages)
            .map(|(text, m)| (text.as_str(), m.1))
            .collect();
        let plain = FileHistory::of_commits(&commits(&plain), 200);
        let named = FileHistory::of_commits(&commits(&named), 200);
        let query = "The widget render crash is back since #4521";
        let by_path = |hits: Vec<HistoryHit>| -> HashMap<String, HistoryHit> {
            hits.into_iter().map(|h| (h.path.clone(), h)).collect()
        };
        let before = by_path(plain.search(query, None));
        let after = by_path(named.search(query, None));
        // The words' scores are those of the messages without the numbers.
        for (path, hit) in &before {
            assert_eq!(hit.score, after[path].score, "{path}");
            assert_eq!(hit.similar_commits, after[path].similar_commits, "{path}");
            assert_eq!(hit.referenced, 0.0);
        }
        let half = 1.0 / 2f64.sqrt();
        let referenced: Vec<(&str, f64)> = ["a.py", "b.py", "c.py", "e.py"]
            .iter()
            .map(|p| (*p, after[*p].referenced))
            .collect();
        assert_eq!(
            referenced,
            [("a.py", half), ("b.py", half), ("c.py", 1.0), ("e.py", 1.0)]
        );
        // e.py matches no word of the query: only the number brings it.
        assert_eq!(
            (after["e.py"].score, after["e.py"].similar_commits),
            (0.0, 0.0)
        );
        assert!(!after.contains_key("d.py"));
        // Words that match no message: the number alone still finds its commits' files.
        let alone = named.search("Unrelated words, see #77", None);
        assert_eq!(alone.len(), 1, "{alone:?}");
        assert_eq!((alone[0].path.as_str(), alone[0].referenced), ("c.py", 1.0));
        // A number no commit names, or none at all: nothing referenced.
        for other in [
            "The widget render crash is back since #4522",
            "The widget render crash",
        ] {
            assert!(
                named
                    .search(other, None)
                    .iter()
                    .all(|h| h.referenced == 0.0),
                "{other}"
            );
        }
    }

    /// Three commits, two of which share `widget`, for scores computed by hand.
    fn three_commits() -> FileHistory {
        let log = commits(&[
            ("widget render crash", &["a.py", "b.py"]),
            ("widget cleanup", &["c.py"]),
            ("zebra quokka", &["d.py"]),
        ]);
        FileHistory::of_commits(&log, 200)
    }

    /// BM25's idf of a term `df` of [`three_commits`] hold, by hand.
    fn three_commits_idf(df: f64) -> f64 {
        (1.0f64 + (3.0 - df + 0.5) / (df + 0.5)).ln()
    }

    /// BM25's weight of one occurrence in a commit of `length` terms among [`three_commits`]
    /// (lengths 3, 2, 2 → mean 7/3), by hand.
    fn three_commits_part(length: f64) -> f64 {
        2.2 / (1.0 + 1.2 * (0.25 + 0.75 * length / (7.0 / 3.0)))
    }

    /// The commits whose messages match the query best give the files they changed their score
    /// over the best one's, over √(files changed); by hand for two matching commits of three.
    #[test]
    fn similar_commits_vote_for_the_files_they_changed() {
        let history = three_commits();
        let hits = history.search("The widget render crash", None);
        let (idf, part) = (three_commits_idf, three_commits_part);
        let first = (idf(2.0) + 2.0 * idf(1.0)) * part(3.0);
        let second = idf(2.0) * part(2.0);
        let votes: HashMap<&str, f64> = hits
            .iter()
            .map(|h| (h.path.as_str(), h.similar_commits))
            .collect();
        let half = 1.0 / 2f64.sqrt();
        assert!((votes["a.py"] - half).abs() < 1e-12, "{hits:?}");
        assert!((votes["b.py"] - half).abs() < 1e-12, "{hits:?}");
        assert!((votes["c.py"] - second / first).abs() < 1e-12, "{hits:?}");
        assert!(!votes.contains_key("d.py"), "matches nothing: {hits:?}");
        // Only the paths asked for are given, with the same votes (they are the commits').
        let asked = history.search("widget render crash", Some(&["c.py".to_string()]));
        assert_eq!(asked.len(), 1);
        assert!((asked[0].similar_commits - second / first).abs() < 1e-12);
    }

    /// How much of the query the most similar commit covers: its BM25 over the sum of the idf of
    /// the query's terms that some commit holds (by hand); 0 when no commit says a word of it.
    #[test]
    fn the_most_similar_commit_says_how_much_of_the_query_it_covers() {
        let history = three_commits();
        let (idf, part) = (three_commits_idf, three_commits_part);
        let found = history.search_with_coverage("The widget render crash", None);
        assert_eq!(found.hits, history.search("The widget render crash", None));
        // The first commit says every word: its score is each idf at its length's weight.
        assert!(
            (found.similar_coverage - part(3.0)).abs() < 1e-12,
            "{found:?}"
        );
        // `widget` and `quokka` are said by different commits: the best says the rarer one.
        let split = history.search_with_coverage("widget quokka kangaroo", None);
        let expected = idf(1.0) * part(2.0) / (idf(2.0) + idf(1.0));
        assert!(
            (split.similar_coverage - expected).abs() < 1e-12,
            "{split:?}"
        );
        assert!(split.similar_coverage < found.similar_coverage);
        assert_eq!(
            history.search_with_coverage("kangaroo", None),
            HistorySearch::default()
        );
    }

    /// Only the best SIMILAR_COMMITS commits vote; of equal scores the newer ones.
    #[test]
    fn only_the_most_similar_commits_vote() {
        let names: Vec<String> = (0..=SIMILAR_COMMITS).map(|i| format!("f{i}.py")).collect();
        let log: Vec<(String, Vec<String>)> = names
            .iter()
            .map(|name| ("widget".to_string(), vec![name.clone()]))
            .collect();
        let history = FileHistory::of_commits(&log, 200);
        let hits = history.search("widget", None);
        let vote = |path: &str| {
            hits.iter()
                .find(|h| h.path == path)
                .unwrap()
                .similar_commits
        };
        assert_eq!(vote("f0.py"), 1.0);
        assert_eq!(vote(&names[SIMILAR_COMMITS - 1]), 1.0);
        assert_eq!(vote(&names[SIMILAR_COMMITS]), 0.0, "the oldest is the 21st");
    }

    /// BM25 with the statistics of the scored files, by hand: two documents of the three paths
    /// hold `widget`, one holds `render`.
    #[test]
    fn search_is_bm25_over_the_scored_files() {
        let log = commits(&[
            ("widget render fix", &["a.py"]),
            ("widget cleanup", &["b.py"]),
            ("unrelated change", &["c.py"]),
        ]);
        let history = FileHistory::of_commits(&log, 200);
        let paths: Vec<String> = ["a.py", "b.py", "c.py", "d.py"].map(String::from).into();
        let hits = history.search("The Widget does not render", Some(&paths));
        let n = 4.0;
        let idf = |df: f64| (1.0f64 + (n - df + 0.5) / (df + 0.5)).ln();
        // Lengths: a 3, b 2, c 2 → mean 7/3.
        let part = |length: f64| 2.2 / (1.0 + 1.2 * (0.25 + 0.75 * length / (7.0 / 3.0)));
        let a = (idf(2.0) + idf(1.0)) * part(3.0);
        let b = idf(2.0) * part(2.0);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].path, "a.py");
        assert!((hits[0].score - a).abs() < 1e-12, "{hits:?} vs {a}");
        assert_eq!(hits[1].path, "b.py");
        assert!((hits[1].score - b).abs() < 1e-12, "{hits:?} vs {b}");
        // Every file with a document when no paths are given: N = 3.
        let all = history.search("widget", None);
        assert_eq!(
            all.iter().map(|h| h.path.as_str()).collect::<Vec<_>>(),
            ["b.py", "a.py"]
        );
        assert!(history.search("nothing matches", Some(&paths)).is_empty());
        assert!(history.search("widget", Some(&[])).is_empty());
    }

    fn commit_file(root: &Path, path: &str, text: &str, message: &str) {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
        git(root, &["add", "."]);
        git(root, &["commit", "-q", "-m", message]);
    }

    /// A work tree: the commits of HEAD, and for a folder of it only the commits that touched
    /// it, with paths relative to it; cached by commit.
    #[test]
    fn a_work_tree_reads_its_head_and_the_cache_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        git(&root, &["init", "-q"]);
        commit_file(&root, "README", "r\n", "Initial floatformat project");
        commit_file(&root, "pkg/filters.py", "x = 1\n", "Add floatformat filter");
        commit_file(&root, "docs/notes.md", "notes\n", "Document floatformat");
        commit_file(
            &root,
            "pkg/filters.py",
            "x = 2\n",
            "Fix floatformat rounding",
        );
        let source = HistorySource::of_checkout(&root).unwrap();
        let history = FileHistory::build(&source, &HistoryLimits::default()).unwrap();
        assert_eq!(history.commits(), 3, "the root commit is left out");
        assert_eq!(history.count("pkg/filters.py", "floatformat"), 2);
        assert_eq!(history.count("docs/notes.md", "document"), 1);
        assert!(!history.paths().any(|p| p == "README"));

        let inner = HistorySource::of_checkout(&root.join("pkg")).unwrap();
        let history = FileHistory::build(&inner, &HistoryLimits::default()).unwrap();
        assert_eq!(history.commits(), 2, "only commits that touched pkg/");
        assert_eq!(history.paths().collect::<Vec<_>>(), ["filters.py"]);

        let cache = dir.path().join("cache");
        // An older swex's histories go when this one writes; a newer one's and other caches stay.
        let version = crate::formats::HISTORY_FORMAT_VERSION;
        let beside = ["history-v1", "history-v999", "index-v3", "history-vx"];
        for folder in beside {
            std::fs::create_dir_all(cache.join(folder)).unwrap();
            std::fs::write(cache.join(folder).join("entry.bin"), b"x").unwrap();
        }
        let limits = HistoryLimits::default();
        let built = FileHistory::load_or_build(&cache, &source, &limits).unwrap();
        assert!(FileHistory::cache_path(&cache, &source, &limits).is_file());
        assert!(version > 1);
        assert!(!cache.join("history-v1").exists());
        for kept in &beside[1..] {
            assert!(cache.join(kept).join("entry.bin").is_file(), "{kept}");
        }
        // A cached history is read, not rebuilt: a garbled entry would be rebuilt, a valid one
        // is returned as stored.
        assert_eq!(
            FileHistory::load_or_build(&cache, &source, &limits).unwrap(),
            built
        );
        std::fs::write(
            FileHistory::cache_path(&cache, &source, &limits),
            b"garbage",
        )
        .unwrap();
        assert_eq!(
            FileHistory::load_or_build(&cache, &source, &limits).unwrap(),
            built
        );

        // A new commit is another key.
        commit_file(&root, "pkg/other.py", "y\n", "Add other");
        let moved = HistorySource::of_checkout(&root).unwrap();
        assert_ne!(moved.commit(), source.commit());
        assert_eq!(
            FileHistory::load_or_build(&cache, &moved, &limits)
                .unwrap()
                .commits(),
            4
        );
    }

    /// A work tree that moved on by a chain of commits extends the history last read instead of
    /// reading the log again, and gets the bytes a whole read gives; a short history, a branch
    /// switch and a merge are read whole.
    #[test]
    fn a_work_tree_that_moved_on_extends_the_history_last_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        let cache = dir.path().join("cache");
        // Small limits, so that the window and the per-file cap both cut.
        let limits = HistoryLimits {
            max_commits: 4,
            messages_per_file: 2,
            extend_commits: 3,
            ..HistoryLimits::default()
        };
        let mut step = 0;
        let mut commit = |message: &str| {
            step += 1;
            let path = ["pkg/filters.py", "pkg/other.py", "docs/notes.md"][step % 3];
            commit_file(&root, path, &format!("x = {step}\n"), message);
        };
        let load = |expected: HistoryOrigin| {
            let source = HistorySource::of_checkout(&root).unwrap();
            let (history, origin) =
                FileHistory::load_or_build_from(&cache, &source, &limits).unwrap();
            assert_eq!(origin, expected, "at {}", source.commit());
            assert_eq!(history, FileHistory::build(&source, &limits).unwrap());
            history
        };
        commit("Initial floatformat project");
        commit("Add floatformat filter");
        commit("Document floatformat rounding");
        load(HistoryOrigin::Read);
        commit("Fix floatformat rounding");
        load(HistoryOrigin::Read); // the history last read was shorter than the window
        commit("Refactor the filter registry");
        commit("Speed up other filters");
        assert_eq!(load(HistoryOrigin::Read).commits(), 4);
        commit("Fix floatformat with negative zero");
        load(HistoryOrigin::Extended { new_commits: 1 });
        load(HistoryOrigin::Cached);
        commit("Document the registry");
        commit("Fix other filters' rounding");
        commit("Add floatformat grouping");
        let extended = load(HistoryOrigin::Extended { new_commits: 3 });
        assert_eq!(extended.commits(), 4);
        commit("Rename the registry");
        commit("Fix floatformat with large numbers");
        commit("Speed up the registry");
        commit("Document grouping");
        load(HistoryOrigin::Read); // more new commits than `extend_commits`

        // Another branch from an older commit: the commit last read is not where it starts.
        git(&root, &["checkout", "-q", "-b", "side", "HEAD~2"]);
        commit("Side work on floatformat");
        load(HistoryOrigin::Read);
        // A merge among the new commits.
        git(
            &root,
            &["merge", "-q", "--no-ff", "-m", "Merge main", "main"],
        );
        load(HistoryOrigin::Read);
        commit("After the merge");
        load(HistoryOrigin::Extended { new_commits: 1 });
        // A merge alone, of a commit already in the history: still read whole (the history
        // leaves merges out, so it cannot be extended by one).
        let merge = git(
            &root,
            &[
                "commit-tree",
                "HEAD^{tree}",
                "-p",
                "HEAD",
                "-p",
                "HEAD~1",
                "-m",
                "Merge back",
            ],
        );
        git(&root, &["reset", "-q", "--hard", merge.trim()]);
        load(HistoryOrigin::Read);
    }

    /// The records of the commit each checkout last read stay within their bound, the newest
    /// kept.
    #[test]
    fn the_records_of_the_commits_last_read_are_bounded() {
        let cache = tempfile::tempdir().unwrap();
        let limits = HistoryLimits::default();
        let source = |n: usize| HistorySource {
            git_dir: PathBuf::from(format!("/checkouts/{n}/.git")),
            commit: format!("{n:040x}"),
            prefix: String::new(),
        };
        for n in 0..6 {
            // 40 bytes each: a bound of 100 keeps two.
            FileHistory::remember_head_within(cache.path(), &source(n), &limits, 100);
            let path = FileHistory::head_path(cache.path(), &source(n), &limits);
            let modified =
                std::time::SystemTime::now() - std::time::Duration::from_secs(60 - n as u64);
            std::fs::File::options()
                .append(true)
                .open(&path)
                .unwrap()
                .set_modified(modified)
                .unwrap();
        }
        let kept: Vec<usize> = (0..6)
            .filter(|&n| FileHistory::head_path(cache.path(), &source(n), &limits).is_file())
            .collect();
        assert_eq!(kept, [4, 5]);
        assert_eq!(
            std::fs::read_to_string(FileHistory::head_path(cache.path(), &source(5), &limits))
                .unwrap(),
            source(5).commit
        );
    }

    /// A clone that lacks an old object (a partial mirror): `git log` stops there with an error,
    /// and the history is the commits before it.
    #[test]
    fn a_mirror_missing_old_objects_gives_the_history_before_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        for (n, message) in ["oldest", "older", "newer", "newest"].iter().enumerate() {
            commit_file(
                root,
                "a.py",
                &format!("x = {n}\n"),
                &format!("The {message} change"),
            );
        }
        let tree = git(root, &["rev-parse", "HEAD~3^{tree}"]);
        std::fs::remove_file(root.join(".git/objects").join(&tree[..2]).join(&tree[2..])).unwrap();
        let source = HistorySource::of_checkout(root).unwrap();
        let history = FileHistory::build(&source, &HistoryLimits::default()).unwrap();
        assert!(
            (1..=2).contains(&history.commits()),
            "{}",
            history.commits()
        );
        assert_eq!(history.count("a.py", "newest"), 1);
        assert_eq!(history.count("a.py", "oldest"), 0);
    }

    /// Output past the byte limit is not read: the commits before it are the history.
    #[test]
    fn a_history_past_the_byte_limit_keeps_its_newest_commits() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        for n in 0..20 {
            commit_file(
                root,
                "a.py",
                &format!("x = {n}\n"),
                &format!("Change number{n}"),
            );
        }
        let source = HistorySource::of_checkout(root).unwrap();
        let whole = FileHistory::build(&source, &HistoryLimits::default()).unwrap();
        assert_eq!(whole.commits(), 19, "the root commit is left out");
        // A record is about 110 bytes (two object ids, the message, the file).
        let limits = HistoryLimits {
            max_log_bytes: 300,
            ..HistoryLimits::default()
        };
        let cut = FileHistory::build(&source, &limits).unwrap();
        assert!((1..5).contains(&cut.commits()), "{}", cut.commits());
        assert_eq!(cut.count("a.py", "number19"), 1, "the newest is kept");
        assert_eq!(cut.count("a.py", "number0"), 0);
        assert_ne!(
            FileHistory::cache_path(dir.path(), &source, &limits),
            FileHistory::cache_path(dir.path(), &source, &HistoryLimits::default()),
            "the limit is part of the key"
        );
    }

    /// The cache keeps the most recently used histories within its size.
    #[test]
    fn the_cache_drops_the_least_recently_used_beyond_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str, age_seconds: u64, bytes: usize| {
            let path = dir.path().join(name);
            std::fs::write(&path, vec![0u8; bytes]).unwrap();
            let time = std::time::SystemTime::now() - std::time::Duration::from_secs(age_seconds);
            std::fs::File::options()
                .append(true)
                .open(&path)
                .unwrap()
                .set_modified(time)
                .unwrap();
            path
        };
        at("old.bin", 300, 100);
        at("used.bin", 100, 100);
        let kept = at("new.bin", 400, 100);
        prune(dir.path(), &kept, 250);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            ["new.bin", "used.bin"],
            "the oldest goes, the one written stays"
        );
        prune(dir.path(), &kept, 1000);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            2,
            "within the size: nothing"
        );
    }

    #[test]
    fn a_plain_folder_has_no_history() {
        let dir = tempfile::tempdir().unwrap();
        match HistorySource::of_checkout(dir.path()) {
            Err(HistoryError::Absent(why)) => assert!(why.contains("neither"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}
