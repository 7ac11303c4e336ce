"""Fit-on-a-sample pipelines on Dask: the same seed gives the labels of the in-memory fit,
on a real distributed.LocalCluster and on threads, for two chunkings; predict per block."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import graphclust

pytestmark = pytest.mark.filterwarnings("ignore::graphclust.DisconnectedGraphWarning")


def sampled_spec(S, rounding, n_starts=1):
    return {"anchors": {"name": "sample", "n_anchors": S},
            "graph": {"name": "sample-knn", "n_neighbors": 10, "method": "exact"},
            "adapter": {"name": "on-sample",
                        "graph": {"name": "fuzzy-knn", "n_neighbors": 15, "method": "exact"},
                        "rounding": rounding, "n_starts": n_starts},
            "solver": {"name": "umap-layout", "n_components": 5, "min_dist": 0.0,
                       "n_epochs": 100},
            "rounding": {"name": "argmax"}}


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(2500, 6, centers=4, cluster_std=1.5, random_state=5)
    return X, y


@pytest.mark.parametrize("rounding, n_starts",
                         [({"name": "density"}, 1),
                          pytest.param({"name": "density"}, 3, marks=pytest.mark.slow),
                          pytest.param({"name": "genie"}, 1, marks=pytest.mark.slow)],
                         ids=["density", "density-3-starts", "genie"])
def test_distributed_labels_equal_in_memory_for_two_chunkings(blobs, dask_client, as_dask,
                                                              rounding, n_starts):
    X, _ = blobs
    spec = sampled_spec(700, rounding, n_starts)
    ref = graphclust.GraphClustering(spec, n_clusters=4, random_state=3).fit(X)
    for rows in (400, 1100):
        got = graphclust.GraphClustering(spec, n_clusters=4, random_state=3).fit(
            as_dask(X, rows))
        np.testing.assert_array_equal(got.labels_.compute(), ref.labels_)
        if n_starts > 1:  # the same start kept, on the same scores
            assert got.pipeline_.adapter.start_ == ref.pipeline_.adapter.start_
            assert (got.pipeline_.adapter.start_modularity_
                    == ref.pipeline_.adapter.start_modularity_)
        np.testing.assert_array_equal(got.predict(as_dask(X[:600], 250)).compute(),
                                      ref.labels_[:600])


@pytest.mark.slow
def test_threads_and_genie_preset_equal_in_memory(blobs, as_dask):
    dask = pytest.importorskip("dask", reason="needs the [dask] extra")

    X, _ = blobs
    Xs = np.vstack([X] * 9)  # 22 500 rows > the genie preset's S = 20 000
    ref = graphclust.GraphClustering("genie", n_clusters=4, random_state=1).fit(Xs)
    assert ref.pipeline_.adapter.sample_labels_.shape == (20_000,)
    with dask.config.set(scheduler="threads"):
        for rows in (5000, 7777):
            got = graphclust.GraphClustering("genie", n_clusters=4, random_state=1).fit(
                as_dask(Xs, rows))
            labels = got.labels_.compute()
            # the standard scaling's column statistics are summed per chunk (round-off
            # only): every row but near-ties keeps its label
            assert np.mean(labels == ref.labels_) > 0.999
