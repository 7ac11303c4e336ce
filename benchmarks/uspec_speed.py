"""U-SPEC's speed against KMeans and its accuracy (issue 48, deliverable 5).

Target: on MNIST-70k (pixels / 255) the median ``uspec`` fit over seeds 0-2 at most
1.5 x the median ``KMeans(10, n_init=1)`` fit, both measured side by side in this
process (each seed: KMeans, then ``uspec``), after one warm-up fit of each on the first
10 000 rows; mean ACC >= .69 on MNIST-70k and >= .668 on USPS.

Run ``python -m benchmarks.uspec_speed [--datasets mnist usps] [--seeds 0-2]
[--dtype float32|float64] [--preset uspec] [--data-dir DIR]`` (default data folder:
``$GRAPHCLUST_DATA``). Prints one row per fit (ACC, NMI, wall seconds, and for ``uspec``
its stages' seconds summed over the starts, ``timings_``, and the fit's CPU seconds,
``time.process_time``, all threads) and, per data set, the medians and their ratios;
the load average at the start and the end (the machine is shared).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

WARMUP_ROWS = 10_000


def _seed_range(text: str) -> tuple[int, ...]:
    lo, _, hi = text.partition("-")
    return tuple(range(int(lo), int(hi or lo) + 1))


def _scores(y, labels) -> tuple[float, float]:
    from graphclust import get_registry

    reg = get_registry().metrics
    labels = np.asarray(labels)
    return (float(reg.get("acc")().score(labels, y)),
            float(reg.get("nmi")().score(labels, y)))


def _kmeans(X, seed: int):
    from sklearn.cluster import KMeans

    t0, c0 = time.perf_counter(), time.process_time()
    labels = KMeans(10, n_init=1, random_state=seed).fit(X).labels_
    return labels, time.perf_counter() - t0, {"cpu": time.process_time() - c0}


def _uspec(preset: str):
    def fit(X, seed: int):
        import graphclust

        t0, c0 = time.perf_counter(), time.process_time()
        est = graphclust.GraphClustering(preset, n_clusters=10, random_state=seed).fit(X)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        return est.labels_, wall, {**est.timings_, "cpu": cpu}
    return fit


def _load(name: str, data_dir, dtype):
    from benchmarks.datasets import load

    X, y = load(name, data_dir)  # the suites' dtype (float32 for pixels) unless given
    dtype = dtype or X.dtype
    if name.startswith("mnist"):
        X = np.asarray(X, dtype=np.float64) / 255.0  # pixels / 255, as issue 48 measures
    return np.asarray(X, dtype=dtype), np.asarray(y)


def run(datasets, seeds, dtype, preset, data_dir) -> list[dict]:
    rows = []
    methods = {"kmeans-1": _kmeans, preset: _uspec(preset)}
    for name in datasets:
        X, y = _load(name, data_dir, dtype)
        for fit in methods.values():  # warm-up: imports, registry, BLAS start-up
            fit(X[:WARMUP_ROWS], 0)
        for seed in seeds:
            for method, fit in methods.items():
                labels, wall, stages = fit(X, seed)
                acc, nmi = _scores(y, labels)
                row = {"data": name, "method": method, "seed": seed, "acc": acc,
                       "nmi": nmi, "wall": wall, "stages": stages}
                rows.append(row)
                cpu = stages.pop("cpu")
                row["cpu"] = cpu
                detail = " ".join(f"{k} {v:.2f}" for k, v in stages.items() if k != "total")
                print(f"{name:<8} seed {seed} {method:<10} ACC {acc:.4f} NMI {nmi:.4f} "
                      f"fit {wall:7.2f} s CPU {cpu:7.2f} s  {detail}", flush=True)
    return rows


def summary(rows, preset) -> list[str]:
    header = ("| data | KMeans(10, n_init=1) median s | uspec median s | ratio | "
              "CPU s medians (KMeans / uspec) | CPU ratio | uspec ACC mean | per seed | "
              "NMI mean |")
    lines = [header, "|---|---|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(r["data"] for r in rows):
        km = [r for r in rows if r["data"] == name and r["method"] == "kmeans-1"]
        us = [r for r in rows if r["data"] == name and r["method"] == preset]
        t_km = float(np.median([r["wall"] for r in km]))
        t_us = float(np.median([r["wall"] for r in us]))
        c_km = float(np.median([r["cpu"] for r in km]))
        c_us = float(np.median([r["cpu"] for r in us]))
        accs = " ".join(f"{r['acc']:.3f}" for r in us)
        lines.append(f"| {name} | {t_km:.2f} | {t_us:.2f} | {t_us / t_km:.2f} | "
                     f"{c_km:.2f} / {c_us:.2f} | {c_us / c_km:.2f} | "
                     f"{np.mean([r['acc'] for r in us]):.4f} | {accs} | "
                     f"{np.mean([r['nmi'] for r in us]):.4f} |")
    return lines


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+", default=["mnist", "usps"])
    ap.add_argument("--seeds", default="0-2", help="a range, e.g. 0-2")
    ap.add_argument("--dtype", default=None, choices=["float32", "float64"],
                    help="default: the dtype benchmarks.datasets.load gives")
    ap.add_argument("--preset", default="uspec")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    print(f"load average at start {os.getloadavg()[0]:.2f}", flush=True)
    rows = run(args.datasets, _seed_range(args.seeds), args.dtype, args.preset,
               args.data_dir)
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    print("\n".join(summary(rows, args.preset)))


if __name__ == "__main__":
    main()
