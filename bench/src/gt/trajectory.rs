//! The format-independent shape of a repair trajectory, and the trait every format reader
//! implements.
//!
//! A reader turns one parsed JSON document into [`Trajectory`] values: the agent's actions in
//! order, each with the observation the agent got back. Readers only translate: they decide what
//! the agent ran (a shell command, an editor view, an edit) and what it saw, never which files or
//! lines that amounts to — that is the read extractor's job ([`super::reads`]).

use serde_json::Value;
use std::fmt;
use std::path::PathBuf;

/// The trajectory formats swex reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// mini-swe-agent 1.x `.traj.json` (`trajectory_format: "mini-swe-agent-1"`): commands in
    /// ```` ```bash ```` blocks of assistant messages.
    MiniSweAgentV1,
    /// mini-swe-agent 2.x `.traj.json` (`trajectory_format: "mini-swe-agent-1.1"`): commands in
    /// `extra.actions`, tool calls or ```` ```mswea_bash_command ```` blocks.
    MiniSweAgentV2,
    /// SWE-agent `.traj`: a `trajectory` list of `{action, observation, state}` steps.
    SweAgent,
    /// OpenHands event logs: a list of action/observation events, alone or as the `history` of an
    /// evaluation record (`output.jsonl`).
    OpenHands,
    /// The reference release's unified format `{info, traj}` with chat messages.
    Unified,
}

impl Format {
    pub const ALL: [Format; 5] = [
        Format::MiniSweAgentV1,
        Format::MiniSweAgentV2,
        Format::SweAgent,
        Format::OpenHands,
        Format::Unified,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::MiniSweAgentV1 => "mini-swe-agent v1",
            Format::MiniSweAgentV2 => "mini-swe-agent v2",
            Format::SweAgent => "SWE-agent",
            Format::OpenHands => "OpenHands",
            Format::Unified => "unified {info, traj}",
        }
    }

    /// What a document of this format looks like, for "unknown format" reports.
    pub fn signature(self) -> &'static str {
        match self {
            Format::MiniSweAgentV1 => {
                "object with `messages` and `trajectory_format: \"mini-swe-agent-1\"`"
            }
            Format::MiniSweAgentV2 => {
                "object with `messages` and `trajectory_format: \"mini-swe-agent-1.1\"` (or later)"
            }
            Format::SweAgent => "object with a `trajectory` list of `{action, observation}` steps",
            Format::OpenHands => {
                "list of events with `action`/`observation` keys, or an object with such a `history`"
            }
            Format::Unified => "object with a `traj` message list (and `info`)",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the agent did in one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A shell command line, possibly several commands, pipelines and here-documents.
    Shell { command: String },
    /// An editor `view` of a file; `range` is `view_range` (1-based, `end == -1` = end of file).
    View {
        path: String,
        range: Option<(i64, i64)>,
    },
    /// A viewer that prints a window of numbered lines (SWE-agent `open`, `goto`, `scroll_*`,
    /// `search_file`). The shown lines are read from the observation; `path` is the file named by
    /// the command or the harness state (otherwise the observation's header names it); `opens`
    /// marks `open`, which the reference counts as reading the whole file.
    Window { path: Option<String>, opens: bool },
    /// A change to a file through an editor tool (not through the shell).
    Edit { path: String },
    /// An action the harness refused to run (e.g. mini-swe-agent's "exactly one action" rule).
    Rejected { text: String },
    /// Anything that neither reads nor edits repository files (submit, think, messages…).
    Other,
}

/// The harness cut the middle out of a long output: only `head` and `tail` reached the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elided {
    pub head: String,
    pub tail: String,
}

/// What the agent got back from an action, with the harness's wrapping removed where the reader
/// knows it (e.g. mini-swe-agent's `<returncode>`/`<output>` tags).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Observation {
    pub text: String,
    pub elided: Option<Elided>,
}

impl Observation {
    pub fn plain(text: impl Into<String>) -> Self {
        Observation {
            text: text.into(),
            elided: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Position of the step in the source document (message or event index), for provenance.
    pub index: usize,
    pub action: Action,
    pub observation: Option<Observation>,
    /// Absolute working directory the action ran in, when the format records it.
    pub cwd: Option<String>,
}

/// One trajectory, format-independent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trajectory {
    /// The file it came from.
    pub source: PathBuf,
    /// Position inside the file when the file holds several trajectories (JSONL), else 0.
    pub record: usize,
    pub format: Format,
    pub instance_id: Option<String>,
    pub model: Option<String>,
    /// Absolute path of the repository checkout inside the agent's environment (`/testbed`,
    /// `/workspace/<dir>`), when the format records it.
    pub workdir: Option<String>,
    /// The final patch (unified diff), when recorded.
    pub submission: Option<String>,
    pub steps: Vec<Step>,
}

/// A trajectory as a reader produces it; the loader adds where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedTrajectory {
    pub instance_id: Option<String>,
    pub model: Option<String>,
    pub workdir: Option<String>,
    pub submission: Option<String>,
    pub steps: Vec<Step>,
}

/// A document that claims to be of a format but breaks its structure. `pointer` is a JSON
/// pointer (`/messages/3/content`) to the offending field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pointer}: {message}")]
pub struct FormatError {
    pub pointer: String,
    pub message: String,
}

impl FormatError {
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        FormatError {
            pointer: pointer.into(),
            message: message.into(),
        }
    }
}

/// One trajectory format. Implementations live in [`super::formats`], one module each.
pub trait TrajectoryReader: Sync {
    fn format(&self) -> Format;

    /// Whether `doc` has this format's shape. Cheap and structural: look at keys and tags, do
    /// not parse steps.
    fn detects(&self, doc: &Value) -> bool;

    /// Read every trajectory in `doc` (one for most formats; an evaluation record may hold one
    /// per instance).
    fn read(&self, doc: &Value) -> Result<Vec<ParsedTrajectory>, FormatError>;
}
