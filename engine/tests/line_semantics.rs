//! Every line number the engine exposes counts the lines Python's `str.splitlines()` yields (the
//! benchmark's lines), also on files whose separators are not `\n`: form feeds, lone `\r`, `\x85`,
//! U+2028 and the other rare ones. The expected numbers were checked with CPython's
//! `str.splitlines()` on the same bytes.

mod support;

use std::path::Path;
use swex_engine::analysis::FileAnalysis;
use swex_engine::index::{Engine, SearchFilters, SnapshotIndex};

/// Form feeds on their own lines, a CRLF line, U+2028 inside a comment and `\x85` inside a string.
const FORM_FEEDS_PY: &str = concat!(
    "import os\n",                   // 1
    "\x0c\n",                        // 2, 3
    "import sys\n",                  // 4
    "\n",                            // 5
    "def alpha():\n",                // 6
    "    return os.sep\n",           // 7
    "\x0c\n",                        // 8, 9
    "class Beta:\r\n",               // 10
    "    # note\u{2028}continued\n", // 11, 12
    "    def gamma(self):\n",        // 13
    "        return alpha()\n",      // 14
    "\n",                            // 15
    "\n",                            // 16
    "def epsilon():\n",              // 17
    "    marker = 'a\u{85}b'\n",     // 18, 19
    "    return sys.argv\n",         // 20
);

/// Old-Mac line endings: `\r` only, no `\n` at all (one tree-sitter row).
const CR_ONLY_C: &str = "int one(void)\r{\r  return 1;\r}\r\rint two(void) {\r  return one();\r}\r";

/// A text file cut by `\x0b`, U+2029 and `\x1c`.
const SEPARATORS_TXT: &str = "title\x0bfirst\u{2029}second\x1cthird\nfourth needle\n";

fn open(repo: &Path, cache: &Path) -> std::sync::Arc<SnapshotIndex> {
    for (path, text) in [
        ("pkg/ff.py", FORM_FEEDS_PY),
        ("src/cr.c", CR_ONLY_C),
        ("docs/seps.txt", SEPARATORS_TXT),
    ] {
        let abs = repo.join(path);
        std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
        std::fs::write(abs, text).unwrap();
    }
    let engine = Engine::new(support::test_config(cache));
    engine.open(repo).unwrap()
}

fn analysis<'a>(index: &'a SnapshotIndex, path: &str) -> &'a FileAnalysis {
    index.analysis(path).unwrap()
}

