"""Rows placed among a sample through graphclust's own neighbour graph of the sample
(private maths of ``sample-knn``'s ``method="descent"``).

The sample's ``k``-NN lists from :func:`._nndescent.nn_descent` (the same lists on any
thread count), with their reverse edges, are a graph a query walks (the greedy search of
Dong, Charikar & Li 2011, §4, and of the navigating graphs that follow it): a row starts
from the nearest of a fixed set of sample rows (the *pivots*), keeps a pool of the
``pool`` nearest sample rows met so far, and expands the nearest one it has not expanded
(measures the rows its graph links it to) until every row in the pool is expanded.

Each row's walk reads only the row, the sample and the graph: its neighbours do not
depend on the rows searched with it, on their blocks, or on the threads (one row per
task). Distances are squared Euclidean in single precision, summed as
:func:`._rptrees._sqdist` (the same compiled kernel in memory and on every worker).
"""

from __future__ import annotations

import math

import attrs
import numba
import numpy as np

from graphclust.numerics import normalize_rows

from ._neighbors import metric_distances, project, remember
from ._nndescent import nn_descent, reverse_lists
from ._projections import scores
from ._rptrees import _sqdist

__all__ = ["POOL_FACTOR", "ROWS_PER_TASK", "DescentIndex", "descent_index", "graph_search",
           "measure_features", "pivots", "place_search", "search_graph"]

#: Rows walked by one task, sharing one visited-stamp array of ``S`` integers (a constant,
#: so the work split does not depend on the thread count; rows never share results).
ROWS_PER_TASK = 256


def pivots(m: int, seed: int) -> np.ndarray:
    """The walk's fixed starting rows: ``ceil(sqrt(m))`` sample rows drawn without
    replacement by a generator keyed by ``seed`` (sorted). ``sqrt(m)`` pivots cost as many
    distances as the expansions of a walk of ``sqrt(m)/k`` steps and put every row near
    one of them (about ``sqrt(m)`` rows of the sample per pivot)."""
    count = int(min(m, math.ceil(math.sqrt(m))))
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFFFFFFFFFF, 0x7069766F74])
    return np.sort(rng.choice(m, size=count, replace=False)).astype(np.int64)


@numba.njit(cache=True)
def search_graph(idx, dist, cap):
    """The walk's graph: every row's own list (``idx``, nearest first; ``-1`` skipped)
    followed by at most ``cap`` of the rows that list it, the nearest first (ties: the
    lower row). CSR ``(indptr, indices)``, int64 / int32."""
    n, k = idx.shape
    rev_n, rev, rev_slot = reverse_lists(idx)
    rev_d = np.empty(rev_n[n], dtype=np.float64)
    for t in range(rev_n[n]):
        rev_d[t] = dist[rev[t], rev_slot[t]]
    indptr = np.zeros(n + 1, dtype=np.int64)
    for r in range(n):
        own = 0
        for j in range(k):
            if idx[r, j] >= 0:
                own += 1
        indptr[r + 1] = indptr[r] + own + min(cap, rev_n[r + 1] - rev_n[r])
    indices = np.empty(indptr[n], dtype=np.int32)
    for r in range(n):
        u = indptr[r]
        for j in range(k):
            if idx[r, j] >= 0:
                indices[u] = idx[r, j]
                u += 1
        lo = rev_n[r]
        hi = rev_n[r + 1]
        # rows listed in i order: a stable sort by distance keeps the lower row first
        order = np.argsort(rev_d[lo:hi], kind="mergesort")
        for t in range(min(cap, hi - lo)):
            indices[u] = rev[lo + order[t]]
            u += 1
    return indptr, indices


@numba.njit(inline="always", cache=True)
def _insert(pd, pi, pe, size, d, c):
    """Insert ``(d, c)`` into the sorted pool (by distance, then row) of ``size`` filled
    slots out of ``pd.shape[0]``; the last falls off a full pool. Returns the new size and
    the slot taken (``-1``: not kept)."""
    cap = pd.shape[0]
    if size == cap and (d > pd[cap - 1] or (d == pd[cap - 1] and c > pi[cap - 1])):
        return size, -1
    pos = size if size < cap else cap - 1
    while pos > 0 and (pd[pos - 1] > d or (pd[pos - 1] == d and pi[pos - 1] > c)):
        if pos < cap:
            pd[pos] = pd[pos - 1]
            pi[pos] = pi[pos - 1]
            pe[pos] = pe[pos - 1]
        pos -= 1
    pd[pos] = d
    pi[pos] = c
    pe[pos] = 0
    return min(size + 1, cap), pos


