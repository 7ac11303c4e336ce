"""The ``genie`` rounding and the ``features`` solver: contract, exact k, the anchored
path, new points, determinism."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score

import graphclust as gc
from graphclust import Context, Solution
from graphclust.testing import check_part
from graphclust_plugins.genie._genie import first_seen
from graphclust_plugins.genie.graph_one_anchor import OneAnchorGraph
from graphclust_plugins.genie.rounding_genie import GenieRounding
from graphclust_plugins.genie.solver_features import FeaturesSolver


def blobs(n, k, d=2, spread=0.3, seed=0):
    """``k`` tight blobs on a circle of radius 10 (well separated)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    centres = 10.0 * np.c_[np.cos(2 * np.pi * np.arange(k) / k),
                           np.sin(2 * np.pi * np.arange(k) / k)]
    X = np.c_[centres, np.zeros((k, d - 2))][y] + spread * rng.standard_normal((n, d))
    return X, y


@pytest.mark.parametrize("cls, params", [
    (GenieRounding, {}),
    (GenieRounding, {"max_exact": 10, "anchors": {"name": "random", "n_anchors": 12}}),
    (GenieRounding, {"gini_threshold": 1.0}),
    (GenieRounding, {"max_fit": 15}),
    (FeaturesSolver, {}),
    (OneAnchorGraph, {}),
])
def test_contract(cls, params):
    check_part(cls, **params)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), d=st.integers(1, 3), k=st.integers(1, 6),
       levels=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_exactly_k_labels_unless_fewer_distinct_points(n, d, k, levels, seed):
    rng = np.random.default_rng(seed)
    E = rng.integers(0, levels, size=(n, d)).astype(float)  # ties and duplicates
    k = min(k, n)
    labels = GenieRounding().round(Solution(embedding=E), k, Context(seed=0))
    distinct = len(np.unique(E, axis=0))
    assert labels.shape == (n,) and labels.dtype == np.int64
    assert set(labels.tolist()) == set(range(min(k, distinct)))
    # identical rows share a label
    _, inverse = np.unique(E, axis=0, return_inverse=True)
    for row in np.unique(inverse):
        assert len(set(labels[inverse.ravel() == row].tolist())) == 1


def test_anchored_path_equals_exact_path_above_the_bound():
    X, y = blobs(3000, 5, seed=1)
    sol = Solution(embedding=X)
    exact = GenieRounding().round(sol, 5, Context(seed=0))
    anchored = GenieRounding(max_exact=1000, anchors={"name": "kmeans", "n_anchors": 300})
    got = anchored.round(sol, 5, Context(seed=0))
    assert anchored.n_anchors_ == 300 and anchored.anchors_.shape == (300, 2)
    np.testing.assert_array_equal(got, exact)
    assert adjusted_rand_score(y, got) == 1.0
    # default anchors (k-means, m = 2000) too
    default = GenieRounding(max_exact=2500)
    np.testing.assert_array_equal(default.round(sol, 5, Context(seed=0)), exact)
    assert default.n_anchors_ == 2000


def test_assign_gives_training_rows_their_labels_and_new_points_the_nearest():
    X, _ = blobs(600, 3, seed=2)
    for r in (GenieRounding(), GenieRounding(max_exact=100,
                                             anchors={"name": "random", "n_anchors": 80})):
        labels = r.round(Solution(embedding=X), 3, Context(seed=0))
        if r.n_anchors_ == 0:
            np.testing.assert_array_equal(r.assign(Solution(embedding=X)), labels)
        else:
            assert adjusted_rand_score(r.assign(Solution(embedding=X)), labels) == 1.0
        new = X[:30] + 0.01
        np.testing.assert_array_equal(r.assign(Solution(embedding=new)), labels[:30])
    with pytest.raises(RuntimeError, match="round"):
        GenieRounding().assign(Solution(embedding=X))


def test_same_partition_whatever_the_row_order():
    X, _ = blobs(400, 4, spread=1.5, seed=3)
    perm = np.random.default_rng(0).permutation(len(X))
    a = GenieRounding().round(Solution(embedding=X), 4, Context(seed=0))
    b = GenieRounding().round(Solution(embedding=X[perm]), 4, Context(seed=5))
    assert gc.numerics.same_partition(a[perm], b)
    np.testing.assert_array_equal(first_seen(a), a)  # numbered in order of appearance


def test_gini_threshold_is_checked():
    problems = dict(GenieRounding(gini_threshold=1.5).check_params())
    assert "gini_threshold" in problems
    assert not GenieRounding(gini_threshold=0.0).check_params()


