"""Order-free numerics: :class:`graphclust.numerics.ExactSum` against exact rational
arithmetic, and the nearest-``s`` choice against a brute-force reference on data with
exact ties, for any cut of the rows."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from graphclust.numerics import ExactSum, grouped_nearest, nearest_anchors

finite = st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False,
                   allow_subnormal=True)


@settings(max_examples=80, deadline=None)
@given(arrays(np.float64, st.integers(0, 300), elements=finite), st.integers(1, 6))
def test_exact_sum_is_the_correctly_rounded_sum_for_any_cut(values, pieces):
    exact = float(sum((Fraction(v) for v in values), Fraction(0)))
    whole = ExactSum.of(values).value()[0]
    assert whole == exact
    total = None
    for part in np.array_split(values[::-1], pieces):  # another order, another cut
        piece = ExactSum.of(part)
        total = piece if total is None else total + piece
    assert total.value()[0] == whole


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 400), st.integers(1, 7), st.integers(0, 2**32 - 1))
def test_grouped_and_keyed_sums(n, groups, seed):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(n) * 10.0 ** rng.integers(-40, 40, n)
    g = rng.integers(0, groups, n)
    dense = ExactSum.of(v, g, groups).value()
    for j in range(groups):
        assert dense[j] == float(sum((Fraction(x) for x in v[g == j]), Fraction(0)))
    keys = g.astype(np.int64) * 1_000_003 + 5
    cut = rng.integers(0, n + 1)
    keyed = ExactSum.of(v[:cut], keys[:cut], keys=True) + ExactSum.of(v[cut:], keys[cut:],
                                                                     keys=True)
    np.testing.assert_array_equal(keyed.keys, np.unique(keys))
    np.testing.assert_array_equal(keyed.value(), dense[(np.unique(keys) - 5) // 1_000_003])


def test_exact_sum_window_drops_bits_below_its_floor_and_refuses_large_values():
    small = ExactSum.of([1.0, 2.0**-200], top=64, n_digits=6)  # floor 2**-128
    assert small.value()[0] == 1.0
    assert ExactSum.of([1.0, 2.0**-100], top=64, n_digits=6).value()[0] == 1.0 + 2.0**-100
    with pytest.raises(ValueError, match="2\\*\\*64"):
        ExactSum.of([2.0**64], top=64, n_digits=6)
    with pytest.raises(ValueError, match="finite"):
        ExactSum.of([np.nan])
    with pytest.raises(ValueError, match="windows"):
        ExactSum.of([1.0]) + ExactSum.of([1.0], top=64, n_digits=6)


def _brute(X, U, s):
    """The s nearest rows of U by exact integer squared distance, ties to the lower index."""
    d = ((X[:, None, :].astype(np.int64) - U[None, :, :].astype(np.int64)) ** 2).sum(-1)
    order = np.lexsort((np.broadcast_to(np.arange(U.shape[0]), d.shape), d), axis=1)[:, :s]
    return order, np.take_along_axis(d, order, axis=1)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 120), st.integers(2, 40), st.integers(1, 12), st.integers(1, 6),
       st.integers(1, 50), st.integers(0, 2**32 - 1), st.booleans())
def test_nearest_with_exact_ties_is_the_brute_force_answer_for_any_block(
        n, m, d, s, block, seed, offset):
    """Integer points on a small grid tie exactly and often; the choice is the exact one
    with ties to the lower index, whatever the block size (and a large offset, which the
    BLAS expansion handles only approximately, changes nothing)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (n, d))
    U = rng.integers(0, 3, (m, d))
    s = min(s, m)
    want_idx, want_d = _brute(X, U, s)
    shift = 1e6 if offset else 0.0
    idx, dist = nearest_anchors(X + shift, U + shift, s, block_size=block)
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_array_equal(dist, want_d)
    owner = np.zeros(n, dtype=np.int64)
    g_idx, g_d = grouped_nearest(X + shift, U + shift, owner, [np.arange(m)], s,
                                 block_size=block)
    np.testing.assert_array_equal(g_idx, want_idx)
    np.testing.assert_array_equal(g_d, want_d)
    # values=False (issue 48): the same choice, no distances
    idx_only, none = nearest_anchors(X + shift, U + shift, s, block_size=block, values=False)
    assert none is None
    np.testing.assert_array_equal(idx_only, want_idx)
    g_only, none = grouped_nearest(X + shift, U + shift, owner, [np.arange(m)], s,
                                   block_size=block, values=False)
    assert none is None
    np.testing.assert_array_equal(g_only, want_idx)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 150), st.integers(2, 30), st.integers(1, 10), st.integers(1, 4),
       st.integers(1, 6), st.integers(0, 2**32 - 1), st.booleans())
def test_grouped_search_on_ragged_lists_is_the_brute_force_answer(
        n, m, d, s, n_lists, seed, values):
    """Issue 48: rows with and without near-ties in one block (integer grid points tie
    exactly) go different ways, each row's answer its own: every row gets the brute-force
    choice among its owner's candidates, ties to the lower index, with ``values`` or
    without."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, (n, d))
    U = rng.integers(0, 3, (m, d))
    s = min(s, m)
    lists = [np.sort(rng.choice(m, size=int(rng.integers(s, m + 1)), replace=False))
             for _ in range(n_lists)]
    owner = rng.integers(0, n_lists, n)
    idx, dist = grouped_nearest(X.astype(np.float32), U.astype(np.float32), owner, lists, s,
                                values=values)
    for i in range(n):
        cand = lists[owner[i]]
        want_local, want_d = _brute(X[i:i + 1], U[cand], s)
        np.testing.assert_array_equal(idx[i], cand[want_local[0]])
        if values:
            np.testing.assert_array_equal(dist[i], want_d[0])
    assert values or dist is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("d", [1, 7, 784])
@pytest.mark.parametrize("m", [30, 1000])
def test_exact_distances_are_the_same_bits_for_any_slab_and_as_scattered_pairs(dtype, d, m):
    """Issue 48: the exact recomputation runs in cache-sized slabs and, with near-ties,
    only on each row's pairs, converting ``U`` to float64 once when it has fewer rows
    than are gathered (``m = 30``) and the gathered rows otherwise (``m = 1000``); none
    of it may change a bit of a distance."""
    from graphclust.numerics.distances import _exact_pairs, _exact_sq

    rng = np.random.default_rng(d)
    X = rng.normal(size=(120, d)).astype(dtype)
    U = rng.normal(size=(m, d)).astype(dtype)
    idx = rng.integers(0, m, size=(120, 6))
    want = ((X.astype(np.float64)[:, None, :] - U.astype(np.float64)[idx]) ** 2).sum(-1)
    for budget in (8, 4096, 32 * 2**20):
        np.testing.assert_array_equal(_exact_sq(X, U, idx, budget_bytes=budget), want)
    rows, cols = np.nonzero(rng.random((120, 6)) < 0.4)
    np.testing.assert_array_equal(_exact_pairs(X, U, rows, idx[rows, cols], budget_bytes=64),
                                  want[rows, cols])
