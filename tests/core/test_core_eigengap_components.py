"""The eigengap's spectrum of a graph of several connected components (issue 44): the
union of its components' spectra, checked against dense ``eigvalsh`` of the whole
normalised adjacency (a slow obvious reference), on graphs small enough for the dense
path and large enough for Lanczos, and on the fit where Lanczos on the whole graph lost
unit eigenvalues (12 separated blobs answered 8)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from graphclust import GraphClustering
from graphclust.numerics.eigengap import affinity_spectrum, affinity_spectrum_without_tiny_groups
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs


def _dense_normalised_spectrum(W: np.ndarray) -> np.ndarray:
    d = W.sum(axis=1)
    s = np.where(d > 0, 1 / np.sqrt(np.where(d > 0, d, 1)), 0)
    return np.sort(np.linalg.eigvalsh(s[:, None] * W * s[None, :]))[::-1]


def _components(rng, sizes) -> np.ndarray:
    """A block-diagonal random graph (each block connected), rows shuffled."""
    n = int(sum(sizes))
    A = np.zeros((n, n))
    start = 0
    for size in sizes:
        B = rng.random((size, size)) * (rng.random((size, size)) < 0.3)
        B = B + B.T
        B[np.arange(size - 1), np.arange(1, size)] += 1.0  # a path: connected
        B[np.arange(1, size), np.arange(size - 1)] += 1.0
        A[start:start + size, start:start + size] = B
        start += size
    perm = rng.permutation(n)
    return A[np.ix_(perm, perm)]


@settings(max_examples=6, deadline=None, derandomize=True)
@given(st.integers(0, 2**16), st.lists(st.integers(2, 40), min_size=2, max_size=6),
       st.integers(3, 20))
def test_the_spectrum_of_components_is_the_union_of_theirs(seed, sizes, n_values):
    A = _components(np.random.default_rng(seed), sizes)
    want = _dense_normalised_spectrum(A)[:n_values]
    got = affinity_spectrum(sp.csr_array(A), n_values)
    np.testing.assert_allclose(got[:want.size], want, atol=1e-8)
    assert int(np.sum(got > 1 - 1e-9)) == min(len(sizes), n_values)


@pytest.mark.slow
def test_lanczos_components_keep_every_unit_eigenvalue():
    """Components past the dense size (Lanczos on each): one unit eigenvalue a component,
    as many as there are, the next ones those of the dense reference."""
    rng = np.random.default_rng(3)
    sizes = [600, 550, 520, 45, 40, 38, 35, 30, 30, 25, 22, 20]
    A = _components(rng, sizes)
    mu = affinity_spectrum(sp.csr_array(A), 16)
    assert int(np.sum(mu > 1 - 1e-8)) == len(sizes)
    np.testing.assert_allclose(mu, _dense_normalised_spectrum(A)[:16], atol=1e-6)


def test_the_tiny_group_filter_sees_the_same_spectrum():
    """Singletons beside two components: left out as before (each its own component)."""
    rng = np.random.default_rng(5)
    A = _components(rng, [120, 90])
    n = A.shape[0]
    B = np.zeros((n + 3, n + 3))
    B[:n, :n] = A
    B[np.arange(n, n + 3), np.arange(n, n + 3)] = 1.0  # rows alone (a self-loop)
    mu, rows, dropped = affinity_spectrum_without_tiny_groups(sp.csr_array(B), 6)
    assert (rows, dropped) == (3, 3)
    np.testing.assert_allclose(mu, _dense_normalised_spectrum(A)[:6], atol=1e-8)


@pytest.mark.slow
def test_separated_blobs_give_their_number_on_the_exact_knn_route():
    """12 blobs in 10-d (issue 44's case): the 10-NN graph has 12 components and the
    eigengap of rule 2's pipeline says 12 (it said 8 when Lanczos ran on the whole
    graph)."""
    X, _ = make_blobs(1200, 10, centers=12, cluster_std=1.0, center_box=(-60, 60),
                      random_state=0)
    spec = {"graph": {"name": "knn", "n_neighbors": 10, "weight": "binary",
                      "symmetrize": "mean", "method": "exact"},
            "solver": {"name": "spectral", "drop_trivial": "connected",
                       "normalize_rows": True},
            "rounding": {"name": "kmeans", "n_init": 10, "normalize_rows": True},
            "k_from": "parts"}  # the graph's own eigengap, not auto's k (choosing-k.rst)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = GraphClustering(spec, random_state=0).fit(X)
    assert model.n_clusters_ == 12
    assert model.k_selection_.method == "eigengap"
