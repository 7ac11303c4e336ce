"""k estimated by the ``on-sample`` adapter: its rounding's estimate on the sample's
solution (the density tree of the sample's layout), the same in memory and on Dask.

The reference is the obvious one: the rounding's own ``estimate_k`` (and ``round``) on the
sample rows alone. The solver here is the ``features`` solver with ``uses_k = False`` (a
fixed-width embedding, as ``umap-layout``'s) so no layout is fitted in the quick tier;
the UMAP layout itself runs in the slow tier.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import graphclust
from graphclust import Context, Solution
from graphclust._kselect import estimating_stage
from graphclust_plugins.genie.solver_features import FeaturesSolver
from graphclust_plugins.manifold.adapter_on_sample import OnSampleAdapter
from graphclust_plugins.manifold.anchors_sample import SampleAnchors
from graphclust_plugins.manifold.graph_sample_knn import SampleKNNGraph
from graphclust_plugins.manifold.rounding_density import DensityRounding

pytestmark = pytest.mark.filterwarnings("ignore::graphclust.DisconnectedGraphWarning")


class FixedFeatures(FeaturesSolver):
    """``features`` declared k-free (its embedding is the rows, whatever ``k``)."""

    uses_k = False


def sample_pipeline(S, rounding=None, solver=None):
    return graphclust.Pipeline(
        anchors=SampleAnchors(n_anchors=S),
        graph=SampleKNNGraph(n_neighbors=5, method="exact"),
        adapter=OnSampleAdapter(graph={"name": "fuzzy-knn", "n_neighbors": 10,
                                       "method": "exact"},
                                rounding=rounding),
        solver=solver or FixedFeatures(),
        rounding=graphclust.resolve_part({"name": "argmax"}, "rounding"))


def blobs(n, k, seed=0):
    X, y = make_blobs(n, 3, centers=k, cluster_std=0.4, center_box=(-20, 20),
                      random_state=seed)
    return X, y


def test_the_adapter_estimates_when_the_solver_ignores_k_and_its_rounding_can():
    pipe = sample_pipeline(100)
    assert estimating_stage(pipe) == ("adapter", pipe.adapter)
    # a k-using solver, or a rounding that cannot estimate: no part can (the placement
    # graph sample-knn offers no estimate), refused before any work
    pipe.solver = graphclust.resolve_part({"name": "spectral"}, "solver")
    assert pipe.solver.uses_k
    genie = sample_pipeline(100, rounding={"name": "genie"})
    assert not genie.adapter.can_estimate_k()
    for p in (pipe, genie):
        assert estimating_stage(p) is None
        with pytest.raises(graphclust.SpecError, match="adapter 'on-sample'"):
            p.run(np.zeros((5, 2)), n_clusters=None, ctx=Context(0))


@pytest.mark.parametrize("k_true", [1, 3, 5])
def test_estimate_and_lift_equal_the_rounding_on_the_sample(k_true):
    """estimate_k is the density rounding's estimate on the sample's solution; the lift
    that follows cuts the sample with that k using the tree already built."""
    X, _ = blobs(300, k_true, seed=k_true)
    sol = Solution(embedding=X.copy())
    ref = DensityRounding()
    want = ref.estimate_k(sol, 1, 20, Context(0))
    want_labels = ref.round(sol, want.k, Context(0))
    adapter = OnSampleAdapter()
    adapted = graphclust.Adapted(graphclust.AffinityGraph(np.eye(300)), X, 20)
    got = adapter.estimate_k(sol, adapted, 1, 20, Context(0))
    assert (got.k, got.scores, got.method) == (want.k, want.scores, "density-tree")
    assert got.k == k_true
    assert "adapter 'on-sample'" in got.part
    kept = adapter._estimator[1]
    Z = graphclust.AnchorGraph(np.eye(300), anchors=None)
    lifted = adapter.lift(sol, Z, graphclust.Adapted(adapted.graph, X, got.k), Context(0))
    assert adapter.rounding_ is kept  # the tree of estimate_k, not a second one
    np.testing.assert_array_equal(adapter.sample_labels_, want_labels)
    np.testing.assert_array_equal(lifted.soft.argmax(axis=1), want_labels)


def test_pipeline_without_k_estimates_on_the_sample_rows():
    """n > S: the fit's k is the density tree's estimate on the sample rows alone, and
    every row is labelled with one of those k clusters."""
    X, y = blobs(1000, 4, seed=7)
    pipe = sample_pipeline(250)
    res = pipe.run(X, n_clusters=None, ctx=Context(seed=2))
    idx = pipe.anchors.sample_rows(X.shape[0], Context(seed=2))
    ref = DensityRounding().estimate_k(Solution(embedding=X[idx]), 1, 20, Context(0))
    assert res.k_selection.k == ref.k == 4
    assert res.k_selection.scores == ref.scores
    assert np.unique(res.labels).size == 4
    from sklearn.metrics import adjusted_rand_score
    assert adjusted_rand_score(y, res.labels) > 0.99
    # given k: the same labels as the estimate's (the estimate changes nothing else)
    given = sample_pipeline(250).run(X, n_clusters=4, ctx=Context(seed=2))
    np.testing.assert_array_equal(given.labels, res.labels)


def test_no_structure_on_the_sample_is_one_cluster_with_the_warning():
    X = np.random.default_rng(0).standard_normal((400, 3))
    with pytest.warns(graphclust.NoClusterStructureWarning):
        res = sample_pipeline(200).run(X, n_clusters=None, ctx=Context(seed=0))
    assert res.k_selection.k == 1 and np.unique(res.labels).size == 1


@pytest.mark.slow  # imports and runs Dask (synchronous scheduler): 4 s
def test_chunked_estimate_equals_in_memory(as_dask_threads):
    """The chunked run estimates on the same sample: the same selection and labels."""
    X, _ = blobs(900, 3, seed=4)
    mem = sample_pipeline(300).run(X, n_clusters=None, ctx=Context(seed=5))
    from graphclust._dask._run import fit_chunked

    got = fit_chunked(sample_pipeline(300), as_dask_threads(X, 250), None, Context(seed=5))
    assert got.k_selection.k == mem.k_selection.k == 3
    assert got.k_selection.scores == mem.k_selection.scores
    np.testing.assert_array_equal(np.asarray(got.labels.compute()), mem.labels)


@pytest.fixture
def as_dask_threads():
    dask = pytest.importorskip("dask", reason="needs the [dask] extra")
    import dask.array as da

    with dask.config.set(scheduler="synchronous"):
        yield lambda X, rows: da.from_array(np.asarray(X), chunks=(rows, X.shape[1]))


@pytest.mark.slow  # UMAP layouts (numba) and a LocalCluster
def test_umap_sample_pipeline_without_k_equals_on_a_local_cluster():
    pytest.importorskip("distributed", reason="needs the [dask] extra")
    import dask.array as da
    from distributed import Client, LocalCluster

    X, _ = make_blobs(2500, 6, centers=4, cluster_std=1.5, random_state=5)
    spec = {"anchors": {"name": "sample", "n_anchors": 700},
            "graph": {"name": "sample-knn", "n_neighbors": 10, "method": "exact"},
            "adapter": {"name": "on-sample",
                        "graph": {"name": "fuzzy-knn", "n_neighbors": 15, "method": "exact"},
                        "rounding": {"name": "density"}},
            "solver": {"name": "umap-layout", "n_components": 5, "min_dist": 0.0,
                       "n_epochs": 100},
            "rounding": {"name": "argmax"}}
    ref = graphclust.GraphClustering(spec, random_state=3).fit(X)
    assert ref.n_clusters_ == 4 and ref.k_selection_.method == "density-tree"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster):
        got = graphclust.GraphClustering(spec, random_state=3).fit(
            da.from_array(X, chunks=(400, 6)))
        assert got.n_clusters_ == ref.n_clusters_
        assert got.k_selection_.scores == ref.k_selection_.scores
        np.testing.assert_array_equal(got.labels_.compute(), ref.labels_)
