//! Within-file localization: where in a file the evidence for an issue sits, at definition
//! granularity, and which regions to read under a line budget.
//!
//! An explorer that has decided which files matter (and how much it believes each) describes
//! each file as a [`FileEvidence`]: its chunks (the engine's definition-level partition of the
//! file: functions, methods, class headers, module top level, gaps) and [`Mark`]s, the places its
//! evidence points at (a lexical hit, the definition of a name the issue mentions, a line that
//! uses it, a traceback line), each with a weight. Then:
//!
//! - [`candidate_spans`] scores every chunk by the marks it holds and grows the marked chunks
//!   into spans: neighbouring marked chunks separated only by unmarked gap chunks of a few lines
//!   join, so a method and the helper below it are read as one region, and the module's import
//!   block joins the first definition it touches.
//! - [`plan_regions`] chooses the regions: one per file, most believed first, within the budget
//!   (counted with real lengths: a whole file costs its line count). The lead file (the one the
//!   explorer believes most) is read whole when the belief is high enough and it fits; every
//!   other file gets a pointer, the first lines of its best span.
//!
//! Why this shape: what an answer needs from the file a fix edits is usually all of it, and when
//! the belief in that file is right every line read there is useful; from the other files it needs
//! (tests to follow, callers, the definition of a type) it needs a place, a few lines. Reading
//! those files in full, or long spans of them, buys little and costs the reader most of the budget.
//!
//! It knows nothing about issues, services or languages: it sees line numbers, chunk kinds and
//! weights.

use swex_plugin::Region;

/// A place the evidence points at, inside one file (1-based closed lines).
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub start: u32,
    pub end: u32,
    /// How much this place is worth reading (the scale is the caller's; larger is better).
    pub weight: f64,
    /// For people: `defines ConditionSet`, `lexical`, `uses is_subset`, `traceback line 646`.
    pub label: String,
    /// Which of the caller's kinds of evidence made it (`""` when the caller does not say): for
    /// a caller that learns from its marks by kind; the planning here never looks at it.
    pub kind: &'static str,
}

impl Mark {
    pub fn new(start: u32, end: u32, weight: f64, label: impl Into<String>) -> Mark {
        Mark {
            start,
            end: end.max(start),
            weight,
            label: label.into(),
            kind: "",
        }
    }

    /// The mark, saying which kind of evidence made it.
    pub fn of_kind(self, kind: &'static str) -> Mark {
        Mark { kind, ..self }
    }
}

/// One chunk of a file (the shape of the `chunks` service's entries).
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub start: u32,
    pub end: u32,
    /// `function`, `method`, `class`, ..., `gap`, `window`.
    pub kind: String,
    pub name: Option<String>,
}

impl Chunk {
    fn is_gap(&self) -> bool {
        self.kind == "gap"
    }

    fn lines(&self) -> u32 {
        self.end.saturating_sub(self.start) + 1
    }
}

/// What an explorer knows about one file it may return.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEvidence {
    pub path: String,
    /// Real length of the file (Python `splitlines` lines).
    pub line_count: u32,
    /// Belief, in `[0, 1]`, that the answer needs this file in full (the file the fix edits).
    pub confidence: f64,
    /// The file's chunks in order (empty: the file is not chunked; marks then become spans of
    /// their own, widened by [`SpanLimits::context_lines`]).
    pub chunks: Vec<Chunk>,
    pub marks: Vec<Mark>,
}

/// A candidate region inside one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub start: u32,
    pub end: u32,
    /// Sum of the weights of the marks it holds.
    pub evidence: f64,
    /// The labels of its strongest marks, for people.
    pub why: String,
}

impl Span {
    pub fn lines(&self) -> u32 {
        self.end.saturating_sub(self.start) + 1
    }
}

/// How chunks grow into spans.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpanLimits {
    /// Marked chunks apart by at most this many lines of unmarked gap chunks join into one span.
    pub join_gap_lines: u32,
    /// A span never grows past this many lines by joining (a single chunk may be longer).
    pub max_span_lines: u32,
    /// Lines added on each side of a mark when the file has no chunks.
    pub context_lines: u32,
}

impl Default for SpanLimits {
    fn default() -> Self {
        SpanLimits {
            join_gap_lines: 3,
            max_span_lines: 120,
            context_lines: 10,
        }
    }
}

