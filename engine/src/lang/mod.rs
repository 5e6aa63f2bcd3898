//! Language detection and the tree-sitter analysers, one module per language family.
//!
//! Entry point: [`analyze`] turns a file's text into a [`FileAnalysis`]. It never panics and never
//! fails: files with syntax errors still yield chunks (tree-sitter recovers locally), and text
//! files without a grammar are cut in line windows. [`detect_language`] picks the language from a
//! path and the file's first bytes.
//!
//! # Lines
//! All spans and line numbers are 1-based closed intervals of the lines Python's
//! `str.splitlines()` yields — the lines the benchmark scores — and the chunks of a file cover
//! lines `1..=N` with `N` = [`FileAnalysis::line_count`] ([`swex_text::line_count`]).
//! Tree-sitter rows count `\n` only, so the analysers map node byte offsets through a
//! [`LineIndex`] instead; the two notions differ for files containing lone `\r`, form feeds,
//! `\x0b`, `\x1c`–`\x1e`, `\x85`, U+2028 or U+2029 (see [`swex_text::lines`]).
//!
//! # Chunking rules
//! Source files (the [`Language`]s of [`LANGUAGES`], one row each):
//! - Every definition (function, method, class, struct, enum, interface, trait, impl, module,
//!   namespace, constant, type alias) is recorded in [`FileAnalysis::definitions`] with its exact
//!   span, its parent and its qualified name: `Class.method` in Python, JavaScript, TypeScript,
//!   Java, Ruby and PHP; `Type::method` and `ns::Type::method` in Rust and C++; `Recv.Method` for Go
//!   methods. Decorators, attributes, annotations, `export`/`template<…>` prefixes and comments
//!   directly above a definition (no blank line between) belong to its span.
//! - Top-level definitions become chunks with exactly those spans; the lines between them become
//!   `Gap` chunks (imports, module-level code, blank lines), cut into even windows of at most
//!   [`AnalyzeOptions::window_lines`]. So every line belongs to exactly one chunk.
//! - A definition longer than [`AnalyzeOptions::max_chunk_lines`] is split: a container (class,
//!   struct, enum, interface, trait, impl, module, namespace) with members becomes a header chunk
//!   (the lines before its first member), a chunk per member (split again by the same rules), and
//!   gap chunks named after the container for the lines between and after members; a function, or
//!   a container without members, becomes even windows that all keep its kind and name.
//! - Constants and type aliases shorter than three lines do not get a chunk of their own: they stay
//!   in the surrounding gap.
//!
//! Vue and Svelte components are TypeScript ([`LanguageSpec::markup_extensions`]): their
//! `<script>` elements are analysed in place (`markup`), and their chunks cover the whole file
//! (the template and styles are gap chunks).
//!
//! Other text files (Markdown, reST, TOML, YAML, JSON, cfg, txt, …): `Window` chunks of
//! [`AnalyzeOptions::window_lines`] lines; Markdown and reST windows end just before a heading
//! once they hold a quarter of a window.
//!
//! # Imports and references
//! Imports are recorded as written (resolution to files needs the whole snapshot and happens in
//! [`crate::graph`]), with these conventions: Python relative imports keep their dots (`..mod`);
//! C/C++ includes keep their delimiters (`"x.h"`, `<x.h>`); Rust `mod x;` is recorded as `self::x`;
//! Ruby `require_relative 'x'` as `./x`; PHP `require __DIR__ . '/x.php'` as `./x.php`.
//! References are bare names of calls, types and attribute/field accesses; they are candidates
//! for the graph's name resolution, not resolved facts.
//!
//! This module knows nothing about other files, indexes or caches.

mod bash;
mod c_family;
mod chunk;
mod csharp;
mod detect;
mod elixir;
mod extract;
mod go;
mod haskell;
mod java;
mod javascript;
mod kotlin;
mod lua;
mod markup;
mod php;
mod python;
mod ruby;
mod rust;
mod scala;
mod swift;
mod table;
mod text;
mod zig;

use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use swex_text::LineIndex;
use tree_sitter::Parser;

pub use detect::detect_language;
pub use table::{LANGUAGES, Language, LanguageSpec, language_spec};

use crate::analysis::FileAnalysis;
use extract::Grammar;

