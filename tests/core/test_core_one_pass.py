"""Work cut from a fit's passes over ``X`` (issues 45 and 48, MNIST-70k's time) gives the
values of the slow obvious computations it replaced.

* :func:`graphclust.numerics.magnitude_unit` reads the largest ``|x|`` off the extremes
  of ``X`` (no ``n x d`` copy of ``|X|``): the unit of ``max |x|`` for any finite,
  infinite or NaN values, dense or sparse.
* :func:`graphclust.numerics.fit_pca`'s covariance route reads the total variance off the
  scatter matrix's diagonal (no second pass for the column sums of squares): the sum of
  the float64 column variances, on both routes and for float32 and float64 rows.
* ``profile_data`` takes the column means and deviations in float64 blocks (no float64
  copy of its sampled rows): the bits of NumPy's float64 ``mean`` and ``std``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from graphclust.numerics import fit_pca, magnitude_unit
from graphclust.numerics.pca_routes import choose_route
from graphclust.numerics.scaling import unit_for_magnitude

QUICK = settings(max_examples=60, deadline=None, derandomize=True,
                 suppress_health_check=list(HealthCheck))

_VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.floats(-1e-300, 1e-300, width=64),
    st.sampled_from([0.0, -0.0, 1e300, -1e300, 5e-324]))


def _reference_unit(vals: np.ndarray, d: int) -> float:
    """The rule as first written: the unit of ``max(abs(X))``."""
    if vals.size == 0 or vals.dtype.kind != "f":
        return 1.0
    return unit_for_magnitude(float(np.max(np.abs(vals))), vals.dtype, d)


@QUICK
@given(arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 5)), elements=_VALUES),
       st.booleans())
def test_magnitude_unit_equals_the_unit_of_the_largest_absolute_value(X, as_float32):
    if as_float32:
        with np.errstate(over="ignore"):
            X = X.astype(np.float32)
    assert magnitude_unit(X) == _reference_unit(X, X.shape[1])
    S = sp.csr_array(np.where(np.isnan(X), 1.0, X))
    assert magnitude_unit(S) == _reference_unit(S.data, S.shape[1])


def test_magnitude_unit_makes_no_copy_of_the_data():
    import tracemalloc

    X = np.random.default_rng(0).normal(size=(2000, 100)) * 1e200
    tracemalloc.start()
    u = magnitude_unit(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert u == _reference_unit(X, 100) != 1.0
    assert peak < X.nbytes / 10  # abs(X) was an n x d copy


@QUICK
@given(st.integers(2, 60), st.integers(2, 12), st.integers(1, 12), st.booleans(),
       st.integers(0, 2**31 - 1))
def test_fit_pca_total_variance_is_the_sum_of_the_column_variances(n, d, p, f32, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 10.0, size=d) + rng.normal(size=d) * 5
    if f32:
        X = X.astype(np.float32)
    proj = fit_pca(X, p)
    ref = float(np.var(X.astype(np.float64), axis=0, ddof=1).sum())
    np.testing.assert_allclose(proj.total_variance, ref, rtol=1e-5 if f32 else 1e-10)
    assert np.all(proj.explained_variance_ratio <= 1.0 + 1e-5)


def test_fit_pca_total_variance_on_the_randomized_route():
    rng = np.random.default_rng(0)
    n, d, p = 2000, 1000, 3
    assert choose_route(n, d, p) != "covariance"  # this size takes the other route
    X = rng.normal(size=(n, d)) + 3.0
    ref = float(np.var(X, axis=0, ddof=1).sum())
    np.testing.assert_allclose(fit_pca(X, p).total_variance, ref, rtol=1e-10)


@QUICK
@given(st.integers(1, 40), st.integers(1, 9), st.integers(1, 7), st.booleans(),
       st.integers(0, 2**31 - 1))
def test_profile_moments_by_blocks_equal_numpys_float64_moments(m, d, block, f32, seed):
    import graphclust._rules as rules

    rng = np.random.default_rng(seed)
    S = rng.normal(size=(m, d)) * 10.0 ** rng.integers(-3, 4, size=d) + rng.normal(size=d)
    if f32:
        S = S.astype(np.float32)
    old, rules.MOMENT_BLOCK_ROWS = rules.MOMENT_BLOCK_ROWS, block
    try:
        mean, std = rules._column_mean_std(S)
    finally:
        rules.MOMENT_BLOCK_ROWS = old
    Sf = S.astype(np.float64)
    if d >= 2:  # NumPy sums a C-ordered array's columns row after row: the same bits
        np.testing.assert_array_equal(mean, Sf.mean(axis=0))
        np.testing.assert_array_equal(std, Sf.std(axis=0))
    else:  # one column may be summed pairwise by NumPy: the same to rounding
        np.testing.assert_allclose(mean, Sf.mean(axis=0), rtol=1e-12, atol=1e-300)
        np.testing.assert_allclose(std, Sf.std(axis=0), rtol=1e-9, atol=1e-12)
