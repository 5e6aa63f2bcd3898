//! Keeps `include/swex_plugin.h` in sync with the Rust ABI types: compiles a C program that
//! prints the size of every struct and the offset of every field, and compares with Rust's.

use std::mem::{offset_of, size_of};
use std::path::PathBuf;
use std::process::Command;
use swex_plugin::abi::*;

/// (C expression label, Rust value) for every struct size and field offset of the ABI.
fn rust_layout() -> Vec<(&'static str, usize)> {
    macro_rules! fields {
        ($ty:ident: $($field:ident),*) => {
            vec![(concat!("sizeof ", stringify!($ty)), size_of::<$ty>()),
                 $((concat!(stringify!($ty), ".", stringify!($field)), offset_of!($ty, $field))),*]
        };
    }
    let mut layout = Vec::new();
    layout.extend(fields!(SwexBytes: ptr, len));
    layout.extend(fields!(SwexBuffer: ptr, len));
    layout.extend(
        fields!(SwexServices: abi_version, struct_size, context, free_buffer, list_files,
        file_info, read_lines, chunks, lexical_search, dense_search, definitions, graph_neighbours,
        personalized_pagerank, grep, issue_clues),
    );
    layout.extend(
        fields!(SwexExplorerVTable: abi_version, struct_size, name, description, create,
        explore, free_buffer, destroy),
    );
    layout
}

fn c_program(layout: &[(&str, usize)]) -> String {
    let mut body = String::new();
    for (label, _) in layout {
        let expr = match label.strip_prefix("sizeof ") {
            Some(ty) => format!("sizeof({ty})"),
            None => {
                let (ty, field) = label.split_once('.').unwrap();
                format!("offsetof({ty}, {field})")
            }
        };
        body.push_str(&format!(
            "    printf(\"{label} %zu\\n\", (size_t){expr});\n"
        ));
    }
    format!(
        "#include <stdio.h>\n#include <stddef.h>\n#include \"swex_plugin.h\"\n\
         int main(void) {{\n{body}    printf(\"SWEX_ABI_VERSION %u\\n\", SWEX_ABI_VERSION);\n\
         printf(\"codes %d %d %d %d %d %d\\n\", SWEX_OK, SWEX_ERR_INVALID_INPUT, SWEX_ERR_FAILED,\n\
         SWEX_ERR_PANIC, SWEX_ERR_UNAVAILABLE, SWEX_ERR_NOT_FOUND);\n\
         printf(\"entry %s\\n\", SWEX_ENTRY_SYMBOL);\n    return 0;\n}}\n"
    )
}

#[test]
fn c_header_layout_matches_rust() {
    let layout = rust_layout();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("swex-plugin-c-header");
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("layout.c");
    let binary = dir.join("layout");
    std::fs::write(&source, c_program(&layout)).unwrap();
    let include = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
    let status = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror", "-I", include, "-o"])
        .arg(&binary)
        .arg(&source)
        .status()
        .expect("this test needs a C compiler named `cc` on PATH");
    assert!(status.success(), "the header does not compile cleanly");
    let output = Command::new(&binary).output().unwrap();
    let printed = String::from_utf8(output.stdout).unwrap();
    let mut expected: String = layout
        .iter()
        .map(|(label, value)| format!("{label} {value}\n"))
        .collect();
    expected.push_str(&format!("SWEX_ABI_VERSION {SWEX_ABI_VERSION}\n"));
    expected.push_str(&format!(
        "codes {SWEX_OK} {SWEX_ERR_INVALID_INPUT} {SWEX_ERR_FAILED} {SWEX_ERR_PANIC} {SWEX_ERR_UNAVAILABLE} {SWEX_ERR_NOT_FOUND}\n"
    ));
    expected.push_str(&format!("entry {SWEX_ENTRY_SYMBOL}\n"));
    assert_eq!(printed, expected);
}
