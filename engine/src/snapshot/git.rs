//! The `git` command-line tool as a read-only object store: resolve a commit, list its tree, stream
//! its blobs.
//!
//! swex reads git through the `git` CLI (present wherever swex runs) instead of linking a git
//! library: it understands every repository format git itself does (packs, promisor packs of
//! partial clones, alternates, worktree `.git` files) and adds no native dependency.
//!
//! This layer knows nothing about where the blobs are written or which paths are safe; it only
//! speaks git's wire formats (`ls-tree -z`, `cat-file --batch`). Every command runs with
//! `GIT_NO_LAZY_FETCH=1`, so a partial clone answers "missing" for an absent blob instead of going to
//! the network behind the caller's back.

use super::SnapshotError;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Stdio};

/// A git directory (bare, or the `.git` of a work tree) opened for reading.
#[derive(Debug, Clone)]
pub struct GitDir {
    path: PathBuf,
}

/// What a tree entry is, from its git mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file (`100644`, or a legacy `100664`).
    File,
    /// A regular file with the executable bit (`100755`).
    Executable,
    /// A symbolic link (`120000`): the blob holds the link target.
    Symlink,
    /// A submodule (`160000`): the object is a commit of another repository.
    Submodule,
}

/// One entry of a recursive tree listing. `path` is git's raw bytes: git does not promise UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub kind: EntryKind,
    pub object: String,
    pub path: Vec<u8>,
}

/// The answer of `cat-file --batch` for one requested object.
pub enum BlobAnswer<'a> {
    /// The object is present: read exactly `size` bytes from `content`.
    Present {
        size: u64,
        content: &'a mut dyn Read,
    },
    /// The object is not in the repository (a partial copy).
    Missing,
}

impl GitDir {
    /// Opens `path` as a git directory. A non-bare repository may be given by its work tree (the
    /// folder holding `.git`) or by its `.git`; both are checked with git itself.
    pub fn open(path: &Path) -> Result<GitDir, SnapshotError> {
        let dot_git = path.join(".git");
        let git_dir = if dot_git.exists() {
            dot_git
        } else {
            path.to_path_buf()
        };
        if !git_dir.exists() {
            return Err(SnapshotError::NotAGitDir {
                path: path.to_path_buf(),
                detail: "no such file or directory".into(),
            });
        }
        let dir = GitDir { path: git_dir };
        let probe = dir.output(["rev-parse", "--git-dir"])?;
        if !probe.status.success() {
            return Err(SnapshotError::NotAGitDir {
                path: path.to_path_buf(),
                detail: stderr_text(&probe.stderr),
            });
        }
        Ok(dir)
    }

    /// The directory passed to `git --git-dir`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A `git` command aimed at this directory, isolated from the caller's environment.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("--git-dir")
            .arg(&self.path)
            .env("GIT_NO_LAZY_FETCH", "1")
            // The caller's GIT_* variables must not redirect or reshape what we read.
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_OBJECT_DIRECTORY")
            .env_remove("GIT_ALTERNATE_OBJECT_DIRECTORIES")
            .env_remove("GIT_NAMESPACE")
            .stdin(Stdio::null());
        cmd
    }

    fn output<I, S>(&self, args: I) -> Result<std::process::Output, SnapshotError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command()
            .args(args)
            .output()
            .map_err(|source| SnapshotError::GitSpawn { source })
    }

    /// The full hash of the commit `rev` names (a hash, an abbreviation, a tag or a branch), or
    /// [`SnapshotError::UnknownCommit`].
    pub fn resolve_commit(&self, rev: &str) -> Result<String, SnapshotError> {
        let spec = format!("{rev}^{{commit}}");
        let out = self.output([
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ])?;
        let hash = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if !out.status.success() || hash.is_empty() {
            return Err(SnapshotError::UnknownCommit {
                git_dir: self.path.clone(),
                commit: rev.to_string(),
            });
        }
        Ok(hash)
    }

    /// Every non-tree entry of `commit`'s tree, recursively, in git's path order.
    pub fn list_tree(&self, commit: &str) -> Result<Vec<TreeEntry>, SnapshotError> {
        let out = self.output(["ls-tree", "-r", "-z", "--full-tree", commit])?;
        if !out.status.success() {
            return Err(self.failed("ls-tree", &out.stderr));
        }
        out.stdout
            .split(|&b| b == 0)
            .filter(|record| !record.is_empty())
            .map(parse_ls_tree_record)
            .collect()
    }

    /// Streams the objects `ids` through one `git cat-file --batch`, calling `each` with the index
    /// of the request and its answer, in request order. The ids are fed from a separate thread so
    /// neither pipe can fill up and block git.
    pub fn stream_blobs<F>(&self, ids: &[&str], mut each: F) -> Result<(), SnapshotError>
    where
        F: FnMut(usize, BlobAnswer<'_>) -> Result<(), SnapshotError>,
    {
        if ids.is_empty() {
            return Ok(());
        }
        let mut child = self
            .command()
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| SnapshotError::GitSpawn { source })?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let request: Vec<u8> = ids
            .iter()
            .flat_map(|id| [id.as_bytes(), b"\n"].concat())
            .collect();
        // Requests are fed, and stderr drained, from their own threads so that no pipe can fill
        // up and block git while we read its answers.
        let feeder = std::thread::spawn(move || {
            // A write error means git exited early; its status and stderr tell why.
            let _ = stdin.write_all(&request);
        });
        let drainer = std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = stderr.read_to_end(&mut text);
            text
        });
        let stdout = child.stdout.take().expect("stdout is piped");
        let result = self.read_batch(ids, BufReader::with_capacity(1 << 16, stdout), &mut each);
        if result.is_err() {
            // We stopped reading early: git would block on a full pipe.
            let _ = child.kill();
        }
        let status = child.wait();
        let _ = feeder.join();
        let stderr = drainer.join().unwrap_or_default();
        match result {
            // git's own words explain a broken answer better than the broken answer does.
            Err(SnapshotError::GitFailed { .. }) if !stderr.is_empty() => {
                Err(self.failed("cat-file --batch", &stderr))
            }
            Err(e) => Err(e),
            Ok(()) => {
                let status = status.map_err(|source| SnapshotError::GitSpawn { source })?;
                if status.success() {
                    Ok(())
                } else {
                    Err(self.failed("cat-file --batch", &stderr))
                }
            }
        }
    }

    fn read_batch<F>(
        &self,
        ids: &[&str],
        mut stdout: BufReader<ChildStdout>,
        each: &mut F,
    ) -> Result<(), SnapshotError>
    where
        F: FnMut(usize, BlobAnswer<'_>) -> Result<(), SnapshotError>,
    {
        let mut header = Vec::with_capacity(96);
        for (index, id) in ids.iter().enumerate() {
            header.clear();
            let read = stdout
                .read_until(b'\n', &mut header)
                .map_err(|e| self.protocol(format!("reading the answer for {id}: {e}")))?;
            if read == 0 {
                return Err(self.protocol(format!("git stopped before answering for {id}")));
            }
            let line = String::from_utf8_lossy(&header);
            let fields: Vec<&str> = line.trim_end().split(' ').collect();
            match fields.as_slice() {
                [_, "missing"] => each(index, BlobAnswer::Missing)?,
                [_, _kind, size] => {
                    let size: u64 = size
                        .parse()
                        .map_err(|_| self.protocol(format!("bad object header {line:?}")))?;
                    let mut content = (&mut stdout).take(size);
                    each(
                        index,
                        BlobAnswer::Present {
                            size,
                            content: &mut content,
                        },
                    )?;
                    // Whatever the callback left unread is drained, then the record's newline.
                    std::io::copy(&mut content, &mut std::io::sink())
                        .map_err(|e| self.protocol(format!("reading {id}: {e}")))?;
                    let mut newline = [0u8; 1];
                    stdout
                        .read_exact(&mut newline)
                        .map_err(|e| self.protocol(format!("reading {id}: {e}")))?;
                }
                _ => return Err(self.protocol(format!("unexpected answer {line:?} for {id}"))),
            }
        }
        Ok(())
    }

    fn failed(&self, what: &str, stderr: &[u8]) -> SnapshotError {
        SnapshotError::GitFailed {
            git_dir: self.path.clone(),
            command: what.to_string(),
            stderr: stderr_text(stderr),
        }
    }

    fn protocol(&self, detail: String) -> SnapshotError {
        SnapshotError::GitFailed {
            git_dir: self.path.clone(),
            command: "cat-file --batch".into(),
            stderr: detail,
        }
    }
}

