"""knr-bipartite searches each chunk once in the chunked execution (σ and the rows of
``B`` come from the same kept search), and gives the in-memory graph."""

from __future__ import annotations

import threading

import graphclust as gc
import numpy as np
import pytest
from graphclust_plugins.uspec.graph_knr_bipartite import KNRBipartiteGraph

pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install 'graphclust[dask]'")
pytest.importorskip("distributed", reason="needs the [dask] extra: pip install 'graphclust[dask]'")


@pytest.mark.parametrize("search", ["approx", "exact"])
def test_one_search_per_chunk(search, digits, as_dask, dask_client, monkeypatch):
    """6 chunks, 6 searches (in-process workers share this process, so the count sees
    them); σ and the training rows equal the in-memory graph's."""
    X, _ = digits
    calls = []
    lock = threading.Lock()
    original = KNRBipartiteGraph._search

    def counting(self, Xb, U, k, index):
        with lock:
            calls.append(Xb.shape[0])
        return original(self, Xb, U, k, index)

    kw = dict(n_clusters=10, random_state=0, anchors={"n_anchors": 200},
              graph={"search": search}, overrides={"starts": 1})  # one run's searches
    mem = gc.GraphClustering("uspec", **kw).fit(X)
    monkeypatch.setattr(KNRBipartiteGraph, "_search", counting)
    chunked = gc.GraphClustering("uspec", **kw).fit(as_dask(X, 300))
    assert len(calls) == 6 and sum(calls) == X.shape[0], calls  # not 12 (σ, then rows)
    monkeypatch.setattr(KNRBipartiteGraph, "_search", original)
    assert chunked.graph_.state.sigma == pytest.approx(mem.graph_.state.sigma, rel=1e-6)
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)


def test_kept_search_rows_equal_transform(digits):
    """The one-search methods give prepare_chunked()'s σ and transform()'s rows, for any
    cut of the rows (no Dask: blocks summed by hand)."""
    from graphclust.chunks import Block, InMemoryChunks
    from graphclust._parts import Context

    X, _ = digits
    X = X.astype(np.float64)
    sel = gc.get_registry().anchors.get("kmeans")(n_anchors=60)
    A = sel.select(X, Context(seed=0))
    builder = KNRBipartiteGraph()
    ref = builder.prepare_chunked(A, InMemoryChunks(X, block_rows=500), Context(seed=0))
    t0 = builder.prepare_search(A, Context(seed=0))
    found = [builder.search_block(X[i:i + 400], t0) for i in range(0, X.shape[0], 400)]

    class Kept:
        def sum(self, fn):
            total = None
            for f in found:
                v = fn(Block(np.zeros((0, 0)), f))
                total = v if total is None else (total[0] + v[0], total[1] + v[1])
            return total

    t = builder.finish_search(t0, Kept())
    assert t.state.sigma == pytest.approx(ref.state.sigma, rel=1e-12)
    rows = [builder.rows_from_search(f, t).toarray() for f in found]
    np.testing.assert_allclose(np.vstack(rows), builder.transform(X, ref).toarray(),
                               rtol=1e-12)
