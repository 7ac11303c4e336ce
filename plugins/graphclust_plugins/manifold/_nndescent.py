"""Nearest-neighbour descent on all threads, with the same result for any thread count.

Dong, Charikar & Li (2011), "Efficient k-nearest neighbor graph construction for generic
similarity measures", WWW, Algorithm 2 (NN-descent with sampling and new/old flags), with
the random-projection-forest start of pynndescent (McInnes): every row's list starts from
the rows sharing a leaf of a few random-projection trees, and each round compares, for
every row, its sampled new neighbours with each other and with its old ones (a *local
join*), offering every pair closer than one end's current farthest neighbour to both
ends.

pynndescent runs the same algorithm, but on several threads each draws its candidate
samples from its own random stream over its own share of the rows, so its graph depends
on the thread count; graphclust ran it on one thread. Here every decision is keyed by the
data and the seed alone, never by a thread:

* a candidate's sampling priority is a counter-based hash of ``(seed, round, pair)``;
* the trees are built one per task, each from its own hash-keyed stream, on a seeded
  Gaussian sketch of the rows when they have more than ``SKETCH_DIMS`` features
  (a split then reads 64 numbers per row, not ``d``);
* the offers of a block of rows (a constant size) are collected in row order and then
  applied row by row, every row taking its offers in that order.

A row's list is then a function of the offers it received in a fixed order, so the graph
is bit for bit the same on one thread or many (``tests/manifold/test_nndescent.py``).
Distances are squared Euclidean in single precision; their sums may be reassociated
into vector lanes, but no product is fused into an add (the layout's kernel showed fused
multiply-adds formed differently by a fresh and a cached compilation; the slow tier
checks that fresh and cached kernels give the same lists). Cosine distance is searched
as the Euclidean distance of unit rows.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ._heap import above, sift_down
from ._jit import PARALLEL
from ._rptrees import SKETCH_DIMS, _key, _sqdist, forest, leaf_offers, tree_rows

__all__ = ["BLOCK_ROWS", "DELTA", "N_TREES", "OFFER_BUFFER_BYTES", "SKETCH_DIMS", "nn_descent",
           "reverse_lists"]

#: Rows whose local joins are collected before their offers are applied (a constant: the
#: result must not depend on the thread count; it bounds the offers held at once) ...
BLOCK_ROWS = 8192
#: ... but fewer when a block's offer buffers (12 bytes for each of the ``m(m−1)/2 + m²``
#: pairs a row can offer, ``m`` the candidates per row) would pass this many bytes: with
#: 15 neighbours the buffers take 37 MB, with 60 candidates they stay at 64 MiB, not 528 MB.
OFFER_BUFFER_BYTES = 64 * 2**20
#: Random-projection trees of the start. pynndescent's rule (``5 + round(n^(1/4))``, 21 at
#: 70 000 rows) builds more; on MNIST-70k (15-NN, 2 000 rows checked against brute force)
#: 8 trees reach a recall of .988 against .989 with 21, in 3.4 s against 4.6 s on two
#: threads, trees on the full rows (benchmarks/HISTORY.md, "A thread-count-free
#: NN-descent"); on the sketch 8, 12 and 16 trees all take about 2.9 s.
N_TREES = 8
#: A round whose offers changed at most ``DELTA · k · n`` list entries ends the descent
#: (pynndescent's ``delta``).
DELTA = 0.001

# Arguments the kernels pass as typed values, not literals (numba compiles a helper once
# for each literal it is called with).
_NEW = np.uint8(1)
_OLD = np.uint8(0)
_FILL_KEY = np.int64(0x66696C6C00000000)


@numba.njit(forceinline=True, cache=True)
def _push(pri, ind, flag, p, c, f):
    """Offer ``c`` at priority ``p`` to a bounded max-heap holding the smallest
    priorities: refused (0) when it does not rank below the top (:func:`._heap.above`; an
    empty slot, index −1, takes any offer, even at an infinite priority — a distance that
    overflowed — so every list fills), or when ``c`` is already held; otherwise it
    replaces the top (1). NaN counts as infinite."""
    size = pri.shape[0]
    if p != p:
        p = np.float32(np.inf)  # float32: one specialisation of above() with sift_down's
    if not above(pri[0], ind[0], p, c):
        return 0
    for t in range(size):
        if ind[t] == c:
            return 0
    pri[0] = p
    ind[0] = c
    flag[0] = f
    sift_down(pri, ind, flag, size)
    return 1


@numba.njit(parallel=PARALLEL, cache=True)
def _apply(P, Q, D, count, dist, idx, flag):
    """Offer every pair ``(P[u], Q[u])`` at distance ``D[u]`` to both ends' lists, ``u``
    over the first ``count[b]`` slots of each of the ``len(count)`` equal parts of
    ``P/Q/D`` (a block's rows, :func:`_join`; or one part, all offers); each row takes its
    offers in the order of ``u`` (one row per task). Returns the number of list entries
    that changed."""
    n = idx.shape[0]
    w = P.shape[0] // max(1, count.shape[0])
    start = np.zeros(n + 1, dtype=np.int64)
    U = 0
    for b in range(count.shape[0]):
        for u in range(b * w, b * w + count[b]):
            start[P[u] + 1] += 1
            start[Q[u] + 1] += 1
        U += count[b]
    for r in range(n):
        start[r + 1] += start[r]
    fill = start[:n].copy()
    other = np.empty(2 * U, dtype=np.int32)
    dd = np.empty(2 * U, dtype=np.float32)
    for b in range(count.shape[0]):
        for u in range(b * w, b * w + count[b]):
            p = P[u]
            q = Q[u]
            other[fill[p]] = q
            dd[fill[p]] = D[u]
            fill[p] += 1
            other[fill[q]] = p
            dd[fill[q]] = D[u]
            fill[q] += 1
    changed = np.zeros(n, dtype=np.int64)
    for r in numba.prange(0, n):
        c = 0
        for e in range(start[r], start[r + 1]):
            c += _push(dist[r], idx[r], flag[r], dd[e], other[e], _NEW)
        changed[r] = c
    total = 0
    for r in range(n):
        total += changed[r]
    return total


@numba.njit(cache=True)
def _fill_random(dist, idx, flag, X, seed):
    """Rows whose list is not full take random rows (hash-keyed) until it is, and, should
    ``8k`` draws not fill it, the rows that follow them (so every list is full: ``k < n``).
    One thread: after the trees' offers few rows, if any, are not full."""
    n, k = idx.shape
    for r in range(n):
        tries = 0
        while idx[r, 0] < 0 and tries < 8 * k:
            c = np.int64(_key(seed, _FILL_KEY, r, tries) % np.uint64(n))
            tries += 1
            if c != r:
                _push(dist[r], idx[r], flag[r], _sqdist(X[r], X[c]), np.int32(c), _NEW)
        step = np.int64(0)
        while idx[r, 0] < 0:
            step += 1
            nxt = (np.int64(r) + step) % np.int64(n)
            _push(dist[r], idx[r], flag[r], _sqdist(X[r], X[nxt]), np.int32(nxt), _NEW)


@numba.njit(cache=True)
def reverse_lists(idx):
    """The rows whose lists hold each row (``-1`` entries skipped), grouped by the row
    they hold, in increasing order of the holding row: ``(start, rows, slots)``, CSR
    offsets (``n + 1``, int64), the holding rows (int32) and the list slot ``j`` of each
    (int64), so a caller reads any per-entry value as ``value[rows[t], slots[t]]``."""
    n, k = idx.shape
    start = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        for j in range(k):
            if idx[i, j] >= 0:
                start[idx[i, j] + 1] += 1
    for r in range(n):
        start[r + 1] += start[r]
    fill = start[:n].copy()
    rows = np.empty(start[n], dtype=np.int32)
    slots = np.empty(start[n], dtype=np.int64)
    for i in range(n):
        for j in range(k):
            c = idx[i, j]
            if c >= 0:
                rows[fill[c]] = i
                slots[fill[c]] = j
                fill[c] += 1
    return start, rows, slots


@numba.njit(parallel=PARALLEL, cache=True)
def _candidates(idx, flag, max_candidates, seed, rnd):
    """Each row's sampled new and old candidates: its list's entries and the rows whose
    lists hold it, at most ``max_candidates`` of each kind, kept by a hash priority of
    ``(seed, round, pair)``; then a row's entries sampled as new are marked old."""
    n, k = idx.shape
    start, rev_row, rev_slot = reverse_lists(idx)
    rev_new = np.empty(start[n], dtype=np.uint8)  # the flags as they were, read below
    for t in range(start[n]):
        rev_new[t] = flag[rev_row[t], rev_slot[t]]
    new_c = np.full((n, max_candidates), -1, dtype=np.int32)
    old_c = np.full((n, max_candidates), -1, dtype=np.int32)
    for r in numba.prange(0, n):
        new_p = np.full(max_candidates, np.inf, dtype=np.float32)
        old_p = np.full(max_candidates, np.inf, dtype=np.float32)
        new_f = np.zeros(max_candidates, dtype=np.uint8)
        old_f = np.zeros(max_candidates, dtype=np.uint8)
        for e in range(k + start[r + 1] - start[r]):
            if e < k:
                c = idx[r, e]
                is_new = flag[r, e]
            else:
                c = rev_row[start[r] + e - k]
                is_new = rev_new[start[r] + e - k]
            if c < 0:
                continue
            lo = min(r, c)
            hi = max(r, c)
            p = np.float32(_key(seed, rnd, lo, hi) >> np.uint64(40))
            if is_new:
                _push(new_p, new_c[r], new_f, p, c, _OLD)
            else:
                _push(old_p, old_c[r], old_f, p, c, _OLD)
        # the row's own flags, read above and by no other row (they read rev_new)
        for j in range(k):
            if flag[r, j]:
                for t in range(max_candidates):
                    if new_c[r, t] == idx[r, j]:
                        flag[r, j] = 0
                        break
    return new_c, old_c


@numba.njit(parallel=PARALLEL, cache=True)
def _join(X, new_c, old_c, thresh, lo, hi, P, Q, D, count):
    """The local joins of rows ``lo:hi``: pairs of a row's new candidates, and of a new
    with an old one, closer than either end's current farthest neighbour; row ``r``'s
    offers fill ``P/Q/D[(r − lo) · w : …]`` (``w`` the most a row can make), their number
    in ``count[r − lo]``."""
    m = new_c.shape[1]
    w = P.shape[0] // max(1, count.shape[0])
    for r in numba.prange(lo, hi):
        base = (r - lo) * w
        c = 0
        for a in range(m):
            p = new_c[r, a]
            if p < 0:
                continue
            for b in range(a + 1, m + m):
                q = new_c[r, b] if b < m else old_c[r, b - m]
                if q < 0 or q == p:
                    continue
                dpq = _sqdist(X[p], X[q])
                if dpq <= thresh[p] or dpq <= thresh[q]:
                    P[base + c] = p
                    Q[base + c] = q
                    D[base + c] = dpq
                    c += 1
        count[r - lo] = c


@numba.njit(forceinline=True, cache=True)
def _before(d1, i1, d2, i2):
    """Whether list entry ``(d1, i1)`` sorts before ``(d2, i2)``: by distance, then by
    index; NaN after every number (as :func:`numpy.argsort` puts it)."""
    nan1 = math.isnan(d1)
    nan2 = math.isnan(d2)
    if nan1 or nan2:
        return nan2 and (not nan1 or i1 < i2)
    if d1 != d2:
        return d1 < d2
    return i1 < i2


@numba.njit(cache=True)
def _sorted_lists(dist, idx):
    """Each row's list from nearest to farthest (ties: smaller index first), by a stable
    insertion sort of the row (``k`` is small): the order two stable ``argsort`` calls
    (by index, then by distance) gave, without compiling numba's mergesort for it. One
    thread: 35 ms for 70 000 lists of 15 (the two argsorts of each row took 90 ms on two
    threads), and a parallel loop less to compile on a first run."""
    n, k = idx.shape
    out_i = np.empty((n, k), dtype=np.int64)
    out_d = np.empty((n, k), dtype=np.float32)
    for r in range(n):
        for j in range(k):
            d = dist[r, j]
            i = np.int64(idx[r, j])
            t = j
            while t > 0 and _before(d, i, out_d[r, t - 1], out_i[r, t - 1]):
                out_d[r, t] = out_d[r, t - 1]
                out_i[r, t] = out_i[r, t - 1]
                t -= 1
            out_d[r, t] = d
            out_i[r, t] = i
    return out_i, out_d


def nn_descent(X: np.ndarray, k: int, seed: int, *, n_trees: int | None = None,
               n_iters: int | None = None, max_candidates: int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Approximate ``k`` nearest other rows of every row of ``X`` (squared Euclidean).

    Parameters
    ----------
    X : ndarray of shape (n, d), float32, C-contiguous
    k : int
        Neighbours per row, ``1 <= k < n``.
    seed : int
        The descent is a function of ``X``, ``k``, the settings and ``seed``, whatever the
        number of threads.
    n_trees, n_iters, max_candidates : int, optional
        Random-projection trees of the start (default :data:`N_TREES`), rounds at
        most (default ``max(5, round(log2 n))``, stopping early once a round changes at
        most ``DELTA · k · n`` entries) and candidates of each kind sampled per row
        (default ``min(60, k)``): pynndescent's defaults but for the trees.

    Returns
    -------
    idx : ndarray of shape (n, k), int64
        Each row's neighbours, nearest first; the row itself never appears.
    sqdist : ndarray of shape (n, k), float32
        Their squared distances.
    """
    X = np.ascontiguousarray(X, dtype=np.float32)
    n = X.shape[0]
    if not 1 <= k < n:
        raise ValueError(f"k must be in [1, n) = [1, {n}), got {k}")
    seed64 = np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF)
    trees = N_TREES if n_trees is None else int(n_trees)
    rounds = max(5, int(round(math.log2(n)))) if n_iters is None else int(n_iters)
    m = min(60, k) if max_candidates is None else int(max_candidates)
    dist = np.full((n, k), np.inf, dtype=np.float32)
    idx = np.full((n, k), -1, dtype=np.int32)
    flag = np.zeros((n, k), dtype=np.uint8)
    perms, bounds, n_leaves = forest(tree_rows(X, seed), seed64, trees, max(10, k))
    for t in range(trees):
        P, Q, D = leaf_offers(X, perms[t], bounds[t], n_leaves[t])
        _apply(P, Q, D, np.array([P.shape[0]]), dist, idx, flag)
    del perms, bounds
    _fill_random(dist, idx, flag, X, seed64)
    width = m * (m - 1) // 2 + m * m
    block = int(min(BLOCK_ROWS, max(256, OFFER_BUFFER_BYTES // (12 * width))))
    P = np.empty(block * width, dtype=np.int32)
    Q = np.empty_like(P)
    D = np.empty(P.shape[0], dtype=np.float32)
    for rnd in range(rounds):
        new_c, old_c = _candidates(idx, flag, m, seed64, rnd)
        changed = 0
        for lo in range(0, n, block):
            hi = min(n, lo + block)
            count = np.zeros(hi - lo, dtype=np.int64)
            used = (hi - lo) * width
            _join(X, new_c, old_c, dist[:, 0].copy(), lo, hi, P[:used], Q[:used], D[:used],
                  count)
            changed += _apply(P[:used], Q[:used], D[:used], count, dist, idx, flag)
        if changed <= DELTA * k * n:
            break
    return _sorted_lists(dist, idx)
