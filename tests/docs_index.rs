//! docs/README.md indexes every page of docs/: a page added without an entry (or an entry whose
//! page is gone) fails here.

#[test]
fn the_docs_index_lists_every_page() {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let index = std::fs::read_to_string(docs.join("README.md")).unwrap();
    let mut pages: Vec<String> = std::fs::read_dir(&docs)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md") && name != "README.md")
        .collect();
    pages.sort();
    let mut listed: Vec<String> = index
        .lines()
        .filter_map(|line| line.strip_prefix("- ["))
        .filter_map(|line| line.split("](").nth(1))
        .filter_map(|rest| rest.split(')').next())
        .map(str::to_owned)
        .collect();
    listed.sort();
    assert!(!pages.is_empty());
    assert_eq!(
        listed, pages,
        "docs/README.md and the pages of docs/ disagree"
    );
}
