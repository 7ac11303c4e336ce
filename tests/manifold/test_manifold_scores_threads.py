"""The manifold family's principal-component scores are the same on one BLAS thread and
on two (``manifold._projections.scores``): OpenBLAS splits a float32 product with a
long inner dimension between threads, and on MNIST-70k that changed 66 labels between
one and two threads through the NN-descent on the scores (benchmarks/HISTORY.md,
2026-11-28)."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from graphclust.numerics import Projection
from graphclust_plugins.manifold._neighbors import project
from graphclust_plugins.manifold._projections import scores


def _rows(n=1000, d=784, seed=0):
    return np.random.default_rng(seed).random((n, d)).astype(np.float32)


@pytest.mark.parametrize("p", [10, 64])
def test_scores_are_the_same_bits_on_one_and_two_threads(p):
    X = _rows()
    with threadpool_limits(limits=1):  # a threaded QR is slow on a busy machine
        Q = np.linalg.qr(np.random.default_rng(p).normal(size=(X.shape[1], p)))[0]
    proj = Projection(mean=X.mean(axis=0, dtype=np.float64), components=Q.T,
                      explained_variance=np.ones(p), total_variance=float(p))
    out = {}
    for threads in (1, 2):
        with threadpool_limits(limits=threads):
            out[threads] = scores(proj, X)
    np.testing.assert_array_equal(out[1], out[2])
    # and they are the projection's scores (one thread only changes the order of sums)
    np.testing.assert_allclose(out[1], (X.astype(np.float64) - proj.mean) @ proj.components.T,
                               rtol=1e-4, atol=1e-4)
    assert out[1].dtype == np.float32 and out[1].flags.c_contiguous


def test_the_search_rows_of_project_are_the_same_on_one_and_two_threads():
    """MNIST's route: the scatter matrix (``fit_pca``'s covariance route, its block
    products on one thread) and the scores. (The randomized route's products keep their
    threads: not thread-count-free yet.)"""
    from graphclust.numerics.pca_routes import choose_route

    X = _rows(n=5000, seed=1)
    assert choose_route(*X.shape, 64) == "covariance"
    out = {}
    for threads in (1, 2):
        with threadpool_limits(limits=threads):
            out[threads] = project(X, 64)[0]
    np.testing.assert_array_equal(out[1], out[2])
