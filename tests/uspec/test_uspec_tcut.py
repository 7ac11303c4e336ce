"""Transfer cut (uspec/_tcut.py) against the dense bipartite eigenproblem."""

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from graphclust_plugins.uspec._tcut import transfer_cut


def random_bipartite(n, p, K, seed):
    """Sparse n x p cross-affinity with K positive entries per row."""
    rng = np.random.default_rng(seed)
    cols = np.stack([rng.choice(p, K, replace=False) for _ in range(n)])
    vals = rng.uniform(0.05, 1.0, (n, K))
    B = sp.csr_array((vals.ravel(), cols.ravel(), np.arange(0, n * K + 1, K)), shape=(n, p))
    unused = np.flatnonzero(np.asarray(B.sum(axis=0)).ravel() == 0)
    extra = sp.csr_array((np.full(unused.size, 0.5), (unused % n, unused)), shape=(n, p))
    return sp.csr_array(B + extra)  # every representative chosen by some point


def dense_bipartite(B):
    """(L, D) of the full (n + p) bipartite graph W = [[0, B], [Bᵀ, 0]]."""
    Bd = B.toarray()
    n, p = Bd.shape
    W = np.block([[np.zeros((n, n)), Bd], [Bd.T, np.zeros((p, p))]])
    D = np.diag(W.sum(axis=1))
    return D - W, D


def assert_same_subspace(A, Bm, M, tol=1e-6):
    """span(A) == span(Bm) in the M inner product (both M-orthonormal-ish)."""
    Qa = sla.orth(A)
    Qb = sla.orth(Bm)
    s = sla.svdvals(Qa.T @ Qb)
    assert s.min() > 1 - tol


@pytest.mark.parametrize("n,p,K,k,seed", [(40, 12, 3, 3, 0), (60, 20, 5, 4, 1), (25, 25, 4, 5, 2)])
def test_matches_dense_bipartite_eigenproblem(n, p, K, k, seed):
    B = random_bipartite(n, p, K, seed)
    res = transfer_cut(B, k, random_state=0)
    L, D = dense_bipartite(B)
    gam, F = sla.eigh(L, D, subset_by_index=[0, k - 1])
    np.testing.assert_allclose(res.gamma, gam, atol=1e-9)
    # every transferred (u, v) is an eigenvector of the full bipartite problem
    f = np.vstack([res.point_embedding, res.v])
    np.testing.assert_allclose(L @ f, (D @ f) * res.gamma[None, :], atol=1e-8)
    # and they span the same eigenspace as the dense solver's
    assert_same_subspace(f, F, D)


@pytest.mark.parametrize("seed", [0, 3])
def test_matches_dense_tcut_problem(seed):
    B = random_bipartite(50, 15, 4, seed)
    k = 4
    res = transfer_cut(B, k, random_state=0)
    Bd = B.toarray()
    dx = Bd.sum(1)
    E = Bd.T @ (Bd / dx[:, None])
    DY = np.diag(Bd.sum(0))
    lam, V = sla.eigh(DY - E, DY, subset_by_index=[0, k - 1])
    np.testing.assert_allclose(res.eigenvalues, lam, atol=1e-9)
    np.testing.assert_allclose(res.gamma * (2 - res.gamma), lam, atol=1e-9)
    # D_Y-orthonormal v, equal to the dense eigenvectors up to sign (simple eigenvalues)
    np.testing.assert_allclose(res.v.T @ DY @ res.v, np.eye(k), atol=1e-8)
    for j in range(k):
        c = res.v[:, j] @ DY @ V[:, j]
        assert abs(abs(c) - 1) < 1e-7
    # u = D_X⁻¹ B v / (1 − γ)
    U = (Bd / dx[:, None]) @ V / (1 - res.gamma)[None, :]
    np.testing.assert_allclose(np.abs(res.point_embedding), np.abs(U), atol=1e-8)
    # the two halves of a bipartite eigenvector carry the same D-mass
    mass_u = np.einsum("ij,i,ij->j", res.point_embedding, dx, res.point_embedding)
    np.testing.assert_allclose(mass_u, 1.0, atol=1e-8)


