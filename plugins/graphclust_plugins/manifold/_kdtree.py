"""A k-d tree for the density tree's exact searches: build once, query in parallel.

Bentley (1975), *Multidimensional binary search trees used for associative searching*,
CACM 18(9): every node holds a range of a permutation of the rows and their bounding
box; a node is split at the median of its widest coordinate, so the tree is balanced and
stored as a heap (node ``i`` has children ``2i + 1`` and ``2i + 2``), down to leaves of
at most ``leaf_size`` rows. Queries descend the nearer child first and skip a node whose
box lies farther than the current bound.

Every query is one thread's work on read-only arrays, so the answers do not depend on
the thread count. Distances are squared Euclidean in float64.
"""

from __future__ import annotations

import numba
import numpy as np

from ._heap import above, sift_down
from ._jit import PARALLEL

__all__ = ["KDTree", "box_sqdist", "build", "core_sqdist"]

#: Rows per leaf at most (small: the density tree's searches prune by component).
LEAF_SIZE = 16


class KDTree:
    """The arrays of a built tree (:func:`build`).

    Attributes
    ----------
    X : ndarray of float64, shape (n, d)
        The rows (C-contiguous).
    perm : ndarray of int64, shape (n,)
        Row indices in tree order; node ``i`` holds ``perm[start[i]:stop[i]]``.
    start, stop : ndarray of int64, shape (n_nodes,)
    lo, hi : ndarray of float64, shape (n_nodes, d)
        Bounding box of each node's rows.
    first_leaf : int
        Index of the first leaf (leaves are ``first_leaf .. n_nodes - 1``).
    """

    def __init__(self, X, perm, start, stop, lo, hi, first_leaf):
        self.X, self.perm, self.start, self.stop = X, perm, start, stop
        self.lo, self.hi, self.first_leaf = lo, hi, first_leaf

    @property
    def n_nodes(self) -> int:
        return int(self.start.size)


def _boxes(Xp, start, stop, lo, hi):
    """``lo[i]``, ``hi[i]``: the bounds of rows ``Xp[start[i]:stop[i]]`` (the rows in tree
    order), ``inf`` / ``-inf`` for a node without rows."""
    full = stop > start
    lo[~full] = np.inf
    hi[~full] = -np.inf
    if Xp.shape[1] and full.any():  # the nodes with rows tile [0, n) in order
        lo[full] = np.minimum.reduceat(Xp, start[full], axis=0)
        hi[full] = np.maximum.reduceat(Xp, start[full], axis=0)


