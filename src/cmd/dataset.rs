//! `swex dataset import`: SWE-bench-family task files → bench rows with ground truth from the
//! fix. Argument parsing and printing only; the work is in `swex_bench::import`.

use crate::out::shown;
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use swex_bench::import::{self, ImportOptions, schema::SCHEMAS};

#[derive(Subcommand, Debug)]
pub enum DatasetCommand {
    /// Read task files (SWE-bench, Lite, Verified, Multilingual, Pro, Multi-SWE-bench, the
    /// `../shared/data/train` rows; JSON lines or a JSON array) and write bench rows whose ground
    /// truth comes from the fix. Every row not imported is reported with its reason.
    Import(ImportArgs),
    /// List the schemas `import` recognises and the fields each needs.
    Schemas,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Task files.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The bench rows to write (JSON lines).
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Snapshot folders `DIR/<instance_id>` at the base commits: the edited and added definitions
    /// are found now (else when a run scores the rows with their snapshots), and a patch that
    /// does not apply to the base commit is reported.
    #[arg(long, value_name = "DIR")]
    repos: Option<PathBuf>,
    /// SWE-Explore release rows (reference schema): write these rows, their ground truth kept,
    /// joined by id with the task files for `repo`, `base_commit`, the issue text and the fix
    /// (SWE-bench Pro's `instance_` prefix is matched with or without it). Release rows without a
    /// task row are reported.
    #[arg(long, value_name = "FILE")]
    release: Option<PathBuf>,
    /// Trajectories and commit maps (the reference's `instance_id → base_commit` map): the base
    /// commit of a task row that has none and of a release row without a task row, read from
    /// recorded fields only (docs/dataset.md says which formats carry one).
    #[arg(long, value_name = "DIR", requires = "release")]
    trajectories: Option<PathBuf>,
    /// Exit with status 1 when any row was not imported.
    #[arg(long)]
    strict: bool,
}

pub fn run(command: DatasetCommand) -> anyhow::Result<ExitCode> {
    match command {
        DatasetCommand::Schemas => {
            for schema in SCHEMAS {
                outln!(
                    "{}\t{}\n\tneeds: {}",
                    schema.name,
                    schema.about,
                    schema.required.join(", ")
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        DatasetCommand::Import(args) => run_import(args),
    }
}

fn run_import(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let options = ImportOptions {
        repos: args.repos.clone(),
        release: args.release.clone(),
        trajectories: args.trajectories.clone(),
    };
    let imported = import::import(&args.files, &options)?;
    for problem in &imported.problems {
        errln!(
            "dataset: {} {}: {}",
            shown(&problem.at),
            problem
                .instance_id
                .as_deref()
                .map_or_else(|| "(no id)".to_string(), |id| shown(id).into_owned()),
            shown(&problem.reason)
        );
    }
    if args.trajectories.is_some() {
        errln!(
            "dataset: trajectories: {} files read, base commits for {} ids; {} rows took theirs from them",
            imported.trajectory_files,
            imported.trajectory_commits,
            imported.commits_from_trajectories
        );
    }
    if imported.rows.is_empty() {
        bail!("no row imported ({} problems)", imported.problems.len());
    }
    let tmp = args.output.with_extension("jsonl.tmp");
    {
        let mut out = std::io::BufWriter::new(
            std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?,
        );
        for row in &imported.rows {
            serde_json::to_writer(&mut out, row)?;
            out.write_all(b"\n")?;
        }
        out.flush()?;
    }
    std::fs::rename(&tmp, &args.output)
        .with_context(|| format!("writing {}", args.output.display()))?;
    let schemas: Vec<String> = imported
        .by_schema
        .iter()
        .map(|(name, n)| format!("{name}: {n}"))
        .collect();
    errln!(
        "dataset: wrote {} rows to {} ({}); {} not imported, {} identical duplicates left out; definitions found for {} rows{}{}",
        imported.rows.len(),
        args.output.display(),
        schemas.join(", "),
        imported.problems.len(),
        imported.duplicates,
        imported.with_definitions,
        if args.release.is_some() {
            format!(
                "; {} task rows no release row asked for",
                imported.unused_tasks
            )
        } else {
            String::new()
        },
        if args.repos.is_none() {
            " (no --repos: they are found when a run scores the rows)"
        } else {
            ""
        }
    );
    Ok(if args.strict && !imported.problems.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
