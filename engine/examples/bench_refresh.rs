//! Cost of keeping an open index fresh ([`Engine::refresh`]): the stat check when nothing
//! changed, the refresh after an edit in place of one file, and after adding and then deleting a
//! file (a directory changes, so the tree is walked again). Prints medians (and min / max) of
//! `--runs` rounds in milliseconds.
//!
//! ```text
//! cargo run --release -p swex-engine --example bench_refresh -- SCRATCH_COPY [--runs N] [--file PATH]
//! ```
//!
//! It edits files in the tree it is given, so give it a scratch copy of a snapshot (the edited file
//! is restored at the end). `--file` is the repository-relative file to edit (default: the largest
//! Python file under 2,000 lines). The cache goes to a fresh temporary folder.

use std::path::PathBuf;

#[path = "support/cpu.rs"]
mod cpu;
use cpu::cpu_seconds;
use std::time::Instant;
use swex_engine::index::{Engine, EngineConfig, Refresh, SearchFilters, SnapshotIndex};

fn median(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn refreshed(
    engine: &Engine,
    index: &std::sync::Arc<SnapshotIndex>,
) -> std::sync::Arc<SnapshotIndex> {
    match engine.refresh(index).expect("refresh") {
        Refresh::Unchanged => panic!("the change was not seen"),
        Refresh::Updated { index, report } => {
            if std::env::var_os("BENCH_REFRESH_STEPS").is_some() {
                eprintln!("{:?}", report.timings_ms);
            }
            index
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut root: Option<PathBuf> = None;
    let mut runs = 9usize;
    let mut file: Option<String> = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).expect("--runs N"),
            "--file" => file = args.next(),
            _ => root = Some(PathBuf::from(arg)),
        }
    }
    let root = root.expect("usage: bench_refresh SCRATCH_COPY [--runs N] [--file PATH]");
    let cache = std::env::temp_dir().join(format!("swex-bench-refresh-{}", std::process::id()));
    let engine = Engine::new(EngineConfig {
        cache_dir: cache.clone(),
        ..EngineConfig::default()
    });
    let t = Instant::now();
    let mut index = engine.open(&root).expect("open");
    eprintln!("cold open {:.0} ms, {} files", ms(t), index.files().len());
    let file = file.unwrap_or_else(|| {
        index
            .files()
            .iter()
            .filter(|f| f.path.ends_with(".py") && f.line_count < 2000)
            .max_by_key(|f| f.line_count)
            .expect("a Python file")
            .path
            .clone()
    });
    let path = root.join(&file);
    let original = std::fs::read(&path).expect("read the file to edit");
    // Let stamps age past the racy window, as in a checkout made earlier.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    assert!(matches!(
        engine.refresh(&index).unwrap(),
        Refresh::Unchanged
    ));
    // CPU time of the plain check, over many calls (the clock ticks every 10 ms): on a busy
    // machine this says what a check costs better than wall time.
    let (cpu, wall) = (cpu_seconds(), Instant::now());
    let checks = 200;
    for _ in 0..checks {
        assert!(matches!(
            engine.refresh(&index).unwrap(),
            Refresh::Unchanged
        ));
    }
    println!(
        "check, nothing changed: {:.2} ms CPU and {:.2} ms wall per call (mean of {checks})",
        (cpu_seconds() - cpu) * 1e3 / checks as f64,
        wall.elapsed().as_secs_f64() * 1e3 / checks as f64
    );
    let (mut unchanged, mut edit, mut add, mut delete, mut search_after) =
        (vec![], vec![], vec![], vec![], vec![]);
    for round in 0..runs {
        let t = Instant::now();
        assert!(matches!(
            engine.refresh(&index).unwrap(),
            Refresh::Unchanged
        ));
        unchanged.push(ms(t));

        let word = format!("refreshbenchword{round}");
        let mut text = original.clone();
        text.extend_from_slice(format!("\n# {word}\n").as_bytes());
        std::fs::write(&path, &text).unwrap();
        let t = Instant::now();
        index = refreshed(&engine, &index);
        edit.push(ms(t));
        let t = Instant::now();
        let hits = index
            .search_text(&word, 5, &SearchFilters::default())
            .unwrap();
        search_after.push(ms(t));
        assert_eq!(hits.first().map(|h| h.path.as_str()), Some(file.as_str()));

        let added = root.join(format!("refresh_bench_{round}.py"));
        std::fs::write(&added, format!("def {word}_added():\n    pass\n")).unwrap();
        let t = Instant::now();
        index = refreshed(&engine, &index);
        add.push(ms(t));
        std::fs::remove_file(&added).unwrap();
        let t = Instant::now();
        index = refreshed(&engine, &index);
        delete.push(ms(t));
        // Directory stamps are racy right after a change: age them out between rounds, so each
        // round's "unchanged" measures the plain stat check.
        std::thread::sleep(std::time::Duration::from_millis(2100));
        if let Refresh::Updated { index: new, .. } = engine.refresh(&index).unwrap() {
            index = new;
        }
    }
    std::fs::write(&path, &original).unwrap();
    let _ = std::fs::remove_dir_all(&cache);
    println!(
        "{} files; edited {file}; {runs} rounds (ms: median [min, max])",
        index.files().len()
    );
    for (name, values) in [
        ("check, nothing changed", unchanged),
        ("refresh after an edit in place", edit),
        ("first search after the edit", search_after),
        ("refresh after adding a file", add),
        ("refresh after deleting it", delete),
    ] {
        let (m, lo, hi) = median(values);
        println!("| {name} | {m:.2} | [{lo:.2}, {hi:.2}] |");
    }
}
