//! Ground truth from a fix patch, checked against golden files in `tests/data/fix/<case>/`:
//! `patch.diff`, the pre-fix files under `before/`, and `expected.json` (the `FixTruth`) or
//! `expected.error` (the error). The expected files were written by hand from the patches (the
//! rules are in docs/dataset.md); `SWEX_UPDATE_GOLDEN=1` rewrites them from the code, to be
//! read again by hand before committing.

use std::path::Path;
use swex_bench::fix::{FixTruth, patch, truth::snapshot_reader};

fn check(case: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fix")
        .join(case);
    let text = std::fs::read_to_string(dir.join("patch.diff")).unwrap();
    let files = patch::parse(&text).unwrap();
    let mut truth = FixTruth::from_patch(&files);
    let outcome = truth.add_definitions(Some(&files), &snapshot_reader(&dir.join("before")));
    let update = std::env::var_os("SWEX_UPDATE_GOLDEN").is_some();
    match outcome {
        Ok(()) => {
            let path = dir.join("expected.json");
            if update {
                std::fs::write(&path, serde_json::to_string_pretty(&truth).unwrap() + "\n")
                    .unwrap();
            }
            let expected: FixTruth =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            assert_eq!(
                truth,
                expected,
                "{case}: got {}",
                serde_json::to_string(&truth).unwrap()
            );
        }
        Err(error) => {
            let path = dir.join("expected.error");
            if update {
                std::fs::write(&path, format!("{error}\n")).unwrap();
            }
            let expected = std::fs::read_to_string(&path)
                .unwrap_or_else(|_| panic!("{case}: unexpected error {error}"));
            assert_eq!(error.to_string(), expected.trim_end(), "{case}");
        }
    }
}

#[test]
fn python_method_edit_insertion_and_new_file() {
    check("python");
}

#[test]
fn rust_impl_method_and_insertion_after_a_function() {
    check("rust");
}

#[test]
fn go_method_plain_unified_diff() {
    check("go");
}

#[test]
fn patch_that_does_not_apply_is_an_error() {
    check("no-apply");
}

#[test]
fn edited_lines_of_removals_and_insertions() {
    // Removed lines are themselves; a pure insertion marks the lines it sits between, and only
    // line `a` when it is appended at the end of the hunk's old range.
    let files = patch::parse(
        "--- a/x.txt\n+++ b/x.txt\n@@ -1,4 +1,5 @@\n a\n-b\n+B\n c\n+new\n d\n@@ -10,2 +11,3 @@\n j\n k\n+end\n",
    )
    .unwrap();
    assert_eq!(files[0].edited_lines(), vec![2, 3, 4, 11]);
    assert_eq!(
        files[0].claims_in(&[]),
        (vec![2], vec![(3, Some(4)), (11, None)])
    );
}

#[test]
fn truncated_hunk_and_missing_header_are_errors() {
    let short = patch::parse("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n").unwrap_err();
    assert_eq!(
        short.to_string(),
        "patch line 6: hunk `@@ -1,3 +1,3 @@` ends early: 1 old and 2 new lines missing"
    );
    let none = patch::parse("just text\n").unwrap_err();
    assert!(none.to_string().contains("no file header"), "{none}");
}

#[test]
fn java_method_replaced_and_method_added_in_its_class() {
    check("java");
}

#[test]
fn cpp_out_of_class_method_and_insertion_inside_a_function_body() {
    check("cpp");
}

/// Ground-truth lines are `str.splitlines()` lines of the pre-fix text, the lines every metric
/// counts; a patch numbers `\n` lines. They part in a file with a lone `\r` (or a form feed, ...):
/// here `\n`-line 3 holds three splitlines lines, so `\n`-line 5 is splitlines line 7.
#[test]
fn lines_of_a_file_with_crlf_and_lone_cr_are_splitlines_lines() {
    let before = "def a():\r\n    return 1\r\n\r\r\r\ndef b():\r\n    return 2\r\n";
    let patch_text = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -4,2 +4,2 @@\n def b():\r\n-    return 2\r\n+    return 3\r\n";
    let files = patch::parse(patch_text).unwrap();
    let mut truth = FixTruth::from_patch(&files);
    // From the patch alone: its own (`\n`) numbering.
    assert_eq!(truth.lines["m.py"], [[5, 5]]);
    let read = |path: &str| (path == "m.py").then(|| before.to_string());
    truth.add_definitions(Some(&files), &read).unwrap();
    assert_eq!(truth.lines["m.py"], [[7, 7]]);
    let functions = truth.functions.as_ref().unwrap();
    assert_eq!(functions.edited, ["m.py:b"]);
    assert_eq!(functions.added.as_deref(), Some(&[][..]));
    // A pure insertion after `\n`-line 3 (splitlines lines 3 to 5) and before `\n`-line 4 marks
    // the splitlines lines it is inserted between, 5 and 6.
    let insert = "--- a/m.py\n+++ b/m.py\n@@ -3,2 +3,3 @@\n \r\r\r\n+# note\r\n def b():\r\n";
    let files = patch::parse(insert).unwrap();
    let mut truth = FixTruth::from_patch(&files);
    assert_eq!(truth.lines["m.py"], [[3, 4]]);
    truth.add_definitions(Some(&files), &read).unwrap();
    assert_eq!(truth.lines["m.py"], [[5, 6]]);
    assert_eq!(truth.functions.unwrap().edited, Vec::<String>::new());
}
