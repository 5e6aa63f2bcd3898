//! Engine::refresh: after each kind of change to a tree, the refreshed index must answer exactly
//! like a fresh Engine::open of the same tree (checked field by field, search scores included),
//! report what changed, and take the cheap in-place path when no directory changed.

mod support;

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};
use swex_engine::index::{
    Engine, EngineConfig, IndexError, Progress, Refresh, RefreshReport, SearchFilters,
    SnapshotIndex, Stage,
};
use swex_engine::scan::ScanOptions;

const MODELS: &str = "class QuerySet:\n    def bulk_create(self, objs):\n        return objs\n\n    def filter(self, **kwargs):\n        return QuerySet()\n";
const VIEWS: &str = "from app.models import QuerySet\n\n\ndef render_page(request, template_name):\n    return template_name.format(user=request.user)\n";
const UTILS: &str = "def slugify(value):\n    return value.lower().replace(' ', '-')\n";

fn fixture() -> Vec<(&'static str, &'static [u8])> {
    vec![
        ("app/models.py", MODELS.as_bytes()),
        ("app/views.py", VIEWS.as_bytes()),
        ("app/utils.py", UTILS.as_bytes()),
        ("app/__init__.py", b""),
        (
            "docs/notes.md",
            b"# Notes\n\nQuerySets are lazy; views render templates.\n",
        ),
        ("static/logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
        ("data/big.txt", &[b'x'; 300]),
        (".ignore", b"# no rules yet\n"),
    ]
}

fn write(root: &Path, path: &str, bytes: &[u8]) {
    let abs = root.join(path);
    fs::create_dir_all(abs.parent().unwrap()).unwrap();
    fs::write(abs, bytes).unwrap();
}

/// Sets the mtime of everything under `root` (directories too) an hour back, as in a checkout
/// made earlier: stamps taken just after a write are racy and would force the careful paths.
fn age(root: &Path) {
    let old = SystemTime::now() - Duration::from_secs(3600);
    for entry in fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            age(&path);
        } else {
            fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
    }
    fs::File::open(root).unwrap().set_modified(old).unwrap();
}

fn engine(cache: &Path) -> Engine {
    Engine::new(EngineConfig {
        scan: ScanOptions { max_file_size: 200 },
        ..support::test_config(cache)
    })
}

const QUERIES: [&str; 5] = [
    "QuerySet bulk_create",
    "render_page template",
    "slugify value",
    "lazy notes",
    "brand new helper",
];

/// Everything an explorer can observe of an index, compared with a fresh open of the same tree.
fn assert_same(refreshed: &SnapshotIndex, fresh: &SnapshotIndex, case: &str) {
    assert_eq!(refreshed.files(), fresh.files(), "{case}: files");
    for file in fresh.files() {
        assert_eq!(
            refreshed.analysis(&file.path),
            fresh.analysis(&file.path),
            "{case}: analysis of {}",
            file.path
        );
    }
    assert_eq!(refreshed.num_chunks(), fresh.num_chunks(), "{case}: chunks");
    for id in 0..fresh.num_chunks() {
        assert_eq!(
            refreshed.chunk_key(id),
            fresh.chunk_key(id),
            "{case}: chunk {id}"
        );
    }
    assert_eq!(
        refreshed.diagnostics(),
        fresh.diagnostics(),
        "{case}: diagnostics"
    );
    let (a, b) = (refreshed.stats(), fresh.stats());
    assert_eq!(
        (
            a.files,
            &a.files_by_language,
            a.bytes,
            a.lines,
            a.chunks,
            a.definitions
        ),
        (
            b.files,
            &b.files_by_language,
            b.bytes,
            b.lines,
            b.chunks,
            b.definitions
        ),
        "{case}: counts"
    );
    assert_eq!(
        a.diagnostics_by_kind, b.diagnostics_by_kind,
        "{case}: diagnostics by kind"
    );
    assert_eq!(
        a.pool.snapshot_docs, b.pool.snapshot_docs,
        "{case}: documents"
    );
    for query in QUERIES {
        let x = refreshed
            .search_text(query, 10, &SearchFilters::default())
            .unwrap();
        let y = fresh
            .search_text(query, 10, &SearchFilters::default())
            .unwrap();
        assert_eq!(x.len(), y.len(), "{case}: {query}");
        for (x, y) in x.iter().zip(&y) {
            assert_eq!(
                (&x.path, x.start, x.end),
                (&y.path, y.start, y.end),
                "{case}: {query}"
            );
            assert!(
                (x.score - y.score).abs() <= 1e-5 * y.score.abs().max(1.0),
                "{case}: {query}"
            );
        }
    }
    for name in [
        "QuerySet",
        "render_page",
        "slugify",
        "helper",
        "QuerySet.filter",
    ] {
        assert_eq!(
            refreshed.definitions(name),
            fresh.definitions(name),
            "{case}: {name}"
        );
    }
    let (g, h) = (refreshed.graph(), fresh.graph());
    assert_eq!(
        (g.node_count(), g.edge_count()),
        (h.node_count(), h.edge_count()),
        "{case}: graph"
    );
}

