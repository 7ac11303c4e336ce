"""The features themselves as the embedding (the solver-free path)."""

from __future__ import annotations

import numpy as np

import graphclust
from graphclust.numerics import as_dense_float, fit_pca


@graphclust.part
class FeaturesSolver(graphclust.Solver):
    """The (scaled) features handed on unchanged as the embedding; the graph is unused.

    A pipeline always has a graph and a solver (the spec's required sections), so a
    rounding that works on points (``genie``, ``kmeans``) is run on the raw features
    through this solver: ``{"solver": "features", "rounding": "genie"}``. The graph is
    ignored; pick the cheapest one (the ``genie`` preset builds a one-anchor graph,
    ``O(n·d)``, which also makes ``predict`` available).

    The solution's embedding is ``X`` as a dense float array (float32 kept), and its
    ``projection`` is the ``d × d`` identity with no centre, so new points are placed
    with their own (scaled) features: ``out_of_sample``. Sparse ``X`` is densified
    (``n × d`` memory): this solver is meant for a few dense columns.

    With ``components`` (``p``), the embedding is the rows on the features' ``p``
    leading principal components instead (:func:`graphclust.numerics.fit_pca`; kept as
    they are when ``d <= p`` or ``n <= p``), its ``projection`` those components and its
    ``center`` the feature mean, so new points are placed the same way. The components
    are fitted on all rows, so that form runs in memory only (a chunked run is refused
    by the solver before it does any work).

    The solution does not depend on ``k`` (``uses_k = False``), so with no
    ``n_clusters`` a rounding that declares ``estimates_k`` (``density``: its tree of
    the features) estimates it (:doc:`/choosing-k`).
    """

    name = "features"
    accepts = frozenset({graphclust.GraphKind.AFFINITY, graphclust.GraphKind.ANCHOR})
    needs_features = True
    provides = frozenset({graphclust.SolutionField.EMBEDDING})
    out_of_sample = True
    chunkwise = True  # every block's rows are its own features
    uses_k = False  # the features are the same whatever k is: a rounding may estimate it

    components: int | None = graphclust.param(
        None, doc="Hand on the rows on this many leading principal components of the "
        "features (fitted on all rows, in memory only); None = the features themselves.",
        check=graphclust.optional(graphclust.integer(1)))

    def solve(self, graph, X, n_clusters, ctx):
        if X is None:
            raise graphclust.InputError("solver 'features' needs the features X")
        E = as_dense_float(X)
        if E.shape[0] != graph.n:
            raise graphclust.InputError(f"solver 'features': X has {E.shape[0]} rows but the "
                                        f"graph has {graph.n} vertices")
        p = self.components
        if p is not None and E.shape[1] > p and E.shape[0] > p:
            pca = fit_pca(E, int(p))
            return graphclust.Solution(embedding=pca.transform(E),
                                       projection=pca.components.T.astype(E.dtype),
                                       center=pca.mean.astype(E.dtype),
                                       info={"features": E.shape[1], "components": int(p)})
        return self._solution(E, E.shape[1])

    @staticmethod
    def _solution(E: np.ndarray, d: int) -> graphclust.Solution:
        return graphclust.Solution(embedding=E, projection=np.eye(d, dtype=E.dtype),
                                   info={"features": d})

    def solve_chunked(self, chunks, n_clusters, ctx):
        """Nothing to sum: a zero-row solution carrying the identity projection."""
        if self.components is not None:
            raise graphclust.InputError("solver 'features' with components fits its "
                                        "principal components on all rows, in memory only; "
                                        "leave components unset for chunked data")
        d = int(chunks.n_features)
        return self._solution(np.zeros((0, d)), d)

    def lift_rows(self, solution, block):
        """A block's embedding rows: its own features (as :meth:`solve` gives them)."""
        E = as_dense_float(block.X)
        return self._solution(E, E.shape[1])
