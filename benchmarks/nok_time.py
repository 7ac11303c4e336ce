"""Issue 26's time target side by side: a method fitted with ``k`` given and without ``k``
on the same data, alternating in one process (the order swapped every seed, so neither
side always runs on a warmer cache), wall and CPU seconds of each fit.

Run ``python -m benchmarks.nok_time --dataset mnist --scale 255 --seeds 0 1 2``; one JSON
line per fit (``k`` given or estimated, ``n_clusters_``, ACC/NMI/ARI, wall and CPU
seconds), then the medians and the ratio no-k / k-given. A small warm-up fit first
compiles the numba kernels, so neither side pays for them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from benchmarks import datasets
from benchmarks.runner import score_all


def fit_once(method: str, X: np.ndarray, y: np.ndarray, k: int | None, seed: int) -> dict:
    """One fit: ``k`` given (an int) or estimated (None); seconds and scores."""
    import graphclust

    est = graphclust.GraphClustering(method, n_clusters=k, random_state=seed)
    wall, cpu = time.perf_counter(), time.process_time()
    est.fit(X)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"method": method, "seed": seed, "k": "given" if k else "estimated",
            "n_clusters_": int(est.n_clusters_), "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2), **{m: round(v, 4) for m, v in score_all(
                np.asarray(est.labels_), y).items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.nok_time", description=__doc__)
    ap.add_argument("--dataset", default="mnist")
    ap.add_argument("--method", default="auto")
    ap.add_argument("--scale", type=float, default=1.0, help="divide X by this (255: pixels)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    X, y = datasets.load(args.dataset, args.data_dir)
    X = np.asarray(X, dtype=np.float32) / np.float32(args.scale)
    k_true = int(np.unique(y).size)
    warm = np.random.default_rng(0).choice(X.shape[0], min(2000, X.shape[0]), replace=False)
    fit_once(args.method, X[warm], y[warm], k_true, 0)
    rows = []
    for i, seed in enumerate(args.seeds):
        for k in ((k_true, None) if i % 2 == 0 else (None, k_true)):
            rows.append(fit_once(args.method, X, y, k, seed))
            print(json.dumps(rows[-1]), flush=True)
    med = {side: {s: statistics.median(r[s] for r in rows if r["k"] == side)
                  for s in ("wall_s", "cpu_s")} for side in ("given", "estimated")}
    print(json.dumps({"median": med, "ratio_wall": round(med["estimated"]["wall_s"]
                                                         / med["given"]["wall_s"], 3),
                      "ratio_cpu": round(med["estimated"]["cpu_s"]
                                         / med["given"]["cpu_s"], 3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
