"""Tests of the ONGR Gaussian anchor graph (Eq. 12) against a dense brute-force reference."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

import graphclust
from graphclust_plugins.ongr.graph_ongr_anchor import OngrAnchorGraph


def _reference_Z(X, U, s, sigma=None):
    """Dense, obvious Eq. 12: all distances, s smallest, exp(-d²/σ²), rows normalised."""
    D2 = ((X[:, None, :] - U[None, :, :]) ** 2).sum(-1)
    order = np.argsort(D2, axis=1, kind="stable")[:, :s]
    d2 = np.take_along_axis(D2, order, axis=1)
    if sigma is None:
        sigma = np.mean(np.sqrt(d2[:, -1]))
    w = np.exp(-d2 / sigma**2)
    w /= w.sum(1, keepdims=True)
    Z = np.zeros_like(D2)
    np.put_along_axis(Z, order, w, axis=1)
    return Z, sigma


def _build(X, U, **kw):
    return OngrAnchorGraph(**kw).build(X, graphclust.Anchors(U), graphclust.Context(seed=0))


@pytest.mark.parametrize("s", [1, 3, 5])
def test_matches_dense_reference(rng, s):
    X = rng.normal(size=(60, 4))
    U = rng.normal(size=(12, 4))
    g = _build(X, U, n_neighbors=s)
    Z_ref, sigma = _reference_Z(X, U, s)
    assert g.state.sigma == pytest.approx(sigma) and g.state.n_neighbors == s
    np.testing.assert_allclose(g.Z.toarray(), Z_ref, atol=1e-12)
    assert np.all(np.diff(g.Z.indptr) == s)


def test_given_bandwidth_and_block_size(rng):
    X = rng.normal(size=(50, 3))
    U = rng.normal(size=(10, 3))
    g = _build(X, U, n_neighbors=4, bandwidth=0.7, block_size=7)
    Z_ref, _ = _reference_Z(X, U, 4, sigma=0.7)
    np.testing.assert_allclose(g.Z.toarray(), Z_ref, atol=1e-12)


def test_W_is_doubly_stochastic(rng):
    X = rng.normal(size=(40, 3))
    g = _build(X, X[:15].copy(), n_neighbors=3)
    W = g.to_dense()
    np.testing.assert_allclose(W.sum(0), 1.0, atol=1e-12)
    np.testing.assert_allclose(W.sum(1), 1.0, atol=1e-12)
    np.testing.assert_allclose(W, W.T, atol=1e-14)


def test_transform_reproduces_training_rows(rng):
    X = rng.normal(size=(70, 5))
    U = rng.normal(size=(9, 5))
    builder = OngrAnchorGraph(n_neighbors=3)
    g = builder.build(X, graphclust.Anchors(U), graphclust.Context())
    np.testing.assert_allclose(builder.transform(X[10:20], g).toarray(),
                               g.Z.toarray()[10:20], atol=1e-12)


def test_far_point_does_not_underflow(rng):
    X = rng.normal(size=(30, 2))
    X[0] = 1e4  # exp(-d²/σ²) underflows for every anchor without the row shift
    g = _build(X, X[1:8].copy(), n_neighbors=3)
    np.testing.assert_allclose(g.Z.sum(axis=1), 1.0)
    assert np.all(np.isfinite(g.Z.data))


def test_points_on_anchors_give_uniform_weights():
    X = np.repeat(np.eye(3), 4, axis=0)  # duplicates; anchors duplicate the points too
    U = np.repeat(np.eye(3), 2, axis=0)
    g = _build(X, U, n_neighbors=2)  # every point has 2 anchors at distance 0: σ = 0
    np.testing.assert_allclose(g.Z.data, 0.5)
    assert g.state.sigma == 1.0


def test_s_larger_than_m_is_clamped(rng):
    X = rng.normal(size=(20, 2))
    with pytest.warns(graphclust.GraphClustWarning, match="n_neighbors"):
        g = _build(X, X[:3].copy(), n_neighbors=5)
    assert g.state.n_neighbors == 3
    np.testing.assert_allclose(g.Z.sum(axis=1), 1.0)


def test_float32_and_integer_input(rng):
    X = (rng.random((40, 6)) * 255).astype(np.uint8)
    g64 = _build(X, X[:10].astype(np.float64), n_neighbors=3)
    g32 = _build(X.astype(np.float32), X[:10].astype(np.float32), n_neighbors=3)
    np.testing.assert_allclose(g32.Z.toarray(), g64.Z.toarray(), atol=1e-4)
    Z_ref, _ = _reference_Z(X.astype(float), X[:10].astype(float), 3)
    np.testing.assert_allclose(g64.Z.toarray(), Z_ref, atol=1e-10)


def test_parameter_checks():
    assert OngrAnchorGraph(n_neighbors=0).check_params()
    assert OngrAnchorGraph(bandwidth=-1.0).check_params()
    assert not OngrAnchorGraph().check_params()


@settings(max_examples=15, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(2, 25), st.integers(1, 4)),
              elements=st.floats(-50, 50)),
       st.integers(1, 6))
def test_rows_are_stochastic_property(X, s):
    m = max(1, X.shape[0] // 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", graphclust.GraphClustWarning)
        g = _build(X, X[:m].copy(), n_neighbors=s)
    assert np.all(np.isfinite(g.Z.data)) and g.Z.data.min() >= 0
    np.testing.assert_allclose(g.Z.sum(axis=1), 1.0, rtol=1e-12)
