//! The `swex` explorer's work is bounded by its caps, not by the issue's size: an issue naming
//! thousands of distinct dotted names asks for at most `max_identifiers + max_dotted_names`
//! definitions, the same number for an issue four times as long. (Each look-up is one service
//! call; before the cap, every distinct name was one, and each was checked against all earlier
//! names — quadratic work in the issue.) Counted, not timed.

use std::sync::atomic::{AtomicUsize, Ordering};
use swex_explorer_swex::{Swex, SwexConfig, definition_names};
use swex_plugin::ServiceError;
use swex_plugin::types::{
    DefinitionsArgs, DefinitionsResult, FileEntry, ListFilesArgs, ListFilesResult, SearchArgs,
    SearchResult,
};
use swex_plugin::{Request, Response};
use swex_plugin_host::ServiceBackend;

/// A snapshot of a few files with no search hits; counts `definitions` calls.
#[derive(Default)]
struct Counting {
    definitions: AtomicUsize,
}

impl ServiceBackend for Counting {
    fn backend_name(&self) -> &str {
        "counting"
    }
    fn contains_file(&self, path: &str) -> bool {
        path == "pkg/core.py"
    }
    fn list_files(&self, _args: ListFilesArgs) -> Result<ListFilesResult, ServiceError> {
        Ok(ListFilesResult {
            files: vec![FileEntry::new("pkg/core.py", 10)],
        })
    }
    fn lexical_search(&self, _args: SearchArgs) -> Result<SearchResult, ServiceError> {
        Ok(SearchResult::default())
    }
    fn definitions(&self, _args: DefinitionsArgs) -> Result<DefinitionsResult, ServiceError> {
        self.definitions.fetch_add(1, Ordering::Relaxed);
        Ok(DefinitionsResult {
            definitions: Vec::new(),
        })
    }
}

/// An issue of `n` distinct dotted names (`mod0.sub0.handler_0`, ...), one per line.
fn dotted_issue(n: usize) -> String {
    let mut text = String::from("Crash when loading plugins\n");
    for i in 0..n {
        text.push_str(&format!("see mod{i}.sub{i}.handler_{i} here\n"));
    }
    text
}

fn definition_calls(issue: &str) -> usize {
    let backend = Counting::default();
    let request = Request::new("x", issue, 5);
    let _: Response =
        swex_plugin_serve::explore::<Swex>(&serde_json::Value::Null, &request, &backend)
            .expect("explores");
    backend.definitions.load(Ordering::Relaxed)
}

#[test]
fn definitions_asked_are_bounded_whatever_the_issue_size() {
    let config = SwexConfig::default();
    let cap = config.max_identifiers + config.max_dotted_names;
    let small = definition_calls(&dotted_issue(500));
    let large = definition_calls(&dotted_issue(2000));
    assert!(small <= cap, "{small} definitions asked (cap {cap})");
    assert_eq!(small, large, "4x the issue asked {small} then {large}");
}

#[test]
fn definition_names_keep_identifiers_then_new_dotted_names() {
    let issue = swex_explorer_swex::issue::parse(
        "`ConditionSet` breaks\nsee sympy.sets.ConditionSet and sympy.sets.fancyset and a.b here\n",
    );
    let names = definition_names(&issue, &SwexConfig::default());
    let mut expected = issue.identifiers.clone();
    assert!(expected.iter().any(|n| n == "ConditionSet"));
    expected.push("fancyset".to_owned());
    assert_eq!(names, expected);
    let capped = definition_names(
        &issue,
        &SwexConfig {
            max_identifiers: 0,
            max_dotted_names: 1,
            ..SwexConfig::default()
        },
    );
    assert_eq!(capped, ["ConditionSet"]);
}
