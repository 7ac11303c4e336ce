"""The ``dcd`` solver part, its presets and its place in pipelines."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import graphclust
from graphclust_plugins.dcd import _mm
from graphclust_plugins.dcd.solver_dcd import DCDSolver

pytestmark = [pytest.mark.filterwarnings("ignore::graphclust.DisconnectedGraphWarning"),
              pytest.mark.filterwarnings("ignore::graphclust.ConvergenceWarning")]


def knn_graph(X, k=10):
    return graphclust.resolve_part({"name": "knn", "n_neighbors": k, "weight": "binary"},
                                   "graph").build(X, None, graphclust.Context(0))


@pytest.fixture
def blob_graph(blobs):
    X, y = blobs
    return X, y, knn_graph(X)


def test_registered_with_presets():
    reg = graphclust.get_registry()
    assert "dcd" in reg.solvers
    assert {"dcd", "bkhk-dcd"} <= set(reg.presets.names())
    spec = reg.presets.get("dcd")
    assert spec["graph"] == {"name": "knn", "n_neighbors": 10, "weight": "binary"}
    assert spec["solver"]["name"] == "dcd" and spec["rounding"]["name"] == "argmax"


def test_solution_is_best_alpha1_run_and_on_simplex(blob_graph):
    X, y, g = blob_graph
    rng = np.random.default_rng(0)
    W0 = _mm.indicator_init(rng.integers(0, 3, g.n), 3)
    sol = DCDSolver(max_iter=80).solve_from(g, W0, graphclust.Context(0))
    np.testing.assert_allclose(sol.soft.sum(axis=1), 1.0, atol=1e-12)
    assert set(sol.info["start_kl"]) == {"init", "alpha=1.2", "alpha=2", "alpha=5"}
    assert sol.info["kl"] == min(sol.info["start_kl"].values())
    assert _mm.kl_objective(g.adjacency, sol.soft) == pytest.approx(sol.info["kl"], rel=1e-12)
    assert sol.objective[-1] == pytest.approx(sol.info["kl"], rel=1e-12)
    # DCD improves the approximation of its start
    assert sol.info["kl"] < _mm.kl_objective(g.adjacency, W0)


def test_alphas_empty_gives_a_single_run(blob_graph):
    X, y, g = blob_graph
    W0 = _mm.indicator_init(y, 3)
    sol = DCDSolver(alphas=[], max_iter=50).solve_from(g, W0, graphclust.Context(0))
    assert list(sol.info["start_kl"]) == ["init"]
    assert list(sol.history) == ["kl/init"]


def test_deterministic(blob_graph):
    X, y, g = blob_graph
    s1 = DCDSolver(max_iter=30, alphas=[2.0]).solve(g, X, 3, graphclust.Context(3))
    s2 = DCDSolver(max_iter=30, alphas=[2.0]).solve(g, X, 3, graphclust.Context(3))
    np.testing.assert_array_equal(s1.soft, s2.soft)


def test_preset_recovers_blobs(blobs):
    X, y = blobs
    est = graphclust.GraphClustering("dcd", n_clusters=3, random_state=0,
                                     solver={"max_iter": 100}).fit(X)
    from sklearn.metrics import adjusted_rand_score
    assert adjusted_rand_score(y, est.labels_) == pytest.approx(1.0)


def test_custom_init_pipeline(blobs):
    X, y = blobs
    init = {"solver": {"name": "spectral", "drop_trivial": False, "normalize_rows": False},
            "rounding": {"name": "kmeans", "n_init": 2}}
    est = graphclust.GraphClustering("dcd", n_clusters=3, random_state=0,
                                     solver={"init": init, "alphas": [2.0], "max_iter": 100})
    est.fit(X)
    assert est.solution_.info["selected"] in {"init", "alpha=2"}
    assert len(np.unique(est.labels_)) == 3


def test_bad_parameters_rejected():
    problems = dict(DCDSolver(alphas=[1.0, -2.0], max_iter=0, init=5).check_params())
    assert set(problems) == {"alphas", "max_iter", "init"}
    with pytest.raises(graphclust.SpecError):
        graphclust.GraphClustering("dcd", n_clusters=3, solver={"init": {"solver": {"name": "nope"}}}
                                   ).fit(np.random.default_rng(0).random((40, 2)))


def test_single_cluster_and_tiny_input():
    X = np.random.default_rng(0).random((30, 2))
    labels = graphclust.GraphClustering("dcd", n_clusters=1, random_state=0).fit_predict(X)
    assert np.all(labels == 0)
    labels = graphclust.GraphClustering("dcd", n_clusters=3, random_state=0,
                                        solver={"max_iter": 100}).fit_predict(X)
    assert labels.shape == (30,) and set(np.unique(labels)) <= {0, 1, 2}


@pytest.mark.filterwarnings("default::graphclust.ConvergenceWarning")
def test_convergence_warning_once(blob_graph):
    X, y, g = blob_graph
    W0 = _mm.indicator_init(np.arange(g.n) % 3, 3)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        DCDSolver(max_iter=2, tol=0.0).solve_from(g, W0, graphclust.Context(0))
    conv = [w for w in rec if issubclass(w.category, graphclust.ConvergenceWarning)]
    assert len(conv) == 1


def test_isolated_vertex(blob_graph):
    X, y, g = blob_graph
    A = g.adjacency.tolil()
    A[0, :] = 0
    A[:, 0] = 0
    g2 = graphclust.AffinityGraph(sp.csr_array(A))
    sol = DCDSolver(max_iter=30).solve_from(g2, _mm.indicator_init(y, 3), graphclust.Context(0))
    assert np.all(np.isfinite(sol.soft))
    np.testing.assert_allclose(sol.soft.sum(axis=1), 1.0, atol=1e-12)


def test_anchor_level_adapter(blobs):
    """DCD on ZᵀZ through the composer's adapter; the lifted W stays on the simplex."""
    X, y = blobs
    spec = {"anchors": {"name": "kmeans", "n_anchors": 40},
            "graph": {"name": "gaussian-anchor", "n_neighbors": 4},
            "adapter": "anchor-level",
            "solver": {"name": "dcd", "max_iter": 100},
            "rounding": {"name": "argmax"}}
    est = graphclust.GraphClustering(spec, n_clusters=3, random_state=0).fit(X)
    sol = est.solution_
    np.testing.assert_allclose(sol.soft.sum(axis=1), 1.0, atol=1e-9)
    assert sol.anchor_soft.shape == (40, 3)
    from sklearn.metrics import adjusted_rand_score
    assert adjusted_rand_score(y, est.labels_) > 0.9
    np.testing.assert_array_equal(est.predict(X[:10]), est.labels_[:10])


