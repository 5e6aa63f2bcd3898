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
