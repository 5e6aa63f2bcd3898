//! `swex cache gc` end to end, through the binary: a dry run counts and removes nothing, a run
//! removes the chunks of an edited file's old version and the next open reuses everything, the
//! text report, and a cache folder that does not exist is an error, not an empty cache.

use std::path::Path;
use std::process::{Command, Output};
use swex_testkit::write_checkout_file as write;

fn swex(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swex"))
        .args(args)
        .arg("--cache-dir")
        .arg(cache)
        .output()
        .unwrap()
}

fn json(output: &Output) -> serde_json::Value {
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn pool_stats(repo: &Path, cache: &Path) -> serde_json::Value {
    let repo = repo.to_str().unwrap();
    json(&swex(
        &["index", "--repo", repo, "--json", "-q", "--no-graph"],
        cache,
    ))["stats"]["pool"]
        .clone()
}

#[test]
fn gc_removes_an_edited_files_old_chunks_and_keeps_what_the_checkout_uses() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write(
        repo.path(),
        "app/utils.py",
        "def slugify(value):\n    return value.lower()\n",
    );
    write(
        repo.path(),
        "app/views.py",
        "def render(page):\n    return page.title\n",
    );
    pool_stats(repo.path(), cache.path());
    write(
        repo.path(),
        "app/utils.py",
        "def slugify(value, sep='-'):\n    return value.lower().replace(' ', sep)\n",
    );
    let edited = pool_stats(repo.path(), cache.path());
    let stale = edited["docs_total"].as_u64().unwrap() - edited["snapshot_docs"].as_u64().unwrap();
    assert!(stale > 0, "{edited}");

    let dry = json(&swex(&["cache", "gc", "--dry-run", "--json"], cache.path()));
    assert_eq!(dry["dry_run"], true);
    assert_eq!(dry["snapshots_kept"], 1);
    assert_eq!(dry["pools"][0]["docs_deleted"].as_u64(), Some(stale));
    assert_eq!(dry["pools"][0]["analyses_deleted"], 1);
    assert_eq!(
        pool_stats(repo.path(), cache.path())["docs_total"],
        edited["docs_total"]
    );

    let output = swex(&["cache", "gc"], cache.path());
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains(&format!("{stale} chunks and 1 analyses deleted"))
            && text.contains("(1 snapshot)")
            && text.contains("snapshots: 1 kept, 0 forgotten"),
        "{text}"
    );
    let after = pool_stats(repo.path(), cache.path());
    assert_eq!(after["docs_added"], 0);
    assert_eq!(after["docs_total"], edited["snapshot_docs"]);
    assert_eq!(after["id"], edited["id"]);

    // Gone, with its folder: the checkout is forgotten and its pool removed.
    drop(repo);
    let kept = json(&swex(&["cache", "gc", "--json"], cache.path()));
    assert_eq!(kept["snapshots_forgotten"].as_array().unwrap().len(), 1);
    assert_eq!(
        kept["pools"][0]["recent"], true,
        "written a moment ago: {kept}"
    );
    let gone = json(&swex(
        &["cache", "gc", "--json", "--grace", "0"],
        cache.path(),
    ));
    assert_eq!(gone["snapshots_kept"], 0);
    assert!(
        gone["snapshots_forgotten"].as_array().unwrap().is_empty(),
        "forgotten before"
    );
    assert_eq!(gone["pools"][0]["removed"], true);
    assert_eq!(gone["bytes_after"], 0);
}

#[test]
fn a_cache_folder_that_does_not_exist_is_an_error() {
    let parent = tempfile::tempdir().unwrap();
    let missing = parent.path().join("no-cache-here");
    let output = swex(&["cache", "gc"], &missing);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no-cache-here") && stderr.contains("no such folder"),
        "{stderr}"
    );
    assert!(!missing.exists(), "gc created the folder");
}