/// The spans of a file its marks point at, best first (by evidence, then by position).
///
/// Each mark goes to the chunks it overlaps; a mark spanning several chunks (the definition of a
/// class, say) counts fully for the first of them (the header names the thing) and is not spread
/// over the rest, so a long class does not outweigh the one method the issue is about. Marked
/// chunks then join with marked neighbours across at most [`SpanLimits::join_gap_lines`] of
/// unmarked gap lines, up to [`SpanLimits::max_span_lines`].
pub fn candidate_spans(file: &FileEvidence, limits: &SpanLimits) -> Vec<Span> {
    let line_count = file.line_count.max(1);
    let clamp = |line: u32| line.clamp(1, line_count);
    if file.chunks.is_empty() {
        let mut spans: Vec<Span> = file
            .marks
            .iter()
            .map(|m| Span {
                start: clamp(m.start.saturating_sub(limits.context_lines)),
                end: clamp(m.end.saturating_add(limits.context_lines)),
                evidence: m.weight,
                why: m.label.clone(),
            })
            .collect();
        spans = join_overlapping(spans);
        sort_best_first(&mut spans);
        return spans;
    }

    // Evidence per chunk, and the marks behind it (strongest first) for the why.
    let mut score = vec![0.0f64; file.chunks.len()];
    let mut labels: Vec<Vec<(f64, &str)>> = vec![Vec::new(); file.chunks.len()];
    for mark in &file.marks {
        let first = file
            .chunks
            .iter()
            .position(|c| c.start <= mark.end && mark.start <= c.end);
        if let Some(i) = first {
            score[i] += mark.weight;
            labels[i].push((mark.weight, &mark.label));
        }
    }

    let mut spans = Vec::new();
    let mut i = 0;
    while i < file.chunks.len() {
        if score[i] <= 0.0 {
            i += 1;
            continue;
        }
        let mut start = i;
        let mut end = i;
        // Join forward: marked chunks across short unmarked gaps.
        loop {
            let mut j = end + 1;
            let mut gap = 0;
            while j < file.chunks.len() && score[j] <= 0.0 && file.chunks[j].is_gap() {
                gap += file.chunks[j].lines();
                j += 1;
            }
            let joinable = j < file.chunks.len()
                && score[j] > 0.0
                && gap <= limits.join_gap_lines
                && file.chunks[j].end - file.chunks[start].start < limits.max_span_lines;
            if !joinable {
                break;
            }
            end = j;
        }
        // A short unmarked gap just before the span (a decorator run, imports above the first
        // definition) joins it too when it starts the file.
        if start > 0 && file.chunks[start - 1].is_gap() && file.chunks[start - 1].start == 1 {
            let head = &file.chunks[start - 1];
            if head.lines() <= limits.join_gap_lines.max(8) {
                start -= 1;
            }
        }
        let evidence: f64 = score[start..=end].iter().sum();
        let mut why: Vec<(f64, &str)> = labels[start..=end].iter().flatten().copied().collect();
        why.sort_by(|a, b| b.0.total_cmp(&a.0));
        let mut names: Vec<&str> = Vec::new();
        for (_, label) in why {
            if !names.contains(&label) && names.len() < 3 {
                names.push(label);
            }
        }
        spans.push(Span {
            start: file.chunks[start].start,
            end: clamp(file.chunks[end].end),
            evidence,
            why: names.join(", "),
        });
        i = end + 1;
    }
    sort_best_first(&mut spans);
    spans
}

fn sort_best_first(spans: &mut [Span]) {
    spans.sort_by(|a, b| {
        b.evidence
            .total_cmp(&a.evidence)
            .then(a.start.cmp(&b.start))
    });
}

fn join_overlapping(mut spans: Vec<Span>) -> Vec<Span> {
    spans.sort_by_key(|s| (s.start, s.end));
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for span in spans {
        match out.last_mut() {
            Some(last) if span.start <= last.end + 1 => {
                last.end = last.end.max(span.end);
                last.evidence += span.evidence;
                if !span.why.is_empty() && !last.why.contains(&span.why) {
                    last.why = format!("{}, {}", last.why, span.why);
                }
            }
            _ => out.push(span),
        }
    }
    out
}

