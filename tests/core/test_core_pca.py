"""graphclust.numerics.pca against scikit-learn's PCA (full SVD) and hypothesis
properties (block-size independence, orthonormality, float32 kept)."""

import numpy as np
import pytest
from graphclust.numerics import Projection, fit_pca
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.decomposition import PCA


def data(seed=0, n=300, d=12, dtype=np.float64):
    rng = np.random.default_rng(seed)
    # distinct column spreads, so the leading variances are well separated
    X = rng.normal(size=(n, d)) * np.geomspace(20.0, 0.5, d) + rng.uniform(-50, 50, size=d)
    return X.astype(dtype)


def align(A, B):
    """B's columns flipped to A's signs (a PCA score column is defined up to sign)."""
    s = np.sign((A * B).sum(axis=0))
    s[s == 0] = 1
    return B * s


@pytest.mark.parametrize("p", [1, 3, 12])
def test_matches_sklearn_pca(p):
    X = data()
    ref = PCA(p, svd_solver="full").fit(X)
    proj = fit_pca(X, p)
    np.testing.assert_allclose(proj.mean, ref.mean_, rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(proj.explained_variance, ref.explained_variance_, rtol=1e-9)
    np.testing.assert_allclose(proj.explained_variance_ratio, ref.explained_variance_ratio_,
                               rtol=1e-9)
    np.testing.assert_allclose(np.abs(proj.components), np.abs(ref.components_), atol=1e-8)
    S, R = proj.transform(X), ref.transform(X)
    np.testing.assert_allclose(align(R, S), R, atol=1e-8)


def test_float32_kept_and_close_to_float64():
    X64 = data(d=30, n=500)
    X32 = X64.astype(np.float32)
    S32 = fit_pca(X32, 5).transform(X32)
    S64 = fit_pca(X64, 5).transform(X64)
    assert S32.dtype == np.float32
    np.testing.assert_allclose(align(S64, S32), S64, rtol=1e-3, atol=1e-3 * np.abs(S64).max())


def test_new_points_use_the_fitted_mean_and_components():
    X = data()
    ref = PCA(4, svd_solver="full").fit(X)
    proj = fit_pca(X, 4)
    Xn = data(seed=5, n=40)
    R = ref.transform(Xn)
    np.testing.assert_allclose(align(R, proj.transform(Xn)), R, atol=1e-8)


def test_clamps_to_min_n_d_and_reconstructs_exactly():
    X = data(n=7, d=12)
    proj = fit_pca(X, 50)
    assert proj.n_components == 6 + 1  # min(n, d) = 7, the last with zero variance
    S = proj.transform(X)
    np.testing.assert_allclose(S @ proj.components + proj.mean, X, atol=1e-9)


def test_signs_are_fixed_largest_entry_positive():
    proj = fit_pca(data(), 5)
    C = proj.components
    assert (C[np.arange(5), np.abs(C).argmax(axis=1)] > 0).all()


def test_degenerate_inputs_follow_the_rules():
    one = fit_pca(np.ones((1, 3)), 2)
    np.testing.assert_array_equal(one.explained_variance, 0.0)
    assert one.total_variance == 0.0
    np.testing.assert_array_equal(one.explained_variance_ratio, 0.0)
    const = fit_pca(np.full((10, 4), 3.0), 2)
    np.testing.assert_array_equal(const.transform(np.full((2, 4), 3.0)), 0.0)


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, None])
def test_bad_n_components(bad):
    with pytest.raises(ValueError, match="n_components"):
        fit_pca(data(), bad)


def test_bad_inputs():
    X = data()
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fit_pca(X, 2)
    with pytest.raises(ValueError, match="2-d"):
        fit_pca(np.zeros((0, 3)), 2)
    with pytest.raises(ValueError, match="columns"):
        fit_pca(data(), 2).transform(np.zeros((2, 5)))
    with pytest.raises(ValueError, match="block_size"):
        fit_pca(data(), 2, block_size=0)


@settings(max_examples=40, deadline=None)
@given(X=hnp.arrays(np.float64, st.tuples(st.integers(2, 40), st.integers(1, 6)),
                    elements=st.floats(-1e3, 1e3)),
       p=st.integers(1, 6), block=st.integers(1, 50))
def test_properties(X, p, block):
    proj = fit_pca(X, p, block_size=block)
    whole = fit_pca(X, p, block_size=X.shape[0])
    q = proj.n_components
    assert q == min(p, *X.shape)
    assert isinstance(proj, Projection)
    # orthonormal rows, variances descending and non-negative
    np.testing.assert_allclose(proj.components @ proj.components.T, np.eye(q), atol=1e-8)
    assert (np.diff(proj.explained_variance) <= 1e-9 * (1 + proj.explained_variance[0])).all()
    assert (proj.explained_variance >= 0).all()
    # block size changes nothing but round-off
    np.testing.assert_allclose(proj.mean, whole.mean, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(proj.explained_variance, whole.explained_variance,
                               rtol=1e-9, atol=1e-6)
    # the variance of the scores is the explained variance
    S = proj.transform(X, block_size=block)
    np.testing.assert_allclose(S.var(axis=0, ddof=1), proj.explained_variance,
                               rtol=1e-6, atol=1e-6 * (1 + proj.total_variance))
