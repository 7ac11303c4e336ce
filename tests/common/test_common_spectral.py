"""Spectral embedding against dense eigen/singular decompositions."""

from __future__ import annotations

import graphclust
import numpy as np
import pytest
import scipy.sparse as sp
from graphclust.numerics import eigen
from graphclust_plugins.common.anchors_random import RandomAnchors
from graphclust_plugins.common.graph_gaussian_anchor import GaussianAnchorGraph
from graphclust_plugins.common.graph_knn import KNNGraph
from graphclust_plugins.common.solver_spectral import SpectralEmbedding
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """Small dense problems: one BLAS thread avoids oversubscription on a busy machine."""
    with threadpool_limits(1):
        yield


def assert_same_subspace(U, V, tol=1e-6):
    """Column spaces equal: the principal angles are zero (signs/rotations ignored)."""
    Qu, _ = np.linalg.qr(U)
    Qv, _ = np.linalg.qr(V)
    s = np.linalg.svd(Qu.T @ Qv, compute_uv=False)
    assert s.min() > 1 - tol, s


def random_graph(rng, n, density=0.05):
    A = sp.random_array((n, n), density=density, random_state=rng)
    A = A + A.T
    return graphclust.AffinityGraph(A)


def dense_top(M, q):
    vals, vecs = np.linalg.eigh(M)
    order = np.argsort(-vals)
    return vals[order][:q], vecs[:, order][:, :q]


@pytest.fixture(params=["dense", "arpack"])
def eig_path(request, monkeypatch):
    """Run a test through the dense eigensolver and through ARPACK."""
    if request.param == "arpack":
        monkeypatch.setattr(eigen, "DENSE_MAX", 20)
        monkeypatch.setattr(eigen, "DENSE_MAX_HELD", 20)
    return request.param


@pytest.mark.parametrize("drop", [True, False])
def test_affinity_embedding_matches_dense_eigh(rng, eig_path, drop):
    n = 150
    g = random_graph(rng, n, density=min(0.2, 12 / n))
    A = g.to_dense()
    d = A.sum(1)
    Dm = np.diag(np.where(d > 0, d, 1) ** -0.5 * (d > 0))
    vals, vecs = dense_top(Dm @ A @ Dm, 5 + drop)
    # a well-separated gap after the last kept eigenvalue makes the subspace unique
    assert vals[-1] - np.linalg.eigvalsh(Dm @ A @ Dm)[::-1][5 + drop] > 1e-6
    sol = SpectralEmbedding(n_components=5, drop_trivial=drop, normalize_rows=False).solve(
        g, None, 3, graphclust.Context(seed=0))
    assert sol.embedding.shape == (n, 5)
    np.testing.assert_allclose(sol.info["eigenvalues"], vals[drop:], atol=1e-8)
    if drop:
        # the dropped direction is the leading one; the kept block is vecs[:, 1:]
        assert_same_subspace(np.column_stack([vecs[:, :1], sol.embedding]), vecs)
    else:
        assert_same_subspace(sol.embedding, vecs)


def test_affinity_embedding_rows_normalised_and_isolated_vertex(rng):
    g = random_graph(rng, 40, density=0.3)
    A = g.adjacency.tolil()
    A[5, :] = 0
    A[:, 5] = 0
    g = graphclust.AffinityGraph(sp.csr_array(A))
    sol = SpectralEmbedding().solve(g, None, 3, graphclust.Context())
    norms = np.linalg.norm(sol.embedding, axis=1)
    assert norms[5] == 0
    np.testing.assert_allclose(np.delete(norms, 5), 1.0)