def test_large_p_iterative_path_agrees_with_dense():
    B = random_bipartite(3000, 700, 5, 4)
    it = transfer_cut(B, 6, random_state=0, dense_below=1)  # ARPACK
    de = transfer_cut(B, 6, random_state=0)  # dense up to DENSE_TCUT_MAX
    np.testing.assert_allclose(it.eigenvalues, de.eigenvalues, atol=1e-8)
    np.testing.assert_allclose(it.point_embedding, de.point_embedding, atol=1e-6)


def test_rep_embedding_transfers_to_points():
    B = random_bipartite(30, 10, 3, 5)
    res = transfer_cut(B, 3)
    dx = np.asarray(B.sum(axis=1)).ravel()
    np.testing.assert_allclose(B @ res.rep_embedding, dx[:, None] * res.point_embedding,
                               atol=1e-12)


def test_zero_column_and_zero_row_rules():
    B = random_bipartite(30, 10, 3, 6).toarray()
    B[:, 4] = 0.0  # a representative nobody chose
    B[7] = 0.0  # a point with no edge
    res = transfer_cut(sp.csr_array(B), 3, random_state=0)
    assert np.all(np.isfinite(res.point_embedding))
    assert not res.active[4] and res.active.sum() == 9
    np.testing.assert_array_equal(res.v[4], 0.0)
    np.testing.assert_array_equal(res.rep_embedding[4], 0.0)
    np.testing.assert_array_equal(res.point_embedding[7], 0.0)
    # the rest equals Tcut on B without that column and row
    keep_r = np.r_[0:7, 8:30]
    keep_c = np.r_[0:4, 5:10]
    ref = transfer_cut(sp.csr_array(B[np.ix_(keep_r, keep_c)]), 3, random_state=0)
    np.testing.assert_allclose(res.eigenvalues, ref.eigenvalues, atol=1e-10)
    np.testing.assert_allclose(res.point_embedding[keep_r], ref.point_embedding, atol=1e-8)


def test_disconnected_graph_separates_components():
    B1 = random_bipartite(20, 6, 2, 7).toarray()
    B2 = random_bipartite(25, 8, 3, 8).toarray()
    B = sp.csr_array(sla.block_diag(B1, B2))
    res = transfer_cut(B, 2, random_state=0)
    np.testing.assert_allclose(res.eigenvalues, 0.0, atol=1e-10)
    u = res.point_embedding
    # each component's rows collapse to one point, and the two points differ
    assert np.ptp(u[:20], axis=0).max() < 1e-8 and np.ptp(u[20:], axis=0).max() < 1e-8
    assert np.linalg.norm(u[0] - u[20]) > 1e-3


def test_more_eigenpairs_than_active_representatives():
    B = random_bipartite(12, 4, 2, 9)
    res = transfer_cut(B, 10)
    assert res.point_embedding.shape == (12, 4)
    assert np.all(np.isfinite(res.point_embedding))


def test_all_zero_and_bad_inputs():
    res = transfer_cut(sp.csr_array((5, 3)), 2)
    assert res.point_embedding.shape == (5, 1) and not res.point_embedding.any()
    with pytest.raises(ValueError, match="nonnegative"):
        transfer_cut(sp.csr_array(-np.ones((3, 2))), 1)
    with pytest.raises(ValueError, match="non-finite"):
        transfer_cut(np.array([[np.nan, 1.0]]), 1)


def test_same_seed_same_result_and_dense_input():
    B = random_bipartite(40, 12, 3, 10)
    a = transfer_cut(B, 3, random_state=1)
    b = transfer_cut(B.toarray(), 3, random_state=1)
    np.testing.assert_array_equal(a.point_embedding, b.point_embedding)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 40), p=st.integers(2, 15), k=st.integers(1, 5), seed=st.integers(0, 10**6))
