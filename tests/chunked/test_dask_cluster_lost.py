"""A chunked fit whose cluster goes away says so in graphclust's words (issue 30):
``labels_``, ``embedding_`` (when its rows are held by the workers) and
``members_[j].labels`` after the client closed or after unpickling elsewhere, and a fit
whose client closes mid-run, raise :class:`~graphclust.ClusterLostError` with what to
do; what the model holds in memory (the fitted state) still predicts."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import graphclust as gc

pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install 'graphclust[dask]'")
pytest.importorskip("distributed", reason="needs the [dask] extra: pip install 'graphclust[dask]'")


#: What a process that unpickles models fitted elsewhere reads: every fitted attribute,
#: each n-sized one computed; prints ``spec attribute outcome`` lines.
READER = """
import pickle, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
for spec, blob in pickle.load(sys.stdin.buffer).items():
    model = pickle.loads(blob)
    for name in ("labels_", "embedding_", "members_"):
        try:
            value = getattr(model, name)
            if value is None:
                print(spec, name, "none")
                continue
            if name == "members_":
                value = value[0].labels
            shape = np.asarray(value.compute() if hasattr(value, "compute") else value).shape
            print(spec, name, "ok", shape)
        except AttributeError as exc:
            print(spec, name, "absent")
        except Exception as exc:
            print(spec, name, type(exc).__name__, str(exc)[:60])
    print(spec, "predict", np.asarray(model.predict(np.zeros((2, 3)))).shape)
"""


#: a two-member U-SENC (the preset's twenty members cost seconds each here)
SPECS_TRIED = ("uspec", "ongr-k", "usenc-2")
SPECS = {"usenc-2": {"ensemble": {"members": [{"preset": "uspec", "count": 2}],
                                  "consensus": "tcut"}}}


def _fitted_on(cluster_kw, specs, X):
    """Models of ``specs`` fitted on a dask array of ``X`` on a LocalCluster (closed on
    return), their labels computed while it ran, and their pickles."""
    import dask.array as da
    from distributed import Client, LocalCluster

    out = {}
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=":0",
                      **cluster_kw) as cluster, Client(cluster):
        for spec in specs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = gc.GraphClustering(SPECS.get(spec, spec), n_clusters=3,
                                           random_state=0).fit(
                    da.from_array(X, chunks=100))
            out[spec] = model, model.labels_.compute(), pickle.dumps(model)
    return out


def _read_elsewhere(fitted) -> dict:
    """``{spec: {attribute: outcome}}`` read by a fresh process from the pickles."""
    import subprocess
    import sys

    blobs = pickle.dumps({spec: blob for spec, (_, _, blob) in fitted.items()})
    lines = subprocess.run([sys.executable, "-c", READER], input=blobs, capture_output=True,
                           check=True, timeout=300).stdout.decode().splitlines()
    seen: dict = {}
    for line in lines:
        spec, name, outcome = line.split(" ", 2)
        seen.setdefault(spec, {})[name] = outcome
    return seen


def _check_after_close(fitted, X, elsewhere: bool) -> dict:
    """After the cluster closed: each n-sized fitted attribute is usable or raises
    ClusterLostError naming itself and what to do; the same in another process after
    unpickling; the m-sized fitted state still predicts."""
    for model, kept, blob in fitted.values():
        with pytest.raises(gc.ClusterLostError, match="client is closed.*labels_.compute"):
            model.labels_
        try:  # rows kept on the workers refuse; rows computed from X and the state work
            embedding = model.embedding_
            assert embedding is None or embedding.compute().shape[0] == X.shape[0]
        except gc.ClusterLostError as exc:
            assert "embedding_ is not available" in str(exc)
            assert "embedding_.compute()" in str(exc)
        for member in getattr(model, "members_", []):
            with pytest.raises(gc.ClusterLostError, match="members_\\[j\\].labels is not"):
                member.labels
        np.testing.assert_array_equal(model.predict(X), kept)
        with pytest.raises(gc.ClusterLostError, match="unpickled away from the cluster"):
            pickle.loads(blob).labels_
    if not elsewhere:
        return {}
    seen = _read_elsewhere(fitted)
    for spec, got in seen.items():
        assert got["labels_"].startswith("ClusterLostError labels_ is not available"), got
        assert got["predict"] == "(2,)", got
        for name in ("embedding_", "members_"):
            assert got[name].startswith(("ok", "none", "absent", "ClusterLostError")), got
    return seen


@pytest.mark.slow  # 5 s (the quick tier keeps test_a_cluster_lost_mid_fit)
def test_fitted_attributes_after_the_cluster_closed_or_unpickled():
    """labels_, embedding_ (computed from X for uspec, kept on the workers for ongr-k)
    and members_[j].labels (an ensemble) after closing an in-process cluster, and after
    unpickling: usable or ClusterLostError, never Dask's ``Missing dependency`` or
    ``FutureCancelledError``."""
    X, _ = make_blobs(300, 3, centers=3, random_state=0)
    _check_after_close(_fitted_on({"processes": False}, SPECS_TRIED, X), X, elsewhere=False)


@pytest.mark.slow
def test_fitted_attributes_after_a_process_cluster_closed_read_in_another_process():
    """The same on worker processes (results pickled between processes), and each model
    unpickled and read in a fresh Python process."""
    X, _ = make_blobs(300, 3, centers=3, random_state=0)
    seen = _check_after_close(_fitted_on({"processes": True}, SPECS_TRIED, X), X,
                              elsewhere=True)
    assert seen["uspec"]["embedding_"] == "ok (300, 3)"  # recomputed from X and the state
    assert seen["ongr-k"]["embedding_"].startswith("ClusterLostError embedding_ is not")
    assert seen["usenc-2"]["members_"].startswith("ClusterLostError members_[j].labels")
    assert seen["usenc-2"]["embedding_"] == "none"


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
