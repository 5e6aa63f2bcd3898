//! The cost of the plugin boundary: the same explorer and the same service called directly in
//! Rust and through the C ABI (JSON both ways), and — when a worker binary is given in
//! `SWEX_WORKER` (e.g. `target/release/swex`) — through isolated mode's child process.
//!
//! Run: `cargo bench -p swex-plugin-host --bench boundary`
//! (with `SWEX_WORKER=target/release/swex` for the isolated case; build it first with
//! `cargo build --release -p swex`). Numbers are recorded in docs/writing-an-explorer.md.

use criterion::{Criterion, criterion_group, criterion_main};
use std::ffi::CStr;
use std::hint::black_box;
use std::time::Duration;
use swex_plugin::types::{ReadLinesArgs, ReadLinesResult};
use swex_plugin::{
    Explorer, ExplorerError, Region, Request, Response, ServiceError, ServiceErrorKind, ServiceId,
    Services,
};
use swex_plugin_host::{ExplorerPlugin, RawServices, ServiceBackend};

/// Answers `top_k` regions, reading 80 lines of one file through the services: a typical small
/// explorer call (one service round trip, a handful of regions).
struct Probe;

impl Probe {
    fn answer(request: &Request, lines: &ReadLinesResult) -> Response {
        let regions = (0..request.top_k)
            .map(|i| {
                Region::new(
                    format!("pkg/module_{i}.py"),
                    1 + 80 * i as i64,
                    80 * (i as i64 + 1),
                )
                .with_score(1.0 / (i + 1) as f64)
                .with_why(format!("{} lines read", lines.lines.len()))
            })
            .collect();
        Response::new(regions)
    }
}

impl Explorer for Probe {
    const NAME: &'static CStr = c"probe";
    const DESCRIPTION: &'static CStr = c"benchmark explorer";

    fn create(_config: &serde_json::Value) -> Result<Self, ExplorerError> {
        Ok(Probe)
    }

    fn explore(
        &self,
        request: &Request,
        services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        let lines = services.read_lines("pkg/module_0.py", Some(1), Some(80))?;
        Ok(Probe::answer(request, &lines))
    }
}

swex_plugin::export_explorer!(Probe);

/// A snapshot of one 400-line file, in memory, so that the benchmark measures the boundary and
/// not the disk.
struct Memory {
    lines: Vec<String>,
}

impl Memory {
    fn new() -> Memory {
        let lines = (1..=400)
            .map(|i| format!("    value_{i} = compute(value_{}, {i})  # line {i}", i - 1))
            .collect();
        Memory { lines }
    }
}

impl ServiceBackend for Memory {
    fn backend_name(&self) -> &str {
        "memory"
    }
    fn contains_file(&self, path: &str) -> bool {
        path == "pkg/module_0.py"
    }
    fn read_lines(&self, args: ReadLinesArgs) -> Result<ReadLinesResult, ServiceError> {
        if !ServiceBackend::contains_file(self, &args.path) {
            return Err(ServiceError::new(
                ServiceId::ReadLines,
                ServiceErrorKind::NotFound,
                args.path,
            ));
        }
        let start = args.start.unwrap_or(1).max(1) as usize;
        let end = match args.end {
            None | Some(-1) => self.lines.len(),
            Some(end) => (end.max(0) as usize).min(self.lines.len()),
        };
        let lines = if start <= end {
            self.lines[start - 1..end].to_vec()
        } else {
            Vec::new()
        };
        Ok(ReadLinesResult {
            start: start as u32,
            lines,
            total_lines: self.lines.len() as u32,
        })
    }
}

fn request() -> Request {
    let issue = "QuerySet.only() after select_related() crashes on proxy models. ".repeat(16);
    Request::new("bench__bench-1", issue, 5)
}

fn boundary(c: &mut Criterion) {
    let backend = Memory::new();
    let request = request();
    let plugin = ExplorerPlugin::builtin(swex_explorer_vtable).unwrap();
    let instance = plugin.instantiate(&serde_json::Value::Null).unwrap();

    let mut group = c.benchmark_group("explore");
    group.bench_function("direct_rust_call", |b| {
        b.iter(|| {
            let lines = backend
                .read_lines(ReadLinesArgs::new("pkg/module_0.py").lines(1, 80))
                .unwrap();
            black_box(Probe::answer(black_box(&request), &lines))
        })
    });
    group.bench_function("through_c_abi", |b| {
        b.iter(|| black_box(instance.explore(black_box(&request), &backend).unwrap()))
    });
    if let Some(worker) = std::env::var_os("SWEX_WORKER") {
        // A built-in explorer of the worker binary, so the child needs no plugin of its own.
        let mut command = swex_plugin_host::WorkerCommand {
            program: worker.into(),
            args: vec!["__plugin-worker".into()],
            ..Default::default()
        };
        let options = swex_plugin_host::IsolatedOptions {
            timeout: Duration::from_secs(60),
            forward_stderr: false,
        };
        let mut oracle = request.clone();
        oracle.ground_truth = Some(swex_plugin::GroundTruth {
            read_core_regions: (0..5)
                .map(|i| Region::new(format!("pkg/module_{i}.py"), 1, 80))
                .collect(),
            extra: Default::default(),
        });
        command
            .args
            .extend(swex_plugin_host::PluginTarget::Builtin("oracle".into()).worker_args());
        let isolated =
            swex_plugin_host::IsolatedExplorer::start(command, serde_json::Value::Null, options)
                .unwrap();
        group.bench_function("isolated_process_oracle", |b| {
            b.iter(|| black_box(isolated.explore(black_box(&oracle), &backend).unwrap()))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("service_read_lines_80");
    let args = serde_json::to_vec(&ReadLinesArgs::new("pkg/module_0.py").lines(1, 80)).unwrap();
    group.bench_function("direct_rust_call", |b| {
        b.iter(|| {
            black_box(
                backend
                    .read_lines(ReadLinesArgs::new("pkg/module_0.py").lines(1, 80))
                    .unwrap(),
            )
        })
    });
    group.bench_function("json_dispatch", |b| {
        b.iter(|| {
            black_box(RawServices::call(&backend, ServiceId::ReadLines, black_box(&args)).unwrap())
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = boundary
}
criterion_main!(benches);
