//! [`FsBackend`]: services straight from a snapshot directory, without indexes.
//!
//! It answers `list_files`, `file_info`, `read_lines` and `grep` (through the one implementation of
//! the file services, [`swex_plugin_serve::files`]) and `issue_clues`; the index services (chunks,
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
//! ([`swex_engine::scan::CheckoutRules`]; a `swex snapshot` is listed whole), and so are files
//! above the size limit (the index's, [`swex_engine::scan::DEFAULT_MAX_FILE_SIZE`] unless
//! [`FsBackend::with_max_file_size`] says otherwise), with a diagnostic.
//!
//! Every read goes through the engine's one reader of checkouts
//! ([`swex_engine::scan::CheckoutRoot::read`]): never out of the snapshot, even through a symlink
//! swapped in after the walk; never a FIFO or device; never more bytes than the size limit.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use swex_engine::scan::{
    CheckoutRoot, CheckoutRules, DEFAULT_MAX_FILE_SIZE, ReadRefused, Unfollowed,
};
use swex_plugin::types::*;
use swex_plugin::{ServiceError, ServiceErrorKind, ServiceId};
use swex_plugin_serve::{ServiceBackend, files};

pub struct FsBackend {
    root: PathBuf,
    max_file_size: u64,
    walk: OnceLock<Walk>,
}

struct Walk {
    /// The reader of the snapshot's files (`None` when the root cannot be resolved).
    checkout: Option<CheckoutRoot>,
    files: Vec<FileEntry>,
    diagnostics: Vec<String>,
}

impl FsBackend {
    /// The files of the snapshot at `root`, with the index's default size limit.
    pub fn new(root: impl Into<PathBuf>) -> FsBackend {
        FsBackend::with_max_file_size(root, DEFAULT_MAX_FILE_SIZE)
    }

