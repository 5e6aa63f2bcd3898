//! From a source file's definitions to its chunks.
//!
//! Rules (the module docs of [`crate::lang`] give the user-facing summary):
//! - Top-level definitions become chunks with their exact spans (decorators, attributes and doc
//!   comments directly above already belong to the span, see `extract`).
//! - Lines between definitions become `Gap` chunks, cut into even windows of at most
//!   `window_lines` lines. Gaps inside a split container carry the container's qualified name.
//! - A definition longer than `max_chunk_lines` is split. Containers (classes, structs, enums,
//!   interfaces, traits, impls, modules, namespaces) that have member definitions become a header
//!   chunk (lines before the first member), one chunk per member (split recursively by the same
//!   rules) and gap chunks between and after members. Functions, methods and containers without
//!   members become even windows that all keep the definition's kind and name.
//! - `Constant` and `TypeAlias` definitions shorter than `MIN_STANDALONE_LINES` do not get a chunk
//!   of their own: runs of one-line constants stay together in their gap.
//! - Overlapping sibling definitions (which only malformed trees produce) are resolved by keeping
//!   the earlier one; the later one's lines that are left over go to the next chunk or gap.
//!
//! The result partitions `1..=line_count`: ordered, non-overlapping, no line left out.

use crate::analysis::{Chunk, ChunkKind, Definition};

use super::text::even_windows;

/// Constants and type aliases shorter than this stay inside gap chunks.
pub(crate) const MIN_STANDALONE_LINES: u32 = 3;

pub(crate) struct ChunkLimits {
    pub window_lines: u32,
    pub max_chunk_lines: u32,
}

/// Chunks covering `1..=line_count` given the file's definitions (in document order, each with
/// its parent index).
pub(crate) fn chunk_definitions(
    definitions: &[Definition],
    line_count: u32,
    limits: &ChunkLimits,
) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    if line_count == 0 {
        return chunks;
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); definitions.len()];
    let mut top_level = Vec::new();
    for (index, definition) in definitions.iter().enumerate() {
        match definition.parent.map(|p| p as usize) {
            Some(parent) if parent < definitions.len() => children[parent].push(index),
            _ => top_level.push(index),
        }
    }
    let chunker = Chunker {
        definitions,
        children: &children,
        limits,
    };
    chunker.range(1, line_count, &top_level, None, &mut chunks);
    chunks
}

struct Chunker<'a> {
    definitions: &'a [Definition],
    children: &'a [Vec<usize>],
    limits: &'a ChunkLimits,
}

impl Chunker<'_> {
    fn stands_alone(&self, index: usize) -> bool {
        let definition = &self.definitions[index];
        let len = definition.end.saturating_sub(definition.start) + 1;
        !matches!(definition.kind, ChunkKind::Constant | ChunkKind::TypeAlias)
            || len >= MIN_STANDALONE_LINES
    }

    /// Covers `lo..=hi` with the given member definitions and gaps between them.
    fn range(
        &self,
        lo: u32,
        hi: u32,
        members: &[usize],
        gap_name: Option<&str>,
        out: &mut Vec<Chunk>,
    ) {
        let mut members: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&m| self.stands_alone(m))
            .collect();
        members.sort_by_key(|&m| {
            (
                self.definitions[m].start,
                std::cmp::Reverse(self.definitions[m].end),
            )
        });
        let mut cursor = lo;
        for member in members {
            let definition = &self.definitions[member];
            let start = definition.start.max(cursor);
            let end = definition.end.min(hi);
            if start > end {
                continue;
            }
            if start > cursor {
                even_windows(
                    cursor,
                    start - 1,
                    self.limits.window_lines,
                    ChunkKind::Gap,
                    gap_name,
                    out,
                );
            }
            self.definition(member, start, end, out);
            cursor = end.saturating_add(1);
            if end == u32::MAX {
                return;
            }
        }
        if cursor <= hi {
            even_windows(
                cursor,
                hi,
                self.limits.window_lines,
                ChunkKind::Gap,
                gap_name,
                out,
            );
        }
    }

    /// Covers `start..=end`, the (possibly clipped) span of definition `index`.
    fn definition(&self, index: usize, start: u32, end: u32, out: &mut Vec<Chunk>) {
        let definition = &self.definitions[index];
        let name = Some(definition.qualified_name.as_str());
        let max = self.limits.max_chunk_lines.max(1);
        if end - start < max {
            out.push(Chunk {
                start,
                end,
                kind: definition.kind,
                name: name.map(str::to_owned),
            });
            return;
        }
        let members: Vec<usize> = self.children[index]
            .iter()
            .copied()
            .filter(|&m| {
                self.stands_alone(m)
                    && self.definitions[m].start <= end
                    && self.definitions[m].end >= start
            })
            .collect();
        if !is_container(definition.kind) || members.is_empty() {
            even_windows(start, end, max, definition.kind, name, out);
            return;
        }
        let first_member_start = members
            .iter()
            .map(|&m| self.definitions[m].start)
            .min()
            .unwrap_or(start)
            .max(start);
        // The header: signature, docstring, fields before the first member.
        if first_member_start > start {
            even_windows(
                start,
                first_member_start - 1,
                max,
                definition.kind,
                name,
                out,
            );
        }
        self.range(first_member_start, end, &members, name, out);
    }
}