@numba.njit(parallel=True, cache=True)
def graph_search(Q, V, indptr, indices, starts, pool):
    """The ``pool`` nearest sample rows (of ``V``) each row of ``Q`` finds by its walk,
    nearest first, with their squared distances (``-1`` / ``inf`` where fewer were met).

    Parameters
    ----------
    Q : ndarray (n, p) float32 — the rows to place, in the searched space.
    V : ndarray (m, p) float32 — the sample in the same space.
    indptr, indices : the graph of :func:`search_graph`.
    starts : ndarray of int64 — the pivots (:func:`pivots`).
    pool : int — rows kept while walking (and returned).
    """
    n = Q.shape[0]
    m = V.shape[0]
    out_i = np.full((n, pool), -1, dtype=np.int64)
    out_d = np.full((n, pool), np.inf, dtype=np.float32)
    tasks = (n + ROWS_PER_TASK - 1) // ROWS_PER_TASK
    for t in numba.prange(tasks):
        seen = np.zeros(m, dtype=np.int64)
        pd = np.empty(pool, dtype=np.float32)
        pi = np.empty(pool, dtype=np.int64)
        pe = np.empty(pool, dtype=np.uint8)
        for r in range(t * ROWS_PER_TASK, min(n, (t + 1) * ROWS_PER_TASK)):
            stamp = r + 1  # rows are distinct: no reset of ``seen`` between rows
            q = Q[r]
            size = 0
            for s in range(starts.shape[0]):
                c = starts[s]
                seen[c] = stamp
                size, _ = _insert(pd, pi, pe, size, _sqdist(q, V[c]), c)
            first = 0  # every slot before ``first`` is expanded
            while first < size:
                if pe[first]:
                    first += 1
                    continue
                pe[first] = 1
                u = pi[first]
                low = first + 1  # the nearest slot a new row took this expansion
                for e in range(indptr[u], indptr[u + 1]):
                    c = indices[e]
                    if seen[c] == stamp:
                        continue
                    seen[c] = stamp
                    size, pos = _insert(pd, pi, pe, size, _sqdist(q, V[c]), c)
                    if pos >= 0 and pos < low:
                        low = pos
                first = min(first + 1, low)
            for j in range(size):
                out_i[r, j] = pi[j]
                out_d[r, j] = pd[j]
    return out_i, out_d


@numba.njit(fastmath={"reassoc", "nsz"}, cache=True)
def _sqdist64(x, y):
    """``‖x − y‖²`` of two float32 rows summed in float64 (reassociated, never fused)."""
    s = 0.0
    for j in range(x.shape[0]):
        t = np.float64(x[j]) - np.float64(y[j])
        s += t * t
    return s


@numba.njit(parallel=True, cache=True)
def measure_features(X, U, cand):
    """``‖X[i] − U[cand[i, a]]‖²`` in float64 (``inf`` where ``cand < 0``): candidates
    found on components, measured on the features, one row per task."""
    n, c = cand.shape
    out = np.empty((n, c), dtype=np.float64)
    for i in numba.prange(n):
        for a in range(c):
            j = cand[i, a]
            out[i, a] = _sqdist64(X[i], U[j]) if j >= 0 else np.inf
    return out


