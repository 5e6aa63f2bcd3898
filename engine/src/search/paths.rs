//! What a file's path says about it: its role (source, test, documentation, example, vendored,
//! generated, declaration stub, re-export barrel) and the words of its name and folder, which
//! search queries often repeat (`router` for `routing/router.go`).
//!
//! Roles are read from the path alone (folder names and file-name conventions of the common
//! languages), never from contents, so they cost nothing per query.

use crate::lexical::tokenizer::{TokenLevel, for_each_token_with_level};

/// A file's role, as its path tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PathRole {
    pub test: bool,
    pub docs: bool,
    pub example: bool,
    pub vendored: bool,
    pub generated: bool,
    /// `.d.ts` declaration stubs.
    pub declaration: bool,
    /// Package re-export and metadata files (`__init__.py`, `package-info.java`, `mod.rs` is not
    /// one: it usually holds code).
    pub barrel: bool,
}

const TEST_DIRS: [&str; 8] = [
    "test",
    "tests",
    "__tests__",
    "spec",
    "specs",
    "testing",
    "testdata",
    "test_helpers",
];
const DOC_DIRS: [&str; 4] = ["doc", "docs", "documentation", "man"];
const EXAMPLE_DIRS: [&str; 8] = [
    "example",
    "examples",
    "samples",
    "sample",
    "demo",
    "demos",
    "docs_src",
    "benchmarks",
];
const VENDOR_DIRS: [&str; 6] = [
    "vendor",
    "vendored",
    "third_party",
    "thirdparty",
    "node_modules",
    "external",
];
const DOC_EXTENSIONS: [&str; 6] = ["md", "rst", "txt", "adoc", "markdown", "org"];

/// Test files by name, across languages: `test_x.py`, `x_test.go`, `XTest.java`, `XTests.cs`,
/// `x.test.ts`, `x.spec.js`, `x_spec.rb`, `XSpec.scala`, `XSuite.scala`, `x_test.exs`, `x.bats`.
fn is_test_file_name(name: &str) -> bool {
    let (stem, extension) = name.rsplit_once('.').unwrap_or((name, ""));
    let stem_lower = stem.to_ascii_lowercase();
    if matches!(stem_lower.as_str(), "test" | "tests")
        || stem_lower.starts_with("test_")
        || stem_lower.ends_with("_test")
        || stem_lower.ends_with("_tests")
        || stem_lower.ends_with("_spec")
        || stem_lower.ends_with(".test")
        || stem_lower.ends_with(".spec")
        || stem_lower.ends_with("-test")
        || stem_lower.ends_with("-spec")
        || extension == "bats"
    {
        return true;
    }
    // PascalCase conventions: `FooTest`, `FooTests`, `FooSpec`, `FooSuite`, `TestFoo` (not
    // `Test` alone, nor words such as `Contest` or `Latest`).
    let pascal = stem.starts_with(|c: char| c.is_ascii_uppercase());
    pascal
        && ["Test", "Tests", "Spec", "Suite", "IT"]
            .iter()
            .any(|suffix| stem.len() > suffix.len() && stem.ends_with(suffix))
        || stem.len() > 4
            && stem.starts_with("Test")
            && stem[4..].starts_with(|c: char| c.is_ascii_uppercase())
}

fn is_generated_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".min.js")
        || lower.ends_with(".min.css")
        || lower.ends_with(".pb.go")
        || lower.ends_with("_pb2.py")
        || lower.ends_with(".pb.h")
        || lower.ends_with(".pb.cc")
        || lower.contains(".generated.")
        || lower.contains(".g.")
        || lower.ends_with(".lock")
}

/// The role of the file at `path` (repository-relative, `/` separators).
pub fn path_role(path: &str) -> PathRole {
    let mut parts: Vec<&str> = path.split('/').collect();
    let name = parts.pop().unwrap_or("");
    let dirs_lower: Vec<String> = parts.iter().map(|d| d.to_ascii_lowercase()).collect();
    let in_dir = |names: &[&str]| dirs_lower.iter().any(|d| names.contains(&d.as_str()));
    let extension = name.rsplit_once('.').map_or("", |(_, e)| e);
    PathRole {
        test: in_dir(&TEST_DIRS) || is_test_file_name(name),
        docs: in_dir(&DOC_DIRS)
            || DOC_EXTENSIONS.contains(&extension.to_ascii_lowercase().as_str()),
        example: in_dir(&EXAMPLE_DIRS),
        vendored: in_dir(&VENDOR_DIRS),
        generated: is_generated_name(name),
        declaration: name.ends_with(".d.ts"),
        barrel: matches!(name, "__init__.py" | "package-info.java"),
    }
}

