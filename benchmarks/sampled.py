"""Fit-on-a-sample targets (issues 25 and 27): the sample-aware ``manifold`` and ``genie``
presets on 1M x 50 blobs, MNIST-70k in memory and as an 8-chunk dask array on a 2-worker
LocalCluster, and MNIST-extend@630000 (``auto``; ``--dask`` also on a dask array);
KMeans(10, n_init=1) side by side.

``extend-vs-evoc`` fits ``auto`` and ``evoc.EVoC()`` on MNIST-extend, each in its own
process after a warm-up fit, one after the other, and prints the ratio of their times.

Run ``python -m benchmarks.sampled blobs|mnist-dask|mnist-extend [--seeds 0 1 2]``; each
prints one JSON line per fit: preset, wall seconds, this process's CPU seconds (the
machine is shared: CPU time is the figure that survives other load), peak RSS of this
process above the level before the fit (MB, sampled every 50 ms), ACC/NMI/ARI and, for the Dask runs, whether the
labels equal the in-memory ones.
"""

from __future__ import annotations

import argparse
import json
import threading
import time

import numpy as np
import psutil


class PeakRSS:
    """Peak resident memory of this process above its level at entry (MB)."""

    def __enter__(self):
        self.proc = psutil.Process()
        self.base = self.peak = self.proc.memory_info().rss
        t = self.proc.cpu_times()
        self.cpu0 = t.user + t.system
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def _poll(self):
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, self.proc.memory_info().rss)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)
        self.mb = (self.peak - self.base) / 2**20
        t = self.proc.cpu_times()
        self.cpu = t.user + t.system - self.cpu0  # this process's CPU seconds (not workers')


def scores(y, labels) -> dict:
    from graphclust import get_registry

    reg = get_registry()
    labels = np.asarray(labels)
    return {m: round(float(reg.metrics.get(m)().score(labels, y)), 4)
            for m in ("acc", "nmi", "ari")}


def fit_preset(preset: str, X, y, seed: int, k: int = 10, **kw) -> tuple[dict, np.ndarray]:
    import graphclust

    with PeakRSS() as mem:
        t0 = time.perf_counter()
        model = graphclust.GraphClustering(preset, n_clusters=k, random_state=seed, **kw).fit(X)
        labels = model.labels_
        labels = np.asarray(labels.compute() if hasattr(labels, "compute") else labels)
        seconds = time.perf_counter() - t0
    rec = {"method": preset, "seed": seed, "n": int(X.shape[0]), "seconds": round(seconds, 1),
           "cpu_s": round(mem.cpu, 1), "peak_rss_mb": round(mem.mb), **scores(y, labels)}
    return rec, labels


def fit_kmeans(X, y, seed: int, k: int = 10) -> dict:
    from sklearn.cluster import KMeans

    with PeakRSS() as mem:
        t0 = time.perf_counter()
        labels = KMeans(k, n_init=1, random_state=seed).fit_predict(X)
        seconds = time.perf_counter() - t0
    return {"method": "KMeans(10, n_init=1)", "seed": seed, "n": int(X.shape[0]),
            "seconds": round(seconds, 1), "cpu_s": round(mem.cpu, 1),
            "peak_rss_mb": round(mem.mb), **scores(y, labels)}


def emit(rec: dict) -> None:
    print(json.dumps(rec), flush=True)


def mnist() -> tuple[np.ndarray, np.ndarray]:
    from benchmarks.datasets import load

    X, y = load("mnist")
    return (np.asarray(X, dtype=np.float32) / np.float32(255.0)), y


def warm_up() -> None:
    """Compile numba (umap-learn, pynndescent) on a small fit so the timings are the fits'."""
    from sklearn.datasets import make_blobs

    import graphclust

    X, _ = make_blobs(3000, 20, centers=5, random_state=0)
    spec = {"anchors": {"name": "sample", "n_anchors": 1000},
            "graph": {"name": "sample-knn", "method": "approx"},
            "adapter": {"name": "on-sample", "graph": {"name": "fuzzy-knn", "method": "approx"}},
            "solver": {"name": "umap-layout", "n_components": 10, "min_dist": 0.0},
            "rounding": {"name": "argmax"}}
    graphclust.GraphClustering(spec, n_clusters=5, random_state=0).fit(X)


def blobs(args) -> None:
    from benchmarks.datasets import synthetic_blobs

    X, y = synthetic_blobs(args.n, 10, 50)
    if "manifold" in args.presets:
        warm_up()
    for seed in args.seeds:
        emit(fit_kmeans(X, y, seed))
        for preset in args.presets:
            emit(fit_preset(preset, X, y, seed)[0])


