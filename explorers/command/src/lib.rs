//! The `command` explorer: runs any external command — typically a coding-agent CLI — on the
//! issue, in the checkout, and reads the regions from the `RELEVANT_FILES:` block it prints.
//!
//! Config (all optional except `command`):
//!
//! ```json
//! {
//!   "command": ["my-agent", "--print", "{prompt}"],   // argv; a string runs through `sh -c`
//!   "prompt": "...{issue}...{top_k}...",              // default: DEFAULT_PROMPT
//!   "stdin": "{prompt}",                              // default: the prompt, unless an argument
//!                                                     // already carries {prompt} or {issue}
//!   "cwd": "{repo}",                                  // default: the checkout
//!   "env": {"NAME": "value"},
//!   "timeout_secs": 600
//! }
//! ```
//!
//! Placeholders in `command`, `prompt`, `stdin`, `cwd` and `env` values: `{issue}`, `{prompt}`,
//! `{repo}`, `{top_k}`, `{instance_id}`. The command also gets `SWEX_REPO`, `SWEX_INSTANCE_ID`
//! and `SWEX_TOP_K` in its environment. It runs in its own process group; on the time limit the
//! whole group is killed and the instance fails with the reason.
//!
//! The answer: the last `RELEVANT_FILES:` block of stdout (the last, because some tools echo the
//! prompt, whose example block comes first), one location per line until a blank line —
//! `path:10-20`, `path:5` (one line), bare `path` (whole file, `end = -1`); bullets (`-`, `*`,
//! `1.`), backticks, quotes, bold markers, trailing punctuation and trailing comments (`(...)`,
//! `# ...`, ` - ...`) are ignored; `L10-L20`, `path#L10-L20` and en/em dashes are ranges; absolute
//! paths inside the checkout and `/testbed/...` paths are made relative. Without a block,
//! `path.ext:N[-M]` mentions in the text are used. Entries with an invalid range and paths outside
//! the snapshot are skipped and reported in the response notes; a repeated entry (or one inside a
//! whole file named earlier) is kept once, at its first place.
//!
//! JSON output modes are read too: Claude Code's `--output-format json` (one object: the answer
//! is its `result`, with `usage` and `total_cost_usd`) and Codex's `exec --json` (JSON lines: the
//! answer is the last `agent_message`, usage summed over `turn.completed` events). Token use and
//! cost, when reported, become a note `agent usage: {...}` — recorded in `swex bench` rows.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use swex_plugin::{Explorer, ExplorerError, Region, Request, Response, Services, parse_config};

pub const DEFAULT_PROMPT: &str = "You are exploring the repository in the current directory to \
find the code a developer must read to resolve the issue below. Do not modify any file.\n\n\
<issue>\n{issue}\n</issue>\n\n\
Answer with at most {top_k} locations, most relevant first, in exactly this format:\n\n\
RELEVANT_FILES:\n- path/to/file.py:10-20\n- path/to/other.py:5\n- path/to/whole_file.py\n\n\
Paths are relative to the repository root; line numbers are 1-based and inclusive.\n";

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum CommandSpec {
    Argv(Vec<String>),
    Shell(String),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandConfig {
    pub command: CommandSpec,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub stdin: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default = "default_timeout")]
    pub timeout_secs: f64,
}

fn default_timeout() -> f64 {
    600.0
}

impl Default for CommandConfig {
    fn default() -> Self {
        CommandConfig {
            command: CommandSpec::Argv(Vec::new()),
            prompt: None,
            stdin: None,
            cwd: None,
            env: BTreeMap::new(),
            timeout_secs: default_timeout(),
        }
    }
}

pub struct CommandExplorer {
    config: CommandConfig,
}

struct Substitutions<'a> {
    issue: &'a str,
    prompt: String,
    repo: &'a str,
    top_k: String,
    instance_id: &'a str,
}

impl Substitutions<'_> {
    fn apply(&self, template: &str) -> String {
        template
            .replace("{issue}", self.issue)
            .replace("{prompt}", &self.prompt)
            .replace("{repo}", self.repo)
            .replace("{top_k}", &self.top_k)
            .replace("{instance_id}", self.instance_id)
    }
}

