"""One seed, one partition: the chunked labels are the in-memory labels on Dask's
synchronous, threaded and processes schedulers and on a distributed cluster, for two
cuts of the rows (issue 27, item 2).

What made them differ before: scikit-learn's k-means and LAPACK summing per thread (the
threaded scheduler ran them on two BLAS/OpenMP threads, distributed workers on one;
:func:`graphclust.numerics.fixed_threads`), nearest representatives chosen by the last
bits of a BLAS product on exactly tied distances (:func:`graphclust.numerics.nearest_anchors`),
and block sums whose round-off depended on the cut (:class:`graphclust.numerics.ExactSum`).
The 1797 digits (integer pixels) have exact ties and a transfer cut that U-SPEC's k-means
rounding follows into another partition on a one-ulp change, so they are a sharp probe.
"""

from __future__ import annotations

import graphclust as gc
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

da = pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install "
                         "'graphclust[dask]'")
dask = pytest.importorskip("dask")
pytest.importorskip("distributed", reason="needs the [dask] extra")

CUTS = {"300-rows-2-column-chunks": (300, 32), "700-rows": (700, 64)}


def _fit(spec, X, **kw):
    model = gc.GraphClustering(spec, n_clusters=10, random_state=0, **kw).fit(X)
    labels = model.labels_
    return np.asarray(labels.compute() if hasattr(labels, "compute") else labels)


def _memory(spec, X, **kw):
    with threadpool_limits(limits=1):  # the reference on one thread, the runs below on more
        return _fit(spec, X, **kw)


def _chunked(X, cut):
    rows, cols = CUTS[cut]
    return da.from_array(X, chunks=(rows, cols))


@pytest.fixture(scope="module")
def process_pool():
    """Two spawned worker processes for Dask's processes scheduler, kept for the module
    (without a pool Dask starts one per compute, and a fit makes dozens)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


def _scheduler(name, pool):
    return (dask.config.set(scheduler="processes", pool=pool) if name == "processes"
            else dask.config.set(scheduler=name))


@pytest.mark.parametrize("scheduler, cut", [  # threads: 3 s, the slow tier's
    pytest.param("threads", "300-rows-2-column-chunks", marks=pytest.mark.slow),
    ("sync", "700-rows")])
def test_uspec_labels_equal_in_memory_on_local_schedulers(digits, scheduler, cut):
    X, _ = digits
    want = _memory("uspec", X)
    with dask.config.set(scheduler=scheduler):
        got = _fit("uspec", _chunked(X, cut))
    np.testing.assert_array_equal(got, want)


@pytest.fixture
def own_client():
    """A client on a 2-worker in-process cluster for one test only (a client left open
    would be the default for the local-scheduler runs of the next tests)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        yield client


@pytest.mark.slow  # 6 s; the quick tier keeps the local schedulers and other LocalCluster tests
def test_uspec_labels_equal_in_memory_on_a_distributed_client(digits, own_client):
    X, _ = digits
    want = _memory("uspec", X)
    for cut in CUTS:
        np.testing.assert_array_equal(_fit("uspec", _chunked(X, cut)), want)


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["uspec", "anchor-spectral", "ulge", "bkhk-dcd", "ongr-k"])
def test_every_scheduler_and_cut_gives_the_in_memory_labels(digits, spec, process_pool):
    """Three local schedulers x two cuts, and a cluster of two worker processes (one BLAS
    thread each, as Dask starts them) x two cuts."""
    from distributed import Client, LocalCluster

    X, _ = digits
    want = _memory(spec, X)
    for scheduler in ("sync", "threads", "processes"):
        for cut in CUTS:
            with _scheduler(scheduler, process_pool):
                got = _fit(spec, _chunked(X, cut))
            np.testing.assert_array_equal(got, want, err_msg=f"{scheduler}, {cut}")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster):
        for cut in CUTS:
            np.testing.assert_array_equal(_fit(spec, _chunked(X, cut)), want,
                                          err_msg=f"distributed, {cut}")
