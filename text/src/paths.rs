//! What a repository path says about a file: its role (source, test, documentation, example,
//! vendored, generated or bundled, declaration stub, re-export barrel, auxiliary), from folder
//! names and the file-name conventions of the common languages — never from contents, so it costs
//! nothing. One rule reads the whole file list instead of one path: [`BundledLibraries`], the
//! folders of libraries copied in with their own licence. Two more say what is code: source in a
//! language swex has no grammar for ([`is_unparsed_source`]: `builtin.jq`, `parser.y`) is code
//! all the same, and a Python stub repeats the module beside it ([`mirrored_sources`]).
//!
//! One rule for every reader: the engine's ranked code search demotes by it, and the `swex`
//! explorer ranks by it (through the SDK, `swex_plugin::text::paths`). Vendored, generated,
//! bundled and auxiliary files stay searchable; rankers only weigh them down.
//!
//! ```
//! use swex_text::paths::path_role;
//!
//! assert!(path_role("tests/test_core.py").test);
//! assert!(path_role("third_party/zlib/inflate.c").vendored);
//! assert!(path_role("single_include/nlohmann/json.hpp").generated);
//! assert!(path_role("package-lock.json").generated);
//! assert!(path_role(".github/ISSUE_TEMPLATE/bug_report.md").auxiliary);
//! assert!(path_role("contrib/linux-kernel/decompress.c").auxiliary);
//! assert_eq!(path_role("src/click/core.py"), Default::default());
//! ```

/// A file's role, as its path tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PathRole {
    pub test: bool,
    pub docs: bool,
    pub example: bool,
    pub vendored: bool,
    pub generated: bool,
    /// Declaration stubs: TypeScript's `.d.ts` (and `.d.mts`, `.d.cts`), Python's `.pyi`: the types
    /// of code defined elsewhere (a Python stub's module often beside it: [`mirrored_sources`]).
    pub declaration: bool,
    /// Package re-export and metadata files (`__init__.py`, `package-info.java`, `mod.rs` is not
    /// one: it usually holds code).
    pub barrel: bool,
    /// Kept beside the project rather than in it: the repository's own tooling (`.github/`,
    /// `.gitlab/`, `.circleci/`: CI files, issue and pull-request templates) and code contributed
    /// around it in a top-level `contrib/` (ports, integrations, side tools). An issue written
    /// from a template repeats the template's words; a port repeats the library's.
    pub auxiliary: bool,
}

