"""A worker dies in the middle of a fit: the fit completes with the labels of an
undisturbed run (Dask recomputes the lost blocks from their lineage; every sum is added
in a fixed order, so where a block was recomputed does not change a bit)."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time

import graphclust as gc
import numpy as np
import pytest

pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install 'graphclust[dask]'")
pytest.importorskip("distributed", reason="needs the [dask] extra: pip install 'graphclust[dask]'")


def _kill(cluster, address: str, processes: bool) -> None:
    for handle in list(cluster.workers.values()):
        if processes and handle.worker_address == address:
            os.kill(handle.process.process.pid, signal.SIGKILL)  # the worker process dies
            return
        if not processes and handle.address == address:
            asyncio.run_coroutine_threadsafe(handle.close(), cluster.loop.asyncio_loop)
            return
    raise AssertionError(f"no worker at {address}")


def _killer(client, cluster, processes: bool, done: dict, marker: str = "_graph_rows"):
    """Wait until a worker holds two keys named with ``marker`` (default: rows of Z — the
    graph stage persisted them, the solver's passes over them are about to start), then
    kill that worker."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not done.get("stop"):
        for address, keys in client.has_what().items():
            if sum(marker in str(k) for k in keys) >= 2:
                _kill(cluster, address, processes)
                done["killed"] = address
                done["at"] = time.monotonic()
                return
        time.sleep(0.005)


def fit_while_killing(client, cluster, processes: bool, fit, marker: str = "_graph_rows"):
    """``fit()`` while :func:`_killer` kills a worker once it holds two ``marker`` keys;
    returns ``(model, done)`` after checking that the kill fell inside the fit."""

    client.run(lambda: None)  # both workers alive and idle before the disturbed run
    done: dict = {}
    thread = threading.Thread(target=_killer, args=(client, cluster, processes, done, marker))
    thread.start()
    try:
        model = fit()
        fit_end = time.monotonic()
    finally:
        done["stop"] = True
        thread.join()
    assert "killed" in done, "the worker was not killed during the fit"
    assert done["at"] < fit_end, "the worker was killed after the fit had finished"
    return model, done


@pytest.mark.slow  # half a minute: the kill waits for the fit to be well under way
@pytest.mark.parametrize("processes", [False, pytest.param(True, id="worker-processes")])
def test_fit_survives_a_killed_worker(processes, digits):
    import dask.array as da
    from distributed import Client, LocalCluster

    X, _ = digits
    noise = np.random.default_rng(0).normal(scale=0.5, size=X.shape)
    X = np.vstack([X, X + noise])  # 3 594 rows, 18 chunks
    Xd = da.from_array(X, chunks=(200, 64))
    kw = {"n_clusters": 10, "random_state": 3, "anchors": {"n_anchors": 200}}
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=processes,
                           dashboard_address=":0")
    client = Client(cluster)
    try:
        reference = gc.GraphClustering("ulge", **kw).fit(Xd).labels_.compute()
        model, done = fit_while_killing(
            client, cluster, processes, lambda: gc.GraphClustering("ulge", **kw).fit(Xd))
        assert done["killed"] not in client.scheduler_info()["workers"] or processes
        np.testing.assert_array_equal(model.labels_.compute(), reference)
    finally:
        client.close()
        cluster.close()
