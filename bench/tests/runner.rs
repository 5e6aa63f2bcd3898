//! The runner with scripted explorers on synthetic snapshots: failure rows, determinism, resume,
//! shards.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use swex_bench::dataset::{Benchmark, LoadOptions};
use swex_bench::results::{OpenMode, read_results};
use swex_bench::runner::{
    BenchExplorer, Explore, FsOpener, OutputTemplate, Run, RunConfig, RunSummary, Shard, Silent,
    SnapshotSource, select_instances,
};
use swex_plugin::{Region, Request};
use swex_plugin_host::{RawServices, ValidatedResponse};

/// A benchmark of `n` instances `i-0..`, each with a snapshot holding `a.py` (40 lines) and
/// `b.py` (20 lines); the core region is `a.py:10-19`.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    bench: Benchmark,
}

fn fixture(n: usize) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let mut lines = String::new();
    for i in 0..n {
        let id = format!("i-{i}");
        let snapshot = root.join("repos").join(&id);
        std::fs::create_dir_all(&snapshot).unwrap();
        std::fs::write(snapshot.join("a.py"), "x = 1\n".repeat(40)).unwrap();
        std::fs::write(snapshot.join("b.py"), "y = 2\n".repeat(20)).unwrap();
        let row = serde_json::json!({
            "instance_id": id,
            "problem_statement": format!("issue {i}"),
            "ground_truth": {
                "read_core_files": ["a.py"],
                "read_core_regions": [{"path": "a.py", "start": 10, "end": 19}],
            }
        });
        lines.push_str(&format!("{row}\n"));
    }
    let bench_path = root.join("bench.jsonl");
    std::fs::write(&bench_path, lines).unwrap();
    let bench = Benchmark::load(&bench_path, &LoadOptions::default()).unwrap();
    Fixture {
        _dir: dir,
        root,
        bench,
    }
}

/// What a scripted explorer does with a request.
#[derive(Clone, Copy)]
enum Script {
    /// `a.py:10-19`, `b.py:1-5`, `a.py:1-40`: the second and third depend on nothing random.
    Answer,
    Fail,
    Panic,
    /// Fails on instance `i-1` only.
    FailOnOne,
}

struct Scripted {
    script: Script,
    calls: Arc<AtomicUsize>,
}

impl Explore for Scripted {
    fn explore(
        &self,
        request: &Request,
        services: &dyn RawServices,
    ) -> Result<ValidatedResponse, String> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        match self.script {
            Script::Fail => return Err("scripted failure".into()),
            Script::Panic => panic!("scripted panic on {}", request.instance_id),
            Script::FailOnOne if request.instance_id == "i-1" => {
                return Err("fails on i-1".into());
            }
            _ => {}
        }
        let regions = vec![
            Region::new("a.py", 10, 19),
            Region::new("b.py", 1, 5),
            Region::new("a.py", 1, 40),
            Region::new("missing.py", 1, 5),
        ];
        Ok(swex_plugin_host::validate(
            swex_plugin::Response::new(regions),
            request.top_k,
            &|p| services.contains_file(p),
        ))
    }
}

fn explorer(name: &str, script: Script) -> BenchExplorer {
    counted(name, script).0
}

/// An explorer and the count of its calls.
fn counted(name: &str, script: Script) -> (BenchExplorer, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let explorer = BenchExplorer {
        name: name.into(),
        config: serde_json::json!({"script": name}),
        build: "scripted".into(),
        sees_ground_truth: false,
        explorer: Box::new(Scripted {
            script,
            calls: Arc::clone(&calls),
        }),
    };
    (explorer, calls)
}

