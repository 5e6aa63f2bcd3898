//! Command explorers: explorers that are a program speaking the worker protocol
//! (docs/protocol.md) rather than a library — a Python file run by the Python SDK, any
//! executable, or a manifest naming a command. [`CommandExplorer`] says how to start one; the
//! host runs it exactly like an isolated plugin ([`crate::IsolatedExplorer`]).
//!
//! Nothing of a command explorer runs during discovery: its name comes from the file (a Python
//! file's `NAME = "..."` line, else its stem; a manifest's `name`; an executable's stem), so that
//! `swex explorers` and a registry scan never start a process.
//!
//! A Python explorer runs under the Python SDK built into this binary (the files of
//! `plugins/python/swex_explorer`, written once into a cache folder named by their digest and put
//! first on the interpreter's `sys.path`), so that the SDK always speaks this host's protocol
//! version; the interpreter is `$SWEX_PYTHON`, else `python3`.

use crate::error::HostError;
use crate::isolated::WorkerCommand;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use swex_plugin::text::paths::{Extension, file_stem};

/// The environment variable naming the Python interpreter for Python explorers.
pub const PYTHON_ENV: &str = "SWEX_PYTHON";

/// The Python SDK's files, as built into this binary (path under the SDK folder, text).
const PYTHON_SDK: &[(&str, &str)] = &[
    (
        "swex_explorer/__init__.py",
        include_str!("../../python/swex_explorer/__init__.py"),
    ),
    (
        "swex_explorer/_protocol.py",
        include_str!("../../python/swex_explorer/_protocol.py"),
    ),
    (
        "swex_explorer/_worker.py",
        include_str!("../../python/swex_explorer/_worker.py"),
    ),
    (
        "swex_explorer/services.py",
        include_str!("../../python/swex_explorer/services.py"),
    ),
    (
        "swex_explorer/testing.py",
        include_str!("../../python/swex_explorer/testing.py"),
    ),
];

/// What kind of program a command explorer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandKind {
    /// A `.py` file defining `explore`, run by the Python SDK.
    Python,
    /// An executable that speaks the worker protocol itself.
    Executable,
    /// A JSON manifest naming a command (`*.json`).
    Manifest,
}

impl CommandKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CommandKind::Python => "python",
            CommandKind::Executable => "executable",
            CommandKind::Manifest => "manifest",
        }
    }
}

/// A manifest: a command speaking the worker protocol, where to run it and its default config —
/// or a built-in explorer under another name with a default config (`explorer`; e.g. the
/// `command` explorer configured for one agent CLI).
///
/// ```json
/// {"name": "my-explorer", "description": "…", "command": ["./run.sh", "--fast"],
///  "cwd": ".", "env": {"MY_VAR": "1"}, "config": {"k1": 1.2}}
/// {"name": "claude-code", "explorer": "command", "config": {"command": ["claude", "-p", "{prompt}"]}}
/// ```
///
/// Relative paths (a program containing `/`, a `.py` file, `cwd`) are relative to the
/// manifest's folder; a bare program name is looked up on `PATH`. A first word ending in `.py`
/// runs that file under the Python SDK. A built-in named by `explorer` runs in swex's own worker.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub command: Vec<String>,
    /// A built-in explorer to run under this manifest's name and config, instead of `command`.
    #[serde(default)]
    pub explorer: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub config: serde_json::Value,
}

/// An explorer run as a worker process.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandExplorer {
    name: String,
    description: String,
    kind: CommandKind,
    /// The file it was found as (absolute).
    path: PathBuf,
    /// The Python file to run under the SDK, when it is one.
    python_file: Option<PathBuf>,
    /// The built-in explorer a manifest names (run in swex's own worker).
    builtin: Option<String>,
    program: PathBuf,
    args: Vec<OsString>,
    cwd: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
    config: serde_json::Value,
}