/// What the command printed and how it ended.
pub struct RunOutput {
    pub stdout: String,
    pub stderr: String,
    pub status: std::process::ExitStatus,
}

fn tail(text: &str, lines: usize) -> String {
    let kept: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    kept[kept.len().saturating_sub(lines)..].join(" | ")
}

impl CommandExplorer {
    fn run(&self, request: &Request) -> Result<RunOutput, ExplorerError> {
        let repo = request.repo_root.as_deref().ok_or_else(|| {
            ExplorerError::InvalidRequest(
                "the command explorer needs the checkout on disk (request.repo_root)".to_owned(),
            )
        })?;
        let prompt_template = self.config.prompt.as_deref().unwrap_or(DEFAULT_PROMPT);
        let mut subs = Substitutions {
            issue: &request.issue,
            prompt: String::new(),
            repo,
            top_k: request.top_k.to_string(),
            instance_id: &request.instance_id,
        };
        subs.prompt = subs.apply(prompt_template);

        let mut command = match &self.config.command {
            CommandSpec::Argv(argv) => {
                let mut command = Command::new(subs.apply(&argv[0]));
                command.args(argv[1..].iter().map(|a| subs.apply(a)));
                command
            }
            CommandSpec::Shell(line) => {
                let mut command = Command::new("sh");
                command.arg("-c").arg(subs.apply(line));
                command
            }
        };
        let args_carry_issue = match &self.config.command {
            CommandSpec::Argv(argv) => argv
                .iter()
                .any(|a| a.contains("{prompt}") || a.contains("{issue}")),
            CommandSpec::Shell(line) => line.contains("{prompt}") || line.contains("{issue}"),
        };
        let stdin_text = match &self.config.stdin {
            Some(template) => Some(subs.apply(template)),
            None if args_carry_issue => None,
            None => Some(subs.prompt.clone()),
        };
        let cwd = self
            .config
            .cwd
            .as_deref()
            .map(|c| subs.apply(c))
            .unwrap_or_else(|| repo.to_owned());
        command
            .current_dir(&cwd)
            .env("SWEX_REPO", repo)
            .env("SWEX_INSTANCE_ID", &request.instance_id)
            .env("SWEX_TOP_K", request.top_k.to_string())
            .stdin(if stdin_text.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, value) in &self.config.env {
            command.env(name, subs.apply(value));
        }
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);

        let program = format!("{:?}", command.get_program());
        let mut child = command
            .spawn()
            .map_err(|e| ExplorerError::failed(format!("cannot start {program} in {cwd}: {e}")))?;
        let pid = child.id();
        let stdin_thread = stdin_text.map(|text| {
            let mut stdin = child.stdin.take().expect("piped");
            // A command that does not read its input must not block us: write on a thread and
            // ignore a broken pipe.
            std::thread::spawn(move || {
                let _ = stdin.write_all(text.as_bytes());
            })
        });
        let mut stdout = child.stdout.take().expect("piped");
        let mut stderr = child.stderr.take().expect("piped");
        let out_thread = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stdout.read_to_end(&mut bytes);
            bytes
        });
        let err_thread = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = stderr.read_to_end(&mut bytes);
            bytes
        });

        let deadline = Instant::now() + Duration::from_secs_f64(self.config.timeout_secs);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Ok(None) => {
                    kill_group(pid);
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(ExplorerError::failed(format!(
                        "{program} did not finish within {} s; it was killed",
                        self.config.timeout_secs
                    )));
                }
                Err(e) => return Err(ExplorerError::failed(format!("waiting for {program}: {e}"))),
            }
        };
        // The command is done; its descendants may still hold the pipes open: end them too.
        kill_group(pid);
        if let Some(thread) = stdin_thread {
            let _ = thread.join();
        }
        let stdout = out_thread.join().unwrap_or_default();
        let stderr = err_thread.join().unwrap_or_default();
        Ok(RunOutput {
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            status,
        })
    }
}

#[cfg(unix)]
fn kill_group(pid: u32) {
    // SAFETY: signalling our own child's process group (created with process_group(0)).
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: u32) {}

