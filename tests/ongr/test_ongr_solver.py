"""Tests of the ONGR solver (Eq. 7–11, Algorithm 1) against dense references."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import graphclust
from graphclust_plugins.ongr.graph_ongr_anchor import OngrAnchorGraph
from graphclust_plugins.ongr.solver_ongr import OngrOperator, OngrSolver, ongr_objective


def _anchor_graph(X, m, s=3, seed=0):
    rng = np.random.default_rng(seed)
    U = X[rng.choice(len(X), m, replace=False)]
    return OngrAnchorGraph(n_neighbors=s).build(X, graphclust.Anchors(U), graphclust.Context())


def _solve(graph, k, seed=0, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", graphclust.ConvergenceWarning)
        return OngrSolver(**kw).solve(graph, None, k, graphclust.Context(seed=seed))


def _dense_objective(W, F, G, lam):
    return np.sum((W - F @ G.T) ** 2) + lam * np.sum((F - G) ** 2)


@pytest.fixture
def problem(blobs):
    X, _ = blobs
    return _anchor_graph(X, 40)


def test_implicit_objective_equals_dense(problem, rng):
    W = problem.to_dense()
    op = OngrOperator(problem)
    assert op.norm2 == pytest.approx(np.sum(W**2), rel=1e-10)
    F = np.linalg.qr(rng.normal(size=(problem.n, 3)))[0]
    G = np.abs(rng.normal(size=(problem.n, 3)))
    for lam in (0.0, 0.3, 10.0):
        dense = _dense_objective(W, F, G, lam)
        assert ongr_objective(op.norm2, F, G, WF=op.matvec(F), lam=lam) == pytest.approx(dense)
        assert ongr_objective(op.norm2, F, G, WG=op.matvec(G), lam=lam) == pytest.approx(dense)
    # also for a non-orthonormal F (the expansion does not assume FᵀF = I)
    F2 = rng.normal(size=(problem.n, 3))
    assert ongr_objective(op.norm2, F2, G, WF=op.matvec(F2), lam=0.5) == pytest.approx(
        _dense_objective(W, F2, G, 0.5))


def test_recorded_objective_matches_dense_at_solution(problem):
    sol = _solve(problem, 3, lam=0.5, max_iter=4, tol=0.0)
    # objective[-1] is evaluated at (F_final, G_final) with G the last label matrix
    G = sol.soft if sol.info["n_zero_rows"] == 0 else None
    assert G is not None
    assert sol.objective[-1] == pytest.approx(
        _dense_objective(problem.to_dense(), sol.embedding, G, 0.5), rel=1e-9)


@pytest.mark.parametrize("positive_part", ["max", "abs"])
def test_F_orthonormal_and_G_nonnegative(problem, positive_part):
    sol = _solve(problem, 4, positive_part=positive_part)
    F, G = sol.embedding, sol.soft
    np.testing.assert_allclose(F.T @ F, np.eye(4), atol=1e-10)
    assert G.min() >= 0
    assert F.shape == G.shape == (problem.n, 4)


def test_init_is_leading_eigvecs_of_W(problem):
    op = OngrOperator(problem)
    U, vals = op.leading(3, np.random.default_rng(0))
    ev, vecs = np.linalg.eigh(problem.to_dense())
    np.testing.assert_allclose(vals, ev[::-1][:3], atol=1e-10)
    assert vals[0] == pytest.approx(1.0)  # W is doubly stochastic
    P_ref = vecs[:, -3:] @ vecs[:, -3:].T
    np.testing.assert_allclose(U @ U.T, P_ref, atol=1e-8)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("lam", [1e-3, 1.0, 100.0])
def test_objective_non_increasing_with_max(blobs, seed, lam):
    """Both steps are exact block minimisers with (·)₊ = max(·, 0): the interleaved
    sequence obj(F_t, G_t) ≥ obj(F_{t+1}, G_t) ≥ obj(F_{t+1}, G_{t+1}) is non-increasing."""
    X, _ = blobs
    g = _anchor_graph(X + np.random.default_rng(seed).normal(scale=2.0, size=X.shape), 50,
                      seed=seed)
    sol = _solve(g, 3, seed=seed, lam=lam, tol=0.0, max_iter=30,
                 init="random" if seed % 2 else "svd")
    seq = np.column_stack([sol.history["objective_after_G"], sol.objective]).ravel()
    scale = max(1.0, abs(seq[0]))
    assert np.all(np.diff(seq) <= 1e-10 * scale)


def test_abs_guarantees_only_the_F_step(blobs):
    """With the text's absolute value the G-step is not the minimiser of Eq. 8, so only the
    F-step (exact polar maximiser) is guaranteed to lower the objective."""
    X, _ = blobs
    g = _anchor_graph(X, 50)
    sol = _solve(g, 3, positive_part="abs", tol=0.0, max_iter=15, init="random")
    after_g, after_f = sol.history["objective_after_G"], sol.objective
    assert np.all(after_f <= after_g + 1e-10 * abs(after_g[0]))


def test_G_step_is_the_minimiser_of_eq8(problem, rng):
    op = OngrOperator(problem)
    F = np.linalg.qr(rng.normal(size=(problem.n, 3)))[0]
    lam = 0.7
    WF = op.matvec(F)
    G = np.maximum((WF + lam * F) / (1 + lam), 0.0)
    best = ongr_objective(op.norm2, F, G, WF=WF, lam=lam)
    for _ in range(20):
        G2 = np.maximum(G + 0.05 * rng.normal(size=G.shape), 0.0)
        assert ongr_objective(op.norm2, F, G2, WF=WF, lam=lam) >= best - 1e-12
    Gabs = np.abs((WF + lam * F) / (1 + lam))
    assert ongr_objective(op.norm2, F, Gabs, WF=WF, lam=lam) >= best - 1e-12


def test_same_seed_same_labels(blobs):
    X, _ = blobs
    g = _anchor_graph(X, 40)
    for init in ("svd", "random"):
        a = _solve(g, 3, seed=5, init=init)
        b = _solve(g, 3, seed=5, init=init)
        np.testing.assert_array_equal(a.info["labels"], b.info["labels"])
        np.testing.assert_array_equal(a.soft, b.soft)


def test_recovers_blobs(blobs):
    X, y = blobs
    sol = _solve(_anchor_graph(X, 40), 3)
    labels = sol.soft.argmax(1)
    # each true blob maps to one predicted cluster
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(y, labels) > 0.95
    assert sol.converged


def test_zero_row_rule():
    G = np.array([[0.0, 0.2, 0.1], [0.0, 0.0, 0.0], [0.5, 0.0, 0.0]])
    M = np.array([[-1.0, 0.2, 0.1], [-0.3, -0.1, -0.2], [0.5, -0.1, 0.0]])
    solver = OngrSolver()
    labels = solver._labels(M)
    np.testing.assert_array_equal(labels, [1, 1, 0])
    soft, n_zero = solver._soft(G, labels)
    assert n_zero == 1
    np.testing.assert_array_equal(soft.argmax(1), labels)
    assert soft[1].max() == pytest.approx(0.1)  # the smallest positive entry of G
    np.testing.assert_array_equal(soft[[0, 2]], G[[0, 2]])


def test_zero_rows_end_to_end_get_consistent_labels(rng):
    """A random start leaves all-zero rows in the first G (every entry of the row of
    (WF + λF)/(1 + λ) negative); they still get labels, equal to the solver's own labels
    (argmax of the unclipped row), and argmax of soft reproduces them."""
    X = rng.normal(size=(300, 5))
    g = _anchor_graph(X, 30)
    found = False
    for seed in range(10):
        sol = _solve(g, 2, seed=seed, init="random", max_iter=1)
        np.testing.assert_array_equal(sol.soft.argmax(1), sol.info["labels"])
        found |= sol.info["n_zero_rows"] > 0
    assert found, "test problem produced no zero rows"


def test_affinity_graph_through_matvec(blobs):
    X, y = blobs
    from sklearn.neighbors import kneighbors_graph

    A = kneighbors_graph(X, 10, include_self=False)
    A = sp.csr_array(((A + A.T) > 0).astype(float))
    g = graphclust.AffinityGraph(A)
    sol = _solve(g, 3)
    W = g.normalized_adjacency().toarray()
    assert sol.objective[-1] == pytest.approx(
        _dense_objective(W, sol.embedding, sol.soft, 1.0), rel=1e-9)
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(y, sol.soft.argmax(1)) > 0.95
    assert sol.anchor_soft is None


def test_anchor_soft_extends_to_training_points(blobs):
    X, _ = blobs
    g = _anchor_graph(X, 40)
    sol = _solve(g, 3)
    ext = sol.extend(g.Z)
    assert ext.soft.min() >= 0
    assert np.mean(ext.soft.argmax(1) == sol.soft.argmax(1)) > 0.95


@pytest.mark.parametrize("k", [1, 3])
def test_tiny_inputs(k, rng):
    X = rng.normal(size=(30, 2))
    g = _anchor_graph(X, 30, s=5)
    sol = _solve(g, k)
    assert sol.soft.shape == (30, k)
    np.testing.assert_allclose(sol.embedding.T @ sol.embedding, np.eye(k), atol=1e-10)


def test_more_clusters_than_graph_rank(rng):
    """Two duplicate-point groups on two anchors: W has rank 2 < k = 4; the missing
    directions are completed with random orthonormal vectors."""
    X = np.repeat(np.array([[0.0, 0.0], [10.0, 10.0]]), 10, axis=0)
    g = OngrAnchorGraph(n_neighbors=1).build(X, graphclust.Anchors(X[[0, 10]]),
                                              graphclust.Context())
    sol = _solve(g, 4)
    np.testing.assert_allclose(sol.embedding.T @ sol.embedding, np.eye(4), atol=1e-10)
    assert np.all(np.isfinite(sol.soft))


def test_convergence_warning_and_checks(problem):
    with pytest.warns(graphclust.ConvergenceWarning):
        OngrSolver(max_iter=2, tol=0.0).solve(problem, None, 3, graphclust.Context())
    assert OngrSolver(lam=-1.0).check_params()
    assert OngrSolver(positive_part="relu").check_params()
    assert not OngrSolver().check_params()
    # 1 <= k <= n is the Solver contract: the fit plan refuses k > n before ONGR runs
    X = np.random.default_rng(0).normal(size=(12, 2))
    with pytest.raises(graphclust.InputError, match="fewer than n_clusters=13"):
        graphclust.GraphClustering("ongr-k", n_clusters=13).fit(X)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 5), st.sampled_from([1e-4, 1.0, 1e3]))
def test_invariants_property(seed, k, lam):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3))
    g = _anchor_graph(X, 20, seed=seed)
    sol = _solve(g, k, seed=seed, lam=lam, max_iter=10)
    np.testing.assert_allclose(sol.embedding.T @ sol.embedding, np.eye(k), atol=1e-9)
    assert sol.soft.min() >= 0
    assert np.all(sol.soft.any(axis=1))  # zero rows were given a label entry
    seq = np.column_stack([sol.history["objective_after_G"], sol.objective]).ravel()
    assert np.all(np.diff(seq) <= 1e-9 * max(1.0, abs(seq[0])))


@pytest.mark.parametrize("rank", [4, 2])
def test_polar_matches_svd_and_maximises_trace(rng, rank):
    from graphclust_plugins.ongr.solver_ongr import _polar

    Y = rng.normal(size=(50, rank)) @ rng.normal(size=(rank, 4))
    F = _polar(Y)
    np.testing.assert_allclose(F.T @ F, np.eye(4), atol=1e-10)
    U, s, Vt = np.linalg.svd(Y, full_matrices=False)
    assert np.trace(F.T @ Y) == pytest.approx(s.sum())  # Eq. 10 upper bound attained
    if rank == 4:
        np.testing.assert_allclose(F, U @ Vt, atol=1e-8)
    for _ in range(10):
        Q = np.linalg.qr(rng.normal(size=(50, 4)))[0]
        assert np.trace(Q.T @ Y) <= s.sum() + 1e-9


def test_init_lanczos_path_matches_dense(rng):
    """m above the dense threshold uses Lanczos on the m x m Gram; same subspace as dense W."""
    from threadpoolctl import threadpool_limits

    X = rng.normal(size=(400, 4))
    g = _anchor_graph(X, 320, s=4)
    U, vals = OngrOperator(g).leading(3, np.random.default_rng(1))
    with threadpool_limits(1):  # a dense eigh crawls with oversubscribed BLAS threads
        ev, vecs = np.linalg.eigh(g.to_dense())
    np.testing.assert_allclose(vals, ev[::-1][:3], atol=1e-8)
    np.testing.assert_allclose(U.T @ U, np.eye(3), atol=1e-10)
    if ev[-3] - ev[-4] > 1e-3:
        np.testing.assert_allclose(U @ U.T, vecs[:, -3:] @ vecs[:, -3:].T, atol=1e-6)
