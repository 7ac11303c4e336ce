"""AffinityGraph / AnchorGraph against dense references on small n."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from graphclust import AffinityGraph, Anchors, AnchorGraph, Solution
from graphclust.numerics import safe_inverse


def random_Z(rng, n=40, m=8, s=3, empty_anchor=None):
    rows, cols, vals = [], [], []
    for i in range(n):
        choices = [j for j in range(m) if j != empty_anchor]
        js = rng.choice(choices, size=s, replace=False)
        w = rng.random(s) + 0.1
        rows += [i] * s
        cols += list(js)
        vals += list(w / w.sum())
    return sp.csr_array((vals, (rows, cols)), shape=(n, m))


def test_anchor_matvec_equals_dense_W(rng):
    Z = random_Z(rng)
    g = AnchorGraph(Z)
    Zd = Z.toarray()
    W = Zd @ np.diag(1 / Zd.sum(0)) @ Zd.T
    F = rng.standard_normal((40, 3))
    np.testing.assert_allclose(g.matvec(F), W @ F, atol=1e-12)
    np.testing.assert_allclose(g.matvec(F[:, 0]), W @ F[:, 0], atol=1e-12)
    np.testing.assert_allclose(g.to_dense(), W, atol=1e-12)
    B = g.B().toarray()
    np.testing.assert_allclose(B @ B.T, W, atol=1e-12)
    # W is doubly stochastic when rows of Z sum to one
    np.testing.assert_allclose(W.sum(1), 1, atol=1e-12)
    np.testing.assert_allclose(g.degrees, 1, atol=1e-12)


def test_empty_anchor_contributes_nothing(rng):
    Z = random_Z(rng, empty_anchor=2)
    g = AnchorGraph(Z)
    assert g.anchor_degrees[2] == 0
    assert np.all(np.isfinite(g.B().toarray()))
    F = rng.standard_normal((40, 2))
    assert np.all(np.isfinite(g.matvec(F)))
    np.testing.assert_allclose(g.degrees, 1, atol=1e-12)


def test_anchor_level_graph_shares_spectrum(rng):
    Z = random_Z(rng)
    g = AnchorGraph(Z)
    level = g.anchor_level()
    assert level.n == 8
    np.testing.assert_allclose(level.degrees, g.anchor_degrees, atol=1e-12)
    ev_level = np.sort(np.linalg.eigvalsh(level.normalized_adjacency().toarray()))
    ev_W = np.sort(np.linalg.eigvalsh(g.to_dense()))[-8:]
    np.testing.assert_allclose(ev_level, ev_W, atol=1e-10)


def test_lift_keeps_rows_on_simplex_and_lift_labels(rng):
    Z = random_Z(rng)
    g = AnchorGraph(Z)
    P = rng.random((8, 3))
    P /= P.sum(1, keepdims=True)
    lifted = g.lift(P)
    np.testing.assert_allclose(lifted.sum(1), 1, atol=1e-12)
    labels_m = rng.integers(0, 3, 8)
    expected = (Z.toarray() @ np.eye(3)[labels_m]).argmax(1)
    np.testing.assert_array_equal(g.lift_labels(labels_m, 3), expected)


def test_affinity_normalized_and_isolated_vertex():
    A = np.array([[0, 1, 0, 0], [1, 0, 2, 0], [0, 2, 0, 0], [0, 0, 0, 0.0]])
    g = AffinityGraph(A)
    np.testing.assert_array_equal(g.isolated(), [3])
    N = g.normalized_adjacency().toarray()
    d = A.sum(1)
    inv = np.where(d > 0, 1 / np.sqrt(np.where(d > 0, d, 1)), 0)
    np.testing.assert_allclose(N, inv[:, None] * A * inv[None, :])
    assert np.all(N[3] == 0)
    assert g.n_components() == 2


def test_graph_validation():
    with pytest.raises(ValueError, match="square"):
        AffinityGraph(np.ones((2, 3)))
    with pytest.raises(ValueError, match="nonnegative"):
        AffinityGraph(-np.eye(2))
    with pytest.raises(ValueError, match="nonnegative"):
        AnchorGraph(-np.ones((3, 2)))
    with pytest.raises(ValueError, match="non-empty 2-D"):
        Anchors(np.ones(3))


def test_anchor_components(rng):
    Z = sp.csr_array(np.array([[1, 0, 0], [1, 0, 0], [0, 0.5, 0.5], [0, 1, 0.0]]))
    assert AnchorGraph(Z).n_components() == 2


def test_solution_contract():
    with pytest.raises(ValueError, match="embedding or a soft"):
        Solution()
    with pytest.raises(ValueError, match="nonnegative"):
        Solution(soft=-np.ones((3, 2)))
    sol = Solution(embedding=np.ones((3, 2)), anchor_embedding=np.eye(2))
    assert sol.provides == {"embedding"}
    ext = sol.extend(sp.csr_array(np.array([[0.5, 0.5]])))
    np.testing.assert_allclose(ext.embedding, [[0.5, 0.5]])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 10), min_size=1, max_size=20))
def test_safe_inverse_never_divides_by_zero(values):
    v = np.array(values)
    out = safe_inverse(v, 0.5)
    assert np.all(np.isfinite(out))
    assert np.all(out[v == 0] == 0)
    np.testing.assert_allclose(out[v > 0], v[v > 0] ** -0.5)
