"""Common bundle: ``ncut`` (and ``anchor-spectral``) vs scikit-learn, and kNN build time.

What it measures, peers timed side by side in the same process (compare ratios; the
machine is shared, absolute seconds are noisy):

* USPS (9298 x 256): preset ``ncut`` (self-tuning Gaussian 10-NN graph, spectral
  embedding, k-means) against scikit-learn ``SpectralClustering(affinity=
  "nearest_neighbors", n_neighbors=10)`` — issue 2 asks ``ncut`` to reach at least
  scikit-learn's ACC/NMI (about 0.65 / 0.79) without being slower. ``anchor-spectral``
  (LSC) is reported beside them.
* MNIST-70k (70000 x 784): time to build the ``knn`` graph (exact, and faiss HNSW
  ``approx``) against scikit-learn ``NearestNeighbors(n_neighbors=10).kneighbors_graph``.

``python -m benchmarks.common_ncut --data-dir ../shared/data [--quick] [--no-mnist]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import graphclust
from graphclust.data import load_dataset

__all__ = ["run", "knn_timing", "SKLEARN_REFERENCE"]

#: Issue 2's figures for scikit-learn SpectralClustering (10-NN) on USPS.
SKLEARN_REFERENCE = {"usps": {"acc": 0.65, "nmi": 0.79}}


def _scores(labels, y) -> dict:
    from graphclust import resolve_part

    return {m: float(resolve_part({"name": m}, "metric").score(labels, y))
            for m in ("acc", "nmi", "ari", "purity")}


def _subsample(X, y, n, seed=0):
    if n is None or X.shape[0] <= n:
        return X, y
    idx = np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))
    return X[idx], y[idx]


def run(data_dir, quick: bool = False, seeds=(0, 1, 2), presets=("ncut", "anchor-spectral"),
        datasets=("usps",)) -> list[dict]:
    """Fit each preset and scikit-learn's SpectralClustering per seed; one row per fit."""
    from sklearn.cluster import SpectralClustering

    rows = []
    for name in datasets:
        X, y = load_dataset(name, data_dir)
        X = np.asarray(X, dtype=np.float32)
        if quick:
            X, y = _subsample(X, y, 2000)
        k = int(np.unique(y).size)
        for seed in seeds:
            t = time.perf_counter()
            sc = SpectralClustering(n_clusters=k, affinity="nearest_neighbors", n_neighbors=10,
                                    random_state=seed).fit(X)
            sk_time = time.perf_counter() - t
            rows.append({"dataset": name, "preset": "sklearn-spectral", "seed": seed,
                         "params": "affinity=nearest_neighbors, n_neighbors=10",
                         **_scores(sc.labels_, y), "fit_seconds": sk_time,
                         "peer_seconds": sk_time})
            for preset in presets:
                est = graphclust.GraphClustering(preset, n_clusters=k, random_state=seed)
                t = time.perf_counter()
                est.fit(X)
                fit = time.perf_counter() - t
                rows.append({"dataset": name, "preset": preset, "seed": seed, "params": "",
                             **_scores(est.labels_, y), "fit_seconds": fit,
                             "peer_seconds": sk_time,
                             "timings": dict(getattr(est, "timings_", {}) or {})})
    return rows


def knn_timing(data_dir, quick: bool = False, methods=("exact", "approx"),
               n_neighbors: int = 10, n: int | None = None, verbose: bool = False) -> list[dict]:
    """Seconds to build the ``knn`` graph on MNIST-70k vs scikit-learn's kneighbors_graph.

    ``n`` takes the first ``n`` rows (``quick``: 10 000); ``verbose`` prints each row to
    stderr as soon as it is measured.
    """
    import sys

    from sklearn.neighbors import NearestNeighbors

    from graphclust_plugins.common.graph_knn import KNNGraph

    X, _ = load_dataset("mnist", data_dir)
    X = np.asarray(X, dtype=np.float32)
    X = X[: (10000 if quick and n is None else n)]
    t = time.perf_counter()
    G_sk = NearestNeighbors(n_neighbors=n_neighbors).fit(X).kneighbors_graph(mode="connectivity")
    sk = time.perf_counter() - t
    rows = [{"dataset": f"mnist[{X.shape[0]}]", "method": "sklearn NearestNeighbors",
             "seconds": sk, "ratio_to_sklearn": 1.0, "recall": 1.0}]
    if verbose:
        print(rows[-1], file=sys.stderr, flush=True)
    ref = G_sk.tocsr()
    for method in methods:
        try:
            t = time.perf_counter()
            g = KNNGraph(n_neighbors=n_neighbors, method=method, symmetrize="or").build(
                X, None, graphclust.Context())
            sec = time.perf_counter() - t
        except ImportError as exc:  # faiss missing
            rows.append({"dataset": f"mnist[{X.shape[0]}]", "method": f"knn {method}",
                         "seconds": float("nan"), "error": str(exc)})
            continue
        # directed recall against sklearn's exact neighbours (ties may differ)
        A = g.adjacency
        hit = ref.multiply(A > 0).sum() / ref.sum()
        rows.append({"dataset": f"mnist[{X.shape[0]}]", "method": f"knn {method}",
                     "seconds": sec, "ratio_to_sklearn": sec / sk, "recall": float(hit)})
        if verbose:
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def _table(rows, cols) -> str:
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        out.append("| " + " | ".join(
            f"{r.get(c, ''):.3f}" if isinstance(r.get(c), float) else str(r.get(c, ""))
            for c in cols) + " |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--no-mnist", action="store_true")
    args = ap.parse_args(argv)
    from graphclust.data import find_data_dir

    data_dir = args.data_dir or find_data_dir()
    rows = run(data_dir, quick=args.quick, seeds=tuple(range(args.seeds)))
    summary = []
    for (ds, preset) in dict.fromkeys((r["dataset"], r["preset"]) for r in rows):
        sel = [r for r in rows if r["dataset"] == ds and r["preset"] == preset]
        summary.append({"dataset": ds, "preset": preset,
                        "acc": f"{np.mean([r['acc'] for r in sel]):.3f} ± "
                               f"{np.std([r['acc'] for r in sel]):.3f}",
                        "nmi": f"{np.mean([r['nmi'] for r in sel]):.3f}",
                        "ari": f"{np.mean([r['ari'] for r in sel]):.3f}",
                        "fit_seconds": float(np.mean([r["fit_seconds"] for r in sel])),
                        "time / sklearn": float(np.mean([r["fit_seconds"] / r["peer_seconds"]
                                                          for r in sel])),
                        "reference (issue 2, sklearn)": "ACC 0.65 / NMI 0.79"})
    print(_table(summary, ["dataset", "preset", "acc", "nmi", "ari", "fit_seconds",
                           "time / sklearn", "reference (issue 2, sklearn)"]))
    if not args.no_mnist:
        print()
        print(_table(knn_timing(data_dir, quick=args.quick),
                     ["dataset", "method", "seconds", "ratio_to_sklearn", "recall"]))


if __name__ == "__main__":
    main()
