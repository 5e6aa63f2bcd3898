//! End-to-end tests of Python and other command explorers (the public worker protocol,
//! docs/protocol.md) through the real binary: `swex explore --plugin FILE.py`, `swex bench`,
//! `swex explorers`, manifests, executables and their failures.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use swex_bench::results::read_results;

fn python() -> Option<PathBuf> {
    swex_testkit::available(swex_testkit::Needs::Python, swex_testkit::python())
}

fn swex(dir: &Path, python: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_swex"))
        .current_dir(dir)
        .env("SWEX_PYTHON", python)
        .env_remove("SWEX_PLUGIN_PATH")
        // No plugins folder of the machine's user.
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .args(args)
        .output()
        .expect("swex runs")
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A reference-shaped explorer: a function of `(issue, instance_id)` that reads files relative
/// to the working directory and prints (which must not disturb the protocol).
const REFERENCE_SHAPED: &str = r#"
import os

def explore(issue, instance_id):
    words = {w.strip(".,()").lower() for w in issue.split() if len(w) > 3}
    found = []
    for folder, dirs, files in os.walk("."):
        dirs.sort()
        for name in sorted(files):
            path = os.path.relpath(os.path.join(folder, name))
            with open(path, errors="ignore") as handle:
                lines = handle.read().splitlines()
            for number, line in enumerate(lines, 1):
                if any(word in line.lower() for word in words):
                    found.append((path, number, min(number + 2, len(lines))))
                    print("matched", path, number)
                    break
    if instance_id.endswith("-boom"):
        raise ValueError("boom in " + instance_id)
    if instance_id.endswith("-hang"):
        import subprocess, time
        # A grandchild that would outlive a worker killed alone (its command line names the
        # snapshot, so the test can look for it).
        subprocess.Popen(["sh", "-c", "sleep 600; echo " + os.getcwd()])
        time.sleep(600)
    return found
"#;

fn snapshot(root: &Path, name: &str, marker: &str) -> PathBuf {
    let snapshot = root.join("repos").join(name);
    std::fs::create_dir_all(snapshot.join("pkg")).unwrap();
    std::fs::write(
        snapshot.join("pkg/urls.py"),
        format!("import os\n\n\ndef parse_url(url):\n    # {marker}\n    return url\n"),
    )
    .unwrap();
    std::fs::write(
        snapshot.join("README.md"),
        "A package.\nparse_url is documented here.\n",
    )
    .unwrap();
    std::fs::write(snapshot.join("pkg/other.py"), "x = 1\n".repeat(30)).unwrap();
    snapshot
}

#[test]
fn a_reference_shaped_python_explorer_answers_what_the_function_returns() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let repo = snapshot(root, "one", "port");
    std::fs::write(root.join("ref_explorer.py"), REFERENCE_SHAPED).unwrap();
    let issue = "parse_url() drops the port";

    let out = swex(
        root,
        &python,
        &[
            "explore",
            "--plugin",
            "ref_explorer.py",
            "--repo",
            "repos/one",
            "--no-index",
            "--json",
            "-k",
            "10",
            "--budget",
            "none",
            issue,
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["explorer"], "ref_explorer");
    let through_swex: Vec<(String, i64, i64)> = answer["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_owned(),
                r["start"].as_i64().unwrap(),
                r["end"].as_i64().unwrap(),
            )
        })
        .collect();

    // The same function called directly, in the snapshot, as the reference calls it.
    let direct = Command::new(&python)
        .current_dir(&repo)
        .args([
            "-c",
            "import json, sys, importlib.util, contextlib\n\
             spec = importlib.util.spec_from_file_location('m', sys.argv[1])\n\
             m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n\
             with contextlib.redirect_stdout(sys.stderr): r = m.explore(sys.argv[2], 'adhoc')\n\
             print(json.dumps(r))",
        ])
        .arg(root.join("ref_explorer.py"))
        .arg(issue)
        .output()
        .unwrap();
    assert!(direct.status.success(), "{}", text(&direct));
    let direct: Vec<(String, i64, i64)> = serde_json::from_slice(&direct.stdout).unwrap();
    assert_eq!(
        through_swex, direct,
        "swex explore must answer exactly what the function returns"
    );
    assert_eq!(direct.len(), 2, "{direct:?}");
}