def test_property_eigen_equations_hold(n, p, k, seed):
    rng = np.random.default_rng(seed)
    Bd = rng.uniform(0, 1, (n, p)) * (rng.uniform(size=(n, p)) < 0.4)
    B = sp.csr_array(Bd)
    res = transfer_cut(B, k, random_state=0)
    assert np.all(np.isfinite(res.point_embedding)) and np.all(np.isfinite(res.rep_embedding))
    assert np.all((res.eigenvalues >= -1e-12) & (res.eigenvalues <= 1 + 1e-12))
    assert np.all(np.diff(res.eigenvalues) >= -1e-10)
    act = res.active
    dy = Bd.sum(0)
    E = Bd.T @ (Bd * np.where(Bd.sum(1) > 0, 1 / np.maximum(Bd.sum(1), 1e-300), 0)[:, None])
    V = res.v[act]
    lhs = (np.diag(dy) - E)[np.ix_(act, act)] @ V
    rhs = (dy[act][:, None] * V) * res.eigenvalues[None, :]
    np.testing.assert_allclose(lhs, rhs, atol=1e-8)


def test_repeated_zero_eigenvalue_of_many_components_is_found():
    """Ten disconnected blocks at p = 600 (above the numerics layer's ARPACK threshold of
    500): λ = 0 is repeated ten times and every block gets its own embedding row. ARPACK
    (the path taken here before DENSE_TCUT_MAX) returned fewer zero eigenvalues, so
    two blocks shared one row."""
    blocks = [random_bipartite(60, 60, 3, 100 + j) for j in range(10)]
    B = sp.block_diag(blocks, format="csr")
    res = transfer_cut(B, 10, random_state=0)
    np.testing.assert_allclose(res.eigenvalues, 0.0, atol=1e-10)
    U = res.point_embedding / np.linalg.norm(res.point_embedding, axis=1, keepdims=True)
    block = np.repeat(np.arange(10), 60)
    centres = np.array([U[block == j].mean(axis=0) for j in range(10)])
    # within a block the rows coincide; the ten blocks are ten mutually orthogonal rows
    np.testing.assert_allclose(U, centres[block], atol=1e-8)
    np.testing.assert_allclose(centres @ centres.T, np.eye(10), atol=1e-8)


@pytest.mark.parametrize("scale", [1.0, 3.0])  # values in [0, 1] (fixed point) and beyond
@pytest.mark.parametrize("active", ["all", "some"])
def test_transfer_gram_in_row_batches_is_the_one_batch_sum(monkeypatch, scale, active):
    """E = Baᵀ D_X⁻¹ Ba summed in row batches (bounded memory) is bit for bit the sum of
    the block in one batch, and equals the dense product."""
    import graphclust_plugins.uspec._tcut as tcut

    B = sp.csr_array(random_bipartite(300, 40, 5, seed=3) * scale)
    cols = np.arange(40) if active == "all" else np.arange(0, 40, 3)
    whole = tcut.gram_from_exact(tcut.exact_transfer_gram(B, cols), cols.size).toarray()
    monkeypatch.setattr(tcut, "PAIRS_PER_BATCH", 7 * 25)  # 7 rows of 5 entries a batch
    batched = tcut.gram_from_exact(tcut.exact_transfer_gram(B, cols), cols.size).toarray()
    np.testing.assert_array_equal(batched, whole)
    Bd = B.toarray()
    ref = Bd[:, cols].T @ (Bd[:, cols] / Bd.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(whole, ref, rtol=1e-12, atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 12), max_size=40), st.integers(1, 200))
def test_property_batch_bounds_cover_the_rows_within_the_pair_budget(per_row, pairs):
    from graphclust_plugins.uspec._tcut import _batch_bounds

    per_row = np.asarray(per_row, dtype=np.int64)
    bounds = _batch_bounds(per_row, pairs)
    assert bounds[0] == 0 and bounds[-1] == per_row.size
    assert all(a < b for a, b in zip(bounds[:-1], bounds[1:])) or per_row.size == 0
    for a, b in zip(bounds[:-1], bounds[1:]):
        assert b - a == 1 or int((per_row[a:b] ** 2).sum()) <= pairs
        if b < per_row.size:  # greedy: the next row would not have fitted
            assert int((per_row[a:b + 1] ** 2).sum()) > pairs
