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

/// Two snapshots of one repository share the engine's lexical pool; opened in either order into
/// one cache, each gets the same answer. Ten files with equal text (equal cosines, equal BM25
/// scores) make the answer depend on how ties are broken: by BM25's order, the files' order.
#[test]
fn answers_do_not_depend_on_the_order_snapshots_were_opened() {
    let base = tempfile::tempdir().unwrap();
    let body: String = (0..40)
        .map(|i| format!("    total_{i} = compute_batch_size(objs, limit_{i}) + offset_{i}\n"))
        .collect();
    let module = format!("def handler(objs):\n{body}    return objs\n");
    let write = |root: &std::path::Path, extra: &str| {
        for letter in 'a'..='j' {
            let abs = root.join(format!("pkg/{letter}/mod.py"));
            std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
            std::fs::write(abs, &module).unwrap();
        }
        std::fs::write(root.join("pkg/extra.py"), extra).unwrap();
    };
    let (a, b) = (base.path().join("a"), base.path().join("b"));
    write(&a, "def unrelated():\n    return 1\n");
    write(
        &b,
        "def compute_batch_size(objs, limit):\n    return min(len(objs), limit)\n",
    );
    let plugin = ExplorerPlugin::builtin(swex_explorer_tfidf::swex_explorer_vtable).unwrap();
    let explorer = plugin.instantiate(&serde_json::Value::Null).unwrap();
    let issue = "compute_batch_size ignores the limit and the offset of objs in handler";
    let answers = |first: &std::path::Path, second: &std::path::Path| {
        let cache = tempfile::tempdir().unwrap();
        let engine = Engine::new(EngineConfig {
            cache_dir: cache.path().to_owned(),
            ..EngineConfig::default()
        });
        let first = EngineBackend::new(engine.open(first).unwrap());
        let second = EngineBackend::new(engine.open(second).unwrap());
        let answer = |backend: &EngineBackend| {
            let answer = explorer
                .explore(&Request::new("i1", issue, 8), backend)
                .unwrap();
            answer
                .regions
                .into_iter()
                .map(|r| {
                    format!(
                        "{}:{}-{} {}",
                        r.path,
                        r.start,
                        r.end,
                        r.why.unwrap_or_default()
                    )
                })
                .collect::<Vec<String>>()
        };
        (answer(&first), answer(&second))
    };
    let (a_first, b_second) = answers(&a, &b);
    let (b_first, a_second) = answers(&b, &a);
    assert!(a_first.len() >= 8, "{a_first:#?}");
    assert_eq!(a_first, a_second, "snapshot a");
    assert_eq!(b_first, b_second, "snapshot b");
    // Ties keep BM25's order, which is the files' order for equal chunks.
    let tied: Vec<&String> = a_first.iter().filter(|r| r.contains("/mod.py")).collect();
    let mut sorted = tied.clone();
    sorted.sort();
    assert_eq!(tied, sorted);
}
