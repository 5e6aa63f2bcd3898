//! The `swex` explorer's time against the size of the issue, to show its work is linear in the
//! input (an issue can be a multi-megabyte log). Issues of 10 KB to 8 MB of distinct path-like
//! tokens (`src/pkg12/mod3456.py`, `pkg12.mod3456.handler_78`, some in backticks) are explored on an in-memory snapshot of 5,000
//! Python files whose lexical search and definitions answer nothing, so the time is the
//! explorer's own: reading the issue (`swex_issue::ranking`), ranking, locating, planning. (The
//! engine's lexical search of the same text is measured end to end with `swex explore`, see
//! docs/explorer-swex.md, "Speed".)
//!
//! Run: `cargo run --release -p swex-explorer-swex --example issue_size [RUNS] [MAX_MB]`. Prints
//! one line per size: bytes, the median of RUNS runs (default 5) in milliseconds, and the median
//! per megabyte.

use std::time::Instant;
use swex_explorer_swex::Swex;
use swex_plugin::Request;
use swex_plugin::ServiceError;
use swex_plugin::types::{
    DefinitionsArgs, DefinitionsResult, FileInfoArgs, FileInfoResult, ListFilesArgs,
    ListFilesResult, ReadLinesArgs, ReadLinesResult, SearchArgs, SearchResult,
};
use swex_plugin_serve::{MemoryBackend, ServiceBackend};

/// Files, list and read from memory; no hits, no definitions.
struct Snapshot(MemoryBackend);

impl ServiceBackend for Snapshot {
    fn backend_name(&self) -> &str {
        "issue-size"
    }
    fn contains_file(&self, path: &str) -> bool {
        self.0.contains_file(path)
    }
    fn list_files(&self, args: ListFilesArgs) -> Result<ListFilesResult, ServiceError> {
        self.0.list_files(args)
    }
    fn file_info(&self, args: FileInfoArgs) -> Result<FileInfoResult, ServiceError> {
        self.0.file_info(args)
    }
    fn read_lines(&self, args: ReadLinesArgs) -> Result<ReadLinesResult, ServiceError> {
        self.0.read_lines(args)
    }
    fn lexical_search(&self, _args: SearchArgs) -> Result<SearchResult, ServiceError> {
        Ok(SearchResult::default())
    }
    fn definitions(&self, _args: DefinitionsArgs) -> Result<DefinitionsResult, ServiceError> {
        Ok(DefinitionsResult {
            definitions: Vec::new(),
        })
    }
}

/// A small deterministic generator (64-bit LCG), so every run explores the same issues.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below
    }
}

/// `bytes` of issue: a title, then distinct path-like tokens, eight to a line.
fn issue_of(bytes: usize, rng: &mut Lcg) -> String {
    let mut text = String::from("Loader crashes on plugin paths\n");
    let mut on_line = 0;
    while text.len() < bytes {
        let (pkg, module, n) = (rng.next(1000), rng.next(100_000), rng.next(100));
        let token = match rng.next(10) {
            0..=5 => format!("src/pkg{pkg}/mod{module}.py"),
            6..=8 => format!("pkg{pkg}.mod{module}.handler_{n}"),
            _ => format!("`src/pkg{pkg}/mod{module}.py`"),
        };
        text.push_str(&token);
        on_line += 1;
        text.push(if on_line % 8 == 0 { '\n' } else { ' ' });
    }
    text
}

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().map_or(5, |a| a.parse().expect("RUNS"));
    let max_mb: f64 = args.next().map_or(8.0, |a| a.parse().expect("MAX_MB"));
    let files = (0..5000).map(|i| {
        (
            format!("src/pkg{}/mod{i}.py", i % 1000),
            format!("def handler_{i}(x):\n    return x + {i}\n"),
        )
    });
    let snapshot = Snapshot(MemoryBackend::new(files));
    let mut rng = Lcg(24);
    let mut size = 10 * 1024;
    println!("bytes\tmedian_ms\tms_per_MB");
    while size as f64 <= max_mb * 1048576.0 + 1.0 {
        let issue = issue_of(size, &mut rng);
        let request = Request::new("bench", issue.as_str(), 5);
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let started = Instant::now();
                swex_plugin_serve::explore::<Swex>(&serde_json::Value::Null, &request, &snapshot)
                    .expect("explores");
                started.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        let mb = issue.len() as f64 / 1048576.0;
        println!("{}\t{median:.1}\t{:.1}", issue.len(), median / mb);
        // 10 KB, 40 KB, 160 KB, 640 KB, 2.5 MB, then 8 MB.
        size = if size * 4 > 8 << 20 && size < 8 << 20 {
            8 << 20
        } else {
            size * 4
        };
    }
}
