"""The approximate K-nearest-representative search on several threads (issue 48): the
same graph as on one, and BLAS's thread limit restored."""

import numpy as np
from threadpoolctl import threadpool_info

import graphclust
from graphclust_plugins.uspec import graph_knr_bipartite as knr


def _blas_limits():
    return [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]


def test_threaded_blocks_give_the_one_thread_graph(monkeypatch):
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(c, 1.0, size=(2500, 6)) for c in (0, 4)])
    U = X[rng.choice(X.shape[0], 150, replace=False)]
    anchors = graphclust.Anchors(U)
    graphs = {}
    before = _blas_limits()
    for threads in (1, 2):
        monkeypatch.setattr(knr, "blas_threads", lambda t=threads: t)
        g = knr.KNRBipartiteGraph().build(X, anchors, graphclust.Context(seed=1))
        assert g.state.index is not None  # the approximate path
        graphs[threads] = g
    assert _blas_limits() == before
    a, b = graphs[1].Z, graphs[2].Z
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.data, b.data)
    assert graphs[1].state.sigma == graphs[2].state.sigma
    # and the rows are those of one search over all rows
    idx, dist = knr.KNRBipartiteGraph()._search(X, U, 5, graphs[1].state.index)
    np.testing.assert_array_equal(np.sort(a.indices.reshape(-1, 5), 1), np.sort(idx, 1))