fn run(
    fixture: &Fixture,
    explorers: &[BenchExplorer],
    output: &Path,
    mode: OpenMode,
    ids: &[String],
    shard: Option<Shard>,
    workers: usize,
) -> RunSummary {
    let snapshots = SnapshotSource {
        repos: fixture.root.join("repos"),
        locator: None,
    };
    let run = Run {
        bench: &fixture.bench,
        instances: select_instances(&fixture.bench, ids, None, shard).unwrap(),
        explorers,
        snapshots: &snapshots,
        services: &FsOpener,
        config: RunConfig {
            top_ks: vec![1, 2],
            workers,
            mode,
            output: OutputTemplate::new(format!(
                "{}/{{explorer}}/top{{k}}.jsonl",
                output.display()
            ))
            .unwrap(),
            shard,
            line_budget: None,
            loc_ks: Default::default(),
        },
    };
    run.execute(&Silent).unwrap()
}

/// Every line of every result file under `dir`, without timings, sorted by file then line.
fn canonical_files(dir: &Path) -> Vec<(String, Vec<String>)> {
    let mut files = Vec::new();
    for explorer in std::fs::read_dir(dir).unwrap() {
        let explorer = explorer.unwrap().path();
        for file in std::fs::read_dir(&explorer).unwrap() {
            let file = file.unwrap().path();
            let lines = read_results(&file)
                .unwrap()
                .into_iter()
                .map(|r| r.row.canonical_line())
                .collect();
            let name = file.strip_prefix(dir).unwrap().display().to_string();
            files.push((name, lines));
        }
    }
    files.sort();
    files
}

#[test]
fn failures_and_panics_become_error_rows_and_the_run_goes_on() {
    let fixture = fixture(3);
    let out = fixture.root.join("out");
    let explorers = [
        explorer("good", Script::Answer),
        explorer("bad", Script::Fail),
        explorer("panicky", Script::Panic),
        explorer("flaky", Script::FailOnOne),
    ];
    let summary = run(&fixture, &explorers, &out, OpenMode::Create, &[], None, 2);
    assert_eq!(summary.rows_written, 3 * 4 * 2);
    assert_eq!(summary.failures, 3 + 3 + 1);

    let check = |explorer: &str, k: usize, failed: &[&str]| {
        let rows = read_results(&out.join(explorer).join(format!("top{k}.jsonl"))).unwrap();
        let ids: Vec<&str> = rows.iter().map(|r| r.row.instance_id.as_str()).collect();
        assert_eq!(ids, ["i-0", "i-1", "i-2"], "{explorer}: benchmark order");
        for r in &rows {
            let should_fail = failed.contains(&r.row.instance_id.as_str());
            assert_eq!(r.row.error.is_some(), should_fail, "{explorer} {:?}", r.row);
            if should_fail {
                assert!(r.row.regions.is_empty());
                assert_eq!(r.row.metrics.values(), [0.0; 17]);
            }
        }
        rows
    };
    check("bad", 1, &["i-0", "i-1", "i-2"]);
    let panicky = check("panicky", 2, &["i-0", "i-1", "i-2"]);
    assert!(
        panicky[0]
            .row
            .error
            .as_deref()
            .unwrap()
            .contains("explorer panicked: scripted panic on i-0")
    );
    check("flaky", 2, &["i-1"]);
    let good = check("good", 2, &[]);

    // The answer is cut at each k and scored; the invalid region is dropped and counted.
    let first = &good[0].row;
    assert_eq!(first.num_regions, 2);
    assert_eq!(first.regions[1].path, "b.py");
    assert_eq!(first.dropped.beyond_top_k, 1);
    assert_eq!(first.dropped.nonexistent_file, 1);
    assert_eq!(first.metrics.recall, 1.0);
    assert_eq!(first.metrics.precision, 10.0 / 15.0);
    assert_eq!(first.explorer_config, serde_json::json!({"script": "good"}));
    let top1 = read_results(&out.join("good/top1.jsonl")).unwrap();
    assert_eq!(top1[0].row.metrics.precision, 1.0);

    // Failures are counted in the means (as zeros).
    let flaky = summary
        .means
        .iter()
        .find(|m| m.explorer == "flaky" && m.top_k == 1)
        .unwrap();
    assert_eq!((flaky.instances, flaky.failures), (3, 1));
    assert!((flaky.mean.recall - 2.0 / 3.0).abs() < 1e-12);
}

