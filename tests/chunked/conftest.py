"""Fixtures of the chunked (Dask) execution tests.

Tests that need Dask are skipped with a clear reason when the ``[dask]`` extra is not
installed; the protocol tests (``test_dask_protocol.py``) need no Dask and always run.
A real ``distributed.LocalCluster`` (2 workers, 1 thread each) is started in-process per
module that asks for it and torn down after. In-process workers (``processes=False``)
start in well under a second where worker processes took ~9 s here, and run the same
tasks; they do not pickle data between client and workers, so the worker-loss test also
runs (in the slow tier) on worker processes, one of which it kills with SIGKILL.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits


def require_dask():
    pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install "
                        "'graphclust[dask]'")
    pytest.importorskip("distributed", reason="needs the [dask] extra: pip install "
                        "'graphclust[dask]'")


@pytest.fixture(scope="session")
def digits():
    """The scikit-learn digits (1797 x 64, 10 classes): small, and with no repeated
    leading eigenvalues, so embeddings compare without rotations."""
    X, y = load_digits(return_X_y=True)
    return X, y


@pytest.fixture(scope="module")
def dask_client():
    """A ``distributed.Client`` on a 2-worker in-process LocalCluster, torn down after
    the module."""
    require_dask()
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                           dashboard_address=":0")
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


@pytest.fixture
def as_dask():
    """``as_dask(X, rows)``: a dask array of ``X`` in row chunks of ``rows``."""
    require_dask()
    import dask.array as da

    def _as_dask(X, rows=300):
        return da.from_array(np.asarray(X), chunks=(rows, max(1, X.shape[1] // 2)))

    return _as_dask