def test_anchor_level_adapter_as_a_table_is_the_same_run(blobs):
    X, _ = blobs
    spec = {"anchors": {"name": "kmeans", "n_anchors": 30},
            "graph": {"name": "gaussian-anchor", "n_neighbors": 4},
            "adapter": "anchor-level",
            "solver": {"name": "dcd", "max_iter": 50},
            "rounding": {"name": "argmax"}}
    a = graphclust.GraphClustering(spec, n_clusters=3, random_state=1).fit(X)
    b = graphclust.GraphClustering({**spec, "adapter": {"name": "anchor-level"}}, n_clusters=3,
                                   random_state=1).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.pipeline_.adapter.name == b.pipeline_.adapter.name == "anchor-level"


@pytest.mark.slow  # 3 s: BKHK and DCD on all of digits, twice
def test_bkhk_dcd_on_digits_equals_the_hand_run_anchor_level_path():
    """The adapter part reproduces, label for label, DCD run by hand on ZᵀZ of the same
    BKHK anchor graph (with the anchors as features and min(k, m) clusters) and lifted
    through Z, which is what the pipeline did before adapters were parts."""
    reg = graphclust.get_registry()
    if "bkhk" not in reg.anchors or "adaptive-anchor" not in reg.graphs:
        pytest.skip("ulge parts not registered")
    from sklearn.datasets import load_digits

    X, _ = load_digits(return_X_y=True)
    model = graphclust.GraphClustering("bkhk-dcd", n_clusters=10, random_state=0).fit(X)
    pipe = graphclust.compose("bkhk-dcd")
    ctx = graphclust.Context(seed=0)
    Xc = graphclust.check_input(X.astype(np.float64))
    anchors = pipe.anchors.select(Xc, ctx)
    graph = pipe.graph.build(Xc, anchors, ctx)
    level = graphclust.AffinityGraph(graph.Z.T @ graph.Z)
    sol = pipe.solver.solve(level, anchors.points, min(10, anchors.n_anchors), ctx)
    soft = graph.Z @ sol.soft
    labels = pipe.rounding.round(graphclust.Solution(soft=soft), 10, ctx)
    np.testing.assert_array_equal(model.labels_, labels)
    np.testing.assert_allclose(model.solution_.soft, soft, rtol=0, atol=0)
    np.testing.assert_array_equal(model.solution_.anchor_soft, sol.soft)
    Z_new = pipe.graph.transform(Xc[::7], graph)
    expected = pipe.rounding.assign(graphclust.Solution(soft=Z_new @ sol.soft))
    np.testing.assert_array_equal(model.predict(X[::7]), expected)


def test_bkhk_dcd_preset_composes():
    reg = graphclust.get_registry()
    if "bkhk" not in reg.anchors or "adaptive-anchor" not in reg.graphs:
        pytest.skip("ulge parts not registered yet")
    assert graphclust.validate_spec("bkhk-dcd") == []


def test_preset_graph_is_the_binary_symmetric_knn_of_section_4_2(rng):
    """A_ij = 1 iff j is among the K nearest neighbours of i or i among those of j."""
    X = rng.normal(size=(60, 4))
    spec = graphclust.get_registry().presets.get("dcd")["graph"]
    g = graphclust.resolve_part(dict(spec, n_neighbors=5), "graph").build(
        X, None, graphclust.Context(0))
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    B = np.zeros_like(D)
    nn = np.argsort(D, axis=1)[:, :5]
    B[np.repeat(np.arange(60), 5), nn.ravel()] = 1
    np.testing.assert_array_equal(g.to_dense(), np.maximum(B, B.T))
