"""graphclust.numerics against slow obvious references (dense eigh, brute-force
distances and weights) plus hypothesis properties (row sums, float32, seeds)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.sparse.linalg import aslinearoperator

import graphclust
from graphclust import numerics as nx
from graphclust.numerics import clamp_anchors, eigen, knn, nearest_anchors


def brute(X, U, s, metric="sqeuclidean", exclude_self=False):
    if metric == "sqeuclidean":
        D = ((X[:, None, :] - U[None, :, :]) ** 2).sum(-1)
    else:
        D = -(X @ U.T)
    if exclude_self:
        np.fill_diagonal(D, np.inf)
    idx = np.argsort(D, axis=1, kind="stable")[:, :s]
    return idx, np.take_along_axis(D, idx, 1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("block", [None, 7])
def test_nearest_anchors_matches_brute_force(rng, dtype, block):
    X = rng.standard_normal((60, 5)).astype(dtype)
    U = rng.standard_normal((13, 5)).astype(dtype)
    idx, d2 = nearest_anchors(X, U, 4, block_size=block)
    bidx, bd = brute(X.astype(float), U.astype(float), 4)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(d2, bd, rtol=tol, atol=tol)
    # indices equal where distances are not tied
    assert (idx == bidx).mean() > 0.95


def test_inner_product_metric(rng):
    X = rng.standard_normal((30, 4))
    U = rng.standard_normal((9, 4))
    idx, vals = nearest_anchors(X, U, 3, metric="inner_product")
    bidx, bvals = brute(X, U, 3, metric="inner_product")
    np.testing.assert_array_equal(idx, bidx)
    np.testing.assert_allclose(vals, -bvals)
    assert np.all(np.diff(vals, axis=1) <= 0)


@pytest.mark.parametrize("n", [50, 5000])
def test_knn_excludes_self_and_matches_brute(rng, n):
    X = rng.standard_normal((n, 6))
    idx, d2 = knn(X, 5)
    assert not np.any(idx == np.arange(n)[:, None])
    sub = rng.choice(n, 40, replace=False)
    D = ((X[sub, None, :] - X[None, :, :]) ** 2).sum(-1)
    D[np.arange(40), sub] = np.inf
    ref = np.sort(D, axis=1)[:, :5]
    np.testing.assert_allclose(d2[sub], ref, rtol=1e-4, atol=1e-4)


def test_knn_approx_recall(rng):
    pytest.importorskip("faiss")
    X = rng.standard_normal((3000, 8)).astype(np.float32)
    exact, _ = knn(X, 10)
    approx, _ = knn(X, 10, method="approx")
    recall = np.mean([len(set(a) & set(e)) / 10 for a, e in zip(approx, exact)])
    assert recall > 0.9


def test_bad_arguments(rng):
    X = rng.standard_normal((5, 2))
    with pytest.raises(ValueError, match="k must be"):
        knn(X, 5)
    with pytest.raises(ValueError, match="metric"):
        nearest_anchors(X, X, 2, metric="cosine")
    with pytest.warns(UserWarning, match="exceeds the number of samples"):
        assert clamp_anchors(10, 5) == 5


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 30), st.integers(1, 8), st.integers(0, 10_000))
def test_property_sorted_and_valid(n, s, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    U = rng.standard_normal((max(s, 3), 3))
    idx, d2 = nearest_anchors(X, U, s)
    assert idx.shape == (n, s) and np.all(idx < U.shape[0])
    assert np.all(np.diff(d2, axis=1) >= -1e-12)
    assert all(len(set(r)) == s for r in idx)


# ---------------------------------------------------------------- distances


def brute_sq(X, U):
    return ((X[:, None, :].astype(float) - U[None, :, :].astype(float)) ** 2).sum(-1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sq_distances_match_brute_force_and_keep_dtype(rng, dtype):
    X = rng.standard_normal((25, 6)).astype(dtype)
    U = rng.standard_normal((9, 6)).astype(dtype)
    D = nx.sq_distances(X, U)
    assert D.dtype == dtype and D.min() >= 0
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(D, brute_sq(X, U), rtol=tol, atol=tol)
    c = nx.distance_reference(U)
    Uc = U - c
    np.testing.assert_array_equal(nx.sq_distances(X, U, np.einsum("ij,ij->i", Uc, Uc),
                                                  center=c), D)
    near = nx.sq_distances(X, U, np.einsum("ij,ij->i", U, U))  # c = 0, the plain expansion
    np.testing.assert_allclose(near, brute_sq(X, U), rtol=tol, atol=tol)


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=12),
                  elements=st.floats(-1e3, 1e3)),
       st.integers(1, 14), st.booleans())
def test_smallest_per_row_is_a_sorted_selection(scores, s, largest):
    idx, vals = nx.smallest_per_row(scores, s, largest=largest)
    m = scores.shape[1]
    assert idx.shape == (scores.shape[0], min(s, m))
    np.testing.assert_array_equal(np.take_along_axis(scores, idx, 1), vals)
    ref = np.sort(-scores if largest else scores, axis=1)[:, :min(s, m)]
    np.testing.assert_array_equal(-vals if largest else vals, ref)
    assert all(len(set(r)) == idx.shape[1] for r in idx)


def brute_within(X, U, owner, candidates, s):
    """Per row: sort all of its owner's candidates by (distance, position), keep s."""
    idx = np.empty((X.shape[0], s), dtype=np.int64)
    d2 = np.empty((X.shape[0], s))
    for i, g in enumerate(owner):
        c = np.asarray(candidates[g])
        di = brute_sq(X[i:i + 1], U[c])[0]
        order = np.argsort(di, kind="stable")[:s]
        idx[i], d2[i] = c[order], di[order]
    return idx, d2


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("block", [None, 3])
@pytest.mark.parametrize("as_array", [False, True])
def test_grouped_nearest_matches_brute_force_within_candidates(rng, dtype, block, as_array):
    X = rng.standard_normal((120, 5)).astype(dtype)
    U = rng.standard_normal((40, 5)).astype(dtype)
    if as_array:  # one row of candidates per anchor, as ULGE's leaf search passes them
        cands = np.stack([rng.permutation(40)[:9] for _ in range(40)])
        owner = rng.integers(0, 40, 120)
    else:  # ragged groups, as U-SPEC's groups of representatives
        cands = [np.arange(0, 40, 2), np.arange(1, 40, 2), np.arange(40), np.array([5, 7, 1, 30])]
        owner = rng.integers(0, 4, 120)
    idx, d2 = nx.grouped_nearest(X, U, owner, cands, 4, block_size=block)
    bi, bd = brute_within(X, U, owner, cands, 4)
    assert idx.dtype == np.int64 and d2.dtype == np.float64 and d2.min() >= 0
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(d2, bd, rtol=tol, atol=tol)
    if dtype == np.float64:  # no near-ties at this size: the indices agree too
        np.testing.assert_array_equal(idx, bi)
    for i, g in enumerate(owner):
        assert set(idx[i]) <= set(np.asarray(cands[g]).tolist())


