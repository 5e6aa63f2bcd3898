//! Where in the ranked files to look: the evidence of the issue turned into marks on each
//! candidate file (see [`swex_rankkit::localize`]), and the belief in each file.
//!
//! Marks, each weighted (the `marks` weights of [`LocateConfig`]):
//! - `lexical`: the engine's BM25 chunk hits in the file, by score relative to the best hit;
//! - `definition`: the definitions of names the issue writes, where they are in the file, by the
//!   name's segment weight and how few files define it;
//! - `use`: lines of the file that write a name of the issue, by the names' weights. The lines
//!   come from one `grep` of every located file for the names (`use_lines`), not from reading
//!   each file whole: a file of 8,000 lines sent line by line through the services cost more
//!   than the rest of its evidence. Hosts without `grep`, files of unknown length and a cut
//!   answer are read whole instead; the marks are the same either way;
//! - `frame`: traceback lines of the issue that fall in the file.
//!
//! Belief: the ranker's scores of all candidate source files turned into shares that sum to 1
//! (a softmax with temperature `temperature`; the ranker's weights are fitted as exactly this
//! model, so at temperature 1 the shares are its probabilities): the first file's share is high
//! when its score stands out, low when several files are close. Tests get `test_confidence` times the share of
//! the source they test (a test file is rarely needed whole, but usually needed).
//!
//! Which tests: [`order_tests`] puts the test modules of the top sources first (tests named for
//! them, by the language-blind naming of `swex_text::subjects`), then the others by score.

use crate::issue::{Issue, is_stop};
use crate::rank::RankedFile;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use swex_plugin::Services;
use swex_plugin::text::hints::ends_with_path;
use swex_plugin::text::subjects::names_subject;
use swex_plugin::types::{DefinitionEntry, FileEntry, GrepArgs, GrepMatch, SearchHit};
use swex_rankkit::localize::{Chunk, FileEvidence, Mark};

/// The kinds of marks (their [`Mark::kind`]), one per weight of [`MarkWeights`].
pub const LEXICAL: &str = "lexical";
pub const DEFINITION: &str = "definition";
pub const USE: &str = "use";
pub const FRAME: &str = "frame";

/// Weights of the evidence marks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MarkWeights {
    pub lexical: f64,
    pub definition: f64,
    #[serde(rename = "use")]
    pub uses: f64,
    pub frame: f64,
}

impl Default for MarkWeights {
    fn default() -> Self {
        MarkWeights {
            lexical: 1.0,
            definition: 2.0,
            uses: 0.3,
            frame: 1.0,
        }
    }
}

/// How files are chosen and believed, and how regions are planned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LocateConfig {
    /// Source files considered (in rank order), at least: an answer of more regions considers
    /// `top_k − 2`, so that it holds that many sources and two tests rather than stopping at
    /// `sources + tests` regions.
    pub sources: usize,
    /// Test files considered (in the planner's test order).
    pub tests: usize,
    pub marks: MarkWeights,
    /// Softmax temperature over source scores (larger: flatter beliefs).
    pub temperature: f64,
    /// A test file's belief relative to the best source's.
    pub test_confidence: f64,
    /// Read the lead file whole from this belief on (and when it fits the budget).
    pub whole_confidence: f64,
    /// ... and only when the lines of it expected to be of no use, `(1 − belief) × its length`,
    /// are at most this many (`swex_rankkit::localize::PlanLimits::whole_max_waste`): a
    /// 2,000-line file is read whole from a belief of 0.4, a 400-line one from the threshold
    /// above. Chosen on held-out folds of dev under the 700-line median the targets ask for
    /// (docs/explorer-swex.md, "The plan's thresholds"); `u32::MAX` turns it off.
    pub whole_max_waste: u32,
    /// Files this short are read whole when they get a region.
    pub small_file_lines: u32,
    /// Lines of a lead file that is not read whole, from the start of its best span.
    pub lead_focus_lines: u32,
    /// Lines of the pointer every other file gets, from the start of its best span.
    pub pointer_lines: u32,
    /// Marked chunks this many gap lines apart join.
    pub join_gap_lines: u32,
    /// Files believed less than this get no region.
    pub min_confidence: f64,
    /// Order the answer's regions sources first, each part by belief (the regions chosen are the
    /// same either way): a reader takes the candidate sources before the tests that exercise
    /// them. `false` orders all by belief, where a test's share of the best source's belief
    /// (`test_confidence`) often puts it second.
    pub tests_last: bool,
    /// Answers of at least this many regions (`top_k`) to an issue (a request of more than one
    /// line) put a pointer into the lead file before it when it is read whole: where in the file
    /// to start, as every other file gets. It takes one of the `top_k` regions, too dear in a
    /// short answer; a one-line question is answered as a search, best span first (the pointer
    /// cost the code-search benchmark's long questions NDCG@10 0.847 → 0.841). 0: every issue's
    /// answer; a large number: none.
    pub lead_pointer_from: usize,
}