/// What a refresh is expected to report.
struct Expect {
    changed: &'static [&'static str],
    added: &'static [&'static str],
    removed: &'static [&'static str],
    walked: bool,
}

fn check_report(report: &RefreshReport, expect: &Expect, case: &str) {
    let sorted = |v: &[String]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    assert_eq!(sorted(&report.changed), expect.changed, "{case}: changed");
    assert_eq!(sorted(&report.added), expect.added, "{case}: added");
    assert_eq!(sorted(&report.removed), expect.removed, "{case}: removed");
    assert_eq!(report.walked, expect.walked, "{case}: walked");
    assert!(!report.reopened, "{case}: reopened");
}

/// Opens the fixture (aged), applies `edit`, refreshes, and compares with a fresh open.
fn check(case: &str, edit: impl Fn(&Path), expect: Expect) {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let fresh_cache = tempfile::tempdir().unwrap();
    for (path, bytes) in fixture() {
        write(repo.path(), path, bytes);
    }
    fs::create_dir_all(repo.path().join("empty")).unwrap();
    age(repo.path());
    let engine = engine(cache.path());
    let index = engine.open(repo.path()).unwrap();
    assert!(
        matches!(engine.refresh(&index).unwrap(), Refresh::Unchanged),
        "{case}: before"
    );
    edit(repo.path());
    let Refresh::Updated {
        index: refreshed,
        report,
    } = engine.refresh(&index).unwrap()
    else {
        panic!("{case}: the change was not seen");
    };
    check_report(&report, &expect, case);
    let fresh = self::engine(fresh_cache.path()).open(repo.path()).unwrap();
    assert_same(&refreshed, &fresh, case);
    // The refreshed index is current: the next check finds nothing (racy stamps re-hashed).
    assert!(
        matches!(engine.refresh(&refreshed).unwrap(), Refresh::Unchanged),
        "{case}: after"
    );
    // And the old index is still usable.
    assert_eq!(index.files().len(), 6, "{case}: old index");
}

const NONE: &[&str] = &[];

#[test]
fn a_refreshed_index_equals_a_fresh_open() {
    check(
        "edit in place",
        |root| {
            write(
                root,
                "app/views.py",
                format!("{VIEWS}\ndef brand_new_helper():\n    return 'new'\n").as_bytes(),
            )
        },
        Expect {
            changed: &["app/views.py"],
            added: NONE,
            removed: NONE,
            walked: false,
        },
    );
    check(
        "same size, new content",
        |root| {
            write(
                root,
                "app/utils.py",
                UTILS.replace("lower", "upper").as_bytes(),
            )
        },
        Expect {
            changed: &["app/utils.py"],
            added: NONE,
            removed: NONE,
            walked: false,
        },
    );
    check(
        "touched only",
        |root| {
            let file = fs::File::options()
                .write(true)
                .open(root.join("app/models.py"))
                .unwrap();
            file.set_modified(SystemTime::now()).unwrap();
        },
        Expect {
            changed: &["app/models.py"],
            added: NONE,
            removed: NONE,
            walked: false,
        },
    );
    check(
        "text becomes binary",
        |root| write(root, "docs/notes.md", b"\0\0binary now"),
        Expect {
            changed: &["docs/notes.md"],
            added: NONE,
            removed: NONE,
            walked: false,
        },
    );
    check(
        "binary becomes text",
        |root| {
            write(
                root,
                "static/logo.png",
                b"def brand_new_helper():\n    pass\n",
            )
        },
        Expect {
            changed: &["static/logo.png"],
            added: NONE,
            removed: NONE,
            walked: false,
        },
    );
    check(
        "a file added in a new directory",
        |root| {
            write(
                root,
                "app/extra/helpers.py",
                b"def brand_new_helper():\n    return 1\n",
            )
        },
        Expect {
            changed: NONE,
            added: &["app/extra/helpers.py"],
            removed: NONE,
            walked: true,
        },
    );
    check(
        "a file added in a directory with no indexed file",
        |root| {
            write(
                root,
                "empty/helper.py",
                b"def brand_new_helper():\n    return 1\n",
            )
        },
        Expect {
            changed: NONE,
            added: &["empty/helper.py"],
            removed: NONE,
            walked: true,
        },
    );
    check(
        "a file deleted",
        |root| fs::remove_file(root.join("app/utils.py")).unwrap(),
        Expect {
            changed: NONE,
            added: NONE,
            removed: &["app/utils.py"],
            walked: true,
        },
    );
    check(
        "a file renamed",
        |root| fs::rename(root.join("app/utils.py"), root.join("app/text.py")).unwrap(),
        Expect {
            changed: NONE,
            added: &["app/text.py"],
            removed: &["app/utils.py"],
            walked: true,
        },
    );
    check(
        "a directory removed",
        |root| fs::remove_dir_all(root.join("docs")).unwrap(),
        Expect {
            changed: NONE,
            added: NONE,
            removed: &["docs/notes.md"],
            walked: true,
        },
    );
    check(
        "a file too large shrinks under the limit",
        |root| write(root, "data/big.txt", b"brand new helper notes\n"),
        Expect {
            changed: NONE,
            added: &["data/big.txt"],
            removed: NONE,
            walked: true,
        },
    );
    check(
        "an ignore file edited in place",
        |root| write(root, ".ignore", b"docs/\n"),
        Expect {
            changed: &[".ignore"],
            added: NONE,
            removed: &["docs/notes.md"],
            walked: true,
        },
    );
    check(
        "a file grows over the limit",
        |root| write(root, "app/views.py", &[b'y'; 500]),
        Expect {
            changed: &["app/views.py"],
            added: NONE,
            removed: NONE,
            walked: false,
        },
    );
}