def test_deterministic_under_seed(rng):
    g = random_graph(rng, 600, density=0.01)
    a = SpectralEmbedding().solve(g, None, 4, graphclust.Context(seed=7)).embedding
    b = SpectralEmbedding().solve(g, None, 4, graphclust.Context(seed=7)).embedding
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("m", [25, 120])
def test_anchor_embedding_matches_dense_svd_of_B(rng, eig_path, m):
    X = rng.standard_normal((300, 4))
    anchors = RandomAnchors(n_anchors=m).select(X, graphclust.Context(seed=2))
    g = GaussianAnchorGraph(n_neighbors=5).build(X, anchors, graphclust.Context())
    B = g.B().toarray()
    U, s, _ = np.linalg.svd(B, full_matrices=False)
    p = 4
    sol = SpectralEmbedding(n_components=p, drop_trivial=True, normalize_rows=False).solve(
        g, X, 3, graphclust.Context(seed=0))
    np.testing.assert_allclose(np.sqrt(sol.info["eigenvalues"]), s[1:p + 1], rtol=1e-6)
    assert_same_subspace(np.column_stack([U[:, :1], sol.embedding]), U[:, :p + 1])
    # columns are orthonormal singular vectors (not just the right span)
    np.testing.assert_allclose(sol.embedding.T @ sol.embedding, np.eye(p), atol=1e-6)
    # also against the dense W = B Bᵀ of the anchor graph
    vals, vecs = dense_top(g.to_dense(), p + 1)
    np.testing.assert_allclose(vals[1:], sol.info["eigenvalues"], atol=1e-8)
    # out-of-sample map reproduces the training embedding (rows of Z sum to 1)
    np.testing.assert_allclose(g.Z @ sol.anchor_embedding, sol.embedding, atol=1e-8)


def test_anchor_embedding_not_row_stochastic_Z_uses_degrees(rng):
    one = sp.csr_array((rng.uniform(0.5, 1, 200), (np.arange(200), rng.integers(0, 20, 200))),
                       shape=(200, 20))  # every row has an anchor
    Z = sp.random_array((200, 20), density=0.2, random_state=rng) + one
    g = graphclust.AnchorGraph(Z)
    W = g.to_dense()
    d = W.sum(1)
    M = W / np.sqrt(np.outer(d, d))
    vals, vecs = dense_top(M, 4)
    sol = SpectralEmbedding(n_components=4, drop_trivial=False, normalize_rows=False).solve(
        g, None, 4, graphclust.Context())
    assert_same_subspace(sol.embedding, vecs)


@pytest.mark.parametrize("kind", ["affinity", "anchor"])
def test_tiny_inputs_and_one_cluster(rng, kind):
    X = rng.standard_normal((30, 2))
    ctx = graphclust.Context()
    if kind == "affinity":
        g = KNNGraph().build(X, None, ctx)
    else:
        g = GaussianAnchorGraph().build(X, graphclust.Anchors(points=X[:8]), ctx)
    for k in (1, 3):
        sol = SpectralEmbedding().solve(g, X, k, ctx)
        assert sol.embedding.shape == (30, k)
        assert np.all(np.isfinite(sol.embedding))
    # more components than the graph allows: clamped, still finite
    sol = SpectralEmbedding(n_components=50, drop_trivial=False).solve(g, X, 3, ctx)
    assert np.all(np.isfinite(sol.embedding))


@pytest.mark.parametrize("kind", ["affinity", "anchor"])
def test_drop_trivial_on_disconnected_graph_keeps_component_indicators(rng, kind):
    """Three components: eigenvalue 1 has multiplicity 3. Dropping the global trivial
    direction must leave the other two indicator directions, so after row normalisation
    every component collapses to one point and the three points differ."""
    sizes = [30, 40, 50]
    if kind == "affinity":
        blocks = [sp.random_array((s, s), density=0.5, random_state=rng) for s in sizes]
        blocks = [b + b.T + sp.eye_array(s) for b, s in zip(blocks, sizes)]
        g = graphclust.AffinityGraph(sp.block_diag(blocks, format="csr"))
    else:
        blocks = [sp.csr_array(rng.uniform(0.1, 1.0, (s, 6))) for s in sizes]
        Z = sp.csr_array(sp.block_diag(blocks, format="csr"))
        Z = sp.csr_array(sp.diags_array(1.0 / Z.sum(axis=1)) @ Z)
        g = graphclust.AnchorGraph(Z)
    sol = SpectralEmbedding(n_components=2).solve(g, None, 3, graphclust.Context(seed=1))
    np.testing.assert_allclose(sol.info["eigenvalues"], 1.0, atol=1e-8)
    E = sol.embedding
    comp = np.repeat([0, 1, 2], sizes)
    centres = np.array([E[comp == c].mean(0) for c in range(3)])
    for c in range(3):
        np.testing.assert_allclose(E[comp == c], np.broadcast_to(centres[c], E[comp == c].shape),
                                   atol=1e-6)
    d = np.linalg.norm(centres[:, None] - centres[None], axis=-1)
    assert d[np.triu_indices(3, 1)].min() > 0.5


def _cliques(sizes, rng):
    """A graph of disjoint cliques with random weights (one component each)."""
    blocks = []
    for s in sizes:
        W = rng.uniform(0.5, 1.0, size=(s, s))
        W = np.triu(W, 1)
        blocks.append(W + W.T)
    return sp.csr_array(sp.block_diag(blocks))


