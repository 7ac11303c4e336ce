"""graphclust's NN-descent: valid lists, near-exact recall against brute force, exact on
one leaf, and the same bits on any thread count."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphclust_plugins.manifold._neighbors import feature_distances
from graphclust_plugins.manifold._nndescent import nn_descent


def _sq(Q: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Squared distances of the rows of ``Q`` to those of ``X``, from the differences
    (float64, 16 query rows at a time)."""
    X64 = X.astype(np.float64)
    out = np.empty((Q.shape[0], X.shape[0]))
    for lo in range(0, Q.shape[0], 16):
        out[lo:lo + 16] = ((Q[lo:lo + 16, None, :].astype(np.float64) - X64) ** 2).sum(-1)
    return out


def _brute(X: np.ndarray, k: int, rows: np.ndarray | None = None
           ) -> tuple[np.ndarray, np.ndarray]:
    """The true ``k`` nearest other rows of ``rows`` (default: all) and their squared
    distances."""
    rows = np.arange(X.shape[0]) if rows is None else rows
    D = _sq(X[rows], X)
    D[np.arange(rows.size), rows] = np.inf
    idx = np.argsort(D, axis=1, kind="stable")[:, :k]
    return idx, np.take_along_axis(D, idx, axis=1)


def _blobs(n: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=6.0, size=(8, d))
    return (centres[rng.integers(0, 8, n)] + rng.normal(size=(n, d))).astype(np.float32)


def _check_lists(X, idx, sq, k):
    n = X.shape[0]
    assert idx.shape == (n, k) and sq.shape == (n, k)
    assert idx.dtype == np.int64 and sq.dtype == np.float32
    assert ((idx >= 0) & (idx < n)).all()
    assert (idx != np.arange(n)[:, None]).all(), "a row is its own neighbour"
    assert all(len(set(row)) == k for row in idx), "a neighbour listed twice"
    assert (np.diff(sq, axis=1) >= 0).all(), "not nearest first"
    true = ((X[:, None, :].astype(np.float64) - X[idx].astype(np.float64)) ** 2).sum(-1)
    np.testing.assert_allclose(sq, true, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("d", [12, 100])  # 100 > SKETCH_DIMS: the trees split a sketch
def test_recall_against_brute_force(d):
    X = _blobs(3000, 12, 0)
    if d > 12:  # the same 12-d blobs turned into d columns (distances unchanged)
        Q, _ = np.linalg.qr(np.random.default_rng(4).normal(size=(d, 12)))
        X = (X.astype(np.float64) @ Q.T).astype(np.float32)
    k = 10
    idx, sq = nn_descent(X, k, seed=0)
    _check_lists(X, idx, sq, k)
    rows = np.arange(0, X.shape[0], 3)
    ref, _ = _brute(X, k, rows)
    recall = np.mean([len(set(a) & set(idx[r])) / k for a, r in zip(ref, rows)])
    assert recall >= 0.97, recall


def test_many_candidates_shrink_the_block_not_the_recall():
    # 30 neighbours: a row offers up to 1 335 pairs, so a block holds fewer than
    # BLOCK_ROWS rows (OFFER_BUFFER_BYTES); 5 000 rows then take two blocks
    from graphclust_plugins.manifold._nndescent import BLOCK_ROWS, OFFER_BUFFER_BYTES

    assert OFFER_BUFFER_BYTES // (12 * (30 * 29 // 2 + 30 * 30)) < min(5000, BLOCK_ROWS)
    X = _blobs(5000, 12, 5)
    idx, sq = nn_descent(X, 30, seed=0)
    _check_lists(X, idx, sq, 30)
    rows = np.arange(0, 5000, 10)
    exact, _ = _brute(X, 30, rows)
    recall = np.mean([np.intersect1d(a, idx[r]).size / 30 for a, r in zip(exact, rows)])
    assert recall >= 0.97, recall


def test_one_leaf_is_exact():
    # n <= max(10, k): every pair shares the tree's only leaf, so the lists are exact
    rng = np.random.default_rng(3)
    X = rng.normal(size=(12, 5)).astype(np.float32)
    idx, sq = nn_descent(X, 11, seed=5)
    ref, ref_sq = _brute(X, 11)
    np.testing.assert_array_equal(idx, ref)
    np.testing.assert_allclose(sq, ref_sq, rtol=1e-5)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 80), d=st.integers(1, 9), k=st.integers(1, 12),
       seed=st.integers(0, 2**31 - 1), data_seed=st.integers(0, 1000))
