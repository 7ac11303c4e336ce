"""Normalized-cut spectral embedding."""

from __future__ import annotations

import graphclust
import numpy as np
import scipy.sparse as sp
from graphclust.chunks import anchor_degrees
from graphclust.numerics import (
    fixed_threads,
    leading_eigenvectors,
    normalize_rows,
    safe_inverse,
    scaled_anchor_rows,
    sign_flip,
    singular_values_from_gram,
)
from scipy.sparse.linalg import LinearOperator


def drop_direction(op, U: np.ndarray, t: np.ndarray):
    """Remove the unit direction ``t`` from the invariant subspace ``span(U)``.

    Projects ``t`` out, keeps the ``q - 1`` leading directions of what is left and
    re-diagonalises ``op`` on them (Rayleigh–Ritz). For a connected graph, where ``t``
    is the leading eigenvector, this equals dropping the first column; for a graph
    with several components (eigenvalue 1 repeated) it drops exactly the global
    trivial direction instead of an arbitrary vector of the repeated eigenspace.
    """
    q = U.shape[1]
    R = U - np.outer(t, t @ U)
    with fixed_threads():  # a tall thin SVD: one thread (graphclust.numerics.threads)
        Q, _, _ = np.linalg.svd(R, full_matrices=False)
    Q = Q[:, : q - 1]
    H = Q.T @ np.asarray(op @ Q)
    with fixed_threads():
        vals, Y = np.linalg.eigh(0.5 * (H + H.T))
    order = np.argsort(-vals, kind="stable")
    return vals[order], Q @ Y[:, order]


def _drop_trivial(M, vals, U, degrees):
    """Remove the trivial direction ``√degrees`` from the eigenpairs ``(vals, U)`` of ``M``;
    without a usable direction (all-zero degrees, a single vector) drop the first pair."""
    t = np.sqrt(np.maximum(degrees, 0.0))
    nrm = np.linalg.norm(t)
    if nrm > 0 and U.shape[1] > 1:
        return drop_direction(M, U, t / nrm)
    return vals[1:], U[:, 1:]


def component_directions(A, degrees: np.ndarray, q: int) -> np.ndarray | None:
    """Exact leading eigenvectors of ``D^{-1/2} A D^{-1/2}`` from the connected components.

    Every component with a nonzero degree has eigenvalue 1 with eigenvector
    ``D^{1/2} 1_C`` (normalised); a Krylov solver started from one vector may return
    fewer copies of a repeated eigenvalue than there are components, so they are taken
    from the components instead. Returns ``None`` for a connected graph, else the
    ``n x c`` orthonormal columns of the ``c = min(q, components)`` largest components
    (by vertex count; ties by first vertex).
    """
    from scipy.sparse.csgraph import connected_components

    n_comp, lab = connected_components(A, directed=False)
    if n_comp <= 1:
        return None
    s = np.sqrt(np.maximum(np.asarray(degrees, dtype=np.float64), 0.0))
    lab = np.where(s > 0, lab, -1)  # isolated vertices: eigenvalue 0, not 1
    sizes = np.bincount(lab[lab >= 0], minlength=n_comp)
    order = np.argsort(-sizes, kind="stable")
    keep = [c for c in order[:q] if sizes[c] > 0]
    if len(keep) <= 1:
        return None
    T = np.zeros((A.shape[0], len(keep)))
    for j, c in enumerate(keep):
        rows = lab == c
        T[rows, j] = s[rows] / np.linalg.norm(s[rows])
    return T


def _deflated_leading(M, q: int, T: np.ndarray, rng, progress=None):
    """The ``q`` leading eigenpairs of ``M`` (eigenvalues in ``[-1, 1]``) when the
    orthonormal columns of ``T`` are known eigenvectors of eigenvalue 1: the rest come
    from ``P (M + I) P`` with ``P = I - T Tᵀ`` (the shift keeps the projected-out
    directions, now 0, below every remaining eigenvalue, at least 0)."""
    c = T.shape[1]
    if c >= q:
        return np.ones(q), T[:, :q]
    n = M.shape[0]

    def apply(V):
        V = V - T @ (T.T @ V)
        W = M @ V + V
        return W - T @ (T.T @ W)

    op = LinearOperator((n, n), matvec=apply, matmat=apply, dtype=np.float64)
    vals, U = leading_eigenvectors(op, q - c, rng=rng, progress=progress)
    return np.concatenate([np.ones(c), vals - 1.0]), np.hstack([T, U])


