//! swex-testkit: one rule for tests that need something from outside the repository.
//!
//! Some tests need the embedding model (`swex models fetch`) or the shared benchmark data
//! (`../shared/data` next to the checkout). When it is absent, such a test either **skips
//! loudly** — it prints `skipped: <test needs>: <reason>` to stderr and passes — or, when the
//! environment asks for it, **fails** with the same reason:
//!
//! | needs | required when | data folder |
//! |---|---|---|
//! | [`Needs::Model`] | `SWEX_REQUIRE_MODEL=1` | (the model cache) |
//! | [`Needs::SharedData`] | `SWEX_REQUIRE_DATA=1` | `SWEX_SHARED_DATA`, else `../shared/data` |
//! | [`Needs::McpClient`] | `SWEX_REQUIRE_MCP_CLIENT=1` | (`SWEX_MCP_PYTHON`) |
//! | [`Needs::Python`] | `SWEX_REQUIRE_PYTHON=1` | (`SWEX_PYTHON`, else `python3`: [`python`]) |
//! | [`Needs::RankerPython`] | `SWEX_REQUIRE_RANKER=1` | (`SWEX_RANKER_PYTHON`: [`ranker_python`]) |
//!
//! `scripts/test` (what CI runs) installs all of them and sets every variable: there nothing is
//! skipped at all.
//!
//! ```
//! # fn model() -> Result<u32, String> { Ok(7) }
//! // In a test: run only with the model, or say why not.
//! let Some(model) = swex_testkit::available(swex_testkit::Needs::Model, model()) else {
//!     return;
//! };
//! assert_eq!(model, 7);
//! ```

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a test needs from outside the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// ONNX Runtime and the default embedding model (`swex models fetch`).
    Model,
    /// The benchmark data folder (`dev.jsonl`, trajectories, ...).
    SharedData,
    /// A Python with the official MCP SDK (`scripts/fetch-mcp-client`).
    McpClient,
    /// A Python 3.9+ interpreter (`$SWEX_PYTHON`, else `python3`), for Python explorers.
    Python,
    /// A Python with LightGBM for `swex train`'s fitter (`scripts/ranker-env`).
    RankerPython,
}

impl Needs {
    /// The variable that turns an absence into a failure.
    pub fn required_by(self) -> &'static str {
        match self {
            Needs::Model => "SWEX_REQUIRE_MODEL",
            Needs::SharedData => "SWEX_REQUIRE_DATA",
            Needs::McpClient => "SWEX_REQUIRE_MCP_CLIENT",
            Needs::Python => "SWEX_REQUIRE_PYTHON",
            Needs::RankerPython => "SWEX_REQUIRE_RANKER",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Needs::Model => "the embedding model (run `swex models fetch`)",
            Needs::SharedData => {
                "the shared benchmark data (../shared/data next to the checkout, or SWEX_SHARED_DATA)"
            }
            Needs::McpClient => "the MCP Python SDK (run `scripts/fetch-mcp-client`)",
            Needs::Python => "Python 3.9 or newer ($SWEX_PYTHON, else python3 on PATH)",
            Needs::RankerPython => {
                "a Python with LightGBM ($SWEX_RANKER_PYTHON; run `scripts/ranker-env`)"
            }
        }
    }

    /// Whether the environment requires it.
    pub fn is_required(self) -> bool {
        std::env::var_os(self.required_by()).is_some_and(|v| v == "1")
    }
}

/// `Some(value)` when `found` holds it; otherwise skips loudly (`None`), or panics with the reason
/// when [`Needs::is_required`].
pub fn available<T, E: Display>(needs: Needs, found: Result<T, E>) -> Option<T> {
    match found {
        Ok(value) => Some(value),
        Err(reason) => {
            let message = format!("{}: {reason}", needs.what());
            if needs.is_required() {
                panic!("{}=1 but {message}", needs.required_by());
            }
            eprintln!(
                "skipped: needs {message} ({}=1 makes this a failure)",
                needs.required_by()
            );
            None
        }
    }
}

/// The Python interpreter Python explorers run with (`$SWEX_PYTHON`, else `python3`), when it
/// runs and is 3.9 or newer; else the reason.
pub fn python() -> Result<PathBuf, String> {
    let (interpreter, output) = run_python(
        "SWEX_PYTHON",
        "import sys; print(sys.version_info >= (3, 9))",
    )?;
    if String::from_utf8_lossy(&output.stdout).trim() == "True" {
        Ok(interpreter)
    } else {
        Err(format!("{} is older than 3.9", interpreter.display()))
    }
}

