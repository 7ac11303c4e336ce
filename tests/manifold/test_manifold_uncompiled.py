"""The parts rewritten so that a first run compiles less (issue 48, deliverable 4) against
slow obvious references: the k-d tree built level by level in NumPy against a node-by-node
build in plain Python, and NN-descent's insertion-sorted lists against two stable
``argsort`` calls (by index, then by distance)."""

import numpy as np
import pytest
from graphclust_plugins.manifold._kdtree import build
from graphclust_plugins.manifold._nndescent import _sorted_lists
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays


def _reference_tree(X, leaf_size):
    """Node by node in heap order: the node's box, then (inside) its rows sorted stably by
    their first widest coordinate and halved."""
    n, d = X.shape
    levels = 0
    while n > leaf_size * (1 << levels):
        levels += 1
    n_nodes, first_leaf = (1 << (levels + 1)) - 1, (1 << levels) - 1
    perm = list(range(n))
    start, stop = [0] * n_nodes, [0] * n_nodes
    stop[0] = n
    lo, hi = np.empty((n_nodes, d)), np.empty((n_nodes, d))
    for node in range(n_nodes):
        rows = perm[start[node]:stop[node]]
        for k in range(d):
            values = [X[r, k] for r in rows]
            lo[node, k] = min(values, default=np.inf)
            hi[node, k] = max(values, default=-np.inf)
        if node >= first_leaf:
            continue
        widths = [hi[node, k] - lo[node, k] for k in range(d)]
        wide = widths.index(max(widths))
        perm[start[node]:stop[node]] = sorted(rows, key=lambda r: X[r, wide])
        mid = (start[node] + stop[node]) // 2
        start[2 * node + 1], stop[2 * node + 1] = start[node], mid
        start[2 * node + 2], stop[2 * node + 2] = mid, stop[node]
    return perm, start, stop, lo, hi


rows = st.integers(1, 90).flatmap(lambda n: st.integers(1, 4).flatmap(
    lambda d: arrays(np.float64, (n, d), elements=st.integers(-3, 3).map(float))))


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(rows, st.sampled_from([1, 2, 5, 16]))
def test_tree_is_the_node_by_node_build(X, leaf_size):
    tree = build(X, leaf_size)
    perm, start, stop, lo, hi = _reference_tree(X, leaf_size)
    assert tree.perm.tolist() == perm  # ties (few distinct values) keep the tree order
    assert tree.start.tolist() == start and tree.stop.tolist() == stop
    assert np.array_equal(tree.lo, lo) and np.array_equal(tree.hi, hi)
    assert tree.first_leaf == (tree.n_nodes - 1) // 2


def test_tree_of_continuous_rows_is_the_node_by_node_build():
    X = np.random.default_rng(0).standard_normal((700, 3))
    tree = build(X)
    perm, start, stop, lo, hi = _reference_tree(X, 16)
    assert tree.perm.tolist() == perm
    assert tree.start.tolist() == start and tree.stop.tolist() == stop
    assert np.array_equal(tree.lo, lo) and np.array_equal(tree.hi, hi)


def _check_lists(n, k, seed):
    rng = np.random.default_rng(seed)
    values = np.array([0.0, 1.0, 1.0, 2.5, np.inf, np.nan, -0.0], dtype=np.float32)
    dist = rng.choice(values, (n, k)).astype(np.float32)
    idx = rng.integers(-1, 8, (n, k)).astype(np.int32)  # repeated and missing (-1) entries
    out_i, out_d = _sorted_lists(dist, idx)
    for r in range(n):
        by_index = np.argsort(idx[r], kind="stable")
        order = by_index[np.argsort(dist[r][by_index], kind="stable")]
        assert out_i[r].tolist() == idx[r][order].tolist()
        assert np.array_equal(out_d[r], dist[r][order], equal_nan=True)
    assert out_i.dtype == np.int64 and out_d.dtype == np.float32


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.integers(1, 6), st.integers(1, 14), st.integers(0, 2**32 - 1))
def test_lists_sort_as_two_stable_argsorts(n, k, seed):
    _check_lists(n, k, seed)


def test_lists_of_many_rows_sort_as_two_stable_argsorts():
    _check_lists(400, 12, 7)
