"""The targets of ``confidence_``, ``predict_proba`` and ``noise=True`` (docs/confidence.rst).

``python -m benchmarks.confidence STEP [--out FILE]``, one step a call (each within
about five minutes on two cores):

``digits``
    Every shipped preset on scikit-learn's digits, k = 10, seed 0: ``confidence_`` in
    ``[0, 1]`` and finite, its mean on correctly and wrongly labelled points (the best
    one-to-one matching of clusters to classes), the AUROC of the confidence for "label
    correct", the fit time and the confidence's time (``timings_["confidence"]``).
``mnist``
    MNIST-70k (pixels / 255, float32), ``auto``, k = 10, seed 0: ACC, the AUROC of the
    confidence for "label correct", the ACC of the 94.1 % most confident points, the
    fit's time and the confidence's.
``time``
    MNIST-70k (pixels / 255, float32): ``GraphClustering("auto", n_clusters=10)`` (its
    confidence computed, the default) against ``evoc.EVoC()``, each fit in its own
    subprocess after a warm-up fit on :data:`WARM_UP_ROWS` rows (numba's compilation is
    not timed; the warm-up's ``auto`` rule is recorded), the two alternating, ``--repeats`` times each (default 3): the wall time
    of every fit, the medians and the ratio of the medians and of each interleaved
    pair, the processor seconds of every fit (``cpu_s``: all its threads, the clock a
    loaded machine stretches least) and the ratio of their medians, the peak resident
    memory above the data (``VmHWM`` after the fit minus ``VmRSS`` before it, the high-water mark reset after the warm-up) and ``auto``'s
    stage timings (``timings_``). About 4 minutes a pair on two cores.
``noise``
    Five Gaussian blobs (4 000 points, σ = 0.5, centres in ``[−10, 10]²``) plus 20 %
    uniform background (1 000 points over the blobs' bounding box, 1 unit margin),
    ``auto`` with k = 5 and ``noise=True``, seeds 0–9 (``--seeds``): precision and
    recall of the flagged points for "background", ARI on the kept blob points, the
    share flagged on the same blobs without background, and the recall of the Bayes
    rule of the generating model itself (the true centres, σ and weights: what no rule
    can beat on average).

Only public names of graphclust are used. The result is printed as JSON and, with
``--out``, written there.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import graphclust as gc
import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score, roc_auc_score

from benchmarks.runner import peak_mb, reset_peak, rss_mb

#: The share of MNIST points EVoC labels (the rest is its noise), the issue's yardstick.
EVOC_LABELLED = 0.941
#: Rows of the warm-up fit before a timed one (compiles numba's functions of both): with
#: k = 10, 500 points per cluster, so ``auto`` warms up on the rule the timed fit runs
#: (rule 7, the manifold family; fewer rows would take rule 4 and compile nothing of it).
WARM_UP_ROWS = 5000


def matching(y, labels) -> np.ndarray:
    """``m[cluster] = class``: the one-to-one matching of clusters to classes that agrees
    on the most points (Hungarian matching; unmatched clusters map to -1)."""
    k = int(max(y.max(), labels.max())) + 1
    table = np.zeros((k, k))
    np.add.at(table, (labels, y), 1)
    rows, cols = linear_sum_assignment(-table)
    match = np.full(k, -1)
    match[rows] = cols
    return match


def correct(y, labels) -> np.ndarray:
    """Whether each point's cluster is matched to its class (:func:`matching`)."""
    return matching(y, labels)[labels] == y


def ranking(ok, conf) -> dict:
    """The confidence's AUROC for "label correct" and the ACC of the most confident
    ``EVOC_LABELLED`` share."""
    order = np.argsort(-conf, kind="stable")
    top = order[:int(EVOC_LABELLED * len(order))]
    auc = float(roc_auc_score(ok, conf)) if 0 < ok.mean() < 1 else float("nan")
    return {"auroc": auc, "acc_top": float(ok[top].mean())}