/// How [`plan_regions`] spends a budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanLimits {
    /// Lines the regions may hold in all (real lengths).
    pub budget: u64,
    pub top_k: usize,
    /// The lead file (the first one given) is read whole from this belief on, when it fits.
    pub whole_confidence: f64,
    /// ... and when the lines of it expected to be of no use, `(1 − belief) × its length`, are at
    /// most this many: a long file needs a firmer belief than a short one to be read whole
    /// (`u32::MAX`: no such limit).
    pub whole_max_waste: u32,
    /// Any file this short is read whole when it gets a region.
    pub small_file_lines: u32,
    /// A lead file that is not read whole gets this many lines from the start of its best span.
    pub lead_focus_lines: u32,
    /// Every other file gets a pointer: this many lines from the start of its best span (the
    /// definition's signature and first lines).
    pub pointer_lines: u32,
    /// Files believed less than this get no region at all.
    pub min_confidence: f64,
    /// A lead file read whole is preceded by a pointer into it (`pointer_lines` from the start
    /// of its best span): the whole file for context, and where in it to start. The pointer is
    /// one of the `top_k` regions and its lines count against the budget.
    pub lead_pointer: bool,
}

/// A planned region and what it is expected to be worth.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    pub region: Region,
    /// The belief in the region's file (the ordering key).
    pub confidence: f64,
    pub lines: u32,
}

/// Regions for files given in the explorer's order of preference, at most one per file (two for a
/// lead with its pointer) and `top_k` in all, holding at most `limits.budget` lines (real
/// lengths).
///
/// The lead file (the first one given, normally the one the explorer believes most) is read whole
/// when its belief reaches `whole_confidence`, the lines expected to be wasted on it stay within
/// `whole_max_waste` and it fits the budget: the file a fix edits is the unit a reader needs, and
/// when the belief is right every line of it counts. Otherwise it gets
/// `lead_focus_lines` from the start of its best span. Every other file gets a pointer: the first
/// `pointer_lines` of its best span, the place to look, for a few lines each — enough to reach the
/// other files an answer needs (tests, callers) without spending the budget on them. Files short
/// enough (`small_file_lines`) are read whole instead. A file without spans gets no pointer (the
/// lead file then gets its first lines). With `lead_pointer`, a lead file read whole is preceded
/// by such a pointer into it (one more region for that file). Regions come most believed first
/// (ties keep the order).
pub fn plan_regions(
    files: &[FileEvidence],
    spans: &[Vec<Span>],
    limits: &PlanLimits,
) -> Vec<Planned> {
    let mut left = limits.budget;
    let mut planned: Vec<(usize, Planned)> = Vec::new();
    for (order, (file, spans)) in files.iter().zip(spans).enumerate() {
        if planned.len() >= limits.top_k || left == 0 {
            break;
        }
        if file.confidence < limits.min_confidence || file.line_count == 0 {
            continue;
        }
        let lead = order == 0;
        let whole =
            (lead && lead_read_whole(file, limits)) || file.line_count <= limits.small_file_lines;
        let (start, end, why) = if whole && u64::from(file.line_count) <= left {
            (1, file.line_count, "whole file".to_owned())
        } else {
            let size = if lead {
                limits.lead_focus_lines
            } else {
                limits.pointer_lines
            };
            // At least one line is left (`left > 0`), so a window of `size` fits the budget.
            let size = size.min(left.min(u64::from(u32::MAX)) as u32);
            match spans.first() {
                Some(best) => {
                    let (start, end) = window_in_span(file, best, size);
                    (start, end, best.why.clone())
                }
                None if lead => (1, file.line_count.min(size.max(1)), "file head".to_owned()),
                None => continue,
            }
        };
        let lines = end - start + 1;
        // The pointer only comes with its whole file: both must fit in `top_k`.
        let pointer = (limits.lead_pointer
            && lead
            && start == 1
            && end == file.line_count
            && planned.len() + 2 <= limits.top_k)
            .then(|| lead_pointer(file, spans, limits, left - u64::from(lines)))
            .flatten();
        if let Some(pointer) = pointer {
            left -= u64::from(pointer.lines);
            planned.push((order, pointer));
        }
        left = left.saturating_sub(u64::from(lines));
        let end_field = if start == 1 && end == file.line_count {
            -1
        } else {
            i64::from(end)
        };
        planned.push((
            order,
            Planned {
                region: Region::new(file.path.clone(), i64::from(start), end_field)
                    .with_score(file.confidence)
                    .with_why(why),
                confidence: file.confidence,
                lines,
            },
        ));
    }
    planned.sort_by(|a, b| {
        b.1.confidence
            .total_cmp(&a.1.confidence)
            .then(a.0.cmp(&b.0))
    });
    planned.into_iter().map(|(_, p)| p).collect()
}

