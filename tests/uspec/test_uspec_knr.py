"""Approximate K nearest representatives and the knr-bipartite graph."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import graphclust
from graphclust_plugins.uspec._knr import build_index, exact_nearest
from graphclust_plugins.uspec.graph_knr_bipartite import KNRBipartiteGraph


def brute(X, U, s):
    d2 = ((X[:, None, :] - U[None, :, :]) ** 2).sum(-1)
    idx = np.argsort(d2, axis=1, kind="stable")[:, :s]
    return idx, np.take_along_axis(d2, idx, axis=1)


def separated(n_clusters=10, per=200, reps_per=10, d=8, seed=0):
    """Tight, far-apart clusters; representatives drawn inside each."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=100.0, size=(n_clusters, d))
    X = np.vstack([c + rng.normal(size=(per, d)) for c in centres])
    U = np.vstack([c + rng.normal(size=(reps_per, d)) for c in centres])
    return X, U


def test_exact_search_is_brute_force():
    rng = np.random.default_rng(2)
    X, U = rng.normal(size=(200, 6)), rng.normal(size=(30, 6))
    idx, d2 = exact_nearest(X, U, 5)
    bi, bd = brute(X, U, 5)
    np.testing.assert_array_equal(idx, bi)
    np.testing.assert_allclose(d2, bd, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_approximate_finds_exact_neighbours_on_separated_data(seed):
    X, U = separated(seed=seed)
    index = build_index(U, 50, seed=seed)
    assert index.n_groups == 10  # floor(sqrt(100))
    idx, d2 = index.search(X, U, 5)
    bi, bd = brute(X, U, 5)
    np.testing.assert_array_equal(idx, bi)
    np.testing.assert_allclose(d2, bd, rtol=1e-9, atol=1e-6)


def test_index_neighbour_lists_start_with_self_and_cover_groups():
    rng = np.random.default_rng(3)
    U = rng.normal(size=(64, 4))
    index = build_index(U, 10, seed=0)
    np.testing.assert_array_equal(index.neighbors[:, 0], np.arange(64))
    assert index.neighbors.shape == (64, 11)
    assert np.array_equal(np.sort(np.concatenate(index.members)), np.arange(64))
    # duplicates: each representative still lists itself
    Ud = np.vstack([U[:5]] * 3)
    dup = build_index(Ud, 4, seed=0)
    np.testing.assert_array_equal(dup.neighbors[:, 0], np.arange(15))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(5, 120), p=st.integers(12, 80), K=st.integers(1, 5),
       seed=st.integers(0, 10**6))
def test_property_graph_rows(n, p, K, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    U = rng.normal(size=(p, 3))
    builder = KNRBipartiteGraph(n_neighbors=K, candidates=1)
    g = builder.build(X, graphclust.Anchors(U), graphclust.Context(seed=seed))
    index = g.state.index
    assert g.state.sigma > 0
    B = g.Z
    assert B.shape == (n, p) and np.all(np.diff(B.indptr) == K)
    assert np.all(B.data > 0) and np.all(B.data <= 1)
    idx = B.indices.reshape(n, K)
    if index is None:  # K' + 1 >= p: the exact search is used
        return
    # the neighbours come from the candidate list of the point's nearest representative,
    # which lies in the group of the point's nearest group centre
    gc = ((X[:, None, :] - index.centers[None]) ** 2).sum(-1).argmin(1)
    for i in range(n):
        members = index.members[gc[i]]
        nearest_rep = members[((X[i] - U[members]) ** 2).sum(-1).argmin()]
        assert set(idx[i]) <= set(index.neighbors[nearest_rep])
    # the search returns each point's neighbours nearest first, with true distances
    sidx, sd2 = index.search(X, U, K)
    assert np.all(np.diff(sd2, axis=1) >= 0)
    np.testing.assert_allclose(sd2, ((X[:, None, :] - U[sidx]) ** 2).sum(-1), atol=1e-9)
    np.testing.assert_array_equal(np.sort(sidx, axis=1), idx)
    # weights are the Gaussian of the distances (B stores columns in index order)
    d = np.sqrt(((X[:, None, :] - U[idx]) ** 2).sum(-1))
    w = B.data.reshape(n, K)
    np.testing.assert_allclose(w, np.maximum(np.exp(-d ** 2 / (2 * g.state.sigma ** 2)),
                                             np.finfo(float).eps), rtol=1e-6)


def test_sigma_is_mean_knn_distance_and_exact_option():
    rng = np.random.default_rng(4)
    X, U = rng.normal(size=(150, 4)), rng.normal(size=(20, 4))
    g = KNRBipartiteGraph(search="exact").build(X, graphclust.Anchors(U), graphclust.Context())
    _, bd = brute(X, U, 5)
    assert g.state.sigma == pytest.approx(np.sqrt(bd).mean())
    assert g.state.index is None


def test_transform_reproduces_training_rows():
    X, U = separated(seed=5)
    builder = KNRBipartiteGraph()
    g = builder.build(X, graphclust.Anchors(U), graphclust.Context(seed=1))
    assert g.state.index is not None
    Bn = builder.transform(X[::7], g)
    np.testing.assert_allclose(Bn.toarray(), g.Z[np.arange(0, X.shape[0], 7)].toarray(),
                               rtol=1e-6)


def test_float32_and_degenerate_sigma():
    X = np.ones((20, 3), dtype=np.float32)
    U = np.ones((4, 3), dtype=np.float32)
    g = KNRBipartiteGraph(n_neighbors=9).build(X, graphclust.Anchors(U), graphclust.Context())
    assert g.state.sigma == 0.0 and g.state.n_neighbors == 4
    np.testing.assert_array_equal(g.Z.data, 1.0)


def test_far_outlier_keeps_its_edges():
    rng = np.random.default_rng(6)
    X = np.vstack([rng.normal(size=(100, 2)), [[1e4, 1e4]]])
    U = rng.normal(size=(15, 2))
    g = KNRBipartiteGraph(search="exact").build(X, graphclust.Anchors(U), graphclust.Context())
    row = g.Z[[100]].toarray().ravel()
    assert np.count_nonzero(row) == 5 and np.all(row[row > 0] == np.finfo(float).eps)