impl Explorer for CommandExplorer {
    const NAME: &'static CStr = c"command";
    const DESCRIPTION: &'static CStr =
        c"runs an external command (e.g. a coding agent) and reads its RELEVANT_FILES block";

    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError> {
        if config.is_null() {
            return Err(ExplorerError::InvalidConfig(
                "the command explorer needs {\"command\": [...]} in its config".to_owned(),
            ));
        }
        let config: CommandConfig = parse_config(config)?;
        let empty = match &config.command {
            CommandSpec::Argv(argv) => argv.is_empty() || argv[0].is_empty(),
            CommandSpec::Shell(line) => line.trim().is_empty(),
        };
        if empty {
            return Err(ExplorerError::InvalidConfig("command is empty".to_owned()));
        }
        if !(config.timeout_secs > 0.0 && config.timeout_secs.is_finite()) {
            return Err(ExplorerError::InvalidConfig(format!(
                "timeout_secs must be a positive number, got {}",
                config.timeout_secs
            )));
        }
        Ok(CommandExplorer { config })
    }

    fn explore(
        &self,
        request: &Request,
        _services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        let output = self.run(request)?;
        let repo = request.repo_root.as_deref().unwrap_or("");
        let agent = read_agent_output(&output.stdout);
        let parsed = parse_relevant_files(&agent.text, repo);
        if !output.status.success() && parsed.regions.is_empty() {
            return Err(ExplorerError::failed(format!(
                "the command ended with {} and named no location; its stderr ends with: {}",
                output.status,
                tail(&output.stderr, 5)
            )));
        }
        let mut response = Response::new(parsed.regions);
        if !output.status.success() {
            response
                .notes
                .push(format!("the command ended with {}", output.status));
        }
        response.notes.extend(parsed.skipped);
        if let Some(usage) = agent.usage {
            response.notes.push(format!("agent usage: {usage}"));
        }
        if response.regions.is_empty() {
            response
                .notes
                .push("the command's output named no location".to_owned());
        }
        Ok(response)
    }
}

/// What an agent answered: the text holding its answer, and its token use and cost when its
/// output reports them.
#[derive(Debug, Default, PartialEq)]
pub struct AgentOutput {
    pub text: String,
    pub usage: Option<serde_json::Value>,
}

/// The answer text and usage of a command's stdout: Claude Code's JSON object (`result`,
/// `usage`, `total_cost_usd`), Codex's JSON lines (the last `agent_message`, `turn.completed`
/// usage summed), else the text as it is.
pub fn read_agent_output(stdout: &str) -> AgentOutput {
    use serde_json::{Map, Value};
    let plain = || AgentOutput {
        text: stdout.to_owned(),
        usage: None,
    };
    if let Ok(Value::Object(object)) = serde_json::from_str::<Value>(stdout.trim()) {
        let Some(result) = object.get("result").and_then(Value::as_str) else {
            return plain();
        };
        let mut usage = Map::new();
        if let Some(Value::Object(tokens)) = object.get("usage") {
            for (key, value) in tokens {
                if key.ends_with("tokens") && value.is_number() {
                    usage.insert(key.clone(), value.clone());
                }
            }
        }
        if let Some(cost) = object
            .get("total_cost_usd")
            .or_else(|| object.get("cost_usd"))
        {
            usage.insert("cost_usd".to_owned(), cost.clone());
        }
        return AgentOutput {
            text: result.to_owned(),
            usage: (!usage.is_empty()).then_some(Value::Object(usage)),
        };
    }
    let mut answer = None;
    let mut usage: Map<String, Value> = Map::new();
    let mut events = 0;
    for line in stdout.lines() {
        let Ok(Value::Object(event)) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        events += 1;
        let kind = event.get("type").and_then(Value::as_str).unwrap_or("");
        let item = event.get("item").or_else(|| event.get("msg"));
        let item_kind = item.and_then(|i| i.get("type")).and_then(Value::as_str);
        if (kind == "item.completed" || kind.is_empty()) && item_kind == Some("agent_message") {
            let item = item.expect("has a type");
            if let Some(text) = item
                .get("text")
                .or_else(|| item.get("message"))
                .and_then(Value::as_str)
            {
                answer = Some(text.to_owned());
            }
        }
        if kind == "turn.completed"
            && let Some(Value::Object(tokens)) = event.get("usage")
        {
            for (key, value) in tokens {
                if let Some(n) = value.as_u64() {
                    let total = usage.get(key).and_then(Value::as_u64).unwrap_or(0) + n;
                    usage.insert(key.clone(), total.into());
                }
            }
        }
    }
    match answer {
        Some(text) if events > 0 => AgentOutput {
            text,
            usage: (!usage.is_empty()).then_some(Value::Object(usage)),
        },
        _ => plain(),
    }
}

