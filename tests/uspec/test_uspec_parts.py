"""The uspec parts: contract kit, hybrid representatives, tcut solver, preset end to end."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

import graphclust
from graphclust.testing import check_part
from graphclust_plugins.uspec.anchors_hybrid import HybridAnchors
from graphclust_plugins.uspec.graph_knr_bipartite import KNRBipartiteGraph
from graphclust_plugins.uspec.solver_tcut import TransferCut
from graphclust_plugins.uspec._tcut import transfer_cut

# well-separated blobs give one bipartite component per blob (the pipeline warns)
pytestmark = pytest.mark.filterwarnings("ignore::graphclust.DisconnectedGraphWarning")


@pytest.mark.parametrize("cls,params", [
    (HybridAnchors, {}), (HybridAnchors, {"n_anchors": 7, "candidate_factor": 2}),
    (KNRBipartiteGraph, {}), (KNRBipartiteGraph, {"search": "exact"}),
    (KNRBipartiteGraph, {"n_neighbors": 2, "candidates": 1, "n_groups": 2}),
    (TransferCut, {}), (TransferCut, {"n_components": 2}),
])
def test_contract(cls, params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", graphclust.GraphClustWarning)
        check_part(cls, **params)


def test_registered_and_preset():
    reg = graphclust.get_registry()
    assert reg.anchors.get("hybrid") is HybridAnchors
    assert reg.graphs.get("knr-bipartite") is KNRBipartiteGraph
    assert reg.solvers.get("tcut") is TransferCut
    spec = reg.presets.get("uspec")
    assert spec["anchors"]["n_anchors"] == 1000 and spec["graph"]["n_neighbors"] == 5
    assert spec["rounding"]["normalize_rows"] is True
    # the most modular of three starts; the authors' variant is one run
    assert graphclust.compose("uspec").starts == 3
    assert graphclust.compose("uspec-paper").starts == 1


def test_hybrid_sizes_and_determinism():
    X = np.random.default_rng(0).normal(size=(2000, 5))
    ctx = graphclust.Context(seed=3)
    a = HybridAnchors(n_anchors=50).select(X, ctx)
    b = HybridAnchors(n_anchors=50).select(X, ctx)
    assert a.points.shape == (50, 5) and a.info["n_candidates"] == 500
    np.testing.assert_array_equal(a.points, b.points)
    c = HybridAnchors(n_anchors=50).select(X, graphclust.Context(seed=4))
    assert not np.array_equal(a.points, c.points)
    # all points become candidates when n < factor·p; p = n returns the points themselves
    assert HybridAnchors(n_anchors=500).select(X, ctx).info["n_candidates"] == 2000
    with pytest.warns(graphclust.GraphClustWarning, match="exceeds"):
        same = HybridAnchors(n_anchors=5000).select(X[:30], ctx)
    np.testing.assert_array_equal(same.points, X[:30])


def test_hybrid_representatives_are_kmeans_centres_of_candidates():
    X = np.random.default_rng(1).normal(size=(1000, 3))
    ctx = graphclust.Context(seed=0)
    a = HybridAnchors(n_anchors=20, max_iter=50).select(X, ctx)
    assert a.info["n_iter"] < 50  # converged: the last assignment repeated the previous
    # every representative is the mean of the candidates nearest to it (a k-means fixed
    # point); the candidates are the draw documented in HybridAnchors
    C = X[np.sort(ctx.rng("anchors.hybrid").choice(1000, 200, replace=False))]
    nearest = ((C[:, None, :] - a.points[None, :, :]) ** 2).sum(2).argmin(1)
    for j, u in enumerate(a.points):
        np.testing.assert_allclose(u, C[nearest == j].mean(0), rtol=1e-12, atol=1e-12)
    # not raw samples, except a candidate alone in its cluster (its own mean)
    for j, u in enumerate(a.points):
        if (np.abs(X - u).sum(1) < 1e-12).any():
            assert (nearest == j).sum() == 1


def test_tcut_solver_is_transfer_cut_of_the_graph():
    X, _ = make_blobs(300, centers=4, n_features=3, random_state=0)
    U = HybridAnchors(n_anchors=40).select(X, graphclust.Context(seed=0))
    g = KNRBipartiteGraph().build(X, U, graphclust.Context(seed=0))
    scaled = TransferCut(eigen_scaling=True).solve(g, None, 4, graphclust.Context(seed=0))
    ref = transfer_cut(g.Z, 4, random_state=graphclust.Context(seed=0).seed_for("solver.tcut"))
    np.testing.assert_array_equal(scaled.embedding, ref.point_embedding)
    np.testing.assert_allclose(scaled.info["eigenvalues"][0], 0.0, atol=1e-10)
    # default (the authors' USPEC.m): D_X⁻¹ B v and v, without the 1 / (1 − γ) factor
    sol = TransferCut().solve(g, None, 4, graphclust.Context(seed=0))
    B = g.Z.toarray()
    np.testing.assert_allclose(sol.anchor_embedding, ref.v, atol=1e-12)
    np.testing.assert_allclose(sol.embedding, (B / B.sum(1, keepdims=True)) @ ref.v,
                               atol=1e-12)


def _blobs(n=1500, k=5, seed=0):
    return make_blobs(n, centers=k, n_features=6, cluster_std=1.0, random_state=seed)


def test_preset_clusters_blobs_same_seed_same_labels():
    X, y = _blobs()
    a = graphclust.GraphClustering("uspec", n_clusters=5, random_state=7,
                                   anchors={"n_anchors": 100}).fit(X)
    b = graphclust.GraphClustering("uspec", n_clusters=5, random_state=7,
                                   anchors={"n_anchors": 100}).fit(X)
    assert adjusted_rand_score(y, a.labels_) > 0.95
    np.testing.assert_array_equal(a.labels_, b.labels_)


def test_predict_labels_training_points_as_fit():
    """Rule: predict recomputes each point's row of B with the fitted search structure and
    σ (identical rows) and the rounding normalises rows, which removes the degree factor of
    the out-of-sample rows, so training points get their fit labels."""
    X, _ = _blobs(seed=1)
    est = graphclust.GraphClustering("uspec", n_clusters=5, random_state=0,
                                     anchors={"n_anchors": 150}).fit(X)
    assert est.graph_.state.index is not None  # the approximate path is exercised
    np.testing.assert_array_equal(est.predict(X), est.labels_)
    Xn, yn = _blobs(n=300, seed=1)  # new points from the same blobs
    assert adjusted_rand_score(yn, est.predict(Xn)) > 0.95


def test_approx_and_exact_agree_on_separated_blobs():
    X, y = make_blobs(2000, centers=6, n_features=5, cluster_std=0.5, center_box=(-50, 50),
                      random_state=2)
    labs = {}
    for search in ("approx", "exact"):
        est = graphclust.GraphClustering("uspec", n_clusters=6, random_state=0,
                                         anchors={"n_anchors": 200},
                                         graph={"search": search}).fit(X)
        labs[search] = est.labels_
    assert adjusted_rand_score(labs["approx"], labs["exact"]) == 1.0
    assert adjusted_rand_score(y, labs["approx"]) == 1.0


def test_tiny_n_below_p():
    X, y = make_blobs(30, centers=3, n_features=4, cluster_std=0.3, random_state=0)
    with pytest.warns(graphclust.GraphClustWarning, match="n_anchors=1000 exceeds"):
        est = graphclust.GraphClustering("uspec", n_clusters=3, random_state=0).fit(X)
    assert est.anchors_.n_anchors == 30
    assert adjusted_rand_score(y, est.labels_) == 1.0
    np.testing.assert_array_equal(est.predict(X), est.labels_)
    with pytest.raises(graphclust.InputError, match="fewer than n_clusters"):
        graphclust.GraphClustering("uspec", n_clusters=5).fit(X[:3])


def test_uint8_input_runs_in_float32():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 256, size=(400, 16)).astype(np.uint8)
    est = graphclust.GraphClustering("uspec", n_clusters=4, random_state=0,
                                     anchors={"n_anchors": 60}).fit(X)
    assert est.anchors_.points.dtype == np.float32
    assert set(np.unique(est.labels_)) == {0, 1, 2, 3}


@pytest.mark.parametrize("spec", [
    # tcut on another bundle's anchor graph (row-stochastic Z: D_X = I)
    {"anchors": {"name": "kmeans", "n_anchors": 60}, "graph": {"name": "gaussian-anchor"},
     "solver": {"name": "tcut"}, "rounding": {"name": "kmeans", "normalize_rows": True}},
    # the bipartite graph feeding the common spectral solver, on BKHK anchors
    {"anchors": {"name": "bkhk", "n_anchors": 64}, "graph": {"name": "knr-bipartite"},
     "solver": {"name": "spectral"}, "rounding": {"name": "kmeans", "normalize_rows": True}},
])
def test_parts_compose_with_other_bundles(spec):
    X, y = _blobs(n=800, k=4, seed=3)
    est = graphclust.GraphClustering(spec, n_clusters=4, random_state=0).fit(X)
    assert adjusted_rand_score(y, est.labels_) > 0.95
    np.testing.assert_array_equal(est.predict(X), est.labels_)


def test_bundle_init_imports_no_part_module():
    import subprocess
    import sys

    code = ("import sys, graphclust_plugins.uspec; "
            "print(sorted(m for m in sys.modules if m.startswith('graphclust_plugins.uspec.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_hybrid_one_fit_equals_one_fit_per_iteration():
    """Issue 48: the representatives' k-means runs as one scikit-learn fit; it gives the
    centres of the earlier loop of one-iteration fits, each started from the last."""
    from sklearn.cluster import KMeans

    from graphclust.numerics import fixed_threads

    X = np.random.default_rng(2).random((3000, 12)).astype(np.float32)
    ctx = graphclust.Context(seed=5)
    got = HybridAnchors(n_anchors=60, max_iter=10).select(X, ctx)
    C = X[np.sort(ctx.rng("anchors.hybrid").choice(3000, 600, replace=False))]
    seed = ctx.seed_for("anchors.hybrid")
    with fixed_threads():  # as the part: one thread, no per-thread partial sums
        km = KMeans(60, init="random", n_init=1, max_iter=1, tol=0.0, random_state=seed).fit(C)
        for _ in range(got.info["n_iter"] - 1):
            km = KMeans(60, init=km.cluster_centers_, n_init=1, max_iter=1, tol=0.0,
                        random_state=seed).fit(C)
    np.testing.assert_array_equal(got.points, km.cluster_centers_)