/// Folders of tests and their support, by name. `e2e/` holds end-to-end tests with the
/// fixtures and helpers they mount (Playwright's and Cypress's layout: `e2e/fixtures/Tree.svelte`
/// is no component of the library); `__mocks__/` holds Jest's stand-ins for modules.
const TEST_DIRS: [&str; 10] = [
    "test",
    "tests",
    "__tests__",
    "__mocks__",
    "e2e",
    "spec",
    "specs",
    "testing",
    "testdata",
    "test_helpers",
];
/// The parts of a dotted .NET project name that make it a test project (`Dapper.Tests`).
const TEST_PROJECT_PARTS: [&str; 6] = [
    "test",
    "tests",
    "unittests",
    "integrationtests",
    "functionaltests",
    "specs",
];
const DOC_DIRS: [&str; 4] = ["doc", "docs", "documentation", "man"];
/// Code that shows or measures the project. `benchmark/` and Rust's `benches/` too, but not
/// `bench/`: a crate or package of that name is often the project's own benchmark harness.
const EXAMPLE_DIRS: [&str; 10] = [
    "example",
    "examples",
    "samples",
    "sample",
    "demo",
    "demos",
    "docs_src",
    "benchmarks",
    "benchmark",
    "benches",
];
/// Sphinx-Gallery's folders of runnable guides, examples only at the top of a checkout
/// (Matplotlib's `tutorials/` holds long scripts that walk through the whole API in prose, and
/// match every issue's words; `galleries/` since 3.8): deeper down the same names are often the
/// product (a web app's `components/gallery/`).
const TOP_EXAMPLE_DIRS: [&str; 4] = ["tutorial", "tutorials", "gallery", "galleries"];
const VENDOR_DIRS: [&str; 12] = [
    "vendor",
    "vendored",
    "_vendor",
    "third_party",
    "thirdparty",
    "third-party",
    "node_modules",
    "bower_components",
    "external",
    "extern",
    "externals",
    "cextern",
];
/// Folders that hold copies of other projects only at the top of a checkout (`deps/` of Node.js or
/// Redis, `dependencies/` of simdjson's benchmarked parsers); deeper down the same names are usually
/// code of the project's own (`core/deps/`, FastAPI's `fastapi/dependencies/`).
const TOP_VENDOR_DIRS: [&str; 2] = ["deps", "dependencies"];
/// Bundles and generated amalgamations: what a build or a release script wrote, wherever they sit
/// (a single-header library's amalgamation goes by `single_include/` or `singleheader/`).
const GENERATED_DIRS: [&str; 6] = [
    "dist",
    "single_include",
    "singleheader",
    "single_header",
    "single-header",
    "amalgamation",
];
/// Build output folders, counted only at the top of a checkout: deeper down the same names hold
/// real code often enough (`pip/_internal/operations/build/`), and build output below the top is
/// almost always ignored by the checkout's own rules, which the index respects.
const TOP_GENERATED_DIRS: [&str; 2] = ["build", "_build"];
/// The repository's own tooling, wherever it sits: CI configuration and issue or pull-request
/// templates.
const TOOLING_DIRS: [&str; 3] = [".github", ".gitlab", ".circleci"];
/// Code contributed around the project (ports to other build systems or kernels, integrations,
/// side tools), counted only at the top of a checkout: deeper down `contrib` is often the
/// project's own code (Django's `django/contrib/`).
const TOP_AUXILIARY_DIRS: [&str; 1] = ["contrib"];
/// Lock files: written by package managers, never by hand.
const LOCK_FILES: [&str; 9] = [
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "go.sum",
    "cargo.lock",
    "yarn.lock",
    "poetry.lock",
    "pipfile.lock",
    "composer.lock",
];
const DOC_EXTENSIONS: [&str; 6] = ["md", "rst", "txt", "adoc", "markdown", "org"];

/// Extensions of source code in languages swex has no grammar for: jq, lexer and parser
/// generators (lex/flex, yacc/bison, re2c), Objective-C, Dart, OCaml, Julia, Perl, Erlang,
/// Clojure, F#, Solidity, shaders, Nim, Crystal, Groovy, Fortran, Cython (modules and
/// declarations), Protocol Buffers and R. Not data, prose or build files, and no extension the
/// engine parses (its language table is held to that by a test: CUDA is parsed as C++, Vue and
/// Svelte components as TypeScript).
const UNPARSED_SOURCE_EXTENSIONS: &[&str] = &[
    "jq", "y", "yy", "l", "ll", "re2c", "m", "mm", "dart", "ml", "mli", "jl", "pl", "pm", "erl",
    "hrl", "clj", "cljs", "fs", "fsx", "sol", "glsl", "wgsl", "nim", "cr", "groovy", "f90", "pyx",
    "pxd", "proto", "r",
];

/// Whether the file at `path` is source code in a language swex does not parse (by its
/// extension, `UNPARSED_SOURCE_EXTENSIONS`): code all the same, which a fix edits — jq's
/// `src/builtin.jq` defines half of jq's builtins, a `.y` grammar is what the generated parser
/// comes from. The engine indexes such files as line windows without definitions; a ranker that
/// takes only parsed files as code would never return one.
pub fn is_unparsed_source(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.rsplit_once('.').is_some_and(|(stem, extension)| {
        !stem.is_empty()
            && UNPARSED_SOURCE_EXTENSIONS
                .iter()
                .any(|known| known.eq_ignore_ascii_case(extension))
    })
}