fn stderr_text(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr).trim().to_string()
}

/// Parses `<mode> SP <type> SP <object> TAB <path>` (one `ls-tree -z` record).
fn parse_ls_tree_record(record: &[u8]) -> Result<TreeEntry, SnapshotError> {
    let malformed = || SnapshotError::MalformedTreeListing {
        record: String::from_utf8_lossy(record).into_owned(),
    };
    let tab = record
        .iter()
        .position(|&b| b == b'\t')
        .ok_or_else(malformed)?;
    let meta = std::str::from_utf8(&record[..tab]).map_err(|_| malformed())?;
    let path = record[tab + 1..].to_vec();
    let mut fields = meta.split(' ');
    let (Some(mode), Some(_type), Some(object), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err(malformed());
    };
    let mode = u32::from_str_radix(mode, 8).map_err(|_| malformed())?;
    let kind = match mode & 0o170000 {
        0o100000 if mode & 0o111 != 0 => EntryKind::Executable,
        0o100000 => EntryKind::File,
        0o120000 => EntryKind::Symlink,
        0o160000 => EntryKind::Submodule,
        _ => return Err(malformed()),
    };
    Ok(TreeEntry {
        kind,
        object: object.to_string(),
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(record: &[u8], expected: Option<(EntryKind, &str, &[u8])>) {
        let parsed = parse_ls_tree_record(record).ok();
        let expected = expected.map(|(kind, object, path)| TreeEntry {
            kind,
            object: object.to_string(),
            path: path.to_vec(),
        });
        assert_eq!(
            parsed,
            expected,
            "record {:?}",
            String::from_utf8_lossy(record)
        );
    }

    #[test]
    fn parses_ls_tree_records() {
        check(
            b"100644 blob abc\tREADME",
            Some((EntryKind::File, "abc", b"README")),
        );
        check(
            b"100664 blob abc\ta/b",
            Some((EntryKind::File, "abc", b"a/b")),
        );
        check(
            b"100755 blob abc\tbin/run",
            Some((EntryKind::Executable, "abc", b"bin/run")),
        );
        check(
            b"120000 blob abc\tlink",
            Some((EntryKind::Symlink, "abc", b"link")),
        );
        check(
            b"160000 commit abc\tvendor/x",
            Some((EntryKind::Submodule, "abc", b"vendor/x")),
        );
        check(
            b"100644 blob abc\twith\ttab",
            Some((EntryKind::File, "abc", b"with\ttab")),
        );
        check(
            b"100644 blob abc\t\xff\xfe",
            Some((EntryKind::File, "abc", b"\xff\xfe")),
        );
        check(b"040000 tree abc\tdir", None);
        check(b"100644 blob abc", None);
        check(b"100644 blob\tx", None);
        check(b"10x644 blob abc\tx", None);
    }
}
