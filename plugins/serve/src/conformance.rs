//! The services contract, tested once for every backend: a fixture snapshot ([`fixture`]) and,
//! in `conformance.json` next to this crate's manifest, every service call with the answer
//! expected from a backend — or the kind of error. [`check`] runs them all against a backend and
//! returns the differences; the filesystem, engine and in-memory backends each run it in their
//! tests, so they cannot drift apart again.
//!
//! What a backend serves decides part of the answers ([`Kind`]): a backend of files only answers
//! the index services `Unavailable` and lists every file; the engine's backend answers them and
//! lists the files it indexed (binary files are left out). Everything else — file lists, lines,
//! grep (its glob syntax, its cut of long lines, `under` with glob characters in a directory
//! name), errors — is one expectation for all.
//!
//! Comparison rules: results must equal the expected JSON, except that file entries are compared on
//! `language` and `line_count` only where both sides have them (a backend that does not know them
//! without reading the file leaves them out of `list_files`; `file_info` always has the count), and
//! that search and PageRank scores are not compared (their scale is the backend's); errors are
//! compared by kind, not message.
//!
//! To record the answers of a backend after an intended change, run its conformance test with
//! `SWEX_UPDATE_CONFORMANCE=1`: [`check`] then rewrites the file with what it got (review the
//! diff). The in-memory backend records the file services, the engine backend the index services.

use crate::services::RawServices;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use swex_plugin::{ServiceErrorKind, ServiceId};

/// The fixture snapshot, `(path, bytes)`: lines of every kind of Python separator, invalid
/// UTF-8, a binary file, a line longer than grep keeps, an empty file, a non-ASCII name and a
/// directory whose name holds glob characters (next to one that the glob would match).
pub fn fixture() -> Vec<(String, Vec<u8>)> {
    let files: [(&str, Vec<u8>); 11] = [
        (
            "README.md",
            b"# Fixture\n\nThe services conformance suite reads this snapshot.\nmain is in src/app.py.\n"
                .to_vec(),
        ),
        (
            "src/app.py",
            b"import os\n\n\ndef main():\n    \"\"\"Entry point.\"\"\"\n    return run(os.environ)\n\n\ndef run(env):\n    return len(env)\n"
                .to_vec(),
        ),
        (
            "src/util.py",
            b"from src.app import run\n\n\nclass Helper:\n    def call(self):\n        return run({})\n"
                .to_vec(),
        ),
        ("src/lines.txt", b"one\r\ntwo\rthree\x0cfour\xc2\x85five\n".to_vec()),
        ("src/latin1.txt", b"caf\xe9 cr\xe8me\nmain course\n".to_vec()),
        ("data/blob.bin", b"\x00\x01\x02 main \x00\n".to_vec()),
        ("a[1]/x.py", b"x = 1  # main under a[1]\n".to_vec()),
        ("a1/y.py", b"y = 2  # main under a1\n".to_vec()),
        ("docs/\u{fc}ber.md", "# \u{dc}ber main\n".as_bytes().to_vec()),
        ("empty.txt", Vec::new()),
        (
            "long/line.js",
            format!("var main = \"{}\";\n", "x".repeat(600)).into_bytes(),
        ),
    ];
    files
        .into_iter()
        .map(|(path, bytes)| (path.to_owned(), bytes))
        .collect()
}

/// What a backend serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Files only (the filesystem and in-memory backends).
    Files,
    /// The engine's index of the files too.
    Index,
}

/// The expected answer of one call: a result or an error kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    /// The call succeeds with this JSON result (compared by the suite's rules: file entries'
    /// `language` and `line_count` only where both sides have them, scores never).
    Result(Value),
    /// The call fails with this kind of error (the message is not compared).
    Error(ServiceErrorKind),
    /// Not compared (answers that depend on installed models).
    Any,
}

/// One service call of the suite. `expect` holds one answer for every kind of backend, or one per
/// kind (`files`, `index`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    /// What the call checks.
    pub about: String,
    /// The service called.
    pub service: ServiceId,
    /// The call's JSON arguments, passed to the service as they are.
    pub args: Value,
    /// The answer expected from every kind of backend, unless `files` or `index` gives one of its
    /// own. `None`: only the per-kind answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
    /// The answer expected from backends of files only ([`Kind::Files`]: filesystem and
    /// in-memory); overrides `expect`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<Expect>,
    /// The answer expected from the engine's backend ([`Kind::Index`]); overrides `expect`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<Expect>,
}

impl Case {
    fn expected(&self, kind: Kind) -> Option<&Expect> {
        let specific = match kind {
            Kind::Files => self.files.as_ref(),
            Kind::Index => self.index.as_ref(),
        };
        specific.or(self.expect.as_ref())
    }

    /// The slot [`Case::expected`] reads for `kind` (the kind's own when the case has one, else
    /// the shared one when the case has one, else the kind's own).
    fn expected_mut(&mut self, kind: Kind) -> &mut Option<Expect> {
        let has_specific = match kind {
            Kind::Files => self.files.is_some(),
            Kind::Index => self.index.is_some(),
        };
        if !has_specific && self.expect.is_some() {
            return &mut self.expect;
        }
        match kind {
            Kind::Files => &mut self.files,
            Kind::Index => &mut self.index,
        }
    }
}

