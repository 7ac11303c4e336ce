"""ONGR on Dask: its anchors (``capped``), graph (``ongr-anchor``) and solver (``F`` and
``G`` kept per chunk on the workers) run chunk-wise and give the in-memory labels."""

from __future__ import annotations

import graphclust as gc
import numpy as np
import pytest
from graphclust.chunks import ANCHOR_SAMPLE_MIN, ANCHOR_SAMPLE_PER_ANCHOR, sample_size
from graphclust_plugins.ongr.anchors_capped import CappedAnchors
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install 'graphclust[dask]'")
pytest.importorskip("distributed", reason="needs the [dask] extra: pip install 'graphclust[dask]'")


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 10**7), st.integers(1, 3000), st.floats(0.001, 1.0))
def test_capped_for_rows_gives_the_in_memory_count_on_its_sample(n, cap, fraction):
    """On the anchor sample of the chunked run (all rows, or at least 20 per anchor), the
    capped selector fixed from all n rows picks as many anchors as in memory on n rows."""
    sel = CappedAnchors(n_anchors=cap, max_fraction=fraction)
    fixed = sel.for_rows(n)
    m = fixed.n_anchors
    size = sample_size(n, m, per_unit=ANCHOR_SAMPLE_PER_ANCHOR, minimum=ANCHOR_SAMPLE_MIN)
    assert m == sel.n_anchors_for(n)
    assert fixed.n_anchors_for(size) == sel.n_anchors_for(n)


@pytest.mark.parametrize("base", ["kmeans", "random"])
def test_ongr_graph_with_chunkwise_solver_equals_in_memory(base, digits, as_dask,
                                                           dask_client):
    """ONGR's presets' anchors and graph with LSC's solver: same seed, same labels; σ
    (mean distance to the s-th nearest anchor) summed over chunks agrees to round-off."""
    X, _ = digits
    spec = {"anchors": {"name": "capped", "base": {"name": base}, "n_anchors": 1000,
                        "max_fraction": 0.1},
            "graph": {"name": "ongr-anchor", "n_neighbors": 5},
            "solver": {"name": "spectral"}, "rounding": {"name": "kmeans"}}
    mem = gc.GraphClustering(spec, n_clusters=10, random_state=0).fit(X)
    chunked = gc.GraphClustering(spec, n_clusters=10, random_state=0).fit(as_dask(X, 300))
    assert chunked.anchors_.n_anchors == mem.anchors_.n_anchors == 179
    np.testing.assert_array_equal(chunked.anchors_.points, mem.anchors_.points)
    assert chunked.graph_.state.sigma == pytest.approx(mem.graph_.state.sigma, rel=1e-12)
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)


def _block_sum(block, shift):
    return block.X.sum(axis=0) + shift * block.X.shape[0]


def _keep_scaled(block, factor):
    return block.X * factor + block.start


def _scaled_sum(block):
    return block.state.sum(axis=0), block.state.shape[0]


def _rows_and_count(block):
    return block.state[:, :1] * 2, block.state.shape[0]


def _pick(block, local):
    return block.state[local]


def test_dask_state_api_equals_in_memory(dask_client):
    """``map`` / ``map_sum`` keep per-chunk values on the workers (``block.start`` is the
    chunk's first row), ``sum(state=)`` and ``on_sample`` read them, as
    :class:`InMemoryChunks` does; a released state refuses to be used."""
    import dask.array as da
    from graphclust.chunks import InMemoryChunks
    from graphclust._dask._chunks import DaskChunks

    X = np.random.default_rng(0).normal(size=(103, 3))
    rows = np.array([0, 5, 49, 50, 51, 102])
    out = []
    for chunks in (InMemoryChunks(X, block_rows=50), DaskChunks(da.from_array(X, chunks=(50, 3)))):
        assert chunks.sizes == (50, 50, 3)
        kept = chunks.map(_keep_scaled, 2.0)
        total = chunks.sum(_scaled_sum, state=kept)
        again, count = chunks.map_sum(_rows_and_count, state=kept)
        sample = chunks.on_sample(_pick, np.vstack, rows, state=kept)
        col = chunks.sum(_scaled_sum, state=again)
        out.append((total, count, sample, col))
        kept.release()
        with pytest.raises(ValueError, match="released"):
            chunks.sum(_scaled_sum, state=kept)
    (t0, c0, s0, k0), (t1, c1, s1, k1) = out
    ref = X * 2.0 + np.repeat([0, 50, 100], [50, 50, 3])[:, None]
    np.testing.assert_allclose(t0[0], ref.sum(axis=0))
    np.testing.assert_allclose(t1[0], t0[0])
    assert c0 == c1 == 103 and t1[1] == 103
    np.testing.assert_array_equal(s0, ref[rows])
    np.testing.assert_array_equal(s1, ref[rows])
    np.testing.assert_allclose(k1[0], k0[0])


@pytest.mark.parametrize("preset", [pytest.param("ongr-k", marks=pytest.mark.slow),  # 2.5 s
                                    "ongr-r"])
def test_ongr_preset_on_a_cluster_equals_in_memory(preset, digits, as_dask, dask_client):
    """The ONGR presets on a 2-worker cluster: labels equal to the in-memory fit's (the
    argmax of G, kept on the workers), the training embedding is F, and predict places
    new points as in memory."""
    X, _ = digits
    mem = gc.GraphClustering(preset, n_clusters=10, random_state=0).fit(X)
    chunked = gc.GraphClustering(preset, n_clusters=10, random_state=0).fit(as_dask(X, 300))
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)
    np.testing.assert_allclose(chunked.embedding_.compute(), mem.embedding_, atol=1e-9)
    assert chunked.solution_.n_iter == mem.solution_.n_iter
    np.testing.assert_allclose(chunked.solution_.anchor_soft, mem.solution_.anchor_soft,
                               atol=1e-10)
    np.testing.assert_array_equal(chunked.predict(X[:200]), mem.predict(X[:200]))


@pytest.mark.slow
def test_ongr_survives_a_lost_worker_mid_iteration(digits):
    """A worker holding per-chunk states is lost while ONGR iterates: the states are
    recomputed from their own chain of iterations and the labels are those of an
    undisturbed run."""
    import dask.array as da
    from distributed import Client, LocalCluster
    from test_dask_worker_loss import fit_while_killing

    X, _ = digits
    Xd = da.from_array(X, chunks=(200, 64))
    kw = {"n_clusters": 10, "random_state": 0, "solver": {"init": "svd"}}
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                           dashboard_address=":0")
    client = Client(cluster)
    try:
        reference = gc.GraphClustering("ongr-k", **kw).fit(Xd).labels_.compute()
        model, _ = fit_while_killing(client, cluster, False,
                                     lambda: gc.GraphClustering("ongr-k", **kw).fit(Xd),
                                     marker="_first")
        np.testing.assert_array_equal(model.labels_.compute(), reference)
    finally:
        client.close()
        cluster.close()
