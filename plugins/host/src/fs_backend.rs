//! [`FsBackend`]: services straight from a snapshot directory, without indexes.
//!
//! It answers `list_files`, `file_info`, `read_lines` and `grep`; the index services (chunks,
//! lexical and dense search, definitions, graph) answer "not available". It is what
//! `swex explore` uses on a checkout when no engine index is at hand, and what the reference
//! baselines (`bm25-ref`, `tfidf-ref`, `simple_rule`) need.
//!
//! The file list is walked once, lazily: every regular file under the root, `.git` skipped,
//! directory symlinks not followed, file symlinks included when they point at a regular file inside
//! the snapshot (the engine's one symlink rule, [`swex_engine::scan::CheckoutRoot`]: a link out of
//! the snapshot is never followed, whatever the backend), sorted by path. Links that leave the
//! snapshot and names that are not UTF-8 are left out and reported by [`FsBackend::diagnostics`].
//! What the checkout's ignore rules exclude is left out too, by the same rules as the index
//! ([`swex_engine::scan::CheckoutRules`]; a `swex snapshot` is listed whole).

use crate::backend::ServiceBackend;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use swex_engine::scan::{CheckoutRoot, CheckoutRules, Unfollowed};
use swex_plugin::text::{Glob, decode_utf8_ignore, line_count, split_lines};
use swex_plugin::types::*;
use swex_plugin::{ServiceError, ServiceErrorKind, ServiceId};

pub struct FsBackend {
    root: PathBuf,
    walk: OnceLock<Walk>,
}

struct Walk {
    files: Vec<FileEntry>,
    diagnostics: Vec<String>,
}

impl FsBackend {
    pub fn new(root: impl Into<PathBuf>) -> FsBackend {
        FsBackend {
            root: root.into(),
            walk: OnceLock::new(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn walk(&self) -> &Walk {
        self.walk.get_or_init(|| {
            let mut walk = Walk {
                files: Vec::new(),
                diagnostics: Vec::new(),
            };
            match CheckoutRoot::new(&self.root) {
                Ok(checkout) => {
                    let rules = CheckoutRules::new(&checkout);
                    walk_dir((&checkout, &rules), checkout.path(), "", &mut walk)
                }
                Err(e) => walk
                    .diagnostics
                    .push(format!("cannot list {}: {e}", self.root.display())),
            }
            walk.files.sort_by(|a, b| a.path.cmp(&b.path));
            walk
        })
    }

    /// Every file of the snapshot, sorted by path.
    pub fn files(&self) -> &[FileEntry] {
        &self.walk().files
    }

    /// Files the walk could not list or left out (unreadable directories, names that are not
    /// UTF-8, symlinks that leave the snapshot).
    pub fn diagnostics(&self) -> &[String] {
        &self.walk().diagnostics
    }

    fn entry(&self, path: &str) -> Option<&FileEntry> {
        let files = self.files();
        files
            .binary_search_by(|entry| entry.path.as_str().cmp(path))
            .ok()
            .map(|index| &files[index])
    }

    /// The file's text (UTF-8, invalid bytes dropped), for a path of the snapshot only.
    fn read_text(&self, service: ServiceId, path: &str) -> Result<String, ServiceError> {
        if self.entry(path).is_none() {
            return Err(ServiceError::new(
                service,
                ServiceErrorKind::NotFound,
                format!("no file `{path}` in the snapshot"),
            ));
        }
        let bytes = fs::read(self.root.join(path)).map_err(|e| {
            ServiceError::new(
                service,
                ServiceErrorKind::Failed,
                format!("reading {path}: {e}"),
            )
        })?;
        Ok(decode_utf8_ignore(&bytes))
    }
}

fn walk_dir(
    (checkout, rules): (&CheckoutRoot, &CheckoutRules),
    dir: &Path,
    prefix: &str,
    walk: &mut Walk,
) {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            walk.diagnostics
                .push(format!("cannot list {}: {e}", dir.display()));
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                walk.diagnostics
                    .push(format!("cannot list {}: {e}", dir.display()));
                continue;
            }
        };
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            walk.diagnostics.push(format!(
                "skipped {}: the name is not UTF-8",
                entry.path().display()
            ));
            continue;
        };
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if rules.is_ignored(&path, file_type.is_dir()) {
            continue;
        }
        if file_type.is_dir() {
            if name != ".git" {
                walk_dir((checkout, rules), &entry.path(), &path, walk);
            }
        } else if file_type.is_file() || file_type.is_symlink() {
            // A link counts when it resolves inside the snapshot to a regular file; a dangling
            // link or a link to a directory does not (silently, as before); a link out of the
            // snapshot does not either, and is reported.
            let target = if file_type.is_symlink() {
                match checkout.resolve(&entry.path()) {
                    Ok(target) => target,
                    Err(unfollowed @ Unfollowed::Outside(_)) => {
                        walk.diagnostics
                            .push(unfollowed.diagnostic(&path).to_string());
                        continue;
                    }
                    Err(Unfollowed::Broken(_)) => continue,
                }
            } else {
                entry.path()
            };
            match fs::metadata(target) {
                Ok(meta) if meta.is_file() => walk.files.push(FileEntry {
                    path,
                    size: meta.len(),
                    language: None,
                    line_count: None,
                }),
                _ => {}
            }
        }
    }
}

fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

impl ServiceBackend for FsBackend {
    fn backend_name(&self) -> &str {
        "filesystem"
    }

    fn contains_file(&self, path: &str) -> bool {
        self.entry(path).is_some()
    }

    fn list_files(&self, args: ListFilesArgs) -> Result<ListFilesResult, ServiceError> {
        let files = match args.under.as_deref().map(|d| d.trim_end_matches('/')) {
            None | Some("") | Some(".") => self.files().to_vec(),
            Some(dir) => {
                let prefix = format!("{dir}/");
                self.files()
                    .iter()
                    .filter(|f| f.path.starts_with(&prefix))
                    .cloned()
                    .collect()
            }
        };
        Ok(ListFilesResult { files })
    }

    fn file_info(&self, args: FileInfoArgs) -> Result<FileInfoResult, ServiceError> {
        let text = self.read_text(ServiceId::FileInfo, &args.path)?;
        let mut file = self
            .entry(&args.path)
            .cloned()
            .expect("read_text checked it");
        file.line_count = Some(u32::try_from(line_count(&text)).unwrap_or(u32::MAX));
        Ok(FileInfoResult { file })
    }

    fn read_lines(&self, args: ReadLinesArgs) -> Result<ReadLinesResult, ServiceError> {
        let text = self.read_text(ServiceId::ReadLines, &args.path)?;
        let lines = split_lines(&text);
        let total = lines.len();
        let start = args.start.unwrap_or(1).max(1);
        let end = match args.end {
            None | Some(-1) => total,
            Some(end) if end < 1 => 0,
            Some(end) => (end as usize).min(total),
        };
        let first = start as usize - 1;
        let selected = if first < end {
            lines[first..end].iter().map(|l| (*l).to_owned()).collect()
        } else {
            Vec::new()
        };
        Ok(ReadLinesResult {
            start,
            lines: selected,
            total_lines: total as u32,
        })
    }