def test_grouped_nearest_with_all_rows_as_candidates_is_nearest_anchors(rng):
    X = rng.standard_normal((70, 4))
    U = rng.standard_normal((15, 4))
    owner = rng.integers(0, 3, 70)
    idx, d2 = nx.grouped_nearest(X, U, owner, [np.arange(15)] * 3, 6)
    ri, rd = nearest_anchors(X, U, 6)
    np.testing.assert_array_equal(idx, ri)
    np.testing.assert_allclose(d2, rd, rtol=1e-12, atol=1e-12)


def test_grouped_nearest_edge_cases_and_errors(rng):
    X = rng.standard_normal((6, 2))
    U = rng.standard_normal((5, 2))
    cands = [np.arange(5), np.array([0, 1])]
    # an owner with no rows may have too few candidates; an empty X gives empty results
    idx, _ = nx.grouped_nearest(X, U, np.zeros(6, int), cands, 3)
    assert idx.shape == (6, 3)
    idx, d2 = nx.grouped_nearest(X[:0], U, np.zeros(0, int), cands, 3)
    assert idx.shape == (0, 3) and d2.shape == (0, 3)
    with pytest.raises(ValueError, match="owner 1 has 2 candidates, fewer than s=3"):
        nx.grouped_nearest(X, U, np.array([0, 1, 0, 0, 0, 0]), cands, 3)
    with pytest.raises(ValueError, match="owner must have shape"):
        nx.grouped_nearest(X, U, np.zeros(5, int), cands, 1)
    with pytest.raises(ValueError, match="owner must index the 2 candidate lists"):
        nx.grouped_nearest(X, U, np.full(6, 2), cands, 1)
    with pytest.raises(ValueError, match="s must be >= 1"):
        nx.grouped_nearest(X, U, np.zeros(6, int), cands, 0)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 40), st.integers(1, 12), st.integers(1, 5), st.integers(1, 4),
       st.integers(0, 10_000), st.sampled_from([np.float64, np.float32]))
