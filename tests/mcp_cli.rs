//! `swex mcp` spoken to over raw pipes: stdout carries only protocol messages (also when the
//! input is garbage), malformed requests get JSON-RPC errors and the session goes on, and a
//! client that goes away mid-call (its pipes close, as when it is killed) leaves the server to
//! stop its work and exit cleanly. The official Python client drives it in tests/mcp_client.rs.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn swex() -> &'static str {
    env!("CARGO_BIN_EXE_swex")
}

fn write(root: &Path, path: &str, text: &str) {
    let abs = root.join(path);
    std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
    std::fs::write(abs, text).unwrap();
}

fn small_repo(root: &Path) {
    write(
        root,
        "app/models.py",
        "class QuerySet:\n    def bulk_create(self, objs, batch_size=None):\n        return objs\n",
    );
    write(
        root,
        "app/views.py",
        "from app.models import QuerySet\n\n\ndef render(request):\n    return QuerySet().bulk_create([request])\n",
    );
}

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Server {
    fn start(args: &[&str], cache: &Path) -> Server {
        let mut child = Command::new(swex())
            .arg("mcp")
            .args(args)
            .arg("--cache-dir")
            .arg(cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout: ChildStdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            stdin,
            lines,
        }
    }

    fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string());
    }

    /// The next stdout line, which must be one JSON-RPC message.
    fn receive(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("a message from the server");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    }

    /// The response to request `id`, skipping notifications.
    fn response(&self, id: i64) -> Value {
        loop {
            let message = self.receive();
            if message["id"] == json!(id) {
                return message;
            }
            assert!(message.get("id").is_none(), "unexpected response {message}");
        }
    }

    fn initialize(&mut self) {
        self.send(json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"}
            }
        }));
        let response = self.response(1);
        assert_eq!(
            response["result"]["serverInfo"]["name"], "swex",
            "{response}"
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Closes the pipes and waits for the exit; returns (success, stderr).
    fn wait_exit(mut self, within: Duration) -> (bool, String) {
        drop(self.stdin.take());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                let mut stderr = String::new();
                self.child
                    .stderr
                    .take()
                    .unwrap()
                    .read_to_string(&mut stderr)
                    .unwrap();
                return (status.success(), stderr);
            }
            if started.elapsed() > within {
                let _ = self.child.kill();
                panic!("the server did not exit within {within:?} of its client going away");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn call(id: i64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

#[test]
fn malformed_input_gets_errors_and_stdout_stays_protocol_only() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    small_repo(repo.path());
    let mut server = Server::start(&[repo.path().to_str().unwrap()], cache.path());
    // Garbage before the handshake is ignored (no id to answer).
    server.send_raw("this is not json");
    server.initialize();
    server.send_raw("{\"truncated\": ");
    // Well-formed JSON of the wrong shape: an Invalid Request error.
    server.send(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "oops"}));
    let response = server.receive();
    assert!(response.get("error").is_some(), "{response}");
    // An unknown method and an unknown tool: JSON-RPC errors with a clear message.
    server.send(json!({"jsonrpc": "2.0", "id": 8, "method": "tools/frobnicate"}));
    assert!(server.response(8).get("error").is_some());
    server.send(call(9, "frobnicate", json!({})));
    let response = server.response(9);
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("unknown tool `frobnicate`") && message.contains("explore"),
        "{response}"
    );
    // A tool error, then a good call: the session is alive throughout.
    server.send(call(10, "read", json!({"path": "../../etc/passwd"})));
    let response = server.response(10);
    assert_eq!(response["result"]["isError"], true, "{response}");
    server.send(call(11, "definition", json!({"name": "bulk_create"})));
    let response = server.response(11);
    assert_eq!(
        response["result"]["structuredContent"]["total"], 1,
        "{response}"
    );
    let (ok, stderr) = server.wait_exit(Duration::from_secs(20));
    assert!(ok, "exit status; stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_client_that_goes_away_mid_call_leaves_the_server_to_exit_cleanly() {
    // A repository big enough that the first call (which builds its index) is still running
    // when the client disappears.
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    for i in 0..1500 {
        let body: String = (0..30)
            .map(|j| format!("def function_{i}_{j}(value):\n    return value + {j}\n\n"))
            .collect();
        write(repo.path(), &format!("pkg{}/module_{i}.py", i % 20), &body);
    }
    let mut server = Server::start(&["--lazy", repo.path().to_str().unwrap()], cache.path());
    server.initialize();
    server.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "search", "arguments": {"query": "function_7_3"},
            "_meta": {"progressToken": "build"}
        }}),
    );
    // Mid-call for sure: the index build has reported that it is analysing files.
    loop {
        let message = server.receive();
        assert!(
            message.get("id").is_none(),
            "the call ended before the client left: {message}"
        );
        if message["method"] == "notifications/progress" {
            assert_eq!(message["params"]["progressToken"], "build", "{message}");
            let text = message["params"]["message"].as_str().unwrap_or_default();
            if text.contains("analyze") {
                break;
            }
        }
    }
    let started = Instant::now();
    let (ok, stderr) = server.wait_exit(Duration::from_secs(30));
    assert!(ok, "exit status; stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The index build in flight was stopped, not waited for.
    assert!(stderr.contains("search: cancelled"), "{stderr}");
    eprintln!("exited {:?} after the client went away", started.elapsed());
}
