"""ULGE / OULGE solver: dense spectral-regression and LPP references (Theorems 1–2)."""

import numpy as np
import pytest
import scipy.linalg as sla

import graphclust
from graphclust_plugins.ulge.graph_adaptive_anchor import AdaptiveAnchorGraph
from graphclust_plugins.ulge.anchors_bkhk import BKHK
from graphclust_plugins.ulge.solver_ulge import ULGE, anchor_spectral_vectors, orthogonalize


def _problem(n=120, d=6, m=16, k=4, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(c, 0.7, (n // 3, d)) for c in range(3)])
    ctx = graphclust.Context(seed=seed)
    anchors = BKHK(n_anchors=m).select(X, ctx)
    graph = AdaptiveAnchorGraph(n_neighbors=k).build(X, anchors, ctx)
    return X, graph, ctx


def _dense_reference(X, graph, p, alpha):
    """Eigen-decompose dense A = Z Δ⁻¹ Zᵀ, then dense ridge SR (Eq. 23)."""
    A = graph.to_dense()
    ev, V = np.linalg.eigh(A)
    F = V[:, ::-1][:, :p]
    n, d = X.shape
    H = np.eye(n) - np.ones((n, n)) / n
    W = np.linalg.solve(X.T @ H @ X + alpha * np.eye(d), X.T @ H @ F)
    return A, ev[::-1][:p], F, W, H


def _same_span(P, Q, tol=1e-6):
    """Column spans of P and Q (after dropping zero columns) coincide."""
    def basis(M):
        U, s, _ = np.linalg.svd(M, full_matrices=False)
        return U[:, s > 1e-9 * max(s.max(), 1e-300)]
    a, b = basis(P), basis(Q)
    if a.shape[1] != b.shape[1]:
        return False
    return np.max(sla.subspace_angles(a, b)) < tol


def test_spectral_vectors_match_dense_eigenvectors():
    X, graph, _ = _problem()
    p = 4
    F, sigma = anchor_spectral_vectors(graph, p)
    A, ev, Fd, _, _ = _dense_reference(X, graph, p, 0.01)
    np.testing.assert_allclose(sigma ** 2, ev, atol=1e-10)
    np.testing.assert_allclose(F.T @ F, np.eye(p), atol=1e-8)
    # Same vectors up to sign (the top eigenvalues are simple here).
    assert np.all(np.diff(ev) < -1e-6)
    np.testing.assert_allclose(np.abs(np.sum(F * Fd, axis=0)), 1.0, atol=1e-8)
    # The leading vector is the trivial constant one (A doubly stochastic, Lemma 4).
    np.testing.assert_allclose(np.abs(F[:, 0]), 1 / np.sqrt(X.shape[0]), atol=1e-8)


@pytest.mark.parametrize("alpha", [0.01, 1.0])
def test_projection_matches_dense_spectral_regression(alpha):
    X, graph, ctx = _problem()
    p = 4
    sol = ULGE(alpha=alpha).solve(graph, X, p, ctx)
    _, _, Fd, Wd, H = _dense_reference(X, graph, p, alpha)
    # Columns agree up to the sign of each singular vector.
    signs = np.sign(np.sum(sol.projection * Wd, axis=0) + 1e-300)
    np.testing.assert_allclose(sol.projection, Wd * signs, atol=1e-8, rtol=1e-6)
    np.testing.assert_allclose(sol.embedding, H @ X @ sol.projection, atol=1e-8)
    np.testing.assert_allclose(sol.center, X.mean(axis=0))
    # The trivial vector regresses to a zero column.
    np.testing.assert_allclose(sol.projection[:, 0], 0.0, atol=1e-10)


@pytest.mark.parametrize("orthogonal", [False, True])
def test_mean_loss_is_ridge_on_the_mean_squared_loss(orthogonal):
    X, graph, ctx = _problem()
    p, alpha, n = 4, 0.3, X.shape[0]
    sol = ULGE(alpha=alpha, mean_loss=True, orthogonal=orthogonal).solve(graph, X, p, ctx)
    _, _, Fd, Wd, H = _dense_reference(X, graph, p, alpha * n)
    # Minimiser of (1/n)‖HXW − F‖² + α‖W‖² (dense), orthogonalised for OULGE.
    Wm = np.linalg.solve(X.T @ H @ X / n + alpha * np.eye(X.shape[1]), X.T @ H @ Fd / n)
    assert _same_span(sol.projection, orthogonalize(Wm) if orthogonal else Wm)
    if not orthogonal:
        signs = np.sign(np.sum(sol.projection * Wm, axis=0) + 1e-300)
        np.testing.assert_allclose(sol.projection, Wm * signs, atol=1e-8, rtol=1e-6)
    # ... which differs from the summed-loss solution of Eq. (23).
    plain = ULGE(alpha=alpha, orthogonal=orthogonal).solve(graph, X, p, ctx)
    assert not _same_span(plain.projection, sol.projection)


@pytest.mark.parametrize("alpha", [0.0, 0.01, 0.5])
def test_theorem_regularized_lpp_equals_sr(alpha):
    """Theorem 1/2: with the rank-p doubly stochastic Ã = F_p Λ_p F_pᵀ, the regularised LPP
    of Eq. (22) (a generalised eigenproblem) spans the same subspace as ULGE's W."""
    X, graph, ctx = _problem(n=90, d=5, m=12, k=4, seed=3)
    p = 4
    sol = ULGE(alpha=alpha).solve(graph, X, p, ctx)
    A, ev, Fd, _, H = _dense_reference(X, graph, p, alpha)
    A_p = Fd @ np.diag(ev) @ Fd.T
    np.testing.assert_allclose(A_p.sum(axis=1), 1.0, atol=1e-8)  # Lemma 4
    n, d = X.shape
    M = X.T @ H @ X + alpha * np.eye(d)
    S = X.T @ H @ A_p @ H @ X
    gev, gvec = sla.eigh(S, M)
    W_lpp = gvec[:, gev > 1e-9 * gev.max()]
    assert W_lpp.shape[1] == p - 1  # H removes the trivial direction
    assert _same_span(W_lpp, sol.projection)
    # OULGE spans the same subspace with orthonormal columns.
    osol = ULGE(alpha=alpha, orthogonal=True).solve(graph, X, p, ctx)
    Wo = osol.projection
    nz = np.linalg.norm(Wo, axis=0) > 0
    np.testing.assert_allclose(Wo[:, nz].T @ Wo[:, nz], np.eye(nz.sum()), atol=1e-10)
    assert _same_span(Wo, sol.projection)


def test_lpp_objective_not_beaten_by_random_projection():
    X, graph, ctx = _problem(seed=4)
    p = 3
    sol = ULGE(alpha=0.01).solve(graph, X, p, ctx)
    A = graph.to_dense()
    n, d = X.shape
    H = np.eye(n) - 1 / n
    M = X.T @ H @ X + 0.01 * np.eye(d)

    def obj(W):
        W = W[:, np.linalg.norm(W, axis=0) > 0]
        return np.trace(np.linalg.solve(W.T @ M @ W, W.T @ X.T @ H @ A @ H @ X @ W))

    best = obj(sol.projection)
    rng = np.random.default_rng(0)
    for _ in range(20):
        assert obj(rng.normal(size=(d, p - 1))) <= best + 1e-8


def test_orthogonalize_keeps_span_and_zero_direction():
    rng = np.random.default_rng(0)
    W = np.hstack([np.zeros((6, 1)), rng.normal(size=(6, 2))])
    Q = orthogonalize(W)
    assert np.sum(np.linalg.norm(Q, axis=0) > 0) == 2
    assert _same_span(Q, W)


def test_transform_new_points_and_tiny_inputs():
    X, graph, ctx = _problem()
    sol = ULGE().solve(graph, X, 3, ctx)
    np.testing.assert_allclose((X[:5] - sol.center) @ sol.projection, sol.embedding[:5])
    # n_clusters = 1: only the trivial vector, a zero embedding, no error.
    s1 = ULGE().solve(graph, X, 1, ctx)
    assert s1.embedding.shape == (X.shape[0], 1)
    np.testing.assert_allclose(s1.embedding, 0.0, atol=1e-8)
    # More dimensions than anchors: padded with zeros.
    Xs = np.random.default_rng(0).normal(size=(30, 2))
    a = BKHK(n_anchors=4).select(Xs, ctx)
    g = AdaptiveAnchorGraph(n_neighbors=2).build(Xs, a, ctx)
    s = ULGE(n_components=6).solve(g, Xs, 3, ctx)
    assert s.embedding.shape == (30, 6) and np.all(np.isfinite(s.embedding))


def test_dual_form_when_d_exceeds_n():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 100))
    ctx = graphclust.Context(seed=0)
    a = BKHK(n_anchors=8).select(X, ctx)
    g = AdaptiveAnchorGraph(n_neighbors=3).build(X, a, ctx)
    sol = ULGE(alpha=0.1).solve(g, X, 3, ctx)
    _, _, _, Wd, _ = _dense_reference(X, g, 3, 0.1)
    signs = np.sign(np.sum(sol.projection * Wd, axis=0) + 1e-300)
    np.testing.assert_allclose(sol.projection, Wd * signs, atol=1e-8)


def test_clusters_blobs(blobs):
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score

    X, y = blobs
    ctx = graphclust.Context(seed=0)
    a = BKHK(n_anchors=32).select(X, ctx)
    g = AdaptiveAnchorGraph().build(X, a, ctx)
    for orth in (False, True):
        emb = ULGE(orthogonal=orth).solve(g, X, 3, ctx).embedding
        labels = KMeans(3, n_init=10, random_state=0).fit_predict(emb)
        assert adjusted_rand_score(y, labels) > 0.95