/// The words of a path's file stem and of its folder (lowercased tokens of the engine's
/// tokenizer, whole segments and sub-words): `lib/rack/mock_request.rb` gives `mock_request`,
/// `mock`, `request`, `rack`.
pub fn path_words(path: &str) -> Vec<String> {
    let mut parts = path.rsplit('/');
    let name = parts.next().unwrap_or("");
    let folder = parts.next().unwrap_or("");
    let stem = name.split_once('.').map_or(name, |(stem, _)| stem);
    let mut words: Vec<String> = Vec::new();
    for text in [stem, folder] {
        for_each_token_with_level(text, |token, _, _, level| {
            if level != TokenLevel::Compound && !words.iter().any(|w| w == token) {
                words.push(token.to_string());
            }
        });
    }
    words
}

/// A file's stem, lowercased, without `_` and `-`: what a symbol name is compared with
/// (`HttpClient` ↔ `http_client.py`).
pub fn normalized_stem(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split_once('.').map_or(name, |(stem, _)| stem);
    stem.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Suffixes of English inflection and derivation that code names and queries differ by.
const SUFFIXES: [&str; 17] = [
    "ations", "ation", "itions", "ition", "ings", "ing", "ions", "ion", "ers", "er", "ies", "ied",
    "es", "ed", "s", "y", "e",
];

/// The word and its stems: the word without each suffix of [`SUFFIXES`] that leaves at least
/// `min_stem` characters.
fn stems(word: &str, min_stem: usize) -> impl Iterator<Item = &str> {
    std::iter::once(word).chain(SUFFIXES.iter().filter_map(move |suffix| {
        word.strip_suffix(suffix)
            .filter(|stem| stem.len() >= min_stem)
    }))
}

/// Whether a query word and a path (or vocabulary) word are the same word up to inflection:
/// equal, or sharing a stem of at least `min_stem` characters (`dependency` ↔ `dependencies`,
/// `route` ↔ `router`, `parsing` ↔ `parser`, `class` ↔ `classes`; not `content` ↔ `context`).
pub fn words_match(a: &str, b: &str, min_stem: usize) -> bool {
    a == b || stems(a, min_stem).any(|x| stems(b, min_stem).any(|y| x == y))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_come_from_folders_and_file_names() {
        let check = |path: &str, expected: &str| {
            let r = path_role(path);
            let mut got = Vec::new();
            for (flag, name) in [
                (r.test, "test"),
                (r.docs, "docs"),
                (r.example, "example"),
                (r.vendored, "vendored"),
                (r.generated, "generated"),
                (r.declaration, "declaration"),
                (r.barrel, "barrel"),
            ] {
                if flag {
                    got.push(name);
                }
            }
            assert_eq!(got.join(","), expected, "{path}");
        };
        check("src/click/core.py", "");
        check("tests/test_core.py", "test");
        check("pkg/router_test.go", "test");
        check("src/test/java/a/RangeTest.java", "test");
        check("Dapper.Tests/QueryTests.cs", "test");
        check("core/src/test/scala/cats/EvalSuite.scala", "test");
        check("src/cart.spec.ts", "test");
        check("spec/rack/request_spec.rb", "test");
        check("test/plug/conn_test.exs", "test");
        check("test/run.bats", "test");
        check("tokio/src/time/tests.rs", "test");
        check("src/Contest.java", "");
        check("src/Latest.java", "");
        check("src/TestUtils.java", "test");
        check("docs/guide.md", "docs");
        check("README.md", "docs");
        check("examples/app.py", "example");
        check("docs_src/first.py", "example");
        check("vendor/lib/x.go", "vendored");
        check("api/x.pb.go", "generated");
        check("dist/zod.min.js", "generated");
        check("types/index.d.ts", "declaration");
        check("aiohttp/__init__.py", "barrel");
    }

    #[test]
    fn path_words_and_stems() {
        assert_eq!(
            path_words("lib/rack/mock_request.rb"),
            ["mock_request", "mock", "request", "rack"]
        );
        assert_eq!(
            path_words("Sources/Vapor/HTTP/HTTPServer.swift"),
            ["httpserver", "http", "server"]
        );
        assert_eq!(normalized_stem("src/http_client.py"), "httpclient");
        assert_eq!(normalized_stem("lua/lazy/core/plugin.lua"), "plugin");
        assert!(words_match("dependencies", "dependency", 4));
        assert!(words_match("route", "router", 4));
        assert!(words_match("parsing", "parser", 4));
        assert!(!words_match("map", "mapper", 4));
        assert!(!words_match("content", "context", 4));
        assert!(words_match("map", "map", 4));
        assert!(words_match("classes", "class", 4));
        assert!(words_match("composition", "compose", 4));
        assert!(words_match("scheduling", "scheduler", 4));
    }
}
