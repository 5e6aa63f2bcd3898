//! Acceptance measurement on real data: how much of the official SWE-Explore core ground truth
//! (`dev.jsonl`, 66 SWE-bench Verified rows) lies inside the reads the extractor finds in Gemini 3
//! Pro's mini-swe-agent trajectories, for the instances the harness resolved. Line counts come
//! from `dev.line-counts.json`, so no snapshot is needed. Skipped loudly when `../shared/data` is
//! absent, a failure then under `SWEX_REQUIRE_DATA=1` (`swex_testkit`).
//!
//! Measured on 43 resolved instances (see docs/ground-truth.md): Reference policy 79911 of
//! 80139 core lines = 0.9972, Shown policy 12757 = 0.1592. The floors below sit just under
//! those values so that a regression in any reader, parser or policy shows.

use std::collections::BTreeMap;
use std::path::PathBuf;
use swex_bench::gt::build::{self, BuildOptions, VerdictScopes, Verdicts};
use swex_bench::gt::coverage::{self, MissCause};
use swex_bench::gt::load;
use swex_bench::gt::reads::ReadPolicy;
use swex_bench::gt::repo::{LineCountTable, RepoView};

fn data_dir() -> Option<PathBuf> {
    swex_testkit::shared_data(&[
        "dev.jsonl",
        "dev.line-counts.json",
        "trajectories/gemini-3-pro-mini-swe-agent",
    ])
}

fn measure(policy: ReadPolicy) -> Option<coverage::CoverageReport> {
    let data = data_dir()?;
    let rows = load::load_bench_rows(&data.join("dev.jsonl")).unwrap();
    let counts = load::load_line_counts(&data.join("dev.line-counts.json")).unwrap();
    let discovery = load::discover(&[data.join("trajectories/gemini-3-pro-mini-swe-agent")]);
    assert!(discovery.problems.is_empty());
    let mut verdicts = VerdictScopes::default();
    for file in &discovery.resolved_files {
        verdicts.add_directory(
            file.parent().unwrap().to_path_buf(),
            Verdicts::load(file).unwrap(),
        );
    }
    let (trajectories, problems) = build::load_all(&discovery.trajectory_files, &|_| {});
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(trajectories.len(), 66);
    let options = BuildOptions {
        policy,
        verdicts,
        ..BuildOptions::default()
    };
    let mut report = build::BuildReport::default();
    let groups = build::group(trajectories, &options, &mut report);
    let view_for = |id: &str| {
        counts
            .get(id)
            .map(|c| Box::new(LineCountTable::new(c.clone())) as Box<dyn RepoView>)
    };
    Some(coverage::measure(&rows, &groups, &view_for, policy))
}

#[test]
fn reference_reads_cover_the_official_core() {
    let Some(report) = measure(ReadPolicy::Reference) else {
        return;
    };
    assert_eq!(
        report.instances.len(),
        43,
        "resolved instances with a trajectory"
    );
    assert_eq!(report.core_lines(), 80139);
    let fraction = report.fraction();
    eprintln!(
        "reference policy: {} of {} core lines = {fraction:.4}",
        report.covered_lines(),
        report.core_lines()
    );
    assert!(
        fraction >= 0.995,
        "coverage {fraction:.4} fell below the measured 0.9972"
    );
    // Every miss is a short region of a file Gemini's reads do not reach (regions the official
    // builder added by other means), never a read the extractor saw and dropped.
    let mut by_cause: BTreeMap<String, u64> = BTreeMap::new();
    for instance in &report.instances {
        for miss in &instance.misses {
            assert!(
                matches!(
                    miss.cause,
                    MissCause::NeverMentioned
                        | MissCause::MentionedNotRead
                        | MissCause::OtherLinesOfFile
                ),
                "{} {}:{} {}",
                instance.instance_id,
                miss.path,
                miss.lines,
                miss.cause
            );
            for iv in miss.lines.intervals() {
                assert!(
                    iv.line_count() <= 5,
                    "{} {}:{iv}",
                    instance.instance_id,
                    miss.path
                );
            }
            *by_cause.entry(miss.cause.to_string()).or_default() += miss.lines.len();
        }
    }
    eprintln!("misses by cause: {by_cause:?}");
}

#[test]
fn shown_reads_keep_their_measured_coverage() {
    let Some(shown) = measure(ReadPolicy::Shown) else {
        return;
    };
    let fraction = shown.fraction();
    eprintln!(
        "shown policy: {} of {} = {fraction:.4}",
        shown.covered_lines(),
        shown.core_lines()
    );
    assert!(
        (0.155..0.2).contains(&fraction),
        "shown coverage {fraction:.4}, measured 0.1592"
    );
}
