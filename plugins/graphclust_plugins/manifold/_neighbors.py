"""Neighbour search of the manifold family: exact brute force or graphclust's NN-descent
(:mod:`._nndescent`), optionally on leading principal components; and one pynndescent
``NNDescent`` index of a sample (it answers queries) shared by its two users (the
sample's fuzzy graph and the placement of the other rows).

The searches return the ``k`` nearest *other* points of every point with their metric
distances (Euclidean, or cosine distance ``1 − cos``) in the searched space, never an
``n x n`` array.
"""

from __future__ import annotations

import weakref

import attrs
import numba
import numpy as np

from graphclust.numerics import Projection, exact_knn_seconds, fit_pca, knn, normalize_rows

from ._jit import PARALLEL
from ._nndescent import _sorted_lists, nn_descent
from ._projections import remember_projection, scores
from ._rptrees import _sqdist

__all__ = ["EXACT_MAX_WORK", "SampleIndex", "approx_neighbors", "choose_method",
           "exact_neighbors", "feature_distances", "metric_distances", "project", "remember",
           "sample_index", "shared_index"]

#: ``method="auto"`` searches exactly while ``n² · d`` stays at or below this (about
#: 50 s of brute force on the 2-core reference machine by
#: :func:`graphclust.numerics.exact_knn_seconds`), and with NN-descent above it.
EXACT_MAX_WORK = 1e12


def choose_method(n: int, d: int, method: str) -> tuple[str, str]:
    """``(method, rule)``: the search to run (``"exact"`` or ``"approx"``) and why."""
    if method != "auto":
        return method, "requested"
    work = float(n) * float(n) * float(d)
    if work <= EXACT_MAX_WORK:
        return "exact", f"auto: n²·d = {work:.3g} <= {EXACT_MAX_WORK:.0e}"
    return "approx", (f"auto: n²·d = {work:.3g} > {EXACT_MAX_WORK:.0e} (exact search ≈ "
                      f"{exact_knn_seconds(n, d):.0f} s): NN-descent")


def project(X: np.ndarray, pca_components: int | None) -> tuple[np.ndarray, Projection | None]:
    """The rows the search runs on: ``X`` itself, or its scores on the leading
    ``pca_components`` principal components of ``X``
    (:func:`graphclust.numerics.fit_pca`, ``O(n·d²)``) when that is fewer than ``d`` and
    ``n`` (float32 stays float32). Returns the rows and the projection (None: none).
    The projection is remembered for ``X`` (:mod:`._projections`: the layout's PCA start
    of the same rows reads its leading components instead of fitting its own)."""
    n, d = X.shape
    if pca_components is None or int(pca_components) >= d or n <= int(pca_components):
        return X, None
    proj = fit_pca(X, int(pca_components))
    remember_projection(X, proj)
    return scores(proj, X), proj