/// `n` rows over snapshots `org__repo-<suffix>`, each with the ground truth on pkg/urls.py.
fn bench_file(root: &Path, suffixes: &[&str]) -> PathBuf {
    let mut lines = String::new();
    for suffix in suffixes {
        let id = format!("org__repo-{suffix}");
        snapshot(root, &id, suffix);
        let row = serde_json::json!({
            "instance_id": id,
            "repo": "org/repo",
            "problem_statement": "parse_url() drops the port",
            "ground_truth": {
                "read_core_files": ["pkg/urls.py"],
                "read_core_regions": [{"path": "pkg/urls.py", "start": 4, "end": 6}],
            }
        });
        lines.push_str(&format!("{row}\n"));
    }
    let bench = root.join("bench.jsonl");
    std::fs::write(&bench, lines).unwrap();
    bench
}

#[test]
fn bench_runs_a_python_explorer_next_to_built_ins_and_a_failure_costs_one_row() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    bench_file(root, &["a", "b-boom", "c-hang", "d"]);
    std::fs::write(root.join("ref_explorer.py"), REFERENCE_SHAPED).unwrap();
    let args = [
        "bench",
        "--bench",
        "bench.jsonl",
        "--repos",
        "repos",
        "--plugin",
        "ref_explorer.py",
        "-e",
        "ref_explorer,bm25-ref",
        "-k",
        "5",
        "--workers",
        "2",
        "--timeout",
        "3",
        "--plain",
        "--output",
        "out/{explorer}/top{k}.jsonl",
    ];
    let out = swex(root, &python, &args);
    assert!(out.status.success(), "{}", text(&out));

    let rows = read_results(&root.join("out/ref_explorer/top5.jsonl")).unwrap();
    let by_id = |suffix: &str| {
        rows.iter()
            .find(|r| r.row.instance_id == format!("org__repo-{suffix}"))
            .unwrap_or_else(|| panic!("no row for {suffix}"))
    };
    assert_eq!(rows.len(), 4);
    for ok in ["a", "d"] {
        let row = by_id(ok);
        assert!(row.row.error.is_none(), "{row:?}");
        assert_eq!(row.row.regions[0].path, "README.md", "{row:?}");
    }
    let boom = by_id("b-boom").row.error.clone().unwrap();
    assert!(
        boom.contains("ValueError: boom in org__repo-b-boom"),
        "{boom}"
    );
    assert!(
        boom.contains("ref_explorer.py"),
        "the failing line is named: {boom}"
    );
    let hang = by_id("c-hang").row.error.clone().unwrap();
    assert!(hang.contains("no answer within 3.0 s"), "{hang}");
    // The hung worker's whole process group was killed: nothing it started lives on.
    let marker = std::fs::canonicalize(root.join("repos/org__repo-c-hang")).unwrap();
    let marker = marker.to_str().unwrap();
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(marker))
        .collect();
    assert!(survivors.is_empty(), "{survivors:?}");
    assert_eq!(
        read_results(&root.join("out/bm25-ref/top5.jsonl"))
            .unwrap()
            .len(),
        4,
        "the built-in ran in the same run"
    );

    // Resume: the rows are the same explorer build, nothing is rerun or refused.
    let mut resumed: Vec<&str> = args.to_vec();
    resumed.push("--resume");
    let out = swex(root, &python, &resumed);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        read_results(&root.join("out/ref_explorer/top5.jsonl"))
            .unwrap()
            .len(),
        4
    );
}

