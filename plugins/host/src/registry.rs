//! Finding explorers: [`Registry`] holds the built-in explorers and the plugins discovered on
//! disk, and resolves a name to one of them.
//!
//! An explorer on disk is a plugin library (`.so`, `.dylib`, `.dll`, loaded in this process) or a
//! command explorer ([`CommandExplorer`]: a Python file, a `.json` manifest or an executable,
//! run as a worker process speaking the worker protocol); both are found the same way.
//!
//! Places searched, highest precedence first (a name found in a higher place shadows the same
//! name lower down; `swex explorers` shows both):
//! 1. explicit paths (`--plugin PATH`, an explorer file or a folder of them);
//! 2. `SWEX_PLUGIN_PATH` (files or folders, separated like `PATH`);
//! 3. the plugins folder, `<config dir>/swex/plugins` (e.g. `~/.config/swex/plugins`);
//! 4. the built-in explorers.
//!
//! A file in a searched folder that fails to load is reported in [`Registry::problems`] and
//! skipped, so one broken plugin does not stop the others; an explicit path that fails is an
//! error. Discovery loads each library and calls its vtable getter (nothing else) in this
//! process, and starts no command explorer; isolated mode runs everything after that in a child.

use crate::command::{CommandExplorer, is_command_file};
use crate::error::HostError;
use crate::plugin::{ExplorerPlugin, PluginSource};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use swex_plugin::abi::SwexVTableGetter;

/// The environment variable listing plugin files and folders.
pub const PLUGIN_PATH_ENV: &str = "SWEX_PLUGIN_PATH";

/// Where a registry entry was found, in precedence order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Origin {
    Explicit,
    EnvPath,
    PluginDir,
    Builtin,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Explicit => "--plugin",
            Origin::EnvPath => PLUGIN_PATH_ENV,
            Origin::PluginDir => "plugins folder",
            Origin::Builtin => "built-in",
        }
    }
}

/// Where to look for plugins.
#[derive(Debug, Clone, Default)]
pub struct DiscoveryOptions {
    pub explicit: Vec<PathBuf>,
    pub env_path: Option<OsString>,
    pub plugin_dir: Option<PathBuf>,
}

impl DiscoveryOptions {
    /// The explicit paths plus `SWEX_PLUGIN_PATH` and the user's plugins folder.
    pub fn from_env(explicit: Vec<PathBuf>) -> DiscoveryOptions {
        DiscoveryOptions {
            explicit,
            env_path: std::env::var_os(PLUGIN_PATH_ENV),
            plugin_dir: default_plugin_dir(),
        }
    }
}

/// `<config dir>/swex/plugins`, when the platform has a config dir.
pub fn default_plugin_dir() -> Option<PathBuf> {
    dirs::config_dir().map(|dir| dir.join("swex").join("plugins"))
}

/// An explorer the registry knows: a checked vtable (built-in or library) or a command.
#[derive(Debug, Clone)]
pub enum Registered {
    Plugin(ExplorerPlugin),
    Command(CommandExplorer),
}

impl Registered {
    pub fn name(&self) -> &str {
        match self {
            Registered::Plugin(plugin) => plugin.name(),
            Registered::Command(command) => command.name(),
        }
    }

    pub fn description(&self) -> &str {
        match self {
            Registered::Plugin(plugin) => plugin.description(),
            Registered::Command(command) => command.description(),
        }
    }

