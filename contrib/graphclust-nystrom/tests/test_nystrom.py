"""graphclust-nystrom: the contract kit, a dense reference, and pipelines mixing its parts
with graphclust's built-in parts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

import graphclust
from graphclust import AnchorGraph, Anchors, Context, GraphClustering
from graphclust.testing import make_blobs, parametrize_with_checks

from graphclust_nystrom.graph_nystrom_landmarks import NystromLandmarkGraph
from graphclust_nystrom.solver_nystrom import NystromSolver, nystrom_embedding
from graphclust_nystrom._kernel import gaussian_kernel

# well-separated blobs give a disconnected landmark graph on purpose
pytestmark = pytest.mark.filterwarnings("ignore::graphclust.DisconnectedGraphWarning")


def _acc(y, labels):
    C = np.zeros((labels.max() + 1, y.max() + 1))
    np.add.at(C, (labels, y), 1)
    r, c = linear_sum_assignment(-C)
    return C[r, c].sum() / y.size


# -- the contract-test kit: one test per (part, check), e.g. solver[nystrom]-determinism ---
@parametrize_with_checks(distribution="graphclust-nystrom")  # every part this package registers
def test_registered_parts_pass_the_kit(check):
    check()


@parametrize_with_checks([
    (NystromSolver, {"bandwidth": 2.0, "block_size": 7}),
    (NystromLandmarkGraph, {"n_neighbors": 50}),  # more neighbours than landmarks: clamped
])
def test_parts_pass_the_kit_with_other_values(check):
    check()


def test_registered_through_the_entry_point():
    registry = graphclust.get_registry()
    for catalog, name in ((registry.solvers, "nystrom"), (registry.graphs, "nystrom-landmarks"),
                          (registry.presets, "nystrom")):
        record = catalog.record(name)
        assert record.provider.distribution == "graphclust-nystrom"
    plugin = next(p for p in registry.plugins if p.name == "nystrom")
    assert plugin.status == "loaded" and plugin.entry_point == "graphclust_nystrom"


# -- numerics against a dense reference ---------------------------------------------------
def _dense_reference(X, L, sigma, k):
    C = gaussian_kernel(X, L, sigma)
    A = gaussian_kernel(L, L, sigma)
    W = C @ np.linalg.pinv(A, rcond=1e-8, hermitian=True) @ C.T
    d = W.sum(axis=1)
    N = W / np.sqrt(np.outer(d, d))
    vals, vecs = np.linalg.eigh(N)
    return vals[::-1][:k], vecs[:, ::-1][:, :k]


@pytest.mark.parametrize("m", [10, 25, 60])
def test_embedding_matches_dense_nystrom(m):
    X, _ = make_blobs(60, 4, 3, seed=1)
    L = X[np.random.default_rng(m).choice(60, m, replace=False)]
    out = nystrom_embedding(X, L, 3.0, 3, block_size=16)
    vals, vecs = _dense_reference(X, L, 3.0, 3)
    np.testing.assert_allclose(out["eigenvalues"], vals, rtol=1e-6, atol=1e-8)
    V = out["embedding"]
    np.testing.assert_allclose(V.T @ V, np.eye(3), atol=1e-6)
    # same invariant subspace: singular values of V_refᵀ V are all one
    np.testing.assert_allclose(np.linalg.svd(vecs.T @ V, compute_uv=False), 1.0, atol=1e-5)


def test_all_points_as_landmarks_is_exact_spectral():
    X, _ = make_blobs(40, 3, 2, seed=2)
    out = nystrom_embedding(X, X, 2.5, 2)
    K = gaussian_kernel(X, X, 2.5)
    d = K.sum(1)
    vals = np.linalg.eigvalsh(K / np.sqrt(np.outer(d, d)))[::-1][:2]
    np.testing.assert_allclose(out["eigenvalues"], vals, rtol=1e-6)
    assert out["eigenvalues"][0] == pytest.approx(1.0, abs=1e-6)


def test_block_size_does_not_change_the_result():
    X, _ = make_blobs(50, 4, 3, seed=3)
    L = X[:12]
    a = nystrom_embedding(X, L, 2.0, 3, block_size=7)["embedding"]
    b = nystrom_embedding(X, L, 2.0, 3)["embedding"]
    # the blobs' top eigenvalues are nearly equal, so compare the subspaces
    np.testing.assert_allclose(np.linalg.svd(a.T @ b, compute_uv=False), 1.0, atol=1e-8)
    np.testing.assert_allclose(a @ a.T, b @ b.T, atol=1e-8)


def test_duplicate_landmarks_and_far_points_follow_the_rules():
    X, _ = make_blobs(30, 2, 3, seed=4)
    L = np.vstack([X[:5], X[:5]])  # singular A: pseudo-inverse
    X_far = np.vstack([X, [[1e4, 1e4]]])  # kernel row underflows to zero: a zero row
    out = nystrom_embedding(X_far, L, 1.0, 3)
    assert np.all(np.isfinite(out["embedding"]))
    assert out["rank"] <= 5 and out["nonpositive_degrees"] >= 1
    np.testing.assert_array_equal(out["embedding"][-1], 0.0)


def test_bandwidth_rule_order():
    X, _ = make_blobs(40, 3, 2, seed=5)
    anchors = Anchors(X[:8])
    graph = NystromLandmarkGraph(n_neighbors=3).build(X, anchors, Context())
    sol = NystromSolver().solve(graph, X, 2, Context())
    assert sol.info["bandwidth_rule"] == "from the graph"
    assert sol.info["sigma"] == graph.state.sigma
    bare = AnchorGraph(graph.Z, anchors=anchors)
    assert NystromSolver().solve(bare, X, 2, Context()).info["bandwidth_rule"] == "self-tuning"
    assert NystromSolver(bandwidth=0.7).solve(graph, X, 2, Context()).info["sigma"] == 0.7


def test_landmark_graph_transform_reproduces_training_rows():
    X, _ = make_blobs(40, 3, 2, seed=6)
    b = NystromLandmarkGraph(n_neighbors=3)
    graph = b.build(X, Anchors(X[:9]), Context())
    np.testing.assert_allclose(b.transform(X, graph).toarray(), graph.Z.toarray())


def test_solver_refuses_a_graph_without_landmarks():
    X, _ = make_blobs(20, 2, 2)
    bare = AnchorGraph(np.eye(20)[:, :5] + 0.1, anchors=None)
    with pytest.raises(ValueError, match="anchors"):
        NystromSolver().solve(bare, X, 2, Context())


# -- pipelines mixing its parts with built-in parts ---------------------------------------
def _need(kind, name):
    if name not in graphclust.get_registry().parts(kind):
        pytest.skip(f"built-in {kind} {name!r} is not registered yet")


def test_pipeline_with_builtin_kmeans_rounding_and_given_landmarks():
    _need("rounding", "kmeans")
    X, y = make_blobs(90, 5, 3, seed=7)
    model = GraphClustering({"graph": {"name": "nystrom-landmarks"},
                             "solver": {"name": "nystrom"},
                             "rounding": {"name": "kmeans", "normalize_rows": True}},
                            n_clusters=3, random_state=0, anchors=X[::6])
    labels = model.fit_predict(X)
    assert _acc(y, labels) == 1.0
    assert model.solution_.info["n_landmarks"] == 15


@pytest.mark.parametrize("graph_name", ["ongr-anchor", "gaussian-anchor"])
def test_solver_after_a_builtin_anchor_graph(graph_name):
    _need("graph", graph_name)
    _need("rounding", "kmeans")
    X, y = make_blobs(90, 5, 3, seed=8)
    model = GraphClustering({"graph": {"name": graph_name}, "solver": {"name": "nystrom"},
                             "rounding": {"name": "kmeans"}}, n_clusters=3, random_state=0,
                            anchors=X[::5])
    assert _acc(y, model.fit_predict(X)) == 1.0
    assert model.solution_.info["bandwidth_rule"] == "self-tuning"


@pytest.mark.parametrize("anchors_name", ["bkhk", "kmeans", "random"])
def test_builtin_anchor_selectors_feed_the_landmarks(anchors_name):
    _need("anchors", anchors_name)
    _need("rounding", "kmeans")
    X, y = make_blobs(120, 4, 3, seed=9)
    model = GraphClustering({"anchors": {"name": anchors_name, "n_anchors": 16},
                             "graph": {"name": "nystrom-landmarks"},
                             "solver": {"name": "nystrom"},
                             "rounding": {"name": "kmeans", "normalize_rows": True}},
                            n_clusters=3, random_state=0)
    labels = model.fit_predict(X)
    assert _acc(y, labels) == 1.0
    again = GraphClustering(model.spec, n_clusters=3, random_state=0).fit_predict(X)
    np.testing.assert_array_equal(labels, again)


def test_preset_composes_and_runs():
    _need("anchors", "random")
    _need("rounding", "kmeans")
    X, y = make_blobs(150, 4, 3, seed=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 500 landmarks > 150 points: clamped
        labels = GraphClustering("nystrom", n_clusters=3, random_state=0).fit_predict(X)
    assert _acc(y, labels) == 1.0


def test_digits_accuracy_near_the_reference():
    """On digits, Nyström with 300 random landmarks lands near dask-ml's Nyström
    spectral clustering (ACC 0.776, NMI 0.734 with 500 samples; REFERENCE-FACTS)."""
    _need("rounding", "kmeans")
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    idx = np.random.default_rng(0).choice(len(X), 300, replace=False)
    model = GraphClustering({"graph": {"name": "nystrom-landmarks"},
                             "solver": {"name": "nystrom"},
                             "rounding": {"name": "kmeans", "normalize_rows": True}},
                            n_clusters=10, random_state=0, anchors=X[idx])
    assert _acc(y, model.fit_predict(X)) > 0.72


@pytest.mark.parametrize("sigma", [1e-300, 5e-324, 1e200])
def test_kernel_at_extreme_bandwidths_is_finite(sigma):
    """``2σ²`` under- or overflowing: the kernel stays finite, in [0, 1] (no NaN from
    ``0/0``); distinct points get 0 at a vanishing σ (a coinciding pair keeps 1 unless
    its computed squared distance is a round-off above zero)."""
    rng = np.random.default_rng(0)
    L = rng.normal(size=(6, 3))
    X = np.vstack([L[:2], rng.normal(size=(4, 3))])
    K = gaussian_kernel(X, L, sigma)
    assert np.isfinite(K).all() and ((K >= 0) & (K <= 1)).all()
    zero = np.zeros((1, 3))
    assert gaussian_kernel(zero, zero, sigma)[0, 0] == 1.0  # exactly coinciding
    if sigma < 1:
        assert K[2:].max() == 0.0
    else:
        np.testing.assert_allclose(K, 1.0)
