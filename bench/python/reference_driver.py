#!/usr/bin/env python3
"""Drive the reference SWE-Explore evaluator (`eval.py`) for swex's parity checks and timings.

This file holds no reference code: it imports `eval.py` from a folder given on the command line
(`--eval-dir`), so the reference stays outside the repository.

Three modes:

  score   Score result rows against a benchmark the way the reference runner does (skip instances
          without core regions, cut each list at every top-k, all 17 metrics in the runner's
          order), `--repeat` times, and print the means of the last pass plus the wall time per
          pass. Reads the files once per pass, like a fresh `swex score` run.

  compare Recompute, with the reference, every metric row `swex score --output` wrote (its
          `regions` are already cut at `top_k`) and report rows whose values differ by more than
          `--tolerance` (default 1e-9) from swex's; exit 1 on any difference.

  cases   Check the `expected` values of swex's metric case file
          (bench/tests/data/metric-cases.json) against the reference; exit 1 on any difference.

Examples:
  python3 bench/python/reference_driver.py --eval-dir /tmp/ref score \
      --bench ../shared/data/dev.jsonl --predictions ../shared/data/dev.cosil-top5.jsonl \
      --line-counts ../shared/data/dev.line-counts.json --top-k 5 --repeat 100
  python3 bench/python/reference_driver.py --eval-dir /tmp/ref compare \
      --bench ../shared/data/dev.jsonl --line-counts ../shared/data/dev.line-counts.json --rows rows.jsonl
  python3 bench/python/reference_driver.py --eval-dir /tmp/ref cases bench/tests/data/metric-cases.json
"""
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

METRICS = [
    "precision", "recall", "f1_score", "hit_file_rate", "noise_file_rate", "hit_region_rate",
    "noise_region_rate", "weighted_core_coverage", "context_efficiency", "optional_coverage",
    "ndcg_at_100", "ndcg_at_300", "ndcg_at_500", "recall_at_100", "recall_at_300",
    "recall_at_500", "first_useful_hit",
]


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def score_pass(evaluator_class, args, top_ks):
    bench = [r for r in read_jsonl(args.bench) if (r.get("ground_truth") or {}).get("read_core_regions")]
    with open(args.line_counts, encoding="utf-8") as f:
        line_counts = json.load(f)
    evaluator = evaluator_class(Path(args.bench), file_line_counts=line_counts)
    bench_ids = {r["instance_id"] for r in bench}
    totals = {k: {m: 0.0 for m in METRICS} for k in top_ks}
    count = 0
    for row in read_jsonl(args.predictions):
        iid = row["instance_id"]
        if iid not in bench_ids or row.get("error"):
            continue
        preds = [(r["path"], r["start"], r["end"]) for r in row["regions"]]
        gt = evaluator.bench_data_dict[iid]["ground_truth"]
        evaluator._current_file_line_counts = line_counts.get(iid, {})
        for k in top_ks:
            cut = preds[:k]
            for m in METRICS:
                totals[k][m] += getattr(evaluator, f"evaluate_{m}")(cut, gt)
        count += 1
    return count, totals


def run_score(evaluator_class, args):
    top_ks = sorted({int(k) for k in args.top_k.split(",")})
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        count, totals = score_pass(evaluator_class, args, top_ks)
        times.append(time.perf_counter() - t0)
    for k in top_ks:
        print(f"top_k={k} instances={count}")
        for m in METRICS:
            print(f"  {m:24s} {totals[k][m] / max(count, 1):.4f}")
    times.sort()
    print(f"passes={len(times)} total={sum(times):.3f}s per-pass median={times[len(times) // 2] * 1000:.2f}ms "
          f"min={times[0] * 1000:.2f}ms")


def run_compare(evaluator_class, args):
    with open(args.line_counts, encoding="utf-8") as f:
        line_counts = json.load(f)
    evaluator = evaluator_class(Path(args.bench), file_line_counts=line_counts)
    rows = read_jsonl(args.rows)
    differences = 0
    for row in rows:
        iid = row["instance_id"]
        gt = evaluator.bench_data_dict[iid]["ground_truth"]
        evaluator._current_file_line_counts = line_counts.get(iid, {})
        preds = [(r["path"], r["start"], r["end"]) for r in row["regions"]]
        for m in METRICS:
            reference = getattr(evaluator, f"evaluate_{m}")(preds, gt)
            if abs(reference - row["metrics"][m]) > args.tolerance:
                differences += 1
                print(f"DIFF {iid} {row['explorer']}@{row['top_k']}: {m} swex={row['metrics'][m]!r} reference={reference!r}")
    print(f"{len(rows)} rows, {len(rows) * len(METRICS)} values, {differences} differences")
    return 1 if differences else 0


def run_cases(evaluator_class, args):
    cases = json.loads(Path(args.cases).read_text(encoding="utf-8"))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            bench = Path(tmp) / "bench.jsonl"
            bench.write_text(json.dumps({"instance_id": "case", "ground_truth": case["ground_truth"]}) + "\n")
            evaluator = evaluator_class(bench, file_line_counts={"case": case["line_counts"]})
            evaluator._current_file_line_counts = case["line_counts"]
            preds = [(r["path"], r["start"], r["end"]) for r in case["predictions"]]
            if "top_k" in case:
                preds = preds[: case["top_k"]]
            for metric, expected in case["expected"].items():
                got = getattr(evaluator, f"evaluate_{metric}")(preds, case["ground_truth"])
                if got != expected:
                    failures += 1
                    print(f"DIFF {case['name']}: {metric} reference={got!r} expected={expected!r}")
    print(f"{len(cases)} cases, {failures} differences")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eval-dir", required=True, help="folder holding the reference eval.py")
    sub = parser.add_subparsers(dest="mode", required=True)
    score = sub.add_parser("score")
    score.add_argument("--bench", required=True)
    score.add_argument("--predictions", required=True)
    score.add_argument("--line-counts", required=True)
    score.add_argument("--top-k", default="5")
    score.add_argument("--repeat", type=int, default=1)
    compare = sub.add_parser("compare")
    compare.add_argument("--bench", required=True)
    compare.add_argument("--line-counts", required=True)
    compare.add_argument("--rows", required=True, help="metric rows written by swex score --output")
    compare.add_argument("--tolerance", type=float, default=1e-9)
    cases = sub.add_parser("cases")
    cases.add_argument("cases")
    args = parser.parse_args()

    sys.path.insert(0, str(Path(args.eval_dir).resolve()))
    from eval import ExploreEvaluator  # noqa: E402  (the reference, outside the repository)

    if args.mode == "score":
        run_score(ExploreEvaluator, args)
        return 0
    if args.mode == "compare":
        return run_compare(ExploreEvaluator, args)
    return run_cases(ExploreEvaluator, args)


if __name__ == "__main__":
    sys.exit(main())
