//! The `oracle` explorer: answers the instance's ground-truth core regions, in ground-truth
//! order, as the reference's oracle baseline does. It bounds what any explorer can score.
//!
//! It needs `ground_truth` in the request (the benchmark runner passes it; `swex explore` on a
//! plain checkout has none and gets a clear error). It reads nothing from the snapshot.

use std::ffi::CStr;
use swex_plugin::{Explorer, ExplorerError, Request, Response, Services};

pub struct Oracle;

impl Explorer for Oracle {
    const NAME: &'static CStr = c"oracle";
    const DESCRIPTION: &'static CStr =
        c"the instance's ground-truth core regions (needs ground truth in the request)";

    fn create(config: &serde_json::Value) -> Result<Self, ExplorerError> {
        match config {
            serde_json::Value::Null => Ok(Oracle),
            serde_json::Value::Object(map) if map.is_empty() => Ok(Oracle),
            other => Err(ExplorerError::InvalidConfig(format!(
                "the oracle takes no config, got {other}"
            ))),
        }
    }

    fn explore(
        &self,
        request: &Request,
        _services: &Services<'_>,
    ) -> Result<Response, ExplorerError> {
        let Some(truth) = &request.ground_truth else {
            return Err(ExplorerError::InvalidRequest(format!(
                "the oracle needs the ground truth of {} in the request (only the benchmark runner has it)",
                request.instance_id
            )));
        };
        let regions = truth
            .read_core_regions
            .iter()
            .map(|r| {
                swex_plugin::Region::new(r.path.clone(), r.start, r.end)
                    .with_score(1.0)
                    .with_why("ground truth core region")
            })
            .collect();
        Ok(Response::new(regions))
    }
}

swex_plugin::export_vtable!(Oracle);