    /// The files of the snapshot at `root`; files larger than `max_file_size` bytes are left
    /// out of the listing and never read (as by the index, `--max-file-size`).
    pub fn with_max_file_size(root: impl Into<PathBuf>, max_file_size: u64) -> FsBackend {
        FsBackend {
            root: root.into(),
            max_file_size,
            walk: OnceLock::new(),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn walk(&self) -> &Walk {
        self.walk.get_or_init(|| {
            let mut walk = Walk {
                checkout: None,
                files: Vec::new(),
                diagnostics: Vec::new(),
            };
            match CheckoutRoot::new(&self.root) {
                Ok(checkout) => {
                    let rules = CheckoutRules::new(&checkout);
                    let limit = self.max_file_size;
                    walk_dir((&checkout, &rules, limit), checkout.path(), "", &mut walk);
                    walk.checkout = Some(checkout);
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

    /// The entry and bytes of a listed file of the snapshot (of no other path), through the
    /// engine's one reader of checkouts.
    fn read(&self, service: ServiceId, path: &str) -> Result<(&FileEntry, Vec<u8>), ServiceError> {
        let entry = self
            .entry(path)
            .ok_or_else(|| files::not_found(service, path))?;
        let bytes = self.read_bytes(path).map_err(|e| {
            ServiceError::new(
                service,
                ServiceErrorKind::Failed,
                format!("reading {path}: {e}"),
            )
        })?;
        Ok((entry, bytes))
    }

    fn read_bytes(&self, path: &str) -> Result<Vec<u8>, ReadRefused> {
        let checkout = self.walk().checkout.as_ref().ok_or_else(|| {
            ReadRefused::Io(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{} cannot be listed", self.root.display()),
            ))
        })?;
        checkout.read(Path::new(path), self.max_file_size)
    }
}

fn walk_dir(
    (checkout, rules, limit): (&CheckoutRoot, &CheckoutRules, u64),
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
                walk_dir((checkout, rules, limit), &entry.path(), &path, walk);
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
                Ok(meta) if meta.is_file() && meta.len() > limit => walk.diagnostics.push(format!(
                    "{path}: {} bytes, above the {limit} byte limit",
                    meta.len()
                )),
                Ok(meta) if meta.is_file() => walk.files.push(FileEntry::new(path, meta.len())),
                _ => {}
            }
        }
    }
}

impl ServiceBackend for FsBackend {
    fn backend_name(&self) -> &str {
        "filesystem"
    }

    fn contains_file(&self, path: &str) -> bool {
        self.entry(path).is_some()
    }

    fn list_files(&self, args: ListFilesArgs) -> Result<ListFilesResult, ServiceError> {
        Ok(files::list_files(self.files(), &args))
    }

    fn file_info(&self, args: FileInfoArgs) -> Result<FileInfoResult, ServiceError> {
        let (entry, bytes) = self.read(ServiceId::FileInfo, &args.path)?;
        Ok(files::file_info(entry, &bytes))
    }

    fn read_lines(&self, args: ReadLinesArgs) -> Result<ReadLinesResult, ServiceError> {
        let (_, bytes) = self.read(ServiceId::ReadLines, &args.path)?;
        Ok(files::read_lines(&bytes, &args))
    }

    fn grep(&self, args: GrepArgs) -> Result<GrepResult, ServiceError> {
        let mut grep = files::Grep::new(&args)?;
        for file in self.files() {
            if grep.is_full() {
                break;
            }
            if !grep.wants(&file.path) {
                continue;
            }
            // An unreadable file is skipped, as a binary one is.
            if let Ok(bytes) = self.read_bytes(&file.path) {
                grep.search(&file.path, &bytes);
            }
        }
        Ok(grep.finish())
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
        let read = backend.read_lines(ReadLinesArgs::new("abs.py"));
        assert_eq!(read.unwrap_err().kind, ServiceErrorKind::NotFound);
        let grep = backend.grep(GrepArgs::new("password", 10)).unwrap();
        assert!(grep.matches.is_empty(), "{grep:?}");
    }

    /// A listed file swapped for a symlink out of the snapshot, thousands of times while reads
    /// and greps run, never gives the outside bytes.
    #[cfg(unix)]
    #[test]
    fn reads_never_follow_a_symlink_swapped_in_after_the_walk() {
        use std::os::unix::fs::symlink;
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.py");
        fs::write(&secret, "password = 'hunter2'\n").unwrap();
        let dir = fixture();
        let backend = FsBackend::new(dir.path());
        assert!(backend.contains_file("b.py"));
        let done = Arc::new(AtomicBool::new(false));
        let path = dir.path().join("b.py");
        let swapper_done = done.clone();
        let swapper = std::thread::spawn(move || {
            let (link, regular) = (path.with_extension("link"), path.with_extension("file"));
            for _ in 0..3000 {
                let _ = fs::remove_file(&link);
                symlink(&secret, &link).unwrap();
                fs::rename(&link, &path).unwrap();
                fs::write(&regular, "one\n").unwrap();
                fs::rename(&regular, &path).unwrap();
            }
            swapper_done.store(true, Ordering::SeqCst);
        });
        let mut inside = 0;
        // One more read after the swaps ended (the file is itself again then).
        let mut finished = false;
        while !finished {
            finished = done.load(Ordering::SeqCst);
            if let Ok(read) = backend.read_lines(ReadLinesArgs::new("b.py")) {
                assert!(!read.lines.concat().contains("hunter2"), "{read:?}");
                inside += usize::from(read.lines == ["one"]);
            }
            let grep = backend.grep(GrepArgs::new("hunter2", 10)).unwrap();
            assert!(grep.matches.is_empty(), "{grep:?}");
        }
        swapper.join().unwrap();
        assert!(inside > 0);
    }

    /// Files above the size limit are not listed; a listed file that grew past it, or was
    /// swapped for a FIFO, is refused (at once: the FIFO has no writer).
    #[test]
    fn reads_are_bounded_and_never_block() {
        let dir = fixture();
        fs::write(dir.path().join("big.py"), "x = 1\n".repeat(100)).unwrap();
        let backend = FsBackend::with_max_file_size(dir.path(), 64);
        assert!(!backend.contains_file("big.py"));
        assert!(
            backend
                .diagnostics()
                .iter()
                .any(|d| d == "big.py: 600 bytes, above the 64 byte limit"),
            "{:?}",
            backend.diagnostics()
        );
        fs::write(dir.path().join("b.py"), "y = 2\n".repeat(100)).unwrap();
        let error = backend.read_lines(ReadLinesArgs::new("b.py")).unwrap_err();
        assert!(error.message.contains("above the 64 byte limit"), "{error}");
        #[cfg(unix)]
        {
            fs::remove_file(dir.path().join("b.py")).unwrap();
            let made = std::process::Command::new("mkfifo")
                .arg(dir.path().join("b.py"))
                .status();
            if made.is_ok_and(|s| s.success()) {
                let (send, receive) = std::sync::mpsc::channel();
                std::thread::spawn(move || {
                    let _ = send.send(backend.read_lines(ReadLinesArgs::new("b.py")).is_err());
                });
                let refused = receive
                    .recv_timeout(std::time::Duration::from_secs(20))
                    .expect("reading a FIFO must not block");
                assert!(refused);
            }
        }
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
            let mut args = ReadLinesArgs::new(path);
            args.start = start;
            args.end = end;
            backend.read_lines(args)
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

        let grep = backend.grep(GrepArgs::new("match|return", 10)).unwrap();
        assert_eq!(grep.matches.len(), 1, "binary files are skipped: {grep:?}");
        assert_eq!(
            (grep.matches[0].path.as_str(), grep.matches[0].line),
            ("a/x.py", 2)
        );

        let unavailable = backend.lexical_search(SearchArgs::new("x", 1)).unwrap_err();
        assert_eq!(unavailable.kind, ServiceErrorKind::Unavailable);
        assert!(
            unavailable.message.contains("filesystem backend"),
            "{unavailable}"
        );
    }
}