@pytest.mark.parametrize("sizes,q", [((300, 200, 150, 90, 60), 5), ((400, 250, 120), 6),
                                     ((350, 300, 200, 100, 50, 40, 30), 4)])
def test_components_give_the_repeated_leading_eigenvalue_exactly(sizes, q):
    """Several components repeat eigenvalue 1; ARPACK may return fewer copies. The
    solver takes them from the components: same subspace and values as dense eigh."""
    from graphclust_plugins.common.solver_spectral import _deflated_leading, component_directions

    A = _cliques(sizes, np.random.default_rng(0))
    g = graphclust.AffinityGraph(A)
    M = g.normalized_adjacency()
    T = component_directions(A, g.degrees, q)
    assert T.shape[1] == min(q, len(sizes))
    vals, U = _deflated_leading(M, q, T, np.random.default_rng(1))
    dvals, dU = np.linalg.eigh(M.toarray())
    np.testing.assert_allclose(vals, dvals[::-1][:q], atol=1e-8)
    if len(sizes) <= q or dvals[::-1][q - 1] > dvals[::-1][q] + 1e-9:
        assert_same_subspace(U, dU[:, ::-1][:, :q])


def test_component_directions_ignore_isolated_vertices_and_connected_graphs():
    from graphclust_plugins.common.solver_spectral import component_directions

    rng = np.random.default_rng(2)
    A = _cliques((20, 10), rng)
    A = sp.csr_array(sp.block_diag([A, sp.csr_array((3, 3))]))  # three isolated vertices
    T = component_directions(A, np.asarray(A.sum(axis=1)).ravel(), 5)
    assert T.shape == (33, 2) and np.allclose(T[30:], 0)
    np.testing.assert_allclose(T.T @ T, np.eye(2), atol=1e-12)
    one = _cliques((25,), rng)
    assert component_directions(one, np.asarray(one.sum(axis=1)).ravel(), 3) is None


def test_disconnected_unequal_blobs_are_found():
    """Blobs whose kNN graph splits into components (the repeated eigenvalue case)."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs([400, 200, 100, 50, 25], centers=[[0, 0], [30, 0], [0, 30], [30, 30], [60, 60]],
                      cluster_std=[2.0, 1.0, 0.5, 0.3, 0.2], random_state=0)
    spec = {"graph": {"name": "knn", "n_neighbors": 10, "weight": "binary", "symmetrize": "mean"},
            "solver": {"name": "spectral", "drop_trivial": False},
            "rounding": {"name": "kmeans", "n_init": 10, "normalize_rows": True}}
    from sklearn.metrics import adjusted_rand_score

    labels = graphclust.GraphClustering(spec, n_clusters=5, random_state=0).fit_predict(X)
    assert adjusted_rand_score(y, labels) == 1.0


def test_drop_trivial_connected_drops_only_on_a_connected_graph():
    rng = np.random.default_rng(4)
    ctx = graphclust.Context(seed=0)
    split = graphclust.AffinityGraph(_cliques((30, 20, 10), rng))
    whole = graphclust.AffinityGraph(_cliques((40,), rng))
    for graph, dropped in ((split, False), (whole, True)):
        auto = SpectralEmbedding(drop_trivial="connected").solve(graph, None, 3, ctx)
        fixed = SpectralEmbedding(drop_trivial=dropped).solve(graph, None, 3, ctx)
        assert auto.info["drop_trivial"] is dropped
        np.testing.assert_allclose(auto.embedding, fixed.embedding, atol=1e-8)
    assert SpectralEmbedding(drop_trivial="sometimes").check_params()


def test_eig_tol_keeps_the_embedding_of_a_clustered_graph():
    """A loose ARPACK tolerance (``eig_tol``) gives the labels of the exact solve and an
    embedding whose span is that of the dense eigenvectors to the tolerance's order."""
    from sklearn.datasets import make_blobs


    X, _ = make_blobs(3000, 8, centers=5, cluster_std=2.5, random_state=1)
    ctx = graphclust.Context(seed=0)
    g = KNNGraph(n_neighbors=10, method="exact").build(X, None, ctx)
    tight = SpectralEmbedding(eig_tol=0.0).solve(g, None, 5, ctx)
    loose = SpectralEmbedding(eig_tol=1e-5).solve(g, None, 5, ctx)
    # same subspace: the singular values of the cross product are all ~1
    s = np.linalg.svd(tight.embedding.T @ loose.embedding / 3000, compute_uv=False)
    assert np.allclose(np.linalg.svd(tight.embedding.T @ tight.embedding / 3000,
                                     compute_uv=False), s, atol=1e-3)
    with pytest.raises(graphclust.SpecError):
        graphclust.GraphClustering("ncut", overrides={"solver": {"eig_tol": -1.0}}).fit(X[:50])


