//! Test ↔ subject pairing by file name.
//!
//! A test file names its subject (the naming is `swex_text::subjects`, one `TestNaming` per
//! language family): `test_foo.py`, `foo_test.py`, `foo_test.go`, `FooTest.java`,
//! `FooTests.java`, `FooIT.java`, `TestFoo.java`, `foo.test.ts`, `foo.spec.js`, `__tests__/foo.js`,
//! `foo_spec.rb`, `foo_test.rb`, `test_foo.rb`, `FooTest.php`, Rust `tests/foo.rs`, `foo_test.rs`,
//! C/C++ `foo_test.cc`, `foo_unittest.cc`, `test_foo.c`. The subject is a non-test file with that
//! stem and an extension of the same language family (for Python also a package `foo/__init__.py`).
//! Among several, the one whose directories best match the test's wins: shared leading directories
//! plus shared trailing directories once test directories (`tests/`, `test/`, `spec/`,
//! `__tests__/`…) are left out, so `src/test/java/a/FooTest.java` pairs with
//! `src/main/java/a/Foo.java` and `tests/migrations/test_writer.py` with
//! `django/db/migrations/writer.py`. Files inside test directories are only subjects of tests in
//! the same directory; equally placed candidates are ranked by extension (sources before headers,
//! `.ts` before `.js`); a remaining tie without any shared directory gives no edge; other ties go
//! to the shorter path, then alphabetical order.

use std::collections::HashMap;

use super::paths::{FileTable, dir_of, file_name};
use crate::analysis::Language;
use swex_text::paths::{Extension, file_stem};
use swex_text::subjects::{TestNaming, subject_stem};

/// What a test file's subject looks like.
pub(crate) struct SubjectPattern {
    pub stem: String,
    pub extensions: &'static [&'static str],
}

const PYTHON: &[&str] = &["py", "pyi"];
const JS: &[&str] = &["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts", "vue"];
const C_FAMILY: &[&str] = &["c", "cc", "cpp", "cxx", "c++", "h", "hh", "hpp", "hxx"];
const TEST_DIRS: [&str; 8] = [
    "test",
    "tests",
    "spec",
    "specs",
    "__tests__",
    "testing",
    "unit",
    "integration",
];

/// The subject pattern of a test file, or `None` when `path` is not a test by name: the stem
/// its language's convention names (`swex_text::subjects`), with the extensions of that family.
pub(crate) fn subject_of(path: &str, language: Option<Language>) -> Option<SubjectPattern> {
    let (naming, extensions) = match language? {
        Language::Python => (TestNaming::Python, PYTHON),
        Language::Go => (TestNaming::Go, &["go"][..]),
        Language::Java => (TestNaming::Java, &["java"][..]),
        Language::Php => (TestNaming::Php, &["php"][..]),
        Language::JavaScript | Language::TypeScript | Language::Tsx => (TestNaming::JavaScript, JS),
        Language::Ruby => (TestNaming::Ruby, &["rb"][..]),
        Language::Rust => (TestNaming::Rust, &["rs"][..]),
        Language::C | Language::Cpp => (TestNaming::CFamily, C_FAMILY),
        // No test pairing for other languages (Kotlin, Scala, C#, Swift, Elixir, Bash, Haskell,
        // Lua, Zig, and any language added to the table): no test edges.
        _ => return None,
    };
    Some(SubjectPattern {
        stem: subject_stem(path, naming)?.to_owned(),
        extensions,
    })
}

/// Module entry files stand for their directory: `foo/__init__.py`, `foo/mod.rs`, `foo/index.ts`.
fn is_entry_file(path: &str) -> bool {
    let name = file_name(path);
    name == "__init__.py" || name == "mod.rs" || file_stem(path, Extension::Last) == "index"
}

/// Candidate subjects by stem: every file under its stem, module entry files under their
/// directory's name.
pub(crate) fn stem_table<'a>(files: &FileTable<'a>) -> HashMap<&'a str, Vec<u32>> {
    let mut by_stem: HashMap<&str, Vec<u32>> = HashMap::new();
    for (index, path) in files.paths.iter().enumerate() {
        let key = if is_entry_file(path) {
            file_name(dir_of(path))
        } else {
            file_stem(path, Extension::Last)
        };
        if !key.is_empty() {
            by_stem.entry(key).or_default().push(index as u32);
        }
    }
    by_stem
}