impl LocateConfig {
    /// Whether an answer of `top_k` regions to `request_text` puts a pointer before a lead file
    /// read whole.
    pub fn lead_pointer(&self, top_k: usize, request_text: &str) -> bool {
        top_k >= self.lead_pointer_from && !crate::is_one_line(request_text)
    }

    /// Source files an answer of `top_k` regions considers: at least `sources`; a longer answer
    /// as many as leave room for two tests. When the lead's pointer takes one of those regions,
    /// the last file in the planner's order gives way, most often the second test: keeping both
    /// tests (one source fewer) lost 3 of 159 unseen train rows at file Hit@10.
    fn sources_for(&self, top_k: usize) -> usize {
        self.sources.max(top_k.saturating_sub(2))
    }
}

impl Default for LocateConfig {
    fn default() -> Self {
        LocateConfig {
            sources: 6,
            tests: 3,
            marks: MarkWeights::default(),
            temperature: 1.0,
            test_confidence: 0.2,
            whole_confidence: 0.15,
            whole_max_waste: 1200,
            small_file_lines: 0,
            lead_focus_lines: 100,
            pointer_lines: 5,
            join_gap_lines: 3,
            min_confidence: 0.0,
            tests_last: true,
            lead_pointer_from: 9,
        }
    }
}

/// What [`gather`] needs.
pub struct Inputs<'a> {
    pub issue: &'a Issue,
    pub ranked: &'a [RankedFile],
    /// Test files in the planner's order (partners of the top sources first).
    pub tests: &'a [String],
    pub hits: &'a [SearchHit],
    pub definitions: &'a [(String, Vec<DefinitionEntry>)],
    /// The snapshot's files (their line counts).
    pub files: &'a [FileEntry],
    /// The most regions the answer may hold.
    pub top_k: usize,
}

/// The candidate files in the order the planner prefers them (sources and tests interleaved:
/// two sources, a test, then the rest), each with its chunks, marks and belief.
pub fn gather(
    services: &Services<'_>,
    inputs: &Inputs<'_>,
    config: &LocateConfig,
) -> Vec<FileEvidence> {
    let all_sources: Vec<&RankedFile> = inputs.ranked.iter().filter(|f| !f.is_test).collect();
    let mut beliefs = softmax(
        &all_sources.iter().map(|f| f.score).collect::<Vec<_>>(),
        config.temperature,
    );
    beliefs.truncate(config.sources_for(inputs.top_k));
    let sources = &all_sources[..beliefs.len()];
    let top_belief = beliefs.first().copied().unwrap_or(0.0);

    let mut order: Vec<(String, f64)> = Vec::new();
    let mut tests = inputs.tests.iter().take(config.tests);
    for (i, (file, belief)) in sources.iter().zip(&beliefs).enumerate() {
        order.push((file.path.clone(), *belief));
        if i == 1 {
            for test in tests.by_ref().take(1) {
                order.push((test.clone(), config.test_confidence * top_belief));
            }
        }
    }
    for test in tests {
        order.push((test.clone(), config.test_confidence * top_belief * 0.5));
    }

    let names = weighted_names(inputs.issue);
    let best_hit = inputs.hits.iter().map(|h| h.score).fold(0.0, f64::max);
    let mut seen = HashSet::new();
    order.retain(|(path, _)| seen.insert(path.clone()));
    let mut line_counts: HashMap<&str, Option<u32>> = order
        .iter()
        .map(|(path, _)| (path.as_str(), None))
        .collect();
    let known = inputs
        .ranked
        .iter()
        .map(|f| (&f.path, f.line_count))
        .chain(inputs.files.iter().map(|f| (&f.path, f.line_count)));
    for (path, count) in known {
        if let (Some(slot), Some(count)) = (line_counts.get_mut(path.as_str()), count) {
            slot.get_or_insert(count);
        }
    }
    let mut uses = use_lines(services, &line_counts, &names, config.marks.uses);
    let mut out = Vec::new();
    for (path, confidence) in &order {
        let (path, confidence) = (path.clone(), *confidence);
        let (line_count, lines) = match (line_counts[path.as_str()], uses.remove(&path)) {
            (Some(count), Some(lines)) => (count, lines),
            (count, _) => {
                let lines = read_numbered(services, &path);
                (count.unwrap_or(lines.len() as u32), lines)
            }
        };
        let chunks = services
            .chunks(&path)
            .unwrap_or_default()
            .into_iter()
            .map(|c| Chunk {
                start: c.start,
                end: c.end,
                kind: c.kind,
                name: c.name,
            })
            .collect();
        let mut marks = Vec::new();
        for hit in inputs.hits.iter().filter(|h| h.path == path) {
            let weight = config.marks.lexical * hit.score / best_hit.max(f64::MIN_POSITIVE);
            marks.push(Mark::new(hit.start, hit.end, weight, "lexical").of_kind(LEXICAL));
        }
        for (name, defs) in inputs.definitions {
            let files = defs
                .iter()
                .map(|d| d.path.as_str())
                .collect::<HashSet<_>>()
                .len()
                .max(1);
            let segment = names.get(name.as_str()).copied().unwrap_or(1.0);
            for def in defs.iter().filter(|d| d.path == path) {
                let weight = config.marks.definition * segment.ln_1p() / files as f64;
                marks.push(
                    Mark::new(def.start, def.end, weight, format!("defines {}", def.name))
                        .of_kind(DEFINITION),
                );
            }
        }
        marks.extend(use_marks(&lines, &names, config.marks.uses));
        for frame in &inputs.issue.frames {
            let frame_path = frame.path.trim_start_matches('/');
            if let Some(line) = frame.line
                && ends_with_path(frame_path, &path)
            {
                marks.push(
                    Mark::new(
                        line,
                        line,
                        config.marks.frame,
                        format!("traceback line {line}"),
                    )
                    .of_kind(FRAME),
                );
            }
        }
        out.push(FileEvidence {
            path,
            line_count,
            confidence,
            chunks,
            marks,
        });
    }
    out
}

