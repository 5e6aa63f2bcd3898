//! The `swex` explorer end to end on small repositories served by the engine's index: which files
//! it picks, in which order, and the shape of the regions its plan gives them.

use swex_engine::index::{Engine, EngineConfig};
use swex_engine::search::DenseUse;
use swex_plugin::{Request, Response};
use swex_plugin_host::{EngineBackend, ExplorerPlugin, FsBackend};

/// A small package: the module the issue is about, its test module, a look-alike module, a
/// module that only mentions the words in prose, docs and an `__init__.py`.
const FILES: &[(&str, &str)] = &[
    (
        "shop/pricing.py",
        "\"\"\"Prices and discounts.\"\"\"\n\n\nclass DiscountRule:\n    def __init__(self, percent):\n        self.percent = percent\n\n    def apply_discount(self, price):\n        return price * (1 - self.percent / 100)\n\n\ndef round_price(value):\n    return round(value, 2)\n",
    ),
    (
        "shop/tests/test_pricing.py",
        "from shop.pricing import DiscountRule, round_price\n\n\ndef test_round_price():\n    assert round_price(1.005) == 1.0\n\n\ndef test_apply_discount_rounds():\n    rule = DiscountRule(10)\n    assert rule.apply_discount(9.99) == 8.99\n",
    ),
    (
        "shop/tests/test_cart.py",
        "from shop.cart import Cart\n\n\ndef test_empty_cart():\n    assert Cart().total() == 0\n",
    ),
    (
        "shop/cart.py",
        "from shop.pricing import round_price\n\n\nclass Cart:\n    def __init__(self):\n        self.items = []\n\n    def total(self):\n        return round_price(sum(self.items))\n",
    ),
    (
        "shop/shipping.py",
        "def shipping_cost(weight):\n    # No discount applies to shipping.\n    return 5 + weight\n",
    ),
    (
        "shop/__init__.py",
        "from shop.pricing import DiscountRule\n",
    ),
    (
        "docs/pricing.rst",
        "Pricing\n=======\n\nA DiscountRule applies a discount to a price.\n",
    ),
];

const ISSUE: &str = "DiscountRule.apply_discount returns unrounded prices\n\n\
`DiscountRule(10).apply_discount(9.99)` gives `8.991000000000001` instead of a price rounded \
like `round_price` does.\n\n```python\nfrom shop.pricing import DiscountRule\n\
print(DiscountRule(10).apply_discount(9.99))\n```\n\nEnvironment:\n- python: 3.11.4\n- shop: 1.2.0\n";

fn explore(config: serde_json::Value, top_k: usize) -> Response {
    explore_issue(config, ISSUE, top_k, None)
}

fn explore_with_budget(config: serde_json::Value, top_k: usize, budget: Option<u64>) -> Response {
    explore_issue(config, ISSUE, top_k, budget)
}

fn explore_issue(
    config: serde_json::Value,
    issue: &str,
    top_k: usize,
    budget: Option<u64>,
) -> Response {
    explore_files(FILES, config, issue, top_k, budget)
}

fn explore_files(
    files: &[(&str, &str)],
    config: serde_json::Value,
    issue: &str,
    top_k: usize,
    budget: Option<u64>,
) -> Response {
    let repo = tempfile::tempdir().unwrap();
    write_files(repo.path(), files);
    explore_checkout(repo.path(), config, issue, top_k, budget)
}

fn write_files(root: &std::path::Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let abs = root.join(path);
        std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
        std::fs::write(abs, text).unwrap();
    }
}

fn explore_checkout(
    root: &std::path::Path,
    config: serde_json::Value,
    issue: &str,
    top_k: usize,
    budget: Option<u64>,
) -> Response {
    let cache = tempfile::tempdir().unwrap();
    let engine = Engine::new(EngineConfig {
        cache_dir: cache.path().to_owned(),
        ..EngineConfig::default()
    });
    // Lexical code search for one-line requests whether or not the model is installed, as in
    // `swex explore`: these tests are about the ranking.
    let backend = EngineBackend::new(engine.open(root).unwrap()).with_dense_auto(DenseUse::Off);
    let plugin = ExplorerPlugin::builtin(swex_explorer_swex::swex_explorer_vtable).unwrap();
    assert_eq!(plugin.name(), "swex");
    let explorer = plugin.instantiate(&config).unwrap();
    let mut request = Request::new("i1", issue, top_k);
    request.line_budget = budget;
    explorer.explore(&request, &backend).unwrap()
}