def test_property_grouped_nearest_is_a_sorted_search_within_candidates(n, m, g, s, seed,
                                                                       dtype):
    rng = np.random.default_rng(seed)
    s = min(s, m)
    # integer coordinates make exact ties (and duplicates) common
    X = rng.integers(-3, 4, (n, 2)).astype(dtype)
    U = rng.integers(-3, 4, (m, 2)).astype(dtype)
    cands = [rng.permutation(m)[:rng.integers(s, m + 1)] for _ in range(g)]
    owner = rng.integers(0, g, n)
    idx, d2 = nx.grouped_nearest(X, U, owner, cands, s, block_size=int(rng.integers(1, 8)))
    _, bd = brute_within(X, U, owner, cands, s)
    np.testing.assert_array_equal(d2, bd)  # small integers: exact in float32 too
    np.testing.assert_array_equal(d2, brute_sq(X, U)[np.arange(n)[:, None], idx])
    assert all(len(set(r)) == s for r in idx)
    assert all(set(idx[i]) <= set(cands[owner[i]].tolist()) for i in range(n))


def test_self_first_neighbors_match_brute_force_and_keep_their_own_row(rng):
    U = rng.standard_normal((30, 3))
    nb = nx.self_first_neighbors(U, 5)
    assert nb.shape == (30, 5) and nb.dtype == np.int64
    np.testing.assert_array_equal(nb[:, 0], np.arange(30))
    D = brute_sq(U, U)
    np.testing.assert_array_equal(nb, np.argsort(D, axis=1, kind="stable")[:, :5])
    # duplicates: every row still lists itself first, its twin next
    Ud = np.vstack([U[:4], U[:4]])
    nb = nx.self_first_neighbors(Ud, 2)
    np.testing.assert_array_equal(nb[:, 0], np.arange(8))
    np.testing.assert_array_equal(nb[:, 1], (np.arange(8) + 4) % 8)
    np.testing.assert_array_equal(nx.self_first_neighbors(U[:1], 1), [[0]])


def test_mean_sq_distance_matches_brute_force(rng):
    X = rng.standard_normal((40, 5)) + 3.0
    U = rng.standard_normal((7, 5))
    assert nx.mean_sq_distance(X, U) == pytest.approx(brute_sq(X, U).mean(), rel=1e-12)
    assert nx.mean_sq_distance(X[:1], X[:1]) == 0.0


def test_clamp_neighbors_warns_and_names_the_part():
    assert nx.clamp_neighbors(3, 10, "graph 'x'") == 3
    with pytest.warns(graphclust.GraphClustWarning, match="graph 'x': n_neighbors=12"):
        assert nx.clamp_neighbors(12, 10, "graph 'x'") == 10


def test_top_level_numerics_names_are_the_numerics_layer_s():
    assert graphclust.clamp_anchors is nx.clamp_anchors
    assert graphclust.float_dtype is nx.float_dtype


# ---------------------------------------------------------------- eigen


def sym_matrix(rng, n, gap=True):
    """Symmetric matrix with well separated leading eigenvalues."""
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    vals = np.linspace(-1.0, 1.0, n)
    if gap:
        vals[-8:] = 2.0 + np.arange(8)
    return (Q * vals) @ Q.T


def assert_same_vectors(V, R, tol=1e-8):
    # columns equal up to sign (distinct eigenvalues)
    np.testing.assert_allclose(np.abs(np.sum(V * R, axis=0)), 1.0, atol=tol)


