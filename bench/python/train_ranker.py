#!/usr/bin/env python3
"""Fits the swex explorer's learned file ranker: LambdaMART (LightGBM) over the candidate source
files of each instance, with held-out folds, a calibrated temperature, and the model written in
the `swex-trees/1` format that the explorer evaluates in pure Rust (swex_rankkit::trees). The span
ranker is fitted the same way: its instances are a gold file's candidate spans (`swex train
--unit spans`), named `path:start-end`; its temperature is written but not used.

`swex train` runs this (docs/ranker.md); it can also be run alone on a dataset it wrote:

    train_ranker.py DATASET.jsonl -o MODEL.json [--folds repo,language] [--report REPORT.json]
        [--without FEATURE,...]

`--without` leaves features out (ablations; a dataset written before a feature was added gives
the same model as this dataset without it): the model names the features it was fitted on, and
the explorer reads those by name.

`--linear-share A` (0 ≤ A < 1) blends the trees with each candidate's linear score (the `linear`
of the rows, the hand-fitted weights): the explorer ranks by `A · linear + (1 − A) · trees / T`,
T the trees' calibrated temperature, and every reported held-out metric is the blend's. The model
stores it as `linear_weight` and a `temperature` that together give that score already divided by
the blend's own calibrated temperature. 0 (the default) writes the trees alone, byte for byte as
before.

DATASET: one JSON object per instance, as `swex train` writes them:
    {"id", "repo", "language", "features": [names], "gold": [paths],
     "candidates": [{"path", "row": [values], "linear": score}]}
A candidate is relevant (label 1) when its path is a gold file. Instances with no gold file among
their candidates cannot teach a ranking and are left out of fitting, but they count (as misses)
in every metric.

Deterministic: one thread, fixed seeds, rows in file order; the same dataset gives the same model
byte for byte. Needs lightgbm, numpy and scipy at the versions of requirements-ranker.txt.
"""

import argparse
import hashlib
import json
import math
import sys

import lightgbm as lgb
import numpy as np

# Small trees, few rounds: a few hundred instances. Chosen among five settings by six-fold
# repository-grouped cross-validation on ../shared/data/train (never on dev); the others were
# within 0.01 hit@1 of it (docs/ranker.md).
PARAMS = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": [1, 5],
    "lambdarank_truncation_level": 20,
    "num_leaves": 7,
    "min_data_in_leaf": 50,
    "learning_rate": 0.05,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "num_threads": 1,
    "deterministic": True,
    "force_row_wise": True,
    "seed": 7,
    "use_missing": False,
    "zero_as_missing": False,
    "verbosity": -1,
}
ROUNDS = 100
CUTS = (1, 3, 5, 10)


def read_dataset(path):
    instances = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                inst = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: not JSON: {e}")
            instances.append(inst)
    if not instances:
        sys.exit(f"{path}: no instances")
    names = instances[0]["features"]
    for inst in instances:
        if inst["features"] != names:
            sys.exit(f"{path}: instance {inst['id']} has other features than the first")
    return names, instances


def without(names, instances, dropped):
    """The dataset with the features `dropped` left out of every row (unknown names refused)."""
    unknown = [d for d in dropped if d not in names]
    if unknown:
        sys.exit(f"--without: no feature {unknown[0]!r} in the dataset (it has {names})")
    keep = [i for i, n in enumerate(names) if n not in dropped]
    for inst in instances:
        inst["features"] = [names[i] for i in keep]
        for c in inst["candidates"]:
            c["row"] = [c["row"][i] for i in keep]
    return [names[i] for i in keep], instances


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def arrays(instances):
    rows, labels, groups = [], [], []
    for inst in instances:
        gold = set(inst["gold"])
        cands = inst["candidates"]
        if not any(c["path"] in gold for c in cands):
            continue
        groups.append(len(cands))
        for c in cands:
            rows.append(c["row"])
            labels.append(1 if c["path"] in gold else 0)
    return np.array(rows, dtype=np.float64), np.array(labels), groups


