"""kNN graph vs brute force, Gaussian anchor graph vs a dense reference, anchors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

import graphclust
from graphclust_plugins.common.anchors_kmeans import KMeansAnchors
from graphclust_plugins.common.anchors_random import RandomAnchors
from graphclust_plugins.common.graph_gaussian_anchor import GaussianAnchorGraph
from graphclust_plugins.common.graph_knn import KNNGraph


def brute_knn_graph(X, k, weight, rule, local_scale=7):
    """Dense reference: sklearn neighbours, self-tuning weights, dense symmetrisation."""
    n = X.shape[0]
    dist, idx = NearestNeighbors(n_neighbors=k + 1, algorithm="brute").fit(X).kneighbors(X)
    dist, idx = dist[:, 1:], idx[:, 1:]  # drop self (no duplicates in the test data)
    sigma = dist[:, min(local_scale, k) - 1]
    W = np.zeros((n, n))
    for i in range(n):
        for j, d in zip(idx[i], dist[i]):
            W[i, j] = 1.0 if weight == "binary" else np.exp(-d * d / (sigma[i] * sigma[j]))
    if rule == "or":
        return np.maximum(W, W.T)
    if rule == "and":
        return np.minimum(W, W.T)
    return 0.5 * (W + W.T)


@pytest.mark.parametrize("weight", ["gaussian", "binary"])
@pytest.mark.parametrize("rule", ["or", "and", "mean"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_knn_graph_matches_brute_force(rng, weight, rule, dtype):
    X = rng.standard_normal((120, 6)).astype(dtype)
    g = KNNGraph(n_neighbors=8, weight=weight, symmetrize=rule).build(X, None,
                                                                      graphclust.Context())
    A = g.to_dense()
    ref = brute_knn_graph(X.astype(np.float64), 8, weight, rule)
    np.testing.assert_allclose(A, ref, rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(A, A.T)
    assert np.all(np.diag(A) == 0)
    assert isinstance(g.adjacency, sp.csr_array)


def test_knn_graph_large_n_exact_path(rng):
    # n > 4096 takes the faiss flat-index path when faiss is installed
    X = rng.standard_normal((4500, 4)).astype(np.float32)
    g = KNNGraph(n_neighbors=5, weight="binary", symmetrize="and").build(X, None,
                                                                        graphclust.Context())
    idx = NearestNeighbors(n_neighbors=6).fit(X).kneighbors(X, return_distance=False)[:, 1:]
    W = sp.csr_array((np.ones(idx.size), (np.repeat(np.arange(4500), 5), idx.ravel())),
                     shape=(4500, 4500))
    ref = W.minimum(W.T)
    assert abs(g.adjacency - ref).sum() == 0


def test_knn_graph_tiny_duplicates_and_approx(rng):
    X = np.repeat(rng.standard_normal((4, 2)), 3, axis=0)  # 12 points, triplicates
    g = KNNGraph(n_neighbors=50).build(X, None, graphclust.Context())  # k clamped to 11
    assert g.info["n_neighbors"] == 11
    assert np.all(np.isfinite(g.adjacency.data))
    A = g.to_dense()
    # duplicates are at distance 0: weight 1
    assert A[0, 1] == pytest.approx(1.0)
    pytest.importorskip("faiss")
    X = rng.standard_normal((300, 5)).astype(np.float32)
    ga = KNNGraph(method="approx", weight="binary").build(X, None, graphclust.Context())
    ge = KNNGraph(method="exact", weight="binary").build(X, None, graphclust.Context())
    overlap = (ga.adjacency.multiply(ge.adjacency)).sum() / ge.adjacency.sum()
    assert overlap > 0.95


def test_knn_params_checked():
    assert KNNGraph(weight="cosine").check_params()
    assert KNNGraph(n_neighbors=0).check_params()
    assert not KNNGraph().check_params()


def dense_lsc_Z(X, U, s):
    D = ((X[:, None, :] - U[None, :, :]) ** 2).sum(-1)
    sigma = D.mean()
    Z = np.zeros_like(D)
    for i in range(X.shape[0]):
        nn = np.argsort(D[i])[:s]
        Z[i, nn] = np.exp(-D[i, nn] / (2 * sigma**2))
    return Z / Z.sum(1, keepdims=True), sigma


def test_gaussian_anchor_graph_matches_dense_reference(rng):
    X = rng.standard_normal((80, 3)) * 0.3
    anchors = RandomAnchors(n_anchors=15).select(X, graphclust.Context(seed=1))
    g = GaussianAnchorGraph(n_neighbors=4).build(X, anchors, graphclust.Context())
    Z, sigma = dense_lsc_Z(X, anchors.points, 4)
    assert g.state.sigma == pytest.approx(sigma) and g.state.n_neighbors == 4
    np.testing.assert_allclose(g.Z.toarray(), Z, atol=1e-10)
    np.testing.assert_allclose(g.Z.sum(axis=1), 1.0)
    assert np.all(np.diff(g.Z.indptr) == 4)
    # transform of the training rows reproduces Z
    np.testing.assert_allclose(GaussianAnchorGraph(n_neighbors=4).transform(X, g).toarray(),
                               Z, atol=1e-10)


def test_gaussian_anchor_graph_no_underflow_and_clamp(rng):
    X = rng.standard_normal((30, 2)) * 100
    anchors = graphclust.Anchors(points=X[:3])
    g = GaussianAnchorGraph(n_neighbors=5, sigma=1e-3).build(X, anchors, graphclust.Context())
    assert g.Z.shape == (30, 3)
    assert np.all(np.diff(g.Z.indptr) == 3)  # s clamped to m
    np.testing.assert_allclose(g.Z.sum(axis=1), 1.0)
    assert np.all(np.isfinite(g.Z.data))


def test_random_anchors_sample_without_replacement_and_clamp(rng):
    X = rng.standard_normal((50, 3))
    a = RandomAnchors(n_anchors=20).select(X, graphclust.Context(seed=4))
    idx = a.state.indices
    assert len(np.unique(idx)) == 20
    np.testing.assert_array_equal(a.points, X[idx])
    b = RandomAnchors(n_anchors=20).select(X, graphclust.Context(seed=4))
    np.testing.assert_array_equal(a.points, b.points)
    with pytest.warns(graphclust.GraphClustWarning):
        c = RandomAnchors(n_anchors=500).select(X, graphclust.Context())
    assert c.n_anchors == 50
    d = RandomAnchors(n_anchors=5).select(sp.csr_array(X), graphclust.Context())
    assert isinstance(d.points, np.ndarray) and d.points.shape == (5, 3)


def test_kmeans_anchors_in_place_centring_matches_copy(rng):
    X = (rng.standard_normal((500, 6)) + 3.0).astype(np.float32)
    X0 = X.copy()
    a = KMeansAnchors(n_anchors=20).select(X.copy(), graphclust.Context(seed=0))
    b = KMeansAnchors(n_anchors=20, copy_x=False).select(X, graphclust.Context(seed=0))
    np.testing.assert_allclose(X, X0, rtol=0, atol=1e-5)  # restored
    np.testing.assert_array_equal(a.assignment, b.assignment)
    np.testing.assert_allclose(a.points, b.points, rtol=0, atol=1e-4)
    X.setflags(write=False)  # read-only input is copied, not an error
    c = KMeansAnchors(n_anchors=20, copy_x=False).select(X, graphclust.Context(seed=0))
    np.testing.assert_array_equal(c.assignment, a.assignment)


def test_kmeans_anchors_assignment_and_clamp(blobs):
    X, _ = blobs
    a = KMeansAnchors(n_anchors=12).select(X, graphclust.Context(seed=0))
    assert a.points.shape == (12, X.shape[1])
    assert a.assignment.shape == (X.shape[0],)
    # the recorded assignment is the nearest centre after the last update step or one
    # step before; every point's assigned centre is among its 2 nearest in practice
    D = ((X[:, None] - a.points[None]) ** 2).sum(-1)
    assert np.mean(D.argmin(1) == a.assignment) > 0.9
    with pytest.warns(graphclust.GraphClustWarning):
        b = KMeansAnchors(n_anchors=1000).select(X[:30], graphclust.Context())
    assert b.n_anchors == 30
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KMeansAnchors(n_anchors=5).select(np.zeros((10, 2)), graphclust.Context())


def test_knn_pca_components_equals_the_graph_of_the_projected_data():
    """``pca_components = p`` is the kNN graph of the data's ``p`` leading principal
    components (the slow obvious reference: project first, then build)."""
    from graphclust.numerics import fit_pca

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 40)) @ rng.normal(size=(40, 40))
    ctx = graphclust.Context(seed=0)
    on_pcs = KNNGraph(n_neighbors=6, pca_components=8, method="exact").build(X, None, ctx)
    Y = fit_pca(X, 8).transform(X)
    ref = KNNGraph(n_neighbors=6, method="exact").build(Y, None, ctx)
    assert abs(on_pcs.adjacency - ref.adjacency).max() < 1e-10
    full = KNNGraph(n_neighbors=6, pca_components=40, method="exact").build(X, None, ctx)
    plain = KNNGraph(n_neighbors=6, method="exact").build(X, None, ctx)
    assert abs(full.adjacency - plain.adjacency).max() == 0  # p >= d: the data as given
