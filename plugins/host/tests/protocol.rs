//! The worker protocol's conformance suite (`plugins/protocol/conformance.json`, format in its
//! `about`) run against both worker implementations: swex's own worker (`run_worker`, with a Rust
//! `conformance` explorer; this test binary is that worker when `SWEX_PROTOCOL_WORKER` is set) and
//! the Python SDK's worker (`plugins/python/tests/conformance_explorer.py`, started exactly as
//! swex starts a Python explorer). No libtest harness: the binary must print nothing on stdout
//! when it is the worker.

use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};
use swex_plugin::{Explorer, ExplorerError, Region, Request, Response, ServiceId, Services};
use swex_plugin_host::{CommandExplorer, PluginTarget, WorkerCommand};

/// The suite's conformance explorer, in Rust (its Python twin is `conformance_explorer.py`).
struct Conformance;

impl Explorer for Conformance {
    const NAME: &'static std::ffi::CStr = c"conformance";
    const DESCRIPTION: &'static std::ffi::CStr = c"the worker protocol's conformance explorer";

    fn create(config: &Value) -> Result<Self, ExplorerError> {
        if config["refuse"] == true {
            return Err(ExplorerError::InvalidConfig("config refused".to_owned()));
        }
        Ok(Conformance)
    }

    fn explore(
        &self,
        request: &Request,
        services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        let config = &request.config;
        if let Some(text) = config["print"].as_str() {
            // The worker has moved stdout aside: this must not reach the protocol.
            println!("{text}");
        }
        let mut notes = Vec::new();
        for call in config["calls"].as_array().into_iter().flatten() {
            let service: ServiceId = serde_json::from_value(call["service"].clone())
                .map_err(|e| ExplorerError::failed(e.to_string()))?;
            let args = serde_json::to_vec(&call["args"]).expect("JSON serializes");
            let outcome = match services.call_raw(service, &args) {
                Ok(_) => "ok".to_owned(),
                Err(error) => serde_json::to_value(error.kind)
                    .expect("a kind serializes")
                    .as_str()
                    .unwrap_or("?")
                    .to_owned(),
            };
            notes.push(format!("{service}: {outcome}"));
        }
        if let Some(message) = config["fail"].as_str() {
            return Err(ExplorerError::failed(message));
        }
        let regions = config["regions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                Region::new(
                    r[0].as_str().unwrap_or(""),
                    r[1].as_i64().unwrap_or(0),
                    r[2].as_i64().unwrap_or(0),
                )
            })
            .collect();
        let mut response = Response::new(regions);
        response.notes = notes;
        Ok(response)
    }
}

swex_plugin::export_vtable!(Conformance);

const WORKER_ENV: &str = "SWEX_PROTOCOL_WORKER";

fn main() {
    if std::env::var_os(WORKER_ENV).is_some() {
        let target = PluginTarget::Builtin("conformance".to_owned());
        std::process::exit(swex_plugin_host::worker::run_worker(
            &target,
            &[swex_explorer_vtable],
        ));
    }
    let suite: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_path("plugins/protocol/conformance.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(suite["protocol"], swex_plugin_host::PROTOCOL_VERSION);

    let mut rust = WorkerCommand::current_exe(&[]).unwrap();
    rust.env.push((WORKER_ENV.into(), "1".into()));
    let mut failures = run_suite("rust worker", &rust, &suite);

    let python = swex_testkit::available(swex_testkit::Needs::Python, swex_testkit::python());
    if python.is_some() {
        let explorer =
            CommandExplorer::from_path(&repo_path("plugins/python/tests/conformance_explorer.py"))
                .unwrap();
        failures += run_suite(
            "python worker",
            &explorer.worker_command("__plugin-worker").unwrap(),
            &suite,
        );
    }
    if failures > 0 {
        eprintln!("{failures} conformance case(s) failed");
        std::process::exit(1);
    }
}

fn repo_path(relative: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative)
}

/// Runs every case against a fresh worker each; returns the number of failed cases.
fn run_suite(label: &str, command: &WorkerCommand, suite: &Value) -> usize {
    let mut failures = 0;
    for case in suite["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        match run_case(command, case) {
            Ok(()) => eprintln!("{label}: {name} ... ok"),
            Err(reason) => {
                eprintln!("{label}: {name} ... FAILED: {reason}");
                failures += 1;
            }
        }
    }
    failures
}

struct Running {
    child: Child,
    lines: Receiver<String>,
}