def test_lists_are_valid_for_any_input(n, d, k, seed, data_seed):
    k = min(k, n - 1)
    X = np.random.default_rng(data_seed).normal(size=(n, d)).astype(np.float32)
    idx, sq = nn_descent(X, k, seed=seed)
    _check_lists(X, idx, sq, k)
    # the same seed gives the same lists
    idx2, sq2 = nn_descent(X, k, seed=seed)
    np.testing.assert_array_equal(idx, idx2)
    np.testing.assert_array_equal(sq, sq2)
    # one tree and no round: the lists are filled from the leaves and the fill alone
    _check_lists(X, *nn_descent(X, k, seed=seed, n_trees=1, n_iters=0), k)


def test_duplicate_rows_terminate_with_valid_lists():
    X = np.zeros((300, 4), dtype=np.float32)
    X[150:] = 1.0
    idx, sq = nn_descent(X, 7, seed=1)
    _check_lists(X, idx, sq, 7)
    assert (sq == 0).all()  # every row has 149 copies of itself


def test_overflowing_distances_still_fill_every_list():
    # squared distances beyond float32's range are infinite: the lists must still fill
    X = np.random.default_rng(2).normal(size=(60, 3)).astype(np.float32)
    X[:5] *= np.float32(1e25)
    idx, sq = nn_descent(X, 8, seed=0, n_trees=1, n_iters=2)
    n = X.shape[0]
    assert ((idx >= 0) & (idx < n)).all() and (idx != np.arange(n)[:, None]).all()
    assert all(len(set(row)) == 8 for row in idx)
    assert np.isinf(sq[:5]).all() and np.isfinite(sq[5:]).all()


def test_rejects_k_out_of_range():
    X = np.zeros((5, 2), dtype=np.float32)
    with pytest.raises(ValueError, match="k must be"):
        nn_descent(X, 5, seed=0)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_same_bits_on_one_thread_and_many():
    from graphclust_plugins.manifold._nndescent import SKETCH_DIMS

    assert 80 > SKETCH_DIMS
    X = _blobs(20000, 80, 1)  # several blocks of rows, many leaves, a sketched forest
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = nn_descent(X, 15, seed=7)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = nn_descent(X, 15, seed=7)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one[0], many[0])
    np.testing.assert_array_equal(one[1], many[1])


_SCRIPT = """
import sys, numpy as np
from graphclust_plugins.manifold._neighbors import feature_distances
from graphclust_plugins.manifold._nndescent import nn_descent
rng = np.random.default_rng(11)
X = (rng.normal(scale=5.0, size=(6, 100))[rng.integers(0, 6, 4000)]
     + rng.normal(size=(4000, 100))).astype(np.float32)
idx, sq = nn_descent(X, 12, seed=3)
np.savez(sys.argv[1], idx=idx, sq=sq)
"""


@pytest.mark.slow
def test_fresh_and_cached_kernels_give_the_same_bits(tmp_path):
    """The distance kernels may add in vector lanes: the lanes must be the same whether
    numba compiles them afresh or loads them from its cache."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    outs = []
    for run in ("fresh", "cached"):
        out = tmp_path / f"{run}.npz"
        subprocess.run([sys.executable, "-c", _SCRIPT, str(out)], env=env, check=True,
                       timeout=600)
        outs.append(np.load(out))
    assert any((tmp_path / "cache").rglob("*.nbi")), "numba wrote no cache"
    np.testing.assert_array_equal(outs[0]["idx"], outs[1]["idx"])
    np.testing.assert_array_equal(outs[0]["sq"], outs[1]["sq"])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 40), st.integers(1, 9), st.booleans())
def test_feature_distances_sort_the_candidates_as_the_plain_reference(seed, n, k, cosine):
    """``feature_distances``: each row's candidates measured on the features and sorted by
    (distance, index), ``-1`` (none found) last at ``inf``: against numpy on integer grids
    (exact in float32, so ties are real ties; the cosine rows' order is checked by
    distance)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(-2, 3, size=(n, 3)).astype(np.float64)
    if cosine:
        X[np.abs(X).sum(axis=1) == 0, 0] = 1.0  # unit rows need a length
    idx = rng.integers(-1, n, size=(n, k))
    got_i, got_d = feature_distances(X, idx, "cosine" if cosine else "euclidean")
    R = X / np.linalg.norm(X, axis=1, keepdims=True) if cosine else X
    for i in range(n):
        d2 = np.where(idx[i] >= 0, ((R[i] - R[idx[i]]) ** 2).sum(axis=1), np.inf)
        order = np.lexsort((np.where(idx[i] >= 0, idx[i], n), d2))
        if not cosine:  # unit rows are rounded: their ties need not be exact
            assert got_i[i].tolist() == idx[i][order].tolist()
        else:
            assert sorted(got_i[i].tolist()) == sorted(idx[i].tolist())
        want = np.where(np.isinf(d2[order]), np.inf,
                        d2[order] / 2 if cosine else np.sqrt(d2[order]))
        np.testing.assert_allclose(got_d[i], want, rtol=1e-6, atol=1e-6)