@pytest.mark.parametrize("kind", ["dense", "sparse", "operator"])
@pytest.mark.parametrize("method", ["auto", "dense", "arpack"])
def test_leading_eigenvectors_match_dense_eigh(rng, kind, method):
    n, k = 120, 5
    M = sym_matrix(rng, n)
    ref_vals, ref_vecs = np.linalg.eigh(M)
    ref_vals, ref_vecs = ref_vals[::-1][:k], ref_vecs[:, ::-1][:, :k]
    A = {"dense": M, "sparse": sp.csr_array(M), "operator": aslinearoperator(M)}[kind]
    vals, vecs = nx.leading_eigenvectors(A, k, rng=np.random.default_rng(1), method=method)
    np.testing.assert_allclose(vals, ref_vals, rtol=1e-10, atol=1e-10)
    assert np.all(np.diff(vals) <= 0)
    np.testing.assert_allclose(vecs.T @ vecs, np.eye(k), atol=1e-10)
    assert_same_vectors(vecs, ref_vecs)


def test_the_rule_picks_dense_for_small_or_held_and_arpack_for_large_sparse(rng):
    small = sp.random(400, 400, density=0.01, random_state=0, format="csr")
    large = sp.random(2000, 2000, density=0.001, random_state=0, format="csr")
    assert nx.use_dense_eigensolver(small, 10)
    assert not nx.use_dense_eigensolver(large, 10)
    assert nx.use_dense_eigensolver(large, 500)          # 4k >= n: Krylov saves nothing
    assert nx.use_dense_eigensolver(np.zeros((1200, 1200)), 10)   # already dense
    assert not nx.use_dense_eigensolver(np.zeros((1600, 1600)), 10)
    assert not nx.use_dense_eigensolver(aslinearoperator(np.eye(1200)), 10)


def test_arpack_path_equals_dense_path_and_is_seeded(rng, monkeypatch):
    M = sp.csr_array(sym_matrix(rng, 300))
    dense_vals, dense_vecs = nx.leading_eigenvectors(M, 6, method="dense")
    monkeypatch.setattr(eigen, "DENSE_MAX", 50)
    assert not nx.use_dense_eigensolver(M, 6)
    a = nx.leading_eigenvectors(M, 6, rng=np.random.default_rng(7))
    b = nx.leading_eigenvectors(M, 6, rng=np.random.default_rng(7))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_allclose(a[0], dense_vals, rtol=1e-10)
    assert_same_vectors(a[1], dense_vecs)
    with pytest.raises(ValueError, match="needs rng"):
        nx.leading_eigenvectors(M, 6)


def test_leading_eigenvectors_edge_cases(rng):
    M = sym_matrix(rng, 6, gap=False)
    vals, vecs = nx.leading_eigenvectors(M, 10)            # k clamped to n
    np.testing.assert_allclose(vals, np.sort(np.linalg.eigvalsh(M))[::-1], atol=1e-12)
    assert vecs.shape == (6, 6)
    # repeated eigenvalue 1 of a graph with 3 components: every copy is returned
    A = sp.block_diag([np.ones((4, 4)) - np.eye(4)] * 3, format="csr") / 3.0
    vals, _ = nx.leading_eigenvectors(A, 3)
    np.testing.assert_allclose(vals, 1.0, atol=1e-12)
    with pytest.raises(ValueError, match="method"):
        nx.leading_eigenvectors(M, 2, method="lobpcg")


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 8), st.integers(1, 5)),
                  elements=st.floats(-10, 10)))
def test_sign_flip_makes_the_largest_entry_positive(U):
    F = nx.sign_flip(U)
    np.testing.assert_array_equal(np.abs(F), np.abs(U))
    big = F[np.abs(F).argmax(axis=0), np.arange(F.shape[1])]
    assert np.all(big >= 0)
    np.testing.assert_array_equal(nx.sign_flip(F), F)


def test_singular_values_from_gram_match_svd(rng):
    B = rng.standard_normal((30, 6)) @ np.diag([5.0, 3.0, 2.0, 1.0, 1e-13, 0.0])
    vals, V = nx.leading_eigenvectors(B.T @ B, 6)
    sigma, inv = nx.singular_values_from_gram(vals)
    np.testing.assert_allclose(sigma[:4], np.linalg.svd(B, compute_uv=False)[:4], rtol=1e-10)
    assert np.all(inv[4:] == 0) and np.allclose(inv[:4], 1 / sigma[:4])
    U = B @ (V * inv)
    np.testing.assert_allclose(U[:, :4].T @ U[:, :4], np.eye(4), atol=1e-8)
    _, inv2 = nx.singular_values_from_gram(vals[1:], largest=1e20)
    assert np.all(inv2 == 0)


