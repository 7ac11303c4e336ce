"""predict after noise=True on dask arrays (docs/confidence.rst, "New points"): the
chunked labels, -1 for the points the fitted noise rule flags, equal the in-memory ones,
block by block on a real distributed LocalCluster."""

from __future__ import annotations

import graphclust as gc
import numpy as np
import pytest
from sklearn.datasets import make_blobs

pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install 'graphclust[dask]'")
pytest.importorskip("distributed", reason="needs the [dask] extra: pip install 'graphclust[dask]'")


@pytest.mark.slow  # two fits and a LocalCluster: about 4 s
def test_chunked_predict_after_noise_equals_in_memory(as_dask, dask_client):
    X, _ = make_blobs(1000, centers=5, cluster_std=0.5, center_box=(-10, 10), random_state=0)
    B = np.random.default_rng(0).uniform(X.min(0) - 1, X.max(0) + 1, (250, 2))
    X = np.vstack([X, B])
    kw = {"anchors": {"n_anchors": 200}, "noise": True}
    mem = gc.GraphClustering("anchor-spectral", n_clusters=5, random_state=0, **kw).fit(X)
    chunked = gc.GraphClustering("anchor-spectral", n_clusters=5, random_state=0,
                                 **kw).fit(as_dask(X, 300))
    X_new = np.random.default_rng(1).uniform(X.min(0), X.max(0), (700, 2))
    expected = mem.predict(X_new)
    assert (expected < 0).any() and (expected >= 0).any()
    got = chunked.predict(as_dask(X_new, 250))
    assert got.chunks == ((250, 250, 200),)
    np.testing.assert_array_equal(got.compute(), expected)
    np.testing.assert_array_equal(mem.predict(as_dask(X_new, 250)).compute(), expected)