/// A folder of tests by name: one of [`TEST_DIRS`], or tests of a kind or a language named with
/// an affix (`js_tests`, `tests-integration`, `test_examples`). Not `<x>-test` or `<x>_test`: a
/// crate or package so named is usually a library of test helpers (`tokio-test`) that fixes edit.
///
/// .NET and Xcode name test projects after what they test: a dotted project name with a test
/// part (`Dapper.Tests`, `Dapper.Tests.Performance`, `Microsoft.AspNetCore.Mvc.Core.Test`,
/// `Foo.UnitTests`; a space may add a target, `Dapper.Contrib.Tests NET45`), or a PascalCase
/// name ending in `Tests` (`DapperTests NET35`, `AlamofireTests`). Lower-case folders never
/// take the PascalCase rule: `contests/`, `latest/` stay sources.
fn is_test_dir(dir: &str, dir_lower: &str) -> bool {
    if TEST_DIRS.contains(&dir_lower)
        || dir_lower.ends_with("_tests")
        || dir_lower.ends_with("-tests")
        || ["test_", "test-", "tests_", "tests-"]
            .iter()
            .any(|prefix| dir_lower.starts_with(prefix))
    {
        return true;
    }
    let project = dir.split(' ').next().unwrap_or("");
    let dotted_test_part = project.split('.').skip(1).any(|part| {
        TEST_PROJECT_PARTS
            .iter()
            .any(|name| part.eq_ignore_ascii_case(name))
    });
    let pascal_tests = project.starts_with(|c: char| c.is_ascii_uppercase())
        && project.len() > "Tests".len()
        && project.ends_with("Tests");
    dotted_test_part || pascal_tests
}

/// Test files by name, across languages: `test_x.py`, `x_test.go`, `XTest.java`, `XTests.cs`,
/// `x.test.ts`, `x.spec.js`, `x_spec.rb`, `XSpec.scala`, `XSuite.scala`, `x_test.exs`, `x.bats`,
/// `TestFoo.java`, `TestsAsync.cs`, Cypress's `x.cy.ts` (JavaScript and TypeScript only: `cy` is
/// also Welsh's language code, `messages.cy.json`).
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
        || (stem_lower.ends_with(".cy") && is_script_extension(extension))
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
        || ["Test", "Tests"].iter().any(|prefix| {
            stem.len() > prefix.len()
                && stem.starts_with(prefix)
                && stem[prefix.len()..].starts_with(|c: char| c.is_ascii_uppercase())
        })
}

fn is_generated_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".min.js")
        || lower.ends_with(".min.css")
        || lower.ends_with(".min.mjs")
        || lower.ends_with(".bundle.js")
        || lower.ends_with(".pb.go")
        || lower.ends_with("_pb2.py")
        || lower.ends_with(".pb.h")
        || lower.ends_with(".pb.cc")
        || lower.contains(".generated.")
        || lower.contains(".g.")
        || lower.contains("amalgamat")
        // A component's declarations, which `svelte2tsx`, `sveld` or `vue-tsc` write from it.
        || lower.ends_with(".svelte.d.ts")
        || lower.ends_with(".vue.d.ts")
        || lower.ends_with(".lock")
        || LOCK_FILES.contains(&lower.as_str())
}

/// A versioned copy of a library in a static folder (`static/underscore-1.13.1.js`): vendored in
/// all but name.
fn is_versioned_static_asset(dirs_lower: &[String], name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    dirs_lower.iter().any(|d| d == "static")
        && (lower.ends_with(".js") || lower.ends_with(".css"))
        && lower.chars().any(|c| c.is_ascii_digit())
}

/// The role of the file at `path` (repository-relative, `/` separators).
pub fn path_role(path: &str) -> PathRole {
    let mut parts: Vec<&str> = path.split('/').collect();
    let name = parts.pop().unwrap_or("");
    let dirs_lower: Vec<String> = parts.iter().map(|d| d.to_ascii_lowercase()).collect();
    let in_dir = |names: &[&str]| dirs_lower.iter().any(|d| names.contains(&d.as_str()));
    let extension = name.rsplit_once('.').map_or("", |(_, e)| e);
    PathRole {
        test: parts
            .iter()
            .zip(&dirs_lower)
            .any(|(dir, lower)| is_test_dir(dir, lower))
            || is_test_file_name(name)
            || name == "conftest.py",
        docs: in_dir(&DOC_DIRS)
            || DOC_EXTENSIONS.contains(&extension.to_ascii_lowercase().as_str()),
        example: in_dir(&EXAMPLE_DIRS)
            || dirs_lower
                .first()
                .is_some_and(|d| TOP_EXAMPLE_DIRS.contains(&d.as_str())),
        vendored: in_dir(&VENDOR_DIRS)
            || dirs_lower
                .first()
                .is_some_and(|d| TOP_VENDOR_DIRS.contains(&d.as_str()))
            || is_versioned_static_asset(&dirs_lower, name),
        generated: in_dir(&GENERATED_DIRS)
            || dirs_lower
                .first()
                .is_some_and(|d| TOP_GENERATED_DIRS.contains(&d.as_str()))
            || is_generated_name(name),
        declaration: is_declaration_name(name),
        barrel: matches!(name, "__init__.py" | "package-info.java"),
        auxiliary: in_dir(&TOOLING_DIRS)
            || dirs_lower
                .first()
                .is_some_and(|d| TOP_AUXILIARY_DIRS.contains(&d.as_str())),
    }
}

