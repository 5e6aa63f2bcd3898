//! `swex mcp`: serves swex to a coding agent over the Model Context Protocol on stdin/stdout
//! (docs/mcp.md). The server is the `swex-mcp` crate; this command only picks the explorer from
//! the plugin host's registry, exactly as `swex explore` does, and hands over.

use super::explore::{DEFAULT_EXPLORER, read_config};
use super::explorers::registry;
use super::index::CacheArgs;
use anyhow::Context;
use clap::Args as ClapArgs;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Repositories to serve (default: the current directory). The first answers calls that
    /// name none; a call may name another of them by name or path, and nothing else (see
    /// --allow-any-repo).
    #[arg(value_name = "REPO")]
    pub repos: Vec<PathBuf>,
    /// The explorer the `explore` tool asks (see `swex explorers`).
    #[arg(long, short = 'e', default_value = DEFAULT_EXPLORER)]
    pub explorer: String,
    /// A plugin library or a folder of them (repeatable).
    #[arg(long = "plugin", value_name = "PATH")]
    pub plugins: Vec<PathBuf>,
    /// The explorer's config: JSON, or @FILE holding JSON.
    #[arg(long)]
    pub config: Option<String>,
    /// Do not open the indexes at start; the first call on each repository opens it.
    #[arg(long)]
    pub lazy: bool,
    /// Let calls name any directory (`repo`), which is then indexed and served. UNSAFE with
    /// agents: a prompt-injected agent could read any file you can. Without it, only the
    /// repositories given here are served.
    #[arg(long)]
    pub allow_any_repo: bool,
    #[command(flatten)]
    pub cache: CacheArgs,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let repos = if args.repos.is_empty() {
        vec![std::env::current_dir().context("the current directory")?]
    } else {
        args.repos.clone()
    };
    let config = read_config(args.config.as_deref())?;
    let registry = registry(&args.plugins)?;
    let explorer = crate::cmd::explorers::explorer_handle(
        &registry.find(&args.explorer)?.explorer,
        config,
        false,
        std::time::Duration::from_secs(600),
        true,
    )?;
    swex_mcp::serve_stdio(swex_mcp::ServerOptions {
        repos,
        engine: args.cache.config(),
        explorer,
        warm: !args.lazy,
        scope: if args.allow_any_repo {
            swex_mcp::RepoScope::AnyDirectory
        } else {
            swex_mcp::RepoScope::Given
        },
    })?;
    Ok(ExitCode::SUCCESS)
}
