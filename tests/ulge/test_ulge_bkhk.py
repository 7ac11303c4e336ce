"""BKHK anchors: exact balance at every level, anchors are leaf means, rules for odd m,
duplicates and clamping, reproducibility."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import graphclust
from graphclust_plugins.ulge.anchors_bkhk import BKHK, bkhk


def _leaf_means(X, leaf, m):
    return np.array([X[leaf == j].mean(axis=0) for j in range(m)])


def _reference_split(X, rng_order, max_iter=100):
    """Slow obvious balanced 2-means on one node: returns the boolean 'a' side."""
    n = X.shape[0]
    kappa = n // 2
    in_a = np.zeros(n, dtype=bool)
    in_a[rng_order[:kappa]] = True
    for _ in range(max_iter):
        ca, cb = X[in_a].mean(0), X[~in_a].mean(0)
        score = ((X - ca) ** 2).sum(1) - ((X - cb) ** 2).sum(1)
        o = np.lexsort((np.arange(n), ~in_a, score))
        new = np.zeros(n, dtype=bool)
        new[o[:kappa]] = True
        if np.array_equal(new, in_a):
            break
        in_a = new
    return in_a


@pytest.mark.parametrize("m", [2, 4, 8, 32, 64])
def test_power_of_two_every_level_exactly_balanced(m):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1001, 6))
    anchors = BKHK(n_anchors=m).select(X, graphclust.Context(seed=3))
    leaf = anchors.assignment
    L = int(np.log2(m))
    assert anchors.info["n_levels"] == L
    # Leaves are numbered left to right, so the node at level l of a leaf is leaf >> (L-l).
    for level in range(L):
        parent = leaf >> (L - level)
        child = leaf >> (L - level - 1)
        for node in np.unique(parent):
            in_node = parent == node
            s = int(in_node.sum())
            left = int((child[in_node] == 2 * node).sum())
            assert left == s // 2 and s - left == (s + 1) // 2
    sizes = np.bincount(leaf, minlength=m)
    assert sizes.min() >= 1001 // m and sizes.max() <= -(-1001 // m)
    np.testing.assert_allclose(anchors.points, _leaf_means(X, leaf, m), atol=1e-10)


@pytest.mark.parametrize("m", [1, 3, 5, 6, 7, 11, 100])
def test_any_m_gives_exactly_m_nonempty_nearly_equal_leaves(m):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(503, 3))
    anchors = BKHK(n_anchors=m).select(X, graphclust.Context(seed=0))
    sizes = np.bincount(anchors.assignment, minlength=m)
    assert anchors.n_anchors == m and sizes.size == m and sizes.min() >= 1
    assert sizes.max() - sizes.min() <= 2
    np.testing.assert_allclose(anchors.points, _leaf_means(X, anchors.assignment, m), atol=1e-10)


def test_first_split_matches_slow_reference():
    """The level-wise array implementation performs the same balanced 2-means as a
    plain per-node loop started from the same random balanced assignment."""
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(0, 1, (60, 4)), rng.normal(3, 1, (41, 4))])
    _, leaf, _ = bkhk(X, 2, rng=np.random.default_rng(7))
    # Reproduce the start: a random key per point, the first kappa in key order go to "a".
    keys = np.random.default_rng(7).random(X.shape[0])
    ref_a = _reference_split(X, np.argsort(keys, kind="stable"))
    np.testing.assert_array_equal(leaf == 0, ref_a)


def test_splits_separate_clear_clusters():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-5, 0.1, (50, 2)), rng.normal(5, 0.1, (50, 2))])
    anchors = BKHK(n_anchors=2).select(X, graphclust.Context(seed=0))
    assert len(set(anchors.assignment[:50])) == 1 and len(set(anchors.assignment[50:])) == 1
    assert anchors.assignment[0] != anchors.assignment[-1]


def test_duplicate_points_and_constant_data():
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]]), 10, axis=0)
    anchors = BKHK(n_anchors=8).select(X, graphclust.Context(seed=0))
    sizes = np.bincount(anchors.assignment, minlength=8)
    assert sizes.min() >= 3 and sizes.max() <= 4
    assert np.all(np.isfinite(anchors.points))
    # All points identical: balanced leaves, all anchors equal to the point.
    Xc = np.ones((17, 3))
    a = BKHK(n_anchors=4).select(Xc, graphclust.Context(seed=0))
    np.testing.assert_allclose(a.points, 1.0)
    assert sorted(np.bincount(a.assignment)) == [4, 4, 4, 5]


def test_clamps_to_n_and_is_reproducible():
    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.warns(graphclust.GraphClustWarning):
        a = BKHK(n_anchors=64).select(X, graphclust.Context(seed=1))
    assert a.n_anchors == 30 and sorted(a.assignment) == list(range(30))
    np.testing.assert_allclose(np.sort(a.points, axis=0), np.sort(X, axis=0))
    b1 = BKHK(n_anchors=8).select(X, graphclust.Context(seed=4))
    b2 = BKHK(n_anchors=8).select(X, graphclust.Context(seed=4))
    np.testing.assert_array_equal(b1.assignment, b2.assignment)


def test_float32_and_uint8_inputs():
    rng = np.random.default_rng(0)
    X8 = rng.integers(0, 256, size=(300, 10)).astype(np.uint8)
    a8 = BKHK(n_anchors=16).select(X8, graphclust.Context(seed=0))
    a64 = BKHK(n_anchors=16).select(X8.astype(np.float64), graphclust.Context(seed=0))
    np.testing.assert_array_equal(a8.assignment, a64.assignment)
    np.testing.assert_allclose(a8.points, _leaf_means(X8.astype(float), a8.assignment, 16))


def test_max_iter_warning():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    with pytest.warns(graphclust.ConvergenceWarning):
        BKHK(n_anchors=4, max_iter=1).select(X, graphclust.Context(seed=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        BKHK(n_anchors=4).select(X, graphclust.Context(seed=0))


def test_param_checks():
    assert BKHK(n_anchors=0).check_params()
    assert BKHK(max_iter=1.5).check_params()
    assert not BKHK().check_params()


@settings(max_examples=10, deadline=None)
@given(n=st.integers(2, 80), m=st.integers(1, 40), seed=st.integers(0, 5), dup=st.booleans())
def test_property_partition(n, m, seed, dup):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    if dup:
        X = np.round(X)  # many duplicate points
    m_eff = min(m, n)
    anchors, leaf, _ = bkhk(X, m_eff, rng=rng)
    sizes = np.bincount(leaf, minlength=m_eff)
    assert sizes.size == m_eff and sizes.min() >= 1 and sizes.max() - sizes.min() <= 2
    np.testing.assert_allclose(anchors, _leaf_means(X, leaf, m_eff), atol=1e-9)


@pytest.mark.parametrize("m", [8, 13, 64])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_streamed_and_gathered_levels_grow_the_same_tree(m, dtype):
    """The two memory layouts (stream over X, or gather a few nodes at a time) are
    only a speed/memory choice: any mix of them gives the same leaves. (With exact
    ties in the scores, the two BLAS kernels may round a tie apart differently, so
    the data here have none; tie-heavy data are checked for balance below.)"""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(700, 5)).astype(dtype)
    ref = bkhk(X, m, rng=np.random.default_rng(1), stream_max_nodes=0)
    for stream, budget in [(10**9, 1), (4, 1), (0, 10**9), (2, 300)]:
        got = bkhk(X, m, rng=np.random.default_rng(1), stream_max_nodes=stream,
                   group_bytes=budget)
        np.testing.assert_array_equal(got[1], ref[1])
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-12)
        assert got[2]["iterations"] == ref[2]["iterations"]


@pytest.mark.parametrize("stream", [0, 10**9])
def test_tie_heavy_integer_data_stay_exactly_balanced(stream):
    X = np.random.default_rng(3).integers(0, 3, size=(301, 4)).astype(np.uint8)
    anchors, leaf, _ = bkhk(X, 16, rng=np.random.default_rng(0), stream_max_nodes=stream)
    sizes = np.bincount(leaf, minlength=16)
    assert sizes.min() == 301 // 16 and sizes.max() == -(-301 // 16)
    np.testing.assert_allclose(anchors, _leaf_means(X.astype(float), leaf, 16), atol=1e-12)


def test_does_not_copy_the_data(monkeypatch):
    """Memory beyond X stays O(n) + one block: the work never holds a full-size
    float copy (checked by tracing numpy allocations)."""
    import tracemalloc

    rng = np.random.default_rng(0)
    X = rng.normal(size=(10_000, 256)).astype(np.float32)  # 10 MB
    tracemalloc.start()
    bkhk(X, 16, rng=np.random.default_rng(0), group_bytes=2**18)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 0.6 * X.nbytes, peak
