//! Progress of long engine work on stderr: one rewritten line on a terminal, a line every few
//! seconds otherwise (logs), nothing with `--quiet` — and nothing for work done within its first
//! half second (a warm index opens in tens of milliseconds; its stages would only be noise).

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use swex_engine::index::{Progress, Stage};

pub struct StderrProgress {
    quiet: bool,
    terminal: bool,
    started: Instant,
    last: Mutex<Option<(Instant, Stage)>>,
}

impl StderrProgress {
    pub fn new(quiet: bool) -> StderrProgress {
        StderrProgress {
            quiet,
            terminal: std::io::stderr().is_terminal(),
            started: Instant::now(),
            last: Mutex::new(None),
        }
    }

    /// Ends the progress line.
    pub fn finish(&self) {
        let last = self.last.lock().expect("progress");
        if !self.quiet && self.terminal && last.is_some() {
            err!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
        }
    }
}

/// Work shorter than this shows no progress at all.
const QUIET_START: Duration = Duration::from_millis(500);

impl Progress for StderrProgress {
    fn report(&self, stage: Stage, done: u64, total: u64) {
        if self.quiet || self.started.elapsed() < QUIET_START {
            return;
        }
        let mut last = self.last.lock().expect("progress");
        let interval = if self.terminal {
            Duration::from_millis(100)
        } else {
            Duration::from_secs(5)
        };
        let now = Instant::now();
        let stage_changed = last.is_none_or(|(_, s)| s != stage);
        if !stage_changed && last.is_some_and(|(t, _)| now - t < interval) && done < total {
            return;
        }
        *last = Some((now, stage));
        let name = match stage {
            Stage::Walk => "listing files",
            Stage::Read => "reading",
            Stage::Analyze => "analysing",
            Stage::Index => "indexing",
            Stage::Graph => "building graph",
            Stage::Embed => "embedding chunks",
            Stage::VectorGraph => "building the HNSW graph",
        };
        let counts = if total > 0 {
            format!(" {done}/{total}")
        } else {
            String::new()
        };
        if self.terminal {
            err!("\r\x1b[2K{name}{counts}");
            let _ = std::io::stderr().flush();
        } else {
            errln!("{name}{counts}");
        }
    }
}
