"""ONGR's anchor graph (``ongr-anchor``) and ``capped`` anchors run chunk-wise; ONGR's
solver is still refused (see docs/dask.rst)."""

from __future__ import annotations

import graphclust as gc
import numpy as np
import pytest
from graphclust._chunked import ANCHOR_SAMPLE_MIN, ANCHOR_SAMPLE_PER_ANCHOR, sample_size
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