def exact_neighbors(X: np.ndarray, k: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``k`` nearest other points (blocked brute force of
    :func:`graphclust.numerics.knn`). Cosine: Euclidean search of the unit-length rows,
    ``1 − cos = ‖u − v‖² / 2`` (an all-zero row stays zero, at cosine distance 1/2 of
    every unit row)."""
    if metric == "cosine":
        idx, dsq = knn(normalize_rows(X), k, method="exact")
    else:
        idx, dsq = knn(X, k, method="exact")
    return idx, metric_distances(dsq, metric)


def metric_distances(dsq: np.ndarray, metric: str) -> np.ndarray:
    """Squared Euclidean distances (of unit rows, for cosine) as the metric's distances,
    float64: ``sqrt`` for Euclidean, ``1 − cos = ‖u − v‖² / 2`` for cosine (negative
    round-off clipped to 0)."""
    dsq = np.maximum(np.asarray(dsq, dtype=np.float64), 0.0)
    return dsq * 0.5 if metric == "cosine" else np.sqrt(dsq)


def feature_distances(X: np.ndarray, idx: np.ndarray, metric: str
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Every row's candidates ``idx`` (found on a projection of ``X``) measured on the
    features ``X`` themselves and re-sorted, nearest first (ties: the lower index first);
    a candidate ``-1`` (none found) stays last at distance ``inf``.

    The distances are squared Euclidean in single precision (of the unit rows, for
    cosine), as NN-descent's, then :func:`metric_distances`. ``O(n·k·d)`` time, no
    ``n x n`` array.
    """
    rows = normalize_rows(X) if metric == "cosine" else X
    rows = np.ascontiguousarray(rows, dtype=np.float32)
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    out_i, out_d = _sorted_lists(_measure(rows, idx), idx)  # -1 (at inf) sorts last
    return out_i, metric_distances(out_d, metric)


@numba.njit(parallel=PARALLEL, cache=True)
def _measure(X, idx):
    """``‖X[i] − X[idx[i, a]]‖²`` in float32 (``inf`` where ``idx < 0``)."""
    n, k = idx.shape
    out = np.empty((n, k), dtype=np.float32)
    for i in numba.prange(0, n):
        for a in range(k):
            j = idx[i, a]
            out[i, a] = _sqdist(X[i], X[j]) if j >= 0 else np.float32(np.inf)
    return out


def _without_self(idx: np.ndarray, dist: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest *other* points from lists that may hold the row itself: the own
    index is removed (or, when absent, the farthest entry); a neighbour not found has index
    ``-1`` and distance ``inf``."""
    n = idx.shape[0]
    idx = np.asarray(idx, dtype=np.int64)
    dist = np.asarray(dist, dtype=np.float64)
    keep = idx != np.arange(n)[:, None]
    keep[keep.all(axis=1), -1] = False  # self not returned: drop the farthest instead
    order = np.argsort(~keep, axis=1, kind="stable")[:, :k]
    idx = np.take_along_axis(idx, order, axis=1)
    dist = np.take_along_axis(dist, order, axis=1)
    dist[idx < 0] = np.inf
    return idx, dist


def _nndescent(X: np.ndarray, n_neighbors: int, metric: str, seed: int):
    from pynndescent import NNDescent

    return NNDescent(X, n_neighbors=int(n_neighbors), metric=metric, random_state=seed,
                     n_jobs=1, low_memory=True, verbose=False)


def approx_neighbors(X: np.ndarray, k: int, metric: str,
                     seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Approximate ``k`` nearest other points by graphclust's NN-descent
    (:func:`graphclust_plugins.manifold._nndescent.nn_descent`: on all threads, the same
    lists for any thread count). Cosine: the Euclidean search of the unit-length rows, as
    :func:`exact_neighbors`."""
    rows = np.asarray(normalize_rows(X), dtype=np.float32) if metric == "cosine" else X
    idx, sq = nn_descent(rows, k, seed)
    return idx, metric_distances(sq, metric)


@attrs.frozen(eq=False)
class SampleIndex:
    """One NNDescent index of a sample, on its principal components or its features.

    Attributes
    ----------
    projection : Projection or None
        The sample's principal-component projection the index searches in (None: the
        features themselves); rows to place are projected with it.
    index : pynndescent.NNDescent
        The index over the (projected) sample rows, prepared for queries.
    n_neighbors : int
        Its neighbour-list size (counting each row itself).
    metric : str
    """

    projection: Projection | None
    index: object
    n_neighbors: int
    metric: str

    def neighbors(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` (at most ``n_neighbors − 1``) nearest other sample rows of every
        sample row, from the index's own graph."""
        idx, dist = self.index.neighbor_graph
        return _without_self(idx, dist, min(int(k), self.n_neighbors - 1))


#: The last index built by :func:`sample_index`: ``(weak reference to the sample rows,
#: (n_neighbors, metric, pca_components), SampleIndex)``; emptied when those rows are
#: collected, so no index outlives its fit.
_LAST: list = []


def sample_index(U: np.ndarray, n_neighbors: int, metric: str, pca_components: int | None,
                 seed: int) -> SampleIndex:
    """Build (project, NNDescent, prepare for queries) the index of the sample rows ``U``
    and remember it for :func:`shared_index` while ``U`` lives (one index at a time)."""
    V, proj = project(U, pca_components)
    index = _nndescent(np.asarray(V, dtype=np.float32), n_neighbors, metric, seed)
    index.prepare()
    out = SampleIndex(projection=proj, index=index, n_neighbors=int(n_neighbors),
                      metric=metric)
    remember(U, n_neighbors, metric, pca_components, out)
    return out


def remember(U: np.ndarray, n_neighbors: int, metric: str, pca_components: int | None,
             index) -> None:
    """Keep ``index`` (of the sample rows ``U``; a :class:`SampleIndex` or any index with
    its ``projection``, ``n_neighbors`` and ``neighbors(k)``) for :func:`shared_index`
    while ``U`` lives, one index at a time."""
    _LAST[:] = [weakref.ref(U, _forget), (int(n_neighbors), metric, pca_components), index]


def _forget(ref: weakref.ref) -> None:
    """The sample rows are gone: release their index (it is not held past the fit)."""
    if _LAST and _LAST[0] is ref:
        _LAST.clear()


def shared_index(X: np.ndarray, n_neighbors: int, metric: str,
                 pca_components: int | None) -> SampleIndex | None:
    """The index :func:`sample_index` built over this very array ``X`` (the same object,
    unmodified: the sample's rows handed from ``sample-knn`` to ``on-sample``'s graph)
    with at least ``n_neighbors`` neighbours, the same metric and projection; else None."""
    if not _LAST:
        return None
    ref, (size, met, pca), out = _LAST
    if ref() is X and size >= int(n_neighbors) and met == metric and pca == pca_components:
        return out
    return None
