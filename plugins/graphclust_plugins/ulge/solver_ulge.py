"""ULGE / OULGE: unsupervised large graph embedding (Nie, Zhu, Li; Eq. 21–24, Algorithm 2)."""

from __future__ import annotations

import graphclust
import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from graphclust.numerics import (
    as_dense_float,
    leading_eigenvectors,
    safe_inverse,
    scaled_anchor_rows,
    sign_flip,
    singular_values_from_gram,
)

__all__ = ["ULGE", "anchor_spectral_vectors", "ridge_projection"]

_BLOCK = 16384


def anchor_spectral_vectors(graph: graphclust.AnchorGraph, p: int, *, drop_trivial: bool = False,
                            rng: np.random.Generator | None = None
                            ) -> tuple[np.ndarray, np.ndarray]:
    """Top ``p`` left singular vectors of ``B = Z Δ^{-1/2}`` (Eq. 21) via the ``m x m``
    Gram matrix ``BᵀB``.

    ``F_p = B V_p Σ_p^{-1}``; columns whose singular value is below ``1e-10·σ_max`` are
    returned as zero (no division by zero). Signs are fixed so the largest-magnitude
    entry of each ``v`` is positive. With ``drop_trivial`` the first (trivial, constant)
    vector is skipped and the next ``p`` are returned. Dense or ARPACK (started from
    ``rng``) by the rule of :func:`graphclust.numerics.leading_eigenvectors`.

    Returns
    -------
    F : ndarray of shape (n, p)
    sigma : ndarray of shape (p,)
        Singular values of ``B`` (square roots of the eigenvalues of ``W``).
    """
    B = graph.B()
    m = B.shape[1]
    G = (B.T @ B).toarray() if sp.issparse(B) else B.T @ B
    first = 1 if drop_trivial else 0
    evals, evecs = leading_eigenvectors(G, min(m, first + p), rng=rng)
    V = sign_flip(evecs[:, first:])
    sigma, inv = singular_values_from_gram(evals[first:],
                                           largest=float(np.sqrt(max(evals[0], 0.0))))
    F = np.asarray(B @ (V * inv[None, :]))
    if F.shape[1] < p:  # fewer anchors than requested dimensions: pad with zeros
        F = np.hstack([F, np.zeros((F.shape[0], p - F.shape[1]))])
        sigma = np.concatenate([sigma, np.zeros(p - sigma.size)])
    return F, sigma


