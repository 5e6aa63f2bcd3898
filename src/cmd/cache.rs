//! `swex cache gc`: remove from the index cache what no snapshot it serves reads any more. The
//! work, and what counts as live, is `swex_engine::index::gc`'s.

use super::index::human_bytes;
use crate::out::shown;
use anyhow::Context;
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use swex_engine::index::{GcOptions, GcReport};

#[derive(Subcommand, Debug)]
pub enum CacheCommand {
    /// Remove the chunks and analyses of file versions no snapshot lists any more, and the
    /// snapshots (with the pools only they used) whose folder is gone. Snapshots that still
    /// exist keep everything: their next open reuses it all.
    Gc(GcArgs),
}

#[derive(Args, Debug)]
pub struct GcArgs {
    /// Cache folder for indexes [default: $SWEX_CACHE_DIR, else the user cache dir's swex/].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Count what would go; remove nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Keep a pool that no snapshot names yet if it was written within this many seconds: a
    /// first open of a new repository names its pool only when it ends.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    pub grace: u64,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(command: CacheCommand) -> anyhow::Result<ExitCode> {
    match command {
        CacheCommand::Gc(args) => gc(args),
    }
}

fn gc(args: GcArgs) -> anyhow::Result<ExitCode> {
    let mut config = swex_engine::index::EngineConfig::default();
    if let Some(dir) = args.cache_dir {
        config.cache_dir = dir;
    }
    let root = config.cache_dir.clone();
    let report = swex_engine::index::Engine::new(config)
        .collect_garbage(&GcOptions {
            dry_run: args.dry_run,
            grace: Duration::from_secs(args.grace),
        })
        .with_context(|| format!("collecting garbage in {}", root.display()))?;
    if args.json {
        outln!("{}", serde_json::to_string(&report)?);
    } else {
        for line in text_lines(&report) {
            outln!("{line}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn text_lines(report: &GcReport) -> Vec<String> {
    let (gone, going) = if report.dry_run {
        ("would go", "would be removed")
    } else {
        ("deleted", "removed")
    };
    let mut lines: Vec<String> = report
        .pools
        .iter()
        .map(|pool| {
            let size = if report.dry_run {
                human_bytes(pool.bytes_before)
            } else {
                format!(
                    "{} → {}",
                    human_bytes(pool.bytes_before),
                    human_bytes(pool.bytes_after)
                )
            };
            let counts = format!(
                "{} chunks and {} analyses {gone} (of {} and {}), {size}",
                pool.docs_deleted, pool.analyses_deleted, pool.docs_before, pool.analyses_before,
            );
            match pool.snapshots {
                0 if pool.recent => format!(
                    "pool {}: no snapshot names it yet, kept (written within the grace period)",
                    pool.id
                ),
                0 => format!("pool {}: no snapshot uses it, {going}: {counts}", pool.id),
                1 => format!("pool {} (1 snapshot): {counts}", pool.id),
                n => format!("pool {} ({n} snapshots): {counts}", pool.id),
            }
        })
        .collect();
    lines.push(format!(
        "snapshots: {} kept, {} forgotten (folder gone){}",
        report.snapshots_kept,
        report.snapshots_forgotten.len(),
        if report.invalid_manifests > 0 {
            format!(", {} damaged manifests {going}", report.invalid_manifests)
        } else {
            String::new()
        }
    ));
    if report.orphan_folders > 0 {
        lines.push(format!(
            "{} folders of pools without a key list {going}",
            report.orphan_folders
        ));
    }
    lines.extend(
        report
            .snapshots_forgotten
            .iter()
            .map(|root| format!("  forgotten: {}", shown(root))),
    );
    lines.push(if report.dry_run {
        format!(
            "dry run, nothing removed: {} of pools now, {} would go",
            human_bytes(report.bytes_before),
            human_bytes(dry_run_freed(report)),
        )
    } else {
        format!(
            "pools: {} → {}",
            human_bytes(report.bytes_before),
            human_bytes(report.bytes_after)
        )
    });
    lines
}

/// What a dry run would free for certain: the pools removed whole (what deleting chunks from a
/// pool frees is only known once its segments are rewritten).
fn dry_run_freed(report: &GcReport) -> u64 {
    report
        .pools
        .iter()
        .filter(|p| p.removed)
        .map(|p| p.bytes_before)
        .sum()
}
