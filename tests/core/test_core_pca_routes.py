"""The route of graphclust.numerics.fit_pca (covariance or randomized subspace iteration)
and the randomized route against the dense SVD of the centred rows (subspace angles)."""

import numpy as np
import pytest
import scipy.sparse as sp
from graphclust.numerics import fit_pca
from graphclust.numerics.pca_routes import (EXACT_FLOOR, choose_route, randomized_components,
                                            route_costs)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import subspace_angles


def low_rank(n, d, rank=6, seed=0, noise=0.05, dtype=np.float64):
    """Rows near a ``rank``-dimensional subspace with distinct spreads, plus an offset."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, rank)) * np.geomspace(10.0, 2.0, rank)
    X = Z @ rng.normal(size=(rank, d)) + noise * rng.normal(size=(n, d)) + 3.0
    return X.astype(dtype)


def dense_reference(X, p):
    """The obvious reference: the full SVD of the centred rows."""
    A = np.asarray(X, dtype=np.float64) - np.asarray(X, dtype=np.float64).mean(axis=0)
    _, s, vt = np.linalg.svd(A, full_matrices=False)
    return vt[:p], s[:p]


def test_wide_data_take_the_randomized_route_and_narrow_data_the_covariance():
    assert choose_route(3000, 8000, 50) == "randomized"
    assert choose_route(70_000, 784, 64) == "covariance"  # MNIST: exact, as before
    assert choose_route(7, 12, 7) == "covariance"  # under the floor
    costs = route_costs(3000, 8000, 50)
    assert costs["covariance"] > 50 * costs["randomized"]
    assert route_costs(7, 12, 7)["covariance"] <= EXACT_FLOOR


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_randomized_components_span_the_dense_leading_subspace(dtype):
    X = low_rank(120, 600, dtype=dtype)
    p = 6
    ref, s_ref = dense_reference(X, p)
    mean = np.asarray(X, dtype=np.float64).mean(axis=0)
    comps, svals = randomized_components(X, mean, p)
    assert comps.shape == (p, 600)
    np.testing.assert_allclose(comps @ comps.T, np.eye(p), atol=1e-10)
    tol = 1e-6 if dtype == np.float64 else 1e-3
    assert np.max(subspace_angles(comps.T, ref.T)) < tol
    np.testing.assert_allclose(svals, s_ref, rtol=tol)


def test_fit_pca_on_wide_rows_matches_the_dense_svd():
    X = low_rank(150, 1500, seed=3)
    assert choose_route(150, 1500, 5) == "randomized"
    proj = fit_pca(X, 5)
    ref, s_ref = dense_reference(X, 5)
    assert np.max(subspace_angles(proj.components.T, ref.T)) < 1e-6
    np.testing.assert_allclose(proj.explained_variance, s_ref ** 2 / 149, rtol=1e-8)
    # each component equals the reference's up to sign (distinct variances)
    np.testing.assert_allclose(np.abs(proj.components @ ref.T), np.eye(5), atol=1e-6)
    A = X - X.mean(axis=0)
    np.testing.assert_allclose(proj.total_variance, (A ** 2).sum() / 149, rtol=1e-10)


def test_sparse_and_dense_copies_take_the_same_randomized_route():
    rng = np.random.default_rng(1)
    X = sp.random(300, 2000, density=0.02, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.poisson(3.0, k) + 1.0)
    ps, pd = fit_pca(X, 5), fit_pca(X.toarray(), 5)
    np.testing.assert_allclose(ps.components, pd.components, atol=1e-8)
    np.testing.assert_allclose(ps.explained_variance, pd.explained_variance, rtol=1e-8)
    np.testing.assert_allclose(ps.transform(X), pd.transform(X.toarray()), atol=1e-8)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 40), extra=st.integers(0, 60), p=st.integers(1, 12),
       seed=st.integers(0, 2**16))
def test_randomized_components_are_orthonormal_and_capture_at_most_the_total(n, extra, p, seed):
    """Any shape, rank-deficient included: orthonormal rows, singular values descending
    and never above the dense ones (a projection captures at most the optimum)."""
    d = n + extra
    X = np.random.default_rng(seed).normal(size=(n, d))
    p = min(p, n, d)
    mean = X.mean(axis=0)
    comps, svals = randomized_components(X, mean, p)
    np.testing.assert_allclose(comps @ comps.T, np.eye(p), atol=1e-8)
    assert np.all(np.diff(svals) <= 1e-9)
    _, s_ref = dense_reference(X, p)
    assert np.all(svals <= s_ref * (1 + 1e-9) + 1e-9)
