#!/usr/bin/env python3
"""Parity check of swex's `bm25-ref` and `tfidf-ref` explorers against reference-style Python
baselines built on the same libraries the SWE-Explore release uses (rank_bm25, scikit-learn).

For every benchmark row with a snapshot, both sides answer the row's issue (problem_statement)
with K regions; the script reports, per explorer, how many instances agree exactly (same regions
in the same order) and, for the others, where the lists first differ and by how much the scores
differ there.

The Python side is written for this check (it is not the reference code): source discovery with
the reference's policy (extension allow-list, pruned directory names, path order), 80-line windows
with 20 lines of overlap, blank windows skipped, the first 3000 windows; BM25Okapi over
`str.split()` tokens ranked with Python's stable sort; TfidfVectorizer(max_features=10000,
sublinear_tf=True, stop_words="english", token_pattern=r"(?u)\\b[A-Za-z_][A-Za-z0-9_]{1,}\\b") with
cosine similarity ranked by `scores.argsort()[-k:][::-1]`, scores <= 0 dropped.

scikit-learn leaves ties at the max_features cut (and in the final ranking) to numpy's default
argsort, whose order depends on the numpy build and the CPU (SIMD sorts on AVX-512/AVX2 machines).
swex breaks those ties deterministically (stable: alphabetical at the cut, later window first in
the ranking). The Python side also runs with that stable rule, so the two can
be compared without the platform's tie order. The script compares `tfidf-ref` with both: with
numpy's ties (what the reference does on this machine) and with stable ties.

Usage:
  pip install rank-bm25 scikit-learn
  python3 bench/python/parity_ref_baselines.py --swex target/release/swex \
      --bench ../shared/data/dev.jsonl --snapshots /work/snapshots/repos [--report parity.json]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

EXTENSIONS = (".py", ".md", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".rst")
PRUNED_DIRS = {".git", "node_modules", "oh_modules", "build", ".hvigor", "dist", ".venv", "venv",
               "__pycache__", ".pytest_cache", ".mypy_cache"}
TOKEN_PATTERN = r"(?u)\b[A-Za-z_][A-Za-z0-9_]{1,}\b"


def source_files(root: Path) -> list[Path]:
    found = []
    for directory, dirs, files in os.walk(root):  # directory symlinks are not followed
        dirs[:] = [d for d in dirs if d.lower() not in PRUNED_DIRS]
        for name in files:
            if name.lower().endswith(EXTENSIONS):
                path = Path(directory) / name
                if path.is_file():
                    found.append(path)
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def windows(root: Path, size=80, overlap=20, budget=3000) -> list[tuple[str, int, int, str]]:
    out = []
    step = size - overlap
    for path in source_files(root):
        try:
            lines = path.read_text(encoding="utf-8", errors="ignore").splitlines()
        except OSError:
            continue
        rel = path.relative_to(root).as_posix()
        first = 0
        while first < len(lines):
            last = min(first + size, len(lines))
            text = "\n".join(lines[first:last])
            if text.strip():
                out.append((rel, first + 1, last, text))
                if len(out) == budget:
                    return out
            if last >= len(lines):
                break
            first += step
    return out


def bm25(chunks, issue, k):
    model = BM25Okapi([c[3].split() for c in chunks])
    scores = model.get_scores(issue.split())
    ranked = sorted(enumerate(scores), key=lambda pair: pair[1], reverse=True)[:k]
    return [(chunks[i][0], chunks[i][1], chunks[i][2], float(s)) for i, s in ranked]


class StableTiesTfidf(TfidfVectorizer):
    """TfidfVectorizer whose max_features cut breaks count ties alphabetically (stable sort)."""

    def _limit_features(self, X, vocabulary, high=None, low=None, limit=None):
        if limit is None or len(vocabulary) <= limit:
            return super()._limit_features(X, vocabulary, high, low, None)
        totals = np.asarray(X.sum(axis=0)).ravel()
        keep = np.zeros(len(totals), dtype=bool)
        keep[np.argsort(-totals, kind="stable")[:limit]] = True
        remap = np.cumsum(keep) - 1
        for term, old in list(vocabulary.items()):
            if keep[old]:
                vocabulary[term] = remap[old]
            else:
                del vocabulary[term]
        return X[:, np.where(keep)[0]]


def tfidf(chunks, issue, k, ties):
    if not chunks or not issue.strip():
        return []
    kind = StableTiesTfidf if ties == "stable" else TfidfVectorizer
    vectorizer = kind(max_features=10_000, sublinear_tf=True, stop_words="english",
                      token_pattern=TOKEN_PATTERN)
    try:
        matrix = vectorizer.fit_transform([c[3] for c in chunks])
    except ValueError:
        return []
    scores = cosine_similarity(vectorizer.transform([issue]), matrix)[0]
    order = np.argsort(scores, kind="stable") if ties == "stable" else scores.argsort()
    out = []
    for i in order[-k:][::-1]:
        if scores[i] <= 0:
            continue
        out.append((chunks[i][0], chunks[i][1], chunks[i][2], float(scores[i])))
    return out


def swex_regions(swex, explorer, root, issue, k):
    result = subprocess.run(
        [swex, "explore", "-e", explorer, "--repo", str(root), "--top-k", str(k), "--json", "-"],
        input=issue, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"swex {explorer} failed on {root.name}: {result.stderr.strip()}")
    answer = json.loads(result.stdout)
    return [(r["path"], r["start"], r["end"], r.get("score")) for r in answer["regions"]]


def compare(ours, theirs):
    """(identical, first differing rank or None, |score difference| at the first rank that exists)."""
    same = [(a[:3]) for a in ours] == [(b[:3]) for b in theirs]
    if same:
        worst = max((abs(a[3] - b[3]) for a, b in zip(ours, theirs)), default=0.0)
        return True, None, worst
    for rank, (a, b) in enumerate(zip(ours, theirs)):
        if a[:3] != b[:3]:
            return False, rank, None
    return False, min(len(ours), len(theirs)), None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--swex", required=True)
    parser.add_argument("--bench", required=True)
    parser.add_argument("--snapshots", required=True)
    parser.add_argument("--top-k", type=int, default=5)
    parser.add_argument("--report", help="write per-instance results as JSON here")
    args = parser.parse_args()

    rows = [json.loads(line) for line in open(args.bench) if line.strip()]
    summary = {"bm25": [0, 0], "tfidf (numpy ties)": [0, 0], "tfidf (stable ties)": [0, 0]}
    report = []
    started = time.time()
    for n, row in enumerate(rows, 1):
        iid = row["instance_id"]
        root = Path(args.snapshots) / iid
        if not root.is_dir():
            print(f"{iid}: no snapshot, skipped", file=sys.stderr)
            continue
        issue = row.get("problem_statement") or ""
        chunks = windows(root)
        entry = {"instance_id": iid, "windows": len(chunks)}
        swex_answers = {}
        for name, explorer, reference in [
            ("bm25", "bm25-ref", lambda: bm25(chunks, issue, args.top_k)),
            ("tfidf (numpy ties)", "tfidf-ref", lambda: tfidf(chunks, issue, args.top_k, "numpy")),
            ("tfidf (stable ties)", "tfidf-ref", lambda: tfidf(chunks, issue, args.top_k, "stable")),
        ]:
            theirs = reference()
            if explorer not in swex_answers:
                swex_answers[explorer] = swex_regions(args.swex, explorer, root, issue, args.top_k)
            ours = swex_answers[explorer]
            same, rank, worst = compare(ours, theirs)
            summary[name][0] += same
            summary[name][1] += 1
            entry[name] = {"identical": same, "first_difference": rank, "max_score_diff": worst,
                           "swex": ours, "python": theirs}
            if not same:
                print(f"{iid} {name}: differs from rank {rank}: swex {ours[rank:rank+1]} python {theirs[rank:rank+1]}",
                      file=sys.stderr)
        report.append(entry)
        marks = " ".join(f"{name}={'=' if entry[name]['identical'] else '≠'}" for name in summary)
        print(f"[{n}/{len(rows)}] {iid} windows={len(chunks)} {marks}", file=sys.stderr)
    elapsed = time.time() - started
    for name, (same, total) in summary.items():
        worst = max((e[name]["max_score_diff"] or 0.0) for e in report if e[name]["identical"]) if same else 0.0
        print(f"{name}: {same}/{total} instances identical (regions and order); "
              f"max |score difference| on identical ones: {worst:.3g}")
    print(f"{len(report)} instances in {elapsed:.0f} s")
    if args.report:
        Path(args.report).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
