//! Every read of a checkout's files goes through the checkout's one reader
//! (`swex_engine::scan::CheckoutRoot`): these tests race real swaps against real reads of the
//! index (`read_lines`, `grep`, and `Engine::open` itself) and check that a file swapped for a
//! symlink out of the checkout, a folder swapped for a symlink out, or a file swapped for a FIFO
//! never gives the outside bytes and never blocks, and that no read takes more than the size limit.
//! Each race is a bounded loop that stops by itself.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use swex_engine::index::{Engine, EngineConfig, SearchFilters, SnapshotIndex};
use swex_engine::scan::ScanOptions;

const INSIDE: &str = "inside = 1\n";
const SECRET: &str = "SECRET_TOKEN = 'hunter2'\n";
/// Swaps per race: enough for thousands of reads to meet each state.
const SWAPS: usize = 3000;

fn write(root: &Path, path: &str, text: &str) {
    swex_testkit::write_checkout_file(root, path, text);
}

struct Setup {
    repo: tempfile::TempDir,
    _outside: tempfile::TempDir,
    secret_dir: PathBuf,
    _cache: tempfile::TempDir,
    engine: Engine,
}

fn setup(max_file_size: u64) -> Setup {
    let repo = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret_dir = outside.path().join("secrets");
    write(&secret_dir, "f.py", SECRET);
    write(repo.path(), "app/f.py", INSIDE);
    write(repo.path(), "pkg/f.py", INSIDE);
    write(repo.path(), "app/other.py", "def other():\n    return 2\n");
    let cache = tempfile::tempdir().unwrap();
    let engine = Engine::new(EngineConfig {
        cache_dir: cache.path().to_path_buf(),
        scan: ScanOptions { max_file_size },
        ..EngineConfig::default()
    });
    Setup {
        repo,
        _outside: outside,
        secret_dir,
        _cache: cache,
        engine,
    }
}

/// In a thread: `SWAPS` times, `path` becomes a symlink to `target`, then a regular file with
/// `INSIDE` again (each by an atomic rename); `done` is set at the end.
fn swap_file_for_link(path: PathBuf, target: PathBuf, done: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let link = path.with_extension("swap-link");
        let regular = path.with_extension("swap-file");
        for _ in 0..SWAPS {
            let _ = fs::remove_file(&link);
            symlink(&target, &link).unwrap();
            fs::rename(&link, &path).unwrap();
            fs::write(&regular, INSIDE).unwrap();
            fs::rename(&regular, &path).unwrap();
        }
        done.store(true, Ordering::SeqCst);
    });
}

/// In a thread: `SWAPS` times, folder `dir` is replaced by a symlink to `target`, then put back.
fn swap_dir_for_link(dir: PathBuf, target: PathBuf, done: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        let aside = dir.with_extension("aside");
        for _ in 0..SWAPS {
            fs::rename(&dir, &aside).unwrap();
            symlink(&target, &dir).unwrap();
            fs::remove_file(&dir).unwrap();
            fs::rename(&aside, &dir).unwrap();
        }
        done.store(true, Ordering::SeqCst);
    });
}

/// Reads `path` through the index (lines and grep) until `done`; panics if the secret shows.
/// Returns how many reads gave the inside text.
fn read_until_done(index: &SnapshotIndex, path: &str, done: &AtomicBool) -> usize {
    let mut inside = 0;
    let mut reads = 0;
    // One more read after the swaps ended (the file is itself again then).
    let mut finished = false;
    while !finished {
        finished = done.load(Ordering::SeqCst);
        reads += 1;
        if let Ok(lines) = index.read_lines(path, 1, 1) {
            assert!(
                !lines.concat().contains("SECRET"),
                "read {reads} returned the outside file: {lines:?}"
            );
            inside += usize::from(lines.concat() == INSIDE.trim_end());
        }
        let hits = index.grep("SECRET|hunter2", None, 10).unwrap();
        assert!(
            hits.is_empty(),
            "grep {reads} found the outside file: {hits:?}"
        );
    }
    inside
}

#[test]
fn reads_never_return_a_file_swapped_for_a_symlink_out_of_the_checkout() {
    let s = setup(1 << 20);
    let index = s.engine.open(s.repo.path()).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    swap_file_for_link(
        s.repo.path().join("app/f.py"),
        s.secret_dir.join("f.py"),
        done.clone(),
    );
    let inside = read_until_done(&index, "app/f.py", &done);
    // The reads did meet the file itself, not only refusals (at least the last one).
    assert!(inside > 0);
}

