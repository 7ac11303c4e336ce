"""The ``fuzzy-knn`` graph against a slow, obvious dense reference (UMAP Sec. 3.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

import graphclust
from graphclust_plugins.manifold._fuzzy import smooth_distances
from graphclust_plugins.manifold._neighbors import EXACT_MAX_WORK, choose_method
from graphclust_plugins.manifold.graph_fuzzy_knn import FuzzyKNNGraph


def dense_reference(X, n_neighbors, metric="euclidean", search=None):
    """Every pairwise distance, each row's σ by a root finder, W and its fuzzy union.
    ``search``: other rows (a projection of ``X``) on which the neighbours are chosen;
    their distances are still those of ``X``."""
    n = X.shape[0]
    if metric == "cosine":
        U = X / np.linalg.norm(X, axis=1, keepdims=True)
        D = 1.0 - U @ U.T
    else:
        D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    C = D
    if search is not None:
        C = np.sqrt(((search[:, None, :] - search[None, :, :]) ** 2).sum(-1))
        np.fill_diagonal(C, np.inf)
    W = np.zeros((n, n))
    target = math.log2(n_neighbors)
    for i in range(n):
        nb = np.argsort(C[i], kind="stable")[: n_neighbors - 1]
        d = D[i, nb]
        rho = d[d > 0].min()

        def f(s, d=d, rho=rho):
            return np.exp(-np.maximum(d - rho, 0) / s).sum() - target

        sigma = brentq(f, 1e-12, 1e6, xtol=1e-14)
        W[i, nb] = np.exp(-np.maximum(d - rho, 0) / sigma)
    return W + W.T - W * W.T


@pytest.fixture
def points():
    rng = np.random.default_rng(3)
    return np.vstack([rng.normal(size=(40, 5)), rng.normal(loc=4.0, size=(40, 5))])


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_weights_match_dense_reference(points, metric):
    g = FuzzyKNNGraph(n_neighbors=10, metric=metric).build(points, None, graphclust.Context())
    A = g.to_dense()
    np.testing.assert_allclose(A, dense_reference(points, 10, metric), atol=2e-5)
    assert np.array_equal(A, A.T)
    assert A.min() >= 0 and A.max() <= 1 and np.all(np.diag(A) == 0)
    assert g.info["method"] == "exact" and g.info["n_neighbors"] == 10


def test_sigma_solves_the_row_equation(points):
    """Σ_j exp(−max(0, d_ij − ρ_i)/σ_i) = log2 k on every row the floor does not bind."""
    from graphclust.numerics import knn

    _, dsq = knn(points, 14, method="exact")
    d = np.sqrt(dsq)
    rho, sigma, floored = smooth_distances(d, math.log2(15))
    assert not floored.any()
    sums = np.exp(-np.maximum(d - rho[:, None], 0) / sigma[:, None]).sum(1)
    np.testing.assert_allclose(sums, math.log2(15), atol=1e-4)
    np.testing.assert_array_equal(rho, d[:, 0])


def test_duplicates_and_floor():
    X = np.vstack([np.zeros((6, 2)), np.ones((6, 2)), [[5.0, 5.0]]])
    g = FuzzyKNNGraph(n_neighbors=4).build(X, None, graphclust.Context())
    A = g.to_dense()
    assert np.all(np.isfinite(A)) and A.max() <= 1 and A.min() >= 0
    assert A[0, 1] == 1.0  # duplicates: distance 0 <= ρ, full membership
    assert g.info["sigma_floored"] > 0  # every neighbour a duplicate: the floor binds


def test_tiny_inputs_clamp_n_neighbors():
    ctx = graphclust.Context()
    assert FuzzyKNNGraph().build(np.zeros((1, 3)), None, ctx).nnz == 0
    g = FuzzyKNNGraph().build(np.array([[0.0], [1.0], [3.0]]), None, ctx)
    assert g.info["n_neighbors"] == 3 and g.n_components() == 1


@pytest.mark.slow  # compiles umap-learn's kernels (5 s in a fresh env)
def test_matches_umap_learn(points):
    """The same graph as umap-learn's fuzzy_simplicial_set given the same neighbours."""
    umap_ = pytest.importorskip("umap.umap_")
    from graphclust.numerics import knn

    n, k = points.shape[0], 15
    idx, dsq = knn(points, k - 1, method="exact")
    ki = np.hstack([np.arange(n)[:, None], idx])
    kd = np.hstack([np.zeros((n, 1)), np.sqrt(dsq)]).astype(np.float32)
    ref = umap_.fuzzy_simplicial_set(points, k, np.random.RandomState(0), "euclidean",
                                     knn_indices=ki, knn_dists=kd)[0]
    ours = FuzzyKNNGraph(n_neighbors=k).build(points, None, graphclust.Context())
    np.testing.assert_allclose(ours.to_dense(), ref.toarray(), atol=1e-5)


