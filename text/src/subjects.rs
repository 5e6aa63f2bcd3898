//! Test ↔ subject naming: the stem of the file a test file names by its own name (`test_foo.py`,
//! `foo_test.go`, `FooTest.java`, `foo.spec.ts` all name `foo`).
//!
//! One rule with a named convention, [`TestNaming`], that differs on purpose between readers:
//! - the code graph draws a test → subject *edge* (`swex-engine`'s `graph::subjects`), which
//!   PageRank follows: a wrong edge misleads, so it reads each language's own convention, case
//!   and all ([`TestNaming::Python`] … [`TestNaming::CFamily`]), and then pairs the stem with a
//!   file of the same language family by directory;
//! - the `swex` explorer scores a *partner* test ([`TestNaming::AnyLanguage`]): a near miss costs
//!   a little score, a missed partner a signal, so it is case-blind, language-blind and forgives
//!   a plural and stray underscores (`tests/test_blueprints.py` ~ `flask/blueprints.py`,
//!   `test_k_means.py` ~ `k_means_.py`): [`subject_key`], [`subject_keys`], [`names_subject`].
//!
//! ```
//! use swex_text::subjects::{TestNaming, names_subject, subject_stem};
//!
//! assert_eq!(subject_stem("src/test/java/FooTest.java", TestNaming::Java), Some("Foo"));
//! assert_eq!(subject_stem("src/foo.test.ts", TestNaming::JavaScript), Some("foo"));
//! assert!(names_subject("tests/test_capture.py", "src/_pytest/capture.py"));
//! ```

use crate::paths::{Extension, file_stem, module_stem};

/// Which naming convention a test file is read by (see the module overview for why they differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TestNaming {
    /// `test_foo.py`, `foo_test.py`, `foo_tests.py`.
    Python,
    /// `foo_test.go`.
    Go,
    /// `FooTest.java`, `FooTests.java`, `FooIT.java`, `TestFoo.java`.
    Java,
    /// `FooTest.php`, `FooTests.php`, `TestFoo.php`.
    Php,
    /// `foo.test.ts`, `foo.spec.js`, `foo-test.js`, `foo_spec.tsx`, Cypress's `foo.cy.ts`,
    /// `__tests__/foo.js` (JavaScript, TypeScript, TSX).
    JavaScript,
    /// `foo_spec.rb`, `foo_test.rb`, `test_foo.rb`.
    Ruby,
    /// `foo_test.rs`, `foo_tests.rs`, `test_foo.rs`, and any file of a `tests/` folder but
    /// `mod.rs`, `main.rs` and `lib.rs` (an integration test is named after what it tests).
    Rust,
    /// `foo_test.cc`, `foo_unittest.cc`, `foo-test.c`, `foo.test.c`, `foo_tests.cpp`, `test_foo.c`.
    CFamily,
    /// Any language, case-blind: the module stem ([`module_stem`]) without `test_`, `_test`,
    /// `_tests`, `_spec`, or a bare `test` at either end, and without leading underscores.
    AnyLanguage,
}