@graphclust.part
class SpectralEmbedding(graphclust.Solver):
    """Normalized-cut spectral embedding (Shi–Malik / Ng–Jordan–Weiss; LSC for anchor graphs).

    * :class:`~graphclust.AffinityGraph`: the leading eigenvectors of the normalized
      adjacency ``D^{-1/2} A D^{-1/2}`` (equivalently the smallest of the normalized
      Laplacian), dense ``eigh`` or ARPACK by the rule of
      :func:`graphclust.numerics.leading_eigenvectors`.
    * :class:`~graphclust.AnchorGraph`: the leading left singular vectors of
      ``B = D^{-1/2} Z Λ^{-1/2}`` (``W = Z Λ⁻¹ Zᵀ = B Bᵀ``; ``D = I`` when rows of Z sum
      to one) through the m×m Gram matrix ``Bᵀ B = V Σ² Vᵀ``: ``U = B V Σ⁻¹`` (LSC,
      Cai & Chen 2015, Sec. 3). Nothing n×n is formed. ``anchor_embedding = Λ^{-1/2} V
      Σ⁻¹`` is set so that a new point with anchor row z gets ``z @ anchor_embedding``.

    ``n_components`` vectors are kept (default: n_clusters). With ``drop_trivial`` one
    more is computed and the trivial direction ``D^{1/2} 1`` (eigenvalue 1) removed, as
    LSC drops its first vector; on a graph with several components (eigenvalue 1
    repeated) exactly that global direction is projected out and the rest
    re-diagonalised (:func:`drop_direction`), rather than an arbitrary vector dropped; with ``normalize_rows`` each row of the embedding is scaled
    to unit length (Ng–Jordan–Weiss; LSC). Defaults follow the LSC reference
    (drop and normalise), which was clearly better there for k-means rounding.

    Rules: isolated vertices (zero degree) get a zero row (and stay zero after
    normalisation). Singular values below ``1e-10 σ_max`` give a zero column instead of
    dividing by ~0. Signs are fixed (largest entry of each vector positive) and the
    ARPACK start vector comes from ``ctx.rng("solver.spectral")``, so a seed fixes the
    result. ``n_components`` is clamped to what the graph size allows.

    Degree regularisation (``tau``, affinity graphs): the embedding is that of
    ``D_τ^{-1/2} A D_τ^{-1/2}`` with ``D_τ = D + τ I`` (Qin & Rohe, *Regularized spectral
    clustering under the degree-corrected stochastic blockmodel*, NIPS 2013; Amini, Chen,
    Bickel & Levina, Ann. Statist. 41, 2013, regularise the adjacency itself to the same
    end). ``tau = "mean-degree"`` is their default ``τ`` = the mean degree. On a sparse
    graph, vertices of small degree otherwise dominate the leading eigenvectors (dangling
    trees, tiny components: eigenvalues near 1 that carry no community); adding ``τ`` to
    every degree shrinks them. With ``τ > 0`` the trivial direction is no longer an
    eigenvector, so pair it with ``drop_trivial = false`` (Qin–Rohe keep the ``k``
    leading vectors and normalise rows), and components are not deflated (their
    eigenvalues are below 1 and distinct). Anchor graphs are refused with ``τ > 0``.

    Note for ``predict``: the out-of-sample rows ``z @ anchor_embedding`` are *not*
    row-normalised; pair ``normalize_rows`` with a rounding that normalises too
    (``rounding = {name = "kmeans", normalize_rows = true}``, as the presets do).
    """

    name = "spectral"
    out_of_sample = True  # places new points (projection or per-anchor values)
    accepts = frozenset({graphclust.GraphKind.AFFINITY, graphclust.GraphKind.ANCHOR})
    needs_features = False
    accepts_sparse = True  # reads nothing of X (the graph only)
    provides = frozenset({graphclust.SolutionField.EMBEDDING})

    n_components: int | None = graphclust.param(
        None, doc="Embedding dimension p; None = n_clusters.",
        check=graphclust.optional(graphclust.integer(1)))
    drop_trivial: bool | str = graphclust.param(
        True, doc="Compute p+1 vectors and drop the leading trivial one (LSC); "
        "'connected': only when the graph is connected (with several components the "
        "leading vectors tell the components apart and are kept; for an anchor graph "
        "the components of anchors that share points).",
        check=graphclust.any_of(graphclust.boolean, graphclust.one_of("connected")))
    normalize_rows: bool = graphclust.param(
        True, doc="Scale rows of the embedding to unit norm (Ng-Jordan-Weiss).",
        check=graphclust.boolean)
    eig_tol: float = graphclust.param(
        0.0, doc="ARPACK tolerance of the eigenpairs on an affinity graph (0 = machine "
        "precision). The eigenvectors only feed k-means, so a looser tolerance such as "
        "1e-5 gives the same labels at a fraction of the solve on large graphs.",
        check=graphclust.real(0.0))

    tau: float | str = graphclust.param(
        0.0, doc="Degree regularisation τ added to every degree, D + τI (Qin & Rohe 2013); "
        "'mean-degree' = the mean degree (their default); 0 = none. Affinity graphs only.",
        check=graphclust.any_of(graphclust.real(0.0), graphclust.one_of("mean-degree")))

    def degree_shift(self, graph) -> float:
        """The ``τ`` added to every degree of ``graph`` (0 without regularisation)."""
        if self.tau == "mean-degree":
            return float(graph.degrees.mean()) if graph.n else 0.0
        return float(self.tau)

    def solve(self, graph, X, n_clusters, ctx):
        p = int(self.n_components or n_clusters)
        drop = self.drop_trivial
        rng = ctx.rng("solver.spectral")
        if isinstance(graph, graphclust.AnchorGraph) and self.tau != 0:
            raise graphclust.InputError(
                f"solver 'spectral': tau={self.tau!r} (degree regularisation) needs an "
                "affinity graph, got an anchor graph; use tau=0 with an anchor graph, or a "
                "graph builder that produces an affinity graph (knn)")
        if isinstance(graph, graphclust.AnchorGraph):
            sol = self._anchor(graph, p, drop, rng, ctx.progress)
        elif isinstance(graph, graphclust.AffinityGraph):
            if drop == "connected":
                drop = graph.n_components() <= 1
            sol = self._affinity(graph, p, 1 if drop else 0, rng, ctx.progress)
        else:  # pragma: no cover - the composer checks graph kinds
            raise TypeError(f"solver 'spectral' cannot use {type(graph).__name__}")
        return sol

    def _finish(self, U, vals, extra, isolated, anchor_embedding=None):
        U[isolated] = 0.0  # exact zeros, not round-off that row normalisation would inflate
        if U.shape[1] == 0:  # tiny graph: nothing left after dropping
            U = np.zeros((U.shape[0], 1))
            if anchor_embedding is not None:
                anchor_embedding = np.zeros((anchor_embedding.shape[0], 1))
        emb = normalize_rows(U) if self.normalize_rows else U
        return graphclust.Solution(embedding=emb, anchor_embedding=anchor_embedding,
                                   info={"eigenvalues": vals,
                                         "normalize_rows": self.normalize_rows,
                                         "drop_trivial": bool(extra)})

    def _affinity(self, graph, p, extra, rng, progress=None):
        n = graph.n
        q = int(min(p + extra, n))
        tau = self.degree_shift(graph)
        if tau > 0:
            M = regularized_adjacency(graph.adjacency, graph.degrees, tau)
            T = None  # D_τ^{1/2} 1_C is no eigenvector: nothing known to deflate
        else:
            M = graph.normalized_adjacency()
            T = component_directions(graph.adjacency, graph.degrees, q)
        if T is None:
            vals, U = leading_eigenvectors(M, q, rng=rng, tol=float(self.eig_tol),
                                           progress=progress)
        else:  # several components: their eigenvectors are known exactly
            vals, U = _deflated_leading(M, q, T, rng, progress)
        if extra:
            vals, U = _drop_trivial(M, vals, U, graph.degrees)
        sol = self._finish(sign_flip(U), vals, extra, graph.isolated())
        sol.info["tau"] = tau
        return sol

    def _anchor(self, graph, p, drop, rng, progress=None):
        n, m = graph.n, graph.n_anchors
        B = graph.B()
        dinv = safe_inverse(graph.degrees, 0.5)
        if not np.allclose(dinv, 1.0):
            B = sp.csr_array(sp.dia_array((dinv[None, :], [0]), shape=(n, n)) @ B)
        pattern = None
        if m <= 4000 or drop == "connected":
            pattern = sp.csr_array(B.T @ B)
        if m <= 4000:
            G = pattern.toarray()
        else:
            Bt = sp.csr_array(B.T)
            G = LinearOperator((m, m), matvec=lambda v: Bt @ (B @ v), dtype=np.float64)
        lam = graph.anchor_degrees
        extra, T = _anchor_drop(drop, pattern, lam, p, n, m)
        vals, coef, anchor_embedding = _gram_solve(G, lam, int(min(p + extra, n, m)), extra,
                                                   rng, T, progress)
        U = np.asarray(B @ coef)
        return self._finish(U, vals, extra, graph.isolated(), anchor_embedding)

    # -- chunked execution (graphclust.chunks) ---------------------------------------
    chunkwise = True  # anchor graphs: Gram matrices summed over blocks, rows lifted

    def solve_chunked(self, chunks, n_clusters, ctx):
        """LSC on an anchor graph from sums over row blocks (the chunked execution).

        Two passes: ``λ = Σ Zᵀ1``, then ``Bᵀ B = Σ B_bᵀ B_b`` over the blocks with the
        rows ``B_b`` of :meth:`solve` (``D^{-1/2}`` applied exactly when it would be, i.e.
        when some row's degree is not 1). The ``m x m`` eigenproblem is that of
        :meth:`solve`; :meth:`lift_rows` gives every block ``B_b V Σ⁻¹``, normalised as
        :meth:`solve` does. Equal to :meth:`solve` up to the order of the block sums.
        """
        if self.tau != 0:
            raise graphclust.InputError(
                f"solver 'spectral': tau={self.tau!r} (degree regularisation) needs an "
                "affinity graph; the chunked execution runs on anchor graphs: use tau=0")
        p = int(self.n_components or n_clusters)
        n, m = chunks.n, chunks.n_anchors
        lam = chunks.sum(anchor_degrees)
        grams = chunks.sum(_anchor_grams, lam)
        scaled = grams["rows_not_unit"] > 0
        pattern = grams["scaled" if scaled else "plain"]
        G = pattern.toarray() if m <= 4000 else pattern
        extra, T = _anchor_drop(self.drop_trivial, pattern, lam, p, n, m)
        vals, coef, anchor_embedding = _gram_solve(G, lam, int(min(p + extra, n, m)), extra,
                                                   ctx.rng("solver.spectral"), T)
        emb = np.zeros((0, max(coef.shape[1], 1)))
        return graphclust.Solution(
            embedding=emb, anchor_embedding=anchor_embedding,
            info={"eigenvalues": vals, "normalize_rows": self.normalize_rows,
                  "drop_trivial": bool(extra),
                  "chunked": {"lam": lam, "coef": coef, "scale_degrees": bool(scaled)}})

    def lift_rows(self, solution, block):
        """The embedding rows of one block: ``B_b V Σ⁻¹`` (:meth:`solve_chunked`)."""
        state = solution.info["chunked"]
        B = _anchor_rows_B(block.Z, state["lam"], state["scale_degrees"])
        U = np.asarray(B @ state["coef"])
        isolated = np.flatnonzero(np.diff(sp.csr_array(block.Z).indptr) == 0)
        return self._finish(U, solution.info["eigenvalues"],
                            int(solution.info["drop_trivial"]), isolated,
                            solution.anchor_embedding)