#[test]
fn bad_explorers_are_refused_with_the_reason() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    snapshot(root, "one", "port");
    let explore = |python: &Path, plugin: &str| {
        let out = swex(
            root,
            python,
            &[
                "explore",
                "--plugin",
                plugin,
                "--repo",
                "repos/one",
                "--no-index",
                "issue text",
            ],
        );
        assert!(!out.status.success(), "{}", text(&out));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };

    std::fs::write(
        root.join("no_explore.py"),
        "def search(issue):\n    return []\n",
    )
    .unwrap();
    let error = explore(&python, "no_explore.py");
    assert!(error.contains("does not define `explore`"), "{error}");

    std::fs::write(
        root.join("wrong_shape.py"),
        "def explore(issue, instance_id):\n    return [('pkg/urls.py', 1, 2), ('pkg/urls.py', 'x', 3)]\n",
    )
    .unwrap();
    let error = explore(&python, "wrong_shape.py");
    assert!(
        error.contains("element 1") && error.contains("start is 'x', not an int"),
        "{error}"
    );

    std::fs::write(
        root.join("ok.py"),
        "def explore(issue, instance_id):\n    return []\n",
    )
    .unwrap();
    let error = explore(Path::new("/nonexistent/python3"), "ok.py");
    assert!(
        error.contains("`/nonexistent/python3` was not found"),
        "{error}"
    );

    // An executable that speaks another protocol version.
    let script = root.join("future-explorer");
    std::fs::write(
        &script,
        "#!/bin/sh\nread line\necho '{\"type\":\"ready\",\"protocol\":2,\"name\":\"future\"}'\nread line\n",
    )
    .unwrap();
    make_executable(&script);
    let error = explore(&python, "future-explorer");
    assert!(
        error.contains("protocol version 2") && error.contains("speaks version 1"),
        "{error}"
    );
}

