"""A real multi-process Dask cluster (issue 27, item 4): a scheduler and two workers
started as separate processes with the ``dask scheduler`` / ``dask worker`` commands over
TCP, the command line's ``--scheduler tcp://…`` against it, and a worker killed with
SIGKILL in the middle of a fit.

What the estimator promises when a worker dies (docs/dask.rst, "Fault tolerance"): the
scheduler recomputes what the worker held from the chunks' lineage, the fit completes,
and its labels equal those of an undisturbed run (every sum is added in a fixed order).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import graphclust as gc
import numpy as np
import pytest

pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install 'graphclust[dask]'")
pytest.importorskip("distributed", reason="needs the [dask] extra: pip install 'graphclust[dask]'")

pytestmark = pytest.mark.slow  # starting three processes takes ~10-20 s on the shared machine


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _dask_command() -> list[str]:
    """The ``dask`` console script of this interpreter's environment."""
    exe = Path(sys.executable).with_name("dask")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("dask")
    if found is None:
        pytest.skip("the 'dask' command is not installed")
    return [found]


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture
def real_cluster(tmp_path):
    """``(address, workers)``: a ``dask scheduler`` and two ``dask worker`` processes (one
    thread each, no nanny, so a worker killed stays dead) on free local TCP ports; every
    process is stopped afterwards, whatever the test did."""
    from distributed import Client

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # the tasks import graphclust
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs: list[subprocess.Popen] = []
    try:
        with open(tmp_path / "scheduler.log", "w") as log:  # the child keeps its own copy
            procs.append(subprocess.Popen(
                [*_dask_command(), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                 "--dashboard-address", ":0"], stdout=log, stderr=subprocess.STDOUT, env=env))
        workers = []
        for i in range(2):
            with open(tmp_path / f"worker{i}.log", "w") as log:
                worker = subprocess.Popen(
                    [*_dask_command(), "worker", address, "--nthreads", "1", "--no-nanny",
                     "--host", "127.0.0.1", "--dashboard-address", ":0", "--name", f"w{i}"],
                    stdout=log, stderr=subprocess.STDOUT, env=env)
            procs.append(worker)
            workers.append(worker)
        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        yield address, workers
    finally:
        for proc in reversed(procs):
            _stop(proc)


@pytest.fixture(scope="module")
def digits_npy(tmp_path_factory, digits):
    path = tmp_path_factory.mktemp("real-cluster") / "digits.npy"
    np.save(path, digits[0])
    return path


def test_cli_against_a_tcp_scheduler_gives_the_in_memory_labels(real_cluster, digits_npy,
                                                                   tmp_path):
    """``graphclust run --scheduler tcp://…`` (a separate process) against the cluster:
    chunked on the workers, the labels of the in-memory run of the same seed."""
    address, _ = real_cluster
    out = tmp_path / "labels.npy"
    proc = subprocess.run(
        [sys.executable, "-m", "graphclust", "run", "--quiet", "--preset", "uspec",
         "--dataset", str(digits_npy), "--no-labels", "--n-clusters", "10", "--seed", "0",
         "--scheduler", address, "--chunk-mb", "0.2", "--output", str(out)],
        capture_output=True, text=True, timeout=600, env=dict(os.environ), check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    chunked = np.load(out)
    X = np.load(digits_npy)
    memory = gc.GraphClustering("uspec", n_clusters=10, random_state=0).fit(X).labels_
    np.testing.assert_array_equal(chunked, memory)


def _kill_when_holding(client, pids: dict, done: dict, marker: str = "_graph_rows") -> None:
    """SIGKILL the worker process that first holds two persisted rows of ``Z`` (the graph
    stage is done, the solver's passes over them are starting); ``pids``: worker address
    to process id."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not done.get("stop"):
        for address, keys in client.has_what().items():
            if sum(marker in str(k) for k in keys) >= 2 and address in pids:
                os.kill(pids[address], signal.SIGKILL)
                done["killed"], done["at"] = pids[address], time.monotonic()
                return
        time.sleep(0.005)


def test_worker_killed_mid_fit_the_fit_completes_with_the_undisturbed_labels(real_cluster,
                                                                           digits):
    """One of the two worker processes is killed with SIGKILL while the fit runs; the fit
    completes on the other, and its labels are those of an undisturbed run and of the
    in-memory fit."""
    import dask.array as da
    from distributed import Client

    address, workers = real_cluster
    X = digits[0]
    X = np.vstack([X, X + np.random.default_rng(0).normal(scale=0.5, size=X.shape)])
    kw = {"n_clusters": 10, "random_state": 3, "anchors": {"n_anchors": 200}}
    memory = gc.GraphClustering("ulge", **kw).fit(X).labels_
    with Client(address) as client:
        Xd = da.from_array(X, chunks=(200, 64)).persist()
        reference = gc.GraphClustering("ulge", **kw).fit(Xd).labels_.compute()
        np.testing.assert_array_equal(reference, memory)
        pids = client.run(os.getpid)  # address -> pid of each worker process
        assert sorted(pids.values()) == sorted(w.pid for w in workers)  # no nanny between
        done: dict = {}
        killer = threading.Thread(target=_kill_when_holding, args=(client, pids, done))
        killer.start()
        try:
            model = gc.GraphClustering("ulge", **kw).fit(Xd)
            fit_end = time.monotonic()
        finally:
            done["stop"] = True
            killer.join()
        assert "killed" in done, "no worker was killed during the fit"
        assert done["at"] < fit_end
        killed = next(w for w in workers if w.pid == done["killed"])
        assert killed.wait(timeout=30) == -signal.SIGKILL  # the process is really gone
        assert len(client.scheduler_info()["workers"]) == 1
        np.testing.assert_array_equal(model.labels_.compute(), reference)
