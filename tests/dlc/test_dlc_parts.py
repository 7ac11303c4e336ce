"""Tests of the dlc bundle: landmark codes, the W/A updates, SLC/DLC layers."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.preprocessing import normalize

import graphclust
from graphclust_plugins.dlc import _slc
from graphclust_plugins.common.anchors_kmeans import KMeansAnchors
from graphclust_plugins.dlc._codes import gaussian_codes
from graphclust_plugins.dlc.graph_landmark_codes import LandmarkCodes
from graphclust_plugins.dlc.solver_dlc import DLCSolver, layer_selector


# ---------------------------------------------------------------- helpers


@graphclust.part
class EveryOtherRow(graphclust.AnchorSelector):
    """Deterministic test selector: rows 0, step, 2·step, ... of the input."""

    name = "test-every-other-row"
    n_anchors: int = graphclust.param(10, doc="m")

    def select(self, X, ctx):
        m = min(self.n_anchors, X.shape[0])
        idx = np.linspace(0, X.shape[0] - 1, m).astype(int)
        return graphclust.Anchors(np.asarray(X)[idx], info={"idx": idx})


def naive_gaussian(X, U, k, sigma):
    """Dense brute force of Algorithm 1 step 2 (n x m)."""
    D2 = ((X[:, None, :] - U[None, :, :]) ** 2).sum(-1)
    out = np.zeros_like(D2)
    for i in range(X.shape[0]):
        nn = np.argsort(D2[i], kind="stable")[:k]
        w = np.exp(-D2[i, nn] / (2 * sigma**2))
        out[i, nn] = w / w.sum()
    return out


def naive_slc(Xp, D, A, lam, T):
    """Algorithm 1 literally, paper layout: X (d×n), D (d×m), A (m×n); dense."""
    objs = []
    W = None
    for _ in range(T):
        Xt = D @ A
        P, Q = Xp @ Xt.T, Xt @ Xt.T
        W = P @ np.linalg.pinv(Q)
        Dt = W @ D
        A = np.linalg.solve(Dt.T @ Dt + lam * np.eye(D.shape[1]), Dt.T @ Xp)
        objs.append(np.linalg.norm(Xp - W @ D @ A) ** 2 + lam * np.linalg.norm(A) ** 2)
    return A, W, np.array(objs)


def unit_data(rng, n=120, d=6, centers=3):
    C = rng.normal(size=(centers, d)) * 3
    X = C[rng.integers(0, centers, n)] + rng.normal(size=(n, d))
    return normalize(X)


def fit(X, m=20, k=5, ctx=None, **solver_kw):
    ctx = ctx or graphclust.Context(seed=0)
    anchors = KMeansAnchors(max_iter=10, n_init=1, n_anchors=m).select(X, ctx)
    graph = LandmarkCodes(n_neighbors=k).build(X, anchors, ctx)
    sol = DLCSolver(**solver_kw).solve(graph, X, 3, ctx)
    return graph, sol


# ---------------------------------------------------------------- landmark codes


@pytest.mark.parametrize("k, sigma", [(1, 1.0), (3, 0.5), (5, 1.0), (40, 2.0)])
def test_gaussian_codes_match_brute_force(rng, k, sigma):
    X = rng.normal(size=(50, 4))
    U = rng.normal(size=(12, 4))
    Z = gaussian_codes(X, U, k, sigma)
    assert isinstance(Z, sp.csr_array)
    assert np.allclose(Z.toarray(), naive_gaussian(X, U, min(k, 12), sigma), atol=1e-12)
    assert np.allclose(Z.sum(axis=1), 1.0)
    assert np.all(np.diff(Z.indptr) == min(k, 12))


def test_gaussian_codes_do_not_underflow_far_from_landmarks():
    X = np.array([[1e3, 0.0], [0.0, 0.0]])
    U = np.array([[0.0, 0.0], [1.0, 0.0]])
    Z = gaussian_codes(X, U, 2, 0.01).toarray()
    assert np.all(np.isfinite(Z)) and np.allclose(Z.sum(1), 1.0)
    assert Z[0, 1] == pytest.approx(1.0)  # the nearer landmark takes (almost) all weight


def test_landmark_codes_graph_and_transform(blobs):
    X = normalize(blobs[0])
    ctx = graphclust.Context(seed=1)
    anchors = KMeansAnchors(max_iter=10, n_init=1, n_anchors=15).select(X, ctx)
    builder = LandmarkCodes(n_neighbors=4, sigma=0.7)
    graph = builder.build(X, anchors, ctx)
    assert isinstance(graph, graphclust.AnchorGraph)
    assert graph.Z.shape == (150, 15)
    assert graph.state.n_neighbors == 4 and graph.state.sigma == 0.7
    Znew = builder.transform(X[:7], graph)
    assert np.allclose(Znew.toarray(), graph.Z[:7].toarray())
    assert LandmarkCodes.can_transform()


def test_landmark_codes_float32_and_k_clamped():
    X = np.random.default_rng(0).random((20, 3)).astype(np.float32)
    anchors = graphclust.Anchors(X[:3])
    g = LandmarkCodes(n_neighbors=10).build(X, anchors, graphclust.Context())
    assert g.Z.shape == (20, 3) and np.all(np.diff(g.Z.indptr) == 3)
    assert g.info["n_neighbors"] == 3


# ---------------------------------------------------------------- the two updates


def test_w_update_minimises_eq4_like_lstsq(rng):
    d, n, m = 5, 40, 8
    Xp = rng.normal(size=(d, n))
    Xt = rng.normal(size=(d, m)) @ rng.random((m, n))
    W = _slc.w_update(Xp @ Xt.T, Xt @ Xt.T)
    W_ls = np.linalg.lstsq(Xt.T, Xp.T, rcond=None)[0].T
    assert np.allclose(W, W_ls, atol=1e-8)


def test_w_update_singular_q_is_minimum_norm_minimiser(rng):
    d, n = 6, 30
    Xp = rng.normal(size=(d, n))
    Xt = rng.normal(size=(d, 2)) @ rng.normal(size=(2, n))  # rank 2: Q singular
    W = _slc.w_update(Xp @ Xt.T, Xt @ Xt.T)
    W_ls = np.linalg.lstsq(Xt.T, Xp.T, rcond=None)[0].T  # minimum-norm solution
    assert np.linalg.matrix_rank(Xt @ Xt.T) == 2
    # the tiny ridge (1e-10 · tr(Q)/d) gives the minimum-norm solution to ~6 digits
    assert np.allclose(W, W_ls, rtol=1e-5, atol=1e-5 * np.abs(W_ls).max())
    best = np.linalg.norm(Xp - W_ls @ Xt) ** 2
    assert np.linalg.norm(Xp - W @ Xt) ** 2 == pytest.approx(best, rel=1e-10)


@pytest.mark.parametrize("d, m", [(4, 9), (9, 4), (5, 5)])
def test_ridge_map_minimises_eq6_like_lstsq(rng, d, m):
    n, lam = 25, 0.7
    Xp = rng.normal(size=(d, n))
    Dt = rng.normal(size=(d, m))
    R = _slc.ridge_map(Dt.T, lam)
    A = (Xp.T @ R).T
    # ridge as least squares on the augmented system [D̃; √λ I] A = [X; 0]
    aug = np.vstack([Dt, np.sqrt(lam) * np.eye(m)])
    rhs = np.vstack([Xp, np.zeros((m, n))])
    A_ls = np.linalg.lstsq(aug, rhs, rcond=None)[0]
    assert np.allclose(A, A_ls, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(d=st.integers(1, 6), m=st.integers(1, 8), n=st.integers(2, 20),
       lam=st.floats(1e-3, 10), seed=st.integers(0, 2**31 - 1))
@example(d=6, m=6, n=6, lam=1.0, seed=271)  # nearly singular Q: the ridge's excess
def test_updates_are_block_minimisers_property(d, m, n, lam, seed):
    r = np.random.default_rng(seed)
    Xp = r.normal(size=(d, n))
    D = r.normal(size=(d, m))
    A = r.normal(size=(m, n))
    Xt = D @ A
    Q = Xt @ Xt.T
    W = _slc.w_update(Xp @ Xt.T, Q)
    W_ls = np.linalg.lstsq(Xt.T, Xp.T, rcond=None)[0].T
    f = lambda W_: np.linalg.norm(Xp - W_ @ Xt) ** 2  # noqa: E731
    # the ridge ε = 1e-10·tr(Q)/d shrinks the fit along each eigenvector of Q by
    # ε/(λ_i + ε): the excess residual is at most ‖X‖²·max_i (ε/(λ_i + ε))² over the
    # nonzero λ_i, negligible unless Q is nearly singular (d = m = n = 6, seed 271:
    # cond(Q) = 1e7, excess 6.7e-7 of ‖X‖² = 36)
    eps = 1e-10 * np.trace(Q) / d
    lam_q = np.linalg.eigvalsh(0.5 * (Q + Q.T))
    kept = lam_q[lam_q > 1e-12 * lam_q.max()]
    shrink = float(np.max((eps / (kept + eps)) ** 2)) if kept.size else 0.0
    excess = 1.01 * np.linalg.norm(Xp) ** 2 * shrink
    assert f(W) <= f(W_ls) + excess + 1e-8 * (1 + f(W_ls))
    Dt = W @ D
    A_new = (Xp.T @ _slc.ridge_map(Dt.T, lam)).T
    g = lambda A_: np.linalg.norm(Xp - Dt @ A_) ** 2 + lam * np.linalg.norm(A_) ** 2  # noqa: E731
    for _ in range(3):  # no random perturbation does better
        assert g(A_new) <= g(A_new + 1e-3 * r.normal(size=A.shape)) + 1e-12


# ---------------------------------------------------------------- one layer vs Algorithm 1


def test_slc_layer_matches_dense_algorithm_1(rng):
    X = unit_data(rng, n=90, d=5)
    U = X[rng.choice(90, 12, replace=False)] + 0.01
    Z = gaussian_codes(X, U, 3, 1.0)
    S = _slc.gram(X, block=16)
    XtZ, ZtZ, z_sq = _slc.sparse_cross(X, Z, block=16)
    res = _slc.slc_layer(S, XtZ, ZtZ, z_sq, U, 0.5, 4, 0.0)
    A, W, objs = naive_slc(X.T, U.T, Z.toarray().T, 0.5, 4)
    assert np.allclose(X @ res["R"], A.T, atol=1e-8)
    assert np.allclose(res["W"], W, atol=1e-7)
    assert np.allclose(res["objective"], objs, rtol=1e-8)


def test_slc_layer_early_stop_on_epsilon(rng):
    X = unit_data(rng, n=60, d=3)
    U = X[:20]
    Z = gaussian_codes(X, U, 3, 1.0)
    XtZ, ZtZ, z_sq = _slc.sparse_cross(X, Z)
    res = _slc.slc_layer(_slc.gram(X), XtZ, ZtZ, z_sq, U, 1.0, 5, tol=1.0)
    assert res["stopped"] and res["n_iter"] == 1
    res = _slc.slc_layer(_slc.gram(X), XtZ, ZtZ, z_sq, U, 1.0, 5, tol=0.0)
    assert not res["stopped"] and res["n_iter"] == 5


# ---------------------------------------------------------------- the solver


def test_objective_non_increasing_within_each_layer(rng):
    X = unit_data(rng, n=300, d=8, centers=4)
    _, sol = fit(X, m=40, n_layers=3, n_iter=6, tol=0.0)
    layer = sol.history["layer"]
    assert sol.objective.shape == layer.shape == (18,)
    for l in (1, 2, 3):
        sel = layer == l
        seq = np.column_stack([sol.history["objective_w"][sel], sol.objective[sel]]).ravel()
        assert np.all(np.diff(seq) <= 1e-9 * seq[0]), (l, seq)
        assert seq[-1] < seq[0]


def test_two_layers_match_dense_algorithm_2(rng):
    X = unit_data(rng, n=80, d=4)
    ctx = graphclust.Context(seed=3)
    U1 = X[rng.choice(80, 15, replace=False)]
    graph = LandmarkCodes(n_neighbors=3).build(X, graphclust.Anchors(U1), ctx)
    sol = DLCSolver(n_layers=2, lam=1.0, n_iter=3, tol=0.0, embedding="codes",
                    layer_anchors=EveryOtherRow(n_anchors=10)).solve(graph, X, 3, ctx)
    A1, _, o1 = naive_slc(X.T, U1.T, graph.Z.toarray().T, 1.0, 3)
    X2 = A1  # codes of layer 1 are the data of layer 2 (Algorithm 2 step 3)
    idx = np.linspace(0, 79, 10).astype(int)
    D2 = X2[:, idx]
    Z2 = naive_gaussian(X2.T, D2.T, 3, 1.0)
    A2, _, o2 = naive_slc(X2, D2, Z2.T, 1.0, 3)
    assert sol.embedding.shape == (80, 10) and sol.embedding.dtype == np.float32
    scale = np.abs(A2).max()
    assert np.allclose(sol.embedding, A2.T, atol=1e-4 * scale)
    assert np.allclose(sol.objective, np.concatenate([o1, o2]), rtol=1e-4)


def test_shapes_dtypes_and_isometry_through_two_layers(rng):
    X = unit_data(rng, n=200, d=7).astype(np.float32)
    graph, compact = fit(X, m=30, n_layers=2, tol=0.0)
    _, codes = fit(X, m=30, n_layers=2, tol=0.0, embedding="codes")
    assert codes.embedding.shape == (200, 30)
    assert compact.embedding.shape[0] == 200 and compact.embedding.shape[1] <= 7
    for sol in (compact, codes):
        assert sol.embedding.dtype == np.float32
        assert sol.projection.shape == (7, sol.embedding.shape[1])
        assert np.allclose(X @ sol.projection, sol.embedding, atol=1e-4)
        assert sol.n_iter == 10 and len(sol.info["layers"]) == 2
    l1, l2 = compact.info["layers"]
    assert l1["R"].shape == (7, 30) and l1["W"].shape == (7, 7)
    assert l2["landmarks"].shape == (30, l1["rank"]) and l2["R"].shape == (l1["rank"], 30)
    # the compact embedding is an isometric copy of the codes
    from scipy.spatial.distance import pdist

    dc, dk = pdist(codes.embedding.astype(np.float64)), pdist(compact.embedding.astype(np.float64))
    assert np.allclose(dc, dk, rtol=1e-3, atol=1e-5 * dc.max())


def test_same_seed_same_embedding_and_layer_seeds_differ(rng):
    X = unit_data(rng, n=150, d=5)
    _, a = fit(X, ctx=graphclust.Context(seed=7))
    _, b = fit(X, ctx=graphclust.Context(seed=7))
    assert np.array_equal(a.embedding, b.embedding)


def test_single_layer_is_slc(rng):
    X = unit_data(rng, n=100, d=5)
    graph, sol = fit(X, m=12, n_layers=1, n_iter=2, tol=0.0)
    assert sol.objective.shape == (2,)
    assert np.all(sol.history["layer"] == 1)
    assert np.allclose(sol.embedding, X @ sol.info["layers"][0]["R"] @ sol.info["layers"][0]["basis"],
                       atol=1e-5)


@pytest.mark.parametrize("n_clusters", [1, 3])
def test_tiny_inputs(n_clusters):
    X = np.random.default_rng(0).normal(size=(30, 2))
    X[3] = X[4]  # a duplicate point
    ctx = graphclust.Context(seed=0)
    anchors = graphclust.Anchors(X[:10])
    graph = LandmarkCodes().build(X, anchors, ctx)
    sol = DLCSolver().solve(graph, X, n_clusters, ctx)
    assert sol.embedding.shape[0] == 30 and np.all(np.isfinite(sol.embedding))


def test_more_layer_anchors_than_points_are_clamped():
    X = np.random.default_rng(1).normal(size=(25, 3))
    graph = LandmarkCodes().build(X, graphclust.Anchors(X[:20]), graphclust.Context())
    with pytest.warns(graphclust.GraphClustWarning):
        sol = DLCSolver(layer_anchors=KMeansAnchors(max_iter=10, n_init=1, n_anchors=500)).solve(
            graph, X, 2, graphclust.Context())
    assert sol.info["layers"][1]["n_anchors"] == 25


def test_all_zero_data_gives_finite_zero_codes():
    X = np.zeros((20, 4))
    graph = LandmarkCodes().build(X, graphclust.Anchors(np.zeros((3, 4))), graphclust.Context())
    sol = DLCSolver(layer_anchors=EveryOtherRow(n_anchors=3)).solve(graph, X, 2, graphclust.Context())
    assert np.all(sol.embedding == 0) and np.all(np.isfinite(sol.objective))


def test_solver_rejects_bad_inputs_and_params(rng):
    X = unit_data(rng, n=40, d=3)
    graph = LandmarkCodes().build(X, graphclust.Anchors(X[:5]), graphclust.Context())
    with pytest.raises(ValueError, match="features"):
        DLCSolver().solve(graph, None, 2, graphclust.Context())
    with pytest.raises(ValueError, match="points"):
        DLCSolver().solve(graph, X[:10], 2, graphclust.Context())
    bad = dict(DLCSolver(lam=0.0, n_layers=0, embedding="dense", layer_anchors=3).check_params())
    assert set(bad) == {"lam", "n_layers", "embedding", "layer_anchors"}
    assert DLCSolver().check_params() == []
    assert LandmarkCodes(sigma=-1.0).check_params()[0][0] == "sigma"


def test_layer_selector_resolution():
    sel = layer_selector(None, 77)
    assert sel.kind == "anchors" and sel.n_anchors == 77
    # the later layers' inputs are the solver's own arrays: k-means centres them in place
    assert getattr(sel, "copy_x", False) is False
    inst = EveryOtherRow(n_anchors=4)
    got = layer_selector(inst, 10)
    assert isinstance(got, EveryOtherRow) and got is not inst and got.n_anchors == 4


def test_registration_and_presets():
    reg = graphclust.get_registry()
    assert reg.graphs.get("landmark-codes") is LandmarkCodes
    assert reg.solvers.get("dlc") is DLCSolver
    slc, dlc = reg.presets.get("slc"), reg.presets.get("dlc")
    assert slc["solver"]["n_layers"] == 1 and dlc["solver"]["n_layers"] == 2
    for spec in (slc, dlc):
        assert spec["anchors"]["n_anchors"] == 1000
        assert spec["graph"] == {"name": "landmark-codes", "n_neighbors": 5, "sigma": 1.0}
        assert spec["solver"]["lam"] == 1.0 and spec["solver"]["n_iter"] == 5


def test_ridge_map_of_collapsed_codes_is_the_least_squares_solution():
    """A singular ridge system (λ negligible against the codes' scale, found by the fuzz
    test with eight layers) gets the minimum-norm least-squares map, not a LinAlgError."""
    from graphclust_plugins.dlc._slc import ridge_map

    Ut = np.full((6, 4), 1e17)  # rank one, and λ = 1 vanishes against 6e34 in float64
    import scipy.linalg as sla

    with pytest.raises(np.linalg.LinAlgError):  # what the plain solve did
        sla.solve(Ut.T @ Ut + np.eye(4), Ut.T, assume_a="pos")
    R = ridge_map(Ut, 1.0)
    assert R.shape == (4, 6) and np.all(np.isfinite(R))
    ok = np.random.default_rng(0).normal(size=(6, 4))
    expected = np.linalg.solve(ok.T @ ok + 0.5 * np.eye(4), ok.T)
    np.testing.assert_allclose(ridge_map(ok, 0.5), expected, rtol=1e-10)