#[test]
fn a_missing_snapshot_fails_its_instance_only() {
    let fixture = fixture(2);
    std::fs::remove_dir_all(fixture.root.join("repos/i-1")).unwrap();
    let out = fixture.root.join("out");
    let explorers = [explorer("good", Script::Answer)];
    let summary = run(&fixture, &explorers, &out, OpenMode::Create, &[], None, 1);
    assert_eq!(summary.failures, 1);
    let rows = read_results(&out.join("good/top1.jsonl")).unwrap();
    assert!(rows[0].row.error.is_none());
    let reason = rows[1].row.error.as_deref().unwrap();
    assert!(reason.contains("no snapshot of i-1"), "{reason}");
}

#[test]
fn same_inputs_give_the_same_files_apart_from_timings() {
    let fixture = fixture(6);
    let explorers = [
        explorer("good", Script::Answer),
        explorer("flaky", Script::FailOnOne),
    ];
    let one = fixture.root.join("one");
    let two = fixture.root.join("two");
    run(&fixture, &explorers, &one, OpenMode::Create, &[], None, 1);
    run(&fixture, &explorers, &two, OpenMode::Create, &[], None, 2);
    assert_eq!(canonical_files(&one), canonical_files(&two));
}

#[test]
fn resume_runs_only_missing_rows_and_ends_equal_to_a_full_run() {
    let fixture = fixture(5);
    let full_dir = fixture.root.join("full");
    let full = [explorer("good", Script::Answer)];
    run(&fixture, &full, &full_dir, OpenMode::Create, &[], None, 2);

    let resumed_dir = fixture.root.join("resumed");
    let (first, first_calls) = counted("good", Script::Answer);
    let first = [first];
    let ids = ["i-3".to_string(), "i-1".to_string()];
    run(
        &fixture,
        &first,
        &resumed_dir,
        OpenMode::Create,
        &ids,
        None,
        2,
    );
    assert_eq!(first_calls.load(Ordering::SeqCst), 2);

    // Without --resume the files are refused; with it only the 3 missing instances run.
    let (second, second_calls) = counted("good", Script::Answer);
    let second = [second];
    let snapshots = SnapshotSource {
        repos: fixture.root.join("repos"),
        locator: None,
    };
    let refused = Run {
        bench: &fixture.bench,
        instances: fixture.bench.rows.iter().collect(),
        explorers: &second,
        snapshots: &snapshots,
        services: &FsOpener,
        config: RunConfig {
            top_ks: vec![1, 2],
            workers: 1,
            mode: OpenMode::Create,
            output: OutputTemplate::new(format!(
                "{}/{{explorer}}/top{{k}}.jsonl",
                resumed_dir.display()
            ))
            .unwrap(),
            shard: None,
            line_budget: None,
            loc_ks: Default::default(),
        },
    }
    .execute(&Silent);
    assert!(refused.unwrap_err().to_string().contains("--resume"));
    let summary = run(
        &fixture,
        &second,
        &resumed_dir,
        OpenMode::Resume,
        &[],
        None,
        2,
    );
    assert_eq!(second_calls.load(Ordering::SeqCst), 3);
    assert_eq!(summary.plan.rows_present, 4);
    assert_eq!(summary.rows_written, 6);
    assert_eq!(canonical_files(&full_dir), canonical_files(&resumed_dir));

    // A third resume has nothing to do.
    let (third, third_calls) = counted("good", Script::Answer);
    let third = [third];
    let summary = run(
        &fixture,
        &third,
        &resumed_dir,
        OpenMode::Resume,
        &[],
        None,
        2,
    );
    assert_eq!(
        (third_calls.load(Ordering::SeqCst), summary.rows_written),
        (0, 0)
    );
}