# ---------------------------------------------------------------- anchor rows


def brute_gaussian_Z(X, U, s, h):
    D = brute_sq(X, U)
    Z = np.zeros_like(D)
    for i, row in enumerate(D):
        near = np.argsort(row, kind="stable")[:s]
        w = np.exp(-row[near] / h)
        Z[i, near] = w / w.sum()
    return Z


@pytest.mark.parametrize("s, h", [(1, 1.0), (3, 0.5), (5, 8.0)])
def test_gaussian_anchor_rows_match_brute_force(rng, s, h):
    X = rng.standard_normal((50, 4))
    U = rng.standard_normal((12, 4))
    idx, d2 = nearest_anchors(X, U, s)
    Z = nx.gaussian_anchor_rows(idx, d2, 12, h)
    assert isinstance(Z, sp.csr_array) and Z.has_sorted_indices and Z.nnz == 50 * s
    np.testing.assert_allclose(Z.toarray(), brute_gaussian_Z(X, U, s, h), rtol=1e-10, atol=1e-14)


def test_gaussian_rows_never_underflow_and_zero_width_is_uniform(rng):
    X = rng.standard_normal((20, 3)) + 1e4
    U = rng.standard_normal((6, 3))
    idx, d2 = nearest_anchors(X, U, 3)
    Z = nx.gaussian_anchor_rows(idx, d2, 6, 1e-6)
    np.testing.assert_allclose(Z.sum(axis=1), 1.0)
    np.testing.assert_allclose(nx.gaussian_weights(d2, 0.0), 1.0 / 3)


def test_rows_from_a_distance_prefix_equal_a_fresh_search(rng):
    """A parameter search computes the nearest anchors once for the largest s and builds
    every smaller s from the prefix: that must equal searching with that s."""
    X = rng.standard_normal((120, 4))
    U = rng.standard_normal((15, 4))
    idx, d2 = nearest_anchors(X, U, 8)
    for s in (2, 5, 8):
        i_s, d_s = nearest_anchors(X, U, s)
        assert nx.self_tuning_sigma(d2[:, :s]) == pytest.approx(nx.self_tuning_sigma(d_s))
        sig = nx.self_tuning_sigma(d_s)
        np.testing.assert_allclose(nx.gaussian_anchor_rows(idx[:, :s], d2[:, :s], 15, sig).toarray(),
                                   nx.gaussian_anchor_rows(i_s, d_s, 15, sig).toarray(),
                                   rtol=1e-12, atol=0)


def test_self_tuning_sigma_matches_brute_force_and_degenerates_to_one(rng):
    X = rng.standard_normal((30, 3))
    U = rng.standard_normal((8, 3))
    _, d2 = nearest_anchors(X, U, 4)
    ref = np.mean(np.sqrt(np.sort(brute_sq(X, U), axis=1)[:, 3]))
    assert nx.self_tuning_sigma(d2) == pytest.approx(ref, rel=1e-10)
    assert nx.self_tuning_sigma(np.zeros((5, 2))) == 1.0
    assert nx.self_tuning_sigma(np.zeros((0, 2))) == 1.0


def brute_adaptive(row, k):
    d = np.sort(row)
    den = k * d[k] - d[:k].sum()
    return (d[k] - d[:k]) / den


def test_adaptive_weights_match_eq18_and_rules(rng):
    D = np.sort(rng.random((30, 6)), axis=1)
    W = nx.adaptive_weights(D, 5)
    np.testing.assert_allclose(W, np.array([brute_adaptive(r, 5) for r in D]), rtol=1e-12)
    # a point equidistant from all anchors: uniform weights
    np.testing.assert_allclose(nx.adaptive_weights(np.array([[1.0, 1.0, 1.0, 1.0]]), 3), [[1 / 3] * 3])
    # a tie with the (k+1)-th: that anchor gets 0
    np.testing.assert_allclose(nx.adaptive_weights(np.array([[0.0, 1.0, 2.0, 2.0]]), 3),
                               [[2 / 3, 1 / 3, 0.0]])
    # a point sitting on an anchor with all others at the same distance
    np.testing.assert_allclose(nx.adaptive_weights(np.array([[0.0, 0.0, 0.0]]), 2).sum(), 1.0)


