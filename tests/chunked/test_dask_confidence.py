"""confidence_, predict_proba and noise=True of a chunked fit on a real distributed
LocalCluster equal the in-memory ones (docs/confidence.rst)."""

from __future__ import annotations

import graphclust as gc
import numpy as np
import pytest
from sklearn.datasets import make_blobs

pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install 'graphclust[dask]'")
pytest.importorskip("distributed", reason="needs the [dask] extra: pip install 'graphclust[dask]'")

SMALL = {"anchors": {"n_anchors": 200}}


def _pair(preset, X, Xd, **kw):
    mem = gc.GraphClustering(preset, n_clusters=10, random_state=0, **kw).fit(X)
    chunked = gc.GraphClustering(preset, n_clusters=10, random_state=0, **kw).fit(Xd)
    return mem, chunked


@pytest.mark.parametrize("preset, kw", [
    ("anchor-spectral", SMALL),  # the rounding's margin
    pytest.param("ongr-k", SMALL, marks=pytest.mark.slow),  # rows kept on the workers (4 s)
    pytest.param("usenc", {}, marks=pytest.mark.slow),  # an ensemble (60 s)
    pytest.param("manifold", {"anchors": {"n_anchors": 2000}},
                 marks=pytest.mark.slow),  # the on-sample adapter (50 s)
])
def test_chunked_confidence_equals_in_memory(preset, kw, digits, as_dask, dask_client):
    import dask.array as da

    X, _ = digits
    Xd = as_dask(X, 300)
    mem, chunked = _pair(preset, X, Xd, **kw)
    assert isinstance(chunked.confidence_, da.Array)
    assert chunked.confidence_.chunks == (Xd.chunks[0],)
    conf = chunked.confidence_.compute()
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)
    np.testing.assert_allclose(conf, mem.confidence_, rtol=0, atol=1e-6)
    assert chunked.confidence_source_ == mem.confidence_source_
    P = chunked.predict_proba(Xd[:600]).compute()
    np.testing.assert_allclose(P, mem.predict_proba(X[:600]), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(P.argmax(axis=1), chunked.predict(Xd[:600]).compute())


@pytest.mark.slow  # 3 s
def test_chunked_noise_equals_in_memory(as_dask, dask_client):
    """The framework's rule: with every row in the sample the cluster Gaussians are the
    in-memory ones, so the flags are too."""
    X, _ = make_blobs(1000, centers=5, cluster_std=0.5, center_box=(-10, 10), random_state=0)
    B = np.random.default_rng(0).uniform(X.min(0) - 1, X.max(0) + 1, (250, 2))
    X = np.vstack([X, B])
    kw = {"anchors": {"n_anchors": 200}, "noise": True}
    mem = gc.GraphClustering("anchor-spectral", n_clusters=5, random_state=0, **kw).fit(X)
    chunked = gc.GraphClustering("anchor-spectral", n_clusters=5, random_state=0,
                                 **kw).fit(as_dask(X, 300))
    assert mem.n_noise_ > 0 and chunked.n_noise_ == mem.n_noise_
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)


@gc.part
class _SignRounding(gc.Rounding):
    """A chunk-wise rounding without a confidence of its own: the fallback applies."""

    name = "sign-test"
    needs = gc.SolutionField.EMBEDDING
    chunkwise = True

    def round(self, solution, n_clusters, ctx):
        return self.assign(solution)

    def assign(self, solution):
        return (np.asarray(solution.embedding)[:, 0] > 0).astype(np.int64)


@pytest.mark.slow  # 3 s
def test_chunked_fallback_confidence_equals_in_memory(digits, as_dask, dask_client):
    """The fallback (graph neighbours through the anchors' label profile, summed over the
    blocks) and the profile's predict_proba, chunked and in memory."""
    X, _ = digits
    kw = {**SMALL, "rounding": _SignRounding()}
    mem = gc.GraphClustering("anchor-spectral", n_clusters=2, random_state=0, **kw).fit(X)
    chunked = gc.GraphClustering("anchor-spectral", n_clusters=2, random_state=0,
                                 **kw).fit(as_dask(X, 300))
    assert chunked.confidence_source_ == mem.confidence_source_ == "graph neighbours"
    np.testing.assert_allclose(chunked.confidence_.compute(), mem.confidence_, atol=1e-6)
    P = chunked.predict_proba(as_dask(X[:400], 100)).compute()
    np.testing.assert_allclose(P, mem.predict_proba(X[:400]), atol=1e-6)
