#!/usr/bin/env python3
"""Engine benchmark driver (run through `scripts/bench-engine`).

For the snapshots of one repository, in order (default: the django instances of dev.jsonl):
- cold build of the first snapshot (empty cache), then a warm open of it;
- each following snapshot opened with the same cache ("next snapshot": only what changed), and
  also built cold in a cache of its own, so that each next-snapshot cost is compared with the
  cold cost of the same snapshot (later snapshots can be much larger than the first);
- query latency on the warm first snapshot (`bench_queries` example: issue texts through the query
  builder and lexical search, symbol lookups, grep);
- the reference-style Python pipeline (`bm25_reference.py`) on the first snapshot.
Every `swex` run is timed by `/usr/bin/time` (wall, user, system, peak RSS). Prints a Markdown
report and writes the raw JSON next to it (default `results/bench-engine-<date>/`).
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def timed(cmd, stdout_json=True):
    """Runs cmd under /usr/bin/time; returns (parsed stdout, wall s, user s, sys s, max RSS MiB)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as times:
        proc = subprocess.run(
            ["/usr/bin/time", "-o", times.name, "-f", "%e %U %S %M"] + cmd,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")
        wall, user, system, rss = times.read().split()[-4:]
    out = json.loads(proc.stdout) if stdout_json else proc.stdout
    return out, float(wall), float(user), float(system), int(rss) / 1024.0


def load_average():
    try:
        return os.getloadavg()
    except OSError:
        return (float("nan"),) * 3


def cpu_model():
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def warm_page_cache(path):
    for directory, _, files in os.walk(path):
        for name in files:
            try:
                with open(os.path.join(directory, name), "rb") as handle:
                    while handle.read(1 << 20):
                        pass
            except OSError:
                pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", required=True, help="folder of <instance_id> snapshots")
    parser.add_argument("--issues", required=True, help="dev.jsonl")
    parser.add_argument("--repo", default="django/django")
    parser.add_argument("--instances", default=None, help="comma-separated ids (default: all of --repo)")
    parser.add_argument("--out", default=None)
    parser.add_argument("--skip-python", action="store_true")
    parser.add_argument("--no-cold-each", action="store_true", help="skip the cold build of every next snapshot")
    args = parser.parse_args()

    swex = os.path.join(ROOT, "target/release/swex")
    queries_bin = os.path.join(ROOT, "target/release/examples/bench_queries")
    rows = [json.loads(l) for l in open(args.issues) if l.strip()]
    if args.instances:
        instances = args.instances.split(",")
    else:
        instances = [r["instance_id"] for r in rows if r["repo"] == args.repo]
    snapshots = [os.path.join(args.snapshots, i) for i in instances]
    for path in snapshots:
        if not os.path.isdir(path):
            sys.exit(f"missing snapshot {path}")
    date = datetime.datetime.now().strftime("%Y-%m-%d")
    out_dir = args.out or os.path.join(ROOT, "results", f"bench-engine-{date}")
    os.makedirs(out_dir, exist_ok=True)
    report = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "machine": {
            "cpu": cpu_model(),
            "cores": os.cpu_count(),
            "load_average_before": load_average(),
        },
        "instances": instances,
    }
    for path in snapshots:
        warm_page_cache(path)

    cache = tempfile.mkdtemp(prefix="swex-bench-cache-")
    index_cmd = lambda path: [swex, "index", "--repo", path, "--cache-dir", cache, "--json", "-q"]
    runs = []
    cold, wall, user, system, rss = timed(index_cmd(snapshots[0]) + ["--no-graph"])
    runs.append({"what": "cold", "instance": instances[0], "wall": wall, "user": user, "sys": system, "rss_mib": rss, "stats": cold["stats"]})
    warm, wall, user, system, rss = timed(index_cmd(snapshots[0]))
    runs.append({"what": "warm (with graph)", "instance": instances[0], "wall": wall, "user": user, "sys": system, "rss_mib": rss, "stats": warm["stats"], "graph": warm["graph"]})
    warm2, wall, user, system, rss = timed(index_cmd(snapshots[0]) + ["--no-graph"])
    runs.append({"what": "warm", "instance": instances[0], "wall": wall, "user": user, "sys": system, "rss_mib": rss, "stats": warm2["stats"]})
    for instance, path in zip(instances[1:], snapshots[1:]):
        second, wall, user, system, rss = timed(index_cmd(path) + ["--no-graph"])
        run = {"what": "next snapshot", "instance": instance, "wall": wall, "user": user, "sys": system, "rss_mib": rss, "stats": second["stats"]}
        if not args.no_cold_each:
            own_cache = tempfile.mkdtemp(prefix="swex-bench-cold-")
            cold_same, wall, user, system, _ = timed([swex, "index", "--repo", path, "--cache-dir", own_cache, "--json", "-q", "--no-graph"])
            shutil.rmtree(own_cache, ignore_errors=True)
            run["cold_same"] = {"wall": wall, "user": user, "sys": system, "total_ms": cold_same["stats"]["timings_ms"]["total"]}
        runs.append(run)
    report["index_runs"] = runs

    queries, wall, user, system, rss = timed(
        [queries_bin, "--repo", snapshots[0], "--cache-dir", cache, "--issues", args.issues, "--repo-filter", args.repo, "--repeat", "5"]
    )
    report["queries"] = queries
    shutil.rmtree(cache, ignore_errors=True)

    if not args.skip_python:
        python, wall, user, system, rss = timed(
            [sys.executable, os.path.join(ROOT, "bench/python/bm25_reference.py"), "--repo", snapshots[0], "--issues", args.issues, "--repo-filter", args.repo]
        )
        python.update({"process_wall": wall, "process_user": user, "process_rss_mib": rss})
        report["python"] = python
    report["machine"]["load_average_after"] = load_average()
    with open(os.path.join(out_dir, "report.json"), "w") as handle:
        json.dump(report, handle, indent=2)
    print(markdown(report))
    print(f"\nraw results: {os.path.join(out_dir, 'report.json')}", file=sys.stderr)


