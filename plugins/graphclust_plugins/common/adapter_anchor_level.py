"""The anchor-level adapter: a solver on the ``m x m`` graph ``ZᵀZ``, lifted through ``Z``."""

from __future__ import annotations

import graphclust
import numpy as np
from graphclust import Adapted, AnchorGraph, Context, Solution

__all__ = ["AnchorLevelAdapter"]


@graphclust.part
class AnchorLevelAdapter(graphclust.Adapter):
    """Runs the solver on the m x m anchor-level graph ZᵀZ, lifted to the points through Z.

    For a solver that needs explicit affinity entries (DCD, a kNN-graph method) on an
    anchor graph ``Z`` (``n x m``, rows summing to one):

    * :meth:`adapt` hands the solver the anchor-level graph ``G = Zᵀ Z``
      (:meth:`graphclust.AnchorGraph.anchor_level`; its degrees are ``Λ = diag(Zᵀ 1)``,
      so its normalized adjacency ``Λ^{-1/2} Zᵀ Z Λ^{-1/2}`` shares its nonzero spectrum
      with ``W = Z Λ⁻¹ Zᵀ``), the anchors' coordinates as features (``None`` for a
      precomputed ``Z`` without anchors) and ``min(k, m)`` clusters;
    * :meth:`lift` carries the per-anchor result ``F`` (``m x p``) to the points as
      ``Z F``. A per-anchor soft assignment on the simplex stays on the simplex. The
      per-anchor values are kept as ``anchor_embedding`` / ``anchor_soft``, so a new point
      with anchor row ``z`` gets ``z F``: ``predict`` works whenever the graph builder
      places new points.

    Only ``m``-sized work is done besides the sparse product ``Z F``; ``W`` is never
    formed. The solver's diagnostics are kept in the lifted solution's ``info``, with
    ``anchor_graph_n`` (= ``m``) added.
    """

    name = "anchor-level"
    accepts = frozenset({"anchor"})
    produces = "affinity"
    provides_features = True
    out_of_sample = True

    def adapt(self, graph: AnchorGraph, X: np.ndarray | None, n_clusters: int,
              ctx: Context) -> Adapted:
        """``ZᵀZ``, the anchors' coordinates and ``min(n_clusters, m)``."""
        if not isinstance(graph, AnchorGraph):
            raise graphclust.InputError(f"adapter {self.name!r} needs an anchor graph, got "
                                        f"{type(graph).__name__}")
        level = graph.anchor_level()
        Xa = graph.anchors.points if graph.anchors is not None else None
        return Adapted(level, Xa, min(int(n_clusters), level.n))

    def lift(self, solution: Solution, graph: AnchorGraph, adapted: Adapted,
             ctx: Context) -> Solution:
        """Point rows ``Z F`` of every per-anchor value ``F`` the solver returned."""
        emb = None if solution.embedding is None else graph.lift(solution.embedding)
        soft = None if solution.soft is None else graph.lift(solution.soft)
        return Solution(embedding=emb, soft=soft, objective=solution.objective,
                        n_iter=solution.n_iter, converged=solution.converged,
                        anchor_embedding=solution.embedding, anchor_soft=solution.soft,
                        history=solution.history,
                        info={**solution.info, "adapter": self.name,
                              "anchor_graph_n": adapted.graph.n})
