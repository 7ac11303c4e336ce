"""Blocked neighbour search against brute force."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphclust.neighbors import clamp_anchors, knn, nearest_anchors


def brute(X, U, s, metric="sqeuclidean", exclude_self=False):
    if metric == "sqeuclidean":
        D = ((X[:, None, :] - U[None, :, :]) ** 2).sum(-1)
    else:
        D = -(X @ U.T)
    if exclude_self:
        np.fill_diagonal(D, np.inf)
    idx = np.argsort(D, axis=1, kind="stable")[:, :s]
    return idx, np.take_along_axis(D, idx, 1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("block", [None, 7])
def test_nearest_anchors_matches_brute_force(rng, dtype, block):
    X = rng.standard_normal((60, 5)).astype(dtype)
    U = rng.standard_normal((13, 5)).astype(dtype)
    idx, d2 = nearest_anchors(X, U, 4, block_size=block)
    bidx, bd = brute(X.astype(float), U.astype(float), 4)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(d2, bd, rtol=tol, atol=tol)
    # indices equal where distances are not tied
    assert (idx == bidx).mean() > 0.95


def test_inner_product_metric(rng):
    X = rng.standard_normal((30, 4))
    U = rng.standard_normal((9, 4))
    idx, vals = nearest_anchors(X, U, 3, metric="inner_product")
    bidx, bvals = brute(X, U, 3, metric="inner_product")
    np.testing.assert_array_equal(idx, bidx)
    np.testing.assert_allclose(vals, -bvals)
    assert np.all(np.diff(vals, axis=1) <= 0)


@pytest.mark.parametrize("n", [50, 5000])
def test_knn_excludes_self_and_matches_brute(rng, n):
    X = rng.standard_normal((n, 6))
    idx, d2 = knn(X, 5)
    assert not np.any(idx == np.arange(n)[:, None])
    sub = rng.choice(n, 40, replace=False)
    D = ((X[sub, None, :] - X[None, :, :]) ** 2).sum(-1)
    D[np.arange(40), sub] = np.inf
    ref = np.sort(D, axis=1)[:, :5]
    np.testing.assert_allclose(d2[sub], ref, rtol=1e-4, atol=1e-4)


def test_knn_approx_recall(rng):
    pytest.importorskip("faiss")
    X = rng.standard_normal((3000, 8)).astype(np.float32)
    exact, _ = knn(X, 10)
    approx, _ = knn(X, 10, method="approx")
    recall = np.mean([len(set(a) & set(e)) / 10 for a, e in zip(approx, exact)])
    assert recall > 0.9


def test_bad_arguments(rng):
    X = rng.standard_normal((5, 2))
    with pytest.raises(ValueError, match="k must be"):
        knn(X, 5)
    with pytest.raises(ValueError, match="metric"):
        nearest_anchors(X, X, 2, metric="cosine")
    with pytest.warns(UserWarning, match="exceeds the number of samples"):
        assert clamp_anchors(10, 5) == 5


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 30), st.integers(1, 8), st.integers(0, 10_000))
def test_property_sorted_and_valid(n, s, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    U = rng.standard_normal((max(s, 3), 3))
    idx, d2 = nearest_anchors(X, U, s)
    assert idx.shape == (n, s) and np.all(idx < U.shape[0])
    assert np.all(np.diff(d2, axis=1) >= -1e-12)
    assert all(len(set(r)) == s for r in idx)
