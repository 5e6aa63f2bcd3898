//! `swex models` on a machine without the assets: every command says what is missing and how to
//! fix it, and `check` fails with exit code 1. No network is used.

use std::process::Command;

fn swex_models(cache: &std::path::Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_swex"))
        .arg("models")
        .args(args)
        .env("SWEX_CACHE_DIR", cache)
        .env_remove("ORT_DYLIB_PATH")
        .output()
        .expect("swex runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn list_and_check_name_missing_assets_and_the_fix() {
    let cache = tempfile::tempdir().unwrap();
    let (code, text) = swex_models(cache.path(), &["list"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("all-MiniLM-L6-v2 int8 model: missing"),
        "{text}"
    );
    assert!(text.contains("run `swex models fetch`"), "{text}");

    let (code, text) = swex_models(cache.path(), &["check"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("missing"), "{text}");
}

#[test]
fn an_unknown_model_is_a_clear_error() {
    let cache = tempfile::tempdir().unwrap();
    let (code, text) = swex_models(cache.path(), &["check", "--model", "no-such-model"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("unknown model `no-such-model`"), "{text}");
}

#[test]
fn a_missing_python_makes_fetch_fail_with_the_reason() {
    let cache = tempfile::tempdir().unwrap();
    let (code, text) = swex_models(cache.path(), &["fetch", "--python", "/nonexistent/python3"]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("could not run `/nonexistent/python3 -m pip`"),
        "{text}"
    );
}