def mnist_dask(args) -> None:
    import dask.array as da
    from distributed import Client, LocalCluster

    X, y = mnist()
    warm_up()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="3GB",
                           dashboard_address=":0")
    client = Client(cluster)
    try:
        Xd = da.from_array(X, chunks=(-(-X.shape[0] // 8), X.shape[1])).persist()
        for seed in args.seeds:
            emit(fit_kmeans(X, y, seed))
            for preset in args.presets:  # e.g. --presets auto manifold
                rec, ref = fit_preset(preset, X, y, seed)
                emit(rec)
                rec, got = fit_preset(preset, Xd, y, seed)
                rec["method"] = f"{preset} on Dask (8 chunks, LocalCluster 2 x 1 thread, 3 GB)"
                rec["identical_to_in_memory"] = bool(np.array_equal(ref, got))
                emit(rec)
    finally:
        client.close()
        cluster.close()


def mnist_extend(args) -> None:
    """MNIST-extend in memory (``--presets``, default ``auto``) beside KMeans; with
    ``--dask`` each fit again on an 8-chunk dask array on a 2-worker LocalCluster
    (1 thread, 3 GB each), with whether its labels equal the in-memory ones."""
    from benchmarks.datasets import load

    X, y = load(f"mnist-extend@{args.n}")
    X = np.asarray(X, dtype=np.float32) / np.float32(255.0)
    warm_up()
    cluster = client = Xd = None
    if args.dask:
        import dask.array as da
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="3GB",
                               dashboard_address=":0")
        client = Client(cluster)
        Xd = da.from_array(X, chunks=(-(-X.shape[0] // 8), X.shape[1])).persist()
    try:
        for seed in args.seeds:
            emit(fit_kmeans(X, y, seed))
            for preset in args.presets:
                rec, ref = fit_preset(preset, X, y, seed)
                rec["input_mb"] = round(X.nbytes / 2**20)
                emit(rec)
                if Xd is not None:
                    rec, got = fit_preset(preset, Xd, y, seed)
                    rec["method"] = (f"{preset} on Dask (8 chunks, LocalCluster 2 x 1 thread, "
                                     "3 GB)")
                    rec["identical_to_in_memory"] = bool(np.array_equal(ref, got))
                    emit(rec)
    finally:
        if client is not None:
            client.close()
            cluster.close()


def extend_worker(args) -> None:
    """One timed fit of ``args.which`` (``auto`` or ``evoc``) on MNIST-extend in this
    process, after a warm-up fit of the same method on 5 000 rows (numba compiled)."""
    from benchmarks.datasets import load

    X, y = load(f"mnist-extend@{args.n}")
    X = np.ascontiguousarray(np.asarray(X, dtype=np.float32) / np.float32(255.0))
    seed = args.seeds[0]
    if args.which == "evoc":
        import evoc

        warm = np.random.default_rng(0).choice(X.shape[0], 5000, replace=False)
        evoc.EVoC(random_state=seed).fit_predict(X[warm])
        with PeakRSS() as mem:
            t0 = time.perf_counter()
            labels = evoc.EVoC(random_state=seed).fit_predict(X)
            seconds = time.perf_counter() - t0
        emit({"method": "EVoC()", "seed": seed, "n": int(X.shape[0]),
              "seconds": round(seconds, 1), "cpu_s": round(mem.cpu, 1),
              "peak_rss_mb": round(mem.mb), "labelled": round(float((labels >= 0).mean()), 4),
              **scores(y, labels)})
        return
    warm_up()
    import graphclust

    with PeakRSS() as mem:
        t0 = time.perf_counter()
        model = graphclust.GraphClustering("auto", n_clusters=10, random_state=seed).fit(X)
        seconds = time.perf_counter() - t0
    emit({"method": "auto", "seed": seed, "n": int(X.shape[0]), "seconds": round(seconds, 1),
          "cpu_s": round(mem.cpu, 1), "peak_rss_mb": round(mem.mb),
          "timings": {k: round(v, 1) for k, v in model.timings_.items()},
          "start_modularity": model.solution_.info.get("start_modularity"),
          "start": model.solution_.info.get("start"), **scores(y, model.labels_)})


def extend_vs_evoc(args) -> None:
    """``auto`` and ``EVoC()`` on MNIST-extend, each seed's fits in fresh processes one
    after the other (``extend_worker``), then the ratio of their wall seconds."""
    import subprocess
    import sys

    for seed in args.seeds:
        recs = {}
        for which in ("auto", "evoc"):
            cmd = [sys.executable, "-m", "benchmarks.sampled", "extend-worker", "--which",
                   which, "--seeds", str(seed), "--n", str(args.n)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            recs[which] = json.loads(out.stdout.strip().splitlines()[-1])
            emit(recs[which])
        emit({"seed": seed, "auto_over_evoc": round(recs["auto"]["seconds"]
                                                    / recs["evoc"]["seconds"], 3),
              "cpu_auto_over_evoc": round(recs["auto"]["cpu_s"] / recs["evoc"]["cpu_s"], 3)})


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sampled", description=__doc__)
    parser.add_argument("target", choices=("blobs", "mnist-dask", "mnist-extend",
                                           "extend-vs-evoc", "extend-worker"))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--presets", nargs="+", default=None,
                        help="default: genie manifold (blobs), auto manifold (mnist-dask), "
                        "auto (mnist-extend)")
    parser.add_argument("--which", choices=("auto", "evoc"), default="auto",
                        help="extend-worker: the method this process fits")
    parser.add_argument("--dask", action="store_true",
                        help="mnist-extend: also fit on an 8-chunk dask array (LocalCluster)")
    args = parser.parse_args(argv)
    if args.presets is None:
        args.presets = {"mnist-dask": ["auto", "manifold"], "mnist-extend": ["auto"]}.get(
            args.target, ["genie", "manifold"])
    if args.n is None:
        args.n = {"blobs": 1_000_000, "mnist-dask": 70_000}.get(args.target, 630_000)
    {"blobs": blobs, "mnist-dask": mnist_dask, "mnist-extend": mnist_extend,
     "extend-vs-evoc": extend_vs_evoc, "extend-worker": extend_worker}[args.target](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
