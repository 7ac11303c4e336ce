"""Genie on a set of points, and nearest-point labelling (private maths of ``genie``).

Everything here is global-small (the Genie run on at most ``max_exact`` distinct points)
or row-local (the nearest-point search, in row blocks).
"""

from __future__ import annotations

import numpy as np

from graphclust.numerics import fixed_threads, nearest_anchors

__all__ = ["distinct_rows", "genie_partition", "genie_merges", "nearest_labels", "first_seen"]


def distinct_rows(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``P`` (sorted lexicographically) and, for every row of ``P``,
    the index of its distinct row. Identical points then always share a label, and the
    order Genie sees does not depend on the order of the input rows."""
    uniq, inverse = np.unique(P, axis=0, return_inverse=True)
    return uniq, np.asarray(inverse).ravel()


def genie_partition(P: np.ndarray, k: int, gini_threshold: float,
                    merges: list | None = None) -> np.ndarray:
    """Labels ``0..k'-1`` of the distinct points ``P`` by Genie, ``k' = min(k, len(P))``.

    ``k' = 1`` labels every point 0 and ``k' = len(P)`` gives every point its own
    cluster, without calling genieclust (which asks ``1 <= k < n``). Otherwise
    ``genieclust.Genie(n_clusters=k', gini_threshold=..., M=1)`` on the Euclidean
    distance: ``M = 1`` is the plain distance (no mutual reachability, hence no noise
    points) in every genieclust release from 1.1 on. The minimum spanning tree is
    computed with one OpenMP thread, so ties between equal edge weights are broken the
    same way whatever the machine's thread count. One-column points get a zero column
    (the distances are unchanged; genieclust's tree search refuses a single column).
    """
    import genieclust

    m = P.shape[0]
    k = int(min(k, m))
    if k <= 1:
        return np.zeros(m, dtype=np.int64)
    if k == m:
        return np.arange(m, dtype=np.int64)
    P = np.ascontiguousarray(P, dtype=np.float64)
    if P.shape[1] == 1:
        P = np.c_[P, np.zeros(m)]
    with fixed_threads():
        model = genieclust.Genie(n_clusters=k, gini_threshold=float(gini_threshold), M=1)
        labels = model.fit_predict(P)
    if merges is not None:  # Genie's whole merge sequence, for the layers
        merges.extend(genie_merges(model.children_, model.distances_, m))
    return np.asarray(labels, dtype=np.int64)


def genie_merges(children: np.ndarray, distances: np.ndarray, m: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Genie's merges as pairs of points (the smallest point of each side) and their
    heights: ``children`` in scipy's linkage numbering (``j < m`` a point, ``m + i`` the
    group made by merge ``i``), applied in order; the first ``m − k`` give Genie's
    partition with ``k`` clusters."""
    children = np.asarray(children, dtype=np.int64).reshape(-1, 2)
    rep = np.r_[np.arange(m), np.zeros(children.shape[0], dtype=np.int64)]
    pairs = np.empty_like(children)
    for i, (a, b) in enumerate(children):
        pairs[i] = rep[a], rep[b]
        rep[m + i] = min(rep[a], rep[b])
    return pairs, np.asarray(distances, dtype=np.float64).ravel()


def nearest_labels(E: np.ndarray, U: np.ndarray, labels: np.ndarray,
                   progress=None) -> np.ndarray:
    """The label of the nearest row of ``U`` (squared Euclidean distance, first row on a
    tie) for every row of ``E``, in row blocks of :func:`graphclust.numerics.nearest_anchors`
    (memory ``O(block · len(U))``)."""
    idx, _ = nearest_anchors(E, U, 1, progress=progress)
    return np.asarray(labels, dtype=np.int64)[idx[:, 0]]


def first_seen(labels: np.ndarray) -> np.ndarray:
    """Relabel ``0..k'-1`` in the order the labels first appear, so the numbering is
    fixed by the points, not by how a library numbered its clusters."""
    labels = np.asarray(labels, dtype=np.int64)
    if labels.size == 0:
        return labels
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[np.asarray(inverse).ravel()]