def test_adaptive_anchor_rows_drop_tied_zero_weights(rng):
    X = rng.standard_normal((40, 3))
    U = rng.standard_normal((10, 3))
    idx, d2 = nearest_anchors(X, U, 5)
    Z = nx.adaptive_anchor_rows(idx, d2, 10, 4)
    dense = np.zeros((40, 10))
    for i, row in enumerate(brute_sq(X, U)):
        near = np.argsort(row)[:4]
        dense[i, near] = brute_adaptive(row, 4)
    np.testing.assert_allclose(Z.toarray(), dense, rtol=1e-10, atol=1e-14)
    assert Z.nnz <= 40 * 4 and np.all(Z.data > 0)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 25), st.integers(2, 9), st.integers(1, 6), st.integers(0, 10_000),
       st.sampled_from([np.float64, np.float32]))
def test_property_anchor_rows_are_row_stochastic(n, m, s, seed, dtype):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3)).astype(dtype)
    U = rng.standard_normal((m, 3)).astype(dtype)
    s = min(s, m - 1) if m > 1 else 1
    idx, d2 = nearest_anchors(X, U, s + 1)
    for Z in (nx.gaussian_anchor_rows(idx, d2, m, float(rng.random() + 0.1)),
              nx.adaptive_anchor_rows(idx, d2, m, s)):
        assert Z.shape == (n, m) and Z.data.min() >= 0
        np.testing.assert_allclose(Z.sum(axis=1), 1.0, rtol=1e-10)


# ---------------------------------------------------------------- rows, dtypes, random


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(st.sampled_from([np.float64, np.float32]),
                  st.tuples(st.integers(1, 10), st.integers(1, 5)),
                  elements=st.floats(-100, 100, width=32)),
       st.sampled_from(["l2", "l1"]))
def test_property_normalize_rows(E, norm):
    if norm == "l1":
        E = np.abs(E)
    F = nx.normalize_rows(E, norm)
    assert F.dtype == E.dtype and F.shape == E.shape
    ref = np.linalg.norm(E.astype(float), axis=1) if norm == "l2" else E.astype(float).sum(1)
    tol = 1e-5 if E.dtype == np.float32 else 1e-12
    got = np.linalg.norm(F.astype(float), axis=1) if norm == "l2" else F.astype(float).sum(1)
    np.testing.assert_allclose(got[ref > 0], 1.0, rtol=tol)
    assert np.all(F[ref == 0] == 0)
    np.testing.assert_allclose(F[ref > 0], (E[ref > 0] / ref[ref > 0, None]), rtol=tol, atol=tol)


def test_normalize_rows_rejects_an_unknown_norm():
    with pytest.raises(ValueError, match="norm"):
        nx.normalize_rows(np.ones((2, 2)), "max")


@pytest.mark.parametrize("dtype, expected", [
    (np.float32, np.float32), (np.uint8, np.float32), (np.int16, np.float32), (np.bool_, np.float32),
    (np.float64, np.float64), (np.int32, np.float64), (np.int64, np.float64),
    (np.float16, np.float64)])
def test_float_dtype_rule(dtype, expected):
    assert nx.float_dtype(dtype) is expected
    X = np.ones((3, 2), dtype=dtype)
    assert nx.as_float(X).dtype == expected
    if dtype != np.float16:  # scipy.sparse has no float16
        assert nx.as_dense_float(sp.csr_array(X)).dtype == expected


def test_as_float_does_not_copy_float_input():
    X = np.ones((4, 3), dtype=np.float32)
    assert nx.as_float(X) is X
    assert nx.common_float_dtype(X, X) is np.float32
    assert nx.common_float_dtype(X, X.astype(np.float64)) is np.float64


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 200), st.integers(0, 10_000), st.data())
def test_property_random_helpers_are_seeded(n, seed, data):
    m = data.draw(st.integers(1, n))
    a = nx.sample_rows(np.random.default_rng(seed), n, m)
    b = nx.sample_rows(np.random.default_rng(seed), n, m)
    np.testing.assert_array_equal(a, b)
    assert a.size == m and len(set(a.tolist())) == m and np.all(np.diff(a) > 0) and a.max() < n
    v = nx.start_vector(np.random.default_rng(seed), n)
    np.testing.assert_array_equal(v, nx.start_vector(np.random.default_rng(seed), n))
    assert v.shape == (n,) and np.all(np.abs(v) <= 1)
    k = data.draw(st.integers(1, min(n, 6)))
    Q = nx.random_orthonormal(np.random.default_rng(seed), max(n, k), k)
    np.testing.assert_allclose(Q.T @ Q, np.eye(k), atol=1e-10)