#[test]
fn reads_never_return_a_file_under_a_folder_swapped_for_a_symlink_out() {
    let s = setup(1 << 20);
    let index = s.engine.open(s.repo.path()).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    swap_dir_for_link(
        s.repo.path().join("pkg"),
        s.secret_dir.clone(),
        done.clone(),
    );
    let inside = read_until_done(&index, "pkg/f.py", &done);
    assert!(inside > 0);
}

/// `Engine::open` while the file flips: the walk may list it as a regular file and the read meet
/// the symlink; the secret must never be indexed.
#[test]
fn an_open_never_indexes_a_file_swapped_for_a_symlink_out() {
    let s = setup(1 << 20);
    let done = Arc::new(AtomicBool::new(false));
    swap_file_for_link(
        s.repo.path().join("app/f.py"),
        s.secret_dir.join("f.py"),
        done.clone(),
    );
    let mut opens = 0;
    while !done.load(Ordering::SeqCst) && opens < 200 {
        opens += 1;
        let index = s.engine.open(s.repo.path()).unwrap();
        let hits = index
            .search_text("SECRET_TOKEN hunter2", 5, &SearchFilters::default())
            .unwrap();
        assert!(
            hits.is_empty(),
            "open {opens} indexed the outside file: {hits:?}"
        );
        assert!(
            index.definitions("SECRET_TOKEN").is_empty(),
            "open {opens} analysed the outside file"
        );
    }
}

#[cfg(target_os = "linux")]
fn mkfifo(path: &Path) {
    use rustix::fs::{CWD, FileType, Mode, mknodat};
    mknodat(CWD, path, FileType::Fifo, Mode::from_raw_mode(0o644), 0).unwrap();
}

/// Runs `work` in a thread and fails if it does not finish within `limit`.
fn within<T: Send + 'static>(limit: Duration, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(work());
    });
    receive
        .recv_timeout(limit)
        .expect("a read blocked (a FIFO was opened for reading)")
}

/// A file swapped for a FIFO (no writer) is refused at once, alone and in a race.
#[cfg(target_os = "linux")]
#[test]
fn a_file_swapped_for_a_fifo_never_blocks_a_reader() {
    let s = setup(1 << 20);
    let index = s.engine.open(s.repo.path()).unwrap();
    let path = s.repo.path().join("app/f.py");
    fs::remove_file(&path).unwrap();
    mkfifo(&path);
    let once = index.clone();
    let answer = within(Duration::from_secs(20), move || {
        once.read_lines("app/f.py", 1, 1).map_err(|e| e.to_string())
    });
    let error = answer.unwrap_err();
    assert!(error.contains("not a regular file"), "{error}");
    // An open lists it as not a regular file (the walk), and does not block either.
    let engine = Engine::new(s.engine.config().clone());
    let repo = s.repo.path().to_path_buf();
    let reopened = within(Duration::from_secs(60), move || engine.open(&repo).unwrap());
    assert!(reopened.file("app/f.py").is_none());

    fs::remove_file(&path).unwrap();
    write(s.repo.path(), "app/f.py", INSIDE);
    let done = Arc::new(AtomicBool::new(false));
    let swapper_done = done.clone();
    std::thread::spawn(move || {
        let fifo = path.with_extension("swap-fifo");
        let regular = path.with_extension("swap-file");
        for _ in 0..SWAPS {
            let _ = fs::remove_file(&fifo);
            mkfifo(&fifo);
            fs::rename(&fifo, &path).unwrap();
            fs::write(&regular, INSIDE).unwrap();
            fs::rename(&regular, &path).unwrap();
        }
        swapper_done.store(true, Ordering::SeqCst);
    });
    let racing = index.clone();
    let inside = within(Duration::from_secs(120), move || {
        let mut inside = 0;
        let mut finished = false;
        while !finished {
            finished = done.load(Ordering::SeqCst);
            if let Ok(lines) = racing.read_lines("app/f.py", 1, 1) {
                inside += usize::from(lines.concat() == INSIDE.trim_end());
            }
            racing.grep("inside", None, 10).unwrap();
        }
        inside
    });
    assert!(inside > 0);
}

/// A file that grew past the size limit after it was indexed is not read whole: the read stops
/// one byte past the limit and fails.
#[test]
fn reads_of_an_indexed_file_stop_at_the_size_limit() {
    let s = setup(64);
    let index = s.engine.open(s.repo.path()).unwrap();
    assert!(index.file("app/f.py").is_some());
    fs::write(s.repo.path().join("app/f.py"), "x = 1\n".repeat(1000)).unwrap();
    let error = index.read_lines("app/f.py", 1, 1).unwrap_err().to_string();
    assert!(error.contains("above the 64 byte limit"), "{error}");
    assert!(index.grep("x = 1", None, 10).unwrap().is_empty());
}
