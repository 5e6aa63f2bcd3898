//! Turning the paths agents write (`/testbed/pkg/a.py`, `./pkg/a.py`, `../a.py` after a `cd`,
//! `/workspace/org__repo__1.0/pkg/a.py`) into repository-relative paths, and recognising the
//! scratch files agents create (`reproduce_issue.py`, `debug_x.py`).
//!
//! Resolution is lexical: `.` and `..` are folded without touching the disk, relative paths are
//! joined to the working directory the command ran in, and the result must lie under the
//! repository root (the trajectory's working directory, `/testbed`, or `/workspace/<dir>`).
//! Whether the file exists is the snapshot's business ([`super::repo`]).

/// Where a path points, relative to the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// Repository-relative, `/`-separated, no `.`/`..`; empty for the root itself.
    Repo(String),
    /// Outside the repository (`/tmp/x`, `~/.bashrc`, `../../etc`).
    Outside(String),
}

/// Repository root used when a trajectory does not record its working directory (SWE-bench
/// images check the repository out there).
pub const DEFAULT_ROOT: &str = "/testbed";

/// Path resolution for one trajectory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathResolver {
    root: String,
}

impl PathResolver {
    /// `root` is the absolute repository directory in the agent's environment.
    pub fn new(root: Option<&str>) -> Self {
        let root = root
            .map(|r| fold(r, "/"))
            .filter(|r| r != "/")
            .unwrap_or_else(|| DEFAULT_ROOT.to_string());
        PathResolver { root }
    }

    pub fn root(&self) -> &str {
        &self.root
    }

    /// Resolve `raw` as written in a command that ran in `cwd` (absolute; `None` = the root).
    /// Quotes, backticks and trailing punctuation left by loose parsing are trimmed.
    pub fn resolve(&self, raw: &str, cwd: Option<&str>) -> Resolved {
        let cleaned = clean(raw);
        if cleaned.starts_with('~') {
            return Resolved::Outside(cleaned.to_string());
        }
        let absolute = fold(cleaned, cwd.unwrap_or(&self.root));
        for root in [self.root.as_str(), DEFAULT_ROOT] {
            if absolute == root {
                return Resolved::Repo(String::new());
            }
            if let Some(rest) = absolute
                .strip_prefix(root)
                .and_then(|r| r.strip_prefix('/'))
            {
                return Resolved::Repo(rest.to_string());
            }
        }
        // OpenHands checks repositories out at /workspace/<org>__<repo>__<version>.
        if let Some(rest) = absolute.strip_prefix("/workspace/") {
            return match rest.split_once('/') {
                Some((_, inner)) => Resolved::Repo(inner.to_string()),
                None => Resolved::Repo(String::new()),
            };
        }
        Resolved::Outside(absolute)
    }

    /// Absolute form of a directory given to `cd`, or `None` when it cannot be known (`cd -`,
    /// `cd $X`).
    pub fn change_dir(&self, target: Option<&str>, cwd: Option<&str>) -> Option<String> {
        match target {
            None | Some("~") => Some("/root".to_string()),
            Some("-") => None,
            Some(t) if t.starts_with('~') => Some(format!("/root{}", &t[1..])),
            Some(t) => Some(fold(clean(t), cwd.unwrap_or(&self.root))),
        }
    }
}

fn clean(raw: &str) -> &str {
    raw.trim()
        .trim_matches(|c| c == '\'' || c == '"' || c == '`')
        .trim_end_matches([',', ')', ':'])
}

/// Join `path` to `base` (when relative) and fold `.`, `..` and repeated separators.
fn fold(path: &str, base: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{base}/{path}")
    };
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Name prefixes of the scratch files agents write while reproducing and debugging; such files
/// are never ground truth, even when a snapshot happens to contain one.
const TEMPORARY_PREFIXES: &[&str] = &["reproduc", "test_reproduce", "debug_", "tmp_", "temp_"];

/// Whether a repository-relative path is an agent's scratch file: its first component or its
/// file name starts with a scratch prefix, or it lies in `__pycache__`.
pub fn is_temporary(path: &str) -> bool {
    let first = path.split('/').next().unwrap_or("");
    let name = path.rsplit('/').next().unwrap_or("");
    path.split('/').any(|c| c == "__pycache__")
        || TEMPORARY_PREFIXES
            .iter()
            .any(|p| first.starts_with(p) || name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(root: Option<&str>, raw: &str, cwd: Option<&str>, expected: Resolved) {
        assert_eq!(
            PathResolver::new(root).resolve(raw, cwd),
            expected,
            "root {root:?}, raw {raw:?}, cwd {cwd:?}"
        );
    }

    fn repo(p: &str) -> Resolved {
        Resolved::Repo(p.to_string())
    }

    #[test]
    fn resolution() {
        check(None, "/testbed/pkg/a.py", None, repo("pkg/a.py"));
        check(None, "pkg/a.py", None, repo("pkg/a.py"));
        check(None, "./pkg//a.py", None, repo("pkg/a.py"));
        check(None, "'pkg/a.py'", None, repo("pkg/a.py"));
        check(None, "a.py", Some("/testbed/pkg"), repo("pkg/a.py"));
        check(None, "../b.py", Some("/testbed/pkg/sub"), repo("pkg/b.py"));
        check(None, "/testbed", None, repo(""));
        check(
            None,
            "/tmp/x.py",
            None,
            Resolved::Outside("/tmp/x.py".into()),
        );
        check(
            None,
            "../../etc/passwd",
            None,
            Resolved::Outside("/etc/passwd".into()),
        );
        check(
            None,
            "~/.bashrc",
            None,
            Resolved::Outside("~/.bashrc".into()),
        );
        check(
            Some("/workspace/o__r__1.0"),
            "/workspace/o__r__1.0/pkg/a.py",
            None,
            repo("pkg/a.py"),
        );
        check(
            None,
            "/workspace/other__r__2/pkg/a.py",
            None,
            repo("pkg/a.py"),
        );
        check(Some("/o__r"), "src/x.py", None, repo("src/x.py"));
        check(Some("/o__r"), "/o__r/src/x.py", None, repo("src/x.py"));
    }

    #[test]
    fn change_dir() {
        let r = PathResolver::new(None);
        assert_eq!(
            r.change_dir(Some("pkg"), None).as_deref(),
            Some("/testbed/pkg")
        );
        assert_eq!(
            r.change_dir(Some(".."), Some("/testbed/pkg")).as_deref(),
            Some("/testbed")
        );
        assert_eq!(r.change_dir(Some("-"), None), None);
        assert_eq!(r.change_dir(None, None).as_deref(), Some("/root"));
    }

    #[test]
    fn temporary_files() {
        for p in [
            "reproduce_issue.py",
            "reproduce.py",
            "debug_x.py",
            "pkg/tmp_a.py",
            "pkg/__pycache__/a.pyc",
            "reproduction/docs/conf.py",
        ] {
            assert!(is_temporary(p), "{p}");
        }
        for p in [
            "pkg/debug.py",
            "django/template/base.py",
            "tests/test_reproducibility.py",
        ] {
            assert!(!is_temporary(p), "{p}");
        }
    }
}
