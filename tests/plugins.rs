//! Plugin loading end to end: a Rust plugin crate outside the workspace and a C plugin are built
//! here, loaded and run; a plugin of another ABI version is refused; panics, crashes, aborts,
//! hangs and garbage are survived (in process for panics, in isolated mode for the rest); the
//! CLI lists and runs plugins; every built-in explorer's plugin crate, built in the workspace's
//! target dir, loads as the same explorer that swex links.
//!
//! Needs `cargo` (offline, the registry cache as the workspace build left it) and `cc`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;
use swex_plugin::Request;
use swex_plugin_host::{
    CallFailure, ExplorerHandle, ExplorerPlugin, FsBackend, HostError, IsolatedExplorer,
    IsolatedOptions, PluginTarget, WorkerCommand,
};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A target dir shared by the cargo builds of this test file (kept between runs, so reruns are
/// quick), inside cargo's temporary folder for integration tests.
fn fixture_target() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("plugin-fixtures")
}

fn cargo_build(args: &[&str]) {
    let mut all = vec!["build", "--offline", "--quiet"];
    all.extend(args);
    cargo(&all);
}

/// Runs cargo with the shared fixture target dir.
fn cargo(args: &[&str]) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(args)
        .arg("--target-dir")
        .arg(fixture_target())
        .current_dir(repo_root())
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn library_name(stem: &str) -> String {
    format!(
        "{}{stem}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// The out-of-workspace Rust plugin, built once per test run.
fn rust_plugin() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let manifest = repo_root().join("tests/fixtures/plugins/rust-outside/Cargo.toml");
        cargo_build(&["--manifest-path", manifest.to_str().unwrap()]);
        fixture_target()
            .join("debug")
            .join(library_name("fixture_explorer"))
    })
}

/// Compiles a C plugin from tests/fixtures/plugins/c with extra `cc` arguments.
fn c_plugin(source: &str, output: &str, extra: &[&str]) -> PathBuf {
    let dir = fixture_target().join("c");
    std::fs::create_dir_all(&dir).unwrap();
    let library = dir.join(library_name(output));
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-std=c99", "-Wall", "-Werror", "-I"])
        .arg(repo_root().join("plugins/sdk/include"))
        .args(extra)
        .arg("-o")
        .arg(&library)
        .arg(repo_root().join("tests/fixtures/plugins/c").join(source))
        .status()
        .expect("this test needs a C compiler named `cc` on PATH");
    assert!(status.success(), "cc failed for {source}");
    library
}

/// A small snapshot: `a.py` (first in path order), `b/c.py`.
fn snapshot() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.py"),
        "import os\n\ndef f():\n    return 1\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("b")).unwrap();
    std::fs::write(dir.path().join("b/c.py"), "x = 1\n").unwrap();
    dir
}

fn request(mode: &str) -> Request {
    let mut request = Request::new("fixture-1", "some issue", 5);
    request.config = serde_json::json!({ "mode": mode });
    request
}

/// swex's own worker for `target`.
fn worker(target: &PluginTarget) -> WorkerCommand {
    let mut args = vec!["__plugin-worker".into()];
    args.extend(target.worker_args());
    WorkerCommand {
        program: PathBuf::from(env!("CARGO_BIN_EXE_swex")),
        args,
        ..WorkerCommand::default()
    }
}

#[test]
fn rust_plugin_outside_the_workspace_builds_loads_and_runs() {
    let plugin = ExplorerPlugin::load(rust_plugin()).unwrap();
    assert_eq!(plugin.name(), "fixture-rust");
    assert_eq!(plugin.abi_version(), 1);
    let snapshot = snapshot();
    let backend = FsBackend::new(snapshot.path());
    let handle = ExplorerHandle::InProcess(plugin.instantiate(&serde_json::Value::Null).unwrap());
    let answer = handle.explore_validated(&request("ok"), &backend).unwrap();
    let regions: Vec<(&str, i64, i64)> = answer
        .regions
        .iter()
        .map(|r| (r.path.as_str(), r.start, r.end))
        .collect();
    assert_eq!(regions, [("a.py", 1, 4)]);
    assert_eq!(
        answer.regions[0].why.as_deref(),
        Some("first line: import os")
    );
    assert_eq!(answer.dropped.nonexistent_file, 2, "{:?}", answer.dropped);
}

