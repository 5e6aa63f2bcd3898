//! `Engine::collect_garbage` end to end on small repositories written by the tests: the chunks
//! and analyses of file versions no snapshot lists any more go, everything a remaining snapshot
//! uses stays (its next open adds nothing and answers the same), snapshots whose folder is gone
//! are forgotten with the pools only they used, a dry run changes nothing, and a version brought
//! back after its chunks went is indexed again.

mod support;

use std::fs;
use std::path::Path;
use std::time::Duration;
use swex_engine::index::{Engine, GcOptions, GcReport, SearchFilters, SnapshotIndex};

const MODELS: &str = "class QuerySet:\n    \"\"\"A lazy database lookup.\"\"\"\n\n    def bulk_create(self, objs, batch_size=None):\n        if not objs:\n            return objs\n        return insert_many(objs, batch_size)\n\n    def filter(self, **kwargs):\n        return QuerySet()\n";
const MODELS_EDITED: &str = "class QuerySet:\n    \"\"\"A lazy database lookup.\"\"\"\n\n    def bulk_create(self, objs, batch_size=None, ignore_conflicts=False):\n        return insert_many(objs, batch_size, ignore_conflicts)\n\n    def exclude(self, **kwargs):\n        return QuerySet()\n";
const VIEWS: &str = "def render_page(request, template_name):\n    context = {\"user\": request.user}\n    return template_name.format(**context)\n";
const UTILS: &str = "import re\n\n\ndef slugify(value):\n    return re.sub(r\"[-\\s]+\", \"-\", value).strip(\"-_\")\n";
/// Another repository: no file in common with the first, so it gets a pool of its own.
const PARSER: &str = "fn parse_header(line: &str) -> Option<(String, String)> {\n    let (name, value) = line.split_once(':')?;\n    Some((name.trim().to_string(), value.trim().to_string()))\n}\n";

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        swex_testkit::write_checkout_file(root, path, text);
    }
}

fn app(models: &'static str) -> Vec<(&'static str, &'static str)> {
    vec![
        ("app/models.py", models),
        ("app/views.py", VIEWS),
        ("app/utils.py", UTILS),
    ]
}

fn engine(cache: &Path) -> Engine {
    Engine::new(support::test_config(cache))
}

/// `(path, start, end, score)` of the top hits of a few queries.
fn answers(index: &SnapshotIndex) -> Vec<(String, u32, u32, String)> {
    [
        "bulk_create ignore_conflicts",
        "render_page template",
        "exclude QuerySet",
        "slugify",
    ]
    .iter()
    .flat_map(|q| index.search_text(q, 5, &SearchFilters::default()).unwrap())
    .map(|h| (h.path, h.start, h.end, format!("{:.6}", h.score)))
    .collect()
}

/// Without a grace period: no first open runs beside these tests.
fn gc(cache: &Path, dry_run: bool) -> GcReport {
    let options = GcOptions {
        dry_run,
        grace: Duration::ZERO,
    };
    engine(cache).collect_garbage(&options).unwrap()
}

