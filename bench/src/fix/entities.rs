//! Which definition a line of a file belongs to: the one rule behind function- and module-level
//! ground truth and behind the mapping of an answer's regions to definitions.
//!
//! The engine's tree-sitter definitions ([`swex_engine::lang::analyze`]) of every language it
//! parses are read as *entities*: functions, methods and type-like definitions (class, struct,
//! enum, interface, trait, impl). Constants, type aliases, modules and namespaces are not
//! entities, but their names stay in the qualified name of what they hold. A line belongs to the
//! innermost entity whose span holds it, or to none (imports, module-level code).
//!
//! Names are `path:Outer.inner`: the engine's qualified name with `.` between its parts in every
//! language (LocAgent's form; the engine's `::` of Rust and C++ becomes `.`, a Go method is
//! `Recv.Method`). The *module* of an entity is its outermost enclosing entity (itself for a
//! top-level function; the type for a method defined outside it, as C++ `Point::norm` or a Go
//! method): LocAgent's `edited_modules`.

use std::collections::BTreeMap;
use swex_engine::analysis::{ChunkKind, FileAnalysis};
use swex_engine::lang::{AnalyzeOptions, analyze, detect_language};

/// One entity of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    /// `path:Outer.inner`.
    pub name: String,
    /// `path:Outermost`.
    pub module: String,
    pub start: u64,
    pub end: u64,
}

/// The engine's qualified name with `.` between all parts (`::` in Rust and C++).
fn dotted(qualified: &str) -> String {
    qualified.replace("::", ".")
}

/// The entities of one file and the owner of each of its lines.
#[derive(Debug, Clone, Default)]
pub struct Entities {
    pub entities: Vec<Entity>,
    /// `owner[line - 1]`: index into `entities` of the innermost entity holding the line.
    owner: Vec<Option<u32>>,
    pub line_count: u64,
}

fn is_entity(kind: ChunkKind) -> bool {
    matches!(
        kind,
        ChunkKind::Function
            | ChunkKind::Method
            | ChunkKind::Class
            | ChunkKind::Struct
            | ChunkKind::Enum
            | ChunkKind::Interface
            | ChunkKind::Trait
            | ChunkKind::Impl
    )
}

impl Entities {
    /// Parses `text` as the file `path` (language from the path and first bytes). A file in no
    /// language the engine parses has no entities.
    pub fn of_text(path: &str, text: &str) -> Entities {
        let language = detect_language(path, &text.as_bytes()[..text.len().min(512)]);
        let analysis = analyze(path, language, text, &AnalyzeOptions::default());
        Entities::of_analysis(path, &analysis)
    }

    /// The entities of an analysis the caller already has.
    pub fn of_analysis(path: &str, analysis: &FileAnalysis) -> Entities {
        let defs = &analysis.definitions;
        let chain = |mut index: usize| {
            let mut names = vec![index];
            while let Some(parent) = defs[index].parent {
                index = parent as usize;
                names.push(index);
            }
            names.reverse();
            names
        };
        let mut entities = Vec::new();
        let mut of_def: BTreeMap<usize, u32> = BTreeMap::new();
        for (index, def) in defs.iter().enumerate() {
            if !is_entity(def.kind) {
                continue;
            }
            let path_chain = chain(index);
            let outermost = path_chain
                .iter()
                .copied()
                .find(|&i| is_entity(defs[i].kind))
                .unwrap_or(index);
            let name = dotted(&def.qualified_name);
            let mut module = dotted(&defs[outermost].qualified_name);
            // A method defined outside its type has the type in its name but not among its
            // parents (C++ `Point::norm` in a namespace, a Go method `Server.Addr`): its module is
            // that type, as a class is the module of its methods. A free function in a namespace
            // (`geo::area`) keeps itself.
            if outermost == index {
                let bare = dotted(&def.name);
                let last = bare.rsplit('.').next().unwrap_or(&bare);
                let parent = def.parent.map(|p| dotted(&defs[p as usize].qualified_name));
                if let Some(scope) = name.strip_suffix(last).and_then(|s| s.strip_suffix('.'))
                    && Some(scope) != parent.as_deref()
                {
                    module = scope.to_string();
                }
            }
            of_def.insert(index, entities.len() as u32);
            entities.push(Entity {
                name: format!("{path}:{name}"),
                module: format!("{path}:{module}"),
                start: u64::from(def.start),
                end: u64::from(def.end),
            });
        }
        let line_count = u64::from(analysis.line_count);
        let mut owner = vec![None; line_count as usize];
        // Definitions come parents first, so a child's span overwrites its parent's lines.
        let mut order: Vec<(usize, u32)> = of_def.into_iter().collect();
        order.sort_by_key(|&(def, _)| (defs[def].start, std::cmp::Reverse(defs[def].end)));
        for (def, entity) in order {
            let (start, end) = (
                defs[def].start.max(1) as usize,
                (defs[def].end as usize).min(owner.len()),
            );
            for slot in owner.iter_mut().take(end).skip(start - 1) {
                *slot = Some(entity);
            }
        }
        Entities {
            entities,
            owner,
            line_count,
        }
    }

    /// The entity a line belongs to.
    pub fn owner(&self, line: u64) -> Option<&Entity> {
        let index = usize::try_from(line).ok()?.checked_sub(1)?;
        self.owner
            .get(index)
            .copied()
            .flatten()
            .map(|e| &self.entities[e as usize])
    }

    /// The distinct entities owning lines `start..=end` (clipped to the file), in line order.
    pub fn owners(&self, start: u64, end: u64) -> Vec<&Entity> {
        let mut seen = Vec::new();
        let mut out = Vec::new();
        for line in start.max(1)..=end.min(self.line_count) {
            if let Some(e) = self.owner.get(line as usize - 1).copied().flatten()
                && !seen.contains(&e)
            {
                seen.push(e);
                out.push(&self.entities[e as usize]);
            }
        }
        out
    }

    /// The innermost entity a pure insertion after line `after` falls strictly inside: one that
    /// holds both line `after` and line `after + 1`.
    pub fn insertion_owner(&self, after: u64) -> Option<&Entity> {
        self.entities
            .iter()
            .filter(|e| e.start <= after && after < e.end)
            .min_by_key(|e| e.end - e.start)
    }
}
