//! The title's rare words through the services: which words the `swex` explorer looks up (one
//! whole-file `lexical_search` of the word alone each), which count as rare (held by at most
//! `RARE_WORD_MAX_FILES` code files, documentation not counted, a full answer meaning a common
//! word), and the `title_rare_words` each candidate gets (its rarest word, over the best
//! candidate's), read from the explorer's debug notes.

use std::collections::BTreeMap;
use std::sync::Mutex;
use swex_explorer_swex::Swex;
use swex_explorer_swex::rare::{RARE_WORD_MAX_FILES, WORD_LOOKUP_LIMIT};
use swex_plugin::ServiceError;
use swex_plugin::types::{
    DefinitionsArgs, DefinitionsResult, FileEntry, ListFilesArgs, ListFilesResult, SearchArgs,
    SearchHit, SearchResult,
};
use swex_plugin::{Request, Response};
use swex_plugin_host::ServiceBackend;

/// A snapshot of code files, a document and a test; the issue's chunk searches touch the first
/// three sources, the whole-file search of a word answers the files `holders` gives it.
struct Words {
    files: Vec<FileEntry>,
    holders: BTreeMap<&'static str, Vec<String>>,
    asked: Mutex<Vec<String>>,
}

impl Words {
    fn new() -> Words {
        let mut files: Vec<FileEntry> = ["pkg/a.py", "pkg/b.py", "pkg/c.py", "tests/test_a.py"]
            .iter()
            .map(|p| FileEntry::new(*p, 100).with_language("python"))
            .collect();
        // Code files no signal touches, for the document frequencies.
        files.extend(
            (0..40).map(|i| {
                FileEntry::new(format!("pkg/other{i:02}.py"), 100).with_language("python")
            }),
        );
        files.push(FileEntry::new("docs/guide.md", 100));
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let many = |n: usize| {
            (0..n)
                .map(|i| format!("pkg/other{i:02}.py"))
                .collect::<Vec<_>>()
        };
        let docs = |n: usize| {
            (0..n)
                .map(|i| format!("docs/page{i:02}.md"))
                .collect::<Vec<_>>()
        };
        let with = |mut paths: Vec<String>, more: &[&str]| {
            paths.extend(more.iter().map(|p| p.to_string()));
            paths
        };
        let holders = BTreeMap::from([
            // Two code files: a source and a test (tests are code); the document does not count.
            (
                "spanish",
                with(vec![], &["pkg/a.py", "tests/test_a.py", "docs/guide.md"]),
            ),
            // Three code files.
            ("months", with(many(2), &["pkg/b.py"])),
            // Six code files: not rare.
            ("lowercase", with(many(4), &["pkg/b.py", "pkg/c.py"])),
            // A full answer: a common word, though only one code file is among the hits.
            ("names", with(docs(WORD_LOOKUP_LIMIT - 1), &["pkg/c.py"])),
            // Only in documentation: no code file holds it.
            ("guide", with(vec![], &["docs/guide.md"])),
        ]);
        Words {
            files,
            holders,
            asked: Mutex::new(Vec::new()),
        }
    }
}

impl ServiceBackend for Words {
    fn backend_name(&self) -> &str {
        "words"
    }
    fn contains_file(&self, path: &str) -> bool {
        self.files.iter().any(|f| f.path == path)
    }
    fn list_files(&self, _args: ListFilesArgs) -> Result<ListFilesResult, ServiceError> {
        Ok(ListFilesResult {
            files: self.files.clone(),
        })
    }
    fn lexical_search(&self, args: SearchArgs) -> Result<SearchResult, ServiceError> {
        let hit = |path: &str| SearchHit::new(path, 1, 10, 1.0);
        let hits = match (args.whole_files, args.terms.as_slice()) {
            (true, [term]) => {
                self.asked.lock().unwrap().push(term.text.clone());
                let holders = self
                    .holders
                    .get(term.text.as_str())
                    .cloned()
                    .unwrap_or_default();
                holders.iter().take(args.limit).map(|p| hit(p)).collect()
            }
            // The issue's and the title's searches: the three sources and the test.
            _ => ["pkg/a.py", "pkg/b.py", "pkg/c.py", "tests/test_a.py"]
                .iter()
                .map(|p| hit(p))
                .collect(),
        };
        Ok(SearchResult::new(hits))
    }
    fn definitions(&self, _args: DefinitionsArgs) -> Result<DefinitionsResult, ServiceError> {
        Ok(DefinitionsResult {
            definitions: Vec::new(),
        })
    }
}

#[test]
fn each_candidate_gets_the_rarest_title_word_it_holds() {
    let backend = Words::new();
    let issue = "Spanish months and guide names should be lowercase\n\nSee the guide.\n";
    let request = Request::new("x", issue, 5);
    let config = serde_json::json!({"debug": true});
    let response: Response =
        swex_plugin_serve::explore::<Swex>(&config, &request, &backend).expect("explores");

    // Each word of the title once, alone, over whole files; stop words never.
    let asked = backend.asked.lock().unwrap().clone();
    for word in ["spanish", "months", "guide", "names", "lowercase"] {
        assert_eq!(
            asked.iter().filter(|w| *w == word).count(),
            1,
            "{word}: {asked:?}"
        );
    }
    assert!(!asked.iter().any(|w| w == "and"), "{asked:?}");

    let rare: BTreeMap<String, f64> = response
        .notes
        .iter()
        .filter_map(|n| serde_json::from_str::<serde_json::Value>(n).ok())
        .filter_map(|v| {
            let path = v.get("rank_file")?.as_str()?.to_owned();
            Some((path, v.get("title_rare_words")?.as_f64()?))
        })
        .collect();
    // 44 code files; `spanish` is held by 2 of them, `months` by 3; `lowercase` (6 files),
    // `names` (a full answer) and `guide` (documentation only) are not rare.
    let idf = |held: f64| (1.0 + (44.0 - held + 0.5) / (held + 0.5)).ln();
    const { assert!(RARE_WORD_MAX_FILES >= 3 && RARE_WORD_MAX_FILES < 6) };
    assert_eq!(rare.get("pkg/a.py"), Some(&1.0), "{rare:?}");
    let b = rare.get("pkg/b.py").copied().unwrap_or(f64::NAN);
    assert!((b - idf(3.0) / idf(2.0)).abs() < 1e-9, "{rare:?}");
    assert_eq!(rare.get("pkg/c.py"), Some(&0.0), "{rare:?}");
    // Tests hold words but are not ranked by them.
    assert_eq!(
        rare.get("tests/test_a.py").copied().unwrap_or(0.0),
        0.0,
        "{rare:?}"
    );
}