#[test]
fn old_versions_go_and_the_snapshot_keeps_everything_it_uses() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write(repo.path(), &app(MODELS));
    let first = engine(cache.path()).open(repo.path()).unwrap();
    let first_docs = first.stats().pool.snapshot_docs;
    drop(first);
    // The checkout is edited: the pool now holds both versions of models.py.
    write(repo.path(), &app(MODELS_EDITED));
    let edited = engine(cache.path()).open(repo.path()).unwrap();
    let pool = edited.stats().pool.clone();
    assert!(
        pool.docs_added > 0 && pool.docs_total > pool.snapshot_docs,
        "{pool:?}"
    );
    let stale = pool.docs_total - pool.snapshot_docs;
    assert!(stale <= first_docs);
    let before = answers(&edited);
    assert!(!before.is_empty());

    let dry = gc(cache.path(), true);
    assert!(dry.dry_run);
    assert_eq!(dry.snapshots_kept, 1);
    assert_eq!(dry.pools.len(), 1, "{dry:?}");
    assert_eq!(dry.pools[0].id, pool.id);
    assert_eq!(dry.pools[0].docs_before, pool.docs_total);
    assert_eq!(dry.pools[0].docs_deleted, stale);
    assert_eq!(dry.pools[0].analyses_before, 4);
    assert_eq!(dry.pools[0].analyses_deleted, 1, "the old models.py");
    assert_eq!(dry.bytes_after, dry.bytes_before);
    // A dry run removed nothing.
    let again = engine(cache.path()).open(repo.path()).unwrap();
    assert_eq!(again.stats().pool.docs_total, pool.docs_total);
    drop(again);

    let done = gc(cache.path(), false);
    assert!(!done.dry_run);
    assert_eq!(done.pools[0].docs_deleted, stale);
    assert_eq!(done.pools[0].analyses_deleted, 1);
    assert!(!done.pools[0].removed);
    assert!(done.bytes_after < done.bytes_before, "{done:?}");
    // Nothing stale is left: a second collection finds nothing.
    let nothing = gc(cache.path(), false);
    assert_eq!(nothing.pools[0].docs_deleted, 0);
    assert_eq!(nothing.pools[0].analyses_deleted, 0);

    // The snapshot reuses everything: nothing analysed or indexed again, the same answers, and
    // the pool holds only its documents.
    let after = engine(cache.path()).open(repo.path()).unwrap();
    let stats = after.stats();
    assert_eq!(stats.cache.analyses_computed, 0, "{stats:#?}");
    assert_eq!(stats.pool.docs_added, 0);
    assert_eq!(stats.pool.docs_total, stats.pool.snapshot_docs);
    assert_eq!(stats.pool.id, pool.id);
    // Gone from disk, not only hidden: the segments that held them were rewritten.
    assert!(
        stats.pool.size_bytes < pool.size_bytes,
        "{} {}",
        stats.pool.size_bytes,
        pool.size_bytes
    );
    assert_eq!(answers(&after), before);
    // The view opened before the collection still answers as before.
    assert_eq!(answers(&edited), before);
}

#[test]
fn a_version_brought_back_is_indexed_again() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write(repo.path(), &app(MODELS));
    drop(engine(cache.path()).open(repo.path()).unwrap());
    write(repo.path(), &app(MODELS_EDITED));
    drop(engine(cache.path()).open(repo.path()).unwrap());
    assert_eq!(gc(cache.path(), false).pools[0].analyses_deleted, 1);
    // Back to the first version, whose chunks and analysis went.
    write(repo.path(), &app(MODELS));
    let back = engine(cache.path()).open(repo.path()).unwrap();
    assert_eq!(back.stats().cache.analyses_computed, 1);
    assert!(back.stats().pool.docs_added > 0);
    let fresh_cache = tempfile::tempdir().unwrap();
    let fresh = engine(fresh_cache.path()).open(repo.path()).unwrap();
    assert_eq!(answers(&back), answers(&fresh));
}

#[test]
fn snapshots_whose_folder_is_gone_are_forgotten_with_what_only_they_used() {
    let cache = tempfile::tempdir().unwrap();
    let parent = tempfile::tempdir().unwrap();
    let (kept, edited_copy, other) = (
        parent.path().join("kept"),
        parent.path().join("edited"),
        parent.path().join("other"),
    );
    write(&kept, &app(MODELS));
    write(&edited_copy, &app(MODELS_EDITED));
    write(&other, &[("src/parse.rs", PARSER)]);
    let engine_ = engine(cache.path());
    let kept_index = engine_.open(&kept).unwrap();
    let shared = kept_index.stats().pool.id.clone();
    let kept_docs = kept_index.stats().pool.snapshot_docs;
    let before = answers(&kept_index);
    drop(kept_index);
    let edited_index = engine_.open(&edited_copy).unwrap();
    assert_eq!(
        edited_index.stats().pool.id,
        shared,
        "one repository, one pool"
    );
    drop(edited_index);
    let other_pool = engine_.open(&other).unwrap().stats().pool.id.clone();
    assert_ne!(other_pool, shared);
    drop(engine_);

    fs::remove_dir_all(&edited_copy).unwrap();
    fs::remove_dir_all(&other).unwrap();
    let report = gc(cache.path(), false);
    assert_eq!(report.snapshots_kept, 1);
    let mut forgotten = vec![
        edited_copy.canonicalize_or_self(),
        other.canonicalize_or_self(),
    ];
    forgotten.sort();
    assert_eq!(report.snapshots_forgotten, forgotten);
    let row = |id: &str| report.pools.iter().find(|p| p.id == id).unwrap().clone();
    let (shared_row, other_row) = (row(&shared), row(&other_pool));
    assert!(!shared_row.removed);
    assert_eq!(shared_row.snapshots, 1);
    assert_eq!(shared_row.docs_before - shared_row.docs_deleted, kept_docs);
    assert_eq!(
        shared_row.analyses_deleted, 1,
        "the edited copy's models.py"
    );
    assert!(other_row.removed && other_row.snapshots == 0);
    assert_eq!(other_row.docs_deleted, other_row.docs_before);
    assert_eq!(other_row.bytes_after, 0);

    // The pool of the gone repository is no more; the kept snapshot reuses everything.
    let listed = gc(cache.path(), true);
    assert_eq!(listed.pools.len(), 1);
    assert!(listed.snapshots_forgotten.is_empty());
    let after = engine(cache.path()).open(&kept).unwrap();
    assert_eq!(after.stats().cache.analyses_computed, 0);
    assert_eq!(after.stats().pool.docs_added, 0);
    assert_eq!(answers(&after), before);
}

