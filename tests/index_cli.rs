//! `swex index` and `swex search` end to end, through the binary: JSON shapes, human output,
//! errors, and two processes building the same snapshot at once.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

const MODELS: &str = "from app.utils import slugify\n\n\nclass Article:\n    def save(self):\n        self.slug = slugify(self.title)\n";
const UTILS: &str = "def slugify(value):\n    return value.lower().replace(' ', '-')\n";
const TESTS: &str =
    "from app.utils import slugify\n\n\ndef test_slugify():\n    assert slugify('A B') == 'a-b'\n";

fn fixture(root: &Path) {
    for (path, text) in [
        ("app/models.py", MODELS.as_bytes()),
        ("app/utils.py", UTILS.as_bytes()),
        ("app/__init__.py", b"".as_slice()),
        ("tests/test_utils.py", TESTS.as_bytes()),
        ("logo.png", b"\x89PNG\0\0"),
    ] {
        let abs = root.join(path);
        fs::create_dir_all(abs.parent().unwrap()).unwrap();
        fs::write(abs, text).unwrap();
    }
}

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

#[test]
fn index_reports_statistics_and_diagnostics() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    let report = json(&swex(
        &["index", "--repo", repo_arg, "--json", "-q"],
        cache.path(),
    ));
    let stats = &report["stats"];
    assert_eq!(stats["files"], 4);
    assert_eq!(stats["files_by_language"]["python"], 4);
    assert_eq!(stats["cache"]["analyses_computed"], 4);
    assert!(stats["pool"]["docs_added"].as_u64().unwrap() > 0);
    assert_eq!(report["diagnostics"][0]["path"], "logo.png");
    assert_eq!(report["diagnostics"][0]["kind"], "binary");
    assert!(report["graph"]["nodes"].as_u64().unwrap() >= 4);

    // Second run: everything from the cache; the human output says so.
    let output = swex(&["index", "--repo", repo_arg, "-q"], cache.path());
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("files     4 indexed (python 4)"), "{text}");
    assert!(text.contains("analyses 4 reused, 0 computed"), "{text}");
    assert!(text.contains("logo.png: binary"), "{text}");
}

#[test]
fn search_symbol_text_and_neighbours_as_json() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    let search = |args: &[&str]| {
        let mut all = vec!["search", "--repo", repo_arg, "--json", "-q"];
        all.extend_from_slice(args);
        json(&swex(&all, cache.path()))
    };

    let symbols = search(&["--symbol", "Article.save"]);
    assert_eq!(
        symbols,
        serde_json::json!([{
            "path": "app/models.py", "start": 5, "end": 6, "kind": "method",
            "name": "Article.save", "score": null
        }])
    );

    let hits = search(&["--text", "slugify lowercases the title", "--limit", "2"]);
    let hits = hits.as_array().unwrap();
    assert_eq!(hits.len(), 2);
    for hit in hits {
        for field in ["path", "start", "end", "kind", "name", "score"] {
            assert!(hit.get(field).is_some(), "{field} in {hit}");
        }
    }
    assert_eq!(hits[0]["path"], "app/utils.py");
    let glob = search(&["--text", "slugify", "--glob", "tests/**"]);
    assert!(
        glob.as_array()
            .unwrap()
            .iter()
            .all(|h| h["path"] == "tests/test_utils.py")
    );

    let neighbours = search(&["--neighbours", "app/utils.py"]);
    let paths: Vec<&str> = neighbours
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"tests/test_utils.py"), "{neighbours}");
    assert!(paths.contains(&"app/models.py"), "{neighbours}");
}

#[test]
fn errors_name_what_is_wrong() {
    let cache = tempfile::tempdir().unwrap();
    let output = swex(&["index", "--repo", "/no/such/snapshot"], cache.path());
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("/no/such/snapshot"), "{stderr}");

    let repo = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    let output = swex(
        &[
            "search",
            "--repo",
            repo_arg,
            "-q",
            "--neighbours",
            "nope.py",
        ],
        cache.path(),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("nope.py"));
    let output = swex(
        &[
            "search", "--repo", repo_arg, "-q", "--text", "x", "--glob", "[bad",
        ],
        cache.path(),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("invalid glob"));
    // Exactly one query kind.
    let output = swex(&["search", "--repo", repo_arg], cache.path());
    assert!(!output.status.success());
}

#[test]
fn two_processes_building_the_same_snapshot() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    fixture(repo.path());
    let repo_arg = repo.path().to_str().unwrap();
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_swex"))
            .args([
                "index",
                "--repo",
                repo_arg,
                "--json",
                "-q",
                "--no-graph",
                "--cache-dir",
            ])
            .arg(cache.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children = [spawn(), spawn()];
    for child in children {
        let output = child.wait_with_output().unwrap();
        let report = json(&output);
        assert_eq!(report["stats"]["files"], 4);
    }
    let after = json(&swex(
        &["index", "--repo", repo_arg, "--json", "-q", "--no-graph"],
        cache.path(),
    ));
    assert_eq!(after["stats"]["cache"]["analyses_computed"], 0);
    assert_eq!(after["stats"]["pool"]["docs_added"], 0);
    assert_eq!(after["stats"]["cache"]["invalid_entries"], 0);
    assert!(
        after["stats"]["cache"]["pool_repairs"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}