/// A call whose answer differs from the expected one.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// What the call checks (the case's `about`).
    pub about: String,
    /// The service called.
    pub service: ServiceId,
    /// The call's JSON arguments.
    pub args: Value,
    /// The expected answer, as text: the JSON result, `error <Kind>`, or a note that nothing is
    /// recorded for this kind of backend.
    pub expected: String,
    /// The backend's answer, as text: the JSON result or `error <Kind>`.
    pub got: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({} {}):\n  expected {}\n  got      {}",
            self.about, self.service, self.args, self.expected, self.got
        )
    }
}

/// The suite's cases, from `conformance.json`.
pub fn cases() -> Vec<Case> {
    serde_json::from_str(include_str!("../conformance.json"))
        .expect("conformance.json is a list of cases")
}

/// The path of `conformance.json` in the source tree (for recording).
pub fn cases_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance.json")
}

/// Runs every case against `services` and returns the mismatches (empty: the backend conforms).
/// With `SWEX_UPDATE_CONFORMANCE=1` in the environment, first records what `services` answers
/// as the expectation for `kind` in the source tree's `conformance.json` — for the cases `record`
/// lets through — and compares against that.
pub fn check(
    services: &dyn RawServices,
    kind: Kind,
    record: &dyn Fn(&Case) -> bool,
) -> Vec<Mismatch> {
    let mut all = cases();
    if std::env::var_os("SWEX_UPDATE_CONFORMANCE").is_some_and(|v| v == "1") {
        for case in all.iter_mut().filter(|c| record(c)) {
            let got = answer(services, case);
            if case.expected(kind) != Some(&Expect::Any) {
                *case.expected_mut(kind) = Some(got);
            }
        }
        let json = serde_json::to_string_pretty(&all).expect("cases serialize");
        std::fs::write(cases_path(), json + "\n").expect("conformance.json is writable");
    }
    let mut mismatches = Vec::new();
    for case in &all {
        let Some(expected) = case.expected(kind) else {
            mismatches.push(Mismatch {
                about: case.about.clone(),
                service: case.service,
                args: case.args.clone(),
                expected: format!("(nothing recorded for {kind:?} backends)"),
                got: format!("{:?}", answer(services, case)),
            });
            continue;
        };
        let got = answer(services, case);
        if !agrees(expected, &got) {
            mismatches.push(Mismatch {
                about: case.about.clone(),
                service: case.service,
                args: case.args.clone(),
                expected: describe(expected),
                got: describe(&got),
            });
        }
    }
    mismatches
}

fn answer(services: &dyn RawServices, case: &Case) -> Expect {
    let args = serde_json::to_vec(&case.args).expect("JSON serializes");
    match services.call(case.service, &args) {
        Ok(bytes) => match serde_json::from_slice(&bytes) {
            Ok(value) => Expect::Result(value),
            Err(_) => Expect::Error(ServiceErrorKind::Failed),
        },
        Err(error) => Expect::Error(error.kind),
    }
}

fn describe(expect: &Expect) -> String {
    match expect {
        Expect::Result(value) => value.to_string(),
        Expect::Error(kind) => format!("error {kind:?}"),
        Expect::Any => "anything".to_owned(),
    }
}

fn agrees(expected: &Expect, got: &Expect) -> bool {
    match (expected, got) {
        (Expect::Any, _) => true,
        (Expect::Error(a), Expect::Error(b)) => a == b,
        (Expect::Result(a), Expect::Result(b)) => same_json(a, b, ""),
        _ => false,
    }
}

/// Keys a file entry may leave out, and keys whose values are never compared.
const OPTIONAL_KEYS: &[&str] = &["language", "line_count"];
const UNCOMPARED_KEYS: &[&str] = &["score"];

fn same_json(expected: &Value, got: &Value, key: &str) -> bool {
    if UNCOMPARED_KEYS.contains(&key) {
        return true;
    }
    match (expected, got) {
        (Value::Object(a), Value::Object(b)) => {
            let optional = |k: &String| OPTIONAL_KEYS.contains(&k.as_str());
            b.keys().all(|k| a.contains_key(k) || optional(k))
                && a.iter().all(|(k, v)| match b.get(k) {
                    Some(w) => same_json(v, w, k),
                    None => optional(k),
                })
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(v, w)| same_json(v, w, ""))
        }
        _ => expected == got,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn optional_and_uncompared_keys() {
        let expected =
            json!({"files": [{"path": "a", "size": 1, "line_count": 2, "language": "python"}]});
        assert!(same_json(
            &expected,
            &json!({"files": [{"path": "a", "size": 1}]}),
            ""
        ));
        assert!(!same_json(
            &expected,
            &json!({"files": [{"path": "a", "size": 1, "line_count": 3}]}),
            ""
        ));
        assert!(!same_json(
            &expected,
            &json!({"files": [{"path": "a"}]}),
            ""
        ));
        assert!(!same_json(
            &expected,
            &json!({"files": [{"path": "a", "size": 1, "extra": true}]}),
            ""
        ));
        assert!(same_json(
            &json!({"files": [{"path": "a", "size": 1}]}),
            &json!({"files": [{"path": "a", "size": 1, "line_count": 3}]}),
            ""
        ));
        assert!(same_json(
            &json!({"hits": [{"path": "a", "score": 1.5}]}),
            &json!({"hits": [{"path": "a", "score": 0.2}]}),
            ""
        ));
    }
}
