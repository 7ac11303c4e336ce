"""The anchor-level adapter: a solver on the ``m x m`` graph ``ZᵀZ``, lifted through ``Z``."""

from __future__ import annotations

import graphclust
import numpy as np
import scipy.sparse as sp
from graphclust import Adapted, AnchorGraph, Context, Solution

__all__ = ["AnchorLevelAdapter"]


def _block_gram(block) -> sp.csr_array:
    """One row block's share ``Z_bᵀ Z_b`` of the anchor-level graph (``m x m``, sparse)."""
    Z = sp.csr_array(block.Z)
    return sp.csr_array(Z.T @ Z)


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

    Chunk-wise (the Dask execution): ``ZᵀZ = Σ_b Z_bᵀ Z_b`` is a sum over row blocks
    (:meth:`adapt_chunked`; sparse, at most ``s²`` entries per row), the solver runs
    unchanged on it in the calling process, :meth:`lift` on the zero-row graph gives the
    zero-row solution holding the per-anchor values, and :meth:`lift_rows` gives every
    block its rows ``Z_b F``. Equal to :meth:`adapt` / :meth:`lift` up to the order of
    the block sums.
    """

    name = "anchor-level"
    accepts = frozenset({graphclust.GraphKind.ANCHOR})
    produces = graphclust.GraphKind.AFFINITY
    provides_features = True
    accepts_sparse = True  # hands on the anchors, never X
    out_of_sample = True
    chunkwise = True  # ZᵀZ is a sum over row blocks; rows are lifted per block

    def adapt(self, graph: AnchorGraph, X: np.ndarray | None, n_clusters: int,
              ctx: Context) -> Adapted:
        """``ZᵀZ``, the anchors' coordinates and ``min(n_clusters, m)``."""
        if not isinstance(graph, AnchorGraph):
            raise graphclust.InputError(f"adapter {self.name!r} needs an anchor graph, got "
                                        f"{type(graph).__name__}")
        level = graph.anchor_level()
        Xa = graph.anchors.points if graph.anchors is not None else None
        return Adapted(level, Xa, min(int(n_clusters), level.n))

    def adapt_chunked(self, graph: AnchorGraph, chunks, n_clusters: int,
                      ctx: Context) -> Adapted:
        """:meth:`adapt` over row blocks: ``ZᵀZ = Σ_b Z_bᵀ Z_b`` from ``chunks`` (a
        :class:`graphclust.chunks.RowChunks` whose blocks hold rows of ``Z``); ``graph``
        is the zero-row anchor graph of the chunked run (anchors and fitted state)."""
        if not isinstance(graph, AnchorGraph):
            raise graphclust.InputError(f"adapter {self.name!r} needs an anchor graph, got "
                                        f"{type(graph).__name__}")
        level = graphclust.AffinityGraph(chunks.sum(_block_gram))
        Xa = graph.anchors.points if graph.anchors is not None else None
        return Adapted(level, Xa, min(int(n_clusters), level.n))

    def lift_rows(self, solution: Solution, block) -> Solution:
        """One block's rows of the lifted ``solution`` (the zero-row one :meth:`lift`
        gives on the chunked run's graph): ``Z_b F`` of every per-anchor value ``F``."""
        return solution.extend(Z_new=block.Z)

    def lift(self, solution: Solution, graph: AnchorGraph, adapted: Adapted,
             ctx: Context) -> Solution:
        """Point rows ``Z F`` of every per-anchor value ``F`` the solver returned."""
        emb = None if solution.embedding is None else graph.lift(solution.embedding)
        anchor_soft = solution.soft
        if anchor_soft is not None and sp.issparse(anchor_soft):  # m x k: global-small
            anchor_soft = anchor_soft.toarray()
        soft = None if anchor_soft is None else graph.lift(anchor_soft)
        return Solution(embedding=emb, soft=soft, objective=solution.objective,
                        n_iter=solution.n_iter, converged=solution.converged,
                        anchor_embedding=solution.embedding, anchor_soft=anchor_soft,
                        history=solution.history,
                        info={**solution.info, "adapter": self.name,
                              "anchor_graph_n": adapted.graph.n})
