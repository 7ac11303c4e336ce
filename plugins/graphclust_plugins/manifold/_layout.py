"""UMAP's layout descent in fixed blocks of rows: parallel, and the same for any thread count.

McInnes, Healy & Melville (2018), UMAP, arXiv:1802.03426, Sec. 3.2 and umap-learn's
``optimize_layout_euclidean``: every epoch samples each stored entry ``(i, j)`` of the
graph at a rate proportional to its weight; a sample pulls ``y_i`` and ``y_j`` together by
the gradient of ``log(1 + a‖y_i − y_j‖^{2b})^{-1}`` (both ends move, by opposite amounts)
and pushes ``y_i`` away from ``negative_sample_rate`` random vertices by the gradient of
the repulsive term (weighted by ``γ``); each coordinate of a move is clipped to
``[-4, 4]`` and scaled by the step ``α``, which decays linearly over the epochs.

umap-learn applies the moves one entry after another, and its multi-threaded variant
writes them without locks, so its result depends on the threads' interleaving. Here, in
each epoch, the rows are cut into blocks of ``block_size`` consecutive rows (a function
of ``n`` alone, :func:`block_rows`, never of the thread count). Within a block every row
is moved by one thread through its own sampled entries, reading the other rows as they stood when the block began; the block's
new rows are written back when it ends, and then the pulls its entries exert on their
other ends are applied one after another in the graph's entry order (one thread; a
block's pulls fit in cache). Each entry's negative samples come from a counter-based
generator keyed by ``(seed, epoch, entry)``. So the layout is a function of the graph,
the start and the seed alone: bit for bit the same on one thread or many
(``tests/manifold/test_manifold_layout_blocks.py`` checks it against a plain-Python
transcription of this schedule and across thread counts). The arithmetic is single
precision, as umap-learn's embedding, and compiled without fast-math: contracting
products into fused multiply-adds changed the bits between a freshly compiled kernel
and numba's cached one.

The blocks' snapshot, and the other ends moved after their block rather than at once,
are the only departures from umap-learn's schedule; on MNIST-70k they give the same
clustering accuracy (docs/auto.rst, rule 7). Moving only each entry's own row (each
stored direction of an edge pulling its row twice) was measured and rejected: ACC .960
against .969 there.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from ._jit import PARALLEL

__all__ = ["BLOCKS_PER_EPOCH", "BLOCK_SIZE", "CLIP", "block_rows", "epochs_per_sample",
           "optimize_layout"]

#: Fewest rows moved together from one snapshot of the others (a constant: the result
#: must not depend on the thread count).
BLOCK_SIZE = 2048
#: Most blocks an epoch is cut into: above ``BLOCK_SIZE · BLOCKS_PER_EPOCH`` rows a block
#: holds ``ceil(n / BLOCKS_PER_EPOCH)`` rows (:func:`block_rows`). Each block is one
#: parallel region whose threads all wait for the last, a hand-off a loaded machine
#: stretches by a time slice, so the hand-offs an epoch are bounded whatever ``n``, while
#: a block stays at most an eighth of the rows (the share moved from a stale snapshot).
#: MNIST-70k: 9 hand-offs an epoch instead of 35, the layout's processor time on a loaded
#: 2-core machine 14 -> 9 s, ACC .970 either way; blocks of 8 192 on USPS and MNIST-test
#: (two blocks an epoch) lost .004 and .006 ACC, hence the share (benchmarks/HISTORY.md,
#: 2026-11-28).
BLOCKS_PER_EPOCH = 8
#: Each coordinate of one move is clipped to ``[-CLIP, CLIP]`` (umap-learn's ``clip``).
CLIP = 4.0

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@numba.njit(inline="always", cache=True)
def _mix(z):
    """splitmix64's finaliser (Steele, Lea & Flood 2014): a uint64 → uint64 bijection."""
    z = z + _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@numba.njit(inline="always", cache=True)
def _clip(v):
    if v > CLIP:
        return np.float32(CLIP)
    if v < -CLIP:
        return np.float32(-CLIP)
    return v


@numba.njit(cache=True)
def _move_row(i, Y, row, indptr, indices, eps, next_sample, eps_neg, next_neg, epoch,
              a, b, gamma, alpha, key, base, pulls, pulled):
    """Move ``row`` (a copy of ``Y[i]``) through row i's edges sampled at this epoch.

    The pull on the other end of entry ``e`` is kept in ``pulls[e - base]`` and
    ``pulled[e - base]`` set (``base``: the block's first entry). The arithmetic is single
    precision, as the layout's (``a``, ``b``, ``gamma`` and ``alpha`` arrive as float32).
    """
    n, dim = Y.shape
    n64 = np.uint64(n)
    zero = np.float32(0.0)
    pull = np.float32(-2.0) * a * b
    push = np.float32(2.0) * gamma * b
    for e in range(indptr[i], indptr[i + 1]):
        pulled[e - base] = False
        if next_sample[e] > epoch:
            continue
        j = indices[e]
        d2 = zero
        for d in range(dim):
            t = row[d] - Y[j, d]
            d2 += t * t
        c = zero
        if d2 > zero:
            pb = d2 ** b
            c = pull * (pb / d2) / (a * pb + np.float32(1.0))
        q = e - base
        for d in range(dim):
            g = _clip(c * (row[d] - Y[j, d])) * alpha
            row[d] += g
            pulls[q, d] = g
        pulled[q] = True
        next_sample[e] += eps[e]
        if eps_neg[e] == np.inf:  # no negative samples (rate 0)
            continue
        n_neg = int((epoch - next_neg[e]) / eps_neg[e])
        state = _mix(key ^ np.uint64(e))
        for _ in range(n_neg):
            state = _mix(state)
            k = np.int64(((state >> np.uint64(32)) * n64) >> np.uint64(32))  # in [0, n)
            if k == i:
                continue
            d2 = zero
            for d in range(dim):
                t = row[d] - Y[k, d]
                d2 += t * t
            if d2 > zero:
                c = push / ((np.float32(0.001) + d2) * (a * d2 ** b + np.float32(1.0)))
                for d in range(dim):
                    row[d] += _clip(c * (row[d] - Y[k, d])) * alpha
        next_neg[e] += n_neg * eps_neg[e]