#[test]
fn shards_partition_the_instances() {
    let fixture = fixture(7);
    let mut seen = Vec::new();
    for index in 0..3 {
        let shard = Shard { index, count: 3 };
        let rows = select_instances(&fixture.bench, &[], None, Some(shard)).unwrap();
        let ids: Vec<String> = rows.iter().map(|r| r.instance_id.clone()).collect();
        assert!((2..=3).contains(&ids.len()), "{ids:?}");
        seen.extend(ids);
    }
    seen.sort();
    let mut all: Vec<String> = fixture
        .bench
        .rows
        .iter()
        .map(|r| r.instance_id.clone())
        .collect();
    all.sort();
    assert_eq!(seen, all);

    for (text, ok) in [
        ("0/3", true),
        ("2/3", true),
        ("3/3", false),
        ("1/0", false),
        ("x", false),
    ] {
        assert_eq!(text.parse::<Shard>().is_ok(), ok, "{text}");
    }
}

#[test]
fn services_come_from_the_opener_once_per_instance() {
    let fixture = fixture(3);
    let opened = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&opened);
    let opener = swex_bench::runner::FnOpener {
        name: "counting".into(),
        open: move |dir: &Path| -> Result<(Box<dyn RawServices>, Vec<String>), String> {
            counter.fetch_add(1, Ordering::SeqCst);
            if dir.ends_with("i-2") {
                return Err("index build failed".into());
            }
            Ok((
                Box::new(swex_plugin_host::FsBackend::new(dir)),
                vec!["a warning".into()],
            ))
        },
    };
    let snapshots = SnapshotSource {
        repos: fixture.root.join("repos"),
        locator: None,
    };
    let explorers = [
        explorer("good", Script::Answer),
        explorer("flaky", Script::FailOnOne),
    ];
    let out = fixture.root.join("out");
    let summary = Run {
        bench: &fixture.bench,
        instances: fixture.bench.rows.iter().collect(),
        explorers: &explorers,
        snapshots: &snapshots,
        services: &opener,
        config: RunConfig {
            top_ks: vec![1],
            workers: 2,
            mode: OpenMode::Create,
            output: OutputTemplate::new(format!("{}/{{explorer}}/top{{k}}.jsonl", out.display()))
                .unwrap(),
            shard: None,
            line_budget: None,
            loc_ks: Default::default(),
        },
    }
    .execute(&Silent)
    .unwrap();
    assert_eq!(
        opened.load(Ordering::SeqCst),
        3,
        "one open per instance, shared"
    );
    // i-1 fails for `flaky`; i-2's services fail for both.
    assert_eq!(summary.failures, 3);
    let rows = read_results(&out.join("good/top1.jsonl")).unwrap();
    assert_eq!(rows[2].row.error.as_deref(), Some("index build failed"));
}

/// A run of every instance with the given ks and output template; the error as text.
fn try_run(
    fixture: &Fixture,
    explorers: &[BenchExplorer],
    template: &str,
    top_ks: &[usize],
) -> Result<RunSummary, String> {
    try_run_with_budget(fixture, explorers, template, top_ks, None)
}

fn try_run_with_budget(
    fixture: &Fixture,
    explorers: &[BenchExplorer],
    template: &str,
    top_ks: &[usize],
    line_budget: Option<u64>,
) -> Result<RunSummary, String> {
    let snapshots = SnapshotSource {
        repos: fixture.root.join("repos"),
        locator: None,
    };
    Run {
        bench: &fixture.bench,
        instances: fixture.bench.rows.iter().collect(),
        explorers,
        snapshots: &snapshots,
        services: &FsOpener,
        config: RunConfig {
            top_ks: top_ks.to_vec(),
            workers: 1,
            mode: OpenMode::Resume,
            output: OutputTemplate::new(format!("{}/{template}", fixture.root.display())).unwrap(),
            shard: None,
            line_budget,
            loc_ks: Default::default(),
        },
    }
    .execute(&Silent)
    .map_err(|e| e.to_string())
}

