//! Ground truth from repair trajectories (`swex gt build`).
//!
//! The pipeline, module by module:
//! 1. [`load`] finds trajectory files and [`formats`] reads each into the format-independent
//!    [`trajectory::Trajectory`] (one [`trajectory::TrajectoryReader`] per format, chosen by
//!    structural detection; bad files become [`load::Problem`]s and the rest goes on).
//! 2. [`reads`] extracts, per trajectory, the lines of repository files it read: shell commands
//!    are parsed ([`shell`]) and their pipelines evaluated ([`commands`]), editor views and
//!    windows give their ranges, paths are normalised ([`paths`]) and checked against the
//!    snapshot ([`repo`]); what cannot be mapped is discarded with a reason.
//! 3. [`build`] aggregates per instance: the line intersection across trajectories (core), each
//!    model's leftovers (optional), the files every trajectory modified, into rows of the
//!    reference schema ([`crate::dataset::BenchRow`]).
//! 4. [`coverage`] measures how much of an existing ground truth the extracted reads cover, and
//!    why the rest is missed.
//!
//! This module knows the trajectory formats and the reference builder's semantics; it knows
//! nothing about explorers, metrics or the engine.
//!
//! ```
//! use std::collections::BTreeMap;
//! use swex_bench::gt::reads::{extract, ReadPolicy};
//! use swex_bench::gt::repo::LineCountTable;
//! use swex_bench::gt::trajectory::{Action, Format, Observation, Step, Trajectory};
//!
//! // A snapshot known by its line counts, and a one-step trajectory.
//! let repo = LineCountTable::new(BTreeMap::from([("pkg/a.py".to_string(), 120)]));
//! let step = Step {
//!     index: 2,
//!     action: Action::Shell { command: "nl -ba /testbed/pkg/a.py | sed -n '40,60p'".into() },
//!     observation: Some(Observation::plain("    40\tdef f():\n")),
//!     cwd: None,
//! };
//! let trajectory = Trajectory {
//!     source: "run/o__r-1.traj.json".into(),
//!     record: 0,
//!     format: Format::MiniSweAgentV1,
//!     instance_id: Some("o__r-1".into()),
//!     model: Some("m".into()),
//!     workdir: Some("/testbed".into()),
//!     submission: None,
//!     steps: vec![step],
//! };
//! // The official ground truth counts the whole file `nl` read; the agent was shown 40-60.
//! let reference = extract(&trajectory, &repo, ReadPolicy::Reference);
//! assert_eq!(reference.reads[0].lines.to_string(), "1-120");
//! let shown = extract(&trajectory, &repo, ReadPolicy::Shown);
//! assert_eq!(shown.reads[0].lines.to_string(), "40-60");
//! ```

pub mod build;
pub mod commands;
pub mod coverage;
pub mod formats;
pub mod intervals;
pub mod load;
pub mod paths;
pub mod reads;
pub mod repo;
pub mod shell;
pub mod trajectory;