@numba.njit(parallel=PARALLEL, cache=True)
def _epoch(Y, indptr, indices, eps, next_sample, eps_neg, next_neg, epoch, a, b, gamma,
           alpha, key, block, moved, pulls, pulled):
    n, dim = Y.shape
    for start in range(0, n, block):
        stop = min(start + block, n)
        base = indptr[start]
        for i in numba.prange(start, stop):
            for d in range(dim):
                moved[i - start, d] = Y[i, d]
            _move_row(i, Y, moved[i - start], indptr, indices, eps, next_sample, eps_neg,
                      next_neg, epoch, a, b, gamma, alpha, key, base, pulls, pulled)
        # copied back on one thread: a block of rows x dim floats costs less than a
        # second parallel region's hand-off, which a loaded machine stretches most
        for i in range(start, stop):
            for d in range(dim):
                Y[i, d] = moved[i - start, d]
        # the other ends, one entry after another in the graph's order (one thread)
        for e in range(base, indptr[stop]):
            if pulled[e - base]:
                j = indices[e]
                for d in range(dim):
                    Y[j, d] -= pulls[e - base, d]


def block_rows(n: int) -> int:
    """Rows of a block for ``n`` rows: ``max(BLOCK_SIZE, ceil(n / BLOCKS_PER_EPOCH))``
    (at most ``n``, at least 1; a function of ``n`` alone, never of the threads)."""
    n = int(n)
    return int(max(1, min(n, max(BLOCK_SIZE, -(-n // BLOCKS_PER_EPOCH)))))


def epochs_per_sample(weights: np.ndarray, n_epochs: int) -> np.ndarray:
    """Epochs between two samples of each edge: ``n_epochs / (n_epochs · w / max w)``.

    umap-learn's ``make_epochs_per_sample``; an edge of weight 0 is never sampled
    (``inf``).
    """
    w = np.asarray(weights, dtype=np.float64)
    out = np.full(w.shape, np.inf)
    if w.size and w.max() > 0:
        samples = n_epochs * (w / w.max())
        pos = samples > 0
        out[pos] = n_epochs / samples[pos]
    return out


def optimize_layout(Y: np.ndarray, graph: sp.csr_array, n_epochs: int, a: float, b: float, *,
                    gamma: float = 1.0, initial_alpha: float = 1.0,
                    negative_sample_rate: int = 5, seed: int = 0,
                    block_size: int | None = None, on_epoch=None) -> np.ndarray:
    """Optimise the layout ``Y`` of ``graph`` in place (and return it).

    Parameters
    ----------
    Y : ndarray of float32, shape (n, dim), C-contiguous
        Start; overwritten with the layout.
    graph : csr_array of shape (n, n)
        Non-negative weights (symmetric for UMAP's objective; every stored entry pulls
        both its ends, as in umap-learn), no diagonal, edges below ``max / n_epochs``
        already dropped (as umap-learn does).
    n_epochs : int
        Epochs; the step decays from ``initial_alpha`` to ``initial_alpha / n_epochs``.
    a, b : float
        The low-dimensional similarity ``(1 + a d^{2b})^{-1}`` (``find_ab_params``).
    gamma : float
        Weight of the repulsion.
    negative_sample_rate : int
        Random vertices pushed away per edge sample.
    seed : int
        Fixes every negative sample.
    block_size : int, optional
        Rows moved from one snapshot of the others (see the module's docstring); None =
        :func:`block_rows` of ``n``.
    on_epoch : callable, optional
        Called with the number of epochs done after each epoch (progress reporting).

    Returns
    -------
    ndarray of float32, shape (n, dim)
        ``Y``, optimised.
    """
    if Y.dtype != np.float32 or not Y.flags.c_contiguous:
        raise ValueError("Y must be a C-contiguous float32 array")
    n, dim = Y.shape
    indptr = np.asarray(graph.indptr, dtype=np.int64)
    indices = np.asarray(graph.indices, dtype=np.int64)
    eps = epochs_per_sample(graph.data, n_epochs)
    eps_neg = (eps / int(negative_sample_rate) if negative_sample_rate
               else np.full_like(eps, np.inf))
    next_sample = eps.copy()
    next_neg = eps_neg.copy()
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 2**63, size=n_epochs, dtype=np.uint64)
    block = block_rows(n) if block_size is None else int(max(1, min(block_size, n)))
    moved = np.empty((block, dim), dtype=Y.dtype)
    widest = max((int(indptr[min(s + block, n)] - indptr[s]) for s in range(0, n, block)),
                 default=0)
    pulls = np.empty((widest, dim), dtype=Y.dtype)  # a block's pulls on the other ends
    pulled = np.zeros(widest, dtype=np.bool_)
    alpha = float(initial_alpha)
    for epoch in range(n_epochs):
        _epoch(Y, indptr, indices, eps, next_sample, eps_neg, next_neg, float(epoch),
               np.float32(a), np.float32(b), np.float32(gamma), np.float32(alpha),
               keys[epoch], block, moved, pulls, pulled)
        alpha = float(initial_alpha) * (1.0 - epoch / n_epochs)  # umap-learn's schedule
        if on_epoch is not None:
            on_epoch(epoch + 1)
    return Y