#[test]
fn every_exposed_line_number_counts_splitlines_lines() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let index = open(repo.path(), cache.path());

    // Line counts.
    for (path, lines) in [("pkg/ff.py", 20), ("src/cr.c", 8), ("docs/seps.txt", 5)] {
        assert_eq!(index.file(path).unwrap().line_count, lines, "{path}");
        assert_eq!(analysis(&index, path).line_count, lines, "{path}");
    }

    // Definitions: in the analysis, through `definitions(name)` and as graph nodes.
    let check_definition = |path: &str, qualified: &str, span: (u32, u32)| {
        let found = analysis(&index, path)
            .definitions
            .iter()
            .find(|d| d.qualified_name == qualified)
            .unwrap_or_else(|| panic!("{qualified} not defined in {path}"));
        assert_eq!(
            (found.start, found.end),
            span,
            "analysis span of {qualified}"
        );
        let hits = index.definitions(qualified);
        assert_eq!(hits.len(), 1, "{qualified}: {hits:?}");
        assert_eq!(
            (hits[0].start, hits[0].end),
            span,
            "definitions({qualified})"
        );
        let graph = index.graph();
        let node = graph.node(graph.definitions_named(qualified)[0]);
        assert_eq!((node.start, node.end), span, "graph node of {qualified}");
    };
    check_definition("pkg/ff.py", "alpha", (6, 7));
    check_definition("pkg/ff.py", "Beta", (10, 14));
    // The comment holding U+2028 is attached to the method below it.
    check_definition("pkg/ff.py", "Beta.gamma", (11, 14));
    check_definition("pkg/ff.py", "epsilon", (17, 20));
    check_definition("src/cr.c", "one", (1, 4));
    check_definition("src/cr.c", "two", (6, 8));

    // File nodes span the whole file.
    let graph = index.graph();
    let file = graph.node(graph.file_node("pkg/ff.py").unwrap());
    assert_eq!((file.start, file.end), (1, 20));
    assert_eq!(
        graph
            .node(graph.node_at("pkg/ff.py", 14).unwrap())
            .qualified_name,
        "Beta.gamma"
    );

    // Imports and references.
    let ff = analysis(&index, "pkg/ff.py");
    let imports: Vec<(&str, u32)> = ff
        .imports
        .iter()
        .map(|i| (i.module.as_str(), i.line))
        .collect();
    assert_eq!(imports, [("os", 1), ("sys", 4)]);
    let reference_line = |analysis: &FileAnalysis, name: &str| {
        analysis
            .references
            .iter()
            .find(|r| r.name == name)
            .map(|r| r.line)
    };
    assert_eq!(reference_line(ff, "alpha"), Some(14));
    assert_eq!(reference_line(analysis(&index, "src/cr.c"), "one"), Some(7));

    // Chunks partition 1..=line_count, and the lexical hits carry those spans.
    for path in ["pkg/ff.py", "src/cr.c", "docs/seps.txt"] {
        let chunks = index.chunks_of(path).unwrap();
        let mut next = 1;
        for chunk in chunks {
            assert_eq!(chunk.start, next, "{path}: {chunks:?}");
            next = chunk.end + 1;
        }
        assert_eq!(next - 1, index.file(path).unwrap().line_count, "{path}");
    }
    let hit = &index
        .search_text("epsilon marker", 1, &SearchFilters::default())
        .unwrap()[0];
    assert_eq!(
        (hit.path.as_str(), hit.start, hit.end),
        ("pkg/ff.py", 17, 20)
    );
    let hit = &index
        .search_text("two", 1, &SearchFilters::default())
        .unwrap()[0];
    assert_eq!((hit.path.as_str(), hit.start, hit.end), ("src/cr.c", 6, 8));
    // The chunk text the lexical index saw is the chunk's lines.
    assert!(
        index
            .chunk_text(hit.chunk_id)
            .unwrap()
            .starts_with("int two(void) {\n  return one();"),
        "{:?}",
        index.chunk_text(hit.chunk_id)
    );

    // Grep lines.
    let grep = |pattern: &str| -> Vec<(String, u32, String)> {
        index
            .grep(pattern, None, 10)
            .unwrap()
            .into_iter()
            .map(|h| (h.path, h.line, h.text))
            .collect()
    };
    assert_eq!(
        grep("argv"),
        [("pkg/ff.py".into(), 20, "    return sys.argv".into())]
    );
    assert_eq!(
        grep("^continued"),
        [("pkg/ff.py".into(), 12, "continued".into())]
    );
    assert_eq!(
        grep("return one"),
        [("src/cr.c".into(), 7, "  return one();".into())]
    );
    assert_eq!(
        grep("needle"),
        [("docs/seps.txt".into(), 5, "fourth needle".into())]
    );

    // read_lines: the same lines, without terminators.
    let read = |path: &str, start: u32, end: u32| index.read_lines(path, start, end).unwrap();
    assert_eq!(read("pkg/ff.py", 8, 10), ["", "", "class Beta:"]);
    assert_eq!(read("pkg/ff.py", 18, 19), ["    marker = 'a", "b'"]);
    assert_eq!(
        read("src/cr.c", 6, 99),
        ["int two(void) {", "  return one();", "}"]
    );
    assert_eq!(
        read("docs/seps.txt", 1, 5),
        ["title", "first", "second", "third", "fourth needle"]
    );
    assert!(read("docs/seps.txt", 6, 9).is_empty());
}

#[test]
fn read_lines_drops_invalid_utf8_like_the_benchmark() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(repo.path().join("latin1.txt"), b"caf\xe9\x0cnext\n").unwrap();
    let index = open(repo.path(), cache.path());
    assert_eq!(
        index.read_lines("latin1.txt", 1, 2).unwrap(),
        ["caf", "next"]
    );
    assert_eq!(index.file("latin1.txt").unwrap().line_count, 2);
}
