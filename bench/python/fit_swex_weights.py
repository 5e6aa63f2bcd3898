#!/usr/bin/env python3
"""Fits the `swex` explorer's ranking weights (docs/explorer-swex.md, "Ranking").

Input: the rows of one `swex bench` run of the `swex` explorer with `{"debug": true}` (their notes
hold, for the top 40 ranked files, every ranking feature as JSON), the benchmark file and the
snapshot folder (to tell which files the ground truth reads whole).

Model: a conditional logit over each instance's candidate *source* files (tests are planned
separately): P(file) = softmax(w . features), maximising the probability of the files the ground
truth reads whole (a core region covering at least 80 % of the file), with an L2 penalty. The
features are transformed exactly as `explorers/swex/src/rank.rs` scores them, so the fitted
weights go straight into `Weights::default()` (penalties with the sign flipped) or into
`--explorer-config 'swex={"weights": {...}}'`. Prints the weights and the top-1 accuracy,
in-sample and leave-one-repository-out (weights refitted without each repository in turn).

Needs numpy and scipy (`pip install numpy scipy`); this is a development tool, not a test.

    swex bench --bench dev.jsonl --repos repos --index -e swex -k 5 \\
        --explorer-config 'swex={"debug":true}' -o 'fit/{explorer}/top{k}.jsonl'
    python3 bench/python/fit_swex_weights.py fit/swex/top5.jsonl dev.jsonl repos
"""

import argparse
import json
import math
import os

import numpy as np
from scipy.optimize import minimize

# (feature in the debug notes, weight name in `Weights`, sign: -1 for the penalties)
FEATURES = [
    ("lexical", "lexical", 1),
    ("lexical_rank", "lexical_rank", 1),
    ("symbols", "symbols", 1),
    ("title_symbols", "title_symbols", 1),
    ("mentions", "mentions", 1),
    ("frames", "frames", 1),
    ("last_frame", "last_frame", 1),
    ("names", "names", 1),
    ("dirs", "dirs", 1),
    ("doc", "doc_penalty", -1),
    ("init", "init_penalty", -1),
    ("title_lexical", "title_lexical", 1),
    ("partner_test", "partner_test", 1),
]


def transform(f):
    """The feature vector as rank.rs scores it."""
    rank = f["lexical_rank"]
    return [
        f["lexical"],
        1.0 / (1.0 + rank) if rank is not None else 0.0,
        math.log1p(f["symbols"]),
        math.log1p(f["title_symbols"]),
        min(f["mentions"], 3.0),
        min(f["frames"], 3.0),
        f["last_frame"],
        math.log1p(f["names"]),
        math.log1p(f["dirs"]),
        float(f["doc"]),
        float(f["init"]),
        f["title_lexical"],
        f["partner_test"],
    ]


def line_count(path):
    try:
        with open(path, "rb") as handle:
            return len(handle.read().decode("utf-8", "ignore").splitlines())
    except OSError:
        return None


def whole_core_files(row, repos):
    out = set()
    folder = os.path.join(repos, row["instance_id"])
    for region in row["ground_truth"]["read_core_regions"]:
        length = line_count(os.path.join(folder, region["path"]))
        if not length:
            continue
        end = length if region["end"] == -1 else min(region["end"], length)
        if region["start"] <= 1 and end >= 0.8 * length:
            out.add(region["path"])
    return out


def load(rows_path, bench_path, repos):
    bench = {}
    with open(bench_path) as handle:
        for line in handle:
            row = json.loads(line)
            bench[row["instance_id"]] = row
    data = []
    with open(rows_path) as handle:
        for line in handle:
            row = json.loads(line)
            truth = whole_core_files(bench[row["instance_id"]], repos)
            files = [json.loads(n) for n in row.get("notes", []) if n.startswith('{"')]
            files = [f for f in files if "rank_file" in f and not f["is_test"]]
            x = np.array([transform(f) for f in files]) if files else np.zeros((0, len(FEATURES)))
            y = np.array([f["rank_file"] in truth for f in files], dtype=float)
            data.append({"repo": bench[row["instance_id"]].get("repo", ""), "x": x, "y": y})
    return data


def objective(w, data, l2):
    total, grad = 0.0, np.zeros_like(w)
    for d in data:
        if len(d["y"]) == 0 or d["y"].sum() == 0:
            continue
        s = d["x"] @ w
        p = np.exp(s - s.max())
        p /= p.sum()
        hit = (p * d["y"]).sum()
        total -= math.log(max(hit, 1e-300))
        grad -= d["x"].T @ (p * d["y"]) / hit - d["x"].T @ p
    return total + l2 * (w @ w), grad + 2 * l2 * w


def fit(data, l2):
    return minimize(objective, np.zeros(len(FEATURES)), args=(data, l2), jac=True, method="L-BFGS-B").x


def top1(w, data):
    return sum(1 for d in data if len(d["y"]) and d["y"][int(np.argmax(d["x"] @ w))] > 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rows", help="rows of a `swex bench` run of swex with debug notes")
    parser.add_argument("bench", help="the benchmark file")
    parser.add_argument("repos", help="the snapshot folder")
    parser.add_argument("--l2", type=float, default=0.1)
    parser.add_argument("--drop", action="append", default=["title_symbols"],
                        help="features fixed at 0 (repeatable; default title_symbols)")
    args = parser.parse_args()
    data = load(args.rows, args.bench, args.repos)
    dropped = [i for i, (name, _, _) in enumerate(FEATURES) if name in args.drop]
    for d in data:
        if len(d["x"]):
            d["x"][:, dropped] = 0.0
    w = fit(data, args.l2)
    held_out = 0
    for repo in sorted({d["repo"] for d in data}):
        train = [d for d in data if d["repo"] != repo]
        held_out += top1(fit(train, args.l2), [d for d in data if d["repo"] == repo])
    weights = {weight: round(float(sign * value), 2) for (_, weight, sign), value in zip(FEATURES, w)}
    print(json.dumps({"weights": weights}))
    print(f"top-1: {top1(w, data)}/{len(data)} in-sample, {held_out}/{len(data)} leave-one-repository-out")


if __name__ == "__main__":
    main()
