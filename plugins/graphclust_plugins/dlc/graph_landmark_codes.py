"""Gaussian kNN landmark codes: the first-layer codes of SLC/DLC (Shao et al., Algorithm 1 step 2)."""

from __future__ import annotations

import attrs
import numpy as np

import graphclust
from graphclust_plugins.dlc._codes import gaussian_codes

__all__ = ["LandmarkCodes", "LandmarkCodesState"]


@attrs.frozen
class LandmarkCodesState(graphclust.FittedState):
    """What ``landmark-codes`` keeps in ``AnchorGraph.state`` (read by the DLC solver).

    Attributes
    ----------
    n_neighbors : int
        Landmarks kept per point ``k``, after clamping to the number of landmarks.
    sigma : float
        The Gaussian bandwidth σ of the codes.
    """

    n_neighbors: int
    sigma: float


@graphclust.part
class LandmarkCodes(graphclust.GraphBuilder):
    """Gaussian kernel codes on each point's k nearest landmarks (DLC, Algorithm 1 step 2).

    For every point ``x_j`` the ``k`` nearest landmarks (anchors) ``u_i`` get the weight
    ``exp(−‖x_j − u_i‖² / (2σ²))``, normalised to sum to one over those ``k``; all other
    entries are zero. The result is an :class:`~graphclust.AnchorGraph` whose ``Z``
    (``n x m``) is the transpose of the paper's code matrix ``A`` (``m x n``); ``Z`` is
    row-stochastic, so the usual anchor-graph solvers can use it too.

    Distances are computed in row blocks (:func:`graphclust.numerics.nearest_anchors`),
    so memory is ``O(n·k)`` plus one block.

    Notes
    -----
    * The paper uses unit-length samples (Section 4.1). This builder does **not**
      normalise: put a scikit-learn ``Normalizer`` in front of the estimator, so that
      the anchor selector, this builder and the DLC solver all see the same data.
    * The paper does not say whether its Gaussian kernel has the factor 2; we use
      ``exp(−d²/(2σ²))`` as in landmark-based spectral clustering (Chen & Cai 2011).
    * The smallest distance of each row is subtracted before ``exp`` (it cancels in the
      normalisation): no row ever underflows to all zeros.
    * ``k`` is clamped to the number of anchors.
    """

    name = "landmark-codes"
    produces = graphclust.GraphKind.ANCHOR
    needs_anchors = True

    n_neighbors: int = graphclust.param(
        5, doc="Nearest landmarks k kept per point (Algorithm 1 step 2; paper: 5).",
        check=graphclust.integer(1))
    sigma: float = graphclust.param(
        1.0, doc="Gaussian kernel bandwidth σ (Algorithm 1 step 2; paper: 1).",
        check=graphclust.real(0, low_open=True))

    def build(self, X, anchors, ctx):
        if anchors is None:
            raise ValueError("graph 'landmark-codes' needs anchors (landmarks)")
        Z = gaussian_codes(X, anchors.points, self.n_neighbors, self.sigma)
        k = int(min(self.n_neighbors, anchors.n_anchors))
        return graphclust.AnchorGraph(
            Z, anchors=anchors,
            info={"n_neighbors": k, "sigma": float(self.sigma), "builder": self.name},
            state=LandmarkCodesState(n_neighbors=k, sigma=float(self.sigma)))

    def transform(self, X_new, graph):
        if graph.anchors is None:
            raise ValueError("graph 'landmark-codes': the graph has no anchors to place new points")
        return gaussian_codes(np.asarray(X_new), graph.anchors.points, self.n_neighbors,
                              self.sigma)