#[test]
fn c_plugin_loads_and_runs_and_uses_services() {
    let library = c_plugin("echo.c", "c_echo", &[]);
    let plugin = ExplorerPlugin::load(&library).unwrap();
    assert_eq!(
        (plugin.name(), plugin.description()),
        ("c-echo", "test explorer written in C")
    );
    let snapshot = snapshot();
    let backend = FsBackend::new(snapshot.path());
    let instance = plugin
        .instantiate(&serde_json::json!({"any": "config"}))
        .unwrap();
    let first = instance.explore(&request("ok"), &backend).unwrap();
    let second = instance.explore(&request("ok"), &backend).unwrap();
    assert_eq!(
        first.regions[0].why.as_deref(),
        Some("from C: a.py has 33 bytes")
    );
    assert_eq!(
        (first.regions[0].score, second.regions[0].score),
        (Some(1.0), Some(2.0))
    );
}

#[test]
fn wrong_abi_version_is_refused_naming_both_versions() {
    let library = c_plugin("echo.c", "c_wrong_abi", &["-DFIXTURE_ABI_VERSION=999"]);
    let error = ExplorerPlugin::load(&library).unwrap_err();
    assert!(
        matches!(
            error,
            HostError::AbiMismatch {
                found: 999,
                expected: 1,
                ..
            }
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("ABI version 999") && message.contains("ABI version 1"),
        "{message}"
    );
    assert!(
        message.contains("c_wrong_abi"),
        "the message names the library: {message}"
    );
}

#[test]
fn a_library_without_the_entry_symbol_is_refused() {
    let dir = fixture_target().join("c");
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("empty.c");
    std::fs::write(&source, "int not_a_plugin(void) { return 0; }\n").unwrap();
    let library = dir.join(library_name("empty"));
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&library)
        .arg(&source)
        .status()
        .unwrap();
    assert!(status.success());
    let error = ExplorerPlugin::load(&library).unwrap_err();
    assert!(
        matches!(error, HostError::MissingSymbol { .. }),
        "{error:?}"
    );
}

