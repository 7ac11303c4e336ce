"""Spectral embedding of NCER (Mizutani, Algorithm 1 steps 1–3, Proposition 1, Remark 2)."""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

import graphclust
from graphclust.numerics import fixed_threads, leading_eigenvectors, safe_inverse

__all__ = ["NcerEmbedding", "first_vector_basis"]


def first_vector_basis(V: np.ndarray, v1: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Rotate the orthonormal columns of ``V`` so that the first one is ``v1`` (Remark 2).

    The eigensolver may return any orthonormal basis of a degenerate eigenspace (a
    disconnected graph has eigenvalue 0 of the normalized Laplacian with multiplicity
    = number of components). With ``w = Vᵀ v1`` (``||w|| = 1`` when ``v1`` lies in the
    span), the Householder reflection ``H`` with ``H e1 = w/||w||`` gives ``V H`` whose
    first column is ``v1`` and whose other columns are orthonormal and orthogonal to it;
    ``w`` is supported on the degenerate eigenspace only, so the other eigenvectors are
    left untouched. The first column is then set to ``v1`` exactly and the rest are
    re-orthogonalised against it (Gram–Schmidt via QR).

    Returns
    -------
    V_new : ndarray (n, r)
    R : ndarray (r, r)
        The orthogonal map applied (``V_new ≈ V @ R``).
    in_span : float
        ``||Vᵀ v1||``, 1 when ``v1`` lies in the computed eigenspace.
    """
    n, r = V.shape
    w = V.T @ v1
    norm_w = float(np.linalg.norm(w))
    if norm_w < 1e-12:
        R = np.eye(r)
    else:
        wh = w / norm_w
        h = wh.copy()
        h[0] -= 1.0
        hh = float(h @ h)
        R = np.eye(r) if hh < 1e-30 else np.eye(r) - 2.0 * np.outer(h, h) / hh
    VR = V @ R
    rest = VR[:, 1:] - np.outer(v1, v1 @ VR[:, 1:])
    if rest.shape[1]:
        with fixed_threads():  # a tall thin QR: one thread (numerics.threads)
            Q, Rq = np.linalg.qr(rest)
        signs = np.sign(np.diag(Rq))
        signs[signs == 0] = 1.0
        rest = Q * signs
    V_new = np.column_stack([v1, rest])
    return V_new, R, norm_w


def _top_eigvecs_affinity(graph, r: int, rng, solver: str):
    """Eigenvectors of D^{-1/2} K D^{-1/2} for the r largest eigenvalues (= the r
    smallest of the normalized Laplacian), largest first.

    The matrix is block diagonal over the connected components, so its eigenpairs are
    the union of the components' eigenpairs: each component is solved on its own and
    the ``r`` largest are kept. A graph with ``s`` components has eigenvalue 1 (Laplacian
    eigenvalue 0) with multiplicity ``s``; a Krylov solver (ARPACK, like MATLAB's
    ``eigs``) started from one vector on the whole matrix may return fewer than ``s``
    copies of it and then silently replaces the missing ones by eigenvectors of later
    eigenvalues (COIL20 with p = 5 has 9 components: ARPACK on the whole graph found 4
    and gave AC 0.667, the per-component solve gives 0.805). Ties at the cut-off
    (|eigenvalue difference| <= 1e-10) go to the larger component, then the lower
    component index.
    """
    N = sp.csr_array(graph.normalized_adjacency())
    n = N.shape[0]
    ncomp, comp = connected_components(N, directed=False)
    if ncomp == 1:
        return leading_eigenvectors(N, r, rng=rng, method=solver)
    sizes = np.bincount(comp, minlength=ncomp)
    parts = []  # (value, component, column) candidates
    blocks = []
    for c in range(ncomp):
        idx = np.flatnonzero(comp == c)
        vals_c, V_c = leading_eigenvectors(N[idx][:, idx], r, rng=rng,
                                             method=solver)
        blocks.append((idx, V_c))
        parts += [(float(v), c, j) for j, v in enumerate(vals_c)]
    parts.sort(key=lambda t: (-round(t[0], 10), -sizes[t[1]], t[1], t[2]))
    parts = parts[:r]
    vals = np.array([t[0] for t in parts])
    V = np.zeros((n, len(parts)))
    for col, (_, c, j) in enumerate(parts):
        idx, V_c = blocks[c]
        V[idx, col] = V_c[:, j]
    return vals, V


@graphclust.part
class NcerEmbedding(graphclust.Solver):
    """NCER spectral embedding: p_i = rows of D^{-1/2} V_r, on the hyperplane x_1 = τ.

    Algorithm 1, steps 1–3 of Mizutani: ``V_r`` holds the eigenvectors of the normalized
    Laplacian ``D^{-1/2} L D^{-1/2}`` for the ``r`` smallest eigenvalues (computed as the
    largest of ``D^{-1/2} K D^{-1/2}``), and the embedding rows are the columns of
    ``V_rᵀ D^{-1/2}``. The first eigenvector is chosen as ``τ D^{1/2} e`` (Proposition 1)
    even when the eigensolver returns another basis of a degenerate eigenspace
    (Remark 2, see :func:`first_vector_basis`), so every row lies on the hyperplane
    ``{x : e_1ᵀ x = τ}`` with ``τ = 1/sqrt(Σ_i d_i)``.

    On an :class:`~graphclust.AnchorGraph` (``W = B Bᵀ``, ``B = Z Λ^{-1/2}``), ``V_r``
    comes from the ``m x m`` Gram matrix of ``C = D^{-1/2} B`` (``V = C U Σ^{-1}``), never
    forming ``W``; ``anchor_embedding`` places new points as ``z @ anchor_embedding``
    (exact for training points whose ``Z`` rows sum to one, i.e. ``d_i = 1``).

    Rules: an isolated vertex of an affinity graph (zero degree) is given a unit
    self-loop (its own component) with a warning; ``r`` is clamped to ``n`` (affinity)
    or to the number of nonzero singular values of ``C`` (anchor). A disconnected
    affinity graph is solved per connected component (exact multiplicity of the
    eigenvalue 0 of the Laplacian, which a Krylov solver on the whole matrix can miss);
    dense or ARPACK per component (and for the anchor Gram matrix) by the rule of
    :func:`graphclust.numerics.leading_eigenvectors` unless ``eigen_solver`` forces one.
    """

    name = "ncer-embedding"
    out_of_sample = True  # places new points (projection or per-anchor values)
    accepts = frozenset({graphclust.GraphKind.AFFINITY, graphclust.GraphKind.ANCHOR})
    needs_features = False
    accepts_sparse = True  # reads nothing of X (the graph only)
    provides = frozenset({graphclust.SolutionField.EMBEDDING})

    n_components: int | None = graphclust.param(
        None, doc="Embedding dimension r (Algorithm 1); None = n_clusters.",
        check=graphclust.optional(graphclust.integer(1)))
    eigen_solver: str = graphclust.param(
        "auto", doc="'auto' (graphclust.numerics' dense-vs-ARPACK rule), 'arpack' or 'dense'.",
        check=graphclust.one_of("auto", "arpack", "dense"))

    def solve(self, graph, X, n_clusters, ctx):
        r = int(self.n_components or n_clusters)
        t0 = time.perf_counter()
        if isinstance(graph, graphclust.AnchorGraph):
            emb, info, anchor_emb = self._solve_anchor(graph, r, ctx)
        else:
            emb, info = self._solve_affinity(graph, r, ctx)
            anchor_emb = None
        info["eig_seconds"] = time.perf_counter() - t0
        return graphclust.Solution(embedding=emb, anchor_embedding=anchor_emb, info=info)

    def _solve_affinity(self, graph, r, ctx):
        n = graph.n
        isolated = graph.isolated()
        if isolated.size:
            warnings.warn(f"ncer-embedding: {isolated.size} isolated vertex(es); each gets a "
                          "unit self-loop (its own component)", graphclust.GraphClustWarning,
                          stacklevel=3)
            graph = graphclust.AffinityGraph(
                graph.adjacency + sp.csr_array((np.ones(isolated.size), (isolated, isolated)),
                                               shape=(n, n)), info=graph.info)
        r = min(r, n)
        d = graph.degrees
        vals, V = _top_eigvecs_affinity(graph, r, ctx.rng("ncer-embedding"), self.eigen_solver)
        sqrt_d = np.sqrt(d)
        v1 = sqrt_d / np.linalg.norm(sqrt_d)
        V, _, in_span = first_vector_basis(V, v1)
        emb = V * safe_inverse(d, 0.5)[:, None]
        info = self._info(vals, d, in_span)
        return emb, info

    def _solve_anchor(self, graph, r, ctx):
        d = graph.degrees
        dinv = safe_inverse(d, 0.5)
        B = graph.B()
        C = sp.csr_array(sp.dia_array((dinv[None, :], [0]), shape=(graph.n, graph.n)) @ B)
        G = (C.T @ C).toarray() if sp.issparse(C) else C.T @ C
        s2, U = leading_eigenvectors(G, r, rng=ctx.rng("ncer-embedding"),
                                     method=self.eigen_solver)
        positive = int(np.sum(s2 > 1e-12 * max(s2[0], 1e-300)))
        if positive == 0:  # every weight of Z is zero: no edge, no embedding
            raise graphclust.InputError("solver 'ncer-embedding': the anchor graph has no "
                                        "edge (every weight of Z is zero)")
        if r > positive:
            warnings.warn(f"ncer-embedding: r={r} exceeds the rank {positive} of the anchor "
                          f"graph; using r={positive}", graphclust.GraphClustWarning, stacklevel=3)
            r = positive
        sig = np.sqrt(s2[:r])
        Ur = U[:, :r]
        V = np.asarray(C @ (Ur / sig[None, :]))
        sqrt_d = np.sqrt(d)
        v1 = sqrt_d / np.linalg.norm(sqrt_d)
        V, R, in_span = first_vector_basis(V, v1)
        emb = V * dinv[:, None]
        lam_inv = safe_inverse(graph.anchor_degrees, 0.5)
        anchor_emb = (lam_inv[:, None] * Ur / sig[None, :]) @ R
        # make the first anchor coordinate exact: z @ col0 = τ for rows of Z summing to 1
        anchor_emb[:, 0] = 1.0 / np.linalg.norm(sqrt_d)
        info = self._info(s2[:r], d, in_span)
        return emb, info, anchor_emb

    @staticmethod
    def _info(mu, d, in_span):
        tau = 1.0 / float(np.sqrt(d.sum()))
        mu = np.asarray(mu, dtype=np.float64)
        lap = 1.0 - mu
        return {
            "laplacian_eigenvalues": lap,
            "tau": tau,
            "hyperplane": (0, tau),
            "zero_eigenspace_dim": int(np.sum(lap <= 1e-8)),
            "v1_in_span": in_span,
        }
