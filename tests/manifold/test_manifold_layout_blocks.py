"""The block descent of ``umap-layout``: the schedule it documents, on any thread count."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from graphclust_plugins.manifold._layout import (BLOCK_SIZE, BLOCKS_PER_EPOCH, CLIP, block_rows,
                                                 epochs_per_sample, optimize_layout)

MASK = (1 << 64) - 1


def _mix(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _transcription(Y, A, n_epochs, a, b, gamma, alpha0, rate, seed, block):
    """The module's schedule written out in plain Python, one row after another."""
    f = np.float32
    Y = Y.copy()
    n, dim = Y.shape
    a, b, gamma = f(a), f(b), f(gamma)
    eps = epochs_per_sample(A.data, n_epochs)
    eps_neg = eps / rate
    next_sample, next_neg = eps.copy(), eps_neg.copy()
    keys = np.random.default_rng(seed).integers(0, 2**63, size=n_epochs, dtype=np.uint64)
    clip = lambda v: f(min(max(v, -CLIP), CLIP))  # noqa: E731
    alpha = alpha0
    for epoch in range(n_epochs):
        al = f(alpha)
        for start in range(0, n, block):
            rows = range(start, min(start + block, n))
            new = {}
            tail_moves = []
            for i in rows:
                row = Y[i].copy()
                for e in range(A.indptr[i], A.indptr[i + 1]):
                    if next_sample[e] > epoch:
                        continue
                    j = A.indices[e]
                    d2 = f(((row - Y[j]) ** 2).sum(dtype=np.float32))
                    c = f(0.0)
                    if d2 > 0:
                        pb = d2 ** b
                        c = f(-2.0) * a * b * (pb / d2) / (a * pb + f(1.0))
                    g = np.array([clip(c * (row[d] - Y[j, d])) * al for d in range(dim)],
                                 dtype=np.float32)
                    row += g
                    tail_moves.append((j, g))
                    next_sample[e] += eps[e]
                    n_neg = int((epoch - next_neg[e]) / eps_neg[e])
                    state = _mix(int(keys[epoch]) ^ e)
                    for _ in range(n_neg):
                        state = _mix(state)
                        k = ((state >> 32) * n) >> 32
                        if k == i:
                            continue
                        d2 = f(((row - Y[k]) ** 2).sum(dtype=np.float32))
                        if d2 > 0:
                            c = f(2.0) * gamma * b / ((f(0.001) + d2) * (a * d2 ** b + f(1.0)))
                            for d in range(dim):
                                row[d] += clip(c * (row[d] - Y[k, d])) * al
                    next_neg[e] += n_neg * eps_neg[e]
                new[i] = row
            for i, row in new.items():
                Y[i] = row
            for j, g in tail_moves:  # the other ends, in the graph's entry order
                Y[j] -= g
        alpha = alpha0 * (1.0 - epoch / n_epochs)
    return Y


def _graph(n, rng, density=0.15):
    W = sp.random(n, n, density=density, random_state=rng, format="csr")
    W = ((W + W.T) / 2).tocsr()
    W.setdiag(0)
    W.eliminate_zeros()
    W.sort_indices()
    return sp.csr_array(W)


def test_matches_the_transcription():
    """Several blocks, negative samples and a decaying step: the same layout as the
    plain-Python schedule (up to float32 rounding of the compiled arithmetic)."""
    rng = np.random.default_rng(0)
    A = _graph(40, rng)
    Y0 = rng.uniform(0, 10, size=(40, 3)).astype(np.float32)
    got = optimize_layout(Y0.copy(), A, 8, 1.6, 0.9, gamma=1.0, initial_alpha=1.0,
                          negative_sample_rate=3, seed=7, block_size=7)
    want = _transcription(Y0, A, 8, 1.6, 0.9, 1.0, 1.0, 3, 7, 7)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert not np.allclose(got, Y0)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_same_bits_on_one_thread_and_on_many():
    rng = np.random.default_rng(1)
    A = _graph(3000, rng, density=0.004)
    Y0 = rng.uniform(0, 10, size=(3000, 5)).astype(np.float32)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = optimize_layout(Y0.copy(), A, 15, 1.9, 0.8, seed=3, block_size=256)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = optimize_layout(Y0.copy(), A, 15, 1.9, 0.8, seed=3, block_size=256)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, many)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 30), dim=st.integers(1, 4), epochs=st.integers(1, 12),
       rate=st.integers(0, 4), block=st.integers(1, 40), seed=st.integers(0, 2**31 - 1))