def test_sample_rows_refuses_more_rows_than_exist():
    with pytest.raises(ValueError, match="cannot draw"):
        nx.sample_rows(np.random.default_rng(0), 3, 4)


def test_arpack_that_does_not_converge_falls_back_to_dense(monkeypatch):
    """A stalled ARPACK run (clustered eigenvalues) is redone densely up to
    DENSE_FALLBACK_MAX; above it the error names the likely cause."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import ArpackNoConvergence

    from graphclust.numerics import eigen

    rng = np.random.default_rng(0)
    A = sp.random(800, 800, density=0.02, random_state=1)
    M = sp.csr_array(A + A.T)

    def stalled(*args, **kwargs):
        raise ArpackNoConvergence("no convergence", np.zeros(1), np.zeros((800, 1)))

    monkeypatch.setattr(eigen, "eigsh", stalled)
    vals, vecs = eigen.leading_eigenvectors(M, 4, rng=rng, method="arpack")
    ref = np.linalg.eigvalsh(M.toarray())[::-1][:4]
    np.testing.assert_allclose(vals, ref, atol=1e-10)
    np.testing.assert_allclose(np.abs(vecs.T @ vecs), np.eye(4), atol=1e-10)
    monkeypatch.setattr(eigen, "DENSE_FALLBACK_MAX", 100)
    with pytest.raises(ArpackNoConvergence, match="connected components"):
        eigen.leading_eigenvectors(M, 4, rng=rng, method="arpack")


@pytest.mark.slow  # ten seconds of ARPACK on a hard spectrum
def test_uspec_on_breast_cancer_does_not_stall():
    """The case the general battery found: ARPACK stalled on uspec's Tcut problem."""
    import warnings

    from sklearn.datasets import load_breast_cancer

    from graphclust import GraphClustering

    X, _ = load_breast_cancer(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        labels = GraphClustering("uspec", n_clusters=2, random_state=0).fit_predict(X)
    assert labels.shape == (569,) and set(np.unique(labels)) <= {0, 1}


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=30))
def test_same_partition_against_brute_force(pairs):
    """same_partition holds exactly when some bijection of labels maps a onto b."""
    import itertools

    from graphclust.numerics import same_partition

    a = np.array([p[0] for p in pairs])
    b = np.array([p[1] for p in pairs])
    la, lb = np.unique(a), np.unique(b)
    brute = len(la) == len(lb) and any(
        all(dict(zip(la, perm))[x] == y for x, y in zip(a, b))
        for perm in itertools.permutations(lb))
    assert same_partition(a, b) == brute


# --- a constant offset changes no distance (issue 30) -------------------------------------

def _offset_data(seed, n=40, m=7, d=3):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal((m, d))


@pytest.mark.parametrize("offset", [1e6, 1e9, -3e12])
def test_sq_distances_exact_under_a_large_offset(offset):
    X, U = _offset_data(0)
    shift = np.full(X.shape[1], offset)
    want = brute_sq(X, U)  # the offset cancels in the differences: the slow reference
    got = nx.sq_distances(X + shift, U + shift)
    # each coordinate carries offset·eps of representation error; the expansion must add
    # nothing beyond it (the plain ‖x‖² − 2x·u + ‖u‖² is off by offset²·eps here)
    tol = 8 * abs(offset) * np.finfo(float).eps * np.sqrt(want.max())
    np.testing.assert_allclose(got, want, atol=tol + 1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**16), st.sampled_from([0.0, 1e3, 1e9, -1e9, 1e12]),
       st.integers(1, 5))