#[test]
fn panicking_plugin_gives_an_error_not_a_crash() {
    let plugin = ExplorerPlugin::load(rust_plugin()).unwrap();
    let instance = plugin.instantiate(&serde_json::Value::Null).unwrap();
    let snapshot = snapshot();
    let backend = FsBackend::new(snapshot.path());
    match instance.explore(&request("panic"), &backend) {
        Err(HostError::Explore {
            failure: CallFailure::Panic,
            message,
            ..
        }) => {
            assert!(message.contains("fixture panic on purpose"), "{message}")
        }
        other => panic!("expected a caught panic, got {other:?}"),
    }
    match instance.explore(&request("fail"), &backend) {
        Err(HostError::Explore {
            failure: CallFailure::Failed,
            message,
            ..
        }) => {
            assert!(message.contains("fixture failure on purpose"), "{message}")
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    // The instance is still usable.
    assert_eq!(
        instance.explore(&request("ok"), &backend).unwrap().regions[0].path,
        "a.py"
    );
    // A refused config names what is wrong.
    let error = plugin
        .instantiate(&serde_json::json!({"mode": "bad-config"}))
        .unwrap_err();
    assert!(
        error.to_string().contains("bad-config is refused"),
        "{error}"
    );
}

#[test]
fn isolated_mode_survives_crashes_aborts_hangs_and_garbage() {
    let options = IsolatedOptions {
        timeout: Duration::from_secs(5),
        forward_stderr: false,
    };
    let target = PluginTarget::Library(rust_plugin().to_owned());
    let explorer =
        IsolatedExplorer::start(worker(&target), serde_json::Value::Null, options).unwrap();
    assert_eq!(explorer.name(), "fixture-rust");
    let snapshot = snapshot();
    let backend = FsBackend::new(snapshot.path());

    // (mode, Ok(first path) or Err(text the failure must contain))
    let runs: &[(&str, Result<&str, &str>)] = &[
        ("ok", Ok("a.py")),
        ("segfault", Err("SIGSEGV")),
        ("ok", Ok("a.py")),
        ("abort", Err("SIGABRT")),
        ("garbage", Ok("a.py")),
        ("panic", Err("fixture panic on purpose")),
        ("exit", Err("exited with status 3")),
        ("hang", Err("no answer within 5.0 s")),
        ("ok", Ok("a.py")),
    ];
    for (mode, expected) in runs {
        let outcome = explore_isolated(&explorer, &request(mode), &backend);
        match (expected, outcome) {
            (Ok(path), Ok(answer)) => assert_eq!(answer.regions[0].path, *path, "mode {mode}"),
            (Err(needle), Err(error)) => {
                let message = error.to_string();
                assert!(message.contains(needle), "mode {mode}: {message}");
            }
            (expected, outcome) => panic!("mode {mode}: expected {expected:?}, got {outcome:?}"),
        }
    }
}

/// Services whose `lexical_search` answers (no hits) only once two calls wait in it at the same
/// time, and `Unavailable` when one waits alone for a minute: proof that two calls ran at once.
#[derive(Default)]
struct Rendezvous {
    waiting: std::sync::Mutex<usize>,
    met: std::sync::Condvar,
}

impl swex_plugin_host::RawServices for Rendezvous {
    fn call(
        &self,
        service: swex_plugin::ServiceId,
        _args: &[u8],
    ) -> Result<Vec<u8>, swex_plugin::ServiceError> {
        let alone = |message: &str| {
            swex_plugin::ServiceError::new(
                service,
                swex_plugin::ServiceErrorKind::Unavailable,
                message,
            )
        };
        if service != swex_plugin::ServiceId::LexicalSearch {
            return Err(alone("only lexical_search here"));
        }
        let mut waiting = self.waiting.lock().unwrap();
        *waiting += 1;
        self.met.notify_all();
        let (waiting, _) = self
            .met
            .wait_timeout_while(waiting, Duration::from_secs(60), |w| *w < 2)
            .unwrap();
        if *waiting >= 2 {
            Ok(br#"{"hits": []}"#.to_vec())
        } else {
            Err(alone("no second call came"))
        }
    }
}

/// One isolated explorer serves calls from two threads at once, each in a worker of its own (a
/// worker serves one call at a time, so the explorer keeps a pool of them).
#[test]
fn an_isolated_explorer_serves_concurrent_calls_in_workers_of_their_own() {
    let options = IsolatedOptions {
        timeout: Duration::from_secs(120),
        forward_stderr: false,
    };
    let target = PluginTarget::Library(rust_plugin().to_owned());
    let explorer =
        IsolatedExplorer::start(worker(&target), serde_json::Value::Null, options).unwrap();
    let services = Rendezvous::default();
    let whys: Vec<String> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| explorer.explore(&request("search"), &services)))
            .collect();
        calls
            .into_iter()
            .map(|call| {
                let answer = call.join().unwrap().unwrap();
                answer.regions[0].why.clone().unwrap_or_default()
            })
            .collect()
    });
    assert_eq!(whys, ["lexical_search: 0 hits", "lexical_search: 0 hits"]);
}

