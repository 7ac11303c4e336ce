"""Gaussian anchor graph of landmark-based spectral clustering."""

from __future__ import annotations

import attrs
import numpy as np
import scipy.sparse as sp

import graphclust
from graphclust.neighbors import nearest_anchors
from graphclust_plugins.common._labels import dense_features


def mean_sq_distance(X: np.ndarray, U: np.ndarray) -> float:
    """Mean of all ``n x m`` squared distances, in closed form (O((n + m) d)):
    ``mean ‖x‖² + mean ‖u‖² − 2 x̄·ū``."""
    x_sq = float(np.einsum("ij,ij->", X, X, dtype=np.float64)) / X.shape[0]
    u_sq = float(np.einsum("ij,ij->", U, U, dtype=np.float64)) / U.shape[0]
    xm = X.mean(axis=0, dtype=np.float64)
    um = U.mean(axis=0, dtype=np.float64)
    return max(x_sq + u_sq - 2.0 * float(xm @ um), 0.0)


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
    produces = "anchor"
    needs_anchors = True

    n_neighbors: int = graphclust.param(5, doc="Nearest anchors kept per point s (LSC: 5).",
                                        check=graphclust.integer(1))
    sigma: float | None = graphclust.param(
        None, doc="Kernel bandwidth σ; None = mean of all squared point-anchor distances (LSC).",
        check=graphclust.optional(graphclust.real(0, low_open=True)))

    def _rows(self, X, U, sigma):
        n, m = X.shape[0], U.shape[0]
        s = int(min(self.n_neighbors, m))
        idx, dsq = nearest_anchors(X, U, s)
        shifted = dsq - dsq[:, :1]
        if sigma > 0:
            w = np.exp(-shifted / (2.0 * sigma * sigma))
        else:
            w = np.ones_like(shifted)
        w /= w.sum(axis=1, keepdims=True)
        indptr = np.arange(0, n * s + 1, s)
        return sp.csr_array((w.ravel(), idx.ravel(), indptr), shape=(n, m))

    def build(self, X, anchors, ctx):
        if anchors is None:
            raise ValueError("graph 'gaussian-anchor' needs anchors")
        X = dense_features(X)
        U = np.asarray(anchors.points, dtype=X.dtype if X.dtype == np.float32 else np.float64)
        sigma = float(self.sigma) if self.sigma is not None else mean_sq_distance(X, U)
        Z = self._rows(X, U, sigma)
        state = GaussianAnchorState(sigma=sigma, n_neighbors=min(self.n_neighbors, U.shape[0]))
        return graphclust.AnchorGraph(Z, anchors=anchors, state=state)

    def transform(self, X_new, graph):
        state = graphclust.fitted_state(graph, GaussianAnchorState, f"graph {self.name!r}")
        X_new = dense_features(X_new)
        U = np.asarray(graph.anchors.points)
        U = U.astype(X_new.dtype if X_new.dtype == np.float32 else np.float64, copy=False)
        return self._rows(X_new, U, state.sigma)