    /// `builtin`, `dynamic` (a library) or `command`.
    pub fn kind(&self) -> &'static str {
        match self {
            Registered::Plugin(plugin) if plugin.library_path().is_some() => "dynamic",
            Registered::Plugin(_) => "builtin",
            Registered::Command(_) => "command",
        }
    }

    /// The file it was found as (none for a built-in).
    pub fn path(&self) -> Option<&Path> {
        match self {
            Registered::Plugin(plugin) => plugin.library_path(),
            Registered::Command(command) => Some(command.path()),
        }
    }

    /// The C ABI version (plugins only).
    pub fn abi_version(&self) -> Option<u32> {
        match self {
            Registered::Plugin(plugin) => Some(plugin.abi_version()),
            Registered::Command(_) => None,
        }
    }

    /// What identifies its code, for result rows.
    pub fn build_identity(&self) -> Result<String, HostError> {
        match self {
            Registered::Plugin(plugin) => plugin.build_identity(),
            Registered::Command(command) => command.build_identity(),
        }
    }

    /// How a worker process runs it: swex's own worker for a plugin, the command itself for a
    /// command explorer.
    pub fn worker_command(&self, swex_worker: &str) -> Result<crate::WorkerCommand, HostError> {
        match self {
            Registered::Plugin(plugin) => {
                let target = match plugin.source() {
                    PluginSource::Builtin => {
                        crate::isolated::PluginTarget::Builtin(plugin.name().to_owned())
                    }
                    PluginSource::Library(path) => {
                        crate::isolated::PluginTarget::Library(path.clone())
                    }
                };
                crate::WorkerCommand::swex_worker(swex_worker, &target)
            }
            Registered::Command(command) => command.worker_command(swex_worker),
        }
    }

    /// Its default config: a manifest's `config`, else `null`.
    pub fn default_config(&self) -> serde_json::Value {
        match self {
            Registered::Plugin(_) => serde_json::Value::Null,
            Registered::Command(command) => command.default_config().clone(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct RegistryEntry {
    pub explorer: Registered,
    pub origin: Origin,
    /// True when an entry of higher precedence has the same name.
    pub shadowed: bool,
}

#[derive(Debug, Default)]
pub struct Registry {
    entries: Vec<RegistryEntry>,
    problems: Vec<String>,
}

/// True for a plugin library's file name (`.so`, `.dylib`, `.dll`); other explorer files are
/// command explorers.
pub fn is_library(path: &Path) -> bool {
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    matches!(extension, "so" | "dylib" | "dll")
}

/// A library, a Python file, a manifest or an executable.
fn load_any(path: &Path) -> Result<Registered, HostError> {
    if is_library(path) {
        ExplorerPlugin::load(path).map(Registered::Plugin)
    } else {
        CommandExplorer::from_path(path).map(Registered::Command)
    }
}

impl Registry {
    /// A registry with the built-in explorers only.
    pub fn with_builtins(builtins: &[SwexVTableGetter]) -> Result<Registry, HostError> {
        let mut registry = Registry::default();
        for getter in builtins {
            let plugin = ExplorerPlugin::builtin(*getter)?;
            registry.push(Registered::Plugin(plugin), Origin::Builtin);
        }
        Ok(registry)
    }

    /// Adds the plugins found through `options`.
    pub fn discover(&mut self, options: &DiscoveryOptions) -> Result<(), HostError> {
        for path in &options.explicit {
            if path.is_dir() {
                // A folder given explicitly must hold plugins: an empty or broken one is a
                // mistake (a wrong path, a build that did not run), not "no plugins wanted".
                let (before, problems_before) = (self.entries.len(), self.problems.len());
                self.scan_dir(path, Origin::Explicit);
                if self.entries.len() == before {
                    let problems = self.problems.split_off(problems_before);
                    let message = if problems.is_empty() {
                        "no explorers (*.so, *.dylib, *.dll libraries, *.py files, *.json \
                         manifests, executables) in this folder"
                            .to_owned()
                    } else {
                        format!("no plugin loaded from this folder: {}", problems.join("; "))
                    };
                    return Err(HostError::Load {
                        path: path.clone(),
                        message,
                    });
                }
            } else {
                let explorer = load_any(path)?;
                self.push(explorer, Origin::Explicit);
            }
        }
        if let Some(env_path) = &options.env_path {
            for path in std::env::split_paths(env_path) {
                if path.as_os_str().is_empty() {
                    continue;
                }
                if path.is_dir() {
                    self.scan_dir(&path, Origin::EnvPath);
                } else {
                    self.load_reported(&path, Origin::EnvPath);
                }
            }
        }
        if let Some(dir) = &options.plugin_dir
            && dir.is_dir()
        {
            self.scan_dir(dir, Origin::PluginDir);
        }
        Ok(())
    }

    fn scan_dir(&mut self, dir: &Path, origin: Origin) {
        let mut libraries: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(entries) => entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && (is_library(p) || is_command_file(p)))
                .collect(),
            Err(e) => {
                self.problems
                    .push(format!("cannot list {}: {e}", dir.display()));
                return;
            }
        };
        libraries.sort();
        for path in libraries {
            self.load_reported(&path, origin);
        }
    }

    fn load_reported(&mut self, path: &Path, origin: Origin) {
        match load_any(path) {
            Ok(explorer) => self.push(explorer, origin),
            Err(e) => self
                .problems
                .push(format!("{} ({}): {e}", path.display(), origin.as_str())),
        }
    }

    fn push(&mut self, explorer: Registered, origin: Origin) {
        // The same file reached twice (e.g. a folder on SWEX_PLUGIN_PATH that is also the
        // plugins folder) is one explorer.
        let duplicate = self.entries.iter().any(|e| {
            e.explorer.name() == explorer.name()
                && e.explorer.kind() == explorer.kind()
                && e.explorer.path() == explorer.path()
        });
        if duplicate {
            return;
        }
        self.entries.push(RegistryEntry {
            explorer,
            origin,
            shadowed: false,
        });
        self.entries.sort_by_key(|e| e.origin);
        let mut seen = std::collections::HashSet::new();
        for entry in &mut self.entries {
            entry.shadowed = !seen.insert(entry.explorer.name().to_owned());
        }
    }

    /// Every entry, highest precedence first, shadowed ones included.
    pub fn entries(&self) -> &[RegistryEntry] {
        &self.entries
    }

    /// Libraries that could not be loaded during discovery.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    /// The explorer of that name with the highest precedence.
    pub fn find(&self, name: &str) -> Result<&RegistryEntry, HostError> {
        self.entries
            .iter()
            .find(|e| e.explorer.name() == name)
            .ok_or_else(|| HostError::UnknownExplorer {
                name: name.to_owned(),
                available: self.names(),
            })
    }

    /// The names of the explorers that can be selected, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .entries
            .iter()
            .filter(|e| !e.shadowed)
            .map(|e| e.explorer.name().to_owned())
            .collect();
        names.sort();
        names
    }

    /// The entries loaded from explicit paths, in the order given.
    pub fn explicit(&self) -> impl Iterator<Item = &RegistryEntry> {
        self.entries.iter().filter(|e| e.origin == Origin::Explicit)
    }
}
