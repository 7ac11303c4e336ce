"""Neighbour search of the fuzzy kNN graph: exact brute force or NNDescent.

Both return the ``k`` nearest *other* points of every point with their true metric
distances (Euclidean, or cosine distance ``1 − cos``), never an ``n x n`` array.
"""

from __future__ import annotations

import numpy as np

from graphclust.numerics import exact_knn_seconds, knn, normalize_rows

__all__ = ["EXACT_MAX_WORK", "approx_neighbors", "choose_method", "exact_neighbors"]

#: ``method="auto"`` searches exactly while ``n² · d`` stays at or below this (about
#: 50 s of brute force on the 2-core reference machine by
#: :func:`graphclust.numerics.exact_knn_seconds`), and with NNDescent above it.
EXACT_MAX_WORK = 1e12


def choose_method(n: int, d: int, method: str) -> tuple[str, str]:
    """``(method, rule)``: the search to run (``"exact"`` or ``"approx"``) and why."""
    if method != "auto":
        return method, "requested"
    work = float(n) * float(n) * float(d)
    if work <= EXACT_MAX_WORK:
        return "exact", f"auto: n²·d = {work:.3g} <= {EXACT_MAX_WORK:.0e}"
    return "approx", (f"auto: n²·d = {work:.3g} > {EXACT_MAX_WORK:.0e} (exact search ≈ "
                      f"{exact_knn_seconds(n, d):.0f} s): pynndescent NNDescent")


def exact_neighbors(X: np.ndarray, k: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``k`` nearest other points (blocked brute force of
    :func:`graphclust.numerics.knn`). Cosine: Euclidean search of the unit-length rows,
    ``1 − cos = ‖u − v‖² / 2`` (an all-zero row stays zero, at cosine distance 1/2 of
    every unit row)."""
    if metric == "cosine":
        idx, dsq = knn(normalize_rows(X), k, method="exact")
        return idx, np.maximum(np.asarray(dsq, dtype=np.float64), 0.0) * 0.5
    idx, dsq = knn(X, k, method="exact")
    return idx, np.sqrt(np.maximum(np.asarray(dsq, dtype=np.float64), 0.0))


def approx_neighbors(X: np.ndarray, k: int, metric: str,
                     seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Approximate ``k`` nearest other points from pynndescent's ``NNDescent`` (seeded,
    hence single-threaded and reproducible). Each row's own index is removed (or, when
    the search did not return it, its farthest neighbour); a neighbour it did not find
    has index ``-1`` and distance ``inf``."""
    from pynndescent import NNDescent

    n = X.shape[0]
    index = NNDescent(X, n_neighbors=k + 1, metric=metric, random_state=seed, n_jobs=1,
                      low_memory=True, verbose=False)
    idx, dist = index.neighbor_graph
    idx = np.asarray(idx, dtype=np.int64)
    dist = np.asarray(dist, dtype=np.float64)
    keep = idx != np.arange(n)[:, None]
    keep[keep.all(axis=1), -1] = False  # self not returned: drop the farthest instead
    order = np.argsort(~keep, axis=1, kind="stable")[:, :k]
    idx = np.take_along_axis(idx, order, axis=1)
    dist = np.take_along_axis(dist, order, axis=1)
    missing = idx < 0
    dist[missing] = np.inf
    return idx, dist
