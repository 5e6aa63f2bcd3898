//! Read extraction, one feature per case: a single shell step (command + observation) against a
//! small snapshot described by line counts, under both read policies.

use std::collections::BTreeMap;
use std::path::PathBuf;
use swex_bench::gt::intervals::LineSet;
use swex_bench::gt::reads::{ReadPolicy, extract};
use swex_bench::gt::repo::LineCountTable;
use swex_bench::gt::trajectory::{Action, Elided, Format, Observation, Step, Trajectory};

fn repo() -> LineCountTable {
    LineCountTable::new(BTreeMap::from([
        ("pkg/a.py".to_string(), 100),
        ("pkg/b.py".to_string(), 50),
        ("pkg/my-mod-2/c.py".to_string(), 30),
        ("docs/x.rst".to_string(), 10),
    ]))
}

fn trajectory(action: Action, observation: Option<Observation>) -> Trajectory {
    Trajectory {
        source: PathBuf::from("t.traj.json"),
        record: 0,
        format: Format::MiniSweAgentV1,
        instance_id: Some("o__r-1".into()),
        model: Some("m".into()),
        workdir: Some("/testbed".into()),
        submission: None,
        steps: vec![Step {
            index: 2,
            action,
            observation,
            cwd: None,
        }],
    }
}