#[test]
fn rapid_edits_of_the_same_size_are_all_seen() {
    // No ageing: every stamp is racy. (Where the clock is coarse, such edits can keep a stamp;
    // the unit test `racy_stamps_are_read_again` covers that path where the clock is fine.)
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    for (path, bytes) in fixture() {
        write(repo.path(), path, bytes);
    }
    let engine = engine(cache.path());
    let mut index = engine.open(repo.path()).unwrap();
    for round in 0..20 {
        let word = format!("needle{round:02}");
        write(
            repo.path(),
            "app/utils.py",
            format!("def {word}(value):\n    return value\n").as_bytes(),
        );
        if let Refresh::Updated { index: new, .. } = engine.refresh(&index).unwrap() {
            index = new;
        }
        let hits = index
            .search_text(&word, 1, &SearchFilters::default())
            .unwrap();
        assert_eq!(hits.len(), 1, "round {round}: {word} not found");
        assert_eq!(hits[0].path, "app/utils.py");
    }
}

#[test]
fn no_change_is_unchanged_and_a_vanished_root_is_an_error() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = repo.path().join("r");
    for (path, bytes) in fixture() {
        write(&root, path, bytes);
    }
    let engine = engine(cache.path());
    let index = engine.open(&root).unwrap();
    for _ in 0..3 {
        assert!(matches!(
            engine.refresh(&index).unwrap(),
            Refresh::Unchanged
        ));
    }
    fs::remove_dir_all(&root).unwrap();
    let err = engine
        .refresh(&index)
        .err()
        .expect("a vanished root is an error");
    assert!(
        err.to_string().contains(&root.display().to_string()),
        "{err}"
    );
    // The index still answers from memory what it can.
    assert_eq!(index.files().len(), 6);
}

/// Cancels once a given stage is reported.
struct CancelAt {
    stage: Stage,
    seen: AtomicBool,
}

impl Progress for CancelAt {
    fn report(&self, stage: Stage, _: u64, _: u64) {
        if stage == self.stage {
            self.seen.store(true, Ordering::Relaxed);
        }
    }

    fn is_cancelled(&self) -> bool {
        self.seen.load(Ordering::Relaxed)
    }
}

#[test]
fn a_cancelled_open_stops_and_leaves_the_cache_usable() {
    for stage in [Stage::Walk, Stage::Read, Stage::Analyze] {
        let repo = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let fresh_cache = tempfile::tempdir().unwrap();
        for (path, bytes) in fixture() {
            write(repo.path(), path, bytes);
        }
        let engine = engine(cache.path());
        let cancel = CancelAt {
            stage,
            seen: AtomicBool::new(false),
        };
        let err = engine.open_with_progress(repo.path(), &cancel).err();
        assert!(
            matches!(err, Some(IndexError::Cancelled)),
            "{stage:?}: {err:?}"
        );
        let index = engine.open(repo.path()).unwrap();
        let fresh = self::engine(fresh_cache.path()).open(repo.path()).unwrap();
        assert_same(&index, &fresh, &format!("after a cancel at {stage:?}"));
        write(
            repo.path(),
            "app/new.py",
            b"def brand_new_helper():\n    pass\n",
        );
        let err = engine.refresh_with_progress(&index, &cancel).err();
        assert!(
            matches!(err, Some(IndexError::Cancelled)),
            "refresh {stage:?}: {err:?}"
        );
    }
}
