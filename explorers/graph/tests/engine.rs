//! The `graph` explorer end to end on a small repository served by the engine's index.

use swex_engine::index::{Engine, EngineConfig};
use swex_plugin::Request;
use swex_plugin_host::{EngineBackend, ExplorerPlugin, FsBackend};

fn write(root: &std::path::Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let abs = root.join(path);
        std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
        std::fs::write(abs, text).unwrap();
    }
}

const CART: &str = "from shop.prices import total\n\n\nclass Cart:\n    def __init__(self):\n        self.items = []\n\n    def checkout(self):\n        return total(self.items)\n";
const PRICES: &str = "from shop.tax import vat\n\n\ndef total(items):\n    return sum(vat(i.price) for i in items)\n";
const TAX: &str = "RATE = 0.2\n\n\ndef vat(amount):\n    return amount * (1 + RATE)\n";
const UNRELATED: &str = "def render(template):\n    return template.upper()\n";

#[test]
fn traceback_seeds_reach_the_callee_through_the_graph() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write(
        repo.path(),
        &[
            ("shop/__init__.py", ""),
            ("shop/cart.py", CART),
            ("shop/prices.py", PRICES),
            ("shop/tax.py", TAX),
            ("web/views.py", UNRELATED),
        ],
    );
    let engine = Engine::new(EngineConfig {
        cache_dir: cache.path().to_owned(),
        ..EngineConfig::default()
    });
    let backend = EngineBackend::new(engine.open(repo.path()).unwrap());
    let plugin = ExplorerPlugin::builtin(swex_explorer_graph::swex_explorer_vtable).unwrap();
    assert_eq!(plugin.name(), "graph");
    let explorer = plugin.instantiate(&serde_json::Value::Null).unwrap();

    let issue = "Checkout crashes:\nTraceback (most recent call last):\n  \
        File \"/srv/app/shop/cart.py\", line 9, in checkout\n  \
        File \"/srv/app/shop/prices.py\", line 5, in total\n\
        TypeError: unsupported operand";
    let answer = explorer
        .explore(&Request::new("i1", issue, 3), &backend)
        .unwrap();
    let regions: Vec<(&str, i64, i64)> = answer
        .regions
        .iter()
        .map(|r| (r.path.as_str(), r.start, r.end))
        .collect();
    // The frames' functions first (the deepest frame weighs most), then what they call:
    // `vat` is reached only through the graph (the issue never names it).
    assert_eq!(regions.len(), 3, "{answer:?}");
    assert!(regions.contains(&("shop/prices.py", 4, 5)), "{regions:?}");
    assert!(
        regions
            .iter()
            .any(|r| r.0 == "shop/cart.py" && r.1 <= 8 && 9 <= r.2),
        "{regions:?}"
    );
    assert!(regions.iter().any(|r| r.0 == "shop/tax.py"), "{regions:?}");
    assert!(
        !regions.iter().any(|r| r.0 == "web/views.py"),
        "{regions:?}"
    );
    assert!(
        answer.notes[0].starts_with("seeds: 2 traceback frames"),
        "{:?}",
        answer.notes
    );

    // Without the engine's index it says what it needs.
    let error = explorer
        .explore(&Request::new("i1", issue, 3), &FsBackend::new(repo.path()))
        .unwrap_err()
        .to_string();
    assert!(error.contains("--index"), "{error}");
}