#[test]
fn isolated_mode_reports_unloadable_plugins_and_bad_configs() {
    let options = IsolatedOptions {
        timeout: Duration::from_secs(30),
        forward_stderr: false,
    };
    let wrong = c_plugin(
        "echo.c",
        "c_wrong_abi_isolated",
        &["-DFIXTURE_ABI_VERSION=7"],
    );
    let error = IsolatedExplorer::start(
        worker(&PluginTarget::Library(wrong)),
        serde_json::Value::Null,
        options.clone(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("ABI version 7") && error.contains("ABI version 1"),
        "{error}"
    );
    let error = IsolatedExplorer::start(
        worker(&PluginTarget::Library(rust_plugin().to_owned())),
        serde_json::json!({"mode": "bad-config"}),
        options,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("bad-config is refused"), "{error}");
}

/// What `ExplorerHandle::explore_validated` does, for an isolated explorer we keep using.
fn explore_isolated(
    explorer: &IsolatedExplorer,
    request: &Request,
    backend: &FsBackend,
) -> Result<swex_plugin_host::ValidatedResponse, HostError> {
    let response = explorer.explore(request, backend)?;
    Ok(swex_plugin_host::validate(
        response,
        request.top_k,
        &|path| swex_plugin_host::RawServices::contains_file(backend, path),
    ))
}

fn swex(args: &[&str]) -> std::process::Output {
    // `swex explore` indexes the checkout by default: keep those indexes out of the user's cache.
    let cache =
        std::env::temp_dir().join(format!("swex-plugins-test-cache-{}", std::process::id()));
    Command::new(env!("CARGO_BIN_EXE_swex"))
        .args(args)
        .env_remove("SWEX_PLUGIN_PATH")
        .env("SWEX_CACHE_DIR", cache)
        .output()
        .unwrap()
}

#[test]
fn cli_lists_and_runs_plugins() {
    let library = rust_plugin().to_str().unwrap();
    let listing = swex(&["explorers", "--plugin", library, "--json"]);
    assert!(
        listing.status.success(),
        "{}",
        String::from_utf8_lossy(&listing.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&listing.stdout).unwrap();
    let row = rows
        .iter()
        .find(|r| r["name"] == "fixture-rust")
        .expect("listed");
    assert_eq!(
        (row["kind"].as_str(), row["abi_version"].as_u64()),
        (Some("dynamic"), Some(1))
    );
    assert_eq!(row["library"].as_str(), Some(library));
    for builtin in [
        "bm25-ref",
        "tfidf-ref",
        "simple_rule",
        "random",
        "oracle",
        "command",
    ] {
        assert!(
            rows.iter()
                .any(|r| r["name"] == builtin && r["kind"] == "builtin"),
            "{builtin}"
        );
    }

    let snapshot = snapshot();
    let repo = snapshot.path().to_str().unwrap();
    for isolated in [false, true] {
        let mut args = vec![
            "explore",
            "--plugin",
            library,
            "--repo",
            repo,
            "--json",
            "the issue",
        ];
        if isolated {
            args.push("--isolated");
        }
        let output = swex(&args);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(answer["explorer"], "fixture-rust");
        assert_eq!(answer["regions"][0]["path"], "a.py");
        assert_eq!(answer["dropped"]["nonexistent_file"], 2);
    }

    let crash = swex(&[
        "explore",
        "--plugin",
        library,
        "--repo",
        repo,
        "--isolated",
        "--config",
        r#"{"mode":"segfault"}"#,
        "x",
    ]);
    assert_eq!(crash.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&crash.stderr);
    assert!(stderr.contains("SIGSEGV"), "{stderr}");
}

#[test]
fn cli_runs_builtin_explorers_on_a_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    };
    write("pkg/__init__.py", "");
    write(
        "pkg/urls.py",
        "def parse_url(url):\n    return url.split('/')\n",
    );
    write("pkg/db.py", "def connect():\n    return None\n");
    write("setup.py", "from setuptools import setup\n");
    let repo = dir.path().to_str().unwrap();
    let run = |explorer: &str| {
        let output = swex(&[
            "explore",
            "-e",
            explorer,
            "--repo",
            repo,
            "--json",
            "url.split('/') crashes on empty url",
        ]);
        assert!(
            output.status.success(),
            "{explorer}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        answer["regions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["path"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    // The reference BM25 splits on whitespace only: `url.split('/')` is the token that matches.
    // `pkg/__init__.py` is empty: no window, so BM25 and TF-IDF never return it.
    assert_eq!(run("bm25-ref")[0], "pkg/urls.py");
    assert_eq!(run("tfidf-ref"), ["pkg/urls.py"]);
    assert_eq!(
        run("simple_rule"),
        ["pkg/__init__.py", "setup.py", "pkg/db.py", "pkg/urls.py"]
    );
    let oracle = swex(&["explore", "-e", "oracle", "--repo", repo, "x"]);
    assert!(String::from_utf8_lossy(&oracle.stderr).contains("needs the ground truth"));

    // Without --explorer: the default explorer `swex`, served from the engine's index.
    let output = swex(&[
        "explore",
        "--repo",
        repo,
        "--json",
        "parse_url crashes on an empty url",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["explorer"], "swex");
    assert_eq!(answer["regions"][0]["path"], "pkg/urls.py", "{answer}");
    // With --no-index it says what it needs.
    let output = swex(&["explore", "--no-index", "--repo", repo, "parse_url"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("index"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // An empty issue is an error, not an empty answer.
    let output = swex(&["explore", "--repo", repo, "  \n"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("issue text is empty"));
}

/// Every built-in explorer has a loadable library (its `explorers/*/plugin` crate) built in the
/// workspace's own target dir, with no feature to switch: the same build that links all
/// built-ins into `swex` (this test's `swex` binary) yields libraries that export the plugin
/// entry symbol and load as the same explorers.
#[test]
fn builtin_explorers_link_into_swex_and_load_from_the_workspace_target_dir() {
    let metadata = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
        .args([
            "metadata",
            "--offline",
            "--no-deps",
            "--format-version",
            "1",
        ])
        .current_dir(repo_root())
        .output()
        .expect("cargo metadata runs");
    assert!(metadata.status.success());
    let metadata: serde_json::Value = serde_json::from_slice(&metadata.stdout).unwrap();
    let wrappers: Vec<String> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .filter(|name| name.starts_with("swex-explorer-") && name.ends_with("-plugin"))
        .map(str::to_owned)
        .collect();
    assert!(wrappers.len() >= 7, "{wrappers:?}");

    // The swex binary under test and its profile dir (target/debug or target/release).
    let swex_exe = PathBuf::from(env!("CARGO_BIN_EXE_swex"));
    let profile_dir = swex_exe.parent().unwrap().to_owned();
    let target_dir = profile_dir.parent().unwrap();
    let mut args = vec!["--target-dir", target_dir.to_str().unwrap()];
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        args.push("--release");
    }
    for wrapper in &wrappers {
        args.extend(["-p", wrapper.as_str()]);
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args(["build", "--offline", "--quiet"])
        .args(&args)
        .current_dir(repo_root())
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo build {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let listing = swex(&["explorers", "--json"]);
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&listing.stdout).unwrap();
    for wrapper in &wrappers {
        let stem = wrapper.replace('-', "_");
        let library = profile_dir.join(library_name(&stem));
        let plugin =
            ExplorerPlugin::load(&library).unwrap_or_else(|e| panic!("{}: {e}", library.display()));
        assert!(
            rows.iter()
                .any(|r| r["name"] == plugin.name() && r["kind"] == "builtin"),
            "{} is not a built-in of swex",
            plugin.name()
        );
    }
    // A loaded library runs like the built-in.
    let library = profile_dir.join(library_name("swex_explorer_simple_rule_plugin"));
    let plugin = ExplorerPlugin::load(&library).unwrap();
    assert_eq!(plugin.name(), "simple_rule");
    let snapshot = snapshot();
    let backend = FsBackend::new(snapshot.path());
    let instance = plugin.instantiate(&serde_json::Value::Null).unwrap();
    let answer = instance
        .explore(&Request::new("x", "y", 5), &backend)
        .unwrap();
    let paths: Vec<&str> = answer.regions.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["a.py", "b/c.py"]);
}

#[test]
fn service_errors_reach_the_plugin_with_their_kind() {
    // The filesystem backend has no lexical index: the plugin sees `Unavailable`, through the C
    // table in process and through the proxy in isolated mode.
    let snapshot = snapshot();
    let backend = FsBackend::new(snapshot.path());
    let plugin = ExplorerPlugin::load(rust_plugin()).unwrap();
    let in_process = plugin.instantiate(&serde_json::Value::Null).unwrap();
    let answer = in_process.explore(&request("search"), &backend).unwrap();
    assert_eq!(
        answer.regions[0].why.as_deref(),
        Some("lexical_search: Unavailable")
    );

    let options = IsolatedOptions {
        timeout: Duration::from_secs(30),
        forward_stderr: false,
    };
    let target = PluginTarget::Library(rust_plugin().to_owned());
    let isolated =
        IsolatedExplorer::start(worker(&target), serde_json::Value::Null, options).unwrap();
    let answer = isolated.explore(&request("search"), &backend).unwrap();
    assert_eq!(
        answer.regions[0].why.as_deref(),
        Some("lexical_search: Unavailable")
    );
}

/// The template copied out of the repository and pointed at this checkout, as
/// docs/writing-an-explorer.md tells people to do, builds, passes its own tests (which run it on
/// an in-memory snapshot, without the engine) and loads as a plugin.
#[test]
fn the_explorer_template_builds_out_of_the_repository_and_finds_definitions() {
    let template = repo_root().join("examples/explorer-template");
    let copy = tempfile::tempdir().unwrap();
    for name in ["Cargo.toml", "Cargo.lock", "src/lib.rs"] {
        let to = copy.path().join(name);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(template.join(name), to).unwrap();
    }
    let manifest = copy.path().join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let plugins = repo_root().join("plugins");
    let pointed = text.replace("\"../../plugins/", &format!("\"{}/", plugins.display()));
    assert_ne!(
        pointed, text,
        "the template's manifest names the SDK by a relative path"
    );
    std::fs::write(&manifest, pointed).unwrap();
    let lock = std::fs::read_to_string(copy.path().join("Cargo.lock")).unwrap();
    assert!(
        !lock.contains("name = \"swex-engine\"") && !lock.contains("name = \"tantivy\""),
        "a plugin and its tests must not need the engine"
    );
    let manifest = manifest.to_str().unwrap();
    cargo_build(&["--manifest-path", manifest]);
    cargo(&["test", "--offline", "--quiet", "--manifest-path", manifest]);
    let library = fixture_target()
        .join("debug")
        .join(library_name("my_explorer"));
    let plugin = ExplorerPlugin::load(&library).unwrap();
    assert_eq!(plugin.name(), "definitions-grep");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("urls.py"),
        "import re\n\n\ndef parse_url(url):\n    return url\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("other.py"), "parse_url('x')\n").unwrap();
    let backend = FsBackend::new(dir.path());
    let instance = plugin.instantiate(&serde_json::Value::Null).unwrap();
    let request = Request::new("t", "parse_url() drops the port", 5);
    let answer = ExplorerHandle::InProcess(instance)
        .explore_validated(&request, &backend)
        .unwrap();
    let regions: Vec<(&str, i64, i64)> = answer
        .regions
        .iter()
        .map(|r| (r.path.as_str(), r.start, r.end))
        .collect();
    assert_eq!(regions, [("urls.py", 1, 24)]);
    assert_eq!(answer.regions[0].why.as_deref(), Some("defines parse_url"));
}

#[test]
fn cli_runs_the_engine_backed_bm25_explorer() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("pkg")).unwrap();
    std::fs::write(
        dir.path().join("pkg/urls.py"),
        "def parse_url(url):\n    return url.split('/')\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("pkg/db.py"),
        "def connect():\n    return None\n",
    )
    .unwrap();
    let repo = dir.path().to_str().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let output = swex(&[
        "explore",
        "-e",
        "bm25",
        "--index",
        "-q",
        "--cache-dir",
        cache_dir,
        "--repo",
        repo,
        "--json",
        "parse_url breaks",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["regions"][0]["path"], "pkg/urls.py");
    // Without the index the explorer says what it needs.
    let output = swex(&[
        "explore",
        "-e",
        "bm25",
        "--no-index",
        "--repo",
        repo,
        "parse_url breaks",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("--index"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn command_explorer_runs_a_command_and_reads_its_answer() {
    let snapshot = snapshot();
    let repo = snapshot.path().to_str().unwrap();
    // A stand-in for a coding agent: reads the prompt on stdin, answers a RELEVANT_FILES block.
    let config = r#"{"command": "cat > prompt.seen; printf 'Looking...\nRELEVANT_FILES:\n- a.py:2-3\n- b/c.py\n- nowhere.py:1\n'", "cwd": "{repo}"}"#;
    let output = swex(&[
        "explore", "-e", "command", "--config", config, "--repo", repo, "--json", "fix f()",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let regions: Vec<(String, i64, i64)> = answer["regions"]
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
    assert_eq!(
        regions,
        [("a.py".to_owned(), 2, 3), ("b/c.py".to_owned(), 1, -1)]
    );
    assert_eq!(answer["dropped"]["nonexistent_file"], 1);
    let prompt = std::fs::read_to_string(snapshot.path().join("prompt.seen")).unwrap();
    assert!(
        prompt.contains("fix f()") && prompt.contains("RELEVANT_FILES:"),
        "{prompt}"
    );

    // A command that outlives its time limit is killed, and the instance fails with the reason.
    let config = r#"{"command": ["sleep", "30"], "timeout_secs": 0.5}"#;
    let output = swex(&[
        "explore", "-e", "command", "--config", config, "--repo", repo, "x",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("did not finish within 0.5 s; it was killed"),
        "{stderr}"
    );
}

/// `--plugin libsame.so` names the file in the current folder, not a library of that name in the
/// loader's search path (here the Rust fixture, on LD_LIBRARY_PATH: loading it would run code the
/// user did not name); a failed load says the loader's reason, not only "dlopen failed"; an
/// explicit folder without plugins is an error, not a run with no plugin.
#[test]
fn plugin_paths_mean_files_and_failures_say_why() {
    let tmp = tempfile::tempdir().unwrap();
    let (search, here, empty) = (
        tmp.path().join("search"),
        tmp.path().join("here"),
        tmp.path().join("empty"),
    );
    for dir in [&search, &here, &empty] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let name = library_name("same");
    std::fs::copy(rust_plugin(), search.join(&name)).unwrap();
    std::fs::copy(c_plugin("echo.c", "c_echo_same", &[]), here.join(&name)).unwrap();
    std::fs::write(here.join(library_name("bogus")), "not a library\n").unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_swex"))
            .args(args)
            .current_dir(&here)
            .env_remove("SWEX_PLUGIN_PATH")
            .env("LD_LIBRARY_PATH", &search)
            .env("DYLD_LIBRARY_PATH", &search)
            .output()
            .unwrap()
    };

    let listing = run(&["explorers", "--plugin", &name, "--json"]);
    assert!(
        listing.status.success(),
        "{}",
        String::from_utf8_lossy(&listing.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&listing.stdout).unwrap();
    let dynamic: Vec<&str> = rows
        .iter()
        .filter(|r| r["kind"] == "dynamic")
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(dynamic, ["c-echo"]);

    let bogus = run(&["explorers", "--plugin", &library_name("bogus")]);
    let stderr = String::from_utf8_lossy(&bogus.stderr);
    assert_eq!(bogus.status.code(), Some(2));
    let reason = stderr.split("dlopen failed").nth(1).unwrap_or_default();
    assert!(
        reason.starts_with(": ") && reason.trim().len() > 2,
        "{stderr}"
    );

    let folder = run(&["explorers", "--plugin", empty.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&folder.stderr);
    assert_eq!(folder.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no explorers (*.so, *.dylib, *.dll libraries, *.py files"),
        "{stderr}"
    );
}
