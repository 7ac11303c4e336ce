"""Gaussian anchor graph of landmark-based spectral clustering."""

from __future__ import annotations

import attrs
import numpy as np
import scipy.sparse as sp

import graphclust
from graphclust.numerics import (ExactSum, as_dense_float, float_rows, gaussian_anchor_rows,
                                 mean_sq_distance, nearest_anchors)


@attrs.frozen
class GaussianAnchorState(graphclust.FittedState):
    """What ``gaussian-anchor`` keeps in ``AnchorGraph.state`` to place new points.

    Attributes
    ----------
    sigma : float
        The bandwidth σ used at fit time (given, or the mean squared distance rule).
    n_neighbors : int
        Anchors kept per point ``s``, after clamping to the number of anchors.
    """

    sigma: float
    n_neighbors: int


@graphclust.part
class GaussianAnchorGraph(graphclust.GraphBuilder):
    """Gaussian anchor graph of landmark-based spectral clustering (LSC, Cai & Chen 2015).

    Each point keeps its ``s`` nearest anchors (squared Euclidean distances ``d²``) with
    weights ``exp(−d² / (2σ²))``, rows normalised to sum to one (Z, Eq. 6 of LSC).

    Bandwidth (LSC reference code): unless ``sigma`` is given, ``σ`` is the mean of
    *all* n×m squared point-anchor distances (computed in closed form, not from the
    kept s), and the kernel is applied to squared distances: ``exp(−d²/(2σ²))`` with
    ``σ`` itself in squared-distance units (this is what the reference does, not a
    typo here).

    Rules: ``s`` is clamped to the number of anchors; weights are computed as
    ``exp(−(d² − d²_min)/(2σ²))`` per row, which the row normalisation makes identical
    to the formula but which cannot underflow to an all-zero row; a zero σ (all points
    equal to all anchors) gives equal weights. :meth:`transform` builds rows of Z for
    new points with the fitted σ (kept in ``graph.state``, a :class:`GaussianAnchorState`).
    """

    name = "gaussian-anchor"
    produces = graphclust.GraphKind.ANCHOR
    needs_anchors = True
    chunkwise = True  # σ is a sum over row blocks; rows are transform()
    accepts_sparse = True  # distances to anchors by sparse products (numerics.distances)

    n_neighbors: int = graphclust.param(5, doc="Nearest anchors kept per point s (LSC: 5).",
                                        check=graphclust.integer(1))
    sigma: float | None = graphclust.param(
        None, doc="Kernel bandwidth σ; None = mean of all squared point-anchor distances (LSC).",
        check=graphclust.optional(graphclust.real(0, low_open=True)))

    def _rows(self, X, U, sigma, progress=None):
        m = U.shape[0]
        idx, dsq = nearest_anchors(X, U, int(min(self.n_neighbors, m)), progress=progress)
        return gaussian_anchor_rows(idx, dsq, m, 2.0 * sigma * sigma)

    def build(self, X, anchors, ctx):
        if anchors is None:
            raise ValueError("graph 'gaussian-anchor' needs anchors")
        X = float_rows(X)
        U = np.asarray(anchors.points).astype(X.dtype, copy=False)
        if self.sigma is not None:
            sigma = float(self.sigma)
        elif sp.issparse(X):
            sigma = mean_sq_distance(X, U)
        else:  # the chunked run's exact sums: σ is the same bits for any cut of the rows
            um, spread_u = _anchor_spread(U)
            sigma = _sigma(ExactSum.of(_row_squares_about(X, um)), X.shape[0], spread_u)
        Z = self._rows(X, U, sigma, ctx.progress)
        state = GaussianAnchorState(sigma=sigma, n_neighbors=min(self.n_neighbors, U.shape[0]))
        return graphclust.AnchorGraph(Z, anchors=anchors, state=state)

    def transform(self, X_new, graph):
        state = graphclust.fitted_state(graph, GaussianAnchorState, f"graph {self.name!r}")
        X_new = float_rows(X_new)
        U = np.asarray(graph.anchors.points).astype(X_new.dtype, copy=False)
        return self._rows(X_new, U, state.sigma)

    def prepare_chunked(self, anchors, chunks, ctx):
        """The fitted graph without rows: ``σ`` from sums over the blocks (chunked runs).

        The mean squared point-anchor distance is ``Σ‖x − ū‖²/n + mean ‖u − ū‖²`` (each
        point's mean squared distance to the anchors is its squared distance to their
        mean plus their spread); the blocks contribute ``Σ‖x − ū‖²`` in float64, so a
        common offset of the data cancels exactly (as in memory,
        :func:`~graphclust.numerics.distances.mean_sq_distance`) and ``σ`` equals the
        in-memory value exactly (both are exact sums of per-row values).
        """
        U = np.asarray(anchors.points)
        if self.sigma is not None:
            sigma = float(self.sigma)
        else:
            um, spread_u = _anchor_spread(U)
            sigma = _sigma(chunks.sum(_squares_about, um), chunks.n, spread_u)
        state = GaussianAnchorState(sigma=sigma, n_neighbors=min(self.n_neighbors, U.shape[0]))
        empty = np.zeros((0, U.shape[0]))
        return graphclust.AnchorGraph(empty, anchors=anchors, state=state)


def _squares_about(block, center) -> ExactSum:
    """``Σ‖x − center‖²`` of one row block, exactly (chunk function of ``σ``)."""
    return ExactSum.of(_row_squares_about(as_dense_float(block.X), center))


def _row_squares_about(X, center, block_size: int = 8192) -> np.ndarray:
    """``‖x − center‖²`` of every row in float64, each a function of its row alone (so
    their exact sum does not depend on how the rows are cut)."""
    out = np.empty(X.shape[0], dtype=np.float64)
    for start in range(0, X.shape[0], block_size):
        B = np.asarray(X[start:start + block_size], dtype=np.float64) - center
        out[start:start + B.shape[0]] = (B * B).sum(axis=1)
    return out


def _anchor_spread(U) -> tuple[np.ndarray, float]:
    """The anchors' mean ``ū`` and their spread ``mean ‖u − ū‖²``."""
    um = np.asarray(U).mean(axis=0, dtype=np.float64)
    Uc = np.asarray(U, dtype=np.float64) - um
    return um, float(np.einsum("ij,ij->", Uc, Uc)) / Uc.shape[0]


def _sigma(total: ExactSum, n: int, spread_u: float) -> float:
    """``σ = Σ‖x − ū‖²/n + mean ‖u − ū‖²`` (the mean squared point-anchor distance), ≥ 0."""
    return max(float(total.value()[0]) / n + spread_u, 0.0)