/// Declaration stubs by file name: TypeScript's and Python's.
const DECLARATION_SUFFIXES: [&str; 4] = [".d.ts", ".d.mts", ".d.cts", ".pyi"];

fn is_declaration_name(name: &str) -> bool {
    DECLARATION_SUFFIXES
        .iter()
        .any(|suffix| name.len() > suffix.len() && name.ends_with(suffix))
}

/// The sources that the Python stub at `path` mirrors if they sit beside it (`a/x.pyi` →
/// `a/x.py`, `a/x.pyx`); empty for any other file. Such a stub (Matplotlib's, many libraries'
/// inline stubs) repeats its module's names and signatures one to one, without the code: a
/// reader, and the fix, want the module, so rankers can leave the twin out and count each name
/// once. A stub with no module beside it (the types of a compiled extension) is all there is and
/// stays. TypeScript's `.d.ts` is not read this way: a package's root `index.d.ts` beside
/// `index.js` declares the whole package's API, not that file's (axios), and fixes edit it.
pub fn mirrored_sources(path: &str) -> Vec<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.strip_suffix(".pyi") {
        Some(stem) if !stem.is_empty() => {
            let base = &path[..path.len() - ".pyi".len()];
            vec![format!("{base}.py"), format!("{base}.pyx")]
        }
        _ => Vec::new(),
    }
}

/// The folders of a repository that hold libraries bundled from other projects, from its list of
/// file paths (repository-relative, `/` separators), sorted: a folder below the root with a licence
/// file of its own (`LICENSE`, `COPYING`, `NOTICE`, `ICU-license.html`, `LICENSE-APACHE`, …; text,
/// not a `license_check.go`) whose name — lowercased, without its last extension — is none of the
/// root's. Files under such a
/// folder are vendored, like those of a `vendor/` folder.
///
/// Why the name test: a package of the project's own monorepo or workspace repeats the root's
/// licence (`packages/x/LICENSE` beside `LICENSE`, a crate's `LICENSE-MIT` beside the root's,
/// Django's `dispatch/license.txt` beside `LICENSE`), while a copied library brings its own (jq's
/// `src/decNumber/ICU-license.html` beside `COPYING`, scikit-learn's
/// `sklearn/svm/src/liblinear/COPYRIGHT`). A repository without a licence at its root gives none:
/// there is nothing to tell its own packages from copies.
///
/// ```
/// use swex_text::paths::BundledLibraries;
///
/// let jq = ["COPYING", "src/jv.c", "src/decNumber/ICU-license.html", "src/decNumber/decNumber.c"];
/// let bundled = BundledLibraries::find(jq);
/// assert_eq!(bundled.dirs(), ["src/decNumber".to_owned()]);
/// assert!(bundled.holds("src/decNumber/decNumber.c") && !bundled.holds("src/jv.c"));
/// let workspace = ["LICENSE-MIT", "crates/ignore/LICENSE-MIT", "crates/ignore/src/lib.rs"];
/// assert!(BundledLibraries::find(workspace).dirs().is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BundledLibraries {
    dirs: Vec<String>,
}

impl BundledLibraries {
    /// The bundled libraries of a repository, from its file paths (licences included).
    pub fn find<'a>(paths: impl IntoIterator<Item = &'a str>) -> BundledLibraries {
        BundledLibraries {
            dirs: bundled_library_dirs(paths),
        }
    }

    /// Their folders, sorted.
    pub fn dirs(&self) -> &[String] {
        &self.dirs
    }

    /// Whether `path` lies in one of them.
    pub fn holds(&self, path: &str) -> bool {
        self.dirs.iter().any(|dir| {
            path.strip_prefix(dir.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
        })
    }
}