def fit(instances, rounds=ROUNDS):
    x, y, groups = arrays(instances)
    if not groups:
        sys.exit("no instance has a gold file among its candidates: nothing to learn")
    data = lgb.Dataset(x, label=y, group=groups, free_raw_data=False)
    return lgb.train(PARAMS, data, num_boost_round=rounds)


def predict(booster, inst):
    if not inst["candidates"]:
        return []
    x = np.array([c["row"] for c in inst["candidates"]], dtype=np.float64)
    return list(booster.predict(x, raw_score=True))


def ranking(inst, scores):
    """Candidate paths best first (ties by path, as the explorer breaks them)."""
    order = sorted(zip(scores, [c["path"] for c in inst["candidates"]]), key=lambda t: (-t[0], t[1]))
    return [p for _, p in order]


def metrics(instances, score_of):
    """File-level Acc@k (LocAgent: all of min(|gold|, k) gold files within the first k), hit@1
    (the first file is a gold file), MRR of the first gold file, over every instance."""
    totals = {f"acc@{k}": 0.0 for k in CUTS}
    totals.update({"hit@1": 0.0, "mrr": 0.0})
    for inst in instances:
        gold = set(inst["gold"])
        ranked = ranking(inst, score_of(inst))
        for k in CUTS:
            found = sum(1 for p in ranked[:k] if p in gold)
            totals[f"acc@{k}"] += 1.0 if gold and found >= min(len(gold), k) else 0.0
        first = next((i for i, p in enumerate(ranked) if p in gold), None)
        totals["hit@1"] += 1.0 if first == 0 else 0.0
        totals["mrr"] += 0.0 if first is None else 1.0 / (first + 1)
    n = max(len(instances), 1)
    out = {k: round(v / n, 4) for k, v in totals.items()}
    out["instances"] = len(instances)
    return out


def verdict(report):
    """One sentence on whether the model ranks better than the hand-set order the rows carry
    (their `linear` score: the linear file ranking, or the spans' evidence order),
    judged on held-out scores (repository folds first, then language folds): in-sample metrics
    say nothing about new repositories, and a model fitted on few rows can rank worse than the
    hand-set weights it would replace."""
    linear = report["linear"]["all"]
    for key, label in (("repo", "repository"), ("language", "language")):
        held = report.get(f"leave_one_{key}_out")
        if not held:
            continue
        held = held["all"]
        model, hand_set = (held["hit@1"], held["mrr"]), (linear["hit@1"], linear["mrr"])
        judged = "better than" if model > hand_set else "worse than" if model < hand_set else "level with"
        advice = ("; train on more rows (the shipped models were fitted on 516) or keep the "
                  "shipped one" if model < hand_set else "")
        return (f"held out by {label} ({held['instances']} examples), the model ranks {judged} "
                f"the hand-set order: hit@1 {held['hit@1']:.4f} against {linear['hit@1']:.4f}, "
                f"MRR {held['mrr']:.4f} against {linear['mrr']:.4f}{advice}")
    return ("no held-out folds: every instance shares its repository (and its language, when "
            "those folds were asked for), and the in-sample metrics do not say how the model "
            "ranks repositories it did not see")


def held_out_scores(instances, key):
    """Out-of-fold scores: for each value of `key`, a model fitted without its instances."""
    scores = {}
    for value in sorted({inst[key] for inst in instances}):
        train = [i for i in instances if i[key] != value]
        test = [i for i in instances if i[key] == value]
        booster = fit(train)
        for inst in test:
            scores[inst["id"]] = predict(booster, inst)
    return scores


def temperature(instances, scores):
    """The T that maximises the held-out probability mass of the gold files under
    softmax(score / T) among each instance's candidates (the planner's belief)."""
    best = (None, -math.inf)
    for t in np.exp(np.linspace(math.log(0.05), math.log(20.0), 121)):
        total = 0.0
        for inst in instances:
            gold = set(inst["gold"])
            s = np.array(scores[inst["id"]]) / t
            if len(s) == 0 or not any(c["path"] in gold for c in inst["candidates"]):
                continue
            m = s.max()
            p = np.exp(s - m)
            mass = sum(p[i] for i, c in enumerate(inst["candidates"]) if c["path"] in gold)
            total += math.log(mass / p.sum())
        if total > best[1]:
            best = (float(t), total)
    return round(best[0], 4)