/// Tunables of [`analyze`]. Part of an analysis cache key, hence `Hash` and serde.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct AnalyzeOptions {
    /// Size of the line windows of text files and the maximum size of a gap chunk.
    pub window_lines: u32,
    /// Definitions longer than this are split (see the module docs).
    pub max_chunk_lines: u32,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        Self {
            window_lines: 60,
            max_chunk_lines: 150,
        }
    }
}

/// Analyses one file. `language == None` gives line windows. Never panics, never fails.
pub fn analyze(
    path: &str,
    language: Option<Language>,
    text: &str,
    options: &AnalyzeOptions,
) -> FileAnalysis {
    analyze_with_lines(path, language, text, &LineIndex::new(text), options)
}

/// [`analyze`] for a caller that has the text's [`LineIndex`] already (and needs it afterwards).
pub fn analyze_with_lines(
    path: &str,
    language: Option<Language>,
    text: &str,
    lines: &LineIndex,
    options: &AnalyzeOptions,
) -> FileAnalysis {
    let line_count = lines.line_count();
    let windows = || FileAnalysis {
        language,
        line_count,
        chunks: text::text_windows(path, text, line_count, options.window_lines).into(),
        package: manifest_package(path, text),
        ..FileAnalysis::default()
    };
    let Some(grammar) = language.and_then(grammar_of) else {
        return windows();
    };
    let Some(language) = language else {
        return windows();
    };
    // Parsing and extraction are not expected to panic; if a grammar ever does on some input, the
    // file still gets windows rather than taking the whole index down.
    let analysed = catch_unwind(AssertUnwindSafe(|| {
        if is_markup_of(path, language) {
            // Same bytes and lines as `text`, only its scripts left (`markup`).
            let scripts = markup::script_only(text);
            analyze_source(language, grammar, &scripts, lines, options)
        } else {
            analyze_source(language, grammar, text, lines, options)
        }
    }));
    match analysed {
        Ok(Some(mut analysis)) => {
            analysis.line_count = line_count;
            analysis
        }
        Ok(None) | Err(_) => FileAnalysis {
            has_syntax_errors: true,
            ..windows()
        },
    }
}

fn analyze_source(
    language: Language,
    grammar: &dyn Grammar,
    text: &str,
    lines: &LineIndex,
    options: &AnalyzeOptions,
) -> Option<FileAnalysis> {
    let (tree, names) = parse_with_names(language, text)?;
    let root = tree.root_node();
    let extraction = extract::extract(grammar, names, root, text, lines);
    let limits = chunk::ChunkLimits {
        window_lines: options.window_lines,
        max_chunk_lines: options.max_chunk_lines,
    };
    let chunks = chunk::chunk_definitions(&extraction.definitions, lines.line_count(), &limits);
    Some(FileAnalysis {
        language: Some(language),
        line_count: 0,
        chunks: chunks.into(),
        definitions: extraction.definitions.into(),
        imports: extraction.findings.imports.into(),
        references: extraction.findings.references.into(),
        package: extraction.findings.package,
        has_syntax_errors: root.has_error(),
    })
}

/// The module path of a `go.mod` and the crate name of a `Cargo.toml` (`-` read as `_`, as in
/// `use` paths): what the graph needs to resolve Go imports and Rust cross-crate `use`s.
fn manifest_package(path: &str, text: &str) -> Option<String> {
    let file_name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    match file_name {
        "go.mod" => text.lines().find_map(|line| {
            let module = line.trim().strip_prefix("module")?;
            let module = module.trim().trim_matches('"');
            (!module.is_empty() && !module.contains(char::is_whitespace)).then(|| module.to_owned())
        }),
        "Cargo.toml" => {
            let mut in_package = false;
            for line in text.lines() {
                let line = line.trim();
                if line.starts_with('[') {
                    in_package = line == "[package]";
                } else if in_package
                    && let Some((key, value)) = line.split_once('=')
                    && key.trim() == "name"
                {
                    let name = value.trim().trim_matches('"').replace('-', "_");
                    return (!name.is_empty()).then_some(name);
                }
            }
            None
        }
        _ => None,
    }
}