fn bundled_library_dirs<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    // A licence is text: no extension, a document's, or a licence's own (`LICENSE.python`).
    const LICENCE_EXTENSIONS: [&str; 15] = [
        "txt", "md", "rst", "html", "htm", "markdown", "adoc", "org", "rtf", "pdf", "mit",
        "apache", "bsd", "gpl", "python",
    ];
    const LICENCE_WORDS: [&str; 6] = [
        "license",
        "licence",
        "copying",
        "copyright",
        "unlicense",
        "notice",
    ];
    let licence_name = |name: &str| -> Option<String> {
        let stem = file_stem(name, Extension::Last);
        // The word alone, or joined to another by `-` or `_` (`LICENSE-MIT`, `ICU-license`).
        let is_licence = LICENCE_WORDS.iter().any(|word| {
            let n = word.len();
            let at_start = stem.get(..n).is_some_and(|s| s.eq_ignore_ascii_case(word));
            let at_end = (stem.len().checked_sub(n))
                .and_then(|i| stem.get(i..))
                .is_some_and(|s| s.eq_ignore_ascii_case(word));
            let joined = |byte: Option<u8>| matches!(byte, Some(b'-' | b'_'));
            at_start && (stem.len() == n || joined(stem.as_bytes().get(n).copied()))
                || at_end && joined(stem.len().checked_sub(n + 1).map(|i| stem.as_bytes()[i]))
        });
        let extension = name[stem.len()..].trim_start_matches('.');
        let text = extension.is_empty()
            || LICENCE_EXTENSIONS
                .iter()
                .any(|e| e.eq_ignore_ascii_case(extension));
        (is_licence && text).then(|| stem.to_ascii_lowercase())
    };
    let mut root = std::collections::HashSet::new();
    let mut nested: Vec<(&str, String)> = Vec::new();
    for path in paths {
        match path.rsplit_once('/') {
            None => root.extend(licence_name(path)),
            Some((dir, name)) => nested.extend(licence_name(name).map(|stem| (dir, stem))),
        }
    }
    if root.is_empty() {
        return Vec::new();
    }
    let mut dirs: Vec<String> = nested
        .into_iter()
        .filter(|(_, stem)| !root.contains(stem))
        .map(|(dir, _)| dir.to_owned())
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// Which dots of a file name end its stem. The readers differ on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Extension {
    /// Only the last extension goes (`c.test.ts` → `c.test`); a name whose only dot leads it
    /// (`.bashrc`) is all stem. The code graph and the test naming of languages whose test
    /// affixes sit before the extension (`.test`, `.spec`), the issue parser's words of a frame's
    /// file, and a command explorer's default name.
    Last,
    /// Everything from the first dot goes (`c.test.ts` → `c`, `jquery.min.js` → `jquery`,
    /// `.bashrc` → ``). The code search's and the `swex` explorer's name of a file, compared
    /// with words and symbol names, which never hold a dot.
    All,
}

/// The file name of `path` (after its last `/`) without its extension (see [`Extension`]).
pub fn file_stem(path: &str, extension: Extension) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match extension {
        Extension::Last => name
            .rfind('.')
            .filter(|&dot| dot > 0)
            .map_or(name, |dot| &name[..dot]),
        Extension::All => name.split_once('.').map_or(name, |(stem, _)| stem),
    }
}

/// The name a module is known by: its [`file_stem`] up to the first dot, and for the entry file
/// of a folder the name of that folder — a Python package's `__init__` (`sympy/sets/__init__.py`
/// → `sets`), a JavaScript or TypeScript `index` (`src/plugin/utc/index.js` → `utc`), a Rust
/// `mod.rs` (`tokio/src/io/mod.rs` → `io`). An issue names the folder, never `index`.
pub fn module_stem(path: &str) -> &str {
    let stem = file_stem(path, Extension::All);
    let extension = path.rsplit_once('.').map_or("", |(_, e)| e);
    let entry = stem == "__init__"
        || stem == "index" && is_script_extension(extension)
        || stem == "mod" && extension == "rs";
    if entry {
        path.rsplit('/').nth(1).unwrap_or(stem)
    } else {
        stem
    }
}

