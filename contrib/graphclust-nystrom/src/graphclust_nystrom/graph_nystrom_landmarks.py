"""A sparse landmark graph that fixes the Nyström kernel bandwidth."""

from __future__ import annotations

import attrs
import numpy as np

import graphclust
from graphclust.numerics import clamp_neighbors, gaussian_anchor_rows, nearest_anchors
from graphclust.numerics import self_tuning_sigma as _sigma_from_distances


__all__ = ["NystromLandmarkGraph", "NystromLandmarkState"]


@attrs.frozen
class NystromLandmarkState(graphclust.FittedState):
    """What ``nystrom-landmarks`` keeps in ``AnchorGraph.state``.

    Attributes
    ----------
    sigma : float
        The kernel bandwidth σ fixed at fit time (read by the ``nystrom`` solver).
    n_neighbors : int
        Landmarks kept per point ``s``, after clamping (to place new points).
    """

    sigma: float
    n_neighbors: int


def _float(A) -> np.ndarray:
    return np.asarray(A, dtype=np.float64)  # the Nyström kernel is computed in float64


@graphclust.part
class NystromLandmarkGraph(graphclust.GraphBuilder):
    """Gaussian weights on the s nearest landmarks; fixes σ of the Nyström kernel.

    Each point keeps its ``s`` nearest landmarks (the anchors chosen by any anchor
    selector) with weights ``exp(-‖x - l‖² / (2σ²))`` normalised to sum to one per row,
    the Gaussian affinity of Fowlkes et al. (2004, Sec. 3) restricted to the nearest
    landmarks. Its main job in a pipeline is to fix the bandwidth ``σ`` that the
    :class:`~graphclust_nystrom.solver_nystrom.NystromSolver` uses for the full
    point-to-landmark kernel (kept in ``graph.state``, a :class:`NystromLandmarkState`); the
    sparse ``Z`` gives the pipeline its connectivity check and places new points
    (:meth:`transform`).

    Bandwidth rule (the paper sets σ by hand per image): ``σ`` is the mean over all
    points of the distance to their ``s``-th nearest landmark; a positive ``bandwidth``
    overrides it. Degenerate cases: ``s`` larger than the number of landmarks is
    clamped (with a warning); distances are shifted by each row's minimum before the
    exponential (cancelled by the row normalisation), so no row is all zero.
    """

    name = "nystrom-landmarks"
    produces = graphclust.GraphKind.ANCHOR
    needs_anchors = True

    n_neighbors: int = graphclust.param(
        5, doc="Nearest landmarks s kept per point (and used by the bandwidth rule).",
        check=graphclust.integer(1))
    bandwidth: float | None = graphclust.param(
        None, doc="Gaussian kernel width σ; None: mean distance to the s-th nearest landmark.",
        check=graphclust.optional(graphclust.real(0, low_open=True)))

    def _rows(self, X, L, s, sigma):
        """Rows of ``Z`` and the bandwidth (the self-tuning rule when ``sigma`` is None),
        from one nearest-landmark search."""
        idx, d2 = nearest_anchors(X, L, s)
        sigma = _sigma_from_distances(d2) if sigma is None else float(sigma)
        return gaussian_anchor_rows(idx, d2, L.shape[0], 2.0 * sigma * sigma), sigma

    def build(self, X, anchors, ctx):
        if anchors is None:
            raise graphclust.InputError("graph 'nystrom-landmarks' needs anchors (landmarks)")
        X, L = _float(X), _float(anchors.points)
        s = clamp_neighbors(self.n_neighbors, L.shape[0], "graph 'nystrom-landmarks'")
        Z, sigma = self._rows(X, L, s, self.bandwidth)
        return graphclust.AnchorGraph(Z, anchors=anchors,
                                      state=NystromLandmarkState(sigma=sigma, n_neighbors=s))

    def transform(self, X_new, graph):
        """Rows of ``Z`` for new points with the fitted landmarks and bandwidth."""
        state = graphclust.fitted_state(graph, NystromLandmarkState, f"graph {self.name!r}")
        L = _float(graph.anchors.points)
        return self._rows(_float(X_new), L, state.n_neighbors, state.sigma)[0]
