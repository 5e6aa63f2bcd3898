#!/usr/bin/env python3
"""Write random SWE-Explore-shaped inputs that exercise the metrics' corner cases, for comparing
`swex score` with the reference evaluator (`reference_driver.py compare`).

Writes OUT/bench.jsonl, OUT/results.jsonl and OUT/line-counts.json: N instances with core and
optional regions over a few files, some regions ending at -1 or starting negative, some inverted
or past the end of the file, duplicates, main files, files without line counts, and result rows
of up to 12 regions (some empty, some on files outside the ground truth).

  python3 bench/python/random_cases.py /tmp/random 2000 --seed 7
  swex score --bench /tmp/random/bench.jsonl --predictions /tmp/random/results.jsonl \\
      --line-counts /tmp/random/line-counts.json --keep-empty-core --top-k 1,3,5,12 -o /tmp/random/rows.jsonl
  python3 bench/python/reference_driver.py --eval-dir /tmp/ref compare \\
      --bench /tmp/random/bench.jsonl --line-counts /tmp/random/line-counts.json --rows /tmp/random/rows.jsonl
"""
import argparse
import json
import random
from pathlib import Path

FILES = ["a.py", "b.py", "pkg/c.py", "pkg/d.py", "e.txt"]


def region(rng, files, counts):
    path = rng.choice(files)
    kind = rng.random()
    if kind < 0.15:
        return {"path": path, "start": rng.randint(-80, 200), "end": -1}
    if kind < 0.25:
        return {"path": path, "start": rng.randint(-80, -1), "end": rng.randint(0, 300)}
    start = rng.randint(0, 300)
    length = rng.randint(-20, 150)  # negative: start > end
    return {"path": path, "start": start, "end": max(0, start + length)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("n", type=int)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    bench, results, line_counts = [], [], {}
    for i in range(args.n):
        iid = f"org__proj-{i}"
        files = rng.sample(FILES, rng.randint(1, len(FILES)))
        counts = {f: rng.choice([0, 1, 5, 40, 120, 250, 400]) for f in files if rng.random() < 0.8}
        core = [region(rng, files, counts) for _ in range(rng.randint(0, 5))]
        optional = {f"m{j}": [region(rng, files, counts) for _ in range(rng.randint(0, 3))] for j in range(rng.randint(0, 3))}
        gt = {
            "read_core_files": sorted({r["path"] for r in core} | set(rng.sample(FILES, rng.randint(0, 2)))),
            "read_core_regions": core,
            "read_optional_files_map": {m: sorted({r["path"] for r in rs}) for m, rs in optional.items() if rng.random() < 0.7},
            "read_optional_regions_map": optional,
            "main_files": rng.sample(files, rng.randint(0, len(files))),
        }
        bench.append({"instance_id": iid, "ground_truth": gt})
        line_counts[iid] = counts
        preds = [region(rng, files + ["zz.py"], counts) for _ in range(rng.randint(0, 12))]
        if preds and rng.random() < 0.2:
            preds.insert(rng.randint(0, len(preds)), dict(rng.choice(preds)))  # a duplicate
        results.append({"instance_id": iid, "explorer": "random", "regions": preds})
    (out / "bench.jsonl").write_text("".join(json.dumps(r) + "\n" for r in bench))
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    (out / "line-counts.json").write_text(json.dumps(line_counts))


if __name__ == "__main__":
    main()