/// Runs `code` with the Python that `variable` names (else `python3`): the interpreter and what
/// it printed, or why it could not run.
fn run_python(variable: &str, code: &str) -> Result<(PathBuf, std::process::Output), String> {
    let interpreter = PathBuf::from(
        std::env::var_os(variable)
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "python3".into()),
    );
    let output = Command::new(&interpreter)
        .args(["-c", code])
        .output()
        .map_err(|e| format!("{}: {e}", interpreter.display()))?;
    Ok((interpreter, output))
}

/// The Python `swex train` fits with (`$SWEX_RANKER_PYTHON`, else `python3`), when it imports
/// LightGBM; else the reason.
pub fn ranker_python() -> Result<PathBuf, String> {
    let (interpreter, output) = run_python("SWEX_RANKER_PYTHON", "import lightgbm, numpy")?;
    if output.status.success() {
        Ok(interpreter)
    } else {
        Err(format!(
            "{} cannot import lightgbm and numpy",
            interpreter.display()
        ))
    }
}

/// The shared data folder: `SWEX_SHARED_DATA`, else `shared/data` next to the checkout.
pub fn shared_data_dir() -> PathBuf {
    std::env::var_os("SWEX_SHARED_DATA").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"),
        PathBuf::from,
    )
}

/// The shared data folder when it holds every one of `files` (by [`available`]'s rule).
pub fn shared_data(files: &[&str]) -> Option<PathBuf> {
    let dir = shared_data_dir();
    let missing: Vec<&str> = files
        .iter()
        .copied()
        .filter(|f| !dir.join(f).exists())
        .collect();
    let found = if missing.is_empty() {
        Ok(dir)
    } else {
        Err(format!("{} lacks {}", dir.display(), missing.join(", ")))
    };
    available(Needs::SharedData, found)
}

/// `git` run in `dir`, isolated from the machine's configuration: no global or system config, a
/// fixed identity, no commit signing. Fixture repositories come out the same on every machine.
pub fn git_command(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .args(["-c", "commit.gpgsign=false"]);
    command
}

/// Runs [`git_command`] with `args`; panics with git's stderr unless it succeeds. Its stdout,
/// trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_command(dir).args(args).output().expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Writes `text` to `root/path` (folders created) and dates it an hour back, as a checkout made
/// earlier: the engine's stat fast path does not trust a file written within the last seconds
/// (its stamp is *racy*), so a test that reopens a snapshot would see it read again.
pub fn write_checkout_file(root: &Path, path: &str, text: impl AsRef<[u8]>) {
    let abs = root.join(path);
    std::fs::create_dir_all(abs.parent().expect("a file path")).expect("create folders");
    std::fs::write(&abs, text).expect("write the file");
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&abs)
        .and_then(|file| file.set_modified(an_hour_ago))
        .expect("date the file");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn present_things_are_given_and_absent_ones_skipped_or_required() {
        for needs in [Needs::Model, Needs::SharedData, Needs::McpClient] {
            assert_eq!(available::<_, String>(needs, Ok(3)), Some(3));
            let absent = std::panic::catch_unwind(|| available::<u32, _>(needs, Err("absent")));
            if needs.is_required() {
                let message = absent.expect_err("required and absent must fail");
                let message = message.downcast_ref::<String>().unwrap();
                assert!(message.contains(needs.required_by()), "{message}");
                assert!(message.contains("absent"), "{message}");
            } else {
                assert_eq!(absent.unwrap(), None);
            }
        }
    }

    #[test]
    fn shared_data_names_every_missing_file() {
        let dir = shared_data_dir();
        let lacking = ["no-such-file.jsonl", "nor-this.json"];
        let found = std::panic::catch_unwind(|| shared_data(&lacking));
        match found {
            Ok(found) => {
                assert!(!Needs::SharedData.is_required());
                assert_eq!(found, None);
            }
            Err(message) => {
                let message = message.downcast_ref::<String>().unwrap();
                assert!(message.contains(&dir.display().to_string()), "{message}");
                assert!(
                    message.contains("no-such-file.jsonl, nor-this.json"),
                    "{message}"
                );
            }
        }
    }
}