/// The issue's names worth finding in code, with their segment weights: identifiers of three
/// characters or more that are not stop words. Looked up for every word of every line read, so
/// hashed with FxHash rather than SipHash (the names are the issue's, not an attacker's keys
/// into a long-lived table).
fn weighted_names(issue: &Issue) -> NameWeights<'_> {
    issue
        .identifiers
        .iter()
        .filter(|n| n.len() >= 3 && !is_stop(n))
        .map(|n| {
            let weight = issue.identifier_weight.get(n).copied().unwrap_or(1.0);
            (n.as_str(), weight)
        })
        .collect()
}

type NameWeights<'i> = rustc_hash::FxHashMap<&'i str, f64>;

/// Lines of a file with their 1-based numbers: all of them, or a subset holding every line that
/// can write an issue name.
type NumberedLines = Vec<(u32, String)>;

/// Every line of `path`, numbered (none when it cannot be read).
fn read_numbered(services: &Services<'_>, path: &str) -> NumberedLines {
    let lines = services.read_file_lines(path).unwrap_or_default();
    (1u32..).zip(lines).collect()
}

/// For each file of `line_counts` whose length is known, the lines that contain an issue name (a
/// superset of the lines [`use_marks`] marks), from one `grep` of those files. Files left out —
/// every one when the host has no `grep` or its answer was cut — are read whole by the caller.
/// A match's text longer than `grep` carries is read again in full. With no names, or uses
/// weighing nothing, there is nothing to look for: every file of known length has no such line.
fn use_lines(
    services: &Services<'_>,
    line_counts: &HashMap<&str, Option<u32>>,
    names: &NameWeights,
    weight: f64,
) -> HashMap<String, NumberedLines> {
    let mut paths: Vec<&str> = line_counts
        .iter()
        .filter_map(|(&path, count)| count.map(|_| path))
        .collect();
    paths.sort_unstable();
    let mut out: HashMap<String, NumberedLines> = paths
        .iter()
        .map(|&path| (path.to_owned(), Vec::new()))
        .collect();
    // A name that is not one word never equals a word of a line ([`use_marks`] splits lines
    // into words); the others are identifier characters, none special in a regex.
    let mut words: Vec<&str> = names
        .keys()
        .copied()
        .filter(|name| name.chars().all(is_word_char))
        .collect();
    if words.is_empty() || paths.is_empty() || weight <= 0.0 {
        return out;
    }
    words.sort_unstable();
    let glob = format!(
        "/{{{}}}",
        paths
            .iter()
            .map(|path| swex_plugin::text::glob::escape(path))
            .collect::<Vec<_>>()
            .join(",")
    );
    // Every line of the files fits: a cut answer is never taken for a whole one.
    let limit = paths
        .iter()
        .map(|&path| line_counts[path].unwrap_or(0) as usize)
        .sum::<usize>()
        + 1;
    let args = GrepArgs::new(words.join("|"), limit).in_files(glob);
    let Ok(found) = services.grep(&args) else {
        return HashMap::new();
    };
    if found.truncated {
        return HashMap::new();
    }
    for m in found.matches {
        let text = if m.text.len() + 4 > GrepMatch::TEXT_MAX_BYTES {
            match services.read_lines(&m.path, Some(m.line), Some(i64::from(m.line))) {
                Ok(read) => read.lines.into_iter().next().unwrap_or(m.text),
                Err(_) => m.text,
            }
        } else {
            m.text
        };
        if let Some(lines) = out.get_mut(&m.path) {
            lines.push((m.line, text));
        }
    }
    out
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// One mark per line that writes an issue name as a whole word, weighted by the names' weights.
fn use_marks(lines: &[(u32, String)], names: &NameWeights, weight: f64) -> Vec<Mark> {
    if names.is_empty() || weight <= 0.0 {
        return Vec::new();
    }
    let mut marks = Vec::new();
    for (line_number, line) in lines {
        if is_import_line(line) {
            continue;
        }
        let mut total = 0.0;
        let mut found: Vec<&str> = Vec::new();
        let words = line.split(|c: char| !is_word_char(c));
        for word in words.filter(|w| w.len() >= 3) {
            if let Some((name, w)) = names.get_key_value(word)
                && !found.contains(name)
            {
                total += w.ln_1p();
                found.push(name);
            }
        }
        if total > 0.0 {
            marks.push(
                Mark::new(
                    *line_number,
                    *line_number,
                    weight * total,
                    format!("uses {}", found.join(", ")),
                )
                .of_kind(USE),
            );
        }
    }
    marks
}

/// Whether a line is an import statement (`import x`, `from x import y`, `use x::y;`,
/// `#include`, `require(...)`) in the languages the engine parses: naming a thing there is not
/// using it, and a pointer at the import block says little about where the behaviour is.
fn is_import_line(line: &str) -> bool {
    let line = line.trim_start();
    [
        "import ", "from ", "use ", "#include", "require ", "require(", "using ",
    ]
    .iter()
    .any(|prefix| line.starts_with(prefix))
        || line.starts_with("const ") && line.contains("require(")
}

/// Shares of `exp(score / temperature)`, summing to 1 (empty for no scores).
fn softmax(scores: &[f64], temperature: f64) -> Vec<f64> {
    let Some(max) = scores.iter().copied().reduce(f64::max) else {
        return Vec::new();
    };
    let t = temperature.max(1e-6);
    let exps: Vec<f64> = scores.iter().map(|s| ((s - max) / t).exp()).collect();
    let total: f64 = exps.iter().sum();
    exps.iter().map(|e| e / total).collect()
}

/// Orders test files: test modules of the top sources first (in source order), then by score.
pub fn order_tests<'a>(
    ranked: &'a [RankedFile],
    all_tests: &'a [String],
    top_sources: usize,
) -> Vec<String> {
    let sources: Vec<&RankedFile> = ranked
        .iter()
        .filter(|f| !f.is_test)
        .take(top_sources)
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    for source in &sources {
        // Partners that are ranked come first, then unranked ones from the file list.
        let mut partners: Vec<&String> = ranked
            .iter()
            .filter(|f| f.is_test && names_subject(&f.path, &source.path))
            .map(|f| &f.path)
            .collect();
        partners.extend(all_tests.iter().filter(|t| names_subject(t, &source.path)));
        for p in partners {
            if seen.insert(p.clone()) {
                out.push(p.clone());
            }
        }
    }
    for f in ranked.iter().filter(|f| f.is_test) {
        if seen.insert(f.path.clone()) {
            out.push(f.path.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beliefs_follow_how_far_the_first_file_stands_out() {
        let clear = softmax(&[10.0, 4.0, 3.0], 1.5);
        let close = softmax(&[10.0, 9.8, 9.5], 1.5);
        assert!((clear.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(clear[0] > 0.9, "{clear:?}");
        assert!(close[0] < 0.45, "{close:?}");
        assert!(softmax(&[], 1.0).is_empty());
    }

    #[test]
    fn uses_are_whole_words_counted_once_per_line() {
        let names: NameWeights = [("is_subset", 3.0), ("ProductSet", 2.0)]
            .into_iter()
            .collect();
        let lines: Vec<(u32, String)> = (1..)
            .zip([
                "def is_subset(self, other):",
                "    return self.is_subsetx(other)",
                "x = ProductSet(a) or is_subset(b) or is_subset(c)",
            ])
            .map(|(n, line)| (n, line.to_owned()))
            .collect();
        let marks = use_marks(&lines, &names, 1.0);
        let got: Vec<(u32, f64)> = marks.iter().map(|m| (m.start, m.weight)).collect();
        let w3 = 3.0f64.ln_1p();
        let w2 = 2.0f64.ln_1p();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], (1, w3));
        assert_eq!(got[1].0, 3);
        assert!((got[1].1 - (w3 + w2)).abs() < 1e-12);
    }
}
