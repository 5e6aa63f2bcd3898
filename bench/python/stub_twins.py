#!/usr/bin/env python3
"""Benchmark snapshots with Python stubs beside their modules: the simulation of docs/ranker.md
("Python stubs beside their modules").

Libraries that ship inline type stubs keep `figure.pyi` beside `figure.py` (Matplotlib since
3.8, NumPy); none of the repositories of our benchmark rows does. For every row of BENCH (a
bench.jsonl) whose instance id starts with none of the --skip prefixes, this copies the snapshot
REPOS/<instance_id> to OUT/stubs/<instance_id> and gives every non-test module below the
top level a stub made by mypy's `stubgen` (parse mode, nothing imported), unless a stub is there
already; with --control it also copies the snapshot unchanged to OUT/control/<instance_id>. A
snapshot's marker (REPOS/.swex/<instance_id>.json, written by `swex snapshot`) is copied beside
each copy, so that the copies are read as the same commits, with the same history. The rows are
written to OUT/bench.jsonl. Then, for example:

    python3 bench/python/stub_twins.py --bench ../shared/data/dev.jsonl --repos snapshots/repos \\
        --out /tmp/stubs --skip django__,sympy__ --control --stubgen "$(which stubgen)"
    swex bench --bench /tmp/stubs/bench.jsonl --repos /tmp/stubs/control --cache-dir /tmp/c0 \\
        --index -k 5 -e swex -o control.jsonl
    swex bench --bench /tmp/stubs/bench.jsonl --repos /tmp/stubs/stubs --cache-dir /tmp/c1 \\
        --index -k 5 -e swex -o stubs.jsonl

(one cache per set: an index cache's lexical pools are shared by the snapshots of a repository.)
Needs `stubgen` (PyPI `mypy`; the measurement used 1.13.0) and the Python standard library.
Existing copies are kept, so a second run only adds what is missing.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

# Folders whose modules get no stub: tests and their data, documentation and examples.
SKIPPED_DIRS = {".git", "tests", "test", "testing", "doc", "docs", "examples"}


def is_test_module(relative):
    name = os.path.basename(relative)
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def modules_of(snapshot):
    """The non-test modules of a snapshot below its top level, repository-relative."""
    found = []
    for root, dirs, files in os.walk(snapshot):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            relative = os.path.relpath(os.path.join(root, name), snapshot)
            if name.endswith(".py") and "/" in relative and not is_test_module(relative):
                found.append(relative)
    return found


def add_stubs(snapshot, stubgen):
    """Writes a stub beside every module of `snapshot` that has none; returns how many."""
    modules = modules_of(snapshot)
    added = 0
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "out")
        # stubgen runs mypy's parser, which keeps a cache: outside the snapshot.
        env = dict(os.environ, MYPY_CACHE_DIR=os.path.join(work, "cache"))
        for start in range(0, len(modules), 400):
            batch = modules[start : start + 400]
            done = subprocess.run(
                [stubgen, "--no-import", "-q", "-o", out, *batch],
                cwd=snapshot, env=env, capture_output=True, text=True,
            )
            if done.returncode != 0:
                print(f"{snapshot}: stubgen failed on some modules: {done.stderr.strip()[:300]}",
                      file=sys.stderr)
        for root, _, files in os.walk(out):
            for name in files:
                if not name.endswith(".pyi"):
                    continue
                relative = os.path.relpath(os.path.join(root, name), out)
                target = os.path.join(snapshot, relative)
                # stubgen names a stub by its module, which a `src/` layout drops: only a stub
                # whose module is where the stub's path says goes in.
                if os.path.exists(target[:-1]) and not os.path.exists(target):
                    shutil.copyfile(os.path.join(root, name), target)
                    added += 1
    return added


def copy_snapshot(repos, instance_id, destination):
    """Copies a snapshot and its marker; False when the copy was there already."""
    target = os.path.join(destination, instance_id)
    if os.path.isdir(target):
        return False
    shutil.copytree(os.path.join(repos, instance_id), target, symlinks=True)
    marker = os.path.join(repos, ".swex", f"{instance_id}.json")
    if os.path.exists(marker):
        os.makedirs(os.path.join(destination, ".swex"), exist_ok=True)
        shutil.copyfile(marker, os.path.join(destination, ".swex", f"{instance_id}.json"))
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", required=True, help="bench.jsonl (instance_id per row)")
    ap.add_argument("--repos", required=True, help="snapshot folder: REPOS/<instance_id>")
    ap.add_argument("--out", required=True, help="where the copies and bench.jsonl go")
    ap.add_argument("--skip", default="", help="instance id prefixes to leave out, comma-separated")
    ap.add_argument("--control", action="store_true", help="also copy the snapshots unchanged")
    ap.add_argument("--stubgen", default="stubgen", help="mypy's stubgen (default: on PATH)")
    args = ap.parse_args()
    if shutil.which(args.stubgen) is None:
        sys.exit(f"{args.stubgen}: not found (pip install mypy==1.13.0)")
    skip = [prefix for prefix in args.skip.split(",") if prefix]
    rows = []
    with open(args.bench, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{args.bench}:{n}: not JSON: {e}")
            if not any(row["instance_id"].startswith(prefix) for prefix in skip):
                rows.append(row)
    for row in rows:
        if not os.path.isdir(os.path.join(args.repos, row["instance_id"])):
            sys.exit(f"{args.repos}/{row['instance_id']}: no snapshot")
    for row in rows:
        instance_id = row["instance_id"]
        if args.control:
            copy_snapshot(args.repos, instance_id, os.path.join(args.out, "control"))
        stubbed = os.path.join(args.out, "stubs")
        if copy_snapshot(args.repos, instance_id, stubbed):
            added = add_stubs(os.path.join(stubbed, instance_id), args.stubgen)
            print(f"{instance_id}: {added} stubs", file=sys.stderr, flush=True)
    with open(os.path.join(args.out, "bench.jsonl"), "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    print(f"{len(rows)} rows in {os.path.join(args.out, 'bench.jsonl')}", file=sys.stderr)


if __name__ == "__main__":
    main()