/// Whether the lead file is believed enough to be read whole (the budget aside): its belief
/// reaches `whole_confidence`, and the lines of it expected to be wasted — all of them when the
/// belief is wrong, so `(1 − belief) × length` — stay within `whole_max_waste`.
fn lead_read_whole(file: &FileEvidence, limits: &PlanLimits) -> bool {
    let expected_waste = (1.0 - file.confidence).max(0.0) * f64::from(file.line_count);
    file.confidence >= limits.whole_confidence
        && expected_waste <= f64::from(limits.whole_max_waste)
}

/// The pointer that precedes a lead file read whole: the first `pointer_lines` of its best span,
/// when it has one, the file is longer than the pointer and the pointer fits in `room` lines.
fn lead_pointer(
    file: &FileEvidence,
    spans: &[Span],
    limits: &PlanLimits,
    room: u64,
) -> Option<Planned> {
    let best = spans.first()?;
    let size = limits.pointer_lines.max(1);
    if file.line_count <= size || u64::from(size) > room {
        return None;
    }
    let (start, end) = window_in_span(file, best, size);
    Some(Planned {
        region: Region::new(file.path.clone(), i64::from(start), i64::from(end))
            .with_score(file.confidence)
            .with_why(best.why.clone()),
        confidence: file.confidence,
        lines: end - start + 1,
    })
}

/// The window of at most `size` lines (at least one) that a region gives of `span`: from where the
/// most mark weight is ([`strongest_window`]) to the span's end or the file's at the latest.
fn window_in_span(file: &FileEvidence, span: &Span, size: u32) -> (u32, u32) {
    let start = strongest_window(span, &file.marks, size);
    let end = span
        .end
        .min(start.saturating_add(size.max(1)) - 1)
        .min(file.line_count);
    (start, end.max(start))
}