def test_size_rule_and_resolved_spec(points):
    assert choose_method(70000, 784, "auto")[0] == "approx"
    assert choose_method(30000, 784, "auto")[0] == "exact"
    assert choose_method(10, 2, "approx") == ("approx", "requested")
    assert 30000 ** 2 * 784 <= EXACT_MAX_WORK < 70000 ** 2 * 784
    spec = {"graph": {"name": "fuzzy-knn"}, "solver": {"name": "umap-layout", "n_epochs": 20},
            "rounding": {"name": "density"}}
    model = graphclust.GraphClustering(spec, n_clusters=2, random_state=0).fit(points)
    assert model.resolved_spec_["graph"]["method"] == "exact"
    assert model.graph_.info["method_rule"].startswith("auto: n²·d")


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_nndescent_neighbours(metric):
    """NNDescent (about 30 s of numba compilation per process): near-exact neighbours,
    the same graph for the same seed."""
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(3000, n_features=10, centers=5, random_state=0)
    ctx = graphclust.Context(seed=0)
    approx = FuzzyKNNGraph(method="approx", metric=metric).build(X, None, ctx)
    again = FuzzyKNNGraph(method="approx", metric=metric).build(X, None, ctx)
    exact = FuzzyKNNGraph(method="exact", metric=metric).build(X, None, ctx)
    assert approx.info["method"] == "approx"
    assert (approx.adjacency != again.adjacency).nnz == 0
    a, e = approx.adjacency, exact.adjacency
    overlap = (a.multiply(e) > 0).sum() / (e > 0).sum()
    assert overlap > 0.95
    assert abs(a - e).max() < 0.05 or overlap > 0.99


def _rows_and_scores(seed, n, p=5):
    """16 Gaussian columns of falling spread, and their scores on the ``p`` leading
    principal axes by a plain SVD (the signs of the axes do not matter here)."""
    X = np.random.default_rng(seed).normal(size=(n, 16)) * np.linspace(4.0, 0.2, 16)
    mu = X.mean(axis=0)
    _, _, vt = np.linalg.svd(X - mu, full_matrices=False)
    return X, (X - mu) @ vt[:p].T


def test_pca_components_is_the_graph_of_the_projected_rows():
    """pca_components: the graph equals the graph of the rows' scores on their leading
    principal axes."""
    X, P = _rows_and_scores(6, 120)
    ctx = graphclust.Context(seed=0)
    got = FuzzyKNNGraph(n_neighbors=8, method="exact", pca_components=5).build(X, None, ctx)
    ref = FuzzyKNNGraph(n_neighbors=8, method="exact").build(P, None, ctx)
    assert got.info["searched_dims"] == 5 and not got.info["shared_index"]
    assert (got.adjacency != 0).sum() == (ref.adjacency != 0).sum()
    np.testing.assert_allclose(got.adjacency.toarray(), ref.adjacency.toarray(), atol=1e-7)
    # more components than features: the features themselves
    same = FuzzyKNNGraph(n_neighbors=8, method="exact", pca_components=40).build(X, None, ctx)
    assert same.info["searched_dims"] == 16


@pytest.mark.parametrize("method", ["exact", "approx"])
def test_features_distances_weigh_the_projected_neighbours_by_the_features(method):
    """distances="features": the neighbours are those of the principal-component scores,
    their memberships those of the features' distances (dense reference on both)."""
    X, P = _rows_and_scores(7, 150)
    ctx = graphclust.Context(seed=0)
    got = FuzzyKNNGraph(n_neighbors=8, method=method, pca_components=5,
                        distances="features").build(X, None, ctx)
    assert got.info["searched_dims"] == 5 and got.info["measured_dims"] == 16
    ref = dense_reference(X, 8, search=P)
    on_scores = dense_reference(P, 8)
    if method == "exact":
        assert ((got.adjacency.toarray() > 0) == (ref > 0)).all()
        np.testing.assert_allclose(got.adjacency.toarray(), ref, atol=2e-5)
    else:  # NN-descent on 150 rows finds (nearly) every neighbour of the scores
        agree = ((got.adjacency.toarray() > 0) & (ref > 0)).sum() / (ref > 0).sum()
        assert agree > 0.97
    assert np.abs(ref - on_scores).max() > 0.1  # the features' distances do matter here
    # no projection (pca_components >= d): the option changes nothing
    a = FuzzyKNNGraph(n_neighbors=8, method="exact", pca_components=40,
                      distances="features").build(X, None, ctx)
    b = FuzzyKNNGraph(n_neighbors=8, method="exact").build(X, None, ctx)
    assert a.info["measured_dims"] == 16 and (a.adjacency != b.adjacency).nnz == 0
