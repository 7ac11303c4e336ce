"""The k-d tree's core distances and Borůvka's mutual reachability tree against dense,
obvious references (sorted distance rows; Kruskal on the full matrix)."""

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from graphclust_plugins.manifold._boruvka import mutual_reachability_mst
from graphclust_plugins.manifold._kdtree import build, core_sqdist


def _sqdist(X):
    """Squared distances summed coordinate by coordinate, as the kernels sum them."""
    D = np.zeros((X.shape[0], X.shape[0]))
    for k in range(X.shape[1]):
        D = D + (X[:, None, k] - X[None, :, k]) ** 2
    return D


def _kruskal(X, min_samples):
    """The minimum spanning tree under the order (w², d², min(p, q), max(p, q)), by
    Kruskal, in that order."""
    n = X.shape[0]
    D = _sqdist(X)
    k = min(min_samples + 1, n)
    core2 = np.sort(D, axis=1)[:, k - 1]
    W = np.maximum(np.maximum(core2[:, None], core2[None, :]), D)
    p, q = np.triu_indices(n, 1)
    order = np.lexsort((q, p, D[p, q], W[p, q]))
    root = list(range(n))

    def find(i):
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    edges = []
    for e in order:
        a, b = find(p[e]), find(q[e])
        if a != b:
            root[max(a, b)] = min(a, b)
            edges.append((p[e], q[e], np.sqrt(W[p[e], q[e]])))
    return np.array(edges).reshape(-1, 3), np.sqrt(core2)


points = st.integers(1, 70).flatmap(lambda n: st.integers(1, 4).flatmap(
    lambda d: arrays(np.float64, (n, d), elements=st.integers(-3, 3).map(float))))


@settings(max_examples=150, deadline=None)
@given(points, st.integers(0, 6))
def test_mst_is_kruskals_tree_under_the_strict_order(X, min_samples):
    # integer grids: many exact ties in distances and in core distances
    mst, core = mutual_reachability_mst(X, min_samples)
    ref, ref_core = _kruskal(X, min_samples)
    np.testing.assert_array_equal(core, ref_core)
    np.testing.assert_array_equal(mst, ref)


@settings(max_examples=60, deadline=None)
@given(points, st.integers(1, 80), st.integers(1, 5))
def test_core_sqdist_is_the_sorted_distance_row(X, k, keep):
    tree = build(X, leaf_size=3)
    dist, idx, kth = core_sqdist(tree, k, keep)
    D = _sqdist(X)
    k = min(k, X.shape[0])
    np.testing.assert_array_equal(kth, np.sort(D, axis=1)[:, k - 1])
    # nearest first, ties by the smaller index: a stable sort of each row
    order = np.argsort(D, axis=1, kind="stable")[:, :dist.shape[1]]
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(dist, np.take_along_axis(D, order, axis=1))


def test_mst_on_continuous_rows_matches_the_dense_tree_and_is_spanning():
    X = np.random.default_rng(3).normal(size=(400, 6))
    mst, _ = mutual_reachability_mst(X, 5)
    ref, _ = _kruskal(X, 5)
    assert mst.shape == (399, 3)
    assert (mst[:, 0] < mst[:, 1]).all() and (np.diff(mst[:, 2]) >= 0).all()
    np.testing.assert_array_equal(mst, ref)


def test_same_tree_on_one_thread_and_on_two():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(c, 1.0, size=(3000, 5)) for c in (0, 6, 12)])
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = mutual_reachability_mst(X, 10)[0]
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = mutual_reachability_mst(X, 10)[0]
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, two)


def test_total_weight_equals_the_hdbscan_packages_tree():
    hdbscan = pytest.importorskip("hdbscan", reason="the hdbscan package is the reference")
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(3000, n_features=4, centers=5, random_state=1)
    model = hdbscan.HDBSCAN(min_samples=7, approx_min_span_tree=False,
                            gen_min_span_tree=True, core_dist_n_jobs=1).fit(X)
    theirs = model.minimum_spanning_tree_.to_numpy()[:, 2]
    ours = mutual_reachability_mst(X, 7)[0][:, 2]
    np.testing.assert_allclose(ours, np.sort(theirs), rtol=1e-12)


def test_single_row_and_duplicates():
    mst, core = mutual_reachability_mst(np.zeros((1, 3)), 5)
    assert mst.shape == (0, 3) and core.tolist() == [0.0]
    mst, core = mutual_reachability_mst(np.zeros((6, 2)), 2)
    assert mst.shape == (5, 3) and (mst[:, 2] == 0).all() and (core == 0).all()
