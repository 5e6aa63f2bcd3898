#!/usr/bin/env python3
"""One-shot `swex explore` latency over a benchmark's rows: the issue 22 target ("warm p50 <= 40 ms
on the dev snapshots"), measured the way docs/explorer-swex.md ("Speed") reports it.

For every row of BENCH (a bench.jsonl: `instance_id`, `problem_statement`), each binary runs
`swex explore --repo REPOS/<instance_id> --cache-dir CACHE -q --json -` with the issue on stdin,
as a new process each time (process start, opening the cached index, the explorer). A first pass
warms the cache and is not counted; then RUNS passes, the binaries alternating per instance (the
first binary first on even passes, last on odd ones), so that a change of the shared machine's
load falls on both. Per binary: the median of the runs of each instance, then the p50 and p90 over
instances; with two binaries, the median over instances of the per-instance ratio (second /
first; the same binary twice is an A/A run, which shows the noise). The load average is printed
before and after: a figure means little without it.

    python3 bench/python/explore_latency.py --bench ../shared/data/dev.jsonl \\
        --repos /work/snapshots/repos --cache-dir /work/bench-tmp/cache --runs 5 \\
        target/release/swex [/path/to/other/swex] [--json out.json]

Needs only the Python standard library. A benchmark, not a test: run it on a quiet machine, more
than once, and report the ratio next to the absolute figures.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def read_rows(path, limit):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: not JSON: {e}")
            if "instance_id" not in row or "problem_statement" not in row:
                sys.exit(f"{path}:{n}: a row needs instance_id and problem_statement")
            rows.append(row)
            if limit and len(rows) >= limit:
                break
    if not rows:
        sys.exit(f"{path}: no rows")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binaries", nargs="+", help="one or two swex binaries")
    ap.add_argument("--bench", required=True, help="bench.jsonl with instance_id and problem_statement")
    ap.add_argument("--repos", required=True, help="snapshot folder: REPOS/<instance_id>")
    ap.add_argument("--cache-dir", required=True, help="the index cache both binaries use")
    ap.add_argument("--runs", type=int, default=5, help="counted passes (after one warm-up pass)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N rows (0: all)")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    if len(args.binaries) > 2:
        sys.exit("at most two binaries: the ratio compares the second with the first")
    if args.runs < 1:
        sys.exit("--runs must be at least 1")
    for binary in args.binaries:
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary}: not an executable")
    rows = read_rows(args.bench, args.limit)
    for row in rows:
        snapshot = os.path.join(args.repos, row["instance_id"])
        if not os.path.isdir(snapshot):
            sys.exit(f"{snapshot}: no snapshot for {row['instance_id']}")

    def run(binary, row):
        command = [binary, "explore", "--repo", os.path.join(args.repos, row["instance_id"]),
                   "--cache-dir", args.cache_dir, "-q", "--json", "-"]
        start = time.perf_counter()
        done = subprocess.run(command, input=row["problem_statement"].encode(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        elapsed = (time.perf_counter() - start) * 1000.0
        if done.returncode != 0:
            sys.exit(f"{binary} failed on {row['instance_id']}: "
                     f"{done.stderr.decode(errors='replace').strip()}")
        return elapsed

    load_before = os.getloadavg()
    for row in rows:
        for binary in args.binaries:
            run(binary, row)
    # Keyed by position: the same binary twice is an A/A run, a measure of the noise.
    slots = list(range(len(args.binaries)))
    times = [{row["instance_id"]: [] for row in rows} for _ in slots]
    for n in range(args.runs):
        order = slots if n % 2 == 0 else slots[::-1]
        for row in rows:
            for slot in order:
                times[slot][row["instance_id"]].append(run(args.binaries[slot], row))
    load_after = os.getloadavg()

    report = {"instances": len(rows), "runs": args.runs,
              "load_before": [round(x, 2) for x in load_before],
              "load_after": [round(x, 2) for x in load_after], "binaries": []}
    for slot in slots:
        medians = [statistics.median(v) for v in times[slot].values()]
        p50, p90 = statistics.median(medians), percentile(medians, 0.9)
        report["binaries"].append({"binary": args.binaries[slot], "p50_ms": round(p50, 1),
                                   "p90_ms": round(p90, 1)})
        print(f"{args.binaries[slot]}: p50 {p50:.1f} ms, p90 {p90:.1f} ms "
              f"(median of {args.runs} runs per instance, {len(rows)} instances)")
    if len(slots) == 2:
        ratios = [statistics.median(times[1][i]) / statistics.median(times[0][i]) for i in times[0]]
        report["ratio"] = round(statistics.median(ratios), 3)
        print(f"median per-instance ratio, second / first: {report['ratio']:.3f}")
    print(f"load average before {report['load_before']}, after {report['load_after']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
