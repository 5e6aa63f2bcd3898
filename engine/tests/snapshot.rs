//! Snapshot materialisation against fixture repositories made here with the `git` CLI.
//!
//! Every fixture lives in a temporary folder; no test needs the network (the GitHub fetch is
//! pointed at a `file://` folder).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use swex_engine::snapshot::{
    BatchOptions, GitDir, GitDirs, GithubFetcher, InstanceOutcome, Materialized, Progress,
    RefusalReason, RefusedEntry, RepoLocator, SnapshotError, SnapshotJob, SnapshotLayout,
    WorkTreeHead, materialize, read_tracked_paths, read_work_tree_head, run_batch,
    work_tree_git_dirs,
};
use tempfile::TempDir;

/// Runs git in `dir` with a configuration independent of the machine's, returning stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    git_with_input(dir, args, None)
}

fn git_with_input(dir: &Path, args: &[&str], input: Option<&[u8]>) -> String {
    use std::io::Write;
    let mut child = swex_testkit::git_command(dir)
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("git runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.unwrap_or_default()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A non-bare repository with a work tree, built commit by commit.
struct Repo {
    dir: PathBuf,
}

impl Repo {
    fn new(dir: PathBuf) -> Repo {
        fs::create_dir_all(&dir).unwrap();
        git(&dir, &["init", "-q"]);
        Repo { dir }
    }

    fn write(&self, path: &str, content: &str) -> &Repo {
        let path = self.dir.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
        self
    }

    #[cfg(unix)]
    fn make_executable(&self, path: &str) -> &Repo {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(self.dir.join(path), fs::Permissions::from_mode(0o755)).unwrap();
        self
    }

    fn commit(&self, message: &str) -> String {
        git(&self.dir, &["add", "-A"]);
        git(&self.dir, &["commit", "-q", "-m", message]);
        git(&self.dir, &["rev-parse", "HEAD"])
    }

    /// A linked worktree of the repository beside it, at `commit` (`git worktree add`).
    fn add_worktree(&self, name: &str, options: &[&str], commit: &str) -> PathBuf {
        let path = self.dir.parent().unwrap().join(name);
        let mut args = vec!["worktree", "add", "-q"];
        args.extend(options);
        args.extend([path.to_str().unwrap(), commit]);
        git(&self.dir, &args);
        path
    }

    /// `library` as a submodule at `path` (`git submodule add` from its folder).
    fn add_submodule(&self, library: &Repo, path: &str) {
        let url = library.dir.to_str().unwrap();
        let allow_file_urls = ["-c", "protocol.file.allow=always"];
        let mut args = allow_file_urls.to_vec();
        args.extend(["submodule", "add", "-q", url, path]);
        git(&self.dir, &args);
    }

    fn git_dir(&self) -> GitDir {
        GitDir::open(&self.dir).expect("fixture is a repository")
    }

    /// A blob's object id, written into the object store.
    fn blob(&self, content: &[u8]) -> String {
        git_with_input(&self.dir, &["hash-object", "-w", "--stdin"], Some(content))
    }

    /// A tree from `mktree` lines (`<mode> <type> <id>\t<name>`); git accepts names here that
    /// `git add` never would.
    fn tree(&self, lines: &[String]) -> String {
        let input = lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        git_with_input(&self.dir, &["mktree"], Some(input.as_bytes()))
    }

    fn commit_tree(&self, tree: &str) -> String {
        git(&self.dir, &["commit-tree", "-m", "crafted", tree])
    }
}

/// The pid of a process that has exited (and been reaped).
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every path under `root`, relative, sorted (symlinks listed, not followed).
fn listing(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if entry.file_type().unwrap().is_dir() {
                walk(root, &path, out);
            } else {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

fn made(result: Result<Materialized, SnapshotError>) -> swex_engine::snapshot::Report {
    match result {
        Ok(Materialized::Made(report)) => report,
        other => panic!("expected a new snapshot, got {other:?}"),
    }
}

/// Two commits: the snapshot of the first has its files and modes, nothing of the second, and no
/// marker inside the tree.
#[test]
fn writes_files_and_modes_at_the_commit() {
    let tmp = TempDir::new().unwrap();
    let repo = Repo::new(tmp.path().join("src"));
    let files = [
        ("README.md", "hello\n"),
        ("pkg/mod.py", "def f():\n    return 1\n"),
        ("bin/run", "#!/bin/sh\necho run\n"),
    ];
    for (path, content) in files {
        repo.write(path, content);
    }
    #[cfg(unix)]
    repo.make_executable("bin/run");
    let first = repo.commit("first");
    repo.write("pkg/mod.py", "changed\n")
        .write("later.txt", "later\n");
    repo.commit("second");

    let target = tmp.path().join("repos").join("inst-1");
    let report = made(materialize(&repo.git_dir(), &first, &target, false));

    assert_eq!(report.commit, first);
    assert_eq!(report.files, 3);
    let bytes: usize = files.iter().map(|(_, content)| content.len()).sum();
    assert_eq!(report.bytes, bytes as u64);
    assert!(report.missing_blobs.is_empty() && report.refused.is_empty());
    assert_eq!(listing(&target), ["README.md", "bin/run", "pkg/mod.py"]);
    assert_eq!(read(&target.join("pkg/mod.py")), "def f():\n    return 1\n");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &str| fs::metadata(target.join(p)).unwrap().permissions().mode();
        assert_ne!(
            mode("bin/run") & 0o100,
            0,
            "bin/run keeps its executable bit"
        );
        assert_eq!(mode("README.md") & 0o111, 0, "README.md is not executable");
    }
    // The marker is a sidecar, outside the tree explorers walk.
    let marker = SnapshotLayout::new(&target).unwrap().marker_path();
    assert_eq!(marker, tmp.path().join("repos/.swex/inst-1.json"));
    let text = read(&marker);
    assert!(text.contains(&first), "marker names the commit: {text}");
    assert_eq!(
        fs::read_dir(tmp.path().join("repos/.swex/tmp"))
            .unwrap()
            .count(),
        0,
        "no temporary folder is left"
    );
}

/// The same repository read as a work tree, as its `.git`, and as a bare clone, gives the same
/// snapshot; branch names and abbreviations resolve to the full hash.
#[test]
fn reads_bare_and_non_bare_git_dirs_and_any_revision() {
    let tmp = TempDir::new().unwrap();
    let repo = Repo::new(tmp.path().join("src"));
    repo.write("a.txt", "a\n");
    let commit = repo.commit("one");
    let bare = tmp.path().join("bare.git");
    git(tmp.path(), &["clone", "-q", "--bare", "src", "bare.git"]);

    let sources = [repo.dir.clone(), repo.dir.join(".git"), bare];
    for (i, source) in sources.iter().enumerate() {
        let git_dir = GitDir::open(source).unwrap();
        for (j, rev) in ["main", &commit[..10], &commit].iter().enumerate() {
            let target = tmp.path().join("out").join(format!("s{i}-{j}"));
            let report = made(materialize(&git_dir, rev, &target, false));
            assert_eq!(report.commit, commit, "{} at {rev}", source.display());
            assert_eq!(read(&target.join("a.txt")), "a\n");
        }
    }
}

#[test]
fn unknown_commit_and_non_git_dir_are_clear_errors() {
    let tmp = TempDir::new().unwrap();
    let repo = Repo::new(tmp.path().join("src"));
    repo.write("a.txt", "a\n");
    repo.commit("one");
    let target = tmp.path().join("out/x");

    let missing = "0123456789abcdef0123456789abcdef01234567";
    match materialize(&repo.git_dir(), missing, &target, false) {
        Err(SnapshotError::UnknownCommit { commit, .. }) => assert_eq!(commit, missing),
        other => panic!("expected UnknownCommit, got {other:?}"),
    }
    assert!(!target.exists(), "nothing is written for an unknown commit");

    let plain = tmp.path().join("plain");
    fs::create_dir_all(&plain).unwrap();
    assert!(matches!(
        GitDir::open(&plain),
        Err(SnapshotError::NotAGitDir { .. })
    ));
    assert!(matches!(
        GitDir::open(&tmp.path().join("nowhere")),
        Err(SnapshotError::NotAGitDir { .. })
    ));
}

/// A second run keeps the snapshot untouched; another commit needs `force`; so does a folder that
/// swex did not make.
#[test]
fn is_idempotent_and_guards_existing_folders() {
    let tmp = TempDir::new().unwrap();
    let repo = Repo::new(tmp.path().join("src"));
    repo.write("a.txt", "one\n");
    let first = repo.commit("one");
    repo.write("a.txt", "two\n");
    let second = repo.commit("two");
    let git_dir = repo.git_dir();
    let target = tmp.path().join("repos/inst");

    let report = made(materialize(&git_dir, &first, &target, false));
    let mtime = || {
        fs::metadata(target.join("a.txt"))
            .unwrap()
            .modified()
            .unwrap()
    };
    let before = mtime();
    match materialize(&git_dir, &first, &target, false) {
        Ok(Materialized::AlreadyThere(again)) => assert_eq!(again, report),
        other => panic!("expected AlreadyThere, got {other:?}"),
    }
    // A branch name is resolved, then recognised as the same commit.
    assert!(matches!(
        materialize(&git_dir, "main~1", &target, false),
        Ok(Materialized::AlreadyThere(_))
    ));
    assert_eq!(mtime(), before, "an existing snapshot is not rewritten");

    match materialize(&git_dir, &second, &target, false) {
        Err(SnapshotError::ExistsAtOtherCommit {
            existing, wanted, ..
        }) => assert_eq!((existing, wanted), (first.clone(), second.clone())),
        other => panic!("expected ExistsAtOtherCommit, got {other:?}"),
    }
    assert_eq!(read(&target.join("a.txt")), "one\n");
    made(materialize(&git_dir, &second, &target, true));
    assert_eq!(read(&target.join("a.txt")), "two\n");

    let foreign = tmp.path().join("repos/foreign");
    fs::create_dir_all(&foreign).unwrap();
    fs::write(foreign.join("mine.txt"), "user data").unwrap();
    assert!(matches!(
        materialize(&git_dir, &first, &foreign, false),
        Err(SnapshotError::ExistsUnmarked { .. })
    ));
    assert!(
        foreign.join("mine.txt").exists(),
        "a foreign folder is left alone"
    );
    made(materialize(&git_dir, &first, &foreign, true));
    assert_eq!(listing(&foreign), ["a.txt"]);
}

/// What a killed run leaves behind (a temporary folder of a dead process, a marker written just
/// before the final rename) does not count as a snapshot and is cleaned by the next run.
#[test]
fn resumes_after_a_killed_run() {
    let tmp = TempDir::new().unwrap();
    let repo = Repo::new(tmp.path().join("src"));
    repo.write("a.txt", "a\n");
    let commit = repo.commit("one");
    let repos = tmp.path().join("repos");
    let target = repos.join("inst");

    // A process that has exited: its pid names the leftovers.
    let dead_pid = dead_pid();
    let leftovers = [
        repos.join(format!(".swex/tmp/inst.{dead_pid}.0")),
        repos.join(format!(".swex/tmp/inst.{dead_pid}.1.old")),
    ];
    for dir in &leftovers {
        fs::create_dir_all(dir.join("half/written")).unwrap();
        fs::write(dir.join("half/written/file.py"), "partial").unwrap();
    }
    let other_name = repos.join(format!(".swex/tmp/other.{dead_pid}.0"));
    fs::create_dir_all(&other_name).unwrap();
    // Killed after the marker was written, before the folder was renamed into place.
    fs::write(
        repos.join(".swex/inst.json"),
        format!(r#"{{"format":1,"requested":"{commit}","git_dir":"x","made_by":"x","report":{{"commit":"{commit}","files":1,"bytes":2,"symlinks":0,"missing_blobs":[],"refused":[],"submodules":[]}}}}"#),
    )
    .unwrap();
    assert!(
        SnapshotLayout::new(&target)
            .unwrap()
            .read_marker()
            .is_none()
    );

    made(materialize(&repo.git_dir(), &commit, &target, false));
    assert_eq!(listing(&target), ["a.txt"]);
    for dir in &leftovers {
        assert!(!dir.exists(), "{} was cleaned", dir.display());
    }
    assert!(
        other_name.exists(),
        "another snapshot's leftovers are its own run's business"
    );
}

/// A blob absent from the object store (a partial copy) is skipped and listed; the rest is written.
#[test]
fn skips_and_counts_missing_blobs() {
    let tmp = TempDir::new().unwrap();
    let repo = Repo::new(tmp.path().join("src"));
    repo.write("keep.txt", "kept\n")
        .write("data/huge.bin", "pretend this is 4 MiB\n")
        .write("data/also.txt", "also kept\n");
    let commit = repo.commit("one");
    let blob = git(
        &repo.dir,
        &["rev-parse", &format!("{commit}:data/huge.bin")],
    );
    let loose = repo
        .dir
        .join(".git/objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    fs::remove_file(&loose).expect("a fresh commit's blobs are loose objects");

    let target = tmp.path().join("repos/inst");
    let report = made(materialize(&repo.git_dir(), &commit, &target, false));
    assert_eq!(report.missing_blobs, ["data/huge.bin"]);
    assert_eq!(report.files, 2);
    assert_eq!(listing(&target), ["data/also.txt", "keep.txt"]);
}

/// Symlinks that resolve inside are created as symlinks; those that leave the snapshot are refused
/// and never created.
#[cfg(unix)]
#[test]
fn keeps_inside_symlinks_and_refuses_outside_ones() {
    let tmp = TempDir::new().unwrap();
    let repo = Repo::new(tmp.path().join("src"));
    let file = repo.blob(b"content\n");
    let link = |target: &str| repo.blob(target.as_bytes());
    let sub = repo.tree(&[
        format!("120000 blob {}\tup", link("../file.txt")),
        format!("120000 blob {}\tescape", link("../../outside")),
    ]);
    let tree = repo.tree(&[
        format!("100644 blob {file}\tfile.txt"),
        format!("040000 tree {sub}\tsub"),
        format!("120000 blob {}\tlink", link("file.txt")),
        format!("120000 blob {}\tabsolute", link("/etc/passwd")),
        format!("120000 blob {}\tself-root", link(".")),
        format!("120000 blob {}\tvia-root", link("self-root/../x")),
    ]);
    let commit = repo.commit_tree(&tree);

    let target = tmp.path().join("repos/inst");
    let report = made(materialize(&repo.git_dir(), &commit, &target, false));
    assert_eq!(report.symlinks, 3);
    let mut refused = report.refused.clone();
    refused.sort_by(|a, b| a.path.cmp(&b.path));
    let expected = [
        ("absolute", RefusalReason::SymlinkOutside),
        ("sub/escape", RefusalReason::SymlinkOutside),
        ("via-root", RefusalReason::SymlinkOutside),
    ]
    .map(|(path, reason)| RefusedEntry {
        path: path.into(),
        reason,
    });
    assert_eq!(refused, expected);
    assert_eq!(
        fs::read_link(target.join("link")).unwrap(),
        Path::new("file.txt")
    );
    assert_eq!(read(&target.join("sub/up")), "content\n");
    assert_eq!(
        fs::read_link(target.join("self-root")).unwrap(),
        Path::new(".")
    );
    for refused in ["absolute", "sub/escape", "via-root"] {
        assert!(
            fs::symlink_metadata(target.join(refused)).is_err(),
            "{refused}"
        );
    }
}

/// Entries named `..`, `.`, `.git` (any case) are refused; a path colliding with another entry is
/// refused as a conflict; submodules are skipped and counted. Nothing lands outside the target.
#[test]
fn refuses_hostile_entries_and_skips_submodules() {
    let tmp = TempDir::new().unwrap();
    let repo = Repo::new(tmp.path().join("src"));
    let blob = repo.blob(b"payload\n");
    let evil = repo.tree(&[format!("100644 blob {blob}\tevil")]);
    let submodule_commit = "1111111111111111111111111111111111111111";
    let tree = repo.tree(&[
        format!("040000 tree {evil}\t.."),
        format!("040000 tree {evil}\t.Git"),
        format!("040000 tree {evil}\t.git"),
        format!("100644 blob {blob}\t."),
        format!("100644 blob {blob}\tdup"),
        format!("040000 tree {evil}\tdup"),
        format!("100644 blob {blob}\tok.txt"),
        format!("160000 commit {submodule_commit}\tvendor"),
    ]);
    let commit = repo.commit_tree(&tree);

    let repos = tmp.path().join("deep/repos");
    let target = repos.join("inst");
    let report = made(materialize(&repo.git_dir(), &commit, &target, false));
    let mut refused: Vec<(String, RefusalReason)> = report
        .refused
        .iter()
        .map(|r| (r.path.clone(), r.reason))
        .collect();
    refused.sort();
    let expected: Vec<(String, RefusalReason)> = [
        (".", RefusalReason::DotComponent),
        ("../evil", RefusalReason::DotComponent),
        (".Git/evil", RefusalReason::GitComponent),
        (".git/evil", RefusalReason::GitComponent),
        ("dup/evil", RefusalReason::Conflict),
    ]
    .iter()
    .map(|(p, r)| (p.to_string(), *r))
    .collect();
    assert_eq!(refused, expected);
    assert_eq!(report.submodules, ["vendor"]);
    assert_eq!(report.files, 2);
    assert_eq!(listing(&target), ["dup", "ok.txt"]);
    assert!(
        !repos.join("evil").exists(),
        "`../evil` is not written next to the target"
    );
}

/// Git paths are bytes: a non-UTF-8 name is written as-is on Unix and reported lossily.
#[cfg(unix)]
#[test]
fn handles_non_utf8_names() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = TempDir::new().unwrap();
    let repo = Repo::new(tmp.path().join("src"));
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
    fs::write(repo.dir.join(name), "latin-1 name\n").unwrap();
    let commit = repo.commit("bytes");
    let target = tmp.path().join("repos/inst");
    let report = made(materialize(&repo.git_dir(), &commit, &target, false));
    assert_eq!(report.files, 1);
    assert_eq!(read(&target.join(name)), "latin-1 name\n");
}

/// A batch over instances of two repositories found through a mirror folder and a source map,
/// with one unknown commit and one unknown repository: the failures are per instance, and a second
/// run finds the made snapshots already there.
#[test]
fn batch_reports_per_instance_and_resumes() {
    let tmp = TempDir::new().unwrap();
    let mirrors = tmp.path().join("mirrors");
    // `acme/tool` lives in the `owner+name/repo` layout; `upstream/lib` is held by the fork
    // `fork/lib`, in the `owner/name.git` layout.
    let tool = Repo::new(mirrors.join("acme+tool/repo"));
    tool.write("tool.py", "tool\n");
    let tool_commit = tool.commit("tool");
    let lib = Repo::new(tmp.path().join("lib-src"));
    lib.write("lib.py", "lib\n");
    let lib_commit = lib.commit("lib");
    fs::create_dir_all(mirrors.join("fork")).unwrap();
    git(
        tmp.path(),
        &["clone", "-q", "--bare", "lib-src", "mirrors/fork/lib.git"],
    );

    let job = |id: &str, repo: &str, commit: &str| SnapshotJob {
        instance_id: swex_engine::snapshot::PlainName::new(id).unwrap(),
        repo: repo.into(),
        commit: commit.into(),
    };
    let jobs = [
        job("tool-1", "acme/tool", &tool_commit),
        job("lib-1", "upstream/lib", &lib_commit),
        job(
            "tool-bad",
            "acme/tool",
            "feedfacefeedfacefeedfacefeedfacefeedface",
        ),
        job("nowhere-1", "acme/nowhere", &tool_commit),
    ];
    let locator = RepoLocator {
        mirror_dirs: vec![mirrors.clone()],
        sources: BTreeMap::from([("upstream/lib".to_string(), "fork/lib".to_string())]),
        ..RepoLocator::default()
    };
    let options = BatchOptions {
        out: tmp.path().join("repos"),
        force: false,
        jobs: 2,
    };
    let events = Mutex::new(Vec::new());
    let record = |event: Progress<'_>| {
        let line = match event {
            Progress::Started { job, .. } => format!("start {}", job.instance_id),
            Progress::Finished { result, .. } => format!("end {}", result.instance_id),
        };
        events.lock().unwrap().push(line);
    };
    let report = run_batch(&jobs, &locator, &options, &record).unwrap();
    assert_eq!(
        (report.made(), report.already_there(), report.failed()),
        (2, 0, 2)
    );
    assert_eq!(report.files(), 2);
    let ids: Vec<&str> = report
        .results
        .iter()
        .map(|r| r.instance_id.as_str())
        .collect();
    assert_eq!(
        ids,
        ["tool-1", "lib-1", "tool-bad", "nowhere-1"],
        "results keep job order"
    );
    assert!(matches!(
        report.results[2].outcome,
        InstanceOutcome::Failed(SnapshotError::UnknownCommit { .. })
    ));
    match &report.results[3].outcome {
        InstanceOutcome::Failed(SnapshotError::NoGitDir { repo, tried }) => {
            assert_eq!(repo, "acme/nowhere");
            assert_eq!(
                tried.len(),
                4,
                "the four mirror layouts were tried: {tried:?}"
            );
        }
        other => panic!("expected NoGitDir, got {other:?}"),
    }
    assert_eq!(
        events.lock().unwrap().len(),
        8,
        "a start and an end per instance"
    );
    assert_eq!(read(&options.out.join("lib-1/lib.py")), "lib\n");

    // Killed after `tool-1` was complete, while removing the folder it replaced.
    let leftover = options
        .out
        .join(format!(".swex/tmp/tool-1.{}.3.old", dead_pid()));
    fs::create_dir_all(leftover.join("old/tree")).unwrap();
    let again = run_batch(&jobs[..2], &locator, &options, &|_| {}).unwrap();
    assert_eq!((again.made(), again.already_there()), (0, 2));
    assert!(
        !leftover.exists(),
        "the batch cleans leftovers of complete snapshots too"
    );

    let duplicated = [jobs[0].clone(), jobs[0].clone()];
    assert!(matches!(
        run_batch(&duplicated, &locator, &options, &|_| {}),
        Err(SnapshotError::DuplicateInstance { .. })
    ));
}

/// `--from-github` fetches the one commit into the cache mirror (here from a `file://` folder laid
/// out like GitHub), then materialises from it; a second request needs no fetch.
#[test]
fn fetches_a_commit_into_the_cache_when_not_found_locally() {
    let tmp = TempDir::new().unwrap();
    let remote_root = tmp.path().join("hub");
    let remote = Repo::new(remote_root.join("acme/tool"));
    remote.write("tool.py", "v1\n");
    let old = remote.commit("v1");
    remote.write("tool.py", "v2\n");
    remote.commit("v2");

    let cache = tmp.path().join("cache");
    let base_url = format!("file://{}", remote_root.display());
    let locator = RepoLocator {
        github: Some(GithubFetcher::with_base_url(cache.clone(), base_url)),
        ..RepoLocator::default()
    };
    let git_dir = locator.locate("acme/tool", &old).unwrap();
    assert_eq!(git_dir.path(), cache.join("acme+tool"));
    let target = tmp.path().join("repos/inst");
    made(materialize(&git_dir, &old, &target, false));
    assert_eq!(read(&target.join("tool.py")), "v1\n");
    let refs = git(
        &cache.join("acme+tool"),
        &["for-each-ref", "--format=%(refname)"],
    );
    assert_eq!(refs, format!("refs/swex/{old}"));

    // Now the commit is in the cache: found as a local mirror, no fetch (the remote is gone).
    fs::remove_dir_all(&remote_root).unwrap();
    let again = RepoLocator {
        mirror_dirs: vec![cache.clone()],
        github: Some(GithubFetcher::with_base_url(
            cache,
            "file:///nonexistent".into(),
        )),
        ..RepoLocator::default()
    };
    assert!(again.locate("acme/tool", &old).is_ok());
    assert!(matches!(
        again.locate("acme/tool", "feedfacefeedfacefeedfacefeedfacefeedface"),
        Err(SnapshotError::Fetch { .. })
    ));
}

/// What `git rev-parse --absolute-git-dir --show-prefix --verify HEAD` prints in `dir`, as
/// [`WorkTreeHead`] fields.
fn rev_parse_head(dir: &Path) -> WorkTreeHead {
    let out = git(
        dir,
        &[
            "rev-parse",
            "--absolute-git-dir",
            "--show-prefix",
            "--verify",
            "HEAD",
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    let (git_dir, prefix, commit) = match lines[..] {
        [git_dir, commit] => (git_dir, "", commit), // at the top the prefix line is empty
        [git_dir, prefix, commit] => (git_dir, prefix, commit),
        _ => panic!("unexpected rev-parse output {out:?}"),
    };
    WorkTreeHead {
        git_dir: PathBuf::from(git_dir).canonicalize().unwrap(),
        prefix: prefix.to_owned(),
        commit: commit.to_owned(),
    }
}

/// What git says the git folders of the work tree at `dir` are.
fn rev_parse_dirs(dir: &Path) -> GitDirs {
    let canonical = |arg: &str| {
        dir.join(git(dir, &["rev-parse", arg]))
            .canonicalize()
            .unwrap()
    };
    GitDirs {
        git_dir: canonical("--absolute-git-dir"),
        common_dir: canonical("--git-common-dir"),
    }
}

/// Checks that `read_work_tree_head` and `work_tree_git_dirs` read, at `top` and in its
/// subfolder `sub`, what git reports, and that `HEAD` is `commit`.
fn check_head(state: &str, top: &Path, sub: &str, commit: &str) {
    for root in [top.to_path_buf(), top.join(sub)] {
        let read = read_work_tree_head(&root).unwrap_or_else(|| panic!("{state}: not read"));
        assert_eq!(read, rev_parse_head(&root), "{state} at {}", root.display());
        assert_eq!(read.commit, commit, "{state}");
    }
    assert_eq!(
        work_tree_git_dirs(top),
        Some(rev_parse_dirs(top)),
        "{state}: the git folders"
    );
    assert_eq!(
        read_work_tree_head(&top.join(sub)).unwrap().prefix,
        format!("{sub}/")
    );
}

/// A work tree's `HEAD`, git folder and prefix are read from its files as git reads them: on a
/// branch (loose ref, then packed), detached, in a subfolder, in a linked worktree (whose refs
/// are the repository's and whose `HEAD` is its own) and in a submodule; what it does not read
/// (an unborn branch) gives `None`, and the caller asks git.
#[test]
fn a_work_trees_head_is_read_without_git_as_git_reads_it() {
    let dir = TempDir::new().unwrap();
    let repo = Repo::new(dir.path().join("repo"));
    repo.write("src/pkg/a.py", "x = 1\n");
    let first = repo.commit("first");
    repo.write("src/pkg/a.py", "x = 2\n");
    let second = repo.commit("second");
    let check = |state: &str, commit: &str| check_head(state, &repo.dir, "src/pkg", commit);
    check("branch, loose ref", &second);
    git(&repo.dir, &["pack-refs", "--all"]);
    assert!(!repo.dir.join(".git/refs/heads/main").exists());
    check("branch, packed ref", &second);
    git(&repo.dir, &["tag", "-a", "-m", "annotated", "v1", &first]);
    git(&repo.dir, &["pack-refs", "--all"]);
    check("packed refs with a peeled tag", &second);
    git(&repo.dir, &["checkout", "-q", "--detach", &first]);
    check("detached", &first);
    git(&repo.dir, &["checkout", "-q", "main"]);
    check("back on the branch", &second);

    // A linked worktree: its `.git` is a file, its `HEAD` its own, its branch the repository's.
    let linked = repo.add_worktree("linked", &["-b", "side"], &first);
    check_head("linked worktree, loose ref", &linked, "src/pkg", &first);
    git(&repo.dir, &["pack-refs", "--all"]);
    check_head("linked worktree, packed ref", &linked, "src/pkg", &first);
    git(&linked, &["checkout", "-q", "--detach", &second]);
    check_head("linked worktree, detached", &linked, "src/pkg", &second);
    check("the main work tree beside it", &second);

    // A submodule: its `.git` file names a folder under the superproject's `.git/modules/`.
    let library = Repo::new(dir.path().join("library"));
    library.write("lib/b.py", "y = 1\n");
    let library_head = library.commit("library");
    repo.add_submodule(&library, "vendor/library");
    check_head(
        "submodule",
        &repo.dir.join("vendor/library"),
        "lib",
        &library_head,
    );

    git(&repo.dir, &["checkout", "-q", "--orphan", "unborn"]);
    assert_eq!(read_work_tree_head(&repo.dir), None, "an unborn branch");
    assert_eq!(read_work_tree_head(dir.path()), None, "not in a work tree");
}

/// The files `git ls-files -z --cached` lists in `dir`, sorted.
fn ls_files(dir: &Path) -> Vec<String> {
    let out = swex_testkit::git_command(dir)
        .args(["ls-files", "-z", "--cached"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut paths: Vec<String> = out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8(p.to_vec()).unwrap())
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

/// A work tree's tracked files are read from its index as `git ls-files` lists them, in every
/// index version git writes (2; 3 with an intent-to-add entry; 4, prefix-compressed), at the
/// top and in a subfolder; a split index is left to git.
#[test]
fn a_work_trees_tracked_files_are_read_from_its_index_as_git_lists_them() {
    let dir = TempDir::new().unwrap();
    let repo = Repo::new(dir.path().join("repo"));
    for path in [
        "README.md",
        "src/pkg/a.py",
        "src/pkg/ab.py",
        "src/pkg/sub/deep/c.py",
        "src/pkgs/d.py",
        "src/é/ü.py",
        "tests/test_a.py",
    ] {
        repo.write(path, "x = 1\n");
    }
    repo.commit("files");
    let version = || {
        let index = fs::read(repo.dir.join(".git/index")).unwrap();
        u32::from_be_bytes(index[4..8].try_into().unwrap())
    };
    let sub = repo.dir.join("src/pkg");
    let check = |state: &str| {
        for root in [&repo.dir, &sub] {
            let mut read = read_tracked_paths(root).unwrap_or_else(|| panic!("{state}: not read"));
            read.sort();
            assert_eq!(read, ls_files(root), "{state} at {}", root.display());
        }
    };
    assert_eq!(version(), 2);
    check("version 2");
    repo.write("src/pkg/new.py", "y = 2\n");
    git(&repo.dir, &["add", "-N", "src/pkg/new.py"]);
    assert_eq!(version(), 3);
    check("version 3, an intent-to-add entry");
    git(&repo.dir, &["update-index", "--index-version", "4"]);
    assert_eq!(version(), 4);
    check("version 4");
    assert!(
        read_tracked_paths(&sub)
            .unwrap()
            .contains(&"sub/deep/c.py".to_owned())
    );

    // A linked worktree has an index of its own.
    let linked = repo.add_worktree("linked", &["--detach"], "HEAD");
    fs::write(linked.join("src/pkg/only_here.py"), "z = 3\n").unwrap();
    git(&linked, &["add", "src/pkg/only_here.py"]);
    for root in [linked.clone(), linked.join("src/pkg")] {
        let mut read = read_tracked_paths(&root).expect("a linked worktree's index is read");
        read.sort();
        assert_eq!(
            read,
            ls_files(&root),
            "linked worktree at {}",
            root.display()
        );
    }
    assert!(!ls_files(&repo.dir).contains(&"src/pkg/only_here.py".to_owned()));

    // A submodule: the superproject lists it as one path, the submodule its own files.
    let library = Repo::new(dir.path().join("library"));
    library.write("lib/b.py", "y = 1\n");
    library.commit("library");
    repo.add_submodule(&library, "vendor/library");
    for root in [repo.dir.clone(), repo.dir.join("vendor/library")] {
        let mut read = read_tracked_paths(&root).expect("the index is read");
        read.sort();
        assert_eq!(
            read,
            ls_files(&root),
            "with a submodule, at {}",
            root.display()
        );
    }
    assert!(
        read_tracked_paths(&repo.dir)
            .unwrap()
            .contains(&"vendor/library".to_owned())
    );

    git(&repo.dir, &["update-index", "--split-index"]);
    assert_eq!(read_tracked_paths(&repo.dir), None, "a split index");
}