/// Reads as `path:intervals` per file, sorted, space-separated; `-` when nothing was read.
fn render(t: &Trajectory, policy: ReadPolicy) -> String {
    let extraction = extract(t, &repo(), policy);
    let mut files: BTreeMap<String, LineSet> = BTreeMap::new();
    for read in &extraction.reads {
        assert_eq!(read.step, 2);
        let entry = files.entry(read.path.clone()).or_default();
        *entry = entry.union(&read.lines);
    }
    if files.is_empty() {
        return "-".into();
    }
    files
        .iter()
        .map(|(p, l)| format!("{p}:{l}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `reference` and `shown` are the expected reads under each policy.
fn check(command: &str, output: &str, reference: &str, shown: &str) {
    let t = trajectory(
        Action::Shell {
            command: command.into(),
        },
        Some(Observation::plain(output)),
    );
    assert_eq!(
        render(&t, ReadPolicy::Reference),
        reference,
        "reference: {command}"
    );
    assert_eq!(render(&t, ReadPolicy::Shown), shown, "shown: {command}");
}

#[test]
fn whole_file_commands() {
    check("cat pkg/a.py", "", "pkg/a.py:1-100", "pkg/a.py:1-100");
    check(
        "cat /testbed/pkg/a.py",
        "",
        "pkg/a.py:1-100",
        "pkg/a.py:1-100",
    );
    check("less ./pkg/a.py", "", "pkg/a.py:1-100", "pkg/a.py:1-100");
    check("nl -ba 'pkg/a.py'", "", "pkg/a.py:1-100", "pkg/a.py:1-100");
    check(
        "cat pkg/a.py pkg/b.py",
        "",
        "pkg/a.py:1-100 pkg/b.py:1-50",
        "pkg/a.py:1-100 pkg/b.py:1-50",
    );
}

#[test]
fn ranges_from_the_command_line() {
    check("head -n 20 pkg/a.py", "", "pkg/a.py:1-20", "pkg/a.py:1-20");
    check("head pkg/a.py", "", "pkg/a.py:1-10", "pkg/a.py:1-10");
    check(
        "tail -n 10 pkg/a.py",
        "",
        "pkg/a.py:91-100",
        "pkg/a.py:91-100",
    );
    check(
        "tail -n +95 pkg/a.py",
        "",
        "pkg/a.py:95-100",
        "pkg/a.py:95-100",
    );
    check(
        "sed -n '10,20p' pkg/a.py",
        "",
        "pkg/a.py:10-20",
        "pkg/a.py:10-20",
    );
    check(
        "sed -n 10,20p pkg/a.py",
        "",
        "pkg/a.py:10-20",
        "pkg/a.py:10-20",
    );
    check(
        "sed -n '1,5p;95,$p' pkg/a.py",
        "",
        "pkg/a.py:1-5,95-100",
        "pkg/a.py:1-5,95-100",
    );
    check("head -n 500 pkg/b.py", "", "pkg/b.py:1-50", "pkg/b.py:1-50");
    check(
        "head -n 3 pkg/a.py pkg/b.py",
        "",
        "pkg/a.py:1-3 pkg/b.py:1-3",
        "pkg/a.py:1-3 pkg/b.py:1-3",
    );
    // sed numbers the concatenation: the reference applies the range to each file, Shown only
    // trusts the first.
    check(
        "sed -n '1,3p' pkg/a.py pkg/b.py",
        "",
        "pkg/a.py:1-3 pkg/b.py:1-3",
        "pkg/a.py:1-3",
    );
    check(
        "env PAGER=cat head -n 2 pkg/b.py",
        "",
        "pkg/b.py:1-2",
        "pkg/b.py:1-2",
    );
}

#[test]
fn pipelines() {
    // The reference counts what the source command addresses; Shown what reaches the agent.
    check(
        "nl -ba pkg/a.py | sed -n '10,20p'",
        "",
        "pkg/a.py:1-100",
        "pkg/a.py:10-20",
    );
    check(
        "cat pkg/a.py | head -n 5",
        "",
        "pkg/a.py:1-100",
        "pkg/a.py:1-5",
    );
    check(
        "head -n 30 pkg/a.py | tail -n 5",
        "",
        "pkg/a.py:1-30",
        "pkg/a.py:26-30",
    );
    check(
        "nl -ba pkg/a.py | grep -A 2 foo",
        "    40\tfoo\n    41\tx\n    42\ty\n--\n    70\tfoo\n",
        "pkg/a.py:1-100",
        "pkg/a.py:40-42,70-70",
    );
    check(
        "cat -n pkg/a.py | grep foo",
        "    40\tfoo\n",
        "pkg/a.py:1-100",
        "pkg/a.py:40-40",
    );
    check(
        "sed -n '10,20p' pkg/a.py | grep -n bar",
        "3:bar\n",
        "pkg/a.py:10-20",
        "pkg/a.py:12-12",
    );
    // Numbers that do not belong to the filtered range are not trusted.
    check(
        "nl -ba pkg/b.py | grep x",
        "    77\tx\n",
        "pkg/b.py:1-50",
        "-",
    );
}

#[test]
fn searches() {
    check(
        "grep -n foo pkg/a.py",
        "40:foo\n70:foo\n",
        "pkg/a.py:1-100",
        "pkg/a.py:40-40,70-70",
    );
    check("grep foo pkg/a.py", "foo\n", "pkg/a.py:1-100", "-");
    // Two numbered searches of the same file share one output safely; of different files not.
    check(
        "grep -n foo pkg/a.py\ngrep -n bar pkg/a.py",
        "40:foo\n41:bar\n",
        "pkg/a.py:1-100",
        "pkg/a.py:40-41",
    );
    check(
        "grep -n foo pkg/a.py; grep -n bar pkg/b.py",
        "40:foo\n41:bar\n",
        "pkg/a.py:1-100 pkg/b.py:1-50",
        "-",
    );
    check("grep -c foo pkg/a.py", "2\n", "pkg/a.py:1-100", "-");
    // Tagged output: the split between path and number is found against the snapshot, so paths
    // with dashes and digits work, and context lines (`-N-`) count.
    check(
        "grep -rn -B1 foo pkg",
        "pkg/a.py:40:foo\n--\npkg/my-mod-2/c.py-5-context\npkg/my-mod-2/c.py:6:foo\n",
        "pkg/a.py:40-40 pkg/my-mod-2/c.py:5-6",
        "pkg/a.py:40-40 pkg/my-mod-2/c.py:5-6",
    );
    check(
        "grep -rn foo .",
        "./reproduce.py:3:foo\n./pkg/b.py:7:foo\n./nowhere.py:1:foo\n",
        "pkg/b.py:7-7",
        "pkg/b.py:7-7",
    );
    check(
        "find . -name '*.py' | xargs grep -n foo",
        "./pkg/a.py:40:foo\n",
        "pkg/a.py:40-40",
        "pkg/a.py:40-40",
    );
    // Without line numbers a tagged search names files, not lines: nothing under either policy
    // (its operand is a directory, so the reference's whole-file fallback finds no file either).
    check("grep -r foo pkg", "pkg/a.py:foo\n", "-", "-");
    check(
        "git grep -n foo",
        "pkg/b.py:9:foo\n",
        "pkg/b.py:9-9",
        "pkg/b.py:9-9",
    );
}

#[test]
fn paths_and_working_directories() {
    check("cd pkg && cat a.py", "", "pkg/a.py:1-100", "pkg/a.py:1-100");
    check(
        "cd /testbed/pkg/my-mod-2; head -n 3 c.py",
        "",
        "pkg/my-mod-2/c.py:1-3",
        "pkg/my-mod-2/c.py:1-3",
    );
    check(
        "cd pkg\ncat ../docs/x.rst",
        "",
        "docs/x.rst:1-10",
        "docs/x.rst:1-10",
    );
    check("cd - && cat a.py", "", "-", "-");
    check("cat reproduce_issue.py debug_x.py", "", "-", "-");
    check("cat /etc/passwd ~/.bashrc", "", "-", "-");
    check("cat pkg/*.py", "", "-", "-");
    check("cat pkg/missing.py", "", "-", "-");
}

#[test]
fn what_is_not_a_read() {
    check("cat pkg/a.py > /tmp/out", "", "pkg/a.py:1-100", "-");
    check("sed -i 's/a/b/' pkg/a.py", "", "-", "-");
    check(
        "python -c \"print(open('pkg/a.py').read())\"",
        "x",
        "-",
        "-",
    );
    check(
        "cat <<'EOF' > reproduce.py\nprint(open('pkg/a.py').read())\nEOF\npython reproduce.py",
        "",
        "-",
        "-",
    );
    check(
        "sed -n '/def/,/return/p' pkg/a.py",
        "",
        "pkg/a.py:1-100",
        "-",
    );
    check("ls pkg; cat pkg/b.py", "", "pkg/b.py:1-50", "pkg/b.py:1-50");
}

#[test]
fn cut_outputs_count_only_what_survived_under_shown() {
    let t = trajectory(
        Action::Shell {
            command: "cat pkg/a.py".into(),
        },
        Some(Observation {
            text: "l1\nl2\nl3\nl99\nl100\n".into(),
            elided: Some(Elided {
                head: "l1\nl2\nl3\n".into(),
                tail: "l99\nl100\n".into(),
            }),
        }),
    );
    assert_eq!(render(&t, ReadPolicy::Reference), "pkg/a.py:1-100");
    assert_eq!(render(&t, ReadPolicy::Shown), "pkg/a.py:1-3,99-100");
    let discards: Vec<String> = extract(&t, &repo(), ReadPolicy::Shown)
        .discards
        .iter()
        .map(|d| format!("{} {}", d.reason, d.lines.clone().unwrap_or_default()))
        .collect();
    assert_eq!(discards, vec!["cut from a long output 4-98"]);
}

#[test]
fn editor_views() {
    let view = |path: &str, range| {
        let t = trajectory(
            Action::View {
                path: path.into(),
                range,
            },
            None,
        );
        (
            render(&t, ReadPolicy::Reference),
            render(&t, ReadPolicy::Shown),
        )
    };
    assert_eq!(
        view("/testbed/pkg/a.py", Some((10, -1))).0,
        "pkg/a.py:10-100"
    );
    assert_eq!(
        view("/testbed/pkg/a.py", Some((10, 20))).1,
        "pkg/a.py:10-20"
    );
    assert_eq!(view("pkg/b.py", None).0, "pkg/b.py:1-50");
    assert_eq!(view("/testbed/pkg", None).0, "-");
}
