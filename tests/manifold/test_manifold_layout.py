"""``umap-layout``: a nonlinear embedding of any affinity graph, fixed by the seed."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs

import graphclust
from graphclust_plugins.manifold.solver_umap_layout import UMAPLayout


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(300, n_features=6, centers=3, random_state=1)
    return X, y


@pytest.mark.parametrize("engine", ["blocks", "umap-learn"])
@pytest.mark.parametrize("graph", ["fuzzy-knn", "knn", "poly-knn"])
def test_any_affinity_graph(blobs, graph, engine):
    """Built by any graph part, laid out by either descent, and the three blobs stay
    apart."""
    X, y = blobs
    if graph not in graphclust.get_registry().graphs:
        pytest.skip(f"graph {graph!r} not installed")
    builder = graphclust.get_registry().graphs.get(graph)()
    g = builder.build(X, None, graphclust.Context(seed=0))
    data = g.adjacency.data.copy()
    sol = UMAPLayout(n_components=4, n_epochs=60, engine=engine).solve(
        g, X, 3, graphclust.Context(seed=0))
    assert sol.info["engine"] == engine
    assert sol.embedding.shape == (300, 4) and np.all(np.isfinite(sol.embedding))
    np.testing.assert_array_equal(g.adjacency.data, data)  # the graph is not modified
    centres = np.array([sol.embedding[y == c].mean(0) for c in range(3)])
    spread = max(np.linalg.norm(sol.embedding[y == c] - centres[c], axis=1).mean()
                 for c in range(3))
    gaps = [np.linalg.norm(centres[a] - centres[b]) for a in range(3) for b in range(a)]
    assert min(gaps) > 2 * spread


@pytest.mark.parametrize("engine", ["blocks", "umap-learn"])
def test_seed_fixes_the_layout(blobs, engine):
    X, _ = blobs
    g = graphclust.get_registry().graphs.get("fuzzy-knn")().build(X, None, graphclust.Context())
    part = UMAPLayout(n_epochs=30, engine=engine)
    a = part.solve(g, X, 3, graphclust.Context(seed=5)).embedding
    b = part.solve(g, X, 3, graphclust.Context(seed=5)).embedding
    c = part.solve(g, X, 3, graphclust.Context(seed=6)).embedding
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    assert a.shape == (300, 10)


def test_init_fallbacks():
    ctx = graphclust.Context(seed=0)
    # a tiny graph: spectral needs n > n_components + 1
    A = sp.csr_array(np.ones((4, 4)) - np.eye(4))
    sol = UMAPLayout(n_epochs=10).solve(graphclust.AffinityGraph(A), None, 1, ctx)
    assert sol.info["init"].startswith("random") and sol.embedding.shape == (4, 10)
    # many components and no features
    blocks = sp.block_diag([np.ones((3, 3)) - np.eye(3)] * 8, format="csr")
    sol = UMAPLayout(n_components=2, n_epochs=10).solve(graphclust.AffinityGraph(blocks),
                                                        None, 2, ctx)
    assert "components" in sol.info["init"]
    # no edges at all: the random start
    sol = UMAPLayout().solve(graphclust.AffinityGraph(sp.csr_array((5, 5))), None, 1, ctx)
    assert sol.embedding.shape == (5, 10) and sol.info["n_epochs"] == 0


def test_min_dist_above_spread_is_refused():
    problems = UMAPLayout(min_dist=2.0, spread=1.0).check_params()
    assert [p for p, _ in problems] == ["min_dist"]


def test_many_components_placed_from_the_features():
    """With features, umap-learn places more than 2·p components from the data."""
    rng = np.random.default_rng(0)
    X = np.repeat(np.arange(8.0)[:, None] * 10, 3, axis=0) + rng.normal(size=(24, 1)) * 0.01
    blocks = sp.block_diag([np.ones((3, 3)) - np.eye(3)] * 8, format="csr")
    sol = UMAPLayout(n_components=2, n_epochs=10).solve(graphclust.AffinityGraph(blocks), X, 2,
                                                        graphclust.Context(seed=0))
    assert sol.info["init"] == "spectral" and np.all(np.isfinite(sol.embedding))


def test_pca_start_keeps_the_blobs_apart_and_is_fixed_by_the_seed(blobs):
    """init="pca": the features' leading principal components as the start (umap-learn's
    "pca"); the blobs end apart, the seed fixes the layout; without features (or with
    fewer than n_components) it starts at random and says so."""
    X, y = blobs
    g = graphclust.get_registry().graphs.get("fuzzy-knn")().build(X, None, graphclust.Context())
    part = UMAPLayout(n_components=4, n_epochs=30, init="pca")
    a = part.solve(g, X, 3, graphclust.Context(seed=5))
    b = part.solve(g, X, 3, graphclust.Context(seed=5))
    assert a.info["init"] == "pca"
    np.testing.assert_array_equal(a.embedding, b.embedding)
    centres = np.array([a.embedding[y == c].mean(0) for c in range(3)])
    spread = max(np.linalg.norm(a.embedding[y == c] - centres[c], axis=1).mean()
                 for c in range(3))
    assert min(np.linalg.norm(centres[i] - centres[j]) for i in range(3) for j in range(i)) \
        > 2 * spread
    assert part.solve(g, None, 3, graphclust.Context(seed=5)).info["init"].startswith("random")
    wide = UMAPLayout(n_components=8, n_epochs=5, init="pca").solve(g, X, 3,
                                                                   graphclust.Context())
    assert wide.info["init"].startswith("random")