/// Where a window of `size` lines inside `span` holds the most mark weight: its first line. The
/// candidates are the span's start and the first line of every mark inside it, so a window opens
/// on a definition or on the line that uses the name; ties go to the earliest.
fn strongest_window(span: &Span, marks: &[Mark], size: u32) -> u32 {
    let inside: Vec<&Mark> = marks
        .iter()
        .filter(|m| m.start <= span.end && span.start <= m.end)
        .collect();
    let weight_at = |start: u32| -> f64 {
        let end = start.saturating_add(size.max(1)) - 1;
        inside
            .iter()
            .filter(|m| m.start <= end && start <= m.end)
            .map(|m| m.weight)
            .sum()
    };
    let mut best = (span.start, weight_at(span.start));
    for mark in &inside {
        let start = mark.start.max(span.start);
        let weight = weight_at(start);
        if weight > best.1 + 1e-12 || (weight >= best.1 - 1e-12 && start < best.0) {
            best = (start, weight);
        }
    }
    best.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(start: u32, end: u32, kind: &str, name: &str) -> Chunk {
        Chunk {
            start,
            end,
            kind: kind.into(),
            name: (!name.is_empty()).then(|| name.into()),
        }
    }

    /// A module: imports (1–6), class header (8–12), two methods, a gap, a function.
    fn module(marks: Vec<Mark>) -> FileEvidence {
        FileEvidence {
            path: "pkg/m.py".into(),
            line_count: 80,
            confidence: 0.5,
            chunks: vec![
                chunk(1, 6, "gap", ""),
                chunk(7, 7, "gap", ""),
                chunk(8, 12, "class", "C"),
                chunk(13, 30, "method", "C.a"),
                chunk(31, 32, "gap", "C"),
                chunk(33, 50, "method", "C.b"),
                chunk(51, 60, "gap", ""),
                chunk(61, 80, "function", "f"),
            ],
            marks,
        }
    }

    fn spans_of(file: &FileEvidence) -> Vec<(u32, u32, f64)> {
        candidate_spans(file, &SpanLimits::default())
            .into_iter()
            .map(|s| (s.start, s.end, s.evidence))
            .collect()
    }

    #[test]
    fn marked_chunks_become_spans_best_first() {
        let file = module(vec![
            Mark::new(70, 70, 1.0, "uses x"),
            Mark::new(20, 25, 3.0, "lexical"),
        ]);
        assert_eq!(spans_of(&file), vec![(13, 30, 3.0), (61, 80, 1.0)]);
    }

    #[test]
    fn neighbours_join_across_short_gaps_only() {
        // a and b are two lines apart: one span. f is ten lines further: its own.
        let file = module(vec![
            Mark::new(14, 14, 1.0, "a"),
            Mark::new(40, 40, 1.0, "b"),
            Mark::new(65, 65, 1.0, "f"),
        ]);
        assert_eq!(spans_of(&file), vec![(13, 50, 2.0), (61, 80, 1.0)]);
    }

    #[test]
    fn a_mark_over_many_chunks_counts_for_the_first() {
        // The class definition spans 8–50; it names the class, so the header holds it.
        let file = module(vec![Mark::new(8, 50, 2.0, "defines C")]);
        assert_eq!(spans_of(&file), vec![(8, 12, 2.0)]);
    }

    #[test]
    fn the_import_block_joins_the_first_definition() {
        let mut file = module(vec![Mark::new(8, 8, 1.0, "defines C")]);
        file.chunks[1] = chunk(7, 7, "gap", "");
        // 1–6 is a short head gap, but another gap stands between it and the class.
        assert_eq!(spans_of(&file), vec![(8, 12, 1.0)]);
        file.chunks.remove(1);
        file.chunks[0] = chunk(1, 7, "gap", "");
        assert_eq!(spans_of(&file), vec![(1, 12, 1.0)]);
    }

    #[test]
    fn unchunked_files_widen_their_marks() {
        let mut file = module(vec![
            Mark::new(5, 5, 1.0, "a"),
            Mark::new(12, 12, 1.0, "b"),
            Mark::new(60, 60, 2.0, "c"),
        ]);
        file.chunks.clear();
        assert_eq!(spans_of(&file), vec![(1, 22, 2.0), (50, 70, 2.0)]);
    }

    fn limits(budget: u64) -> PlanLimits {
        PlanLimits {
            budget,
            top_k: 5,
            whole_confidence: 0.3,
            whole_max_waste: u32::MAX,
            small_file_lines: 40,
            lead_focus_lines: 50,
            pointer_lines: 5,
            min_confidence: 0.01,
            lead_pointer: false,
        }
    }

    fn plan(files: &[FileEvidence], budget: u64) -> Vec<(String, i64, i64)> {
        plan_with(files, &limits(budget))
    }

    fn plan_with(files: &[FileEvidence], limits: &PlanLimits) -> Vec<(String, i64, i64)> {
        let spans: Vec<Vec<Span>> = files
            .iter()
            .map(|f| candidate_spans(f, &SpanLimits::default()))
            .collect();
        plan_regions(files, &spans, limits)
            .into_iter()
            .map(|p| (p.region.path, p.region.start, p.region.end))
            .collect()
    }

    fn file(path: &str, lines: u32, confidence: f64, marks: Vec<Mark>) -> FileEvidence {
        FileEvidence {
            path: path.into(),
            line_count: lines,
            confidence,
            chunks: Vec::new(),
            marks,
        }
    }

    #[test]
    fn the_believed_lead_is_read_whole_the_others_get_pointers() {
        let files = [
            file("main.py", 300, 0.8, vec![Mark::new(100, 100, 1.0, "x")]),
            file("other.py", 500, 0.1, vec![Mark::new(200, 200, 1.0, "x")]),
            file("tiny.py", 30, 0.05, vec![]),
            file("nothing.py", 300, 0.04, vec![]),
            file("unbelieved.py", 300, 0.001, vec![Mark::new(7, 7, 1.0, "x")]),
        ];
        assert_eq!(
            plan(&files, 1000),
            vec![
                ("main.py".into(), 1, -1),
                ("other.py".into(), 200, 204),
                ("tiny.py".into(), 1, -1),
            ]
        );
    }

    #[test]
    fn a_lead_that_does_not_fit_or_is_doubted_is_focused_and_the_budget_holds() {
        let big = file("big.py", 3000, 0.9, vec![Mark::new(1000, 1000, 1.0, "x")]);
        let b = file("b.py", 400, 0.6, vec![Mark::new(10, 10, 1.0, "y")]);
        assert_eq!(
            plan(&[big.clone(), b], 300),
            vec![("big.py".into(), 990, 1010), ("b.py".into(), 10, 14)]
        );
        assert_eq!(
            plan(std::slice::from_ref(&big), 15),
            vec![("big.py".into(), 990, 1004)]
        );
        let doubted = FileEvidence {
            confidence: 0.2,
            ..file("main.py", 300, 0.2, vec![])
        };
        assert_eq!(plan(&[doubted], 1000), vec![("main.py".into(), 1, 50)]);
    }

    #[test]
    fn a_long_lead_needs_a_firmer_belief_to_be_read_whole() {
        let lead = |lines, confidence| file("main.py", lines, confidence, vec![]);
        let capped = PlanLimits {
            whole_max_waste: 100,
            ..limits(10_000)
        };
        let whole = ("main.py".to_owned(), 1, -1);
        let focus = ("main.py".to_owned(), 1, 50);
        // (1 − 0.8) × 500 = 100 lines expected wasted: within the limit, read whole.
        assert_eq!(plan_with(&[lead(500, 0.8)], &capped), vec![whole.clone()]);
        // The same belief on a file of 600 lines: 120 expected wasted, focused.
        assert_eq!(plan_with(&[lead(600, 0.8)], &capped), vec![focus.clone()]);
        // A firmer belief reads it whole again: (1 − 0.9) × 600 = 60.
        assert_eq!(plan_with(&[lead(600, 0.9)], &capped), vec![whole.clone()]);
        // The limit never lowers the bar of `whole_confidence`, and without it nothing changes.
        assert_eq!(plan_with(&[lead(100, 0.2)], &capped), vec![focus]);
        assert_eq!(plan(&[lead(600, 0.8)], 10_000), vec![whole]);
    }

    #[test]
    fn regions_come_most_believed_first() {
        let files = [
            file("a.py", 200, 0.3, vec![Mark::new(50, 50, 0.1, "x")]),
            file("b.py", 100, 0.9, vec![Mark::new(50, 50, 0.1, "x")]),
        ];
        assert_eq!(
            plan(&files, 1000),
            vec![("b.py".into(), 50, 54), ("a.py".into(), 1, -1)]
        );
    }

    #[test]
    fn a_lead_pointer_precedes_the_whole_lead_within_top_k_and_budget() {
        let files = [
            file("main.py", 300, 0.8, vec![Mark::new(100, 100, 1.0, "x")]),
            file("other.py", 500, 0.1, vec![Mark::new(200, 200, 1.0, "x")]),
            file("third.py", 500, 0.05, vec![Mark::new(9, 9, 1.0, "x")]),
        ];
        let with = |budget, top_k| PlanLimits {
            lead_pointer: true,
            top_k,
            ..limits(budget)
        };
        // The pointer opens on the lead's best span and comes first; the rest as without it.
        assert_eq!(
            plan_with(&files, &with(1000, 5)),
            vec![
                ("main.py".into(), 100, 104),
                ("main.py".into(), 1, -1),
                ("other.py".into(), 200, 204),
                ("third.py".into(), 9, 13),
            ]
        );
        // It is one of the top_k regions: the last file gives way.
        assert_eq!(
            plan_with(&files, &with(1000, 3)),
            vec![
                ("main.py".into(), 100, 104),
                ("main.py".into(), 1, -1),
                ("other.py".into(), 200, 204),
            ]
        );
        // It never displaces its own file: with room for one region, the whole lead.
        assert_eq!(
            plan_with(&files, &with(1000, 1)),
            vec![("main.py".into(), 1, -1)]
        );
        // It counts against the budget: with two lines to spare there is no pointer (the next
        // file gets them).
        assert_eq!(
            plan_with(&files, &with(302, 5)),
            vec![("main.py".into(), 1, -1), ("other.py".into(), 200, 201)]
        );
        // A lead that is focused, not read whole, gets no second region.
        assert_eq!(
            plan_with(&files[..1], &with(200, 5)),
            vec![("main.py".into(), 90, 110)]
        );
    }
}
