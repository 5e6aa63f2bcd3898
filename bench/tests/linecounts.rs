//! Line counts taken from a snapshot folder (the counting itself, Python's
//! `len(text.splitlines())` on UTF-8 decoded with errors ignored, is tested in `swex-text`).

use std::path::Path;
use swex_bench::dataset::{BenchRow, GroundTruth, Region};
use swex_bench::linecounts::{FileLineCounts, count_from_snapshots};

fn row(id: &str, repo_dir: Option<&str>, regions: &[(&str, i64, i64)]) -> BenchRow {
    BenchRow {
        instance_id: id.into(),
        repo: None,
        base_commit: None,
        dataset: None,
        repo_dir: repo_dir.map(String::from),
        problem_statement: None,
        ground_truth: GroundTruth {
            read_core_regions: regions
                .iter()
                .map(|&(p, s, e)| Region::new(p, s, e))
                .collect(),
            ..GroundTruth::default()
        },
        extra: Default::default(),
    }
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn snapshot_counts_cover_ground_truth_files_only() {
    let tmp = tempfile::tempdir().unwrap();
    let repos = tmp.path().join("repos");
    let snap = repos.join("org__proj-1");
    write(&snap, "pkg/a.py", b"one\r\ntwo\rthree\n");
    write(&snap, "pkg/b.py", b"x\xe2\x80\xa8y\n\xc3");
    write(&snap, "pkg/not_in_truth.py", b"1\n2\n3\n");
    write(tmp.path(), "outside.py", b"secret\n");
    let other = repos.join("org__proj-2");
    write(&other, "pkg/a.py", b"only line");

    let mut truth_row = row(
        "org__proj-1",
        Some("repos/org__proj-1"), // the reference layout: repo_dir starts with the root's name
        &[
            ("pkg/a.py", 1, -1),
            ("pkg/missing.py", 1, 2),
            ("../../outside.py", 1, 1),
        ],
    );
    truth_row
        .ground_truth
        .read_optional_regions_map
        .insert("m".into(), vec![Region::new("pkg/b.py", 1, 2)]);
    let by_id = row("org__proj-2", None, &[("pkg/a.py", 1, 2)]);
    let nowhere = row("org__other-2", None, &[("pkg/a.py", 1, 2)]);

    let (counts, snapshots) = count_from_snapshots(&[truth_row, by_id, nowhere], &repos);
    let expected: FileLineCounts = [("pkg/a.py".to_string(), 3), ("pkg/b.py".to_string(), 2)]
        .into_iter()
        .collect();
    assert_eq!(counts.for_instance("org__proj-1"), &expected);
    assert_eq!(snapshots[0].folder.as_deref(), Some(snap.as_path()));
    assert_eq!(snapshots[0].report.missing_files, ["pkg/missing.py"]);
    assert_eq!(snapshots[0].report.unsafe_paths, ["../../outside.py"]);
    // Without repo_dir the instance folder is found by id.
    assert_eq!(snapshots[1].folder.as_deref(), Some(other.as_path()));
    assert_eq!(counts.for_instance("org__proj-2").get("pkg/a.py"), Some(1));
    assert_eq!(snapshots[2].folder, None);
    assert!(!counts.contains("org__other-2"));
}

#[test]
fn repo_dir_resolves_like_the_reference_runner() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("snapshots");
    std::fs::create_dir_all(root.join("custom/place")).unwrap();
    std::fs::create_dir_all(root.join("org__proj-7")).unwrap();
    std::fs::create_dir_all(root.join("proj")).unwrap();
    let absolute = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&absolute).unwrap();

    let relative = row("org__proj-7", Some("custom/place"), &[]);
    assert_eq!(
        relative.snapshot_dir(&root),
        Some(root.join("custom/place"))
    );
    let prefixed = row("org__proj-7", Some("snapshots/org__proj-7"), &[]);
    assert_eq!(prefixed.snapshot_dir(&root), Some(root.join("org__proj-7")));
    let absolute_row = row("org__proj-7", Some(absolute.to_str().unwrap()), &[]);
    assert_eq!(absolute_row.snapshot_dir(&root), Some(absolute.clone()));
    let stale = row("org__proj-7", Some("gone/away"), &[]);
    assert_eq!(stale.snapshot_dir(&root), Some(root.join("org__proj-7")));
    // The reference's older layout: one folder per repository name.
    let by_repo = row("org__proj-8", None, &[]);
    assert_eq!(by_repo.snapshot_dir(&root), Some(root.join("proj")));
    // Names taken from the id are plain names or nothing: none of these climbs out of `root`
    // (which has a parent folder, `tmp`, that every one of them would otherwise find).
    for id in [
        "../snapshots",
        "org__..-1",
        "..__x-1",
        "__x-1",
        "org__proj/../..-1",
    ] {
        assert_eq!(row(id, None, &[]).snapshot_dir(&root), None, "{id}");
    }
}

#[cfg(unix)]
#[test]
fn symlinks_out_of_the_snapshot_are_never_counted_through() {
    use std::os::unix::fs::symlink;
    let tmp = tempfile::tempdir().unwrap();
    let snap = tmp.path().join("repos/org__proj-1");
    write(&snap, "pkg/a.py", b"1\n2\n3\n");
    write(
        tmp.path(),
        "elsewhere/big.py",
        b"1\n2\n3\n4\n5\n6\n7\n8\n9\n",
    );
    symlink(tmp.path().join("elsewhere/big.py"), snap.join("abs.py")).unwrap();
    symlink("../../../elsewhere/big.py", snap.join("pkg/rel.py")).unwrap();
    symlink("../../elsewhere", snap.join("lib")).unwrap();
    symlink("pkg", snap.join("alias")).unwrap();
    let truth_row = row(
        "org__proj-1",
        None,
        &[
            ("abs.py", 1, -1),
            ("pkg/rel.py", 1, -1),
            ("lib/big.py", 1, -1),
            ("alias/a.py", 1, -1),
            ("pkg/a.py", 1, -1),
        ],
    );
    let (counts, report) = FileLineCounts::from_snapshot(&snap, &truth_row.ground_truth);
    let expected: FileLineCounts = [("alias/a.py".to_string(), 3), ("pkg/a.py".to_string(), 3)]
        .into_iter()
        .collect();
    assert_eq!(counts, expected);
    assert_eq!(
        report.escaping_links,
        ["abs.py", "lib/big.py", "pkg/rel.py"]
    );
    assert!(report.missing_files.is_empty(), "{report:?}");
}
