"""Tests of the ncer bundle against slow obvious references."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import nnls as scipy_nnls

import graphclust
from graphclust_plugins.ncer.graph_poly_knn import PolyKnnGraph
from graphclust_plugins.ncer.rounding_ellipsoid import EllipsoidRounding, ellipsoid_round
from graphclust_plugins.ncer.solver_er import er, er_embedding
from graphclust_plugins.ncer.solver_mer import MerEmbedding
from graphclust_plugins.ncer.solver_ncer_embedding import NcerEmbedding
from graphclust_plugins.ncer._mvee import mvee_cvxpy, mvee_fw, reduce_rank
from graphclust_plugins.ncer._nnls import nnls_many
from graphclust_plugins.ncer._spa import spa


def _ctx(seed=0):
    return graphclust.Context(seed=seed)


# ----------------------------------------------------------------------------- graph

def _dense_poly_knn(X, p, b, c, include_self=False):
    n = X.shape[0]
    K = (X @ X.T + b) ** c
    S = np.zeros((n, n))
    for i in range(n):
        row = K[i].copy()
        if not include_self:
            row[i] = -np.inf
        nb = np.argsort(-row, kind="stable")[:p]
        S[i, nb] = 1
    chosen = (S + S.T) > 0
    return np.where(chosen, np.maximum(K, 0), 0.0)


@pytest.mark.parametrize("b,c,signed", [(0.0, 1, False), (1.0, 2, False), (0.5, 3, True),
                                        (0.0, 2, True)])
def test_poly_knn_matches_dense_reference(rng, b, c, signed):
    X = rng.random((60, 4))
    if signed:
        X = X - 0.5
    g = PolyKnnGraph(n_neighbors=4, b=b, c=c, neighbors="similarity",
                     include_self=False).build(X, None, _ctx())
    ref = _dense_poly_knn(X, 4, b, c)
    A = g.adjacency.toarray()
    assert np.allclose(A, A.T)
    # rows with a zero-degree reference get a unit self-loop (documented rule)
    iso = ref.sum(axis=1) == 0
    ref[iso, iso] = 1.0
    assert np.allclose(A, ref)


def _dense_distance_knn(X, p, b, c, include_self):
    n = X.shape[0]
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.fill_diagonal(D, -1.0 if include_self else np.inf)  # self first, or never
    S = np.zeros((n, n))
    S[np.repeat(np.arange(n), p), np.argsort(D, axis=1, kind="stable")[:, :p].ravel()] = 1
    return np.where((S + S.T) > 0, np.maximum((X @ X.T + b) ** c, 0.0), 0.0)


@pytest.mark.parametrize("p,b,c", [(1, 0.0, 1), (3, 1.0, 2), (5, 0.0, 1)])
def test_poly_knn_distance_with_self_matches_dense_reference(rng, p, b, c):
    # variant: a_i ∈ N_p(a_i) plus its p - 1 Euclidean-nearest others, weights k(a_i, a_j)
    X = rng.random((50, 4))
    X[3] = X[4]  # a duplicate: the point itself still comes first
    g = PolyKnnGraph(n_neighbors=p, b=b, c=c, neighbors="distance",
                     include_self=True).build(X, None, _ctx())
    A = g.adjacency.toarray()
    assert np.allclose(A, _dense_distance_knn(X, p, b, c, include_self=True))
    assert np.allclose(np.diag(A), (np.einsum("ij,ij->i", X, X) + b) ** c)


def test_poly_knn_defaults_are_section_2(rng):
    # p most similar by the inner product, p others (no self-loop), kernel weights, "or"
    X = rng.random((40, 5))
    g = PolyKnnGraph().build(X, None, _ctx())
    assert g.info["neighbors"] == "similarity" and not g.info["include_self"]
    assert not g.info["normalize"] and g.info["n_neighbors"] == 5
    assert np.allclose(g.adjacency.toarray(), _dense_poly_knn(X, 5, 0.0, 1))


def test_poly_knn_normalize_is_unit_length_data(rng):
    X = rng.random((60, 6))
    scale = rng.uniform(0.1, 50.0, size=60)
    g = PolyKnnGraph(normalize=True).build(X * scale[:, None], None, _ctx())
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    ref = _dense_poly_knn(Xn, 5, 0.0, 1)
    assert np.allclose(g.adjacency.toarray(), ref)
    # on the unit sphere "most similar" = "Euclidean nearest": the two readings agree
    gd = PolyKnnGraph(normalize=True, neighbors="distance").build(X, None, _ctx())
    assert np.allclose(gd.adjacency.toarray(), ref)
    # an all-zero row stays zero (then the isolated-vertex rule applies)
    X[9] = 0.0
    with pytest.warns(graphclust.GraphClustWarning, match="isolated"):
        g0 = PolyKnnGraph(normalize=True).build(X, None, _ctx())
    assert g0.adjacency[9, 9] == 1.0 and np.isfinite(g0.adjacency.data).all()


def test_poly_knn_distance_variant_matches_dense_reference(rng):
    X = rng.random((50, 4))
    g = PolyKnnGraph(n_neighbors=3, c=2, b=1.0, neighbors="distance",
                     include_self=False).build(X, None, _ctx())
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    S = np.zeros((50, 50))
    S[np.repeat(np.arange(50), 3), np.argsort(D, axis=1)[:, :3].ravel()] = 1
    ref = np.where((S + S.T) > 0, (X @ X.T + 1.0) ** 2, 0.0)
    assert np.allclose(g.adjacency.toarray(), ref)


@pytest.mark.parametrize("neighbors", ["distance", "similarity"])
def test_poly_knn_p_equals_m_is_gram_matrix(rng, neighbors):
    X = rng.random((80, 6))  # p = 80 > 64: the blocked kernel evaluation
    g = PolyKnnGraph(n_neighbors=80, include_self=True, neighbors=neighbors).build(X, None, _ctx())
    assert np.allclose(g.adjacency.toarray(), X @ X.T)


def test_poly_knn_isolated_vertex_rule(rng):
    X = rng.random((20, 3))
    X[7] = 0.0  # zero inner product with everyone: no edge
    with pytest.warns(graphclust.GraphClustWarning, match="isolated"):
        g = PolyKnnGraph(n_neighbors=3).build(X, None, _ctx())
    assert g.adjacency[7, 7] == 1.0 and g.isolated().size == 0
    with pytest.raises(graphclust.InputError, match="isolated"):
        PolyKnnGraph(n_neighbors=3, on_isolated="raise").build(X, None, _ctx())


def test_poly_knn_param_checks():
    assert PolyKnnGraph(n_neighbors=0).check_params()
    assert PolyKnnGraph(c=0).check_params()
    assert PolyKnnGraph(b=-1.0).check_params()
    assert not PolyKnnGraph().check_params()


# ------------------------------------------------------------------------ embedding

def _blocks_graph(rng, sizes, extra_edges=0):
    """A random graph with one dense random block per component."""
    n = sum(sizes)
    A = np.zeros((n, n))
    s = 0
    for size in sizes:
        B = rng.random((size, size))
        A[s:s + size, s:s + size] = B + B.T
        s += size
    return A


def _check_hyperplane_and_eigen(A, emb, r):
    d = A.sum(axis=1)
    tau = 1 / np.sqrt(d.sum())
    assert np.allclose(emb[:, 0], tau, rtol=1e-10, atol=0)  # Proposition 1
    V = emb * np.sqrt(d)[:, None]
    assert np.allclose(V.T @ V, np.eye(r), atol=1e-8)
    N = A / np.sqrt(np.outer(d, d))
    mu = np.sort(np.linalg.eigvalsh(N))[::-1]
    # span(V) is the top-r invariant subspace: Rayleigh quotient has the top-r eigenvalues
    ritz = np.sort(np.linalg.eigvalsh(V.T @ N @ V))[::-1]
    assert np.allclose(ritz, mu[:r], atol=1e-7)


@pytest.mark.parametrize("solver", ["dense", "arpack"])
def test_embedding_hyperplane_connected(rng, solver):
    X = rng.random((200, 5))
    g = PolyKnnGraph(n_neighbors=6).build(X, None, _ctx())
    sol = NcerEmbedding(eigen_solver=solver).solve(g, X, 4, _ctx())
    _check_hyperplane_and_eigen(g.to_dense(), sol.embedding, 4)


@pytest.mark.parametrize("solver", ["dense", "arpack"])
def test_embedding_hyperplane_degenerate_eigenspace(rng, solver):
    # three components: eigenvalue 0 of the Laplacian has multiplicity 3 and the
    # eigensolver returns some basis of it; Remark 2 must still put τD^{1/2}e first.
    A = _blocks_graph(rng, [40, 50, 60])
    g = graphclust.AffinityGraph(sp.csr_array(A))
    sol = NcerEmbedding(eigen_solver=solver).solve(g, None, 5, _ctx())
    assert sol.info["zero_eigenspace_dim"] == 3
    assert sol.info["v1_in_span"] == pytest.approx(1.0, abs=1e-8)
    _check_hyperplane_and_eigen(A, sol.embedding, 5)
    # the three components are the three vertices of a simplex: the rounding finds them
    labels = EllipsoidRounding().round(sol.__class__(embedding=sol.embedding[:, :3]), 3, _ctx())
    truth = np.repeat([0, 1, 2], [40, 50, 60])
    assert len(set(zip(labels, truth))) == 3


def test_embedding_arpack_disconnected_keeps_every_component(rng):
    # sparse kNN-like components with small spectral gaps: ARPACK on the whole matrix
    # tends to return only some copies of the eigenvalue 1 of D^{-1/2}KD^{-1/2}
    # (COIL20, p = 5). The per-component solve must give the exact top-r spectrum.
    from scipy.sparse.csgraph import connected_components

    blocks = []
    for size in (150, 120, 200, 90, 160):
        Q = rng.random((size, 2))
        D = ((Q[:, None] - Q[None]) ** 2).sum(-1)
        np.fill_diagonal(D, np.inf)
        nb = np.argsort(D, axis=1)[:, :6]
        S = sp.csr_array((np.ones(nb.size), (np.repeat(np.arange(size), 6), nb.ravel())),
                         shape=(size, size))
        blocks.append(S.maximum(S.T))
    A = sp.csr_array(sp.block_diag(blocks))
    ncomp = connected_components(A, directed=False)[0]
    r = ncomp + 3
    g = graphclust.AffinityGraph(A)
    sol = NcerEmbedding(eigen_solver="arpack").solve(g, None, r, _ctx())
    assert sol.info["zero_eigenspace_dim"] == ncomp
    Ad = A.toarray()
    _check_hyperplane_and_eigen(Ad, sol.embedding, r)
    dense = NcerEmbedding(eigen_solver="dense").solve(g, None, r, _ctx())
    assert np.allclose(sol.info["laplacian_eigenvalues"], dense.info["laplacian_eigenvalues"],
                       atol=1e-8)


def _anchor_graph(rng, n=300, m=30, s=4):
    X = rng.random((n, 3))
    U = X[rng.choice(n, m, replace=False)]
    d2 = ((X[:, None, :] - U[None]) ** 2).sum(-1)
    idx = np.argsort(d2, axis=1)[:, :s]
    w = np.exp(-np.take_along_axis(d2, idx, 1) / 0.05)
    w /= w.sum(axis=1, keepdims=True)
    Z = sp.csr_array((w.ravel(), (np.repeat(np.arange(n), s), idx.ravel())), shape=(n, m))
    return graphclust.AnchorGraph(Z, anchors=graphclust.Anchors(U))


def test_embedding_on_anchor_graph(rng):
    g = _anchor_graph(rng)
    sol = NcerEmbedding().solve(g, None, 4, _ctx())
    W = g.to_dense()
    _check_hyperplane_and_eigen(W, sol.embedding, 4)
    # out-of-sample map reproduces the training rows (rows of Z sum to one)
    assert np.allclose(g.Z @ sol.anchor_embedding, sol.embedding, atol=1e-8)


# ----------------------------------------------------------------------------- MVEE

def _simplex_points(rng, r, n, noise=0.0, alpha=0.3):
    V = rng.random((r, r)) + 2 * np.eye(r)
    V /= V.sum(axis=1, keepdims=True)  # vertices on the hyperplane e^T x = 1
    K = rng.dirichlet(np.full(r, alpha), size=n)
    P = np.vstack([V, K @ V]) + noise * rng.standard_normal((n + r, r))
    return P, V


def test_mvee_proposition_3a_touches_only_vertices(rng):
    P, _ = _simplex_points(rng, 4, 300)
    res = mvee_fw(P)
    assert sorted(res.active.tolist()) == [0, 1, 2, 3]
    assert res.omega.max() <= 1 + 1e-7


@pytest.mark.parametrize("r,n,noise", [(3, 200, 0.02), (5, 500, 0.05), (8, 400, 0.1)])
def test_mvee_backends_agree_random(rng, r, n, noise):
    P, _ = _simplex_points(rng, r, n, noise)
    a = mvee_fw(P)
    b = mvee_cvxpy(P)
    assert a.active.tolist() == b.active.tolist()
    assert np.allclose(a.L, b.L, rtol=1e-4, atol=1e-6 * np.abs(b.L).max())
    # optimality certificate of the FW solution: max p^T L p = 1 (feasible), sum u = 1
    assert a.omega.max() <= 1 + 1e-7 and a.weights.sum() == pytest.approx(1.0)
    la = ellipsoid_round(P, r, mvee_backend="fw")["labels"]
    lb = ellipsoid_round(P, r, mvee_backend="cvxpy")["labels"]
    assert np.array_equal(la, lb)


def test_reduce_rank_sees_rounding_noise_the_gram_matrix_hides():
    # CI's fuzz case: six equal rows (rank one). The Gram matrix's singular values
    # resolve only sqrt(eps) of the largest, so its second one (~3e-9) passed
    # rtol = 1e-10 and the whitening failed; QR's resolve eps.
    P = np.tile([[0.3015113445777636, 0.15430334996209194]], (6, 1))
    assert reduce_rank(P).shape[1] == 1
    res = mvee_fw(P)
    assert res.omega.max() <= 1 + 1e-7 and res.active.size == 6


@pytest.mark.parametrize("cond", [1e3, 1e6, 1e9])
def test_mvee_fw_on_an_ill_conditioned_full_rank_set_matches_cvxpy(rng, cond):
    # whitening through R of P = QR keeps an ill-conditioned (but full-rank) P exact
    P, _ = _simplex_points(rng, 3, 200, 0.02)
    P = P @ np.diag([1.0, 1.0, 1.0 / cond])
    a, b = mvee_fw(P), mvee_cvxpy(P)
    assert a.active.tolist() == b.active.tolist()
    assert a.omega.max() <= 1 + 1e-7


def test_mvee_backends_agree_on_usps_embedding(load):
    X, y = load("usps")
    keep = np.flatnonzero(np.isin(y, [0, 1, 2, 3]))[::4]
    X = np.asarray(X[keep], dtype=np.float64) * 2.0
    ctx = _ctx()
    g = PolyKnnGraph(n_neighbors=5).build(X, None, ctx)
    P = NcerEmbedding().solve(g, X, 4, ctx).embedding
    out_fw = ellipsoid_round(P, 4, mvee_backend="fw", nnls_backend="fast")
    out_cv = ellipsoid_round(P, 4, mvee_backend="cvxpy", nnls_backend="scipy")
    assert out_fw["active"].tolist() == out_cv["active"].tolist()
    assert np.array_equal(out_fw["representatives"], out_cv["representatives"])
    assert np.array_equal(out_fw["labels"], out_cv["labels"])


# ------------------------------------------------------------------------------ SPA

def test_spa_recovers_vertices_like_brute_force(rng):
    r = 4
    P, V = _simplex_points(rng, r, 8, alpha=1.0)
    P = P[rng.permutation(P.shape[0])]
    # brute force: the only r-subset whose convex hull contains every point
    # (NNLS residual 0 with weights summing to one; rows lie on e^T x = 1)
    hull_sets = []
    for S in itertools.combinations(range(P.shape[0]), r):
        A = P[list(S)].T
        if np.linalg.matrix_rank(A) < r:
            continue
        res = max(scipy_nnls(A, p, maxiter=1000)[1] for p in P)
        if res < 1e-9:
            hull_sets.append(set(S))
    assert len(hull_sets) == 1
    assert set(spa(P, r).tolist()) == hull_sets[0]


def test_spa_restricted_to_candidates_and_rank_stop(rng):
    P = rng.random((30, 3))
    cand = np.array([3, 7, 11, 20])
    J = spa(P, 3, candidates=cand)
    assert set(J.tolist()) <= set(cand.tolist()) and len(J) == 3
    # first pick: largest norm among candidates
    assert J[0] == cand[np.argmax(np.linalg.norm(P[cand], axis=1))]
    flat = np.outer(rng.random(10), [1.0, 2.0, 3.0])  # rank one
    assert len(spa(flat, 3)) == 1


# ----------------------------------------------------------------------------- NNLS

@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), r=st.integers(1, 8), n=st.integers(1, 60))
def test_nnls_fast_matches_scipy(seed, r, n):
    rng = np.random.default_rng(seed)
    PJ = rng.standard_normal((r, r)) + 0.5 * np.eye(r)
    Q = rng.standard_normal((n, r)) * 3
    W = nnls_many(PJ, Q, "fast")
    ref = np.array([scipy_nnls(PJ.T, q)[0] for q in Q])
    obj = ((W @ PJ - Q) ** 2).sum(axis=1)
    obj_ref = ((ref @ PJ - Q) ** 2).sum(axis=1)
    assert (W >= 0).all()
    assert np.allclose(obj, obj_ref, rtol=1e-9, atol=1e-9)
    assert np.allclose(W, ref, atol=1e-7)


@pytest.mark.parametrize("scale", [1e-7, 1e6])
def test_nnls_fast_is_scale_invariant(rng, scale):
    # spectral embeddings have entries ~ 1/sqrt(vol): tolerances must be relative
    PJ = (rng.random((6, 6)) + np.eye(6)) * scale
    Q = rng.standard_normal((500, 6)) * scale
    W = nnls_many(PJ, Q, "fast")
    ref = np.array([scipy_nnls(PJ.T / scale, q / scale)[0] for q in Q])
    assert np.allclose(W, ref, atol=1e-8)


def test_nnls_fast_many_points_and_duplicated_representative(rng):
    PJ = rng.random((5, 5)) + np.eye(5)
    PJ[4] = PJ[3]  # singular Gram matrix
    Q = rng.standard_normal((2000, 5))
    W = nnls_many(PJ, Q, "fast")
    ref = np.array([scipy_nnls(PJ.T, q)[0] for q in Q])
    obj = ((W @ PJ - Q) ** 2).sum(axis=1)
    obj_ref = ((ref @ PJ - Q) ** 2).sum(axis=1)
    assert np.allclose(obj, obj_ref, rtol=1e-8, atol=1e-8)


# ------------------------------------------------------------------------ ER / MER

def test_er_recovers_basis_of_separable_matrix(rng):
    r, d, n = 4, 30, 120
    F = rng.random((r, d))  # basis as rows
    H = rng.dirichlet(np.ones(r), size=n) * rng.uniform(0.5, 2.0, size=(n, 1))
    X = np.vstack([F * rng.uniform(0.5, 2, size=(r, 1)), H @ F])
    perm = rng.permutation(X.shape[0])
    X = X[perm]
    truth = {int(np.flatnonzero(perm == i)[0]) for i in range(r)}
    for modified in (False, True):
        for scaling in (False, True):
            J = er(X, r, modified=modified, degree_scaling=scaling)
            assert set(J.tolist()) == truth


def test_er_rejects_negative_data(rng):
    with pytest.raises(graphclust.InputError, match="nonnegative"):
        er_embedding(rng.standard_normal((10, 3)), 2)


@pytest.mark.parametrize("dataset", ["random", "usps"])
def test_corollary_1_ncer_p_equals_m_matches_mer(rng, load, dataset):
    if dataset == "random":
        X = rng.random((150, 20)) ** 3
        r = 4
    else:
        Xa, y = load("usps")
        keep = np.flatnonzero(np.isin(y, [1, 4, 7]))[::6]
        X = np.asarray(Xa[keep], dtype=np.float64) * 2.0
        r = 3
    n = X.shape[0]
    ctx = _ctx()
    g = PolyKnnGraph(n_neighbors=n, include_self=True).build(X, None, ctx)
    P = NcerEmbedding().solve(g, X, r, ctx).embedding
    Q = MerEmbedding(degree_scaling=True).solve(g, X, r, ctx).embedding
    ncer = ellipsoid_round(P, r)
    mer = ellipsoid_round(Q, r)
    # Theorem 1: same active points; Corollary 1: same J and the same clusters
    assert ncer["active"].tolist() == mer["active"].tolist()
    assert set(ncer["representatives"].tolist()) == set(mer["representatives"].tolist())
    order = {j: k for k, j in enumerate(mer["representatives"].tolist())}
    remap = np.array([order[j] for j in ncer["representatives"].tolist()])
    assert np.array_equal(remap[ncer["labels"]], mer["labels"])
    # plain ER (with Σ_r) shares the active set (Theorem 1) but may pick another J
    Qer = er_embedding(X, r, degree_scaling=True)["Q"]
    assert ellipsoid_round(Qer, r)["active"].tolist() == ncer["active"].tolist()


# ------------------------------------------------------------------ the whole chain

def _ncer_labels(X, k, seed=0, **graph_kw):
    ctx = _ctx(seed)
    g = PolyKnnGraph(**graph_kw).build(X, None, ctx)
    sol = NcerEmbedding().solve(g, X, k, ctx)
    return EllipsoidRounding().round(sol, k, ctx)


def test_ncer_deterministic_and_accurate_on_blobs():
    from sklearn.datasets import make_blobs
    from sklearn.metrics import adjusted_rand_score

    # nonnegative data whose classes point in different directions (like pixel images)
    X, y = make_blobs(n_samples=900, centers=4.0 * np.eye(6)[:3] + 1.0, n_features=6,
                      cluster_std=0.6, random_state=1)
    X = np.abs(X)
    labels = _ncer_labels(X, 3, seed=0)
    for seed in (0, 1, 7):
        assert np.array_equal(_ncer_labels(X, 3, seed=seed), labels)
    assert adjusted_rand_score(y, labels) > 0.6


@pytest.mark.parametrize("k", [1, 3])
def test_tiny_inputs(k):
    X = np.random.default_rng(0).standard_normal((30, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", graphclust.GraphClustWarning)
        labels = _ncer_labels(X, k)
    assert labels.shape == (30,)
    assert set(labels.tolist()) == set(range(labels.max() + 1))
    assert labels.max() + 1 <= k


def test_rounding_assign_new_points(rng):
    P, _ = _simplex_points(rng, 3, 300, noise=0.01)
    rd = EllipsoidRounding()
    sol = graphclust.Solution(embedding=P)
    labels = rd.round(sol, 3, _ctx())
    assert np.array_equal(rd.assign(sol), labels)


def test_rounding_param_checks():
    assert EllipsoidRounding(mvee="sdpt3").check_params()
    assert EllipsoidRounding(nnls="x").check_params()
    assert not EllipsoidRounding().check_params()




def test_ellipsoid_rounding_of_an_all_zero_embedding_is_one_cluster():
    """A spectral embedding of a one-anchor graph is all zeros; the MVEE of rank-0 rows
    has no support (Frank–Wolfe failed with an empty argmin, found by the slow spec
    fuzz). Nothing tells the points apart: one cluster, and the pipeline says it."""
    r = EllipsoidRounding()
    labels = r.round(graphclust.Solution(embedding=np.zeros((12, 3))), 3, graphclust.Context(0))
    np.testing.assert_array_equal(labels, np.zeros(12, dtype=np.int64))
    np.testing.assert_array_equal(r.assign(graphclust.Solution(embedding=np.zeros((4, 3)))),
                                  np.zeros(4, dtype=np.int64))
    X = np.random.default_rng(0).normal(size=(24, 3)) + np.repeat(np.eye(3) * 6, 8, axis=0)
    spec = {"anchors": {"name": "kmeans", "n_anchors": 1000}, "graph": {"name": "one-anchor"},
            "solver": {"name": "spectral"},
            "rounding": {"name": "ellipsoid", "mvee": "fw", "nnls": "fast"}}
    with pytest.warns(graphclust.FewerClustersWarning):
        model = graphclust.GraphClustering(spec, n_clusters=3, random_state=0).fit(X)
    assert np.all(model.labels_ == 0)