fn start(command: &WorkerCommand) -> Running {
    let mut process = Command::new(&command.program);
    process
        .args(&command.args)
        .envs(command.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = process.spawn().expect("the worker starts");
    let stdout = child.stdout.take().unwrap();
    let (sender, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    Running { child, lines }
}

const STEP_LIMIT: Duration = Duration::from_secs(30);

fn run_case(command: &WorkerCommand, case: &Value) -> Result<(), String> {
    let mut worker = start(command);
    let mut captured = HashMap::new();
    let outcome = (|| {
        for step in case["steps"].as_array().unwrap() {
            if let Some(message) = step.get("send") {
                let message = substitute(message, &captured);
                let stdin = worker.child.stdin.as_mut().ok_or("stdin already closed")?;
                writeln!(stdin, "{message}").map_err(|e| format!("writing {message}: {e}"))?;
                stdin.flush().map_err(|e| e.to_string())?;
            } else if let Some(expected) = step.get("expect") {
                let line = worker
                    .lines
                    .recv_timeout(STEP_LIMIT)
                    .map_err(|_| format!("no message where {expected} was expected"))?;
                let actual: Value = serde_json::from_str(&line)
                    .map_err(|e| format!("not a JSON line: {line:?} ({e})"))?;
                matches(expected, &actual, &mut captured)
                    .map_err(|why| format!("{why}\n  expected {expected}\n  got      {actual}"))?;
            } else if step.get("close").is_some() {
                drop(worker.child.stdin.take());
            } else if let Some(status) = step.get("exit") {
                drop(worker.child.stdin.take());
                let deadline = Instant::now() + STEP_LIMIT;
                let code = loop {
                    if let Some(status) = worker.child.try_wait().map_err(|e| e.to_string())? {
                        break status.code();
                    }
                    if Instant::now() > deadline {
                        return Err("the worker did not exit".to_owned());
                    }
                    std::thread::sleep(Duration::from_millis(5));
                };
                if code.map(i64::from) != status.as_i64() {
                    return Err(format!("exit status {code:?}, expected {status}"));
                }
                if let Ok(line) = worker.lines.try_recv() {
                    return Err(format!(
                        "an extra message after the last expected one: {line}"
                    ));
                }
            } else {
                return Err(format!("unknown step {step}"));
            }
        }
        Ok(())
    })();
    let _ = worker.child.kill();
    let _ = worker.child.wait();
    outcome
}

/// `{"$ref": NAME}` replaced by the captured value.
fn substitute(value: &Value, captured: &HashMap<String, Value>) -> Value {
    match value {
        Value::Object(map) => {
            if let Some(name) = map.get("$ref").and_then(Value::as_str) {
                return captured.get(name).cloned().unwrap_or(Value::Null);
            }
            Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), substitute(v, captured)))
                    .collect(),
            )
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| substitute(v, captured)).collect())
        }
        other => other.clone(),
    }
}

/// The suite's matching rule (see the suite's `about`).
fn matches(
    expected: &Value,
    actual: &Value,
    captured: &mut HashMap<String, Value>,
) -> Result<(), String> {
    match expected {
        Value::Object(map) => {
            if let Some(name) = map.get("$capture").and_then(Value::as_str) {
                captured.insert(name.to_owned(), actual.clone());
                return Ok(());
            }
            if let Some(needle) = map.get("$contains").and_then(Value::as_str) {
                return match actual.as_str() {
                    Some(text) if text.contains(needle) => Ok(()),
                    _ => Err(format!("{actual} does not contain {needle:?}")),
                };
            }
            let actual_map = actual
                .as_object()
                .ok_or(format!("{actual} is not an object"))?;
            for (key, value) in map {
                let inner = actual_map.get(key).ok_or(format!("no field `{key}`"))?;
                matches(value, inner, captured).map_err(|why| format!("{key}: {why}"))?;
            }
            Ok(())
        }
        Value::Array(items) => {
            let actual_items = actual
                .as_array()
                .ok_or(format!("{actual} is not an array"))?;
            if items.len() != actual_items.len() {
                return Err(format!(
                    "{} elements, expected {}",
                    actual_items.len(),
                    items.len()
                ));
            }
            for (index, (e, a)) in items.iter().zip(actual_items).enumerate() {
                matches(e, a, captured).map_err(|why| format!("[{index}]: {why}"))?;
            }
            Ok(())
        }
        _ if expected == actual => Ok(()),
        // Numbers compare by value (1 and 1.0 are the same JSON number).
        Value::Number(n) if actual.as_f64() == n.as_f64() => Ok(()),
        _ => Err(format!("{actual} is not {expected}")),
    }
}
