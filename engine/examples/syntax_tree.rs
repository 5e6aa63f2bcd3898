//! Prints the tree-sitter syntax tree and the analysis of a file: a debugging aid for grammar work.
//!
//! `cargo run -p swex-engine --example syntax_tree -- path/to/file.py`

use swex_engine::lang::{AnalyzeOptions, analyze, debug_syntax_tree, detect_language};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: syntax_tree FILE");
        std::process::exit(2);
    };
    let bytes = std::fs::read(&path).unwrap_or_else(|err| {
        eprintln!("{path}: {err}");
        std::process::exit(1);
    });
    let text = String::from_utf8_lossy(&bytes);
    let language = detect_language(&path, &bytes);
    if let Some(language) = language
        && let Some(tree) = debug_syntax_tree(language, &text)
    {
        println!("{tree}\n");
    }
    let analysis = analyze(&path, language, &text, &AnalyzeOptions::default());
    println!(
        "{}",
        serde_json::to_string_pretty(&analysis).unwrap_or_default()
    );
}
