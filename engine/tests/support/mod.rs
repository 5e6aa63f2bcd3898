//! Shared helpers of the engine's integration tests: loading fixture repositories, checking the
//! chunk invariants, golden files, the engine configuration the tests open indexes with.

#![allow(dead_code)] // each test crate uses a different subset

use std::path::{Path, PathBuf};

use swex_engine::analysis::FileAnalysis;
use swex_engine::index::EngineConfig;
use swex_engine::lang::{AnalyzeOptions, analyze, detect_language};
use swex_engine::lexical::pool::WriterOptions;

/// The defaults with the cache in `cache` and a writer sized for a test: one thread of 15 MB, not
/// up to four of 64 MB each (the default, sized for whole repositories), as tests run in
/// parallel.
pub fn test_config(cache: &Path) -> EngineConfig {
    EngineConfig {
        cache_dir: cache.to_path_buf(),
        writer: WriterOptions {
            threads: 1,
            memory_per_thread: 15 << 20,
        },
        ..EngineConfig::default()
    }
}

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A fixture repository: every file, analysed, in path order.
pub struct Fixture {
    pub name: String,
    pub files: Vec<FixtureFile>,
}

pub struct FixtureFile {
    pub path: String,
    pub text: String,
    pub analysis: FileAnalysis,
}

impl Fixture {
    pub fn load(name: &str) -> Fixture {
        let root = fixtures_dir().join(name);
        let mut paths = Vec::new();
        collect_files(&root, &root, &mut paths);
        paths.sort();
        let files = paths
            .into_iter()
            .map(|path| {
                let bytes = std::fs::read(root.join(&path))
                    .unwrap_or_else(|e| panic!("{name}/{path}: {e}"));
                let text = String::from_utf8(bytes)
                    .unwrap_or_else(|_| panic!("{name}/{path} is not UTF-8"));
                let language = detect_language(&path, text.as_bytes());
                let analysis = analyze(&path, language, &text, &AnalyzeOptions::default());
                FixtureFile {
                    path,
                    text,
                    analysis,
                }
            })
            .collect();
        Fixture {
            name: name.to_owned(),
            files,
        }
    }

    pub fn pairs(&self) -> Vec<(&str, &FileAnalysis)> {
        self.files
            .iter()
            .map(|f| (f.path.as_str(), &f.analysis))
            .collect()
    }

    pub fn file(&self, path: &str) -> &FixtureFile {
        self.files
            .iter()
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("fixture {} has no file {path}", self.name))
    }
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            collect_files(root, &path, out);
        } else {
            let relative = path.strip_prefix(root).expect("under root");
            out.push(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The analysis invariants every file must satisfy, whatever its content: chunks ordered,
/// non-overlapping, covering lines `1..=N` (`str.splitlines()` lines) exactly; definitions inside the file with valid
/// parents. Returns a description of the first violation.
pub fn check_invariants(text: &str, analysis: &FileAnalysis) -> Result<(), String> {
    let line_count = u32::try_from(swex_text::line_count(text)).unwrap_or(u32::MAX);
    let mut next = 1u32;
    for chunk in &analysis.chunks {
        if chunk.start != next {
            return Err(format!(
                "chunk {}-{} should start at {next}",
                chunk.start, chunk.end
            ));
        }
        if chunk.end < chunk.start {
            return Err(format!("chunk {}-{} is empty", chunk.start, chunk.end));
        }
        next = chunk.end + 1;
    }
    if next != line_count + 1 {
        return Err(format!(
            "chunks end at {} but the file has {line_count} lines",
            next - 1
        ));
    }
    for (index, definition) in analysis.definitions.iter().enumerate() {
        if definition.start < 1
            || definition.start > definition.end
            || definition.end > line_count.max(1)
        {
            return Err(format!(
                "definition {} has span {}-{} in {line_count} lines",
                definition.qualified_name, definition.start, definition.end
            ));
        }
        if let Some(parent) = definition.parent
            && parent as usize >= index
        {
            return Err(format!(
                "definition {} has parent {parent} after it",
                definition.qualified_name
            ));
        }
        if definition.name.is_empty() || definition.qualified_name.is_empty() {
            return Err(format!(
                "definition at {} has an empty name",
                definition.start
            ));
        }
    }
    for reference in &analysis.references {
        if reference.line < 1 || reference.line > line_count.max(1) {
            return Err(format!(
                "reference {} at line {} outside the file",
                reference.name, reference.line
            ));
        }
    }
    Ok(())
}

/// Compares `actual` with the golden file `tests/expect/<name>`; with `UPDATE_EXPECT=1` in the
/// environment, rewrites the golden file instead.
pub fn check_golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/expect")
        .join(name);
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("create tests/expect");
        std::fs::write(&path, actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_EXPECT=1 to create it)",
            path.display()
        )
    });
    if expected != actual {
        let first_difference = expected
            .lines()
            .zip(actual.lines())
            .position(|(e, a)| e != a)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        let show = |text: &str| {
            text.lines()
                .skip(first_difference)
                .take(5)
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "{} differs from the output at line {} (UPDATE_EXPECT=1 to accept):\n--- expected\n{}\n--- actual\n{}",
            path.display(),
            first_difference + 1,
            show(&expected),
            show(actual)
        );
    }
}