/// Whether `path` is a markup file whose code in `language` sits in `<script>` elements
/// ([`LanguageSpec::markup_extensions`]: a Vue or Svelte component).
fn is_markup_of(path: &str, language: Language) -> bool {
    let file_name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    file_name.rsplit_once('.').is_some_and(|(_, extension)| {
        language_spec(language)
            .markup_extensions
            .iter()
            .any(|m| m.eq_ignore_ascii_case(extension))
    })
}

fn grammar_of(language: Language) -> Option<&'static dyn Grammar> {
    Some(language_spec(language).analyser)
}

fn ts_language(language: Language) -> tree_sitter::Language {
    (language_spec(language).grammar)()
}

/// A reusable parser and the names of its language's node kinds and fields.
struct LanguageTools {
    parser: Parser,
    names: &'static extract::SymbolNames,
}

/// The symbol names of `language`, made once per process (a few kilobytes per language; kept for
/// the process's life so that the walk can hand out `&'static str` kinds).
fn symbol_names(language: Language, ts: &tree_sitter::Language) -> &'static extract::SymbolNames {
    static MADE: Mutex<Vec<(Language, &'static extract::SymbolNames)>> = Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, names)) = made.iter().find(|(l, _)| *l == language) {
        return names;
    }
    let names: &'static extract::SymbolNames = Box::leak(Box::new(extract::SymbolNames::new(ts)));
    made.push((language, names));
    names
}

thread_local! {
    /// Parsers are cheap to reuse and not `Sync`: one per language and thread.
    static PARSERS: RefCell<HashMap<Language, LanguageTools>> = RefCell::new(HashMap::new());
}

/// The syntax tree of `text` and the names of its language's symbols.
fn parse_with_names(
    language: Language,
    text: &str,
) -> Option<(tree_sitter::Tree, &'static extract::SymbolNames)> {
    PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let tools = match parsers.entry(language) {
            std::collections::hash_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::hash_map::Entry::Vacant(entry) => {
                let ts = ts_language(language);
                let mut parser = Parser::new();
                parser.set_language(&ts).ok()?;
                entry.insert(LanguageTools {
                    parser,
                    names: symbol_names(language, &ts),
                })
            }
        };
        let tree = tools.parser.parse(text, None)?;
        Some((tree, tools.names))
    })
}

fn parse(language: Language, text: &str) -> Option<tree_sitter::Tree> {
    parse_with_names(language, text).map(|(tree, _)| tree)
}

