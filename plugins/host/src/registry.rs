//! Finding explorers: [`Registry`] holds the built-in explorers and the plugins discovered on
//! disk, and resolves a name to one of them.
//!
//! Places searched, highest precedence first (a name found in a higher place shadows the same
//! name lower down; `swex explorers` shows both):
//! 1. explicit paths (`--plugin PATH`, a library file or a folder of libraries);
//! 2. `SWEX_PLUGIN_PATH` (files or folders, separated like `PATH`);
//! 3. the plugins folder, `<config dir>/swex/plugins` (e.g. `~/.config/swex/plugins`);
//! 4. the built-in explorers.
//!
//! A library in a searched folder that fails to load is reported in [`Registry::problems`] and
//! skipped, so one broken plugin does not stop the others; an explicit path that fails is an
//! error. Discovery loads each library and calls its vtable getter (nothing else) in this
//! process; isolated mode runs everything after that in a child.

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

#[derive(Debug, Clone)]
pub struct RegistryEntry {
    pub plugin: ExplorerPlugin,
    pub origin: Origin,
    /// True when an entry of higher precedence has the same name.
    pub shadowed: bool,
}

#[derive(Debug, Default)]
pub struct Registry {
    entries: Vec<RegistryEntry>,
    problems: Vec<String>,
}

fn is_library(path: &Path) -> bool {
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    matches!(extension, "so" | "dylib" | "dll")
}

impl Registry {
    /// A registry with the built-in explorers only.
    pub fn with_builtins(builtins: &[SwexVTableGetter]) -> Result<Registry, HostError> {
        let mut registry = Registry::default();
        for getter in builtins {
            let plugin = ExplorerPlugin::builtin(*getter)?;
            registry.push(plugin, Origin::Builtin);
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
                        "no plugin libraries (*.so, *.dylib, *.dll) in this folder".to_owned()
                    } else {
                        format!("no plugin loaded from this folder: {}", problems.join("; "))
                    };
                    return Err(HostError::Load {
                        path: path.clone(),
                        message,
                    });
                }
            } else {
                let plugin = ExplorerPlugin::load(path)?;
                self.push(plugin, Origin::Explicit);
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
                .filter(|p| p.is_file() && is_library(p))
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
        match ExplorerPlugin::load(path) {
            Ok(plugin) => self.push(plugin, origin),
            Err(e) => self
                .problems
                .push(format!("{} ({}): {e}", path.display(), origin.as_str())),
        }
    }

    fn push(&mut self, plugin: ExplorerPlugin, origin: Origin) {
        // The same library reached twice (e.g. a folder on SWEX_PLUGIN_PATH that is also the
        // plugins folder) is one plugin.
        let duplicate = self
            .entries
            .iter()
            .any(|e| e.plugin.name() == plugin.name() && e.plugin.source() == plugin.source());
        if duplicate {
            return;
        }
        self.entries.push(RegistryEntry {
            plugin,
            origin,
            shadowed: false,
        });
        self.entries.sort_by_key(|e| e.origin);
        let mut seen = std::collections::HashSet::new();
        for entry in &mut self.entries {
            entry.shadowed = !seen.insert(entry.plugin.name().to_owned());
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
            .find(|e| e.plugin.name() == name)
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
            .map(|e| e.plugin.name().to_owned())
            .collect();
        names.sort();
        names
    }

    /// The entries loaded from explicit paths, in the order given.
    pub fn explicit(&self) -> impl Iterator<Item = &RegistryEntry> {
        self.entries.iter().filter(|e| e.origin == Origin::Explicit)
    }
}

impl RegistryEntry {
    /// How an isolated worker finds this explorer again.
    pub fn target(&self) -> crate::isolated::PluginTarget {
        match self.plugin.source() {
            PluginSource::Builtin => {
                crate::isolated::PluginTarget::Builtin(self.plugin.name().to_owned())
            }
            PluginSource::Library(path) => crate::isolated::PluginTarget::Library(path.clone()),
        }
    }
}