def ridge_projection(X, F: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Solve Eq. (23): ``W = (XᵀHX + αI)⁻¹ XᵀH F`` with ``H`` the centring matrix.

    Sums over row blocks in float64 (``X`` is never copied whole). When ``d > n`` the
    dual form ``W = X_cᵀ (X_c X_cᵀ + αI)⁻¹ F`` is used (``n x n`` instead of ``d x d``).

    Returns
    -------
    W : ndarray of shape (d, p)
    mean : ndarray of shape (d,)
    """
    X = np.asarray(X)
    n, d = X.shape
    F = np.asarray(F, dtype=np.float64)
    mean = np.zeros(d)
    for start in range(0, n, _BLOCK):
        mean += X[start:start + _BLOCK].sum(axis=0, dtype=np.float64)
    mean /= n
    if d > n:
        Xc = X.astype(np.float64) - mean
        K = Xc @ Xc.T
        K[np.diag_indices_from(K)] += alpha
        return Xc.T @ _spd_solve(K, F), mean
    C = np.zeros((d, d))
    XtF = np.zeros((d, F.shape[1]))
    for start in range(0, n, _BLOCK):
        Xb = X[start:start + _BLOCK].astype(np.float64) - mean
        C += Xb.T @ Xb
        XtF += Xb.T @ F[start:start + _BLOCK]
    C[np.diag_indices_from(C)] += alpha
    return _spd_solve(C, XtF), mean


def _spd_solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    try:
        return sla.solve(A, b, assume_a="pos")
    except (np.linalg.LinAlgError, sla.LinAlgError):  # α = 0 and singular: least squares
        return sla.lstsq(A, b)[0]


def orthogonalize(W: np.ndarray) -> np.ndarray:
    """OULGE's orthogonalisation (Lemma 5): an orthonormal basis of the column space of
    ``W`` from its SVD (``W = U S Vᵀ`` → ``U``); directions with singular value below
    ``1e-10·s_max`` (e.g. the zero column of the trivial vector) become zero columns, so
    the span is preserved and no arbitrary direction is added. With fewer features than
    components (``d < p``) at most ``d`` columns can be orthonormal; the remaining columns
    are zero, so the result keeps ``W``'s shape."""
    U, s, _ = np.linalg.svd(W, full_matrices=False)
    if s.size == 0 or s[0] <= 0:
        return np.zeros_like(W)
    keep = s > 1e-10 * s[0]
    U[:, ~keep] = 0.0
    if U.shape[1] < W.shape[1]:
        U = np.hstack([U, np.zeros((W.shape[0], W.shape[1] - U.shape[1]))])
    return U


@graphclust.part
class ULGE(graphclust.Solver):
    """ULGE / OULGE linear graph embedding by spectral regression on an anchor graph (Algorithm 2).

    Steps (Algorithm 2, lines 3–5): ``F_p`` = the ``p`` leading left singular vectors
    of ``B = Z Δ^{-1/2}`` (Eq. 21), computed from the ``m x m`` Gram matrix ``BᵀB``
    (``W = BBᵀ``'s rank-``p`` approximation of Eq. 20 is ``F_p Λ_p F_pᵀ``); then the
    ridge regression of Eq. (23), ``W = (XᵀHX + αI)⁻¹ XᵀH F_p``, which by the paper's
    Theorem 2 solves the regularised LPP of Eq. (22); the embedding is ``HXW``. With
    ``orthogonal=True`` (OULGE, Eq. 24) ``W`` is replaced by an orthonormal basis of
    its column space (Lemma 5). The projection and the feature mean are stored in the
    :class:`Solution`, so new points map as ``(x − mean) W``.

    One solver with an ``orthogonal`` switch (the presets ``ulge`` and ``oulge`` set
    it) rather than two registered names.

    Notes
    -----
    As in the paper ``F_p`` includes the leading, constant singular vector; its
    regression target is removed by ``H``, so one column of ``W`` is zero and the
    embedding carries ``p − 1`` informative dimensions (``drop_trivial=True`` skips it
    and uses the next ``p`` vectors). For OULGE the zero direction stays zero rather
    than becoming an arbitrary orthonormal column. ``mean_loss=True`` scales the
    ridge by ``n`` (a ridge on the mean instead of the summed loss); it is off by
    default because Eq. (23) sums, although it reproduces the paper's OULGE accuracy
    on USPS and MNIST where the literal form does not (see the bundle docs). Needs a
    row-stochastic ``Z`` for Theorem 1's doubly-stochastic ``W`` (any anchor graph is
    accepted). ``d > n`` uses the dual form of the ridge problem; the paper mentions
    LSQR, which we do not need.
    """

    name = "ulge"
    out_of_sample = True  # places new points (projection or per-anchor values)
    accepts = frozenset({graphclust.GraphKind.ANCHOR})
    needs_features = True
    provides = frozenset({graphclust.SolutionField.EMBEDDING})

    alpha: float = graphclust.param(
        0.01, doc="Ridge regularisation α of Eq. (23) (the paper uses 0.01).",
        check=graphclust.real(0))
    n_components: int | None = graphclust.param(
        None, doc="Embedding dimension p; None uses the number of clusters (as the paper).",
        check=graphclust.optional(graphclust.integer(1)))
    orthogonal: bool = graphclust.param(
        False, doc="Orthogonalise the projection (OULGE, Eq. 24 and Lemma 5).",
        check=graphclust.boolean)
    drop_trivial: bool = graphclust.param(
        False, doc="Skip the constant leading singular vector of B (the paper keeps it).",
        check=graphclust.boolean)
    mean_loss: bool = graphclust.param(
        False, doc="Ridge on the mean squared loss, (1/n)‖HXW − F_p‖² + α‖W‖², i.e. α·n in "
                   "Eq. (23) (not the paper's text; see the docs' OULGE study).",
        check=graphclust.boolean)

    def solve(self, graph, X, n_clusters, ctx) -> graphclust.Solution:
        if X is None:
            raise ValueError("solver 'ulge' needs the features X")
        X = as_dense_float(X)
        p = int(self.n_components or n_clusters)
        progress = ctx.progress  # three steps: spectral vectors, projection, embedding
        progress.start(3, "anchor spectral vectors")
        F, sigma = anchor_spectral_vectors(graph, p, drop_trivial=bool(self.drop_trivial),
                                           rng=ctx.rng("solver.ulge"))
        progress.step(1, 3, "ridge projection")
        alpha = float(self.alpha) * (X.shape[0] if self.mean_loss else 1)
        W, mean = ridge_projection(X, F, alpha)
        if self.orthogonal:
            W = orthogonalize(W)
        progress.step(2, 3, "embedding")
        emb = np.empty((X.shape[0], p))
        shift = mean @ W
        for start in range(0, X.shape[0], _BLOCK):
            emb[start:start + _BLOCK] = X[start:start + _BLOCK].astype(np.float64) @ W - shift
        progress.step(3, 3)
        progress.end()
        lam = graph.anchor_degrees
        return graphclust.Solution(
            embedding=emb, projection=W, center=mean,
            info={"singular_values": sigma, "orthogonal": bool(self.orthogonal),
                  "empty_anchors": int(np.sum(safe_inverse(lam) == 0))},
        )

    # -- chunked execution (graphclust.chunks) ---------------------------------------
    chunkwise = True  # Gram, covariance and cross terms are sums over row blocks

    def solve_chunked(self, chunks, n_clusters, ctx) -> graphclust.Solution:
        """Algorithm 2 from sums over row blocks (the chunked execution).

        Three passes over the blocks, each an ``m``- or ``d``-sized sum: (1) ``λ = Σ Zᵀ1``
        and ``Σ x`` (the mean of Eq. 23's ``H``); (2) ``BᵀB = Σ B_bᵀ B_b`` (Eq. 21) and
        ``XᵀHX = Σ (X_b − x̄)ᵀ(X_b − x̄)``; then, with ``F_b = B_b V_p Σ_p⁻¹`` from the
        ``m x m`` eigenproblem, (3) ``XᵀHF = Σ (X_b − x̄)ᵀ F_b``. The projection ``W`` of
        Eq. (23) (and Eq. 24 with ``orthogonal``) is then solved as in :meth:`solve`, and
        :meth:`lift_rows` embeds a block as ``X_b W − x̄ W``. Equal to :meth:`solve` up to
        the order of the block sums. Needs ``n >= d`` (the primal form of Eq. 23).
        """
        n, d = chunks.n, chunks.n_features
        if d > n:
            raise graphclust.InputError(
                f"solver 'ulge' on row chunks needs at least as many samples as features "
                f"(the primal ridge of Eq. 23); got n={n} < d={d}")
        p = int(self.n_components or n_clusters)
        first = 1 if self.drop_trivial else 0
        lam, x_sum = chunks.sum(_degrees_and_sum)
        mean = x_sum / n
        G, C = chunks.sum(_gram_and_scatter, lam, mean)
        G = G.toarray()
        evals, evecs = leading_eigenvectors(G, min(G.shape[0], first + p),
                                            rng=ctx.rng("solver.ulge"))
        V = sign_flip(evecs[:, first:])
        sigma, inv = singular_values_from_gram(evals[first:],
                                               largest=float(np.sqrt(max(evals[0], 0.0))))
        coef = V * inv[None, :]
        XtF = chunks.sum(_cross, lam, coef, mean, p)
        C[np.diag_indices_from(C)] += float(self.alpha) * (n if self.mean_loss else 1)
        W = _spd_solve(C, XtF)
        if self.orthogonal:
            W = orthogonalize(W)
        if sigma.size < p:
            sigma = np.concatenate([sigma, np.zeros(p - sigma.size)])
        return graphclust.Solution(
            embedding=np.zeros((0, p)), projection=W, center=mean,
            info={"singular_values": sigma, "orthogonal": bool(self.orthogonal),
                  "empty_anchors": int(np.sum(safe_inverse(lam) == 0))})

    def lift_rows(self, solution, block) -> graphclust.Solution:
        """The embedding rows of one block, ``X_b W − x̄ W`` as :meth:`solve` computes them."""
        W, shift = solution.projection, solution.center @ solution.projection
        X = as_dense_float(block.X)
        emb = np.empty((X.shape[0], W.shape[1]))
        for start in range(0, X.shape[0], _BLOCK):
            emb[start:start + _BLOCK] = X[start:start + _BLOCK].astype(np.float64) @ W - shift
        return graphclust.Solution(embedding=emb)


def _degrees_and_sum(block):
    """``(Zᵀ1, Σx)`` of one block in float64 (chunk function, pass 1)."""
    Z = sp.csr_array(block.Z)
    return (np.asarray(Z.sum(axis=0), dtype=np.float64).ravel(),
            np.asarray(block.X).sum(axis=0, dtype=np.float64))


def _gram_and_scatter(block, lam, mean):
    """``(B_bᵀB_b, (X_b − x̄)ᵀ(X_b − x̄))`` of one block (chunk function, pass 2)."""
    B = scaled_anchor_rows(block.Z, lam)
    C = np.zeros((mean.size, mean.size))
    X = as_dense_float(block.X)
    for start in range(0, X.shape[0], _BLOCK):
        Xb = X[start:start + _BLOCK].astype(np.float64) - mean
        C += Xb.T @ Xb
    return sp.csr_array(B.T @ B), C


def _cross(block, lam, coef, mean, p):
    """``(X_b − x̄)ᵀ F_b`` with ``F_b = B_b V Σ⁻¹`` padded to ``p`` columns (pass 3)."""
    F = np.asarray(scaled_anchor_rows(block.Z, lam) @ coef)
    if F.shape[1] < p:
        F = np.hstack([F, np.zeros((F.shape[0], p - F.shape[1]))])
    X = as_dense_float(block.X)
    out = np.zeros((mean.size, p))
    for start in range(0, X.shape[0], _BLOCK):
        out += (X[start:start + _BLOCK].astype(np.float64) - mean).T @ F[start:start + _BLOCK]
    return out
