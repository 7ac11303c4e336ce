"""graphclust's single-linkage and condensed trees: row for row those of ``hdbscan``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphclust_plugins.manifold._linkage import condense_tree, single_linkage

hdbscan = pytest.importorskip("hdbscan")
from hdbscan._hdbscan_linkage import label as ref_label  # noqa: E402
from hdbscan._hdbscan_tree import condense_tree as ref_condense  # noqa: E402


def _random_mst(n: int, seed: int, n_weights: int, zeros: float) -> np.ndarray:
    """A random spanning tree on ``n`` points (each point joins an earlier one, then
    the points are shuffled), weights from ``n_weights`` levels (ties) with a share
    ``zeros`` of zeros, sorted by weight with a stable sort."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    child = np.arange(1, n)
    parent = (rng.random(n - 1) * child).astype(np.intp)
    w = rng.integers(1, n_weights + 1, n - 1) * rng.choice([0.5, 1.0, 3.0])
    w[rng.random(n - 1) < zeros] = 0.0
    swap = rng.random(n - 1) < 0.5  # either end may come first
    u = np.where(swap, order[parent], order[child])
    v = np.where(swap, order[child], order[parent])
    mst = np.column_stack([u, v, w]).astype(np.float64)
    return mst[np.argsort(mst[:, 2], kind="stable")]


def _check(mst: np.ndarray, n: int, sizes=None) -> None:
    hier = single_linkage(mst, n)
    ref = ref_label(mst.copy())
    assert hier.dtype == ref.dtype and np.array_equal(hier, ref)
    for size in sizes or sorted({2, 3, 5, max(n // 3, 1), n}):
        got, want = condense_tree(hier, size), ref_condense(ref, size)
        assert got.dtype == want.dtype
        for field in want.dtype.names:
            assert np.array_equal(got[field], want[field]), (size, field)


@settings(max_examples=150, deadline=None)
@given(n=st.integers(2, 300), seed=st.integers(0, 2**32 - 1),
       n_weights=st.integers(1, 400), zeros=st.sampled_from([0.0, 0.1, 0.5, 1.0]))
def test_random_trees_match_hdbscan(n, seed, n_weights, zeros):
    _check(_random_mst(n, seed, n_weights, zeros), n)


def test_two_points():
    _check(np.array([[1.0, 0.0, 0.7]]), 2, sizes=[1, 2, 3])
    _check(np.array([[0.0, 1.0, 0.0]]), 2, sizes=[1, 2])


def test_all_weights_equal():
    mst = _random_mst(60, 1, n_weights=1, zeros=0.0)
    assert np.unique(mst[:, 2]).size == 1
    _check(mst, 60, sizes=[1, 2, 3, 5, 20, 30, 31, 60, 61])


@pytest.mark.parametrize("increasing", [True, False])
def test_chain(increasing):
    n = 50
    w = np.arange(1.0, n) if increasing else np.arange(n - 1, 0, -1.0)
    mst = np.column_stack([np.arange(n - 1), np.arange(1, n), w])
    mst = mst[np.argsort(mst[:, 2], kind="stable")]
    _check(mst, n, sizes=[1, 2, 3, 5, 16, 25, 26, 50])


def test_hdbscan_blobs():
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(n_samples=2000, centers=5, cluster_std=1.5, random_state=3)
    model = hdbscan.HDBSCAN(min_samples=5, gen_min_span_tree=True).fit(X)
    mst = model.minimum_spanning_tree_.to_numpy()
    mst = mst[np.argsort(mst[:, 2], kind="stable")]
    _check(mst, X.shape[0], sizes=[5, 15, 50, 400])


def test_linkage_shape():
    n = 200
    hier = single_linkage(_random_mst(n, 7, n_weights=30, zeros=0.1), n)
    assert hier.shape == (n - 1, 4)
    assert hier[-1, 3] == n
    assert np.all(np.diff(hier[:, 2]) >= 0)
    assert np.array_equal(np.sort(hier[:, :2].ravel()), np.arange(2 * n - 2))


def test_malformed_input_raises():
    with pytest.raises(ValueError):
        single_linkage(np.zeros((3, 3)), 5)
    with pytest.raises(ValueError):
        single_linkage(np.array([[0.0, 5.0, 1.0]]), 2)
    hier = single_linkage(np.array([[0.0, 1.0, 1.0], [1.0, 2.0, 2.0]]), 3)
    bad = hier.copy()
    bad[1, 1] = 0.0  # node 0 merged twice, node 2 never
    with pytest.raises(ValueError):
        condense_tree(bad, 2)
    bad = hier.copy()
    bad[0, 0] = 4.0  # a merge taking a node not yet formed
    with pytest.raises(ValueError):
        condense_tree(bad, 2)
