"""sample-knn's ``descent`` placement: the walk of the sample's NN-descent graph against
brute force, its graph against a plain reference, and rows that depend on nothing but
themselves (not the rows searched with them, the blocks or the threads)."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs

from graphclust import Context
from graphclust_plugins.manifold import _neighbors as nb
from graphclust_plugins.manifold._query import (descent_index, graph_search, pivots,
                                                place_search, search_graph)
from graphclust_plugins.manifold.anchors_sample import SampleAnchors
from graphclust_plugins.manifold.graph_fuzzy_knn import FuzzyKNNGraph
from graphclust_plugins.manifold.graph_sample_knn import SampleKNNGraph

pytestmark = pytest.mark.filterwarnings("ignore::graphclust.DisconnectedGraphWarning")


def brute(Q, V, k):
    """The k nearest rows of V for every row of Q by (squared distance, index)."""
    D = ((Q[:, None, :].astype(np.float64) - V[None, :, :]) ** 2).sum(-1)
    order = np.lexsort((np.broadcast_to(np.arange(V.shape[0]), D.shape), D), axis=1)
    return order[:, :k]


def complete_graph(m):
    """Every row linked to every other: one expansion of a pivot measures all rows."""
    indices = np.array([j for i in range(m) for j in range(m) if j != i], dtype=np.int32)
    return np.arange(0, m * (m - 1) + 1, m - 1, dtype=np.int64), indices


@given(st.integers(5, 40), st.integers(1, 6), st.integers(1, 8), st.integers(0, 2**31))
@settings(max_examples=15, deadline=None)
def test_walk_of_a_complete_graph_is_brute_force(m, d, k, seed):
    """On the complete graph the walk measures every row: its pool is the exact k
    nearest, by distance then index (values on a grid, so ties happen)."""
    rng = np.random.default_rng(seed)
    V = rng.integers(0, 3, size=(m, d)).astype(np.float32)
    Q = rng.integers(0, 3, size=(9, d)).astype(np.float32)
    k = min(k, m)
    indptr, indices = complete_graph(m)
    idx, sq = graph_search(Q, V, indptr, indices, pivots(m, seed), k)
    np.testing.assert_array_equal(idx, brute(Q, V, k))
    ref = ((Q[:, None, :] - V[idx]) ** 2).sum(-1)
    np.testing.assert_allclose(sq, ref, rtol=1e-6)


def test_search_graph_is_the_lists_then_the_nearest_reverse_edges():
    """The walk's graph against a plain Python reference."""
    rng = np.random.default_rng(0)
    n, k, cap = 40, 4, 3
    idx = np.stack([rng.choice(np.delete(np.arange(n), i), k, replace=False)
                    for i in range(n)]).astype(np.int64)
    idx[3, 2:] = -1  # a list not full
    dist = rng.integers(0, 5, size=(n, k)).astype(np.float64)  # ties among reverse edges
    indptr, indices = search_graph(idx, dist, cap)
    for r in range(n):
        own = [c for c in idx[r] if c >= 0]
        rev = sorted([(dist[i, j], i) for i in range(n) for j in range(k) if idx[i, j] == r])
        expect = own + [i for _, i in rev[:cap]]
        assert list(indices[indptr[r]:indptr[r + 1]]) == expect


def test_pivots_are_a_seeded_sorted_subset():
    a, b = pivots(10_000, 3), pivots(10_000, 3)
    assert a.size == 100 and np.array_equal(a, b) and np.all(np.diff(a) > 0)
    assert not np.array_equal(a, pivots(10_000, 4))
    small = pivots(5, 0)  # ceil(sqrt(5)) of the 5 rows
    assert small.size == 3 and set(small) <= set(range(5))


@pytest.mark.slow  # NN-descent of 2 000 rows and PCA: about 1 s idle, 3 s on the shared machine
def test_place_search_finds_the_nearest_sample_rows():
    """Clusters in 6 latent dimensions seen through 30 noisy features: the walk on 8
    components, measured on the features, finds at least 95 % of the exact 10 nearest
    sample rows, with their feature distances."""
    latent, _ = make_blobs(2300, n_features=6, centers=6, random_state=0)
    rng = np.random.default_rng(0)
    X = latent @ rng.standard_normal((6, 30)) + 0.05 * rng.standard_normal((2300, 30))
    X = X.astype(np.float32)
    U, Q = np.ascontiguousarray(X[:2000]), np.ascontiguousarray(X[2000:])
    index = descent_index(U, 16, "euclidean", 8, seed=1)
    idx, dist = place_search(Q, U, index, 10)
    exact = brute(Q, U, 10)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(idx, exact)])
    assert recall >= 0.95
    ref = np.sqrt(((Q[:, None, :].astype(np.float64) - U[idx]) ** 2).sum(-1))
    np.testing.assert_allclose(dist, ref, rtol=1e-9)
    assert np.all(np.diff(dist, axis=1) >= 0)


