//! Repository-relative path arithmetic (`/` separators, no leading `./`) and the file tables the
//! resolvers look files up in. Knows nothing about languages.

use std::collections::HashMap;

/// The directory part of `path` (`""` for files at the root).
pub(crate) fn dir_of(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

pub(crate) fn file_name(path: &str) -> &str {
    path.rfind('/').map_or(path, |i| &path[i + 1..])
}

pub(crate) fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_owned()
    } else if rest.is_empty() {
        dir.to_owned()
    } else {
        format!("{dir}/{rest}")
    }
}

/// Joins `relative` onto `dir` and resolves `.` and `..`; `None` when it climbs above the root.
pub(crate) fn normalize_join(dir: &str, relative: &str) -> Option<String> {
    let mut parts: Vec<&str> = if relative.starts_with('/') {
        Vec::new()
    } else {
        dir.split('/').filter(|p| !p.is_empty()).collect()
    };
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// Number of leading directory components two paths share.
pub(crate) fn common_dir_prefix(a: &str, b: &str) -> usize {
    dir_of(a)
        .split('/')
        .zip(dir_of(b).split('/'))
        .take_while(|(x, y)| x == y && !x.is_empty())
        .count()
}

/// The snapshot's paths, indexed for the lookups import resolution needs.
pub(crate) struct FileTable<'a> {
    pub paths: Vec<&'a str>,
    by_path: HashMap<&'a str, u32>,
    by_file_name: HashMap<&'a str, Vec<u32>>,
    by_dir: HashMap<&'a str, Vec<u32>>,
    /// Directories (that directly hold files) by their last component.
    dirs_by_name: HashMap<&'a str, Vec<&'a str>>,
}

impl<'a> FileTable<'a> {
    pub fn new(paths: Vec<&'a str>) -> Self {
        let mut by_path = HashMap::with_capacity(paths.len());
        let mut by_file_name: HashMap<&str, Vec<u32>> = HashMap::new();
        let mut by_dir: HashMap<&str, Vec<u32>> = HashMap::new();
        for (index, path) in paths.iter().enumerate() {
            let index = index as u32;
            by_path.insert(*path, index);
            by_file_name.entry(file_name(path)).or_default().push(index);
            by_dir.entry(dir_of(path)).or_default().push(index);
        }
        let mut dirs_by_name: HashMap<&str, Vec<&str>> = HashMap::new();
        for dir in by_dir.keys() {
            dirs_by_name.entry(file_name(dir)).or_default().push(dir);
        }
        for dirs in dirs_by_name.values_mut() {
            dirs.sort_unstable();
        }
        Self {
            paths,
            by_path,
            by_file_name,
            by_dir,
            dirs_by_name,
        }
    }

    pub fn get(&self, path: &str) -> Option<u32> {
        self.by_path.get(path).copied()
    }

    pub fn path(&self, index: u32) -> &'a str {
        self.paths[index as usize]
    }

    /// Files directly inside `dir`.
    pub fn in_dir(&self, dir: &str) -> &[u32] {
        self.by_dir.get(dir).map_or(&[], Vec::as_slice)
    }

    /// Directories (holding files) that are `suffix` or end with `/suffix`, sorted.
    pub fn dirs_ending_with(&self, suffix: &str) -> Vec<&'a str> {
        self.dirs_by_name
            .get(file_name(suffix))
            .map(|dirs| {
                dirs.iter()
                    .copied()
                    .filter(|d| {
                        *d == suffix
                            || (d.ends_with(suffix)
                                && d.as_bytes()[d.len() - suffix.len() - 1] == b'/')
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn named(&self, name: &str) -> &[u32] {
        self.by_file_name.get(name).map_or(&[], Vec::as_slice)
    }

    /// Files whose path is `suffix` or ends with `/suffix`.
    pub fn with_suffix(&self, suffix: &str) -> Vec<u32> {
        let suffix = suffix.trim_start_matches('/');
        self.named(file_name(suffix))
            .iter()
            .copied()
            .filter(|&f| {
                let path = self.path(f);
                path == suffix
                    || (path.ends_with(suffix)
                        && path.as_bytes()[path.len() - suffix.len() - 1] == b'/')
            })
            .collect()
    }

    /// Of several candidates, the one closest to `from`: most shared leading directories, then
    /// shortest path, then alphabetical.
    pub fn closest(&self, from: &str, candidates: &[u32]) -> Option<u32> {
        candidates.iter().copied().max_by(|&a, &b| {
            let (pa, pb) = (self.path(a), self.path(b));
            common_dir_prefix(from, pa)
                .cmp(&common_dir_prefix(from, pb))
                .then(pb.len().cmp(&pa.len()))
                .then(pb.cmp(pa))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_arithmetic() {
        assert_eq!(dir_of("a/b/c.py"), "a/b");
        assert_eq!(dir_of("c.py"), "");
        assert_eq!(
            normalize_join("a/b", "../c/./d.js").as_deref(),
            Some("a/c/d.js")
        );
        assert_eq!(normalize_join("a", "../../x"), None);
        assert_eq!(normalize_join("", "x/y").as_deref(), Some("x/y"));
        assert_eq!(common_dir_prefix("a/b/c.py", "a/b/d/e.py"), 2);
        assert_eq!(common_dir_prefix("x.py", "y.py"), 0);
    }

    #[test]
    fn suffix_lookup_respects_component_boundaries() {
        let table = FileTable::new(vec!["include/a/x.h", "src/ba/x.h", "x.h", "lib/a/x.h"]);
        let found: Vec<&str> = table
            .with_suffix("a/x.h")
            .into_iter()
            .map(|f| table.path(f))
            .collect();
        assert_eq!(found, ["include/a/x.h", "lib/a/x.h"]);
        let closest = table
            .closest("lib/y.c", &table.with_suffix("a/x.h"))
            .map(|f| table.path(f));
        assert_eq!(closest, Some("lib/a/x.h"));
    }
}
