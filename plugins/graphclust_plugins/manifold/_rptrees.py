"""The random-projection forest that starts graphclust's NN-descent, and the row kernels
and keyed draws the descent shares with it.

Each tree is a random projection tree (Dasgupta & Freund 2008) in the form pynndescent
starts NN-descent from: a node's rows are split by the hyperplane halfway between two of
them drawn at random, down to leaves of at most ``leaf_size`` rows; rows sharing a leaf
are offered to each other's neighbour lists (:func:`leaf_offers`). Rows with more than
:data:`SKETCH_DIMS` features are split in a seeded Gaussian sketch (:func:`tree_rows`).
A tree's draws come from a stream keyed by the seed and the tree's number, so the forest
does not depend on how many threads build it.
"""

from __future__ import annotations

import numba
import numpy as np

from ._jit import PARALLEL
from ._layout import _mix

__all__ = ["SKETCH_DIMS", "forest", "leaf_offers", "tree_rows"]

#: The trees split a ``SKETCH_DIMS``-column Gaussian sketch of rows with more features
#: (:func:`tree_rows`); the lists are always measured on the rows themselves. On MNIST-70k
#: (784 pixels) the forest then costs 0.1 s instead of 0.9 s on two threads, and the
#: search 2.9 s instead of 3.5 s at a recall of .987 against .988 (32 columns: .986, and
#: more rounds).
SKETCH_DIMS = 64
#: A tree's stream key (a typed value: numba would compile :func:`_key` for a literal).
_TREE_KEY = np.int64(0x7472656500000000)


@numba.njit(fastmath={"reassoc", "nsz"}, cache=True)
def _sqdist(x, y):
    """``‖x − y‖²`` of two float32 rows, in float32; the sum may be reassociated (so the
    compiler can add in vector lanes) but no product is fused into an add."""
    s = np.float32(0.0)
    for j in range(x.shape[0]):
        t = x[j] - y[j]
        s += t * t
    return s


@numba.njit(fastmath={"reassoc", "nsz"}, cache=True)
def _dot(x, y):
    """``x · y`` of two float32 rows, summed as :func:`_sqdist`."""
    s = np.float32(0.0)
    for j in range(x.shape[0]):
        s += x[j] * y[j]
    return s


@numba.njit(forceinline=True, cache=True)
def _key(seed, a, b, c):
    """A uint64 hash of ``(seed, a, b, c)``."""
    return _mix(_mix(_mix(seed ^ np.uint64(a)) ^ np.uint64(b)) ^ np.uint64(c))


@numba.njit(cache=True)
def _tree(X, seed, tree, leaf_size, perm, bounds):
    """One random-projection tree: ``perm`` ends as the rows in leaf order, ``bounds``
    holds each leaf's start followed by ``n``; returns the number of leaves. A node is
    split by the hyperplane halfway between two of its rows drawn at random (a point on
    it goes to a side by a coin); a node that does not split is cut in halves."""
    n, d = X.shape
    for i in range(n):
        perm[i] = i
    normal = np.empty(d, dtype=np.float32)
    # a split pushes both halves and the left is taken next, so the stack holds at most
    # one pending node per level of the current path: fewer than n + 2
    stack_lo = np.empty(n + 2, dtype=np.int64)
    stack_hi = np.empty_like(stack_lo)
    top = 0
    stack_lo[0] = 0
    stack_hi[0] = n
    top = 1
    leaves = 0
    state = _key(seed, _TREE_KEY, tree, np.int64(0))
    while top > 0:
        top -= 1
        lo = stack_lo[top]
        hi = stack_hi[top]
        size = hi - lo
        if size <= leaf_size:
            bounds[leaves] = lo
            leaves += 1
            continue
        state = _mix(state)
        a = perm[lo + np.int64(state % np.uint64(size))]
        state = _mix(state)
        b = perm[lo + np.int64(state % np.uint64(size - 1))]
        if b == a:
            b = perm[hi - 1]
        offset = np.float32(0.0)
        for j in range(d):
            normal[j] = X[a, j] - X[b, j]
            offset += normal[j] * (X[a, j] + X[b, j]) * np.float32(0.5)
        i = lo
        k = hi - 1
        while i <= k:
            r = perm[i]
            side = _dot(normal, X[r]) - offset
            left = side > 0
            if side == 0:
                state = _mix(state)
                left = (state >> np.uint64(63)) == np.uint64(1)
            if left:
                i += 1
            else:
                perm[i] = perm[k]
                perm[k] = r
                k -= 1
        mid = i
        if mid == lo or mid == hi:
            mid = lo + size // 2
        # the right child is pushed first so leaves come out left to right
        stack_lo[top] = mid
        stack_hi[top] = hi
        stack_lo[top + 1] = lo
        stack_hi[top + 1] = mid
        top += 2
    bounds[leaves] = n
    return leaves


@numba.njit(parallel=PARALLEL, cache=True)
def _sketch(X, R):
    """``X @ R`` in float32, each row's sum taken over the features in order (zeros
    skipped): a row's result does not depend on the threads."""
    n, d = X.shape
    s = R.shape[1]
    out = np.zeros((n, s), dtype=np.float32)
    for i in numba.prange(0, n):
        for j in range(d):
            x = X[i, j]
            if x != 0:
                for t in range(s):
                    out[i, t] += x * R[j, t]
    return out


def tree_rows(X: np.ndarray, seed: int, dims: int | None = None) -> np.ndarray:
    """The rows the trees split: ``X`` itself when it has at most ``dims`` (default
    :data:`SKETCH_DIMS`) features, else its product with a seeded ``d x dims`` Gaussian
    matrix (a Johnson–Lindenstrauss sketch: nearby rows stay nearby, so they still share
    leaves, and a split reads ``dims`` numbers per row instead of ``d``)."""
    dims = SKETCH_DIMS if dims is None else int(dims)
    if X.shape[1] <= dims:
        return X
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFFFFFFFFFF, 0x736B65746368])
    R = rng.standard_normal((X.shape[1], dims)).astype(np.float32)
    return _sketch(X, R)


@numba.njit(parallel=PARALLEL, cache=True)
def forest(X, seed, n_trees, leaf_size):
    n = X.shape[0]
    perms = np.empty((n_trees, n), dtype=np.int32)
    bounds = np.empty((n_trees, n + 1), dtype=np.int64)
    n_leaves = np.empty(n_trees, dtype=np.int64)
    for t in numba.prange(0, n_trees):
        n_leaves[t] = _tree(X, seed, t, leaf_size, perms[t], bounds[t])
    return perms, bounds, n_leaves


@numba.njit(parallel=PARALLEL, cache=True)
def leaf_offers(X, perm, bounds, n_leaves):
    """Every pair of rows sharing a leaf of one tree, with its distance, in leaf order."""
    starts = np.zeros(n_leaves + 1, dtype=np.int64)
    for leaf in range(n_leaves):
        s = bounds[leaf + 1] - bounds[leaf]
        starts[leaf + 1] = starts[leaf] + s * (s - 1) // 2
    total = starts[n_leaves]
    P = np.empty(total, dtype=np.int32)
    Q = np.empty(total, dtype=np.int32)
    D = np.empty(total, dtype=np.float32)
    for leaf in numba.prange(0, n_leaves):
        u = starts[leaf]
        for x in range(bounds[leaf], bounds[leaf + 1]):
            for y in range(x + 1, bounds[leaf + 1]):
                p = perm[x]
                q = perm[y]
                P[u] = p
                Q[u] = q
                D[u] = _sqdist(X[p], X[q])
                u += 1
    return P, Q, D