/// The root as the engine records it (canonical), as a string.
trait CanonicalString {
    fn canonicalize_or_self(&self) -> String;
}

impl CanonicalString for std::path::PathBuf {
    fn canonicalize_or_self(&self) -> String {
        // The folder is gone by now: canonicalise its parent, which stays.
        let parent = self.parent().unwrap().canonicalize().unwrap();
        parent.join(self.file_name().unwrap()).display().to_string()
    }
}

#[test]
fn a_pool_no_snapshot_names_yet_is_kept_within_the_grace_period() {
    let cache = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    write(repo.path(), &[("src/parse.rs", PARSER)]);
    let pool = engine(cache.path())
        .open(repo.path())
        .unwrap()
        .stats()
        .pool
        .id
        .clone();
    drop(repo);
    // Its snapshot is gone, but the pool was written a moment ago: a first open still under way
    // would look the same.
    let options = GcOptions::default();
    let report = engine(cache.path()).collect_garbage(&options).unwrap();
    assert_eq!(report.snapshots_forgotten.len(), 1);
    assert_eq!(report.pools.len(), 1);
    assert!(
        report.pools[0].recent && !report.pools[0].removed,
        "{report:?}"
    );
    assert_eq!(report.pools[0].docs_deleted, 0);
    assert_eq!(report.bytes_after, report.bytes_before);
    // Past the grace period it goes.
    let report = gc(cache.path(), false);
    assert_eq!(report.pools[0].id, pool);
    assert!(report.pools[0].removed && !report.pools[0].recent);
    assert_eq!(report.bytes_after, 0);
}

#[test]
fn folders_of_pools_without_a_key_list_are_removed() {
    let cache = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    write(repo.path(), &app(MODELS));
    let engine_ = engine(cache.path());
    let pool = engine_.open(repo.path()).unwrap().stats().pool.id.clone();
    // An interrupted removal: the key list went, the folders stayed.
    let pools_dir = engine_.layout().pools().dir().to_path_buf();
    drop(engine_);
    fs::remove_file(pools_dir.join(format!("{pool}.keys"))).unwrap();
    fs::create_dir_all(pools_dir.join("not-a-pool")).unwrap();
    let dry = gc(cache.path(), true);
    assert_eq!(dry.orphan_folders, 2, "{dry:?}");
    assert!(pools_dir.join(&pool).is_dir());
    let report = gc(cache.path(), false);
    assert_eq!(report.orphan_folders, 2);
    assert!(report.pools.is_empty());
    assert!(!pools_dir.join(&pool).exists());
    assert!(!pools_dir.join(format!("{pool}.packs")).exists());
    assert!(
        pools_dir.join("not-a-pool").is_dir(),
        "only pool folders go"
    );
    // The snapshot still exists: its next open starts a pool again.
    let again = engine(cache.path()).open(repo.path()).unwrap();
    assert_eq!(
        again.stats().pool.docs_added,
        again.stats().pool.snapshot_docs
    );
}
