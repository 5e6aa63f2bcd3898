//! The `tfidf` explorer end to end on a small repository served by the engine's index.

use swex_engine::index::{Engine, EngineConfig};
use swex_plugin::Request;
use swex_plugin_host::{EngineBackend, ExplorerPlugin, FsBackend};

#[test]
fn ranks_the_chunk_sharing_the_rare_words_first() {
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let files = [
        (
            "app/query.py",
            "class QuerySet:\n    def bulk_create(self, objs, batch_size=None):\n        return self._insert(objs, batch_size)\n\n    def count(self):\n        return len(self.items)\n",
        ),
        (
            "app/models.py",
            "class Model:\n    def save(self):\n        return self.objs\n",
        ),
        ("README.md", "# App\n\nA query library.\n"),
    ];
    for (path, text) in files {
        let abs = repo.path().join(path);
        std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
        std::fs::write(abs, text).unwrap();
    }
    let engine = Engine::new(EngineConfig {
        cache_dir: cache.path().to_owned(),
        ..EngineConfig::default()
    });
    let backend = EngineBackend::new(engine.open(repo.path()).unwrap());
    let plugin = ExplorerPlugin::builtin(swex_explorer_tfidf::swex_explorer_vtable).unwrap();
    assert_eq!(plugin.name(), "tfidf");
    let explorer = plugin.instantiate(&serde_json::Value::Null).unwrap();
    let issue = "QuerySet.bulk_create ignores batch_size";
    let answer = explorer
        .explore(&Request::new("i1", issue, 2), &backend)
        .unwrap();
    let first = &answer.regions[0];
    assert_eq!(
        (first.path.as_str(), first.start, first.end),
        ("app/query.py", 1, 6),
        "{answer:?}"
    );
    assert!(first.why.as_deref().unwrap().starts_with("TF-IDF cosine"));
    assert!(answer.regions.len() <= 2);

    let error = explorer
        .explore(&Request::new("i1", issue, 2), &FsBackend::new(repo.path()))
        .unwrap_err()
        .to_string();
    assert!(error.contains("--index"), "{error}");
}