/// Regions read from a command's output, and the entries that were skipped (with why).
#[derive(Debug, Default, PartialEq)]
pub struct Parsed {
    pub regions: Vec<Region>,
    pub skipped: Vec<String>,
}

impl Parsed {
    /// Keeps a region unless the same one, or a whole file holding it, came earlier.
    fn push(&mut self, region: Region) {
        let known = self.regions.iter().any(|r| {
            r.path == region.path && ((r.start, r.end) == (region.start, region.end) || r.end == -1)
        });
        if !known {
            self.regions.push(region);
        }
    }
}

const MARKER: &str = "RELEVANT_FILES:";

/// Reads locations from command output (see the module documentation for the format).
pub fn parse_relevant_files(text: &str, repo_root: &str) -> Parsed {
    let mut parsed = Parsed::default();
    if let Some(position) = text.rfind(MARKER) {
        let after = &text[position + MARKER.len()..];
        // Entries start on the line after the marker (or on the marker's own line, after it).
        let mut lines = after.lines();
        let same_line = lines.next().unwrap_or("").trim();
        let entries = std::iter::once(same_line).filter(|l| !l.is_empty()).chain(
            lines
                .skip_while(|l| l.trim().is_empty())
                .take_while(|l| !l.trim().is_empty()),
        );
        for entry in entries {
            match parse_entry(entry, repo_root) {
                Ok(Some(region)) => parsed.push(region),
                Ok(None) => {}
                Err(why) => parsed.skipped.push(why),
            }
        }
        return parsed;
    }
    // No block: use `file.ext:N[-M]` mentions in the prose.
    for token in text.split_whitespace() {
        let token = strip_decoration(token);
        let Some((path, range)) = token.split_once(':') else {
            continue;
        };
        let looks_like_file = path
            .rsplit('/')
            .next()
            .is_some_and(|name| name.contains('.'));
        if looks_like_file
            && range.starts_with(|c: char| c.is_ascii_digit() || c == 'L')
            && let Ok(Some(region)) = parse_entry(token, repo_root)
        {
            parsed.push(region);
        }
    }
    parsed
}

fn strip_decoration(text: &str) -> &str {
    let mut text = text.trim();
    loop {
        let before = text;
        text = text
            .trim_start_matches(['`', '*', '"', '\''])
            .trim_end_matches(['`', '*', '"', '\'', '.', ',', ';', '!', '?'])
            .trim();
        if text == before {
            return text;
        }
    }
}

fn strip_bullet(line: &str) -> &str {
    let line = line.trim();
    if let Some(rest) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")) {
        return rest;
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        let rest = &line[digits..];
        if let Some(rest) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return rest;
        }
    }
    line
}

fn parse_line_number(text: &str) -> Option<i64> {
    let text = text.trim();
    let text = text.strip_prefix('L').unwrap_or(text);
    text.parse().ok()
}