fn is_container(kind: ChunkKind) -> bool {
    matches!(
        kind,
        ChunkKind::Class
            | ChunkKind::Struct
            | ChunkKind::Enum
            | ChunkKind::Interface
            | ChunkKind::Trait
            | ChunkKind::Impl
            | ChunkKind::Module
            | ChunkKind::Namespace
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(name: &str, kind: ChunkKind, start: u32, end: u32, parent: Option<u32>) -> Definition {
        Definition {
            name: name.rsplit('.').next().unwrap().to_owned(),
            qualified_name: name.to_owned(),
            kind,
            start,
            end,
            parent,
        }
    }

    fn render(chunks: &[Chunk]) -> Vec<String> {
        chunks
            .iter()
            .map(|c| {
                format!(
                    "{}-{} {:?} {}",
                    c.start,
                    c.end,
                    c.kind,
                    c.name.as_deref().unwrap_or("-")
                )
            })
            .collect()
    }

    fn check(
        definitions: &[Definition],
        line_count: u32,
        window: u32,
        max: u32,
        expected: &[&str],
    ) {
        let limits = ChunkLimits {
            window_lines: window,
            max_chunk_lines: max,
        };
        let chunks = chunk_definitions(definitions, line_count, &limits);
        assert_eq!(render(&chunks), expected);
    }

    #[test]
    fn definitions_and_gaps_partition_the_file() {
        use ChunkKind::*;
        let defs = [
            def("f", Function, 3, 5, None),
            def("g", Function, 6, 6, None),
        ];
        check(
            &defs,
            9,
            60,
            150,
            &["1-2 Gap -", "3-5 Function f", "6-6 Function g", "7-9 Gap -"],
        );
        check(&[], 0, 60, 150, &[]);
        check(&[], 5, 2, 150, &["1-2 Gap -", "3-4 Gap -", "5-5 Gap -"]);
    }

    #[test]
    fn long_classes_split_into_header_members_and_gaps() {
        use ChunkKind::*;
        let defs = [
            def("C", Class, 2, 20, None),
            def("C.a", Method, 5, 9, Some(0)),
            def("C.b", Method, 11, 18, Some(0)),
            def("C.b.inner", Function, 12, 13, Some(2)),
        ];
        check(
            &defs,
            21,
            60,
            10,
            &[
                "1-1 Gap -",
                "2-4 Class C",
                "5-9 Method C.a",
                "10-10 Gap C",
                "11-18 Method C.b",
                "19-20 Gap C",
                "21-21 Gap -",
            ],
        );
        // Under the limit the class is one chunk.
        check(
            &defs,
            21,
            60,
            30,
            &["1-1 Gap -", "2-20 Class C", "21-21 Gap -"],
        );
    }

    #[test]
    fn long_functions_split_into_named_windows() {
        use ChunkKind::*;
        let defs = [
            def("f", Function, 1, 25, None),
            def("f.g", Function, 2, 3, Some(0)),
        ];
        check(
            &defs,
            25,
            60,
            10,
            &["1-9 Function f", "10-17 Function f", "18-25 Function f"],
        );
    }

    #[test]
    fn short_constants_stay_in_gaps_and_overlaps_are_resolved() {
        use ChunkKind::*;
        let defs = [
            def("A", Constant, 1, 1, None),
            def("T", TypeAlias, 2, 5, None),
            def("f", Function, 4, 8, None),
            def("g", Function, 8, 9, None),
        ];
        check(
            &defs,
            10,
            60,
            150,
            &[
                "1-1 Gap -",
                "2-5 TypeAlias T",
                "6-8 Function f",
                "9-9 Function g",
                "10-10 Gap -",
            ],
        );
    }
}