def fit(spec, X, k, seed=0, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        model = gc.GraphClustering(spec, n_clusters=k, random_state=seed, **kw).fit(X)
        return model, time.perf_counter() - start


def step_digits() -> dict:
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    rows = []
    for preset in [*gc.get_registry().presets.names(), "auto"]:
        model, seconds = fit(preset, X, 10)
        conf, labels = np.asarray(model.confidence_), np.asarray(model.labels_)
        ok = correct(y, labels)
        rows.append({
            "preset": preset, "source": model.confidence_source_,
            "in_unit_interval": bool(np.isfinite(conf).all() and conf.min() >= 0
                                     and conf.max() <= 1),
            "acc": float(ok.mean()), "mean_correct": float(conf[ok].mean()),
            "mean_wrong": float(conf[~ok].mean()) if (~ok).any() else float("nan"),
            **ranking(ok, conf), "fit_s": seconds,
            "confidence_s": model.timings_["confidence"]})
        rows[-1]["higher_for_correct"] = rows[-1]["mean_correct"] > rows[-1]["mean_wrong"]
        print(json.dumps(rows[-1]), flush=True)
    return {"step": "digits", "rows": rows,
            "all_met": all(r["in_unit_interval"] and r["higher_for_correct"] for r in rows)}


def step_mnist(data_dir: str | None) -> dict:
    from graphclust.data import load_dataset

    X, y = load_dataset("mnist", data_dir)
    X = (np.asarray(X) / 255.0).astype(np.float32)
    model, seconds = fit("auto", X, 10)
    ok = correct(np.asarray(y), np.asarray(model.labels_))
    out = {"step": "mnist", "acc": float(ok.mean()), **ranking(ok, model.confidence_),
           "fit_s": seconds, "fit_total_s": model.timings_["total"],
           "confidence_s": model.timings_["confidence"],
           "confidence_share_of_fit": model.timings_["confidence"] / seconds,
           "source": model.confidence_source_, "all_labelled": bool(
               (np.asarray(model.labels_) >= 0).all())}
    out["targets"] = {"auroc >= .90": out["auroc"] >= 0.90,
                      "acc_top >= .99": out["acc_top"] >= 0.99}
    return out


def blobs(background: bool, seed: int):
    from sklearn.datasets import make_blobs

    X, y = make_blobs(4000, centers=5, cluster_std=0.5, center_box=(-10, 10),
                      random_state=seed)
    if not background:
        return X, y
    rng = np.random.default_rng(seed)
    B = rng.uniform(X.min(0) - 1, X.max(0) + 1, (1000, 2))
    return np.vstack([X, B]), np.r_[y, -np.ones(1000, dtype=np.int64)]


def oracle_recall(X, y, seed: int) -> float:
    """Recall of the Bayes rule of the model that drew the data (true centres, σ = 0.5,
    4 000 blob points, 1 000 uniform over the box): background flagged where its density
    exceeds the blobs'."""
    from scipy.stats import multivariate_normal
    from sklearn.datasets import make_blobs

    _, _, centres = make_blobs(4000, centers=5, cluster_std=0.5, center_box=(-10, 10),
                               random_state=seed, return_centers=True)
    blob = y >= 0
    box = np.prod(X[blob].max(0) - X[blob].min(0) + 2)
    noise = 1000 / box
    clusters = sum(800 * multivariate_normal(c, 0.25 * np.eye(2)).pdf(X) for c in centres)
    flagged, back = noise > clusters, ~blob
    return float((flagged & back).sum() / back.sum())


def step_noise(seeds=range(10)) -> dict:
    rows = []
    for seed in seeds:
        X, y = blobs(True, seed)
        model, seconds = fit("auto", X, 5, noise=True)
        flagged, back = np.asarray(model.labels_) < 0, y < 0
        kept = ~back & ~flagged
        row = {"seed": seed, "confidence_source": model.confidence_source_,
               "rounding": (model.resolved_spec_.get("rounding") or {}).get("name"),
               "precision": float((flagged & back).sum() / max(flagged.sum(), 1)),
               "recall": float((flagged & back).sum() / back.sum()),
               "ari_kept_blobs": float(adjusted_rand_score(y[kept], model.labels_[kept])),
               "bayes_recall": oracle_recall(X, y, seed), "fit_s": seconds}
        Xc, _ = blobs(False, seed)
        clean, _ = fit("auto", Xc, 5, noise=True)
        row["flagged_without_background"] = float((np.asarray(clean.labels_) < 0).mean())
        row["met"] = (row["precision"] >= 0.9 and row["recall"] >= 0.8
                      and row["ari_kept_blobs"] >= 0.95
                      and row["flagged_without_background"] <= 0.02)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return {"step": "noise", "rows": rows, "all_met": all(r["met"] for r in rows)}


def _mnist(data_dir: str | None):
    from graphclust.data import load_dataset

    X, y = load_dataset("mnist", data_dir)
    return (np.asarray(X) / 255.0).astype(np.float32), np.asarray(y)


def _fit_once(which: str, X) -> tuple[float, dict]:
    if which == "evoc":
        import evoc

        start = time.perf_counter()
        labels = evoc.EVoC().fit_predict(X)
        return time.perf_counter() - start, {"labelled": float((labels >= 0).mean())}
    model, seconds = fit("auto", X, 10)
    return seconds, {"timings": {k: float(v) for k, v in model.timings_.items()},
                     "summary": model.resolved_spec_.get("summary", "")}


def step_time_worker(which: str, data_dir: str | None) -> dict:
    """One timed fit of ``which`` (``auto`` or ``evoc``) after a warm-up fit, in this
    process (``python -m benchmarks.confidence time-worker --which ...``)."""
    X, _ = _mnist(data_dir)
    rng = np.random.default_rng(0)
    _, warm = _fit_once(which, X[rng.choice(X.shape[0], WARM_UP_ROWS, replace=False)])
    reset = reset_peak()
    before = rss_mb() or 0.0
    cpu = time.process_time()
    seconds, extra = _fit_once(which, X)
    cpu = time.process_time() - cpu
    return {"which": which, "fit_s": seconds, "cpu_s": cpu, "data_mb": X.nbytes / 2**20,
            "peak_above_data_mb": peak_mb() - before if reset else float("nan"),
            "warm_up_rule": warm.get("summary", "")[:12], **extra}


def step_time(data_dir: str | None, repeats: int) -> dict:
    """``auto`` and EVoC alternating in fresh subprocesses; medians and ratios."""
    runs = []
    for r in range(repeats):
        for which in ("auto", "evoc"):
            cmd = [sys.executable, "-m", "benchmarks.confidence", "time-worker",
                   "--which", which] + (["--data-dir", data_dir] if data_dir else [])
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            runs.append({"repeat": r, **json.loads(out.stdout.strip().splitlines()[-1])})
            print(json.dumps(runs[-1]), flush=True)
    times = {w: [x["fit_s"] for x in runs if x["which"] == w] for w in ("auto", "evoc")}
    peaks = {w: [x["peak_above_data_mb"] for x in runs if x["which"] == w]
             for w in ("auto", "evoc")}
    median = {w: statistics.median(t) for w, t in times.items()}
    cpu = {w: statistics.median(x["cpu_s"] for x in runs if x["which"] == w)
           for w in ("auto", "evoc")}
    pairs = [a / e for a, e in zip(times["auto"], times["evoc"])]
    return {"step": "time", "runs": runs, "median_fit_s": median,
            "ratio_of_medians": median["auto"] / median["evoc"],
            "pair_ratios": pairs, "median_pair_ratio": statistics.median(pairs),
            "median_cpu_s": cpu, "cpu_ratio_of_medians": cpu["auto"] / cpu["evoc"],
            "median_peak_above_data_mb": {w: statistics.median(p) for w, p in peaks.items()},
            "target fit <= evoc": median["auto"] <= median["evoc"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("digits", "mnist", "noise", "time", "time-worker"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--which", choices=("auto", "evoc"), default="auto")
    parser.add_argument("--seeds", default="0-9", help="noise: seeds A-B (inclusive)")
    args = parser.parse_args(argv)
    if args.step == "time-worker":
        print(json.dumps(step_time_worker(args.which, args.data_dir)))
        return 0
    lo, _, hi = args.seeds.partition("-")
    steps = {"digits": step_digits,
             "noise": lambda: step_noise(range(int(lo), int(hi or lo) + 1)),
             "mnist": lambda: step_mnist(args.data_dir),
             "time": lambda: step_time(args.data_dir, args.repeats)}
    result = steps[args.step]()
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