def by_group(instances, key, score_of):
    out = {}
    for value in sorted({inst[key] for inst in instances}):
        part = [i for i in instances if i[key] == value]
        out[value] = metrics(part, score_of)
    return out


def tree_json(tree):
    """LightGBM's recursive tree dump → the array layout of swex-trees/1."""
    split_feature, threshold, left, right, leaves = [], [], [], [], []

    def walk(node):
        if "leaf_value" in node:
            leaves.append(float(node["leaf_value"]))
            return -len(leaves)
        if node.get("decision_type", "<=") != "<=" or node.get("missing_type", "None") not in ("None", None):
            sys.exit(f"unsupported split {node.get('decision_type')} / {node.get('missing_type')}")
        i = len(split_feature)
        split_feature.append(int(node["split_feature"]))
        threshold.append(float(node["threshold"]))
        left.append(0)
        right.append(0)
        left[i] = walk(node["left_child"])
        right[i] = walk(node["right_child"])
        return i

    root = tree["tree_structure"]
    walk(root)
    return {
        "split_feature": split_feature,
        "threshold": threshold,
        "left_child": left,
        "right_child": right,
        "leaf_value": leaves,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("-o", "--output", required=True, help="model JSON (swex-trees/1)")
    ap.add_argument("--folds", default="repo,language",
                    help="held-out folds to report: comma-separated keys of the rows (repo, language); empty for none")
    ap.add_argument("--calibrate-on", default="repo",
                    help="the fold whose out-of-fold scores choose the temperature")
    ap.add_argument("--report", help="also write the metrics as JSON here")
    ap.add_argument("--without", default="", metavar="FEATURE,...",
                    help="leave these features out of the rows (ablations)")
    ap.add_argument("--linear-share", type=float, default=0.0, metavar="A",
                    help="blend the trees with the linear score: A · linear + (1 − A) · trees / T (0: trees alone)")
    ap.add_argument("--test", action="append", default=[], metavar="DATASET",
                    help="also report the final model (and the linear score) on this dataset, which it did not see; repeatable")
    args = ap.parse_args()

    share = args.linear_share
    if not 0.0 <= share < 1.0:
        sys.exit(f"--linear-share {share}: must be at least 0 and below 1")
    dropped = [d for d in args.without.split(",") if d]
    names, instances = without(*read_dataset(args.dataset), dropped)
    folds = [k for k in args.folds.split(",") if k]
    if args.calibrate_on not in folds:
        folds.append(args.calibrate_on)
    linear = lambda inst: [c["linear"] for c in inst["candidates"]]
    lexical_at = names.index("lexical") if "lexical" in names else None
    lexical = lambda inst: [c["row"][lexical_at] if lexical_at is not None else 0.0 for c in inst["candidates"]]
    report = {
        "linear": {"all": metrics(instances, linear), "by_language": by_group(instances, "language", linear)},
        "lexical": {"all": metrics(instances, lexical), "by_language": by_group(instances, "language", lexical)},
    }
    out_of_fold = {}
    for key in folds:
        values = {inst[key] for inst in instances}
        if len(values) < 2:
            print(f"no leave-one-{key}-out folds: every instance has the same {key}", file=sys.stderr)
            report[f"leave_one_{key}_out"] = None
            continue
        print(f"fitting leave-one-{key}-out folds ({len(values)}) …", file=sys.stderr)
        report[f"leave_one_{key}_out"] = None  # filled below, in this order
        out_of_fold[key] = held_out_scores(instances, key)
    # Without held-out scores to calibrate on, the scores are taken as they are.
    t = temperature(instances, out_of_fold[args.calibrate_on]) if args.calibrate_on in out_of_fold else 1.0

    def blended(inst, tree_scores):
        """What the explorer ranks by (before the blend's own temperature)."""
        if share == 0.0:
            return tree_scores
        return [share * c["linear"] + (1.0 - share) * s / t for c, s in zip(inst["candidates"], tree_scores)]

    for key, scores in out_of_fold.items():
        of = lambda inst, s=scores: blended(inst, s[inst["id"]])
        report[f"leave_one_{key}_out"] = {
            "all": metrics(instances, of),
            "by_language": by_group(instances, "language", of),
        }
    # The blend's own temperature, from the same held-out scores; the model's `temperature` and
    # `linear_weight` fold both in: linear_weight · linear + trees / temperature = blend / t_blend.
    linear_weight, model_temperature = 0.0, t
    if share > 0.0 and args.calibrate_on in out_of_fold:
        scores = out_of_fold[args.calibrate_on]
        t_blend = temperature(instances, {i["id"]: blended(i, scores[i["id"]]) for i in instances})
        linear_weight = share / t_blend
        model_temperature = t * t_blend / (1.0 - share)
    elif share > 0.0:
        linear_weight, model_temperature = share, t / (1.0 - share)
    print("fitting the final model on every instance …", file=sys.stderr)
    booster = fit(instances)
    final = {i["id"]: predict(booster, i) for i in instances}
    report["in_sample"] = {"all": metrics(instances, lambda i: blended(i, final[i["id"]]))}
    for path in args.test:
        test_names, test_instances = without(*read_dataset(path), dropped)
        if test_names != names:
            sys.exit(f"{path}: other features than the training dataset")
        seen = {i["id"] for i in instances} & {i["id"] for i in test_instances}
        if seen:
            sys.exit(f"{path}: {len(seen)} instances are also training instances, e.g. {sorted(seen)[0]}")
        # The file's name, or its whole path when another test set has the same name (the
        # datasets `swex train --work DIR` writes are all `DIR/dataset.jsonl`).
        same_name = [p for p in args.test if p.rsplit("/", 1)[-1] == path.rsplit("/", 1)[-1]]
        key = f"test:{path if len(same_name) > 1 else path.rsplit('/', 1)[-1]}"
        model_scores = lambda i: blended(i, predict(booster, i))
        report[key] = {
            "all": metrics(test_instances, model_scores),
            "by_language": by_group(test_instances, "language", model_scores),
            "linear": metrics(test_instances, linear),
            "linear_by_language": by_group(test_instances, "language", linear),
            "dataset_digest": digest(path),
        }

    dump = booster.dump_model()
    if dump["feature_names"] != [f"Column_{i}" for i in range(len(names))] and dump["feature_names"] != names:
        sys.exit("unexpected feature names in the LightGBM dump")
    trees = [tree_json(t_) for t_ in dump["tree_info"]]
    # Rows with LightGBM's own scores, for the Rust inference to reproduce (a test checks them).
    checks = []
    for inst in instances[:: max(1, len(instances) // 20)][:20]:
        for c, s in list(zip(inst["candidates"], final[inst["id"]]))[:2]:
            checks.append({"row": c["row"], "score": float(s)})
    languages = {}
    for inst in instances:
        languages[inst["language"]] = languages.get(inst["language"], 0) + 1
    model = {
        "format": "swex-trees/1",
        "features": names,
        "trees": trees,
        "temperature": model_temperature,
    }
    if share > 0.0:
        model["linear_weight"] = linear_weight
    model["training"] = {
        "dataset_digest": digest(args.dataset),
        "features_left_out": dropped,
        "instances": len(instances),
        "instances_with_gold_candidate": sum(
            1 for i in instances if any(c["path"] in set(i["gold"]) for c in i["candidates"])),
        "repositories": len({i["repo"] for i in instances}),
        "languages": languages,
        "trainer": f"lightgbm {lgb.__version__} lambdarank",
        "params": PARAMS,
        "rounds": ROUNDS,
        "temperature_from": f"leave-one-{args.calibrate_on}-out scores" if args.calibrate_on in out_of_fold else "none (one fold value)",
        "metrics": report,
        "checks": checks,
    }
    if share > 0.0:
        model["training"]["linear_share"] = share
        model["training"]["trees_temperature"] = t
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(model, f, separators=(",", ":"))
        f.write("\n")
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    print(json.dumps({k: v and v["all"] for k, v in report.items()}, indent=1))
    print(verdict(report), file=sys.stderr)


if __name__ == "__main__":
    main()
