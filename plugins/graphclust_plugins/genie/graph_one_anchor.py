"""Every row linked to one anchor: the graph of pipelines whose solver ignores the graph."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import graphclust


@graphclust.part
class OneAnchorGraph(graphclust.GraphBuilder):
    """Every row linked with weight 1 to the first anchor: ``Z`` is the ``n x m`` matrix
    whose first column is all ones (``m`` the anchors given, usually one).

    A pipeline always has a graph, but the ``features`` solver hands the (scaled)
    features on and never reads it; its rounding (``gmm``, ``genie``) works on the
    points. This builder is the cheapest graph such a pipeline can carry: no distance is
    computed, ``O(n)`` time and ``n`` stored entries, and :meth:`transform` places new
    rows the same way, so ``predict`` works. It is no affinity model of the data: with
    any solver that reads the graph every row is alike.

    Rules: ``Z`` rows are ``e_0`` (rows sum to one, as an anchor graph's do); anchors
    after the first are linked to no row. It estimates no ``k`` (one anchor has no
    spectrum to read). Chunk-wise it needs no pass: :meth:`prepare_chunked` reads no
    block and each block's rows are :meth:`transform`.
    """

    name = "one-anchor"
    produces = graphclust.GraphKind.ANCHOR
    needs_anchors = True
    estimates_k = None  # a one-column Z has no spectrum to read
    chunkwise = True  # no global statistic; rows are transform()
    accepts_sparse = True  # the rows' values are never read

    @staticmethod
    def _rows(n: int, m: int) -> sp.csr_array:
        return sp.csr_array((np.ones(n), np.zeros(n, dtype=np.int32),
                             np.arange(n + 1, dtype=np.int32)), shape=(n, m))

    def build(self, X, anchors, ctx):
        if anchors is None:
            raise ValueError("graph 'one-anchor' needs anchors")
        return graphclust.AnchorGraph(self._rows(X.shape[0], anchors.n_anchors),
                                      anchors=anchors)

    def transform(self, X_new, graph):
        return self._rows(X_new.shape[0], graph.anchors.n_anchors)

    def prepare_chunked(self, anchors, chunks, ctx):
        """The fitted graph without rows; nothing is read from the blocks."""
        return graphclust.AnchorGraph(self._rows(0, anchors.n_anchors), anchors=anchors)