def markdown(report):
    lines = []
    m = report["machine"]
    lines.append(f"Date {report['date']}; {m['cpu']}, {m['cores']} cores; load average before "
                 f"{m['load_average_before'][0]:.1f}, after {m['load_average_after'][0]:.1f} (shared machine).")
    lines.append("")
    lines.append("| run | instance | wall s | user+sys s | peak RSS MiB | files read / analysed / docs added | engine stages (ms) | cold build of the same snapshot: wall s (ratio) |")
    lines.append("|---|---|---:|---:|---:|---|---|---|")
    cold = report["index_runs"][0]
    for run in report["index_runs"]:
        s = run["stats"]
        t = s["timings_ms"]
        c = s["cache"]
        lines.append(
            f"| {run['what']} | {run['instance']} | {run['wall']:.2f} | {run['user'] + run['sys']:.2f} | {run['rss_mib']:.0f} | "
            f"{c['files_read']} / {c['analyses_computed']} / {s['pool']['docs_added']} | "
            f"walk {t['walk']:.0f}, read {t['read']:.0f}, analyse {t['analyze']:.0f}, lexical {t['lexical']:.0f}, total {t['total']:.0f} | "
            + (f"{run['cold_same']['wall']:.2f} ({run['wall'] / run['cold_same']['wall']:.0%})" if "cold_same" in run else "")
            + " |"
        )
    nexts = [r for r in report["index_runs"] if r["what"] == "next snapshot"]
    same = [r for r in nexts if "cold_same" in r]
    if same:
        ratios = [r["wall"] / r["cold_same"]["wall"] for r in same]
        cpu_ratios = [(r["user"] + r["sys"]) / (r["cold_same"]["user"] + r["cold_same"]["sys"]) for r in same]
        lines.append("")
        lines.append(
            f"Next snapshot / cold build of the same snapshot: wall {min(ratios):.0%}–{max(ratios):.0%} (mean {sum(ratios) / len(ratios):.0%}), "
            f"CPU {min(cpu_ratios):.0%}–{max(cpu_ratios):.0%} (mean {sum(cpu_ratios) / len(cpu_ratios):.0%}) over {len(same)} snapshots."
        )
    if nexts:
        ratios = [r["wall"] / cold["wall"] for r in nexts]
        cpu_ratios = [(r["user"] + r["sys"]) / (cold["user"] + cold["sys"]) for r in nexts]
        lines.append("")
        lines.append(
            f"Next snapshot / cold build of the first: wall {min(ratios):.0%}–{max(ratios):.0%} (mean {sum(ratios) / len(ratios):.0%}), "
            f"CPU {min(cpu_ratios):.0%}–{max(cpu_ratios):.0%} (mean {sum(cpu_ratios) / len(cpu_ratios):.0%}) over {len(nexts)} snapshots."
        )
    s = cold["stats"]
    lines.append(f"Cold: {s['files']} files, {s['bytes'] / 1e6:.1f} MB, {s['chunks']} chunks "
                 f"({s['pool']['snapshot_docs']} indexed), {s['definitions']} definitions; "
                 f"{s['bytes'] / 1e6 / cold['wall']:.2f} MB/s wall.")
    graph = next((r.get("graph") for r in report["index_runs"] if r.get("graph")), None)
    if graph:
        lines.append(f"Graph: {graph['nodes']} nodes, {graph['edges']} edges, built in {graph['build_ms']:.0f} ms (on first use).")
    q = report["queries"]
    for key, label in (("own_issues", "own issue texts"), ("other_issues", "other dev issue texts")):
        part = q[key]
        first, again, build = part["search_first_run"], part["search_repeated"], part["query_build"]
        lines.append(
            f"Queries, {label} ({part['queries']}, {part['mean_tokens']:.0f} tokens on average): search p50 {first['p50_ms']:.1f} ms, "
            f"p95 {first['p95_ms']:.1f} ms first run; repeated p50 {again['p50_ms']:.1f} ms, p95 {again['p95_ms']:.1f} ms; "
            f"query building p50 {build['p50_ms']:.2f} ms."
        )
    lines.append(f"Symbol lookups ({q['definitions']['n']}): p50 {q['definitions']['p50_ms'] * 1000:.0f} µs, "
                 f"p95 {q['definitions']['p95_ms'] * 1000:.0f} µs (the first builds the graph: {q['definitions']['max_ms']:.0f} ms). "
                 f"grep over the snapshot: p50 {q['grep']['p50_ms']:.0f} ms.")
    if "python" in report:
        p = report["python"]
        lines.append(
            f"Python reference-style pipeline: {p['files']} files, {p['bytes'] / 1e6:.1f} MB, {p['chunks']} windows; build "
            f"{p['build_seconds']:.2f} s ({p['mb_per_second']:.2f} MB/s); query p50 {p['query_ms_p50']:.0f} ms, p95 {p['query_ms_p95']:.0f} ms; "
            f"peak RSS {p['process_rss_mib']:.0f} MiB."
        )
        lines.append(
            f"Cold build throughput, swex / Python: {(s['bytes'] / cold['wall']) / (p['bytes'] / p['build_seconds']):.2f}×."
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
