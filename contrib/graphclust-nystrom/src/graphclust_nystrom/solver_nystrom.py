"""Nyström spectral clustering (Fowlkes, Belongie, Chung, Malik 2004)."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

import graphclust
from graphclust.numerics import leading_eigenvectors, safe_inverse

from graphclust_nystrom._kernel import kernel_blocks, gaussian_kernel, self_tuning_sigma
from graphclust_nystrom.graph_nystrom_landmarks import NystromLandmarkState

__all__ = ["NystromSolver", "nystrom_embedding"]


def _psd_powers(A: np.ndarray, rtol: float) -> tuple[np.ndarray, np.ndarray, int]:
    """``A⁺`` and ``A^{+1/2}`` of a symmetric PSD matrix, eigenvalues below
    ``rtol · max`` treated as zero; also the rank kept."""
    with threadpool_limits(1):  # m x m: threads only contend on a busy machine
        vals, vecs = np.linalg.eigh((A + A.T) / 2.0)
    keep = vals > rtol * max(vals.max(initial=0.0), np.finfo(float).tiny)
    inv = np.zeros_like(vals)
    inv[keep] = 1.0 / vals[keep]
    pinv = (vecs * inv) @ vecs.T
    pinv_half = (vecs * np.sqrt(inv)) @ vecs.T
    return pinv, pinv_half, int(keep.sum())


def nystrom_embedding(X: np.ndarray, L: np.ndarray, sigma: float, n_components: int, *,
                      rtol: float = 1e-8, block_size: int | None = None,
                      rng: np.random.Generator | None = None) -> dict:
    """Leading eigenvectors of the Nyström-approximated normalised kernel matrix.

    With ``C = K(X, L)`` (``n x m``, never held whole) and ``A = K(L, L)``, the kernel
    matrix is approximated by ``W̃ = C A⁺ Cᵀ`` (Fowlkes et al. 2004, Eq. 8 with the
    landmarks' own rows included in ``C``). Its degrees are ``d = C (A⁺ (Cᵀ 1))``
    (Sec. 4.1, two passes); with ``C̃ = D^{-1/2} C`` the one-shot orthogonalisation
    (Sec. 4.2) diagonalises ``M = A^{+1/2} C̃ᵀ C̃ A^{+1/2} = U Σ Uᵀ`` and returns
    ``V = C̃ A^{+1/2} U Σ^{-1/2}``, whose orthonormal columns are the eigenvectors of
    ``D^{-1/2} W̃ D^{-1/2}`` with eigenvalues ``Σ``.

    Three passes over the rows in blocks; memory ``O(block·m + m² + n·k)``. The ``k``
    leading eigenvectors of ``M`` come from :func:`graphclust.numerics.leading_eigenvectors`
    (``rng`` seeds its ARPACK start; default: seed 0).

    Returns
    -------
    dict
        ``embedding`` (n x p), ``eigenvalues`` (p,), ``projection`` (m x p, the map
        ``C̃ ↦ V``), ``nonpositive_degrees`` (count), ``rank`` (of ``A``).
    """
    X = np.asarray(X, dtype=np.float64)
    L = np.asarray(L, dtype=np.float64)
    n, m = X.shape[0], L.shape[0]
    A = gaussian_kernel(L, L, sigma)
    A_pinv, A_half, rank = _psd_powers(A, rtol)
    colsum = np.zeros(m)
    for _, K in kernel_blocks(X, L, sigma, block_size):  # pass 1: C^T 1
        colsum += K.sum(axis=0)
    q = A_pinv @ colsum
    degrees = np.empty(n)
    G = np.zeros((m, m))
    for rows, K in kernel_blocks(X, L, sigma, block_size):  # pass 2: d, C̃ᵀC̃
        d = K @ q
        degrees[rows] = d
        Kt = K * safe_inverse(d, 0.5)[:, None]
        G += Kt.T @ Kt
    with threadpool_limits(1):
        vals, U = leading_eigenvectors(A_half @ G @ A_half, max(1, min(n_components, m)),
                                       rng=rng or np.random.default_rng(0))
    scale = safe_inverse(np.where(vals > rtol * max(vals[0], np.finfo(float).tiny), vals, 0.0),
                         0.5)
    P = A_half @ U * scale[None, :]
    emb = np.empty((n, P.shape[1]))
    dinv = safe_inverse(degrees, 0.5)
    for rows, K in kernel_blocks(X, L, sigma, block_size):  # pass 3: V = C̃ P
        emb[rows] = (K * dinv[rows, None]) @ P
    return {"embedding": emb, "eigenvalues": vals, "projection": P,
            "nonpositive_degrees": int(np.sum(degrees <= 0)), "rank": rank}


@graphclust.part
class NystromSolver(graphclust.Solver):
    """Nyström spectral embedding: eigenvectors of D^{-1/2} C A⁺ Cᵀ D^{-1/2} (Fowlkes 2004).

    The normalised-cut spectral embedding (Shi & Malik 2000) of the full Gaussian kernel
    matrix, approximated from the kernel between the points and the ``m`` landmarks
    (the anchors of the graph it is given) with the Nyström method: approximate
    degrees (Sec. 4.1) and the one-shot orthogonalisation of Sec. 4.2, see
    :func:`nystrom_embedding`. The embedding has ``n_clusters`` columns (NJW: round
    with k-means on row-normalised rows, ``normalize_rows = true``).

    Kernel ``exp(-‖x - l‖² / (2σ²))`` with ``σ`` from ``bandwidth``, else from the
    ``nystrom-landmarks`` graph (its ``NystromLandmarkState``), else the mean
    distance of the points to their ``n_neighbors``-th nearest landmark. Only the
    anchors of the graph are used, so any anchor selector (``random`` as in the paper,
    ``kmeans``, ``bkhk``) and any anchor-graph builder can precede it.

    Deviations from the paper: the landmarks' rows are part of ``C`` (the paper splits
    the sample ``A`` from the rest ``B``; the approximation of ``W`` is the same); ``A⁺``
    is a pseudo-inverse cutting eigenvalues below ``rtol · max`` (the paper assumes
    ``A`` positive definite); a point whose approximate degree is not positive gets a
    zero row (the paper does not treat it; counted in ``info``). New points are not
    placed through ``Z`` (the Nyström extension needs the full kernel row), so
    ``predict`` is not offered.
    """

    name = "nystrom"
    accepts = frozenset({graphclust.GraphKind.ANCHOR})
    needs_features = True
    provides = frozenset({graphclust.SolutionField.EMBEDDING})

    bandwidth: float | None = graphclust.param(
        None, doc="Gaussian kernel width σ; None: from the graph, else self-tuning.",
        check=graphclust.optional(graphclust.real(0, low_open=True)))
    n_neighbors: int = graphclust.param(
        5, doc="s of the self-tuning bandwidth (mean distance to the s-th nearest landmark).",
        check=graphclust.integer(1))
    rtol: float = graphclust.param(
        1e-8, doc="Relative eigenvalue cut-off of the pseudo-inverse A⁺.",
        check=graphclust.real(0, 1, low_open=True, high_open=True))
    block_size: int | None = graphclust.param(
        None, doc="Rows per kernel block; None sizes blocks to about 256 MB.",
        check=graphclust.optional(graphclust.integer(1)))

    def solve(self, graph, X, n_clusters, ctx):
        if not isinstance(graph, graphclust.AnchorGraph) or graph.anchors is None:
            raise graphclust.InputError("solver 'nystrom' needs an anchor graph with its anchors "
                                        "(the landmarks)")
        if X is None:
            raise graphclust.InputError("solver 'nystrom' needs the features X")
        L = np.asarray(graph.anchors.points, dtype=np.float64)
        X = np.asarray(X, dtype=np.float64)
        if self.bandwidth is not None:
            sigma, rule = float(self.bandwidth), "given"
        elif isinstance(graph.state, NystromLandmarkState):
            sigma, rule = graph.state.sigma, "from the graph"
        else:
            sigma, rule = self_tuning_sigma(X, L, self.n_neighbors), "self-tuning"
        ctx.progress.start(3)
        out = nystrom_embedding(X, L, sigma, int(n_clusters), rtol=self.rtol,
                                block_size=self.block_size, rng=ctx.rng("solver.nystrom"))
        ctx.progress.end()
        return graphclust.Solution(
            embedding=out["embedding"],
            info={"sigma": sigma, "bandwidth_rule": rule, "eigenvalues": out["eigenvalues"],
                  "n_landmarks": L.shape[0], "rank": out["rank"],
                  "nonpositive_degrees": out["nonpositive_degrees"]})
