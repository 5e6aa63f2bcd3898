//! Where the `use` marks of the located files come from: one `grep` of them, or — on a host
//! without `grep`, or for a file whose length the file list does not give — each file read whole.
//! The evidence is the same either way, down to a line longer than a `grep` match carries and a
//! path made of glob characters.

use std::sync::atomic::{AtomicUsize, Ordering};
use swex_engine::index::{Engine, EngineConfig};
use swex_explorer_swex::locate::{self, Inputs, LocateConfig, USE};
use swex_explorer_swex::rank::{Features, RankedFile};
use swex_plugin::ServiceError;
use swex_plugin::Services;
use swex_plugin::types::{
    ChunksArgs, ChunksResult, FileEntry, GrepArgs, GrepResult, ListFilesArgs, ReadLinesArgs,
    ReadLinesResult,
};
use swex_plugin_host::{EngineBackend, ServiceBackend};
use swex_plugin_serve::ServicesTable;
use swex_rankkit::localize::FileEvidence;

/// A name after byte 400 of a long line: past what a `grep` match's text carries.
fn long_line() -> String {
    format!(
        "note = \"{}\" + frobnicate_widget.__name__",
        "x".repeat(420)
    )
}

fn files() -> Vec<(&'static str, String)> {
    vec![
        (
            "pkg/widgets.py",
            [
                "from pkg.core import frobnicate_widget",
                "",
                "value = frobnicate_widget(1)",
                "",
                &long_line(),
                "frobnicate_widgets = 2",
                "WidgetError = frobnicate_widget and WidgetError",
            ]
            .join("\n"),
        ),
        (
            "pkg/core.py",
            "class WidgetError(Exception):\n    pass\n\n\ndef frobnicate_widget(n):\n    raise WidgetError(n)\n".to_owned(),
        ),
        (
            "pkg/[odd]{name},x.py",
            "# frobnicate_widget, but in a file named with glob characters\r\nx = 1\r\n".to_owned(),
        ),
        (
            "tests/test_core.py",
            "from pkg.core import frobnicate_widget\n\ndef test_it():\n    frobnicate_widget(2)\n".to_owned(),
        ),
    ]
}

/// The engine's services, counting the `grep` and `read_lines` calls; `grep` can be taken away.
struct Counted<'a> {
    engine: &'a EngineBackend,
    grep: bool,
    greps: AtomicUsize,
    reads: AtomicUsize,
}

impl<'a> Counted<'a> {
    fn new(engine: &'a EngineBackend, grep: bool) -> Counted<'a> {
        Counted {
            engine,
            grep,
            greps: AtomicUsize::new(0),
            reads: AtomicUsize::new(0),
        }
    }
}

impl ServiceBackend for Counted<'_> {
    fn backend_name(&self) -> &str {
        "counted"
    }
    fn contains_file(&self, path: &str) -> bool {
        self.engine.contains_file(path)
    }
    fn read_lines(&self, args: ReadLinesArgs) -> Result<ReadLinesResult, ServiceError> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.engine.read_lines(args)
    }
    fn chunks(&self, args: ChunksArgs) -> Result<ChunksResult, ServiceError> {
        self.engine.chunks(args)
    }
    fn grep(&self, args: GrepArgs) -> Result<GrepResult, ServiceError> {
        if !self.grep {
            return Err(self.unavailable(swex_plugin::types::ServiceId::Grep));
        }
        self.greps.fetch_add(1, Ordering::Relaxed);
        self.engine.grep(args)
    }
}

fn ranked(path: &str, score: f64, line_count: Option<u32>) -> RankedFile {
    RankedFile {
        path: path.to_owned(),
        score,
        features: Features::default(),
        is_test: path.starts_with("tests/"),
        vendored: false,
        line_count,
        language: Some("python".to_owned()),
    }
}

/// The evidence `locate::gather` collects over `backend`, with the files' lengths known or not.
fn gather<B: ServiceBackend>(backend: &B, files: &[FileEntry], lengths: bool) -> Vec<FileEvidence> {
    let count = |path: &str| {
        lengths
            .then(|| files.iter().find(|f| f.path == path)?.line_count)
            .flatten()
    };
    let sources = ["pkg/widgets.py", "pkg/core.py", "pkg/[odd]{name},x.py"];
    let ranked: Vec<RankedFile> = sources
        .iter()
        .enumerate()
        .map(|(i, path)| ranked(path, 3.0 - i as f64, count(path)))
        .collect();
    let tests = vec!["tests/test_core.py".to_owned()];
    let issue = swex_explorer_swex::issue::parse(
        "frobnicate_widget raises WidgetError\n\nCalling `frobnicate_widget(3)` fails.\n",
    );
    let listed: &[FileEntry] = if lengths { files } else { &[] };
    let inputs = Inputs {
        issue: &issue,
        ranked: &ranked,
        tests: &tests,
        hits: &[],
        definitions: &[],
        files: listed,
        top_k: 5,
    };
    let table = ServicesTable::new(backend);
    // SAFETY: the table outlives `services`.
    let services = unsafe { Services::from_raw(table.as_ptr()) }.expect("a table");
    locate::gather(&services, &inputs, &LocateConfig::default())
}

fn use_lines(evidence: &[FileEvidence], path: &str) -> Vec<u32> {
    let file = evidence.iter().find(|f| f.path == path).expect("gathered");
    file.marks
        .iter()
        .filter(|m| m.kind == USE)
        .map(|m| m.start)
        .collect()
}

#[test]
fn use_marks_from_one_grep_equal_those_from_reading_every_file() {
    let repo = tempfile::tempdir().unwrap();
    for (path, text) in files() {
        let abs = repo.path().join(path);
        std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
        std::fs::write(abs, text).unwrap();
    }
    let cache = tempfile::tempdir().unwrap();
    let engine = Engine::new(EngineConfig {
        cache_dir: cache.path().to_owned(),
        ..EngineConfig::default()
    });
    let engine = EngineBackend::new(engine.open(repo.path()).unwrap());
    let files = engine.list_files(ListFilesArgs::default()).unwrap().files;
    assert!(files.iter().all(|f| f.line_count.is_some()));

    let with_grep = Counted::new(&engine, true);
    let grepped = gather(&with_grep, &files, true);
    // One grep for the four files; only the long line is read again, in full.
    assert_eq!(with_grep.greps.load(Ordering::Relaxed), 1);
    assert_eq!(with_grep.reads.load(Ordering::Relaxed), 1);

    let without_grep = Counted::new(&engine, false);
    let read = gather(&without_grep, &files, true);
    assert_eq!(without_grep.reads.load(Ordering::Relaxed), 4);
    assert_eq!(grepped, read);

    let unknown_lengths = Counted::new(&engine, true);
    let read_too = gather(&unknown_lengths, &files, false);
    assert_eq!(unknown_lengths.greps.load(Ordering::Relaxed), 0);
    assert_eq!(grepped, read_too);

    // What the marks are: whole words outside imports, the long line's included.
    assert_eq!(use_lines(&grepped, "pkg/widgets.py"), [3, 5, 7]);
    assert_eq!(use_lines(&grepped, "pkg/[odd]{name},x.py"), [1]);
    assert_eq!(use_lines(&grepped, "tests/test_core.py"), [4]);
    let line_7 = grepped[0]
        .marks
        .iter()
        .find(|m| m.kind == USE && m.start == 7)
        .unwrap();
    assert!(line_7.label.contains("WidgetError"), "{line_7:?}");
}