def test_a_function_of_graph_start_and_seed(n, dim, epochs, rate, block, seed):
    """Finite, and the same bits for the same inputs; a graph with no sampled edge and
    no repulsion leaves the start untouched."""
    rng = np.random.default_rng(seed)
    A = _graph(n, rng, density=0.3)
    Y0 = rng.uniform(0, 10, size=(n, dim)).astype(np.float32)
    kw = dict(negative_sample_rate=rate, seed=seed, block_size=block)
    a = optimize_layout(Y0.copy(), A, epochs, 1.6, 0.9, **kw)
    b = optimize_layout(Y0.copy(), A, epochs, 1.6, 0.9, **kw)
    assert np.all(np.isfinite(a))
    np.testing.assert_array_equal(a, b)
    empty = sp.csr_array((n, n), dtype=np.float64)
    np.testing.assert_array_equal(optimize_layout(Y0.copy(), empty, epochs, 1.6, 0.9, **kw), Y0)


def test_epochs_per_sample_is_umap_learns():
    w = np.array([1.0, 0.5, 0.25, 0.0])
    np.testing.assert_allclose(epochs_per_sample(w, 200)[:3], [1.0, 2.0, 4.0])
    assert epochs_per_sample(w, 200)[3] == np.inf


def test_pulls_move_both_ends_of_an_edge():
    """No repulsion: every pull moves both ends by opposite amounts, so the centroid of
    the layout stays while the graph's points come together."""
    rng = np.random.default_rng(2)
    A = _graph(20, rng, density=0.3)
    Y0 = rng.uniform(0, 10, size=(20, 2)).astype(np.float32)
    Y = optimize_layout(Y0.copy(), A, 6, 1.6, 0.9, negative_sample_rate=0, seed=0,
                        block_size=6)
    spread = lambda Z: np.linalg.norm(Z - Z.mean(0), axis=1).mean()  # noqa: E731
    assert spread(Y) < 0.5 * spread(Y0)
    np.testing.assert_allclose(Y.mean(0), Y0.mean(0), atol=1e-4)


@given(n=st.integers(1, 10**7))
def test_block_rows_bounds_the_hand_offs_and_the_stale_share(n):
    """A block holds max(BLOCK_SIZE, ceil(n / BLOCKS_PER_EPOCH)) rows (at most n): at most
    BLOCKS_PER_EPOCH blocks an epoch above BLOCK_SIZE · BLOCKS_PER_EPOCH rows, each at
    most an eighth of them (plus one row of rounding); BLOCK_SIZE rows below."""
    block = block_rows(n)
    assert block == min(n, max(BLOCK_SIZE, math.ceil(n / BLOCKS_PER_EPOCH)))
    blocks = math.ceil(n / block)
    if n > BLOCK_SIZE * BLOCKS_PER_EPOCH:
        assert blocks <= BLOCKS_PER_EPOCH and block <= n / BLOCKS_PER_EPOCH + 1
    else:
        assert block == min(n, BLOCK_SIZE)


@pytest.mark.slow
def test_the_default_block_is_block_rows():
    """optimize_layout without block_size moves block_rows(n) rows a block: its layout
    is the one asked for with that size explicitly, and differs from another size."""
    rng = np.random.default_rng(4)
    n = BLOCK_SIZE * BLOCKS_PER_EPOCH + 3000  # above the bound: blocks of ceil(n / 8)
    A = _graph(n, rng, density=6.0 / n)
    Y0 = rng.uniform(0, 10, size=(n, 3)).astype(np.float32)
    default = optimize_layout(Y0.copy(), A, 3, 1.9, 0.8, seed=5)
    explicit = optimize_layout(Y0.copy(), A, 3, 1.9, 0.8, seed=5, block_size=block_rows(n))
    other = optimize_layout(Y0.copy(), A, 3, 1.9, 0.8, seed=5, block_size=BLOCK_SIZE)
    np.testing.assert_array_equal(default, explicit)
    assert not np.array_equal(default, other)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_default_blocks_same_bits_on_one_thread_and_on_many():
    """Above BLOCK_SIZE · BLOCKS_PER_EPOCH rows (blocks of ceil(n / 8) rows, a function of
    n alone) the layout is the same on one thread and on all."""
    rng = np.random.default_rng(6)
    n = BLOCK_SIZE * BLOCKS_PER_EPOCH + 1000
    A = _graph(n, rng, density=6.0 / n)
    Y0 = rng.uniform(0, 10, size=(n, 4)).astype(np.float32)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = optimize_layout(Y0.copy(), A, 4, 1.9, 0.8, seed=8)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = optimize_layout(Y0.copy(), A, 4, 1.9, 0.8, seed=8)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, many)