/// The stem of the subject that the test file at `path` names under `naming`, as written in the
/// test's name; `None` when the name is not a test's under that convention.
pub fn subject_stem(path: &str, naming: TestNaming) -> Option<&str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let base = file_stem(path, Extension::Last);
    let folder = path.rfind('/').map_or("", |i| &path[..i]);
    let stem = match naming {
        TestNaming::Python => base
            .strip_prefix("test_")
            .or_else(|| base.strip_suffix("_test"))
            .or_else(|| base.strip_suffix("_tests")),
        TestNaming::Go => name.strip_suffix("_test.go"),
        TestNaming::Java | TestNaming::Php => base
            .strip_suffix("Tests")
            .or_else(|| base.strip_suffix("Test"))
            .or_else(|| {
                base.strip_suffix("IT")
                    .filter(|_| naming == TestNaming::Java)
            })
            .or_else(|| {
                base.strip_prefix("Test")
                    .filter(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()))
            }),
        TestNaming::JavaScript => [".test", ".spec", ".cy", "-test", "-spec", "_test", "_spec"]
            .iter()
            .find_map(|suffix| base.strip_suffix(suffix))
            .or((folder.rsplit('/').next() == Some("__tests__")).then_some(base)),
        TestNaming::Ruby => base
            .strip_suffix("_spec")
            .or_else(|| base.strip_suffix("_test"))
            .or_else(|| base.strip_prefix("test_")),
        TestNaming::Rust => {
            let in_tests_folder = path.starts_with("tests/") || path.contains("/tests/");
            base.strip_suffix("_test")
                .or_else(|| base.strip_suffix("_tests"))
                .or_else(|| base.strip_prefix("test_"))
                .or(
                    (in_tests_folder && !matches!(name, "mod.rs" | "main.rs" | "lib.rs"))
                        .then_some(base),
                )
        }
        TestNaming::CFamily => ["_unittest", "_test", "-test", ".test", "_tests"]
            .iter()
            .find_map(|suffix| base.strip_suffix(suffix))
            .or_else(|| base.strip_prefix("test_")),
        TestNaming::AnyLanguage => any_language_stem(module_stem(path)),
    };
    stem.filter(|stem| !stem.is_empty())
}

/// [`TestNaming::AnyLanguage`]'s affixes, compared case-blind; the stem keeps its case.
fn any_language_stem(base: &str) -> Option<&str> {
    let lower = base.to_ascii_lowercase();
    // ASCII lowercasing keeps every byte offset, so the affixes cut `base` where they cut `lower`.
    let cut = |affix_len: usize, prefix: bool| {
        if prefix {
            &base[affix_len..]
        } else {
            &base[..base.len() - affix_len]
        }
    };
    let stem = if lower.starts_with("test_") {
        cut(5, true)
    } else if lower.ends_with("_test") || lower.ends_with("_spec") {
        cut(5, false)
    } else if lower.ends_with("_tests") {
        cut(6, false)
    } else if lower.ends_with("test") {
        cut(4, false)
    } else if lower.starts_with("test") {
        cut(4, true)
    } else {
        return None;
    };
    Some(stem.trim_start_matches('_'))
}

/// The key a source file is found by from its tests under [`TestNaming::AnyLanguage`]: its
/// lowercase module stem without leading or trailing underscores (`_set_output.py` →
/// `set_output`, `k_means_.py` → `k_means`). Every source that [`names_subject`] pairs with a
/// test has its key among the test's [`subject_keys`], so a table by key finds them without a
/// scan.
pub fn subject_key(source: &str) -> String {
    module_stem(source)
        .trim_start_matches('_')
        .to_ascii_lowercase()
        .trim_end_matches('_')
        .to_owned()
}

/// The subject keys a test file's name can point at under [`TestNaming::AnyLanguage`]: its
/// lowercase subject stem without trailing underscores, and without a plural `s`.
pub fn subject_keys(test: &str) -> Vec<String> {
    let Some(stem) = subject_stem(test, TestNaming::AnyLanguage) else {
        return Vec::new();
    };
    let name = stem.to_ascii_lowercase().trim_end_matches('_').to_owned();
    let mut keys = vec![name.clone()];
    if let Some(singular) = name.strip_suffix('s') {
        keys.push(singular.trim_end_matches('_').to_owned());
    }
    keys
}

