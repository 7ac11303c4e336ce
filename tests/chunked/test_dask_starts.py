"""A spec's ``starts`` on Dask: the modularity of each start summed over the blocks, the
same start kept and the same labels as in memory, on a LocalCluster, for two chunkings."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import graphclust

SPEC = {"anchors": {"name": "hybrid", "n_anchors": 150, "candidate_factor": 10},
        "graph": {"name": "knr-bipartite", "n_neighbors": 5},
        "solver": {"name": "tcut"},
        "rounding": {"name": "kmeans", "n_init": 1, "init": "random"},
        "starts": 3}


@pytest.mark.slow  # 4 s; the quick tier keeps test_dask_sampled's density-3-starts
def test_distributed_starts_equal_in_memory_for_two_chunkings(dask_client, as_dask):
    X, _ = make_blobs(3000, 6, centers=8, cluster_std=2.0, random_state=2)
    ref = graphclust.GraphClustering(SPEC, n_clusters=8, random_state=4).fit(X)
    assert len(set(np.round(ref.result_.start_modularity, 10))) > 1  # distinct starts
    for rows in (700, 1300):
        got = graphclust.GraphClustering(SPEC, n_clusters=8, random_state=4).fit(
            as_dask(X, rows))
        np.testing.assert_allclose(got.result_.start_modularity,
                                   ref.result_.start_modularity, rtol=1e-9)
        assert got.result_.start == ref.result_.start
        np.testing.assert_array_equal(got.labels_.compute(), ref.labels_)
        assert got.resolved_spec_["starts"] == 3
        # the kept start's fitted parts place new points as in memory
        np.testing.assert_array_equal(got.predict(as_dask(X[:900], 400)).compute(),
                                      ref.predict(X[:900]))