def test_nearest_searches_are_translation_invariant(seed, offset, s):
    X, U = _offset_data(seed)
    Xo, Uo = X + offset, U + offset
    # the shifted copies are what the search sees; their exact distances are the reference
    ref = ((Xo[:, None, :] - Uo[None, :, :]) ** 2).sum(-1)
    idx, vals = nx.nearest_anchors(Xo, Uo, s)
    exact = dict(rtol=1e-12, atol=0)  # up to the order of the sum over d
    np.testing.assert_allclose(vals, np.take_along_axis(ref, idx, 1), **exact)
    np.testing.assert_allclose(vals, np.sort(ref, axis=1)[:, :s], **exact)
    owner = np.zeros(X.shape[0], dtype=np.int64)
    gidx, gvals = nx.grouped_nearest(Xo, Uo, owner, [np.arange(U.shape[0])], s)
    np.testing.assert_allclose(gvals, vals, **exact)
    kidx, kvals = nx.knn(Xo, s)
    ref_self = ((Xo[:, None, :] - Xo[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(ref_self, np.inf)
    np.testing.assert_allclose(kvals, np.sort(ref_self, axis=1)[:, :s], **exact)
    mean = nx.mean_sq_distance(Xo, Uo)
    # the means carry |offset|·eps; the closed form without the shift is off by offset²·eps
    slack = 64 * abs(offset) * np.finfo(float).eps * (1 + np.sqrt(ref.mean()))
    np.testing.assert_allclose(mean, ref.mean(), rtol=1e-9, atol=slack)


# -- row lengths of tiny and huge rows (a scaling property found 1.59e-162) -----------------
@settings(max_examples=80, deadline=None)
@given(X=hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1,
                                                  max_side=6),
                    elements=st.floats(-1e4, 1e4, allow_nan=False, width=64)),
       exponent=st.integers(-300, 300))
def test_row_norms_are_exact_to_rounding_at_any_scale(X, exponent):
    """Against a slow obvious reference: math.hypot of each row (Python's correctly
    scaled length), also when the squares under- or overflow float64."""
    import math

    Y = X * 10.0 ** exponent
    tiny = np.finfo(np.float64).tiny / np.finfo(np.float64).eps
    if not np.all(np.isfinite(Y)) or np.any((Y != 0) & (np.abs(Y) < tiny)):
        return  # overflowed, or entries (or lengths) near the subnormal range: fewer digits
    ref = np.array([math.hypot(*row) for row in Y])
    np.testing.assert_allclose(nx.row_norms(Y), ref, rtol=1e-13, atol=0)
    unit = nx.normalize_rows(Y)
    nonzero = ref > 0
    np.testing.assert_allclose(nx.row_norms(unit[nonzero]), 1.0, rtol=1e-13)


def test_l2_rows_of_tiny_entries_have_unit_length():
    """The example the scaling property found: 1.59e-162 squared is subnormal."""
    assert nx.normalize_rows(np.array([[1.59e-162]]))[0, 0] == 1.0


@pytest.mark.parametrize("row, dtype", [([5e-324, 5e-324], np.float64),
                                        ([1e-310, -3e-310, 0.0], np.float64),
                                        ([1.7e308, 1.7e308], np.float64),
                                        ([1e-44, 1e-44], np.float32)])
def test_l2_rows_of_subnormal_or_huge_length_have_unit_length(row, dtype):
    """Found by the scaling property: [5e-324, 5e-324] has a length that rounds to
    5e-324 itself, and dividing by it gave [1, 1]; a length past float64's largest
    value gave zeros. Both now go through the largest entry."""
    unit = nx.normalize_rows(np.array([row], dtype=dtype))
    assert unit.dtype == dtype
    np.testing.assert_allclose(np.sqrt((unit.astype(np.float64) ** 2).sum()), 1.0,
                               rtol=1e-6)
    np.testing.assert_allclose(nx.normalize_rows(unit), unit, rtol=1e-6)


def test_fit_rows_draws_max_fit_sorted_rows_or_none():
    from graphclust.numerics import fit_rows, sample_rows

    assert fit_rows(np.random.default_rng(0), 50, 0) is None
    assert fit_rows(np.random.default_rng(0), 50, 50) is None
    got = fit_rows(np.random.default_rng(3), 50, 20)
    assert got.dtype == np.int64 and got.size == 20 and np.all(np.diff(got) > 0)
    np.testing.assert_array_equal(got, sample_rows(np.random.default_rng(3), 50, 20))