def regularized_adjacency(A, degrees: np.ndarray, tau: float) -> sp.csr_array:
    """``D_τ^{-1/2} A D_τ^{-1/2}`` with ``D_τ = diag(degrees) + τ I``, ``τ > 0`` (Qin & Rohe
    2013); a vertex of zero degree keeps a zero row."""
    s = 1.0 / np.sqrt(np.asarray(degrees, dtype=np.float64) + float(tau))
    n = A.shape[0]
    S = sp.dia_array((s[None, :], [0]), shape=(n, n))
    return sp.csr_array(S @ sp.csr_array(A, dtype=np.float64) @ S)


def _anchor_drop(drop, pattern, lam, p, n, m):
    """``(extra, T)`` for an anchor graph: whether the trivial vector is dropped (``extra``
    = 1) and, when ``drop = "connected"`` finds several components, their exact
    anchor-space eigenvectors ``T`` (:func:`component_directions` of the Gram matrix's
    pattern with the anchor degrees ``λ``: ``W = B Bᵀ`` has eigenvalue 1 once per
    component of anchors that share points, with anchor-space vector ``√λ`` on it)."""
    if drop != "connected":
        return (1 if drop else 0), None
    T = component_directions(pattern, lam, int(min(p, n, m)))
    return (1, None) if T is None else (0, T)