/// The best subject for a test file, if any: see the module docs. Candidates inside a test
/// directory only count when they sit next to the test (helpers of a test suite are not subjects of
/// another suite's tests); among equally placed candidates the extension listed first in the
/// pattern wins (sources before headers, `.ts` before compiled `.js`, `.py` before `.pyi`); and a
/// tie with no directory in common is ambiguous: no edge rather than a guess.
pub(crate) fn find_subject(
    test: u32,
    pattern: &SubjectPattern,
    files: &FileTable,
    by_stem: &HashMap<&str, Vec<u32>>,
    languages: &[Option<Language>],
) -> Option<u32> {
    let test_path = files.path(test);
    let extension_rank = |path: &str| {
        let extension = path.rsplit_once('.').map_or("", |(_, e)| e);
        pattern.extensions.iter().position(|e| *e == extension)
    };
    let eligible: Vec<u32> = by_stem
        .get(pattern.stem.as_str())?
        .iter()
        .copied()
        .filter(|&candidate| {
            let path = files.path(candidate);
            candidate != test
                && extension_rank(path).is_some()
                && subject_of(path, languages[candidate as usize]).is_none()
                && (!in_test_directory(path) || subject_directory(path) == dir_of(test_path))
        })
        .collect();
    let best_affinity = eligible
        .iter()
        .map(|&c| directory_affinity(test_path, files.path(c)))
        .max()?;
    let placed: Vec<u32> = eligible
        .into_iter()
        .filter(|&c| directory_affinity(test_path, files.path(c)) == best_affinity)
        .collect();
    let best_rank = placed
        .iter()
        .filter_map(|&c| extension_rank(files.path(c)))
        .min()?;
    let top: Vec<u32> = placed
        .into_iter()
        .filter(|&c| extension_rank(files.path(c)) == Some(best_rank))
        .collect();
    if best_affinity == 0 && top.len() > 1 {
        return None;
    }
    top.into_iter().min_by(|&a, &b| {
        let (pa, pb) = (files.path(a), files.path(b));
        pa.len().cmp(&pb.len()).then(pa.cmp(pb))
    })
}

fn in_test_directory(path: &str) -> bool {
    dir_of(path).split('/').any(|d| TEST_DIRS.contains(&d))
}

/// The directory a subject stands in: its own, or the one above for a module entry file
/// (`pkg/foo/__init__.py` stands for `pkg/foo`, which sits in `pkg`).
fn subject_directory(path: &str) -> &str {
    if is_entry_file(path) {
        dir_of(dir_of(path))
    } else {
        dir_of(path)
    }
}

/// Shared leading directories plus shared trailing directories (test directories left out of the
/// test's side for the trailing comparison).
fn directory_affinity(test: &str, subject: &str) -> usize {
    let test_dirs: Vec<&str> = dir_of(test).split('/').filter(|d| !d.is_empty()).collect();
    let subject_dir = subject_directory(subject);
    let subject_dirs: Vec<&str> = subject_dir.split('/').filter(|d| !d.is_empty()).collect();
    let leading = test_dirs
        .iter()
        .zip(&subject_dirs)
        .take_while(|(a, b)| a == b)
        .count();
    let test_trailing: Vec<&str> = test_dirs
        .iter()
        .copied()
        .filter(|d| !TEST_DIRS.contains(d))
        .collect();
    let trailing = test_trailing
        .iter()
        .rev()
        .zip(subject_dirs.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    leading + trailing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(path: &str, language: Language, expected: Option<&str>) {
        let stem = subject_of(path, Some(language)).map(|p| p.stem);
        assert_eq!(stem.as_deref(), expected, "{path}");
    }

    #[test]
    fn test_files_name_their_subject() {
        use Language::*;
        check("tests/test_foo.py", Python, Some("foo"));
        check("pkg/foo_test.py", Python, Some("foo"));
        check("pkg/foo.py", Python, None);
        check("pkg/conftest.py", Python, None);
        check("x/foo_test.go", Go, Some("foo"));
        check("src/test/java/a/FooTest.java", Java, Some("Foo"));
        check("src/test/java/a/TestFoo.java", Java, Some("Foo"));
        check("src/test/java/a/FooIT.java", Java, Some("Foo"));
        check("src/main/java/a/Testing.java", Java, None);
        check("src/foo.test.ts", TypeScript, Some("foo"));
        check("src/foo.spec.js", JavaScript, Some("foo"));
        check("src/__tests__/Button.tsx", Tsx, Some("Button"));
        check("spec/foo_spec.rb", Ruby, Some("foo"));
        check("tests/FooTest.php", Php, Some("Foo"));
        check("tests/parse.rs", Rust, Some("parse"));
        check("tests/common/mod.rs", Rust, None);
        check("src/parse.rs", Rust, None);
        check("src/foo_unittest.cc", Cpp, Some("foo"));
        check("test_foo.c", C, Some("foo"));
    }

    #[test]
    fn affinity_prefers_mirrored_directories() {
        assert!(
            directory_affinity(
                "src/test/java/a/b/FooTest.java",
                "src/main/java/a/b/Foo.java"
            ) > directory_affinity("src/test/java/a/b/FooTest.java", "other/Foo.java")
        );
        assert!(
            directory_affinity(
                "tests/migrations/test_writer.py",
                "django/db/migrations/writer.py"
            ) > directory_affinity("tests/migrations/test_writer.py", "django/core/writer.py")
        );
    }
}