/// True for the files a folder scan or `--plugin` takes as command explorers.
pub fn is_command_file(path: &Path) -> bool {
    match path.extension().and_then(|e| e.to_str()) {
        Some("py") | Some("json") => true,
        _ => !crate::registry::is_library(path) && is_executable(path),
    }
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "exe")
}

/// A name from a file: letters, digits, `.`, `_`, `-` (it becomes a folder of result files).
fn check_name(path: &Path, name: &str) -> Result<(), HostError> {
    let plain = !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if plain {
        Ok(())
    } else {
        Err(HostError::BadCommand {
            path: path.to_owned(),
            message: format!(
                "its explorer name {name:?} is not a plain name (letters, digits, `.`, `_`, `-`)"
            ),
        })
    }
}

/// The file's name without its last extension (`bm25.py` → `bm25`), the default explorer name.
fn stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    file_stem(&name, Extension::Last).to_owned()
}

/// A module-level `NAME = "..."` (or `DESCRIPTION = "..."`) assignment of a Python file, read
/// without running it. The SDK reads the same attribute at run time.
fn python_constant(source: &str, constant: &str) -> Option<String> {
    let pattern =
        format!(r#"(?m)^{constant}\s*(?::\s*str\s*)?=\s*(?:"([^"\\\n]*)"|'([^'\\\n]*)')"#);
    let re = regex::Regex::new(&pattern).expect("a valid pattern");
    let captures = re.captures(source)?;
    captures
        .get(1)
        .or_else(|| captures.get(2))
        .map(|m| m.as_str().to_owned())
}

impl CommandExplorer {
    /// The command explorer a file describes: a `.py` file, a `.json` manifest or an executable.
    pub fn from_path(path: &Path) -> Result<CommandExplorer, HostError> {
        let bad = |message: String| HostError::BadCommand {
            path: path.to_owned(),
            message,
        };
        if !path.is_file() {
            return Err(bad("no such file".to_owned()));
        }
        let absolute = std::path::absolute(path).map_err(|e| bad(e.to_string()))?;
        match path.extension().and_then(|e| e.to_str()) {
            Some("py") => {
                let source = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
                if !regex::Regex::new(r"(?m)^(?:async\s+)?def\s+explore\s*\(|^explore\s*=")
                    .expect("a valid pattern")
                    .is_match(&source)
                {
                    return Err(bad(
                        "it does not define `explore` (a Python explorer defines \
                         `def explore(issue, instance_id)` returning [(path, start, end), ...])"
                            .to_owned(),
                    ));
                }
                let name = python_constant(&source, "NAME").unwrap_or_else(|| stem(path));
                check_name(path, &name)?;
                let description = python_constant(&source, "DESCRIPTION")
                    .unwrap_or_else(|| format!("Python explorer {}", stem(path)));
                Ok(CommandExplorer::python(
                    name,
                    description,
                    absolute.clone(),
                    absolute,
                ))
            }
            Some("json") => CommandExplorer::from_manifest(path, &absolute),
            _ if is_executable(path) => {
                let name = stem(path);
                check_name(path, &name)?;
                Ok(CommandExplorer {
                    description: format!("executable {}", absolute.display()),
                    name,
                    kind: CommandKind::Executable,
                    python_file: None,
                    builtin: None,
                    program: absolute.clone(),
                    args: Vec::new(),
                    cwd: None,
                    env: Vec::new(),
                    config: serde_json::Value::Null,
                    path: absolute,
                })
            }
            _ => Err(bad(
                "not a plugin library (.so, .dylib, .dll), a Python file (.py), a manifest \
                 (.json) or an executable"
                    .to_owned(),
            )),
        }
    }

    fn python(name: String, description: String, path: PathBuf, file: PathBuf) -> CommandExplorer {
        CommandExplorer {
            name,
            description,
            kind: CommandKind::Python,
            path,
            python_file: Some(file),
            builtin: None,
            program: PathBuf::new(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            config: serde_json::Value::Null,
        }
    }

    fn from_manifest(path: &Path, absolute: &Path) -> Result<CommandExplorer, HostError> {
        let bad = |message: String| HostError::BadCommand {
            path: path.to_owned(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let manifest: Manifest =
            serde_json::from_str(&text).map_err(|e| bad(format!("not a valid manifest: {e}")))?;
        check_name(path, &manifest.name)?;
        let folder = absolute.parent().unwrap_or(Path::new("/")).to_owned();
        let mut explorer = match (&manifest.explorer, manifest.command.split_first()) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "it names both a `command` and an `explorer`: give one".to_owned()
                ));
            }
            (None, None) => {
                return Err(bad(
                    "it names neither a `command` nor a built-in `explorer`".to_owned(),
                ));
            }
            (Some(builtin), None) => CommandExplorer {
                name: manifest.name.clone(),
                description: manifest.description.clone(),
                kind: CommandKind::Manifest,
                path: absolute.to_owned(),
                python_file: None,
                builtin: Some(builtin.clone()),
                program: PathBuf::new(),
                args: Vec::new(),
                cwd: None,
                env: Vec::new(),
                config: serde_json::Value::Null,
            },
            (None, Some((first, rest))) => {
                CommandExplorer::from_command(&manifest, &folder, absolute, first, rest)
                    .map_err(bad)?
            }
        };
        explorer.kind = CommandKind::Manifest;
        explorer.cwd = manifest.cwd.as_ref().map(|c| folder.join(c));
        explorer.env = manifest
            .env
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect();
        explorer.config = manifest.config;
        Ok(explorer)
    }

    fn from_command(
        manifest: &Manifest,
        folder: &Path,
        absolute: &Path,
        first: &str,
        rest: &[String],
    ) -> Result<CommandExplorer, String> {
        Ok(if first.ends_with(".py") {
            let file = folder.join(first);
            if !file.is_file() {
                return Err(format!("its Python file {} does not exist", file.display()));
            }
            let mut explorer = CommandExplorer::python(
                manifest.name.clone(),
                manifest.description.clone(),
                absolute.to_owned(),
                file,
            );
            explorer.args = rest.iter().map(OsString::from).collect();
            explorer
        } else {
            let program = if first.contains('/') {
                folder.join(first)
            } else {
                PathBuf::from(first)
            };
            CommandExplorer {
                name: manifest.name.clone(),
                description: manifest.description.clone(),
                kind: CommandKind::Manifest,
                path: absolute.to_owned(),
                python_file: None,
                builtin: None,
                program,
                args: rest.iter().map(OsString::from).collect(),
                cwd: None,
                env: Vec::new(),
                config: serde_json::Value::Null,
            }
        })
    }

    /// The built-in explorer a manifest runs under its own name, when it names one.
    pub fn builtin(&self) -> Option<&str> {
        self.builtin.as_deref()
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn description(&self) -> &str {
        &self.description
    }

    pub fn kind(&self) -> CommandKind {
        self.kind
    }

    /// The file the explorer was found as.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The manifest's default config (`null` for files without one).
    pub fn default_config(&self) -> &serde_json::Value {
        &self.config
    }

    /// How to start its worker. For a Python explorer this writes the built-in SDK into the
    /// cache folder once per process; a manifest naming a built-in runs swex's own worker, the
    /// running executable with the subcommand `swex_worker`.
    pub fn worker_command(&self, swex_worker: &str) -> Result<WorkerCommand, HostError> {
        if let Some(builtin) = &self.builtin {
            let mut command = WorkerCommand::swex_worker(
                swex_worker,
                &crate::isolated::PluginTarget::Builtin(builtin.clone()),
            )?;
            command.cwd = self.cwd.clone();
            command.env = self.env.clone();
            return Ok(command);
        }
        let mut command = match &self.python_file {
            Some(file) => {
                let sdk = python_sdk_dir()?;
                let interpreter = std::env::var_os(PYTHON_ENV)
                    .filter(|v| !v.is_empty())
                    .unwrap_or_else(|| "python3".into());
                let mut args: Vec<OsString> = vec![
                    "-c".into(),
                    PYTHON_BOOTSTRAP.into(),
                    sdk.into_os_string(),
                    file.clone().into_os_string(),
                ];
                args.extend(self.args.iter().cloned());
                WorkerCommand {
                    program: interpreter.into(),
                    args,
                    ..WorkerCommand::default()
                }
            }
            None => WorkerCommand {
                program: self.program.clone(),
                args: self.args.clone(),
                ..WorkerCommand::default()
            },
        };
        command.cwd = self.cwd.clone();
        command.env = self.env.clone();
        Ok(command)
    }

    /// What identifies its code, for result rows: `command <file> blake3:<hex>` of the file (and,
    /// for Python, of the SDK that runs it).
    pub fn build_identity(&self) -> Result<String, HostError> {
        let mut hasher = blake3::Hasher::new();
        for file in [Some(&self.path), self.python_file.as_ref()]
            .into_iter()
            .flatten()
        {
            let bytes = std::fs::read(file).map_err(|e| HostError::Load {
                path: file.clone(),
                message: format!("reading it to identify the build: {e}"),
            })?;
            hasher.update(&bytes);
        }
        if self.python_file.is_some() {
            hasher.update(python_sdk_digest().as_bytes());
        }
        if self.builtin.is_some() {
            // The built-in's code is this executable.
            let exe = std::env::current_exe()
                .map_err(|e| HostError::io("finding the current executable", e))?;
            let bytes = std::fs::read(&exe).map_err(|e| HostError::Load {
                path: exe.clone(),
                message: format!("reading it to identify the build: {e}"),
            })?;
            hasher.update(&bytes);
        }
        Ok(format!(
            "command {} blake3:{}",
            self.path.file_name().unwrap_or_default().to_string_lossy(),
            &hasher.finalize().to_hex()[..16]
        ))
    }
}

/// Puts the SDK folder first on `sys.path` and runs the worker on the file. `-c` rather than a
/// script path so that nothing but the SDK folder is added to the path.
const PYTHON_BOOTSTRAP: &str = "import sys; sys.dont_write_bytecode = True; \
sys.path.insert(0, sys.argv[1]); from swex_explorer._worker import main; \
sys.exit(main(sys.argv[2], sys.argv[3:]))";

fn python_sdk_digest() -> String {
    let mut hasher = blake3::Hasher::new();
    for (path, text) in PYTHON_SDK {
        hasher.update(path.as_bytes());
        hasher.update(&[0]);
        hasher.update(text.as_bytes());
        hasher.update(&[0]);
    }
    hasher.finalize().to_hex()[..16].to_owned()
}

/// The built-in SDK written out: `<cache dir>/swex/python-sdk/<digest>` (or under the temporary
/// folder when the cache folder cannot be written), written once (into a temporary folder renamed
/// into place, so that concurrent processes never see half of it).
pub fn python_sdk_dir() -> Result<PathBuf, HostError> {
    static DIR: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let mut failures = Vec::new();
        for base in [dirs::cache_dir(), Some(std::env::temp_dir())]
            .into_iter()
            .flatten()
        {
            let base = base.join("swex").join("python-sdk");
            match write_python_sdk(&base) {
                Ok(dir) => return Ok(dir),
                Err(e) => failures.push(format!("{}: {e}", base.display())),
            }
        }
        Err(format!("writing the Python SDK: {}", failures.join("; ")))
    });
    dir.clone().map_err(|message| HostError::Io {
        context: message,
        source: std::io::Error::other("cannot write the Python SDK"),
    })
}