#[cfg(unix)]
fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn command_explorers_are_found_like_plugins() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    snapshot(root, "one", "port");
    let folder = root.join("explorers");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("first_lines.py"),
        "NAME = 'first-lines'\nDESCRIPTION = 'the first line of a file the config names'\n\
         CONFIG = {}\n\
         def setup(config):\n    CONFIG.update(config or {})\n\
         def explore(issue, instance_id):\n    return [(CONFIG.get('file', 'README.md'), 1, 1)]\n",
    )
    .unwrap();
    std::fs::write(
        folder.join("urls-first-line.json"),
        r#"{"name": "urls-first-line", "description": "first-lines on pkg/urls.py",
            "command": ["first_lines.py"], "config": {"file": "pkg/urls.py"}}"#,
    )
    .unwrap();

    // The plugins folder, `<config dir>/swex/plugins`.
    let plugins_folder = root.join("config/swex/plugins");
    std::fs::create_dir_all(&plugins_folder).unwrap();
    std::fs::write(
        plugins_folder.join("in_the_folder.py"),
        "def explore(issue, instance_id):\n    return []\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_swex"))
        .current_dir(root)
        .env("SWEX_PYTHON", &python)
        .env("SWEX_PLUGIN_PATH", &folder)
        .env("XDG_CONFIG_HOME", root.join("config"))
        .args(["explorers", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    for (name, found_by) in [
        ("first-lines", "SWEX_PLUGIN_PATH"),
        ("urls-first-line", "SWEX_PLUGIN_PATH"),
        ("in_the_folder", "plugins folder"),
    ] {
        let row = rows.iter().find(|r| r["name"] == name).unwrap();
        assert_eq!(
            (row["kind"].as_str(), row["found_by"].as_str()),
            (Some("command"), Some(found_by)),
            "{row}"
        );
    }

    for (name, expected) in [
        ("first-lines", "README.md"),
        ("urls-first-line", "pkg/urls.py"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_swex"))
            .current_dir(root)
            .env("SWEX_PYTHON", &python)
            .env("SWEX_PLUGIN_PATH", &folder)
            .env("XDG_CONFIG_HOME", root.join("config"))
            .args([
                "explore",
                "-e",
                name,
                "--repo",
                "repos/one",
                "--no-index",
                "--json",
                "x",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(answer["regions"][0]["path"], expected, "{name}: {answer}");
    }
}

/// A snapshot for the BM25 parity test: windows that overlap, blank windows, files the
/// reference's policy leaves out, a few repeated words so that idfs go negative.
fn bm25_snapshot(root: &Path, id: &str, seed: usize) -> PathBuf {
    let snapshot = root.join("repos").join(id);
    for folder in ["pkg/sub", "docs", "build", "node_modules/x"] {
        std::fs::create_dir_all(snapshot.join(folder)).unwrap();
    }
    let words = [
        "parse", "url", "port", "host", "def", "return", "self", "class", "import", "os", "path",
        "join", "query", "fragment", "scheme", "netloc", "the", "a", "is", "(", ")", ":",
    ];
    let mut state = seed as u64 * 2654435761 + 1;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    for (file, lines) in [
        ("pkg/urls.py", 530),
        ("pkg/sub/hosts.py", 95),
        ("docs/guide.md", 40),
        ("setup.cfg", 12),
        ("build/gen.py", 50),
        ("node_modules/x/index.py", 30),
        ("pkg/app.js", 60),
    ] {
        let mut text = String::new();
        for line in 0..lines {
            if (line / 7) % 5 == 3 {
                text.push('\n');
                continue;
            }
            let n = 1 + next() % 9;
            let tokens: Vec<&str> = (0..n).map(|_| words[next() % words.len()]).collect();
            text.push_str(&tokens.join(" "));
            text.push('\n');
        }
        std::fs::write(snapshot.join(file), text).unwrap();
    }
    std::fs::write(snapshot.join("pkg/blank.py"), "\n\n   \n\t\n").unwrap();
    snapshot
}

#[test]
fn the_python_bm25_example_gives_the_regions_and_scores_of_bm25_ref() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let issues = [
        "parse url drops the port of the host",
        "os path join ( ) returns the wrong scheme : fragment",
        "class query is self",
    ];
    let mut lines = String::new();
    for (i, issue) in issues.iter().enumerate() {
        let id = format!("org__repo-{i}");
        bm25_snapshot(root, &id, i);
        let row = serde_json::json!({
            "instance_id": id, "repo": "org/repo", "problem_statement": issue,
            "ground_truth": {"read_core_files": ["pkg/urls.py"],
                             "read_core_regions": [{"path": "pkg/urls.py", "start": 1, "end": 30}]},
        });
        lines.push_str(&format!("{row}\n"));
    }
    std::fs::write(root.join("bench.jsonl"), lines).unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/python/bm25_py.py");
    let out = swex(
        root,
        &python,
        &[
            "bench",
            "--bench",
            "bench.jsonl",
            "--repos",
            "repos",
            "--plugin",
            example.to_str().unwrap(),
            "-e",
            "bm25-py,bm25-ref",
            "-k",
            "10",
            "--plain",
            "--output",
            "out/{explorer}/top{k}.jsonl",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let regions = |explorer: &str| {
        let mut rows = read_results(&root.join(format!("out/{explorer}/top10.jsonl"))).unwrap();
        rows.sort_by(|a, b| a.row.instance_id.cmp(&b.row.instance_id));
        rows.into_iter()
            .map(|r| {
                assert!(r.row.error.is_none(), "{:?}", r.row.error);
                r.row
                    .regions
                    .iter()
                    .map(|g| (g.path.clone(), g.start, g.end))
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    };
    let python_rows = regions("bm25-py");
    assert_eq!(python_rows.len(), 3);
    assert!(python_rows.iter().all(|r| r.len() == 10), "{python_rows:?}");
    assert_eq!(python_rows, regions("bm25-ref"));

    // Rows keep no scores; `swex explore --json` does: the same bits.
    let scores = |explorer: &str| {
        let out = swex(
            root,
            &python,
            &[
                "explore",
                "--plugin",
                example.to_str().unwrap(),
                "-e",
                explorer,
                "--repo",
                "repos/org__repo-1",
                "--no-index",
                "--budget",
                "none",
                "--json",
                "-k",
                "20",
                issues[1],
            ],
        );
        assert!(out.status.success(), "{}", text(&out));
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        answer["regions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["path"].to_string(),
                    r["start"].as_i64(),
                    r["score"].as_f64().map(f64::to_bits),
                )
            })
            .collect::<Vec<_>>()
    };
    let python_scores = scores("bm25-py");
    assert!(python_scores.len() >= 10, "{python_scores:?}");
    assert_eq!(python_scores, scores("bm25-ref"), "scores agree to the bit");
}

/// A coding agent as an explorer, configuration only: a scripted fake of Claude Code's JSON
/// output mode (no network), run by the built-in `command` explorer through `swex bench`; its
/// answer is parsed as the reference parses `RELEVANT_FILES:` blocks and its token use and cost
/// land in the row.
#[test]
fn an_agent_cli_is_an_explorer_and_its_usage_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    bench_file(root, &["a", "b"]);
    let agent = root.join("fake-claude");
    std::fs::write(
        &agent,
        r#"#!/bin/sh
# Reads the prompt from its argument like `claude -p PROMPT --output-format json`.
case "$1" in *"parse_url"*) ;; *) echo "no issue in the prompt" >&2; exit 2 ;; esac
printf '{"type":"result","result":"I read the code.\\n\\nRELEVANT_FILES:\\n- %s/pkg/urls.py:L4\342\200\223L6\\n- /testbed/README.md\\n- pkg/urls.py:4-6\\n- /elsewhere/x.py:1-2\\n","total_cost_usd":0.25,"usage":{"input_tokens":900,"output_tokens":40}}\n' "$SWEX_REPO"
"#,
    )
    .unwrap();
    make_executable(&agent);
    let config = serde_json::json!({
        "command": [agent.to_str().unwrap(), "{prompt}", "--output-format", "json"],
        "timeout_secs": 60
    });
    let out = Command::new(env!("CARGO_BIN_EXE_swex"))
        .current_dir(root)
        .args([
            "bench",
            "--bench",
            "bench.jsonl",
            "--repos",
            "repos",
            "-e",
            "command",
            "-k",
            "5",
            "--plain",
            "--output",
            "out/{explorer}/top{k}.jsonl",
            "--explorer-config",
        ])
        .arg(format!("command={config}"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let rows = read_results(&root.join("out/command/top5.jsonl")).unwrap();
    assert_eq!(rows.len(), 2);
    for row in &rows {
        let row = &row.row;
        assert!(row.error.is_none(), "{row:?}");
        let regions: Vec<(&str, i64, i64)> = row
            .regions
            .iter()
            .map(|r| (r.path.as_str(), r.start, r.end))
            .collect();
        assert_eq!(regions, [("pkg/urls.py", 4, 6), ("README.md", 1, -1)]);
        assert!(
            row.notes
                .iter()
                .any(|n| n.contains("/elsewhere/x.py:1-2`: outside the snapshot")),
            "{:?}",
            row.notes
        );
        assert!(
            row.notes.contains(
                &r#"agent usage: {"cost_usd":0.25,"input_tokens":900,"output_tokens":40}"#
                    .to_owned()
            ),
            "{:?}",
            row.notes
        );
    }

    // The same agent as a named explorer: a manifest giving the built-in `command` explorer
    // its config, found like any plugin.
    let manifest = root.join("fake-agent.json");
    let manifest_text = serde_json::json!({
        "name": "fake-agent", "description": "Claude Code, scripted", "explorer": "command",
        "config": config,
    });
    std::fs::write(&manifest, manifest_text.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_swex"))
        .current_dir(root)
        .env("XDG_CONFIG_HOME", root.join("config"))
        .args([
            "explore",
            "--plugin",
            "fake-agent.json",
            "--repo",
            "repos/org__repo-a",
            "--no-index",
            "--json",
            "parse_url() drops the port",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["explorer"], "command");
    assert_eq!(answer["regions"][0]["path"], "pkg/urls.py", "{answer}");
}