def build(X: np.ndarray, leaf_size: int = LEAF_SIZE) -> KDTree:
    """Build the tree of the rows of ``X`` (float64, shape ``(n, d)``, ``n >= 1``).

    Level by level in NumPy: a level's nodes tile the rows, so their boxes are segment
    reductions and their splits one stable sort of (node, coordinate) pairs, each node's
    rows ordered by its widest coordinate, ties kept in tree order (a compiled build
    cost a first run 2 s of compilation, with numba's mergesort).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n, d = X.shape
    levels = 0
    while n > leaf_size * (1 << levels):
        levels += 1
    n_nodes = (1 << (levels + 1)) - 1
    first_leaf = (1 << levels) - 1
    perm = np.arange(n, dtype=np.int64)
    start = np.zeros(n_nodes, dtype=np.int64)
    stop = np.zeros(n_nodes, dtype=np.int64)
    stop[0] = n
    lo = np.empty((n_nodes, max(d, 1)))
    hi = np.empty((n_nodes, max(d, 1)))
    for level in range(levels + 1):
        nodes = np.arange((1 << level) - 1, (1 << (level + 1)) - 1)
        s, e = start[nodes], stop[nodes]
        box_lo, box_hi = lo[nodes, :d], hi[nodes, :d]
        _boxes(X[perm], s, e, box_lo, box_hi)
        lo[nodes, :d], hi[nodes, :d] = box_lo, box_hi
        if level == levels:
            break
        extent = box_hi - box_lo
        wide = np.zeros(nodes.size, dtype=np.int64)  # the first widest coordinate
        for k in range(1, d):
            wider = extent[:, k] > extent[np.arange(nodes.size), wide]
            wide[wider] = k
        owner = np.repeat(np.arange(nodes.size), e - s)  # the level's nodes tile [0, n)
        if d:
            perm = perm[np.lexsort((X[perm, wide[owner]], owner))]  # stable
        mid = (s + e) // 2
        start[2 * nodes + 1], stop[2 * nodes + 1] = s, mid
        start[2 * nodes + 2], stop[2 * nodes + 2] = mid, e
    return KDTree(X, perm, start, stop, lo[:, :d], hi[:, :d], first_leaf)


@numba.njit(forceinline=True, cache=True)
def box_sqdist(x, lo, hi, node):
    """Squared distance from ``x`` to the box of ``node`` (0 inside)."""
    s = 0.0
    for k in range(x.size):
        v = x[k]
        if v < lo[node, k]:
            t = lo[node, k] - v
            s += t * t
        elif v > hi[node, k]:
            t = v - hi[node, k]
            s += t * t
    return s


@numba.njit(cache=True)
def _knn_one(p, X, perm, start, stop, lo, hi, first_leaf, dist, idx, stack):
    """The ``k = dist.size`` nearest rows of row ``p`` (itself included), nearest first,
    ties by the smaller index: the ``k`` smallest ``(distance, index)`` pairs, kept in a
    max-heap while the tree is searched (:mod:`._heap`, ``O(log k)`` per candidate),
    sorted at the end."""
    k = dist.size
    for t in range(k):
        dist[t] = np.inf
        idx[t] = -1  # an empty slot: any row replaces it
    flag = np.zeros(k, dtype=np.uint8)  # unused (NN-descent's heaps carry one, uint8)
    x = X[p]
    top = 0
    stack[0] = 0
    while top >= 0:
        node = stack[top]
        top -= 1
        if box_sqdist(x, lo, hi, node) > dist[0]:
            continue
        if node >= first_leaf:
            for t in range(start[node], stop[node]):
                q = perm[t]
                s = 0.0
                for c in range(x.size):
                    u = x[c] - X[q, c]
                    s += u * u
                if above(dist[0], idx[0], s, q):  # nearer than the farthest kept
                    dist[0], idx[0] = s, q
                    sift_down(dist, idx, flag, k)
            continue
        a, b = 2 * node + 1, 2 * node + 2
        if box_sqdist(x, lo, hi, a) <= box_sqdist(x, lo, hi, b):
            a, b = b, a  # push the farther first: the nearer is popped first
        stack[top + 1] = a
        stack[top + 2] = b
        top += 2
    for size in range(k - 1, 0, -1):  # heap sort: the largest to the end
        dist[0], dist[size] = dist[size], dist[0]
        idx[0], idx[size] = idx[size], idx[0]
        sift_down(dist, idx, flag, size)


@numba.njit(parallel=PARALLEL, cache=True)
def _knn_all(X, perm, start, stop, lo, hi, first_leaf, k, dist, idx, kth, depth):
    n = X.shape[0]
    keep = dist.shape[1]
    for t in numba.prange(0, n):
        p = perm[t]  # tree order: consecutive queries touch the same nodes
        stack = np.empty(2 * depth + 2, dtype=np.int64)
        d = np.empty(k, dtype=np.float64)  # as every float64 scratch: one compilation
        i = np.empty(k, dtype=np.int64)
        _knn_one(p, X, perm, start, stop, lo, hi, first_leaf, d, i, stack)
        for c in range(keep):  # elementwise, as in _build
            dist[p, c] = d[c]
            idx[p, c] = i[c]
        kth[p] = d[k - 1]


def core_sqdist(tree: KDTree, k: int, keep: int = 16
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every row's ``k`` nearest rows (itself counted; ``k`` clipped to ``[1, n]``).

    Returns the squared distances and indices of the first ``min(keep, k)`` of them,
    nearest first, shape ``(n, min(keep, k))``, and the ``k``-th squared distance,
    shape ``(n,)``. Memory ``O(n · keep)`` beyond the tree, whatever ``k``.
    """
    n = tree.X.shape[0]
    k = int(min(max(k, 1), n))
    keep = int(min(max(keep, 1), k))
    dist = np.empty((n, keep))
    idx = np.empty((n, keep), dtype=np.int64)
    kth = np.empty(n)
    depth = int(np.log2(tree.n_nodes + 1)) + 1
    _knn_all(tree.X, tree.perm, tree.start, tree.stop, tree.lo, tree.hi, tree.first_leaf,
             k, dist, idx, kth, depth)
    return dist, idx, kth