    fn grep(&self, args: GrepArgs) -> Result<GrepResult, ServiceError> {
        let invalid = |message: String| {
            ServiceError::new(ServiceId::Grep, ServiceErrorKind::InvalidArgs, message)
        };
        let regex = regex::RegexBuilder::new(&args.pattern)
            .case_insensitive(args.case_insensitive)
            .build()
            .map_err(|e| invalid(format!("pattern: {e}")))?;
        let glob = args
            .path_glob
            .as_deref()
            .map(Glob::new)
            .transpose()
            .map_err(|e| invalid(format!("path_glob: {e}")))?;
        let mut result = GrepResult::default();
        for file in self.files() {
            if glob.as_ref().is_some_and(|g| !g.is_match(&file.path)) {
                continue;
            }
            let mut bytes = Vec::new();
            let readable = fs::File::open(self.root.join(&file.path))
                .and_then(|mut f| f.read_to_end(&mut bytes))
                .is_ok();
            if !readable || is_binary(&bytes) {
                continue;
            }
            let text = decode_utf8_ignore(&bytes);
            for (index, line) in split_lines(&text).into_iter().enumerate() {
                if regex.is_match(line) {
                    if result.matches.len() == args.limit {
                        result.truncated = true;
                        return Ok(result);
                    }
                    result.matches.push(GrepMatch {
                        path: file.path.clone(),
                        line: index as u32 + 1,
                        text: line.to_owned(),
                    });
                }
            }
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, content: &[u8]| {
            let full = dir.path().join(path);
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(full, content).unwrap();
        };
        write("b.py", b"one\r\ntwo\rthree\n");
        write("a/x.py", b"def f():\n    return 1\n");
        write(".git/config", b"[core]\n");
        write("bin.dat", b"\0\0match\n");
        write("bad.txt", b"ok\xff line\n");
        dir
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_out_of_the_snapshot_are_never_followed() {
        use std::os::unix::fs::symlink;
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.py"), "password = 1\n").unwrap();
        let dir = fixture();
        let root = dir.path();
        symlink(outside.path().join("secret.py"), root.join("abs.py")).unwrap();
        let depth = root.components().count();
        let relative = format!("{}{}", "../".repeat(depth), outside.path().display());
        symlink(format!("{relative}/secret.py"), root.join("a/rel.py")).unwrap();
        symlink("x.py", root.join("a/inside.py")).unwrap();
        symlink("missing.py", root.join("dangling.py")).unwrap();
        let backend = FsBackend::new(root);
        let paths: Vec<&str> = backend.files().iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            ["a/inside.py", "a/x.py", "b.py", "bad.txt", "bin.dat"]
        );
        let diagnostics = backend.diagnostics().join("\n");
        for link in ["abs.py", "a/rel.py"] {
            assert!(
                diagnostics.contains(&format!("{link}: symlink points outside the snapshot")),
                "{diagnostics}"
            );
        }
        let read = backend.read_lines(ReadLinesArgs {
            path: "abs.py".into(),
            start: None,
            end: None,
        });
        assert_eq!(read.unwrap_err().kind, ServiceErrorKind::NotFound);
        let grep = backend
            .grep(GrepArgs {
                pattern: "password".into(),
                path_glob: None,
                case_insensitive: false,
                limit: 10,
            })
            .unwrap();
        assert!(grep.matches.is_empty(), "{grep:?}");
    }

    #[test]
    fn ignored_files_are_not_listed() {
        let dir = fixture();
        fs::write(dir.path().join(".gitignore"), "a/\n*.dat\n").unwrap();
        let backend = FsBackend::new(dir.path());
        let paths: Vec<&str> = backend.files().iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, [".gitignore", "b.py", "bad.txt"]);
    }

    #[test]
    fn lists_reads_and_greps() {
        let dir = fixture();
        let backend = FsBackend::new(dir.path());
        let paths: Vec<&str> = backend.files().iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["a/x.py", "b.py", "bad.txt", "bin.dat"]);

        let read = |path: &str, start, end| {
            backend.read_lines(ReadLinesArgs {
                path: path.to_owned(),
                start,
                end,
            })
        };
        let all = read("b.py", None, None).unwrap();
        assert_eq!(
            (all.lines.clone(), all.total_lines),
            (vec!["one".into(), "two".into(), "three".into()], 3)
        );
        assert_eq!(read("b.py", Some(2), Some(2)).unwrap().lines, ["two"]);
        assert_eq!(read("b.py", Some(3), Some(-1)).unwrap().lines, ["three"]);
        assert!(read("b.py", Some(5), Some(9)).unwrap().lines.is_empty());
        assert_eq!(read("bad.txt", None, None).unwrap().lines, ["ok line"]);
        assert_eq!(
            read("../etc/passwd", None, None).unwrap_err().kind,
            ServiceErrorKind::NotFound
        );
        assert_eq!(
            read(".git/config", None, None).unwrap_err().kind,
            ServiceErrorKind::NotFound
        );

        let grep = backend
            .grep(GrepArgs {
                pattern: "match|return".into(),
                path_glob: None,
                case_insensitive: false,
                limit: 10,
            })
            .unwrap();
        assert_eq!(grep.matches.len(), 1, "binary files are skipped: {grep:?}");
        assert_eq!(
            (grep.matches[0].path.as_str(), grep.matches[0].line),
            ("a/x.py", 2)
        );

        let unavailable = backend
            .lexical_search(SearchArgs {
                query: "x".into(),
                limit: 1,
                under: None,
            })
            .unwrap_err();
        assert_eq!(unavailable.kind, ServiceErrorKind::Unavailable);
        assert!(
            unavailable.message.contains("filesystem backend"),
            "{unavailable}"
        );
    }
}
