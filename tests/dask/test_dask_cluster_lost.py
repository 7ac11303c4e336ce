"""A chunked fit whose cluster goes away says so in graphclust's words (issue 30):
``labels_`` after the client closed or after unpickling elsewhere, and a fit whose
client closes mid-run, raise :class:`~graphclust.ClusterLostError` with what to do."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import graphclust as gc

pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install 'graphclust[dask]'")
pytest.importorskip("distributed", reason="needs the [dask] extra: pip install 'graphclust[dask]'")


def _fit(X):
    import dask.array as da

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gc.GraphClustering("uspec", n_clusters=3, random_state=0,
                                  anchors={"n_anchors": 40}).fit(da.from_array(X, chunks=100))


def test_labels_after_the_cluster_closed_or_unpickled_elsewhere():
    from distributed import Client, LocalCluster

    X, _ = make_blobs(300, 3, centers=3, random_state=0)
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                           dashboard_address=":0")
    client = Client(cluster)
    try:
        model = _fit(X)
        kept = model.labels_.compute()
        blob = pickle.dumps(model)
    finally:
        client.close()
        cluster.close()
    with pytest.raises(gc.ClusterLostError, match="client is closed.*labels_.compute\\(\\)"):
        model.labels_
    with pytest.raises(gc.ClusterLostError, match="unpickled away from the cluster"):
        pickle.loads(blob).labels_
    # the fitted model still places points (its state is in memory)
    np.testing.assert_array_equal(model.predict(X), kept)


def test_a_cluster_lost_mid_fit(monkeypatch):
    """The errors Dask raises when the client closes mid-fit (a cancelled future, a
    missing dependency) become a ClusterLostError; any other error passes unchanged."""
    import concurrent.futures

    import dask.array as da

    import graphclust._dask._run as run

    X = da.from_array(make_blobs(200, 3, centers=3, random_state=0)[0], chunks=100)
    for exc, lost in [(concurrent.futures.CancelledError("reason: unknown"), True),
                      (ValueError("Missing dependency ('concatenate-1', 3) for dependents"),
                       True),
                      (ValueError("some other problem"), False)]:
        def boom(*args, exc=exc, **kwargs):
            raise exc

        monkeypatch.setattr(run, "fit_chunked", boom)
        with pytest.raises(gc.ClusterLostError if lost else ValueError) as err:
            gc.GraphClustering("uspec", n_clusters=3).fit(X)
        assert lost == isinstance(err.value, gc.ClusterLostError)
        if lost:
            assert "keep the client open until fit returns" in str(err.value)
