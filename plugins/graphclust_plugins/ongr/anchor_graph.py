"""Gaussian anchor graph with a self-tuning bandwidth (ONGR Eq. 12, after Liu et al. 2010)."""

from __future__ import annotations

import warnings

import attrs
import numpy as np
import scipy.sparse as sp

import graphclust
from graphclust.neighbors import nearest_anchors

__all__ = ["OngrAnchorGraph", "OngrAnchorState", "gaussian_anchor_rows",
           "gaussian_rows_from_distances"]


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


def _as_float(X, U):
    """Float arrays for the distance products: float32 when ``X`` is float32, else float64."""
    X = np.asarray(X)
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    return X.astype(dtype, copy=False), np.asarray(U).astype(dtype, copy=False)


def gaussian_anchor_rows(X, anchors, s, sigma=None, block_size=None):
    """Rows of ``Z`` (Eq. 12) for the points ``X`` against ``anchors``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    anchors : ndarray of shape (m, d)
    s : int
        Nearest anchors kept per point (``s <= m``).
    sigma : float, optional
        Bandwidth; ``None`` computes the self-tuning one from ``X`` (see
        :class:`OngrAnchorGraph`).
    block_size : int, optional
        Rows per distance block (see :func:`graphclust.neighbors.nearest_anchors`).

    Returns
    -------
    Z : scipy.sparse.csr_array of shape (n, m)
        Row-stochastic, ``s`` nonzeros per row.
    sigma : float
        The bandwidth used.
    """
    idx, d2 = nearest_anchors(X, anchors, s, block_size=block_size)
    return gaussian_rows_from_distances(idx, d2, anchors.shape[0], sigma)


def gaussian_rows_from_distances(idx, d2, n_anchors, sigma=None):
    """Rows of ``Z`` (Eq. 12) from each point's nearest anchors, nearest first.

    ``idx``/``d2`` (n×s) are the anchor indices and squared distances of
    :func:`graphclust.neighbors.nearest_anchors`; a parameter search can compute them
    once for the largest ``s`` and pass ``idx[:, :s], d2[:, :s]`` for every smaller one.
    Returns ``(Z, sigma)`` as :func:`gaussian_anchor_rows`.
    """
    n, s = idx.shape
    if sigma is None:
        # Liu et al. (2010): σ = mean over points of the distance to the s-th nearest anchor.
        sigma = float(np.mean(np.sqrt(d2[:, -1]))) if n else 1.0
        if not np.isfinite(sigma) or sigma <= 0.0:
            # Every point sits on its s nearest anchors: all kept distances are 0 and any
            # bandwidth gives the same (uniform) weights.
            sigma = 1.0
    # exp(-d²/σ²), shifted by each row's smallest d² before exponentiating: the shift
    # cancels in the row normalisation and keeps the nearest anchor's weight at 1, so a
    # far-away point never underflows to an all-zero row.
    w = np.exp(-(d2 - d2[:, :1]) / (sigma * sigma))
    w /= w.sum(axis=1, keepdims=True)
    indptr = np.arange(0, n * s + 1, s, dtype=np.int64)
    Z = sp.csr_array((w.ravel(), np.ascontiguousarray(idx).ravel(), indptr),
                     shape=(n, n_anchors))
    return Z, sigma


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
    (:func:`graphclust.neighbors.nearest_anchors`); nothing ``n × m`` is dense.
    Float32 input is kept in float32 for the distance products.

    References
    ----------
    Han, Xiong, Nie. Orthogonal and Nonnegative Graph Reconstruction for Large Scale
    Clustering. IJCAI 2017, Eq. 12. Liu, He, Chang. Large Graph Construction for
    Scalable Semi-Supervised Learning. ICML 2010.
    """

    name = "ongr-anchor"
    produces = "anchor"
    needs_anchors = True

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

    def _s(self, m: int) -> int:
        s = int(self.n_neighbors)
        if s > m:
            warnings.warn(
                f"graph 'ongr-anchor': n_neighbors={s} exceeds the number of anchors {m}; "
                f"using {m}", graphclust.GraphClustWarning, stacklevel=3)
            s = m
        return s

    def build(self, X, anchors, ctx):
        if anchors is None:
            raise graphclust.InputError("graph 'ongr-anchor' needs anchors (an anchor selector)")
        X, U = _as_float(X, anchors.points)
        s = self._s(U.shape[0])
        Z, sigma = gaussian_anchor_rows(X, U, s, self.bandwidth, self.block_size)
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
        X_new, U = _as_float(X_new, graph.anchors.points)
        Z, _ = gaussian_anchor_rows(X_new, U, state.n_neighbors, state.sigma, self.block_size)
        return Z