/// A git work tree holding `files` in one first commit ("Initial commit").
fn committed_checkout(files: &[(&str, &str)]) -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    swex_testkit::git(root, &["init", "-q"]);
    write_files(root, files);
    swex_testkit::git(root, &["add", "."]);
    swex_testkit::git(root, &["commit", "-q", "-m", "Initial commit"]);
    repo
}

/// The features note of an answer (`emit_features`).
fn features_note(answer: &Response) -> serde_json::Value {
    let note = answer
        .notes
        .iter()
        .find_map(|n| n.strip_prefix(swex_explorer_swex::learned::FEATURES_NOTE_PREFIX))
        .expect("a features note");
    serde_json::from_str(note).unwrap()
}

/// A candidate's value of a feature in a features note.
fn feature(note: &serde_json::Value, path: &str, name: &str) -> f64 {
    let at = swex_explorer_swex::learned::FEATURES
        .iter()
        .position(|f| *f == name)
        .unwrap();
    let candidate = note["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["path"] == path)
        .unwrap_or_else(|| panic!("{path} is not a candidate: {note}"));
    candidate["row"][at].as_f64().unwrap()
}

fn spans(answer: &Response) -> Vec<(&str, i64, i64)> {
    answer
        .regions
        .iter()
        .map(|r| (r.path.as_str(), r.start, r.end))
        .collect()
}

#[test]
fn the_defining_file_comes_first_whole_and_its_test_gets_a_pointer() {
    let answer = explore(serde_json::Value::Null, 5);
    let spans = spans(&answer);
    // The file defining the named class and method, whole (`-1`: to the end of the file).
    assert_eq!(spans[0], ("shop/pricing.py", 1, -1), "{spans:?}");
    // Its test module gets a pointer: the first lines of its best-matching test, not the file.
    let test = spans
        .iter()
        .find(|s| s.0 == "shop/tests/test_pricing.py")
        .unwrap_or_else(|| panic!("no region in the test module: {spans:?}"));
    assert!(
        test.1 > 1 && test.2 >= test.1 && test.2 - test.1 < 5,
        "{spans:?}"
    );
    // One region per file.
    let mut paths: Vec<&str> = spans.iter().map(|s| s.0).collect();
    paths.sort();
    paths.dedup();
    assert_eq!(paths.len(), spans.len(), "{spans:?}");
    assert!(spans.len() <= 5);
    // Every region says why it was chosen; sources come first, then tests, and scores (beliefs)
    // never increase within each.
    assert!(answer.regions.iter().all(|r| r.why.is_some()), "{answer:?}");
    let is_test = |r: &&swex_plugin::Region| r.path.contains("tests/");
    let first_test = answer.regions.iter().position(|r| is_test(&r)).unwrap();
    assert!(
        answer.regions[first_test..].iter().all(|r| is_test(&r)),
        "{spans:?}"
    );
    for part in [&answer.regions[..first_test], &answer.regions[first_test..]] {
        let scores: Vec<f64> = part.iter().map(|r| r.score.unwrap()).collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    }
    // Ordered by belief alone, the same regions, and the test's share of the best source's
    // belief puts it before a source believed less.
    let by_belief = explore(serde_json::json!({"locate": {"tests_last": false}}), 5);
    let by_belief_spans: Vec<(&str, i64, i64)> = by_belief
        .regions
        .iter()
        .map(|r| (r.path.as_str(), r.start, r.end))
        .collect();
    let mut same = by_belief_spans.clone();
    same.sort();
    let mut sorted = spans.clone();
    sorted.sort();
    assert_eq!(same, sorted);
    let scores: Vec<f64> = by_belief.regions.iter().map(|r| r.score.unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert!(
        by_belief.regions[..first_test].iter().any(|r| is_test(&r)),
        "{by_belief_spans:?}"
    );
}

#[test]
fn the_budget_is_planned_for() {
    // The 13 lines of pricing.py fit a budget of 20 whole, and pointers fill the rest.
    let answer = explore_with_budget(serde_json::Value::Null, 5, Some(20));
    let length = |path: &str| {
        let text = FILES.iter().find(|(p, _)| *p == path).unwrap().1;
        text.lines().count() as i64
    };
    let lines: i64 = answer
        .regions
        .iter()
        .map(|r| {
            if r.end == -1 {
                length(&r.path) - r.start + 1
            } else {
                r.end - r.start + 1
            }
        })
        .sum();
    assert!(lines <= 20, "{:?}", spans(&answer));
    assert_eq!(spans(&answer)[0], ("shop/pricing.py", 1, -1));
    // Too small for the file: its best span's first lines instead, and nothing past the budget.
    let answer = explore_with_budget(serde_json::Value::Null, 5, Some(3));
    let spans = spans(&answer);
    assert_eq!(spans.len(), 1, "{spans:?}");
    let (path, start, end) = spans[0];
    assert_eq!(path, "shop/pricing.py");
    assert!(end - start < 3 && start >= 4, "{spans:?}");
}

/// An answer of more regions than the six sources and three tests the plan considers by default
/// holds `top_k − 2` sources and two tests, sources first.
#[test]
fn a_long_answer_holds_more_sources() {
    let mut texts: Vec<(String, String)> = (0..12)
        .map(|i| {
            (
                format!("shop/rule_{i}.py"),
                format!(
                    "def discount_rule_{i}(price):\n    return price  # discount rounding {i}\n"
                ),
            )
        })
        .collect();
    for i in 0..3 {
        texts.push((
            format!("shop/tests/test_rule_{i}.py"),
            format!("from shop.rule_{i} import discount_rule_{i}\n\n\ndef test_discount_rounding():\n    assert discount_rule_{i}(1) == 1\n"),
        ));
    }
    let files: Vec<(&str, &str)> = texts
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let issue = "Discount rounding is wrong\n\nEvery discount rule rounds the discounted price the wrong way.";
    let count = |answer: &Response| {
        let tests = answer
            .regions
            .iter()
            .filter(|r| r.path.contains("tests/"))
            .count();
        (answer.regions.len() - tests, tests)
    };
    let answer = explore_files(&files, serde_json::Value::Null, issue, 12, None);
    assert_eq!(count(&answer), (10, 2), "{:?}", spans(&answer));
    let first_test = answer
        .regions
        .iter()
        .position(|r| r.path.contains("tests/"))
        .unwrap();
    assert_eq!(first_test, 10, "{:?}", spans(&answer));
    // Five regions: the default six sources and three tests considered, the first five given.
    let answer = explore_files(&files, serde_json::Value::Null, issue, 5, None);
    assert_eq!(count(&answer), (4, 1), "{:?}", spans(&answer));
}

/// In an answer of nine regions or more, a lead file read whole is preceded by a pointer to where
/// in it to start (the definition the issue is about); shorter answers keep the region for
/// another file.
#[test]
fn a_long_answer_points_into_the_whole_lead_first() {
    let regions_of_lead = |answer: &Response| {
        answer
            .regions
            .iter()
            .filter(|r| r.path == "shop/pricing.py")
            .count()
    };
    let long = explore(serde_json::Value::Null, 10);
    let regions = spans(&long);
    assert_eq!(regions[1], ("shop/pricing.py", 1, -1), "{regions:?}");
    let (path, start, end) = regions[0];
    assert_eq!(path, "shop/pricing.py", "{regions:?}");
    // `DiscountRule` opens on line 4, `apply_discount` on line 8: the pointer is a few lines
    // of that class, not the module's head.
    assert!((4..=9).contains(&start) && end - start < 5, "{regions:?}");
    assert_eq!(regions_of_lead(&long), 2);

    let short = explore(serde_json::Value::Null, 5);
    assert_eq!(spans(&short)[0], ("shop/pricing.py", 1, -1));
    assert_eq!(regions_of_lead(&short), 1);

    let never = explore(
        serde_json::json!({"locate": {"lead_pointer_from": 100}}),
        10,
    );
    assert_eq!(spans(&never)[0], ("shop/pricing.py", 1, -1));
    let always = explore(serde_json::json!({"locate": {"lead_pointer_from": 0}}), 5);
    assert_eq!(spans(&always)[0], regions[0]);

    // A one-line request (too long for the short-query path) is answered as a search: the
    // best span first, no pointer before it.
    let question = "in the shop package DiscountRule apply_discount returns the discounted price \
        without rounding it like round_price does for a cart";
    let asked = explore_issue(serde_json::Value::Null, question, 10, None);
    assert_eq!(
        spans(&asked)[0],
        ("shop/pricing.py", 1, -1),
        "{:?}",
        spans(&asked)
    );
    assert_eq!(regions_of_lead(&asked), 1);
}

/// Python is one of the default model's `linear_languages`: the linear ranking keeps the lead
/// and the model orders the rest (`learned_below_linear_lead`), or, switched off, the answer is
/// the linear ranking's.
#[test]
fn in_a_linear_language_the_lead_is_the_linear_rankings() {
    let linear = explore(serde_json::json!({"ranker": "linear"}), 10);
    let default = explore(serde_json::Value::Null, 10);
    let whole_linear = explore(serde_json::json!({"learned_below_linear_lead": false}), 10);
    assert_eq!(spans(&default)[..2], spans(&linear)[..2]);
    assert_eq!(spans(&whole_linear), spans(&linear));
    let sorted = |answer: &Response| {
        let mut paths: Vec<String> = answer.regions.iter().map(|r| r.path.clone()).collect();
        paths.sort();
        paths
    };
    assert_eq!(sorted(&default), sorted(&linear));
}

#[test]
fn top_k_cuts_the_plan() {
    let one = explore(serde_json::Value::Null, 1);
    assert_eq!(spans(&one), [("shop/pricing.py", 1, -1)]);
}

#[test]
fn ablating_every_signal_still_answers_and_debug_notes_show_features() {
    let zero = serde_json::json!({"weights": {
        "lexical": 0, "lexical_rank": 0, "symbols": 0, "mentions": 0, "frames": 0,
        "names": 0, "dirs": 0, "doc_penalty": 0, "init_penalty": 0}, "debug": true});
    let answer = explore(zero, 5);
    assert!(answer.regions.len() <= 5);
    let debug = explore(serde_json::json!({"debug": true}), 5);
    assert!(
        debug
            .notes
            .iter()
            .any(|n| n.contains("shop/pricing.py") && n.contains("sym=")),
        "{:?}",
        debug.notes
    );
    assert!(
        debug.notes.iter().any(|n| n.contains("lexical_search")),
        "{:?}",
        debug.notes
    );
}

#[test]
fn bad_config_and_missing_index_are_clear_errors() {
    let plugin = ExplorerPlugin::builtin(swex_explorer_swex::swex_explorer_vtable).unwrap();
    for (config, needle) in [
        (serde_json::json!({"candidates": 0}), "candidates"),
        (serde_json::json!({"weights": {"lexcial": 1}}), "lexcial"),
        // The slot planner of an earlier design is gone: its keys are unknown.
        (serde_json::json!({"planner": "slots"}), "planner"),
        (serde_json::json!({"plan": "SStSS"}), "plan"),
        (serde_json::json!({"locate": {"pointer": 3}}), "pointer"),
    ] {
        let error = plugin.instantiate(&config).unwrap_err().to_string();
        assert!(error.contains(needle), "{config}: {error}");
    }
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(repo.path().join("a.py"), "x = 1\n").unwrap();
    let explorer = plugin.instantiate(&serde_json::Value::Null).unwrap();
    let error = explorer
        .explore(&Request::new("i1", ISSUE, 5), &FsBackend::new(repo.path()))
        .unwrap_err()
        .to_string();
    assert!(error.contains("--index"), "{error}");
}

#[test]
fn short_queries_are_answered_by_ranked_code_search() {
    let answer = explore_issue(serde_json::Value::Null, "DiscountRule", 5, None);
    assert_eq!(spans(&answer)[0], ("shop/pricing.py", 4, 9), "{answer:?}");
    assert_eq!(answer.notes, ["short symbol query: ranked code search"]);
    let mut paths: Vec<&str> = answer.regions.iter().map(|r| r.path.as_str()).collect();
    let total = paths.len();
    paths.sort_unstable();
    paths.dedup();
    assert_eq!(paths.len(), total, "one span per file: {answer:?}");
    // Switched off, the same words go through the issue pipeline.
    let issue = explore_issue(
        serde_json::json!({"short_query_words": 0}),
        "DiscountRule",
        5,
        None,
    );
    assert!(
        issue
            .notes
            .iter()
            .all(|n| !n.contains("ranked code search"))
    );
    // An issue (several lines) never takes the short path.
    assert!(
        explore(serde_json::Value::Null, 5)
            .notes
            .iter()
            .all(|n| !n.contains("ranked code search"))
    );
}

/// An issue template's HTML comments are not the author's words: the answer is the one to the
/// issue without them. The same words written in the issue do move it.
#[test]
fn an_issue_templates_comments_are_not_read() {
    let template = "\n<!--\nPlease check shipping_cost and shipping weight before filing.\n-->\n";
    let plain = explore_issue(serde_json::Value::Null, ISSUE, 5, None);
    let commented = format!("{ISSUE}{template}");
    let with_comment = explore_issue(serde_json::Value::Null, &commented, 5, None);
    assert_eq!(spans(&with_comment), spans(&plain));
    let written = format!("{ISSUE}{}", template.replace("<!--", "").replace("-->", ""));
    let with_words = explore_issue(serde_json::Value::Null, &written, 5, None);
    assert_ne!(spans(&with_words), spans(&plain));
}

#[test]
fn emitted_features_carry_each_files_nearness_in_the_code_graph() {
    // The issue names `DiscountRule`, `apply_discount` and `round_price` (shop/pricing.py);
    // shop/cart.py calls `round_price`; shop/shipping.py only shares a word with the issue.
    let answer = explore(serde_json::json!({"emit_features": true}), 5);
    let note = features_note(&answer);
    assert_eq!(
        note["features"],
        serde_json::json!(swex_explorer_swex::learned::FEATURES)
    );
    let value = |path: &str, name: &str| feature(&note, path, name);
    assert_eq!(value("shop/pricing.py", "graph_issue"), 1.0, "{note}");
    let cart = value("shop/cart.py", "graph_issue");
    let shipping = value("shop/shipping.py", "graph_issue");
    assert!(0.0 < cart && cart < 1.0, "{note}");
    assert!(shipping < cart, "{note}");
    // The walk from the top: the first sources seed it, and the values are normalised.
    assert_eq!(value("shop/pricing.py", "graph_top"), 1.0, "{note}");
    assert!(value("shop/cart.py", "graph_top") > value("shop/shipping.py", "graph_top"));
    // Without the note the shipped model, which reads no graph feature, answers the same.
    let plain = explore(serde_json::Value::Null, 5);
    assert_eq!(spans(&plain), spans(&answer));
}

/// A past commit that names the issue the issue refers to (`#4521`) lifts the files it changed,
/// even when its message shares no word with the issue, when the weight asks for it (the default
/// is 0); without the term the tie of the two look-alikes goes by path. The feature rows carry it
/// either way.
#[test]
fn a_commit_naming_the_issue_the_issue_refers_to_lifts_its_files() {
    let files: &[(&str, &str)] = &[
        (
            "ui/frame.py",
            "def draw(widget):\n    return widget.paint()\n",
        ),
        (
            "ui/panel.py",
            "def draw(widget):\n    return widget.paint()\n",
        ),
    ];
    let issue =
        "The widget flickers again\n\nThe widget flickers when drawn, as it did before #4521.\n";
    let repo = committed_checkout(files);
    let root = repo.path();
    std::fs::write(root.join("ui/panel.py"), format!("{}\n", files[1].1)).unwrap();
    swex_testkit::git(root, &["commit", "-q", "-am", "Tidy the helpers (#4521)"]);
    write_files(root, files);
    swex_testkit::git(root, &["commit", "-q", "-am", "Tidy up"]);
    let first = |referenced: f64| {
        let config = serde_json::json!({"weights": {
            "history": 0.0, "similar_commits": 0.0, "referenced": referenced
        }});
        explore_checkout(root, config, issue, 5, None).regions[0]
            .path
            .clone()
    };
    assert_eq!(first(0.0), "ui/frame.py");
    assert_eq!(first(2.0), "ui/panel.py");
    // The features a model trains on carry it too: panel's share is the best one, frame's none.
    let note = features_note(&explore_checkout(
        root,
        serde_json::json!({"emit_features": true}),
        issue,
        5,
        None,
    ));
    let relative = |path: &str| feature(&note, path, "referenced_relative");
    assert_eq!(
        (relative("ui/panel.py"), relative("ui/frame.py")),
        (1.0, 0.0)
    );
}

/// A past commit whose message says the issue's title lifts the files it changed when the
/// `title_similar_commits` weight asks for it (the default is 0), and only when that commit covers
/// enough of the title (`TITLE_COVERAGE`): in a history where each of the title's words is
/// another commit's, the most similar commit says a fifth of it and nothing moves. The feature
/// rows carry it either way. The other history terms are off here, so only the title's vote can
/// break the tie of the two look-alikes (by path otherwise).
#[test]
fn a_commit_that_says_the_title_lifts_its_files_only_when_it_covers_the_title() {
    let files: &[(&str, &str)] = &[
        (
            "ui/frame.py",
            "def draw(widget):\n    return widget.paint()\n",
        ),
        (
            "ui/panel.py",
            "def draw(widget):\n    return widget.paint()\n",
        ),
        ("notes.txt", "notes\n"),
    ];
    let issue = "Widget flickers when drawn twice sometimes\n\nSee the screenshot.\n";
    // `panel`'s commit says every word of the title, or only `widget`, with each other word of
    // the title said by a commit of its own (to notes.txt, which is no candidate).
    let checkout = |panel_message: &str, others: &[&str]| {
        let repo = committed_checkout(files);
        let root = repo.path();
        std::fs::write(root.join("ui/panel.py"), format!("{}\n", files[1].1)).unwrap();
        swex_testkit::git(root, &["commit", "-q", "-am", panel_message]);
        for (i, message) in others.iter().enumerate() {
            std::fs::write(root.join("notes.txt"), format!("notes {i}\n")).unwrap();
            swex_testkit::git(root, &["commit", "-q", "-am", message]);
        }
        write_files(root, files);
        swex_testkit::git(root, &["commit", "-q", "-am", "Tidy up"]);
        repo
    };
    let first = |root: &std::path::Path, weight: f64| {
        let config = serde_json::json!({"weights": {
            "history": 0.0, "similar_commits": 0.0, "title_similar_commits": weight
        }});
        explore_checkout(root, config, issue, 5, None).regions[0]
            .path
            .clone()
    };
    let relative = |root: &std::path::Path| {
        let config = serde_json::json!({"emit_features": true});
        let note = features_note(&explore_checkout(root, config, issue, 5, None));
        let value = |path: &str| feature(&note, path, "title_similar_commits_relative");
        (value("ui/panel.py"), value("ui/frame.py"))
    };

    let covered = checkout("Widget flickers when drawn twice sometimes", &[]);
    assert_eq!(first(covered.path(), 0.0), "ui/frame.py");
    assert_eq!(first(covered.path(), 2.0), "ui/panel.py");
    assert_eq!(relative(covered.path()), (1.0, 0.0));

    let scattered = checkout(
        "Widget colours",
        &["Flickers", "Drawn", "Twice", "Sometimes"],
    );
    assert_eq!(first(scattered.path(), 2.0), "ui/frame.py");
    assert_eq!(relative(scattered.path()), (0.0, 0.0));
}

/// The repository history moves a file whose commits were about the issue above its look-alike
/// (same code, same words): `ui/panel.py`'s commit speaks of the widget's flicker, so it leads;
/// without the history term, or in a copy without git history, the tie goes by path and the
/// answer is the one without history, exactly. Documentation gets no history: the README changed
/// in the same commit, but a README's history is every feature's. The issue's environment
/// listing is not searched: a commit about numpy is not about the bug.
#[test]
fn the_commit_history_lifts_a_file_and_no_history_changes_nothing() {
    let files: &[(&str, &str)] = &[
        (
            "ui/frame.py",
            "def draw(widget):\n    return widget.paint()\n",
        ),
        (
            "ui/panel.py",
            "def draw(widget):\n    return widget.paint()\n",
        ),
        ("README.md", "# ui\n\nDraws a widget, once.\n"),
    ];
    // The environment listing is not read: ui/frame.py's commit about numpy gets nothing.
    let issue = "The widget flickers when drawn\n\nDrawing a widget makes it flicker twice.\n\n\
                 Environment:\n- numpy: 1.26.0\n";
    let repo = committed_checkout(files);
    let root = repo.path();
    // A change to ui/panel.py about the issue's subject, then a change back.
    std::fs::write(root.join("ui/panel.py"), format!("{}\n", files[1].1)).unwrap();
    std::fs::write(root.join("README.md"), format!("{}\n", files[2].1)).unwrap();
    swex_testkit::git(
        root,
        &[
            "commit",
            "-q",
            "-am",
            "Stop the flicker of a widget drawn twice",
        ],
    );
    std::fs::write(root.join("ui/frame.py"), format!("{}\n", files[0].1)).unwrap();
    swex_testkit::git(root, &["commit", "-q", "-am", "Require numpy 1.26"]);
    write_files(root, files);
    swex_testkit::git(root, &["commit", "-q", "-am", "Tidy up"]);
    let first = |answer: &Response| answer.regions[0].path.clone();
    let no_history = serde_json::json!({"weights": {"history": 0.0, "similar_commits": 0.0}});
    let with_history = explore_checkout(root, serde_json::Value::Null, issue, 5, None);
    assert_eq!(first(&with_history), "ui/panel.py", "{with_history:?}");
    let without = explore_checkout(root, no_history.clone(), issue, 5, None);
    assert_eq!(first(&without), "ui/frame.py", "{without:?}");
    // Each term alone lifts it: the messages' match, and the commit most like the issue.
    for alone in ["history", "similar_commits"] {
        let other = if alone == "history" {
            "similar_commits"
        } else {
            "history"
        };
        let config = serde_json::json!({"weights": {other: 0.0}});
        let answer = explore_checkout(root, config, issue, 5, None);
        assert_eq!(first(&answer), "ui/panel.py", "{alone}: {answer:?}");
    }
    // The features carry it: the matched file's relative history is 1, the other's 0.
    let answer = explore_checkout(
        root,
        serde_json::json!({"emit_features": true}),
        issue,
        5,
        None,
    );
    let note = features_note(&answer);
    for name in ["history_relative", "similar_commits_relative"] {
        let relative = |path: &str| feature(&note, path, name);
        assert_eq!(
            (
                relative("ui/panel.py"),
                relative("ui/frame.py"),
                relative("README.md")
            ),
            (1.0, 0.0, 0.0),
            "{name}"
        );
    }

    // The same files without git: the answer without history, and a note only when features
    // are emitted.
    let plain = tempfile::tempdir().unwrap();
    write_files(plain.path(), files);
    let plain_default = explore_checkout(plain.path(), serde_json::Value::Null, issue, 5, None);
    assert_eq!(spans(&plain_default), spans(&without));
    assert!(
        plain_default.notes.iter().all(|n| !n.contains("history")),
        "{plain_default:?}"
    );
    let emitted = explore_checkout(
        plain.path(),
        serde_json::json!({"emit_features": true}),
        issue,
        5,
        None,
    );
    assert!(
        emitted
            .notes
            .iter()
            .any(|n| n.starts_with("history features absent:")
                && n.contains("no repository history")),
        "{:?}",
        emitted.notes
    );
}

/// Examples and benchmarks show or measure the project; a fix seldom edits them. A copy of the
/// module in `examples/` matches the issue as well as the module, and the `example_penalty`
/// (the `example` path role) is what puts the module first.
#[test]
fn an_example_gives_way_to_the_module_it_copies() {
    let pricing = FILES[0].1;
    let files: Vec<(&str, &str)> = FILES
        .iter()
        .copied()
        .chain([
            ("examples/shop/pricing.py", pricing),
            ("benchmarks/shop/pricing.py", pricing),
        ])
        .collect();
    let linear = |config: serde_json::Value| {
        let answer = explore_files(&files, config, ISSUE, 10, None);
        let note = features_note(&answer);
        let of = |path: &str| {
            note["candidates"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["path"] == path)
                .unwrap_or_else(|| panic!("{path}: {note}"))["linear"]
                .as_f64()
                .unwrap()
        };
        (
            of("shop/pricing.py"),
            of("examples/shop/pricing.py"),
            of("benchmarks/shop/pricing.py"),
            spans(&answer)[0].0.to_string(),
        )
    };
    let (module, example, benchmark, lead) = linear(serde_json::json!({"emit_features": true}));
    let (module_0, example_0, benchmark_0, _) =
        linear(serde_json::json!({"emit_features": true, "weights": {"example_penalty": 0}}));
    let penalty = swex_explorer_swex::rank::Weights::default().example_penalty;
    assert!(penalty > 0.0);
    assert_eq!(module, module_0);
    assert!(
        (example_0 - example - penalty).abs() < 1e-9,
        "{example_0} {example}"
    );
    assert!((benchmark_0 - benchmark - penalty).abs() < 1e-9);
    assert!(
        module > example && module > benchmark,
        "{module} {example} {benchmark}"
    );
    assert_eq!(lead, "shop/pricing.py");
}
