//! The filesystem and engine backends against the services contract (`swex-plugin-serve`'s
//! `conformance.json`): the same answers as the in-memory backend for every file service, and
//! the engine's for the index services (which it records when the suite is updated with
//! `SWEX_UPDATE_CONFORMANCE=1`).

use swex_engine::index::{Engine, EngineConfig};
use swex_plugin_host::{EngineBackend, FsBackend};
use swex_plugin_serve::conformance::{Kind, check, fixture};

fn snapshot() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, bytes) in fixture() {
        let abs = dir.path().join(&path);
        std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
        std::fs::write(abs, bytes).unwrap();
    }
    dir
}

fn assert_conforms(mismatches: Vec<swex_plugin_serve::conformance::Mismatch>) {
    let report: Vec<String> = mismatches.iter().map(ToString::to_string).collect();
    assert!(report.is_empty(), "{}", report.join("\n"));
}

#[test]
fn the_filesystem_backend_conforms() {
    let dir = snapshot();
    assert_conforms(check(&FsBackend::new(dir.path()), Kind::Files, &|_| false));
}

#[test]
fn the_engine_backend_conforms() {
    let dir = snapshot();
    let cache = tempfile::tempdir().unwrap();
    let engine = Engine::new(EngineConfig {
        cache_dir: cache.path().to_owned(),
        ..EngineConfig::default()
    });
    let backend = EngineBackend::new(engine.open(dir.path()).unwrap());
    // Only the engine's own answers are recorded from it; the shared ones come from the
    // in-memory backend.
    assert_conforms(check(&backend, Kind::Index, &|case| case.index.is_some()));
}
