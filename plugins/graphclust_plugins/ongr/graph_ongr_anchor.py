"""Gaussian anchor graph with a self-tuning bandwidth (ONGR Eq. 12, after Liu et al. 2010)."""

from __future__ import annotations

import attrs
import graphclust
import numpy as np
from graphclust.numerics import (
    as_float,
    clamp_neighbors,
    gaussian_anchor_rows,
    nearest_anchors,
    self_tuning_sigma,
)

__all__ = ["OngrAnchorGraph", "OngrAnchorState"]


@attrs.frozen
class OngrAnchorState(graphclust.FittedState):
    """What ``ongr-anchor`` keeps in ``AnchorGraph.state`` to place new points.

    Attributes
    ----------
    sigma : float
        The bandwidth σ of Eq. 12 fixed at fit time (given, or the self-tuning rule).
    n_neighbors : int
        Nearest anchors kept per point ``s``, after clamping to the number of anchors.
    """

    sigma: float
    n_neighbors: int


@graphclust.part
class OngrAnchorGraph(graphclust.GraphBuilder):
    """Gaussian anchor graph Z (s nearest anchors, self-tuning bandwidth; ONGR Eq. 12).

    Each point keeps its ``s`` nearest anchors; weights are the Gaussian kernel
    ``exp(-d²/σ²)`` of the squared Euclidean distances, normalised to sum to one per
    row (Eq. 12). The point graph ``W = Z Σ⁻¹ Zᵀ`` is doubly stochastic and never formed.

    Bandwidth rule (the paper only says "self-tuning bandwidth [Chen et al. 2011]"):
    following Liu et al. (2010), whose construction Eq. 12 cites, ``σ`` is the mean over
    all points of the (unsquared) distance to their ``s``-th nearest anchor, and the
    kernel has no factor 2. ``σ`` is fixed at fit time and stored in ``graph.state`` so
    that :meth:`transform` places new points with the same kernel. A positive
    ``bandwidth`` overrides the rule.

    Degenerate cases: ``s`` larger than the number of anchors is clamped to it (with a
    warning); if every point sits exactly on its ``s`` nearest anchors (σ = 0) the
    weights are uniform; distances are shifted by each row's minimum before the
    exponential, so no row underflows to zero. Distances are computed in row blocks
    (:func:`graphclust.numerics.nearest_anchors`) and rows built by
    :func:`graphclust.numerics.gaussian_anchor_rows`; nothing ``n × m`` is dense.
    Float32 input is kept in float32 for the distance products.

    References
    ----------
    Han, Xiong, Nie. Orthogonal and Nonnegative Graph Reconstruction for Large Scale
    Clustering. IJCAI 2017, Eq. 12. Liu, He, Chang. Large Graph Construction for
    Scalable Semi-Supervised Learning. ICML 2010.
    """

    name = "ongr-anchor"
    produces = graphclust.GraphKind.ANCHOR
    needs_anchors = True
    chunkwise = True  # σ is a sum over row blocks; rows are transform()

    n_neighbors: int = graphclust.param(
        5, doc="Number s of nearest anchors kept per point (Eq. 12).",
        check=graphclust.integer(1))
    bandwidth: float | None = graphclust.param(
        None, doc="Kernel bandwidth σ; None uses the self-tuning rule (mean distance to "
                  "the s-th nearest anchor).",
        check=graphclust.optional(graphclust.real(0, low_open=True)))
    block_size: int | None = graphclust.param(
        None, doc="Rows per distance block; None sizes blocks to about 256 MB.",
        check=graphclust.optional(graphclust.integer(1)))

    def _rows(self, X, U, s: int, sigma: float | None, progress=None):
        """Rows of ``Z`` (Eq. 12) and the bandwidth (self-tuning when ``sigma`` is None)."""
        idx, d2 = nearest_anchors(X, U, s, block_size=self.block_size, progress=progress)
        sigma = self_tuning_sigma(d2) if sigma is None else float(sigma)
        return gaussian_anchor_rows(idx, d2, U.shape[0], sigma * sigma), sigma

    def build(self, X, anchors, ctx):
        if anchors is None:
            raise graphclust.InputError("graph 'ongr-anchor' needs anchors (an anchor selector)")
        X = as_float(X)
        U = np.asarray(anchors.points).astype(X.dtype, copy=False)
        s = clamp_neighbors(self.n_neighbors, U.shape[0], "graph 'ongr-anchor'")
        Z, sigma = self._rows(X, U, s, self.bandwidth, ctx.progress)
        return graphclust.AnchorGraph(
            Z, anchors=anchors,
            info={"bandwidth_rule": "given" if self.bandwidth is not None
                  else "mean distance to the s-th nearest anchor"},
            state=OngrAnchorState(sigma=float(sigma), n_neighbors=s))

    def transform(self, X_new, graph):
        """Rows of ``Z`` for new points with the fitted anchors and bandwidth."""
        if graph.anchors is None:
            raise graphclust.InputError("graph 'ongr-anchor': the graph has no anchors to place "
                                        "new points against")
        state = graphclust.fitted_state(graph, OngrAnchorState, f"graph {self.name!r}")
        X_new = as_float(X_new)
        U = np.asarray(graph.anchors.points).astype(X_new.dtype, copy=False)
        return self._rows(X_new, U, state.n_neighbors, state.sigma)[0]

    def prepare_chunked(self, anchors, chunks, ctx):
        """The fitted graph without rows (chunked runs): the self-tuning ``σ`` — the mean
        over all points of the distance to their ``s``-th nearest anchor — as a sum over
        the row blocks, so every block's :meth:`transform` rows are :meth:`build`'s (up to
        the order of the sum of ``σ``)."""
        U = np.asarray(anchors.points)
        s = clamp_neighbors(self.n_neighbors, U.shape[0], "graph 'ongr-anchor'")
        if self.bandwidth is not None:
            sigma = float(self.bandwidth)
        else:
            total, count = chunks.sum(_kth_distance_sum, self, U, s)
            sigma = float(total / count) if count else 1.0
            sigma = sigma if np.isfinite(sigma) and sigma > 0.0 else 1.0  # self_tuning_sigma
        return graphclust.AnchorGraph(
            np.zeros((0, U.shape[0])), anchors=anchors,
            info={"bandwidth_rule": "given" if self.bandwidth is not None
                  else "mean distance to the s-th nearest anchor"},
            state=OngrAnchorState(sigma=sigma, n_neighbors=s))


def _kth_distance_sum(block, builder, U, s):
    """``(Σ d_s, rows)``: the distances to the ``s``-th nearest anchor of one block
    (chunk function of ``σ``)."""
    X = as_float(block.X)
    _, d2 = nearest_anchors(X, np.asarray(U).astype(X.dtype, copy=False), s,
                            block_size=builder.block_size)
    return float(np.sqrt(d2[:, -1]).sum(dtype=np.float64)), int(d2.shape[0])