fn entry_patterns() -> &'static [(regex::Regex, &'static str); 3] {
    static PATTERNS: std::sync::OnceLock<[(regex::Regex, &'static str); 3]> =
        std::sync::OnceLock::new();
    PATTERNS.get_or_init(|| {
        let compile = |pattern: &str| regex::Regex::new(pattern).expect("valid pattern");
        [
            // `path: 10` → `path:10`
            (compile(r":\s+(L?-?\d)"), ":$1"),
            // `10 - 20`, `10 – 20` → `10-20`
            (compile(r"(\d)\s*[-–—]\s*(L?\d)"), "$1-$2"),
            // trailing explanations: ` (why)`, ` # why`, ` - why`, ` — why`
            (compile(r"\s+(\(.*|#.*|[-–—]\s.*)$"), ""),
        ]
    })
}

/// One entry: `Ok(None)` when it holds no location, `Err` when its range is invalid.
fn parse_entry(entry: &str, repo_root: &str) -> Result<Option<Region>, String> {
    let mut location = strip_decoration(strip_bullet(entry)).to_owned();
    for (pattern, replacement) in entry_patterns() {
        location = pattern.replace_all(&location, *replacement).into_owned();
    }
    // What follows the location after whitespace is commentary.
    let location = strip_decoration(location.split_whitespace().next().unwrap_or(""));
    if location.is_empty() {
        return Ok(None);
    }
    // GitHub-style anchors: `path#L10-L20`.
    let anchored = location.replace("#L", ":L");
    let location = anchored.as_str();

    let (path, start, end) = match location.find(':').filter(|i| {
        location[i + 1..].starts_with(|c: char| c.is_ascii_digit() || c == 'L' || c == '-')
    }) {
        Some(colon) => {
            let path = &location[..colon];
            let range = &location[colon + 1..];
            // `a:10:5` (line:column) keeps the line only.
            let range = range.split(':').next().unwrap_or(range);
            let (start, end) = match range
                .split_once(['-', '–', '—'])
                .filter(|(s, _)| !s.is_empty())
            {
                Some((start, end)) => (parse_line_number(start), parse_line_number(end)),
                None => {
                    let line = parse_line_number(range);
                    (line, line)
                }
            };
            match (start, end) {
                (Some(start), Some(end)) if start >= 1 && end >= start => (path, start, end),
                _ => return Err(format!("skipped `{}`: invalid line range", entry.trim())),
            }
        }
        None => (location, 1, -1),
    };
    let mut path = strip_decoration(path).to_owned();
    if !repo_root.is_empty() {
        let root = format!("{}/", repo_root.trim_end_matches('/'));
        if let Some(relative) = path.strip_prefix(&root) {
            path = relative.to_owned();
        }
    }
    if let Some(relative) = path.strip_prefix("/testbed/") {
        path = relative.to_owned();
    }
    if let Some(relative) = path.strip_prefix("./") {
        path = relative.to_owned();
    }
    if path.is_empty() {
        return Ok(None);
    }
    if path.starts_with('/') || path.split('/').any(|segment| segment == "..") {
        return Err(format!("skipped `{}`: outside the snapshot", entry.trim()));
    }
    Ok(Some(
        Region::new(path, start, end)
            .with_score(1.0)
            .with_why("named by the command"),
    ))
}

swex_plugin::export_vtable!(CommandExplorer);

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expected: &[(&str, i64, i64)], skipped: usize) {
        let parsed = parse_relevant_files(text, "/repo");
        let got: Vec<(&str, i64, i64)> = parsed
            .regions
            .iter()
            .map(|r| (r.path.as_str(), r.start, r.end))
            .collect();
        assert_eq!(got, expected, "regions of {text:?}");
        assert_eq!(
            parsed.skipped.len(),
            skipped,
            "skipped of {text:?}: {:?}",
            parsed.skipped
        );
    }

    #[test]
    fn block_formats() {
        check(
            "Thinking...\nRELEVANT_FILES:\n- a/b.py:10-20\n- c.py:5\n- d/e.py\n\nDone, c.py:99 is unrelated.",
            &[("a/b.py", 10, 20), ("c.py", 5, 5), ("d/e.py", 1, -1)],
            0,
        );
    }

    #[test]
    fn decorations_and_comments() {
        check(
            "RELEVANT_FILES:\n* `a.py:1-2` (the parser)\n1. **b.py:L3-L4** # helper\n2) \"c.py: 7 - 9\".\n- d.py:12 - where it breaks\n- e.py#L5-L6\n- f.py:30:7\n",
            &[
                ("a.py", 1, 2),
                ("b.py", 3, 4),
                ("c.py", 7, 9),
                ("d.py", 12, 12),
                ("e.py", 5, 6),
                ("f.py", 30, 30),
            ],
            0,
        );
    }

    #[test]
    fn invalid_ranges_are_skipped_and_reported() {
        check(
            "RELEVANT_FILES:\n- a.py:20-10\n- b.py:0\n- c.py:3-\n- d.py:4\n",
            &[("d.py", 4, 4)],
            3,
        );
    }

    #[test]
    fn last_block_wins_and_absolute_paths_become_relative() {
        check(
            "RELEVANT_FILES:\n- path/to/file.py:10-20\n\nanswer:\nRELEVANT_FILES:\n- /repo/src/x.py:1-3\n- /testbed/y.py\n",
            &[("src/x.py", 1, 3), ("y.py", 1, -1)],
            0,
        );
    }

    #[test]
    fn ranges_with_dashes_and_l_prefixes() {
        check(
            "RELEVANT_FILES:\n- a.py:L10-L20\n- b.py:10\u{2013}20\n- c.py:L3\u{2014}L4\n- d.py: L7 \u{2013} L9\n",
            &[
                ("a.py", 10, 20),
                ("b.py", 10, 20),
                ("c.py", 3, 4),
                ("d.py", 7, 9),
            ],
            0,
        );
    }

    #[test]
    fn paths_outside_the_snapshot_are_dropped_with_a_note() {
        let parsed = parse_relevant_files(
            "RELEVANT_FILES:\n- /etc/passwd:1-2\n- ../x.py\n- /repo/../y.py:3\n- /repo/ok.py:4\n",
            "/repo",
        );
        let kept: Vec<&str> = parsed.regions.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(kept, ["ok.py"]);
        assert_eq!(parsed.skipped.len(), 3, "{:?}", parsed.skipped);
        assert!(parsed.skipped[0].contains("`- /etc/passwd:1-2`: outside the snapshot"));
    }

    #[test]
    fn duplicates_are_kept_once_in_order() {
        check(
            "RELEVANT_FILES:\n- a.py:1-5\n- b.py\n- a.py:1-5\n- b.py:3-4\n- ./a.py:1-5\n- a.py:6-9\n",
            &[("a.py", 1, 5), ("b.py", 1, -1), ("a.py", 6, 9)],
            0,
        );
    }

    #[test]
    fn claude_code_json_output_gives_the_answer_and_its_usage() {
        let stdout = r#"{"type":"result","subtype":"success","is_error":false,"num_turns":7,
            "result":"Looked around.\n\nRELEVANT_FILES:\n- src/a.py:3-9\n- src/b.py","total_cost_usd":0.0421,
            "usage":{"input_tokens":1200,"cache_read_input_tokens":300,"output_tokens":250,"server_tool_use":{"web_search_requests":0}}}"#;
        let agent = read_agent_output(stdout);
        let parsed = parse_relevant_files(&agent.text, "/repo");
        assert_eq!(parsed.regions.len(), 2);
        assert_eq!(
            agent.usage.unwrap(),
            serde_json::json!({"input_tokens": 1200, "cache_read_input_tokens": 300,
                               "output_tokens": 250, "cost_usd": 0.0421})
        );
    }

    #[test]
    fn codex_json_lines_give_the_last_message_and_summed_usage() {
        let stdout = [
            r#"{"type":"thread.started","thread_id":"t"}"#,
            r#"{"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"RELEVANT_FILES:\nwrong.py"}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":10,"output_tokens":5}}"#,
            r#"{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"rg x"}}"#,
            r#"{"type":"item.completed","item":{"id":"i2","type":"agent_message","text":"RELEVANT_FILES:\n- /testbed/x.py:2-3"}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":50,"cached_input_tokens":0,"output_tokens":7}}"#,
        ]
        .join("\n");
        let agent = read_agent_output(&stdout);
        let parsed = parse_relevant_files(&agent.text, "/repo");
        let got: Vec<(&str, i64, i64)> = parsed
            .regions
            .iter()
            .map(|r| (r.path.as_str(), r.start, r.end))
            .collect();
        assert_eq!(got, [("x.py", 2, 3)]);
        assert_eq!(
            agent.usage.unwrap(),
            serde_json::json!({"input_tokens": 150, "cached_input_tokens": 10, "output_tokens": 12})
        );
        // Plain text stays plain.
        assert_eq!(read_agent_output("RELEVANT_FILES:\na.py\n").usage, None);
    }

    #[test]
    fn prose_fallback() {
        check(
            "The bug is in src/a.py:40-45, and maybe `b/c.py:7`. See README.",
            &[("src/a.py", 40, 45), ("b/c.py", 7, 7)],
            0,
        );
        check("nothing useful here", &[], 0);
    }
}