/// JavaScript's and TypeScript's extensions (`js`, `mjs`, `cjs`, `jsx`, `ts`, `tsx`, `mts`, `cts`).
fn is_script_extension(extension: &str) -> bool {
    matches!(
        extension,
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "tsx" | "mts" | "cts"
    )
}

/// Which files have a dotted module path, and which file names stand for their folder. The
/// readers differ on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Modules {
    /// Python files only (`.py`, `.pyx`), `__init__` standing for its package: the `swex`
    /// explorer matches the issue's dotted names (`astropy.modeling.separable`), which are Python
    /// imports, and a `.rs` file must not answer them.
    Python,
    /// Every file, its last extension dropped, and the entry files of the common languages
    /// (`__init__`, `index`, `mod`) standing for their folder: the code graph qualifies the
    /// definitions of any language (`src/shapes/mod.rs` → `src.shapes`).
    AnyLanguage,
}

/// The dotted module path of a file (`a/b/c.py` → `a.b.c`, `a/b/__init__.py` → `a.b`), or `None`
/// when the rule gives the file none (see [`Modules`]).
pub fn module_path(path: &str, modules: Modules) -> Option<String> {
    let (stem, entries): (&str, &[&str]) = match modules {
        Modules::Python => (
            path.strip_suffix(".py")
                .or_else(|| path.strip_suffix(".pyx"))?,
            &["/__init__"],
        ),
        Modules::AnyLanguage => {
            let stem = match path.rfind('.') {
                Some(dot) if dot > path.rfind('/').map_or(0, |s| s + 1) => &path[..dot],
                _ => path,
            };
            (stem, &["/__init__", "/index", "/mod"])
        }
    };
    let module = entries
        .iter()
        .find_map(|entry| stem.strip_suffix(entry))
        .unwrap_or(stem);
    Some(module.replace('/', "."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_stubs_name_the_modules_they_mirror() {
        assert_eq!(
            mirrored_sources("lib/matplotlib/figure.pyi"),
            ["lib/matplotlib/figure.py", "lib/matplotlib/figure.pyx"]
        );
        assert_eq!(mirrored_sources("x.pyi"), ["x.py", "x.pyx"]);
        assert!(mirrored_sources("index.d.ts").is_empty());
        assert!(mirrored_sources("lib/figure.py").is_empty());
        assert!(mirrored_sources("lib/.pyi").is_empty());
    }

    #[test]
    fn unparsed_sources_by_extension() {
        for (path, expected) in [
            ("src/builtin.jq", true),
            ("src/parser.y", true),
            ("src/json.hpp.re2c", true),
            ("Sources/AppDelegate.m", true),
            ("lib/Parser.groovy", true),
            ("sklearn/tree/_tree.pyx", true),
            ("lib/Foo.PM", true),
            ("src/parser.c", false),
            ("docs/content/manual/manual.yml", false),
            ("data/fixture.json", false),
            ("Makefile", false),
            ("src/.l", false),
            ("README.md", false),
        ] {
            assert_eq!(is_unparsed_source(path), expected, "{path}");
        }
    }

    /// One row per path: its module path by each rule, where they differ and where they agree.
    #[test]
    fn module_paths_by_rule() {
        for (path, python, any) in [
            (
                "django/db/models/base.py",
                Some("django.db.models.base"),
                "django.db.models.base",
            ),
            (
                "django/db/models/__init__.py",
                Some("django.db.models"),
                "django.db.models",
            ),
            ("pkg/fast.pyx", Some("pkg.fast"), "pkg.fast"),
            ("src/shapes/mod.rs", None, "src.shapes"),
            ("web/index.ts", None, "web"),
            ("web/index.py", Some("web.index"), "web"),
            ("Makefile", None, "Makefile"),
            (".github/x", None, ".github.x"),
        ] {
            assert_eq!(
                module_path(path, Modules::Python).as_deref(),
                python,
                "{path}"
            );
            assert_eq!(
                module_path(path, Modules::AnyLanguage).as_deref(),
                Some(any),
                "{path}"
            );
        }
    }

    /// One row per path: its stem without the last extension, without all, and as a module.
    #[test]
    fn bundled_libraries_bring_a_licence_the_root_does_not_have() {
        let dirs = |paths: &[&str]| BundledLibraries::find(paths.iter().copied()).dirs;
        // Copies: a licence of another name than the root's, at any depth.
        assert_eq!(
            dirs(&[
                "COPYING",
                "src/decNumber/ICU-license.html",
                "src/decNumber/decNumber.c",
                "sklearn/svm/src/liblinear/COPYRIGHT",
                "lib/x/NOTICE.txt",
                "lib/x/LICENSE_APACHE",
            ]),
            vec!["lib/x", "sklearn/svm/src/liblinear", "src/decNumber"]
        );
        // The project's own packages repeat the root's licence, whatever its extension.
        assert!(
            dirs(&[
                "LICENSE",
                "LICENSE.python",
                "django/dispatch/license.txt",
                "packages/a/LICENSE.md",
                "crates/b/LICENSE-MIT",
                "LICENSE-MIT",
            ])
            .is_empty()
        );
        // Not licences: names that only contain the word, and a root without any licence.
        assert!(dirs(&["LICENSE", "src/licenses.py", "src/license_check.go"]).is_empty());
        assert!(dirs(&["README.md", "third/LICENSE"]).is_empty());
        // Names of any script are read without slicing inside a character.
        assert_eq!(
            dirs(&[
                "LICENSE",
                "lib/日本語ライセンス.txt",
                "lib/é/Lizenz-license.txt",
                "x/ü"
            ]),
            vec!["lib/é"]
        );
    }

    #[test]
    fn file_stems_drop_the_last_or_every_extension() {
        for (path, last, all, module) in [
            ("a/b/query.py", "query", "query", "query"),
            ("src/c.test.ts", "c.test", "c", "c"),
            ("static/jquery.min.js", "jquery.min", "jquery", "jquery"),
            ("Makefile", "Makefile", "Makefile", "Makefile"),
            ("home/.bashrc", ".bashrc", "", ""),
            ("sympy/sets/__init__.py", "__init__", "__init__", "sets"),
            ("__init__.py", "__init__", "__init__", "__init__"),
            ("k_means_.py", "k_means_", "k_means_", "k_means_"),
            // Entry files of JavaScript, TypeScript and Rust stand for their folder too.
            ("src/plugin/utc/index.js", "index", "index", "utc"),
            ("packages/ui/src/index.tsx", "index", "index", "src"),
            ("tokio/src/io/mod.rs", "mod", "mod", "io"),
            ("web/index.py", "index", "index", "index"),
            ("docs/index.md", "index", "index", "index"),
            ("src/mod.js", "mod", "mod", "mod"),
        ] {
            assert_eq!(file_stem(path, Extension::Last), last, "{path} last");
            assert_eq!(file_stem(path, Extension::All), all, "{path} all");
            assert_eq!(module_stem(path), module, "{path} module");
        }
    }

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
                (r.auxiliary, "auxiliary"),
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
        check("cypress/e2e/login.cy.ts", "test");
        check("src/pages/checkout.cy.jsx", "test");
        check("src/locales/messages.cy.json", "");
        check("src/locale/cy.js", "");
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
        check("tutorials/intermediate/legend_guide.py", "example");
        check("galleries/users_explain/axes/legend_guide.py", "example");
        check("src/components/gallery/Gallery.vue", "");
        check("benchmark/parse.cpp", "example");
        check("tokio/benches/sync_mpsc.rs", "example");
        check("bench/src/report.rs", "");
        check("vendor/lib/x.go", "vendored");
        check("extern/agg24-svn/src/agg_curves.cpp", "vendored");
        check("sklearn/externals/_arff.py", "vendored");
        check("cextern/wcslib/C/wcs.c", "vendored");
        check("api/x.pb.go", "generated");
        check("dist/zod.min.js", "generated");
        check("singleheader/simdjson.h", "generated");
        check("single_header/doctest.h", "generated");
        check("types/Dropdown.svelte.d.ts", "generated,declaration");
        check("src/components/Button.vue.d.ts", "generated,declaration");
        check("include/simdjson/header.h", "");
        check("types/index.d.ts", "declaration");
        check("lib/matplotlib/axes/_axes.pyi", "declaration");
        check("src/index.d.mts", "declaration");
        check("src/.pyi", "");
        check("aiohttp/__init__.py", "barrel");
        check("tests/conftest.py", "test");
        check("conftest.py", "test");
        check("deps/zlib/inflate.c", "vendored");
        check("src/core/deps/resolve.rs", "");
        check("dependencies/jsoncppdist/json/json.h", "vendored");
        check("fastapi/dependencies/utils.py", "");
        check("pip/_vendor/requests/models.py", "vendored");
        check(
            "sphinx/themes/basic/static/underscore-1.13.1.js",
            "vendored",
        );
        check("sphinx/themes/basic/static/searchtools.js", "");
        check("dist/index.cjs", "generated");
        check("build/lib/pkg/core.py", "generated");
        check("_build/html/index.js", "generated");
        check("src/pip/_internal/operations/build/wheel.py", "");
        check("packages/ui/dist/index.js", "generated");
        check("single_include/nlohmann/json.hpp", "generated");
        check("sqlite3-amalgamation.c", "generated");
        check("Cargo.lock", "generated");
        check("package-lock.json", "generated");
        check("web/app.bundle.js", "generated");
        check("lib/vendors.py", "");
        check("src/builder.py", "");
        // Issue templates repeat the words of every issue written from them; CI files and
        // contributed ports or tools sit beside the code a fix edits.
        check(".github/ISSUE_TEMPLATE/bug_report.md", "docs,auxiliary");
        check(".github/workflows/ci.yml", "auxiliary");
        check(".gitlab/issue_templates/Bug.md", "docs,auxiliary");
        check("contrib/linux-kernel/lib/zstd/decompress.c", "auxiliary");
        check("contrib/pzstd/Pzstd.cpp", "auxiliary");
        check("django/contrib/admin/options.py", "");
        check("src/github/client.js", "");
        // Folders named as tests of a kind or a language hold tests and their harness (a
        // bundled QUnit in `js_tests/`); a crate named `<x>-test` is a library of test helpers
        // that fixes edit, and stays a source.
        check("js_tests/qunit/qunit.js", "test");
        check("tests-integration/src/bin/test-mem.rs", "test");
        check("pkg/parsing/test_examples/ruletest1.py", "test");
        check("test-examples/ruletest9.py", "test");
        check("tokio-test/src/macros.rs", "");
        check("src/contests/score.py", "");
        // End-to-end tests mount fixtures and helpers of their own; Jest's module stand-ins.
        check("e2e/fixtures/TreeViewFixture.svelte", "test");
        check("e2e/helpers/window-listeners.ts", "test");
        check("packages/app/src/__mocks__/index.ts", "test");
        check("src/e2ee/crypto.ts", "");
        // .NET and Xcode test projects: the project folder says it, the files inside need not
        // (`Program.cs`, a copied `PetaPoco.cs` benchmarked against).
        check("Dapper.Tests/Program.cs", "test");
        check("Dapper.Tests.Performance/PetaPoco/PetaPoco.cs", "test");
        check("Dapper.Contrib.Tests NET45/Helpers.cs", "test");
        check("DapperTests NET35/Program.cs", "test");
        check(
            "src/Mvc/Mvc.Core/test/Microsoft.AspNetCore.Mvc.Core.Test/Routing.cs",
            "test",
        );
        check("Foo.UnitTests/Parser.cs", "test");
        check("Tests/AlamofireTests/SessionTests.swift", "test");
        check("Dapper NET40/SqlMapper.cs", "");
        check("Dapper.Contrib/Extensions/SqlMapperExtensions.cs", "");
        check("Dapper.Rainbow/Database.cs", "");
        check("src/Microsoft.Extensions.Testing.Abstractions/Host.cs", "");
        check("Sources/Tests/Runner.swift", "test");
        check("Sources/XCTestDynamicOverlay/Tests.swift", "test");
        check("src/latest/Contests.cs", "");
        check("src/Latest/Contests.cs", "");
        check("Dapper.Contrib.Tests NET45/TestsAsync.cs", "test");
        check("src/TestsuiteRunner.java", "");
    }
}
