"""DCD numerics against dense references, and the invariants of Algorithm 1."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphclust.numerics import normalize_rows
from graphclust_plugins.dcd import _mm

# ----------------------------------------------------------------------------- references


def dense_ahat(W):
    """Eq. (6) literally: Â = W diag(1/s) Wᵀ, dense."""
    s = W.sum(axis=0)
    return (W / s) @ W.T


def dense_kl(A, W):
    """Eq. (4) literally over all n² pairs (0 log 0 = 0)."""
    Ah = dense_ahat(W)
    A = np.asarray(A, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(A > 0, A * np.log(A / Ah), 0.0)
    return float(np.sum(t - A + Ah))


def dense_step(A, W, alpha):
    """Algorithm 1 transcribed literally with dense matrices."""
    A = np.asarray(A, dtype=float)
    Ah = dense_ahat(W)
    Z = np.where(A > 0, A / Ah, 0.0)
    s = W.sum(axis=0)
    ZW = Z @ W
    WtZW = W.T @ Z @ W
    gm = 2 * ZW / s + alpha / W
    gp = np.diag(WtZW)[None, :] / s**2 + 1.0 / W
    a = (W / gp).sum(axis=1, keepdims=True)
    b = (W * gm / gp).sum(axis=1, keepdims=True)
    return W * (gm * a + 1) / (gp * a + b)


# ----------------------------------------------------------------------------- strategies


@st.composite
def graphs_and_w(draw, max_n=25, weighted=None):
    n = draw(st.integers(3, max_n))
    r = draw(st.integers(2, 5))
    seed = draw(st.integers(0, 2**31 - 1))
    density = draw(st.floats(0.05, 0.8))
    w = draw(st.booleans()) if weighted is None else weighted
    rng = np.random.default_rng(seed)
    M = np.triu(rng.random((n, n)) < density, 1)
    M = M | M.T
    if w:
        vals = np.triu(rng.uniform(0.1, 3.0, (n, n)), 1)
        A = M * (vals + vals.T)
    else:
        A = M.astype(float)
    if draw(st.booleans()):  # self-loops, as in an anchor-level graph ZᵀZ
        A = A + np.diag(rng.uniform(0.0, 2.0, n) * (rng.random(n) < 0.5))
    W = rng.uniform(0.05, 1.0, (n, r))
    W /= W.sum(axis=1, keepdims=True)
    return A, W


def nonempty(A):
    return np.count_nonzero(A) > 0


PROPS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ----------------------------------------------------------------------------- tests


@PROPS
@given(graphs_and_w())
def test_ahat_doubly_stochastic_and_matches_pattern(data):
    """Eq. (6): with rows of W on the simplex Â is symmetric and doubly stochastic; the sparse
    evaluation equals the dense Â on the pattern of A."""
    A, W = data
    Ah = dense_ahat(W)
    np.testing.assert_allclose(Ah, Ah.T, atol=1e-12)
    np.testing.assert_allclose(Ah.sum(axis=0), 1.0, atol=1e-12)
    np.testing.assert_allclose(Ah.sum(axis=1), 1.0, atol=1e-12)
    # a full pattern: the sparse path reproduces every entry of the dense Â
    full = sp.csr_array(np.ones_like(Ah))
    np.testing.assert_allclose(_mm.approximation_on_pattern(full, W),
                               Ah.ravel(), rtol=1e-12, atol=1e-14)
    As = sp.csr_array(A)
    As.sort_indices()
    rows = np.repeat(np.arange(A.shape[0]), np.diff(As.indptr))
    np.testing.assert_allclose(_mm.approximation_on_pattern(As, W),
                               Ah[rows, As.indices], rtol=1e-12, atol=1e-14)


def test_asymmetric_pattern_is_evaluated_entry_by_entry(rng):
    A = sp.csr_array(np.triu(rng.random((12, 12)) < 0.4, 1).astype(float))
    W = rng.random((12, 3)) + 0.1
    rows = np.repeat(np.arange(12), np.diff(A.indptr))
    np.testing.assert_allclose(_mm.approximation_on_pattern(A, W),
                               dense_ahat(W)[rows, A.indices], rtol=1e-12)


@PROPS
@given(graphs_and_w())
def test_sparse_kl_equals_dense(data):
    """The sparse KL (Σ Â over all pairs taken as Σ W) equals Eq. (4) summed densely —
    also off the simplex, where Σ_ij Â_ij = Σ_ik W_ik still holds."""
    A, W = data
    assert _mm.kl_objective(sp.csr_array(A), W) == pytest.approx(dense_kl(A, W), rel=1e-10,
                                                                  abs=1e-9)
    W2 = W * np.random.default_rng(1).uniform(0.5, 2.0, (W.shape[0], 1))
    assert _mm.kl_objective(sp.csr_array(A), W2) == pytest.approx(dense_kl(A, W2), rel=1e-10,
                                                                   abs=1e-9)


@PROPS
@given(graphs_and_w(), st.sampled_from([1.0, 1.2, 2.0, 5.0, 0.5]))
def test_step_matches_literal_algorithm_1(data, alpha):
    A, W = data
    np.testing.assert_allclose(_mm.mm_step(sp.csr_array(A), W, alpha), dense_step(A, W, alpha),
                               rtol=1e-10, atol=1e-14)


@PROPS
@given(graphs_and_w(), st.sampled_from([1.0, 1.2, 2.0, 5.0, 0.5]))
def test_theorem_1_lagrangian_decreases(data, alpha):
    """Theorem 1: L(W_new, λ) ≤ L(W, λ) with λ_i = (b_i − 1)/a_i chosen at W (Eq. 10, 12)."""
    A, W = data
    A = sp.csr_array(A)
    for _ in range(5):
        lam = _mm.multipliers(A, W, alpha)
        before = _mm.lagrangian(A, W, lam, alpha)
        W_new = _mm.mm_step(A, W, alpha)
        after = _mm.lagrangian(A, W_new, lam, alpha)
        assert after <= before + 1e-9 * max(1.0, abs(before))
        W = W_new


@PROPS
@given(graphs_and_w())
def test_kl_non_increasing_for_alpha_1(data):
    """What holds beyond Theorem 1: for α = 1 the KL of Eq. (4) evaluated at the
    row-normalised iterate (a feasible point) never increased in any run we generated.
    (The KL of the raw, slightly off-simplex iterate can rise by ~1e-4 relative.)"""
    A, W = data
    if not nonempty(A):
        return
    out = _mm.run_dcd(sp.csr_array(A), W, 1.0, max_iter=40, tol=0.0)
    kl = np.concatenate([[out["kl0"]], out["kl"]])
    assert np.all(np.diff(kl) <= 1e-10 * np.abs(kl[:-1]) + 1e-12)


@PROPS
@given(graphs_and_w(), st.sampled_from([1.0, 2.0, 5.0]))
def test_rows_stay_near_simplex(data, alpha):
    """Algorithm 1 keeps W positive and its rows near the simplex (not exactly: the
    relaxed multipliers only drive them there; sums stayed within [0.5, 1.5] in all runs)."""
    A, W = data
    out = _mm.run_dcd(sp.csr_array(A), W, alpha, max_iter=30, tol=0.0)
    assert np.all(out["W"] > 0)
    assert np.all(np.isfinite(out["W"]))
    assert out["max_row_deviation"] < 0.5


def test_fixed_point_is_on_the_simplex(rng):
    """At a fixed point of Eq. (13), Σ_k W_ik = 1 follows from λ = (b − 1)/a; a long run
    therefore ends close to the simplex."""
    n = 16
    M = np.triu(rng.random((n, n)) < 0.3, 1)
    A = sp.csr_array((M | M.T).astype(float))
    W = rng.uniform(0.1, 1.0, (n, 2))
    W /= W.sum(axis=1, keepdims=True)
    out = _mm.run_dcd(A, W, 1.0, max_iter=1500, tol=1e-14)
    dev = np.abs(out["W"].sum(axis=1) - 1)
    assert dev.max() < 1e-3
    assert dev.max() < out["max_row_deviation"]


def test_recorded_kl_is_the_normalised_iterate(rng):
    n = 20
    M = np.triu(rng.random((n, n)) < 0.4, 1)
    A = sp.csr_array((M | M.T).astype(float))
    W = rng.uniform(0.1, 1.0, (n, 4))
    out = _mm.run_dcd(A, W / W.sum(1, keepdims=True), 1.0, max_iter=7, tol=0.0)
    assert len(out["kl"]) == 7
    assert out["kl"][-1] == pytest.approx(dense_kl(A.toarray(), normalize_rows(out["W"], "l1")),
                                          rel=1e-10)


def test_isolated_vertex_and_zero_rows(rng):
    n = 10
    M = np.triu(rng.random((n, n)) < 0.5, 1)
    A = (M | M.T).astype(float)
    A[0, :] = A[:, 0] = 0.0          # isolated vertex
    W = rng.uniform(0.1, 1.0, (n, 3))
    W /= W.sum(axis=1, keepdims=True)
    out = _mm.run_dcd(sp.csr_array(A), W, 1.0, max_iter=50, tol=0.0)
    assert np.all(np.isfinite(out["W"])) and np.all(out["W"] > 0)
    assert np.isclose(out["kl"][-1], dense_kl(A, normalize_rows(out["W"], "l1")), rtol=1e-10)
    # an all-zero row of W is left unchanged and contributes nothing
    W[3] = 0.0
    W2 = _mm.mm_step(sp.csr_array(A), W, 1.0)
    assert np.all(W2[3] == 0) and np.all(np.isfinite(W2))


def test_indicator_init():
    W = _mm.indicator_init(np.array([0, 2, 1, 2]), 3, 0.2)
    np.testing.assert_allclose(W.sum(axis=1), 1.0)
    np.testing.assert_allclose(W[1], np.array([0.2, 0.2, 1.2]) / 1.6)
    assert np.all(W.argmax(axis=1) == [0, 2, 1, 2])


def test_blocked_evaluation_matches_unblocked(rng, monkeypatch):
    n = 60
    M = np.triu(rng.random((n, n)) < 0.3, 1)
    A = sp.csr_array((M | M.T).astype(float))
    W = rng.uniform(0.1, 1.0, (n, 4))
    full = _mm.approximation_on_pattern(A, W)
    monkeypatch.setattr(_mm, "_BLOCK_NNZ", 7)
    np.testing.assert_allclose(_mm.approximation_on_pattern(A, W), full, rtol=1e-14)