def test_features_solver_hands_on_the_features():
    X, _ = blobs(200, 2, d=3)
    graph = gc.AnchorGraph(sp.csr_array(np.ones((200, 1))), gc.Anchors(X[:1]))
    sol = FeaturesSolver().solve(graph, X, 2, Context(seed=0))
    np.testing.assert_array_equal(sol.embedding, X)
    np.testing.assert_array_equal(sol.projection, np.eye(3))
    np.testing.assert_array_equal(sol.extend(X_new=X[:5]).embedding, X[:5])
    X32 = X.astype(np.float32)
    assert FeaturesSolver().solve(graph, X32, 2, Context(seed=0)).embedding.dtype == np.float32


def test_features_solver_on_principal_components():
    """``components``: the rows on the leading principal components (against numpy's
    SVD of the centred rows, up to each component's sign), new rows placed the same
    way; kept as they are when d is no larger; a chunked run is refused."""
    X, _ = blobs(200, 3, d=6, seed=2)
    graph = gc.AnchorGraph(sp.csr_array(np.ones((200, 1))), gc.Anchors(X[:1]))
    sol = FeaturesSolver(components=2).solve(graph, X, 3, Context(seed=0))
    C = X - X.mean(axis=0)
    U, S, _ = np.linalg.svd(C, full_matrices=False)
    ref = U[:, :2] * S[:2]
    np.testing.assert_allclose(np.abs(sol.embedding), np.abs(ref), atol=1e-8)
    np.testing.assert_allclose(sol.extend(X_new=X[:7]).embedding, sol.embedding[:7],
                               atol=1e-10)
    same = FeaturesSolver(components=6).solve(graph, X, 3, Context(seed=0))
    np.testing.assert_array_equal(same.embedding, X)
    with pytest.raises(gc.InputError, match="in memory only"):
        FeaturesSolver(components=2).solve_chunked(None, 3, Context(seed=0))


def test_genie_on_features_spec_fits_and_predicts():
    X, y = blobs(900, 3, spread=0.5, seed=4)
    model = gc.GraphClustering("genie", n_clusters=3, random_state=0).fit(X)
    assert adjusted_rand_score(y, model.labels_) == 1.0
    np.testing.assert_array_equal(model.predict(X[:50]), model.labels_[:50])
    spec = {"graph": {"name": "knn", "n_neighbors": 5}, "solver": {"name": "features"},
            "rounding": {"name": "genie", "gini_threshold": 0.5}}
    labels = gc.GraphClustering(spec, n_clusters=3, random_state=0).fit(X).labels_
    assert adjusted_rand_score(y, labels) == 1.0


def test_max_fit_runs_genie_on_rows_drawn_by_global_index_and_places_the_rest():
    X, _ = blobs(600, 3, spread=1.5, seed=4)
    ctx = Context(seed=5)
    r = GenieRounding(max_fit=150)
    labels = r.round(Solution(embedding=X), 3, ctx)
    idx = np.sort(ctx.rng("rounding.genie.sample").choice(600, 150, replace=False))
    np.testing.assert_array_equal(r.sample_rows(600, 3, ctx), idx)
    assert r.sample_rows(150, 3, ctx) is None and GenieRounding().sample_rows(600, 3, ctx) is None
    sample_labels = GenieRounding().round(Solution(embedding=X[idx]), 3, Context(seed=5))
    nearest = ((X[:, None, :] - X[idx][None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
    np.testing.assert_array_equal(labels, sample_labels[nearest])  # brute force
    # the chunk hook's contract: round on the drawn rows, then assign every row
    on_sample = GenieRounding(max_fit=150)
    on_sample.round(Solution(embedding=X[idx]), 3, Context(seed=5))
    np.testing.assert_array_equal(on_sample.assign(Solution(embedding=X)), labels)


def test_one_anchor_graph_links_every_row_to_the_first_anchor_without_distances():
    X, _ = blobs(50, 2)
    anchors = gc.Anchors(points=X[:3])
    g = OneAnchorGraph().build(X, anchors, Context(0))
    expected = np.zeros((50, 3))
    expected[:, 0] = 1.0
    np.testing.assert_array_equal(g.Z.toarray(), expected)
    np.testing.assert_array_equal(OneAnchorGraph().transform(X[:7] + 1e9, g).toarray(),
                                  expected[:7])
    assert OneAnchorGraph().prepare_chunked(anchors, None, Context(0)).Z.shape == (0, 3)