def _gram_solve(G, lam, q, extra, rng, T=None, progress=None):
    """Eigenpairs of the anchor Gram matrix ``G = BᵀB`` → ``(vals, V Σ⁻¹, Λ^{-1/2} V Σ⁻¹)``;
    with known eigenvectors ``T`` of eigenvalue 1 (several components) the rest are
    found deflated (:func:`_deflated_leading`)."""
    if T is not None:
        vals, V = _deflated_leading(G, q, T, rng, progress)
    else:
        vals, V = leading_eigenvectors(G, q, rng=rng, progress=progress)
    if extra:
        # trivial direction of W in anchor space: Bᵀ D^{1/2} 1 = Λ^{-1/2} Zᵀ 1 = √λ
        vals, V = _drop_trivial(G, vals, V, lam)
    vals = np.maximum(vals, 0.0)
    _, inv = singular_values_from_gram(vals)
    V = sign_flip(V)
    lam_inv_half = safe_inverse(lam, 0.5)
    anchor_embedding = (lam_inv_half[:, None] * V) * inv[None, :]
    return vals, V * inv[None, :], anchor_embedding


def _anchor_rows_B(Z, lam, scale_degrees):
    """Rows of ``B = D^{-1/2} Z Λ^{-1/2}`` for a block of ``Z`` (``D`` only when asked),
    computed as :meth:`AnchorGraph.B` and :meth:`SpectralEmbedding.solve` do."""
    Z = sp.csr_array(Z, dtype=np.float64)
    B = scaled_anchor_rows(Z, lam)
    if scale_degrees:
        b = B.shape[0]
        dinv = safe_inverse(Z @ (safe_inverse(lam) * lam), 0.5)
        B = sp.csr_array(sp.dia_array((dinv[None, :], [0]), shape=(b, b)) @ B)
    return B


def _anchor_grams(block, lam):
    """``B_bᵀ B_b`` with and without ``D^{-1/2}``, and whether some row degree is not 1
    (chunk function of :meth:`SpectralEmbedding.solve_chunked`)."""
    Z = sp.csr_array(block.Z, dtype=np.float64)
    dinv = safe_inverse(Z @ (safe_inverse(lam) * lam), 0.5)
    plain = _anchor_rows_B(Z, lam, False)
    scaled = _anchor_rows_B(Z, lam, True)
    return {"plain": sp.csr_array(plain.T @ plain), "scaled": sp.csr_array(scaled.T @ scaled),
            "rows_not_unit": int(not np.allclose(dinv, 1.0))}