fn write_python_sdk(base: &Path) -> std::io::Result<PathBuf> {
    let dir = base.join(python_sdk_digest());
    if dir.join(PYTHON_SDK[0].0).is_file() {
        return Ok(dir);
    }
    let temporary = base.join(format!(".tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&temporary);
    for (path, text) in PYTHON_SDK {
        let file = temporary.join(path);
        std::fs::create_dir_all(file.parent().expect("a file in a folder"))?;
        std::fs::write(file, text)?;
    }
    match std::fs::rename(&temporary, &dir) {
        Ok(()) => Ok(dir),
        // Another process won the race: its copy is the same.
        Err(_) if dir.join(PYTHON_SDK[0].0).is_file() => {
            let _ = std::fs::remove_dir_all(&temporary);
            Ok(dir)
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_names_come_from_a_name_line_or_the_stem() {
        for (source, expected) in [
            (
                "NAME = \"my-bm25\"\ndef explore(i, d): return []\n",
                Some("my-bm25"),
            ),
            ("NAME: str = 'x'\n", Some("x")),
            ("  NAME = 'indented'\n", None),
            ("NAME = compute()\n", None),
            ("OTHER_NAME = 'no'\n", None),
        ] {
            assert_eq!(
                python_constant(source, "NAME").as_deref(),
                expected,
                "{source:?}"
            );
        }
    }

    #[test]
    fn python_files_manifests_and_bad_files_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let named = dir.path().join("named.py");
        std::fs::write(
            &named,
            "NAME = 'bm25-py'\ndef explore(issue, instance_id):\n    return []\n",
        )
        .unwrap();
        let explorer = CommandExplorer::from_path(&named).unwrap();
        assert_eq!(
            (explorer.name(), explorer.kind()),
            ("bm25-py", CommandKind::Python)
        );

        let plain = dir.path().join("plain_one.py");
        std::fs::write(&plain, "def explore(issue, instance_id):\n    return []\n").unwrap();
        assert_eq!(
            CommandExplorer::from_path(&plain).unwrap().name(),
            "plain_one"
        );

        let none = dir.path().join("none.py");
        std::fs::write(&none, "def search(issue):\n    return []\n").unwrap();
        let error = CommandExplorer::from_path(&none).unwrap_err().to_string();
        assert!(error.contains("does not define `explore`"), "{error}");

        let manifest = dir.path().join("agent.json");
        std::fs::write(
            &manifest,
            r#"{"name": "agent", "command": ["named.py", "--x"], "env": {"A": "1"}, "config": {"k": 2}}"#,
        )
        .unwrap();
        let explorer = CommandExplorer::from_path(&manifest).unwrap();
        assert_eq!(explorer.name(), "agent");
        assert_eq!(explorer.default_config(), &serde_json::json!({"k": 2}));
        assert_eq!(explorer.python_file.as_deref(), Some(named.as_path()));

        let alias = dir.path().join("claude-code.json");
        std::fs::write(
            &alias,
            r#"{"name": "claude-code", "explorer": "command", "config": {"command": ["claude"]}}"#,
        )
        .unwrap();
        let explorer = CommandExplorer::from_path(&alias).unwrap();
        assert_eq!(explorer.builtin(), Some("command"));
        let worker = explorer.worker_command("__plugin-worker").unwrap();
        assert_eq!(worker.args[1..], ["--builtin", "command"]);

        let both = dir.path().join("both.json");
        std::fs::write(
            &both,
            r#"{"name": "b", "command": ["x"], "explorer": "command"}"#,
        )
        .unwrap();
        let error = CommandExplorer::from_path(&both).unwrap_err().to_string();
        assert!(error.contains("give one"), "{error}");

        let broken = dir.path().join("broken.json");
        std::fs::write(&broken, r#"{"name": "a b", "command": ["x"]}"#).unwrap();
        let error = CommandExplorer::from_path(&broken).unwrap_err().to_string();
        assert!(error.contains("not a plain name"), "{error}");

        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "hello").unwrap();
        let error = CommandExplorer::from_path(&text).unwrap_err().to_string();
        assert!(error.contains("not a plugin library"), "{error}");
    }
}