def test_rows_depend_on_neither_their_company_nor_the_threads():
    """Each row searched alone, in a block, or on one thread gives the same bits."""
    X, _ = make_blobs(2600, n_features=12, centers=5, random_state=2)
    X = X.astype(np.float32)
    U, Q = np.ascontiguousarray(X[:2000]), np.ascontiguousarray(X[2000:])
    index = descent_index(U, 16, "euclidean", None, seed=0)
    whole = place_search(Q, U, index, 15)
    for i in (0, 17, 599):
        one = place_search(Q[i:i + 1], U, index, 15)
        np.testing.assert_array_equal(one[0][0], whole[0][i])
        np.testing.assert_array_equal(one[1][0], whole[1][i])
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        single = place_search(Q, U, index, 15)
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_array_equal(single[0], whole[0])
    np.testing.assert_array_equal(single[1], whole[1])


def test_descent_placement_serves_the_sample_graph_and_blocks_do_not_matter(monkeypatch):
    """sample-knn's descent index is the one the sample's fuzzy graph reads (the same
    projection and metric); the rows of Z do not depend on PLACE_BLOCK."""
    import graphclust_plugins.manifold.graph_sample_knn as gsk

    X, _ = make_blobs(900, n_features=20, centers=4, random_state=0)
    anchors = SampleAnchors(n_anchors=500).select(X, Context(seed=0))
    part = SampleKNNGraph(method="descent", pca_components=8)
    G = part.build(X, anchors, Context(seed=0))
    assert G.info["method"] == "descent" and G.info["searched_dims"] == 8
    assert G.info["placed"] == 400
    U = G.anchors.points
    shared = FuzzyKNNGraph(method="approx", pca_components=8, distances="features").build(
        U, None, Context(seed=0))
    assert shared.info["shared_index"] and shared.info["measured_dims"] == 20
    assert nb.shared_index(U, 16, "euclidean", 8) is G.state.index
    monkeypatch.setattr(gsk, "PLACE_BLOCK", 97)
    small = part.build(X, anchors, Context(seed=0)).Z
    assert (G.Z != small).nnz == 0
    np.testing.assert_allclose(G.Z.sum(axis=1), 1.0)


@pytest.mark.slow  # a LocalCluster of two worker processes (the index is pickled to them)
def test_descent_placement_on_dask_workers_equals_in_memory():
    """The chunked run builds the sample's index once and places each block on a worker
    process: the same labels as in memory (features solver and genie: no layout)."""
    pytest.importorskip("distributed", reason="needs the [dask] extra")
    import dask.array as da
    from distributed import Client, LocalCluster

    import graphclust

    X, _ = make_blobs(3000, 20, centers=4, cluster_std=2.0, random_state=5)
    spec = {"anchors": {"name": "sample", "n_anchors": 800},
            "graph": {"name": "sample-knn", "n_neighbors": 10, "method": "descent",
                      "pca_components": 8},
            "adapter": {"name": "on-sample",
                        "graph": {"name": "fuzzy-knn", "n_neighbors": 15, "method": "approx",
                                  "pca_components": 8, "distances": "features"},
                        "rounding": {"name": "genie"}},
            "solver": {"name": "features"},
            "rounding": {"name": "argmax"}}
    ref = graphclust.GraphClustering(spec, n_clusters=4, random_state=3).fit(X)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster):
        got = graphclust.GraphClustering(spec, n_clusters=4, random_state=3).fit(
            da.from_array(X, chunks=(700, 20)))
        np.testing.assert_array_equal(np.asarray(got.labels_.compute()), ref.labels_)


@pytest.mark.parametrize("m", [1, 2, 3])
def test_tiny_samples_place_every_row_as_the_exact_search(m):
    """One sample row (no graph: the exact search), two or three (the walk meets them
    all): the rows of Z are the exact method's."""
    from graphclust import Anchors

    X = np.random.default_rng(0).random((20, 3)).astype(np.float32)
    anchors = Anchors(points=X[:m])
    got = SampleKNNGraph(method="descent").build(X, anchors, Context(seed=0))
    ref = SampleKNNGraph(method="exact").build(X, anchors, Context(seed=0))
    assert got.info["method"] == ("exact" if m == 1 else "descent")
    np.testing.assert_allclose(got.Z.toarray(), ref.Z.toarray(), atol=1e-6)