def _blob_anchor_graph(sizes, rng, m_per=8):
    """An anchor graph of well-separated blobs of unequal size: each point linked to its
    5 nearest of ``m_per`` anchors per blob, so the anchors form one component per blob."""
    from sklearn.datasets import make_blobs

    centres = [[40.0 * i, 0.0] for i in range(len(sizes))]
    X, y = make_blobs(list(sizes), centers=centres, cluster_std=1.0, random_state=0)
    anchors = np.vstack([X[y == c][:m_per] for c in range(len(sizes))])
    g = GaussianAnchorGraph(n_neighbors=5).build(X, graphclust.Anchors(points=anchors),
                                                 graphclust.Context())
    return X, y, g


@pytest.mark.parametrize("sizes", [(400, 200, 60), (300, 150, 80, 40, 20)])
def test_drop_trivial_connected_on_an_anchor_graph_matches_the_dense_affinity(sizes):
    """``"connected"`` on an anchor graph with several anchor components keeps all
    eigenvalue-1 directions: the same eigenvalues and subspace as the dense
    ``W = Z Λ⁻¹ Zᵀ`` solved as an affinity graph with ``"connected"`` (the slow reference),
    and k-means on it finds every blob, which dropping the trivial vector does not."""
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(0)
    X, y, g = _blob_anchor_graph(sizes, rng)
    k = len(sizes)
    ctx = graphclust.Context(seed=0)
    sol = SpectralEmbedding(drop_trivial="connected", normalize_rows=False).solve(g, X, k, ctx)
    assert sol.info["drop_trivial"] is False
    W = (g.B() @ g.B().T).toarray()
    ref = SpectralEmbedding(drop_trivial="connected", normalize_rows=False).solve(
        graphclust.AffinityGraph(sp.csr_array(W)), X, k, ctx)
    np.testing.assert_allclose(sol.info["eigenvalues"], ref.info["eigenvalues"], atol=1e-8)
    assert_same_subspace(sol.embedding, ref.embedding)
    from graphclust_plugins.common.rounding_kmeans import KMeansRounding

    for drop, perfect in (("connected", True), (True, False)):
        s = SpectralEmbedding(drop_trivial=drop).solve(g, X, k, ctx)
        labels = KMeansRounding(n_init=10, normalize_rows=True).round(s, k, ctx)
        assert (adjusted_rand_score(y, labels) == 1.0) is perfect


def test_drop_trivial_connected_on_a_connected_anchor_graph_drops():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    g = GaussianAnchorGraph(n_neighbors=5).build(X, graphclust.Anchors(points=X[:30]),
                                                 graphclust.Context())
    ctx = graphclust.Context(seed=0)
    auto = SpectralEmbedding(drop_trivial="connected").solve(g, X, 3, ctx)
    fixed = SpectralEmbedding(drop_trivial=True).solve(g, X, 3, ctx)
    assert auto.info["drop_trivial"] is True
    np.testing.assert_allclose(auto.embedding, fixed.embedding, atol=1e-10)


def test_drop_trivial_connected_chunked_equals_in_memory():
    """The chunked LSC (sums over row blocks) decides ``"connected"`` from the summed Gram
    matrix as the in-memory solve does: the same embedding rows."""
    from graphclust.chunks import InMemoryChunks

    rng = np.random.default_rng(2)
    X, _, g = _blob_anchor_graph((200, 90, 30), rng)
    part = SpectralEmbedding(drop_trivial="connected")
    ctx = graphclust.Context(seed=0)
    whole = part.solve(g, X, 3, ctx)
    for rows in (7, 64, 1000):
        chunks = InMemoryChunks(X, g.Z, block_rows=rows)
        sol = part.solve_chunked(chunks, 3, graphclust.Context(seed=0))
        assert sol.info["drop_trivial"] is False
        lifted = np.vstack([part.lift_rows(sol, b).embedding for b in chunks.blocks()])
        np.testing.assert_allclose(lifted, whole.embedding, atol=1e-8)
