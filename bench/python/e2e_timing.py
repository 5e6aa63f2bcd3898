#!/usr/bin/env python3
"""End-to-end timing and parity of the reference-style Python pipeline against `swex bench`.

The Python side does, per benchmark row, what the reference runner does for its BM25 and TF-IDF
explorers: each explorer walks the snapshot and builds its 80/20 line windows (the reference
constructs a fresh explorer per instance), ranks them, and the answer is scored with the
reference evaluator (`eval.py`, imported from `--eval-dir`; it stays outside this repository)
against line counts read from the snapshot. The ranking functions are those of
`parity_ref_baselines.py` (next to this file), which reimplements the reference baselines on the
same libraries (rank_bm25, scikit-learn).

It writes reference-format rows (`{out}/{bm25,tfidf}/top{k}.jsonl`), prints the wall time, and,
with `--swex-results DIR` (a `swex bench` output folder holding `bm25-ref/top{k}.jsonl` and
`tfidf-ref/top{k}.jsonl`), compares the two sides instance by instance: identical region lists,
and the mean of every metric.

  pip install rank-bm25 scikit-learn
  python3 bench/python/e2e_timing.py --eval-dir /path/to/reference --bench ../shared/data/dev.jsonl \
      --repos /work/snapshots/repos --out /tmp/py-results [--swex-results results]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from parity_ref_baselines import bm25, tfidf, windows  # noqa: E402

METRICS = [
    "precision", "recall", "f1_score", "hit_file_rate", "noise_file_rate", "hit_region_rate",
    "noise_region_rate", "weighted_core_coverage", "context_efficiency", "optional_coverage",
    "ndcg_at_100", "ndcg_at_300", "ndcg_at_500", "recall_at_100", "recall_at_300",
    "recall_at_500", "first_useful_hit",
]


def gt_paths(gt):
    for region in gt.get("read_core_regions") or []:
        yield region["path"]
    for regions in (gt.get("read_optional_regions_map") or {}).values():
        for region in regions:
            yield region["path"]


def line_counts(root: Path, gt) -> dict[str, int]:
    counts = {}
    for rel in set(gt_paths(gt)):
        path = root / rel
        if path.is_file():
            counts[rel] = len(path.read_text(errors="ignore").splitlines())
    return counts


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eval-dir", required=True, help="folder holding the reference eval.py")
    parser.add_argument("--bench", required=True)
    parser.add_argument("--repos", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--tfidf-ties", choices=["numpy", "stable"], default="numpy")
    parser.add_argument("--explorers", default="bm25,tfidf",
                        help="which of bm25,tfidf to run (comma-separated)")
    parser.add_argument("--swex-results", help="a swex bench output folder to compare with")
    args = parser.parse_args()
    sys.path.insert(0, args.eval_dir)
    from eval import ExploreEvaluator  # noqa: E402  (the reference evaluator)

    started = time.perf_counter()
    rows = [json.loads(line) for line in open(args.bench) if line.strip()]
    rows = [r for r in rows if (r.get("ground_truth") or {}).get("read_core_regions")]
    evaluator = ExploreEvaluator(Path(args.bench), file_line_counts={})
    k = args.top_k
    out = Path(args.out)
    files = {}
    names = [n for n in ("bm25", "tfidf") if n in args.explorers.split(",")]
    for name in names:
        (out / name).mkdir(parents=True, exist_ok=True)
        files[name] = open(out / name / f"top{k}.jsonl", "w")
    for n, row in enumerate(rows, 1):
        iid = row["instance_id"]
        root = Path(args.repos) / iid
        issue = row.get("problem_statement") or ""
        gt = row["ground_truth"]
        counts = line_counts(root, gt)
        rankers = {"bm25": lambda c: bm25(c, issue, k),
                   "tfidf": lambda c: tfidf(c, issue, k, args.tfidf_ties)}
        for name in names:
            rank = rankers[name]
            chunks = windows(root)  # each reference explorer walks the snapshot itself
            preds = [(p, s, e) for p, s, e, _ in rank(chunks)][:k]
            evaluator._current_instance_id = iid
            evaluator._current_file_line_counts = counts
            metrics = {m: getattr(evaluator, f"evaluate_{m}")(preds, gt) for m in METRICS}
            files[name].write(json.dumps({
                "instance_id": iid, "explorer": name,
                "regions": [{"path": p, "start": s, "end": e} for p, s, e in preds],
                "metrics": metrics, "num_regions": len(preds)}) + "\n")
        print(f"[{n}/{len(rows)}] {iid}", file=sys.stderr)
    for f in files.values():
        f.close()
    elapsed = time.perf_counter() - started
    print(f"python reference-style pipeline: {len(rows)} instances, {'+'.join(names)}, k={k}: "
          f"{elapsed:.1f} s wall")

    if args.swex_results:
        for ours, theirs in (("bm25-ref", "bm25"), ("tfidf-ref", "tfidf")):
            if theirs not in names:
                continue
            swex_rows = {r["instance_id"]: r for r in map(json.loads, open(
                Path(args.swex_results) / ours / f"top{k}.jsonl")) if r}
            py_rows = {r["instance_id"]: r for r in map(json.loads, open(out / theirs / f"top{k}.jsonl"))}
            same = sum(1 for iid, r in py_rows.items()
                       if iid in swex_rows and swex_rows[iid]["regions"] == r["regions"])
            print(f"{ours} vs python {theirs}: {same}/{len(py_rows)} instances with identical "
                  f"regions (order included)")
            for m in METRICS:
                a = sum(swex_rows[i]["metrics"][m] for i in py_rows if i in swex_rows) / len(py_rows)
                b = sum(r["metrics"][m] for r in py_rows.values()) / len(py_rows)
                flag = "" if abs(a - b) < 1e-9 else "  <-- differs"
                print(f"  {m:24s} swex {a:.6f}  python {b:.6f}{flag}")


if __name__ == "__main__":
    main()
