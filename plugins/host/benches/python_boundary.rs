//! The cost of the worker boundary for a Python explorer, next to an in-process explorer:
//! starting a Python worker (process, interpreter, SDK import, handshake), one explore call of an
//! explorer that returns a constant, and one `read_lines` service round trip (an explorer that
//! makes 100 calls per request, divided by 100). Each case is measured in several runs; each run
//! prints p50 and p90 of its samples.
//!
//! Run: `cargo bench -p swex-plugin-host --bench python_boundary` (Python 3.9+ as `python3` or
//! `$SWEX_PYTHON`). Numbers are recorded in docs/writing-an-explorer.md ("Measurements").

use std::ffi::CStr;
use std::time::{Duration, Instant};
use swex_plugin::{Explorer, ExplorerError, Region, Request, Response, Services};
use swex_plugin_host::{CommandExplorer, ExplorerPlugin, IsolatedExplorer, IsolatedOptions};
use swex_plugin_serve::MemoryBackend;

const RUNS: usize = 3;

/// The in-process counterpart of the Python constant explorer.
struct Constant;

impl Explorer for Constant {
    const NAME: &'static CStr = c"constant";
    const DESCRIPTION: &'static CStr = c"five constant regions";

    fn create(_config: &serde_json::Value) -> Result<Self, ExplorerError> {
        Ok(Constant)
    }

    fn explore(
        &self,
        _request: &Request,
        _services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        Ok(Response::new(
            (0..5)
                .map(|i| Region::new(format!("pkg/module_{i}.py"), 1, 80))
                .collect(),
        ))
    }
}

swex_plugin::export_vtable!(Constant);

const CONSTANT_PY: &str = "def explore(issue, instance_id):\n    \
    return [('pkg/module_%d.py' % i, 1, 80) for i in range(5)]\n";

const READ_LINES_PY: &str = "def explore(request, services):\n    \
    for _ in range(100):\n        services.read_lines('pkg/module_0.py', 1, 80)\n    \
    return [('pkg/module_0.py', 1, 80)]\n";

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.9))
}

fn report(case: &str, runs: Vec<(Duration, Duration)>) {
    let shown: Vec<String> = runs
        .iter()
        .map(|(p50, p90)| format!("p50 {:>9.1} µs  p90 {:>9.1} µs", us(*p50), us(*p90)))
        .collect();
    println!("{case:<44} {}", shown.join("  |  "));
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let snapshot = MemoryBackend::new((0..5).map(|i| {
        let text: String = (1..=400)
            .map(|n| {
                format!(
                    "    value_{n} = compute(value_{}, {n})  # line {n}\n",
                    n - 1
                )
            })
            .collect();
        (format!("pkg/module_{i}.py"), text)
    }));
    let request = Request::new("bench", "x".repeat(1000), 5);
    let options = IsolatedOptions {
        timeout: Duration::from_secs(60),
        forward_stderr: true,
    };

    let plugin = ExplorerPlugin::builtin(swex_explorer_vtable).unwrap();
    let instance = plugin.instantiate(&serde_json::Value::Null).unwrap();
    report(
        "in-process Rust explorer, constant answer",
        (0..RUNS)
            .map(|_| {
                percentiles(
                    (0..2000)
                        .map(|_| {
                            let start = Instant::now();
                            instance.explore(&request, &snapshot).unwrap();
                            start.elapsed()
                        })
                        .collect(),
                )
            })
            .collect(),
    );

    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        CommandExplorer::from_path(&path).unwrap()
    };
    let constant = write("constant_py.py", CONSTANT_PY);
    let read_lines = write("read_lines_py.py", READ_LINES_PY);
    let start_worker = |explorer: &CommandExplorer| {
        IsolatedExplorer::start(
            explorer.worker_command("__plugin-worker").unwrap(),
            serde_json::Value::Null,
            options.clone(),
        )
        .unwrap()
    };

    report(
        "Python worker start (process + handshake)",
        (0..RUNS)
            .map(|_| {
                percentiles(
                    (0..20)
                        .map(|_| {
                            let start = Instant::now();
                            let worker = start_worker(&constant);
                            let elapsed = start.elapsed();
                            drop(worker);
                            elapsed
                        })
                        .collect(),
                )
            })
            .collect(),
    );

    let worker = start_worker(&constant);
    report(
        "Python explore call, constant answer",
        (0..RUNS)
            .map(|_| {
                percentiles(
                    (0..1000)
                        .map(|_| {
                            let start = Instant::now();
                            worker.explore(&request, &snapshot).unwrap();
                            start.elapsed()
                        })
                        .collect(),
                )
            })
            .collect(),
    );

    let worker = start_worker(&read_lines);
    report(
        "Python read_lines round trip (80 lines)",
        (0..RUNS)
            .map(|_| {
                percentiles(
                    (0..100)
                        .map(|_| {
                            let start = Instant::now();
                            worker.explore(&request, &snapshot).unwrap();
                            start.elapsed() / 100
                        })
                        .collect(),
                )
            })
            .collect(),
    );
}