#[test]
fn resume_refuses_rows_another_run_produced() {
    let fixture = fixture(4);
    let template = "out/{explorer}/top{k}.jsonl";
    let ids = ["i-0".to_string(), "i-2".to_string()];
    run(
        &fixture,
        &[explorer("good", Script::Answer)],
        &fixture.root.join("out"),
        OpenMode::Create,
        &ids,
        None,
        1,
    );
    let files = || canonical_files(&fixture.root.join("out"));
    let before = files();
    let rows = read_results(&fixture.root.join("out/good/top1.jsonl")).unwrap();
    assert_eq!(
        rows[0].row.produced_by,
        Some(swex_bench::results::ProducedBy {
            build: "scripted".into(),
            config_digest: swex_bench::results::config_digest(
                &serde_json::json!({"script": "good"})
            ),
            request_top_k: 2,
            line_budget: None,
        })
    );

    let check = |explorer: BenchExplorer, top_ks: &[usize], expected: &str| {
        let error = try_run(&fixture, &[explorer], template, top_ks).unwrap_err();
        assert!(
            error.contains("out/good/top1.jsonl: 2 rows of explorer `good`"),
            "{error}"
        );
        assert!(error.contains(expected), "{expected}: {error}");
        assert!(
            error.contains("--overwrite") && error.contains("{run}"),
            "{error}"
        );
        assert_eq!(files(), before, "a refused resume writes nothing");
    };
    let mut config = explorer("good", Script::Answer);
    config.config = serde_json::json!({"script": "good", "depth": 2});
    check(config, &[1, 2], "explorer config: the rows have blake3:");
    let mut rebuilt = explorer("good", Script::Answer);
    rebuilt.build = "rebuilt".into();
    check(
        rebuilt,
        &[1, 2],
        "explorer build: the rows were made by scripted, this run uses rebuilt",
    );
    check(
        explorer("good", Script::Answer),
        &[1],
        "the rows are cuts of answers at k = 2, this run asks for k = 1",
    );
    let error = try_run_with_budget(
        &fixture,
        &[explorer("good", Script::Answer)],
        template,
        &[1, 2],
        Some(300),
    )
    .unwrap_err();
    assert!(
        error.contains("line budget: the rows were asked for none, this run asks for 300 lines"),
        "{error}"
    );
    assert_eq!(files(), before, "a refused resume writes nothing");
    // Keys in another order are the same config.
    let mut reordered = explorer("good", Script::Answer);
    reordered.config = serde_json::from_str(r#"{ "script" : "good" }"#).unwrap();
    assert_eq!(
        try_run(&fixture, &[reordered], template, &[1, 2])
            .unwrap()
            .rows_written,
        4
    );

    // Rows that do not say what made them (the reference runner's, older swex's) do not mix either.
    let legacy = fixture.root.join("legacy/good/top1.jsonl");
    std::fs::create_dir_all(legacy.parent().unwrap()).unwrap();
    let text = std::fs::read_to_string(fixture.root.join("out/good/top1.jsonl")).unwrap();
    let stripped: String = text
        .lines()
        .map(|line| {
            let mut row: serde_json::Value = serde_json::from_str(line).unwrap();
            row.as_object_mut().unwrap().remove("produced_by");
            format!("{row}\n")
        })
        .collect();
    std::fs::write(&legacy, stripped).unwrap();
    let error = try_run(
        &fixture,
        &[explorer("good", Script::Answer)],
        "legacy/{explorer}/top{k}.jsonl",
        &[1, 2],
    )
    .unwrap_err();
    assert!(
        error.contains("do not record what produced them"),
        "{error}"
    );

    // Asked to, a different run writes elsewhere: `{run}` names a folder per producer.
    let mut other = explorer("good", Script::Answer);
    other.config = serde_json::json!({"script": "other"});
    let summary = try_run(
        &fixture,
        &[other],
        "runs/{explorer}/{run}/top{k}.jsonl",
        &[1, 2],
    )
    .unwrap();
    assert_eq!(summary.rows_written, 8);
    assert_eq!(summary.plan.files.len(), 2);
    assert!(
        summary.plan.files[0]
            .to_string_lossy()
            .contains("/runs/good/")
    );
}
