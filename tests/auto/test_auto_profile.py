"""The data profile rule presets decide from: against brute-force statistics."""

import attrs
import numpy as np
import pytest
import scipy.sparse as sp
from graphclust._rules import DataProfile, _trimmed_ratio, profile_data
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays


def brute_ratio(values):
    v = sorted(x for x in values if x > 0)
    if len(v) < 2:
        return 1.0
    cut = int(0.1 * len(v))
    if len(v) - 2 * cut >= 2:
        v = v[cut:len(v) - cut]
    with np.errstate(over="ignore"):
        return np.float64(v[-1]) / v[0]


def test_profile_of_columns_in_different_units():
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(0, 1, 500), rng.uniform(0, 1000, 500),
                         rng.uniform(-3, 3, 500), np.full(500, 7.0)])
    p = profile_data(X, 3)
    assert (p.n, p.d, p.k, p.sparse, p.dtype) == (500, 4, 3, False, "float64")
    ranges = X.max(0) - X.min(0)
    assert p.range_spread == pytest.approx(brute_ratio(ranges))
    assert p.range_spread > 500
    assert p.std_spread == pytest.approx(brute_ratio(X.std(0)))
    assert p.constant_fraction == 0.25 and p.nonnegative is False
    assert p.exact_work == 500.0 ** 2 * 4


def test_pixels_share_one_unit():
    rng = np.random.default_rng(1)
    X = (rng.uniform(size=(300, 64)) ** 3 * 255).astype(np.uint8)
    X[:, :4] = 0
    p = profile_data(X, 10)
    assert p.dtype == "float32" and p.nonnegative
    assert p.range_spread < 1.5 and p.constant_fraction == 4 / 64
    assert p.zero_fraction == pytest.approx(np.mean(X == 0))


def test_sparse_input_profiles_like_its_dense_twin():
    rng = np.random.default_rng(2)
    D = rng.normal(size=(400, 30)) * (rng.uniform(size=(400, 30)) < 0.2)
    D[:, 5] *= 100
    ps, pd = profile_data(sp.csr_matrix(D), 4), profile_data(D, 4)
    assert ps.sparse and not pd.sparse
    for field in ("range_spread", "std_spread", "zero_fraction", "offset", "constant_fraction"):
        assert getattr(ps, field) == pytest.approx(getattr(pd, field), rel=1e-9, abs=1e-12)


def test_large_inputs_are_sampled_deterministically():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(5000, 3)) * [1, 10, 100]
    a, b = profile_data(X, 2, sample=500), profile_data(X, 2, sample=500)
    assert a == b and a.n == 5000
    assert a.range_spread == pytest.approx(profile_data(X, 2).range_spread, rel=0.3)


@settings(max_examples=100, deadline=None)
@given(arrays(np.float64, st.integers(1, 40), elements=st.floats(0, 1e6)))
def test_trimmed_ratio_matches_brute_force(values):
    assert _trimmed_ratio(values) == pytest.approx(brute_ratio(values))


def test_profile_as_dict_is_plain():
    d = DataProfile(n=10, d=2, k=2).as_dict()
    assert d["exact_work"] == 200.0 and d["range_spread"] == 1.0


def _sorted_columns(n=30_000):
    rng = np.random.default_rng(0)
    return np.sort(rng.standard_normal((n, 3)) * [1.0, 30.0, 2.0], axis=0)


def test_the_gathered_rows_of_profile_rows_give_the_in_memory_profile():
    from graphclust._rules import GatheredRows, profile_rows

    X = _sorted_columns()
    index = profile_rows(*X.shape)
    assert index is not None and np.all(np.diff(index) > 0) and index[-1] == X.shape[0] - 1
    assert index.size < X.shape[0] and profile_rows(100, 3) is None
    got = profile_data(GatheredRows(X.shape, index, X[index]), 4)
    mem = profile_data(X, 4)
    assert got == mem and got.n == X.shape[0]
    np.testing.assert_array_equal(got.sample, mem.sample)


@pytest.mark.slow
def test_a_chunked_profile_reads_the_rows_of_the_in_memory_profile():
    """Sorted data (the leading rows unlike the rest): the chunked profile gathers the
    in-memory profile's rows by global index, so it is the same profile and sample."""
    dask = pytest.importorskip("dask", reason="needs the [dask] extra")
    import dask.array as da

    from graphclust import GraphClustering
    from graphclust._executors import open_data

    X = _sorted_columns()
    mem = profile_data(X, 4)
    with dask.config.set(scheduler="sync"):
        for rows in (7000, 12_345):
            _, _, got = open_data(GraphClustering(), da.from_array(X, chunks=(rows, 3)), (4, 20))
            assert got.chunked and attrs.evolve(got, chunked=False) == mem
            np.testing.assert_array_equal(got.sample, mem.sample)
