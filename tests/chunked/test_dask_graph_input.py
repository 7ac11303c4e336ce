"""A Dask collection as the graph of ``GraphClustering(graph="precomputed")``.

A dask DataFrame of edges and a dask array of the rows of ``A`` are assembled into one
CSR matrix block by block on a real ``distributed.LocalCluster`` (the module's 2-worker
cluster); the reference is the same graph handed over in memory (the edge-list rule of
``graphclust.io.read_graph``, a scipy matrix): the same matrix, node ids and labels.
What cannot be read is refused before any work, by graphclust's own error.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from graphclust import GraphClustering, InputError
from graphclust._graphio import edges_to_graph


def require_dask():
    pytest.importorskip("dask.array", reason="needs the [dask] extra")
    pytest.importorskip("distributed", reason="needs the [dask] extra")


def planted_edges(n=120, blocks=3, p_in=0.2, p_out=0.01, seed=0):
    """Undirected edges (i < j) of a planted partition, with weights in [1, 2)."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(blocks), n // blocks)
    P = np.where(y[:, None] == y[None, :], p_in, p_out)
    i, j = np.nonzero(np.triu(rng.random((n, n)) < P, k=1))
    return i, j, rng.uniform(1.0, 2.0, i.size), y


@pytest.fixture
def dd():
    require_dask()
    return pytest.importorskip("dask.dataframe")


def test_an_edge_dataframe_gives_the_in_memory_edge_list_fit(dask_client, dd):
    import pandas as pd

    i, j, w, y = planted_edges()
    ids = np.array([f"v{k:03d}" for k in range(y.size)])
    frame = pd.DataFrame({"source": ids[i], "target": ids[j], "weight": w,
                          "note": "ignored"})
    G = dd.from_pandas(frame, npartitions=3)
    model = GraphClustering("leiden", graph="precomputed", random_state=0).fit(G)
    A, nodes = edges_to_graph(ids[i], ids[j], w)
    ref = GraphClustering("leiden", graph="precomputed", random_state=0).fit(A)
    assert np.array_equal(np.asarray(model.nodes_), nodes)
    assert (model.graph_.adjacency != ref.graph_.adjacency).nnz == 0
    assert np.array_equal(model.labels_, ref.labels_)
    truth = dict(zip(ids, y))
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score([truth[v] for v in model.nodes_], model.labels_) > 0.9


def test_integer_ids_and_no_weight_column(dask_client, dd):
    import pandas as pd

    i, j, _, _ = planted_edges(seed=1)
    G = dd.from_pandas(pd.DataFrame({"source": i * 10, "target": j * 10}), npartitions=4)
    model = GraphClustering("graph-spectral", graph="precomputed", n_clusters=3,
                            random_state=0).fit(G)
    A, nodes = edges_to_graph(i * 10, j * 10)
    ref = GraphClustering("graph-spectral", graph="precomputed", n_clusters=3,
                          random_state=0).fit(A)
    assert np.array_equal(np.asarray(model.nodes_), nodes) and nodes.dtype.kind == "i"
    assert np.array_equal(model.labels_, ref.labels_)


@pytest.mark.parametrize("sparse_chunks", [False, True])
def test_a_dask_array_of_rows_gives_the_scipy_fit(dask_client, sparse_chunks):
    require_dask()
    import dask.array as da

    i, j, w, _ = planted_edges(seed=2)
    A = sp.csr_array((np.r_[w, w], (np.r_[i, j], np.r_[j, i])), shape=(120, 120))
    dense = A.toarray()
    G = da.from_array(dense, chunks=(50, 70))  # several row and column blocks
    if sparse_chunks:
        G = G.map_blocks(sp.csr_matrix, dtype=dense.dtype)
    model = GraphClustering("leiden", graph="precomputed", random_state=0).fit(G)
    ref = GraphClustering("leiden", graph="precomputed", random_state=0).fit(A)
    assert model.nodes_ is None
    assert (model.graph_.adjacency != A).nnz == 0
    assert np.array_equal(model.labels_, ref.labels_)


def test_what_cannot_be_read_is_refused(dask_client, dd):
    import dask.array as da
    import pandas as pd

    frame = pd.DataFrame({"src": [0, 1], "dst": [1, 2]})
    with pytest.raises(InputError, match=r"no column 'source', 'target' \(its columns: src, "
                                         r"dst\)"):
        GraphClustering(graph="precomputed").fit(dd.from_pandas(frame, npartitions=1))
    with pytest.raises(InputError, match="got a .*Series"):
        GraphClustering(graph="precomputed").fit(
            dd.from_pandas(frame, npartitions=1)["src"])
    nulls = pd.DataFrame({"source": ["a", None], "target": ["b", "c"]})
    with pytest.raises(InputError, match="column 'source' holds a null node id"):
        GraphClustering(graph="precomputed").fit(dd.from_pandas(nulls, npartitions=1))
    negative = pd.DataFrame({"source": [0, 1], "target": [1, 2], "weight": [1.0, -2.0]})
    with pytest.raises(InputError, match="row 1: weight -2.0; weights must be finite"):
        GraphClustering(graph="precomputed").fit(dd.from_pandas(negative, npartitions=1))
    with pytest.raises(InputError, match="square n x n matrix, got a dask array of shape"):
        GraphClustering(graph="precomputed").fit(da.zeros((4, 5), chunks=2))
    unknown = da.ones((6, 6), chunks=3)
    unknown = unknown[unknown[:, 0] > 0]
    with pytest.raises(InputError, match="chunk sizes are unknown"):
        GraphClustering(graph="precomputed").fit(unknown)
    nan = np.ones((4, 4)) - np.eye(4)
    nan[0, 1] = np.nan
    with pytest.raises(InputError, match="NaN or infinite"):
        GraphClustering(graph="precomputed").fit(da.from_array(nan, chunks=2))
