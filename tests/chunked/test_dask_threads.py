"""The chunked execution with no distributed client: Dask's local threads."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import graphclust as gc
import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install "
                         "'graphclust[dask]'")


def test_no_client_runs_on_threads(digits):
    """Without a distributed Client, Dask's threaded scheduler runs the same chunked fit
    (no client exists in this module: the cluster fixture lives in another one)."""
    from distributed import default_client

    with pytest.raises(ValueError):
        default_client()  # no client is active here
    X, _ = digits
    kw = {"n_clusters": 10, "random_state": 0, "anchors": {"n_anchors": 150}}
    mem = gc.GraphClustering("anchor-spectral", **kw).fit(X)
    chunked = gc.GraphClustering("anchor-spectral", **kw).fit(da.from_array(X, chunks=400))
    assert isinstance(chunked.labels_, da.Array)
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)


@pytest.mark.slow  # 2 s
def test_ensemble_and_scale_on_threads(digits):
    """A scaled 2-member usenc-like ensemble on the threaded scheduler gives the in-memory
    consensus labels (each member's uspec graph searched once per chunk)."""
    from distributed import default_client

    with pytest.raises(ValueError):
        default_client()
    X, _ = digits
    spec = {"scale": "center", "ensemble": {
        "members": [{"preset": "uspec", "count": 2, "n_clusters": [20, 60], "metrics": [],
                     "anchors": {"n_anchors": 100}, "rounding": {"n_init": 1, "max_iter": 5}}],
        "consensus": {"name": "tcut"}}}
    kw = {"n_clusters": 10, "random_state": 2}
    mem = gc.GraphClustering(spec, **kw).fit(X)
    chunked = gc.GraphClustering(spec, **kw).fit(da.from_array(X, chunks=400))
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)


def test_sampled_anchors_are_a_uniform_subset(monkeypatch, digits):
    """Above the sample rule, the selector sees a uniform sample of rows drawn from the
    run's seed, and the fit still labels every row (lower the rule's floor to see it)."""
    import graphclust.chunks as protocol  # the floors every chunked run reads

    monkeypatch.setattr(protocol, "ANCHOR_SAMPLE_MIN", 500)
    monkeypatch.setattr(protocol, "ANCHOR_SAMPLE_PER_ANCHOR", 5)
    monkeypatch.setattr(protocol, "ROUNDING_SAMPLE_MIN", 600)
    X, y = digits
    Xd = da.from_array(X, chunks=300)
    model = gc.GraphClustering("uspec", n_clusters=10, random_state=0,
                               anchors={"n_anchors": 80}).fit(Xd)
    assert model.anchors_.info["sample_size"] == 500
    labels = model.labels_.compute()
    assert labels.shape == (X.shape[0],) and set(np.unique(labels)) == set(range(10))
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(y, labels) > 0.5  # digits: ~0.7 in memory
    again = gc.GraphClustering("uspec", n_clusters=10, random_state=0,
                               anchors={"n_anchors": 80}).fit(Xd)
    np.testing.assert_array_equal(again.labels_.compute(), labels)


def test_graphclust_works_without_dask(tmp_path):
    """With Dask absent, graphclust imports and fits NumPy input; a dask input would
    need the extra, and ``require_dask`` names it."""
    code = textwrap.dedent("""
        import sys
        for name in ("dask", "dask.array", "distributed"):
            sys.modules[name] = None  # import fails as if not installed
        import numpy as np
        import graphclust as gc
        from graphclust._dask import require_dask
        X = np.random.default_rng(0).normal(size=(60, 3))
        gc.GraphClustering("anchor-spectral", n_clusters=2, random_state=0,
                           anchors={"n_anchors": 10}).fit(X)
        try:
            require_dask()
        except ImportError as exc:
            print("IMPORTERROR", exc)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert 'IMPORTERROR' in out.stdout and 'pip install "graphclust[dask]"' in out.stdout


def test_fewer_labels_warns_with_counts_from_chunks():
    """Three distinct points, five clusters asked: the chunked fit warns as the in-memory
    one does, counting labels with a k-sized sum over the label chunks."""
    X = np.repeat(np.eye(3), 40, axis=0) + 0.0
    kw = {"n_clusters": 5, "random_state": 0, "anchors": {"n_anchors": 10}}
    with pytest.warns(gc.FewerClustersWarning, match=r"returned 3 distinct labels for "
                      r"n_clusters=5 \(120 points\)"):
        model = gc.GraphClustering("anchor-spectral", **kw).fit(da.from_array(X, chunks=50))
    assert np.unique(model.labels_.compute()).size == 3


def test_unknown_chunk_sizes_and_integer_pixels(digits):
    """A filtered dask array (chunk sizes unknown until computed) and 8-bit pixels (kept
    in float32, as in memory) fit like their in-memory arrays."""
    X, _ = digits
    X8 = X.astype(np.uint8)
    Xd = da.from_array(X8, chunks=500)
    filtered = Xd[Xd[:, 0] >= 0]  # every row kept, sizes unknown
    assert np.isnan(filtered.chunks[0][0])
    kw = {"n_clusters": 10, "random_state": 0, "anchors": {"n_anchors": 100}}
    mem = gc.GraphClustering("uspec", **kw).fit(X8)
    chunked = gc.GraphClustering("uspec", **kw).fit(filtered)
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)
    assert chunked.anchors_.points.dtype == np.float32
