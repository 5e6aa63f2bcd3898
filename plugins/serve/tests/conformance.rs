//! The in-memory backend against the services contract (`conformance.json`). It records the file
//! services' answers when the suite is updated (`SWEX_UPDATE_CONFORMANCE=1`).

use swex_plugin_serve::MemoryBackend;
use swex_plugin_serve::conformance::{Kind, check, fixture};

#[test]
fn the_memory_backend_conforms() {
    let backend = MemoryBackend::new(fixture());
    let mismatches = check(&backend, Kind::Files, &|_| true);
    let report: Vec<String> = mismatches.iter().map(ToString::to_string).collect();
    assert!(report.is_empty(), "{}", report.join("\n"));
}
