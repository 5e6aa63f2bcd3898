#!/usr/bin/env python3
"""ONNX Runtime's own throughput on the texts `dense_bench embed` embeds: the practical limit.

Same model file, same tokenizer, same token cap, same batches (texts sorted longest first, as swex
sorts them) and the same number of intra-op threads. Only `session.run` is timed: tokenization and
pooling are excluded, so this is an upper bound for any wrapper around the same session.

    pip install onnxruntime tokenizers numpy
    scripts/dense-ort-baseline.py chunks.jsonl --models ~/.cache/swex/models --batch 32 --threads 2

Reports chunks/s of session.run alone, and of tokenize + run + mean pooling for comparison.
"""
import argparse
import json
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("chunks")
    ap.add_argument("--models", required=True, help="the swex models directory")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--spin", action="store_true", help="let worker threads spin (ORT's default)")
    args = ap.parse_args()

    texts = [json.loads(line) for line in open(args.chunks)]
    if args.limit:
        texts = texts[: args.limit]
    # swex sorts by byte length, longest first, stable.
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i].encode()))
    texts = [texts[i] for i in order]

    model_dir = f"{args.models}/all-minilm-l6-v2-int8"
    tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tok.enable_truncation(args.max_tokens)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if args.spin else "0")
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(f"{model_dir}/model.onnx", opts, providers=["CPUExecutionProvider"])

    batches = []
    t0 = time.perf_counter()
    for i in range(0, len(texts), args.batch):
        enc = tok.encode_batch(texts[i : i + args.batch])
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        types = np.array([e.type_ids for e in enc], dtype=np.int64)
        batches.append((ids, mask, types))
    tokenize = time.perf_counter() - t0

    # One warm-up batch, as swex's embedder runs a probe when it opens.
    session.run(None, {"input_ids": batches[-1][0], "attention_mask": batches[-1][1], "token_type_ids": batches[-1][2]})
    run = 0.0
    run_cpu = 0.0
    pool = 0.0
    for ids, mask, types in batches:
        t0 = time.perf_counter()
        c0 = time.process_time()
        (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})
        t1 = time.perf_counter()
        run_cpu += time.process_time() - c0
        m = mask[:, :, None].astype(np.float32)
        v = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        pool += time.perf_counter() - t1
        run += t1 - t0
    n = len(texts)
    print(
        f"ort: {n} texts, batch {args.batch}, threads {args.threads}, spin {args.spin}, max_tokens {args.max_tokens}: "
        f"session.run {run:.2f} s = {n / run:.1f} chunks/s, {run_cpu:.1f} CPU s = {n / run_cpu:.2f} chunks per CPU s; with tokenize+pool {run + tokenize + pool:.2f} s = "
        f"{n / (run + tokenize + pool):.1f} chunks/s"
    )


if __name__ == "__main__":
    main()