/// Whether `test` is, by name, the test module of `source` under [`TestNaming::AnyLanguage`]:
/// its subject stem is the source's lowercase module stem (leading underscores dropped, two
/// characters at least), that stem plus `s`, or that stem without trailing underscores.
pub fn names_subject(test: &str, source: &str) -> bool {
    let subject = module_stem(source)
        .trim_start_matches('_')
        .to_ascii_lowercase();
    if subject.len() < 2 {
        return false;
    }
    let Some(stem) = subject_stem(test, TestNaming::AnyLanguage) else {
        return false;
    };
    let t = stem.to_ascii_lowercase();
    t == subject || t == format!("{subject}s") || subject.trim_end_matches('_') == t
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestNaming::*;

    /// One row per test file: its language's convention, the stem under it and under
    /// [`TestNaming::AnyLanguage`]. Where they differ is where the readers want different things.
    #[test]
    fn test_files_name_their_subject() {
        for (path, naming, by_language, any_language) in [
            ("tests/test_foo.py", Python, Some("foo"), Some("foo")),
            ("pkg/foo_test.py", Python, Some("foo"), Some("foo")),
            ("pkg/foo.py", Python, None, None),
            ("pkg/conftest.py", Python, None, Some("conf")),
            (
                "tests/test__private.py",
                Python,
                Some("_private"),
                Some("private"),
            ),
            ("x/foo_test.go", Go, Some("foo"), Some("foo")),
            (
                "src/test/java/a/FooTest.java",
                Java,
                Some("Foo"),
                Some("Foo"),
            ),
            (
                "src/test/java/a/TestFoo.java",
                Java,
                Some("Foo"),
                Some("Foo"),
            ),
            ("src/test/java/a/FooIT.java", Java, Some("Foo"), None),
            // Language-blind, a word that merely starts or ends with `test` names a subject.
            ("src/main/java/a/Testing.java", Java, None, Some("ing")),
            ("src/main/java/a/Latest.java", Java, None, Some("La")),
            ("tests/FooTest.php", Php, Some("Foo"), Some("Foo")),
            ("tests/FooIT.php", Php, None, None),
            ("src/foo.test.ts", JavaScript, Some("foo"), None),
            ("src/foo.spec.js", JavaScript, Some("foo"), None),
            (
                "cypress/e2e/checkout.cy.ts",
                JavaScript,
                Some("checkout"),
                None,
            ),
            ("src/__tests__/Button.tsx", JavaScript, Some("Button"), None),
            ("spec/foo_spec.rb", Ruby, Some("foo"), Some("foo")),
            ("tests/parse.rs", Rust, Some("parse"), None),
            ("tests/common/mod.rs", Rust, None, None),
            ("src/parse.rs", Rust, None, None),
            (
                "src/foo_unittest.cc",
                CFamily,
                Some("foo"),
                Some("foo_unit"),
            ),
            ("test_foo.c", CFamily, Some("foo"), Some("foo")),
        ] {
            assert_eq!(subject_stem(path, naming), by_language, "{path} {naming:?}");
            assert_eq!(
                subject_stem(path, AnyLanguage),
                any_language,
                "{path} any language"
            );
        }
    }

    #[test]
    fn any_language_pairs_tests_with_their_sources() {
        for (test, source, expected) in [
            (
                "astropy/modeling/tests/test_separable.py",
                "astropy/modeling/separable.py",
                true,
            ),
            ("testing/test_capture.py", "src/_pytest/capture.py", true),
            (
                "sklearn/utils/tests/test_set_output.py",
                "sklearn/utils/_set_output.py",
                true,
            ),
            (
                "sklearn/cluster/tests/test_k_means.py",
                "sklearn/cluster/k_means_.py",
                true,
            ),
            ("pkg/foo_test.go", "pkg/foo.go", true),
            ("src/test/java/FooTest.java", "src/main/java/Foo.java", true),
            ("tests/test_blueprints.py", "src/flask/blueprints.py", true),
            ("tests/test_sets.py", "sympy/sets/__init__.py", true),
            ("test/plugin/utc_test.js", "src/plugin/utc/index.js", true),
            (
                "tokio/tests/io_split.rs",
                "tokio/src/io/split/mod.rs",
                false,
            ),
            ("tests/shapes_test.rs", "src/shapes/mod.rs", true),
            ("tests/test_utils.py", "requests/models.py", false),
            (
                "xarray/tests/test_dataset.py",
                "xarray/core/dataarray.py",
                false,
            ),
        ] {
            assert_eq!(names_subject(test, source), expected, "{test} ~ {source}");
            if expected {
                assert!(
                    subject_keys(test).contains(&subject_key(source)),
                    "{test} ~ {source}: {:?} vs {}",
                    subject_keys(test),
                    subject_key(source)
                );
            }
        }
    }
}