@attrs.frozen(eq=False)
class DescentIndex:
    """graphclust's neighbour graph of a sample, searched by :func:`graph_search`.

    Attributes
    ----------
    projection : Projection or None
        The sample's principal-component projection the graph was built and is walked in
        (None: the features).
    rows : ndarray of shape (S, p), float32
        The sample in the searched space (unit rows for cosine).
    idx, sqdist : ndarray of shape (S, K)
        Each sample row's ``K`` nearest other rows by NN-descent and their squared
        distances in the searched space (nearest first).
    indptr, indices : ndarray
        The walk's graph (:func:`search_graph`: the lists and up to ``K`` reverse edges).
    starts : ndarray of int64
        The pivots (:func:`pivots`).
    n_neighbors : int
        ``K + 1``: the list size counting each row itself (as pynndescent's index).
    metric : str
    """

    projection: object
    rows: np.ndarray
    idx: np.ndarray
    sqdist: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    starts: np.ndarray
    n_neighbors: int
    metric: str

    def neighbors(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` (at most ``K``) nearest other sample rows of every sample row and
        their metric distances in the searched space."""
        k = min(int(k), self.n_neighbors - 1)
        return self.idx[:, :k].copy(), metric_distances(self.sqdist[:, :k], self.metric)

    def search_rows(self, X: np.ndarray) -> np.ndarray:
        """Rows in the searched space: projected, float32, unit length for cosine."""
        V = X if self.projection is None else scores(self.projection, X)
        if self.metric == "cosine":
            V = normalize_rows(V)
        return np.ascontiguousarray(V, dtype=np.float32)

    def query(self, X: np.ndarray, pool: int) -> tuple[np.ndarray, np.ndarray]:
        """Each row's ``pool`` nearest sample rows found by its walk (``X`` in the
        features; projected here) and their squared distances in the searched space."""
        return graph_search(self.search_rows(X), self.rows, self.indptr, self.indices,
                            self.starts, int(pool))


def descent_index(U: np.ndarray, n_neighbors: int, metric: str, pca_components: int | None,
                  seed: int) -> DescentIndex:
    """The index of the sample rows ``U``: their principal-component projection
    (:func:`._neighbors.project`), NN-descent of ``n_neighbors − 1`` other rows seeded by
    ``seed`` (:func:`._nndescent.nn_descent`), the walk's graph and its pivots; remembered
    for :func:`._neighbors.shared_index` while ``U`` lives (the sample's own graph reads
    its lists from it)."""
    V, proj = project(U, pca_components)
    rows = np.ascontiguousarray(normalize_rows(V) if metric == "cosine" else V,
                                dtype=np.float32)
    k = int(min(n_neighbors - 1, rows.shape[0] - 1))
    idx, sq = nn_descent(rows, k, seed)
    indptr, indices = search_graph(idx, sq.astype(np.float64), k)
    out = DescentIndex(projection=proj, rows=rows, idx=idx, sqdist=sq, indptr=indptr,
                       indices=indices, starts=pivots(rows.shape[0], seed),
                       n_neighbors=k + 1, metric=metric)
    remember(U, n_neighbors, metric, pca_components, out)
    return out


#: The walk keeps ``POOL_FACTOR · k`` sample rows for a row placed by ``k``; all of them
#: are measured on the features and the ``k`` nearest kept. On MNIST-70k (a 60 000-row
#: sample, 3 000 rows placed, 64 components, ``k`` = 15) the pool of 30 finds .956 of
#: the exact 15 nearest on the pixels, pynndescent's query of the pixels .959; the walk's
#: own 15 nearest on the components alone .79 (docs/auto.rst, rule 7).
POOL_FACTOR = 2


def place_search(X: np.ndarray, U: np.ndarray, index: DescentIndex, k: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest sample rows (of ``U``, the features) of every row of ``X``: a pool
    of ``POOL_FACTOR · k`` found by the walk in the index's space, measured on the
    features (float64; unit rows for cosine) and the ``k`` nearest kept (ties: the walk's
    order). Returns indices and metric distances (``-1`` / ``inf`` where none)."""
    cand, _ = index.query(X, max(POOL_FACTOR * int(k), int(k)))
    if index.metric == "cosine":
        X, U = normalize_rows(X), normalize_rows(U)
    sq = measure_features(np.ascontiguousarray(X, dtype=np.float32),
                          np.ascontiguousarray(U, dtype=np.float32), cand)
    order = np.argsort(sq, axis=1, kind="stable")[:, :k]
    idx = np.take_along_axis(cand, order, axis=1)
    return idx, metric_distances(np.take_along_axis(sq, order, axis=1), index.metric)
