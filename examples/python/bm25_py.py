"""BM25 over 80-line windows, written the way the SWE-Explore reference writes its baseline.

A plain `explore(issue, instance_id)` that reads the checkout from the working directory (swex
runs it with the snapshot as working directory): source files by the reference's policy in path
order, 80-line windows with 20 lines of overlap (blank windows skipped, the first 3000 kept),
whitespace tokens, and `rank_bm25.BM25Okapi` scoring — the few lines of that formula are written
out below so that the example needs nothing but the standard library; they do the same
floating-point operations in the same order, so the scores are the same to the last bit.

It gives exactly the regions (and scores) of swex's built-in `bm25-ref`:

    swex bench --bench dev.jsonl --repos repos --plugin examples/python/bm25_py.py -e bm25-py,bm25-ref -k 5

(docs/writing-an-explorer.md, "Parity of the Python BM25 example").
"""

import math
import os

NAME = "bm25-py"
DESCRIPTION = "the reference BM25 baseline in Python (rank_bm25's BM25Okapi over 80-line windows)"

EXTENSIONS = (".py", ".md", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".json", ".rst")
EXCLUDED_DIRS = {".git", "node_modules", "oh_modules", "build", ".hvigor", "dist", ".venv", "venv",
                 "__pycache__", ".pytest_cache", ".mypy_cache"}
CHUNK_SIZE, CHUNK_OVERLAP, MAX_CHUNKS = 80, 20, 3000
# The reference's runner keeps the first k of the list; 100 covers every k the benchmark asks for.
KEEP = 100


class BM25Okapi:
    """rank_bm25.BM25Okapi (k1 1.5, b 0.75, epsilon 0.25) without numpy."""

    def __init__(self, corpus, k1=1.5, b=0.75, epsilon=0.25):
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.doc_freqs, self.doc_len, self.idf = [], [], {}
        nd, num_doc = {}, 0
        for document in corpus:
            self.doc_len.append(len(document))
            num_doc += len(document)
            frequencies = {}
            for word in document:
                frequencies[word] = frequencies.get(word, 0) + 1
            self.doc_freqs.append(frequencies)
            for word in frequencies:
                nd[word] = nd.get(word, 0) + 1
        self.corpus_size = len(corpus)
        self.avgdl = num_doc / self.corpus_size
        idf_sum, negative = 0, []
        for word, freq in nd.items():
            idf = math.log(self.corpus_size - freq + 0.5) - math.log(freq + 0.5)
            self.idf[word] = idf
            idf_sum += idf
            if idf < 0:
                negative.append(word)
        eps = self.epsilon * (idf_sum / len(self.idf))
        for word in negative:
            self.idf[word] = eps

    def get_scores(self, query):
        scores = [0.0] * self.corpus_size
        for q in query:
            idf = self.idf.get(q) or 0
            for i, doc in enumerate(self.doc_freqs):
                q_freq = doc.get(q) or 0
                scores[i] += idf * (q_freq * (self.k1 + 1) / (
                    q_freq + self.k1 * (1 - self.b + self.b * self.doc_len[i] / self.avgdl)))
        return scores


def source_files(root="."):
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d.lower() not in EXCLUDED_DIRS]
        for name in files:
            path = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
            if name.lower().endswith(EXTENSIONS) and os.path.isfile(path):
                found.append(path)
    return sorted(found)


def chunks(root="."):
    """(path, start, end, text) windows, in path order, cut at MAX_CHUNKS."""
    out = []
    for path in source_files(root):
        with open(os.path.join(root, path), encoding="utf-8", errors="ignore") as handle:
            lines = handle.read().splitlines()
        first = 0
        while first < len(lines):
            end = min(first + CHUNK_SIZE, len(lines))
            text = "\n".join(lines[first:end])
            if text.strip():
                out.append((path, first + 1, end, text))
                if len(out) == MAX_CHUNKS:
                    return out
            if end >= len(lines):
                break
            first += CHUNK_SIZE - CHUNK_OVERLAP
    return out


def explore(issue, instance_id):
    windows = chunks()
    if not windows:
        return []
    bm25 = BM25Okapi([text.split() for _, _, _, text in windows])
    scores = bm25.get_scores(issue.split())
    order = sorted(range(len(windows)), key=lambda i: scores[i], reverse=True)[:KEEP]
    return [(windows[i][0], windows[i][1], windows[i][2], scores[i]) for i in order]