/// The tree-sitter syntax tree of `text` as an S-expression: a debugging aid for writing grammars
/// and fixtures (see `examples/syntax_tree.rs`).
#[doc(hidden)]
pub fn debug_syntax_tree(language: Language, text: &str) -> Option<String> {
    parse(language, text).map(|tree| tree.root_node().to_sexp())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kind and field tables give what tree-sitter's own (slower) accessors give, for every
    /// node of trees with and without syntax errors, in every language.
    #[test]
    fn symbol_tables_agree_with_tree_sitter() {
        let samples = [
            (
                Language::Python,
                "@d\nclass A(B):\n    def f(self, x=1):\n        return g(x)[0]\n",
            ),
            (Language::Python, "def (:\n  x = = 1\nclass\n"),
            (
                Language::Rust,
                "impl<T> S<T> { fn f(&self) -> u8 { 1 } }\nfn g( {",
            ),
            (
                Language::JavaScript,
                "export const a = () => b.c(1); class D extends E { m() {} }",
            ),
            (
                Language::TypeScript,
                "interface I { x: number } function f<T>(a: T): T { return a }",
            ),
            (Language::Tsx, "const C = () => <div a={1}>x</div>;"),
            (
                Language::Go,
                "package p\nfunc (r *R) M(a int) error { return nil }\nfunc (",
            ),
            (Language::Java, "class A { @Override void m() { b.c(); } }"),
            (
                Language::C,
                "#include <x.h>\nint f(int a) { return g(a); }\nstruct",
            ),
            (
                Language::Cpp,
                "namespace n { template<class T> class C { void m(); }; }",
            ),
            (
                Language::Ruby,
                "module M\n  class A < B\n    def m; c(1); end\n  end\nend\n",
            ),
            (
                Language::Php,
                "<?php namespace N; class A { function m() { return B::c(); } }",
            ),
            (
                Language::Kotlin,
                "class A { fun m(x: Int) = b.c(x) }\nfun (\n",
            ),
            (
                Language::Scala,
                "object A { def m(x: Int): Int = b.c(x) }\ntrait",
            ),
            (
                Language::CSharp,
                "namespace N { class A { void M() { b.C(); } } }",
            ),
            (
                Language::Swift,
                "class A { func m() { b.c() } }\nextension A {",
            ),
            (
                Language::Elixir,
                "defmodule A.B do\n  def m(x) when x > 1, do: c(x)\nend\n",
            ),
            (Language::Bash, "f() { source ./x.sh; g \"$1\"; }\nif [ \n"),
            (
                Language::Haskell,
                "module A where\nf :: Int -> Int\nf x = g x\n",
            ),
            (
                Language::Lua,
                "local M = {}\nfunction M.f(x) return g(x) end\nreturn M\n",
            ),
            (
                Language::Zig,
                "const A = struct { fn m() void { b.c(); } };\nfn (",
            ),
        ];
        for (language, text) in samples {
            let (tree, names) = parse_with_names(language, text).expect("parse");
            let mut cursor = tree.walk();
            let mut visited = 0;
            loop {
                let node = cursor.node();
                assert_eq!(names.kind(node), node.kind(), "{language:?} {text:?}");
                assert_eq!(
                    names.field(&cursor),
                    cursor.field_name(),
                    "{language:?} {text:?}"
                );
                visited += 1;
                if cursor.goto_first_child() {
                    continue;
                }
                while !cursor.goto_next_sibling() {
                    if !cursor.goto_parent() {
                        break;
                    }
                }
                if cursor.depth() == 0 {
                    break;
                }
            }
            assert!(visited > 5, "{language:?}: walked {visited} nodes");
        }
        let (tree, names) = parse_with_names(Language::Python, "def (:\n").expect("parse");
        assert!(tree.root_node().has_error());
        let mut errors = 0;
        let mut stack = vec![tree.root_node()];
        while let Some(node) = stack.pop() {
            if node.is_error() {
                assert_eq!(names.kind(node), "ERROR");
                errors += 1;
            }
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
        assert!(errors > 0, "the sample has an ERROR node");
    }

    #[test]
    fn options_missing_from_json_take_their_defaults() {
        let options: AnalyzeOptions =
            serde_json::from_str(r#"{"window_lines": 40}"#).expect("parse");
        assert_eq!(
            options,
            AnalyzeOptions {
                window_lines: 40,
                ..AnalyzeOptions::default()
            }
        );
    }

    #[test]
    fn manifests_declare_their_package() {
        let check = |path: &str, text: &str, expected: Option<&str>| {
            assert_eq!(
                manifest_package(path, text).as_deref(),
                expected,
                "{path}: {text:?}"
            );
        };
        check(
            "go.mod",
            "// comment\nmodule example.com/shop\n\ngo 1.22\n",
            Some("example.com/shop"),
        );
        check(
            "sub/go.mod",
            "module \"example.com/quoted\"\n",
            Some("example.com/quoted"),
        );
        check("go.mod", "go 1.22\n", None);
        check(
            "Cargo.toml",
            "[package]\nname = \"geo-kit\"\n",
            Some("geo_kit"),
        );
        check(
            "crates/x/Cargo.toml",
            "[dependencies]\nname = \"no\"\n[package]\nversion = \"1\"\nname = \"x\"\n",
            Some("x"),
        );
        check("Cargo.toml", "[workspace]\nmembers = [\"a\"]\n", None);
        check("README.md", "module x\n", None);
    }

    #[test]
    fn text_files_get_windows_and_no_definitions() {
        let text = "key = 1\n".repeat(130);
        let analysis = analyze("config.toml", None, &text, &AnalyzeOptions::default());
        let spans: Vec<(u32, u32)> = analysis.chunks.iter().map(|c| (c.start, c.end)).collect();
        assert_eq!(spans, [(1, 60), (61, 120), (121, 130)]);
        assert!(
            analysis
                .chunks
                .iter()
                .all(|c| c.kind == crate::analysis::ChunkKind::Window)
        );
        assert!(analysis.definitions.is_empty() && analysis.imports.is_empty());
        assert_eq!(analysis.line_count, 130);
    }
}
