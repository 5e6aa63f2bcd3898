#!/usr/bin/env python3
"""Reference-style lexical pipeline, the baseline of `scripts/bench-engine`.

What the SWE-Explore reference BM25 explorer does, written from its description (not copied):
80-line windows with 20 lines of overlap, whitespace tokens, `rank_bm25.BM25Okapi`. Two file
selections:

- `--files all` (default): every file swex indexes (not binary = no NUL byte in the first 8 KiB,
  at most 1 MiB), so both pipelines see the same bytes and throughput is comparable;
- `--files reference`: the reference's extension allow-list and its 3000-chunk cap in path order.

Prints one JSON object: build time (read + window + tokenize + BM25Okapi construction), files,
bytes, chunks, and query latencies (p50/p95/max, ms) of the given issue texts.

Usage: bm25_reference.py --repo DIR --issues dev.jsonl [--repo-filter django/django] [--files all]
Requires: pip install rank-bm25
"""

import argparse
import json
import os
import statistics
import sys
import time

from rank_bm25 import BM25Okapi

WINDOW = 80
OVERLAP = 20
MAX_FILE_SIZE = 1 << 20
REFERENCE_EXTENSIONS = {".py", ".md", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".rst"}
REFERENCE_MAX_CHUNKS = 3000


def list_files(root):
    out = []
    for directory, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in (".git", ".hg", ".svn"))
        for name in files:
            path = os.path.join(directory, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            out.append(os.path.relpath(path, root).replace(os.sep, "/"))
    return sorted(out)


def read_text(root, rel):
    path = os.path.join(root, rel)
    if os.path.getsize(path) > MAX_FILE_SIZE:
        return None
    with open(path, "rb") as handle:
        data = handle.read()
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def windows(lines):
    step = WINDOW - OVERLAP
    start = 0
    while True:
        yield start, min(start + WINDOW, len(lines))
        if start + WINDOW >= len(lines):
            break
        start += step


def build(root, selection):
    started = time.perf_counter()
    corpus, meta = [], []
    files = 0
    total_bytes = 0
    for rel in list_files(root):
        if selection == "reference" and os.path.splitext(rel)[1] not in REFERENCE_EXTENSIONS:
            continue
        text = read_text(root, rel)
        if text is None:
            continue
        files += 1
        total_bytes += len(text.encode("utf-8"))
        lines = text.splitlines()
        for start, end in windows(lines):
            corpus.append("\n".join(lines[start:end]).split())
            meta.append((rel, start + 1, max(end, start + 1)))
            if selection == "reference" and len(corpus) >= REFERENCE_MAX_CHUNKS:
                break
        if selection == "reference" and len(corpus) >= REFERENCE_MAX_CHUNKS:
            break
    bm25 = BM25Okapi(corpus)
    seconds = time.perf_counter() - started
    return bm25, meta, {"files": files, "bytes": total_bytes, "chunks": len(corpus), "build_seconds": seconds}


def percentile(values, q):
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True)
    parser.add_argument("--issues", required=True, help="JSONL with problem_statement (and repo)")
    parser.add_argument("--repo-filter", default=None, help="only issues of this repo, e.g. django/django")
    parser.add_argument("--files", choices=["all", "reference"], default="all")
    parser.add_argument("--top-k", type=int, default=5)
    args = parser.parse_args()

    bm25, meta, stats = build(args.repo, args.files)
    issues = []
    with open(args.issues) as handle:
        for line in handle:
            row = json.loads(line)
            if args.repo_filter is None or row.get("repo") == args.repo_filter:
                issues.append(row["problem_statement"])
    latencies = []
    for text in issues:
        started = time.perf_counter()
        scores = bm25.get_scores(text.split())
        top = sorted(range(len(scores)), key=lambda i: -scores[i])[: args.top_k]
        latencies.append((time.perf_counter() - started) * 1000.0)
        _ = [meta[i] for i in top]
    stats.update(
        {
            "pipeline": "python rank_bm25 80/20 windows, whitespace tokens",
            "selection": args.files,
            "repo": os.path.abspath(args.repo),
            "mb_per_second": stats["bytes"] / 1e6 / stats["build_seconds"],
            "queries": len(latencies),
            "query_ms_p50": statistics.median(latencies) if latencies else None,
            "query_ms_p95": percentile(latencies, 0.95) if latencies else None,
            "query_ms_max": max(latencies) if latencies else None,
        }
    )
    json.dump(stats, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
