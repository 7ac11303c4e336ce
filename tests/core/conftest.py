"""A toy registry of tiny parts, independent of the built-in bundles."""

from typing import ClassVar

import numpy as np
import pytest

from sklearn.cluster import KMeans

import graphclust as gc
from graphclust import Registry


@gc.part
class ToyAnchors(gc.AnchorSelector):
    """First m points as anchors."""

    name: ClassVar[str] = "toy-anchors"
    n_anchors: int = gc.param(4, doc="m", check=gc.integer(1))

    def select(self, X, ctx):
        m = gc.clamp_anchors(self.n_anchors, X.shape[0])
        return gc.Anchors(X[:m])


@gc.part
class ToyAnchorGraph(gc.GraphBuilder):
    """Nearest anchor only."""

    name: ClassVar[str] = "toy-anchor-graph"
    produces: ClassVar[str] = "anchor"
    needs_anchors: ClassVar[bool] = True

    def build(self, X, anchors, ctx):
        return gc.AnchorGraph(self.transform(X, None, anchors), anchors)

    def transform(self, X_new, graph, anchors=None):
        import scipy.sparse as sp
        from graphclust.numerics import nearest_anchors

        anchors = anchors or graph.anchors
        idx, _ = nearest_anchors(X_new, anchors.points, 1)
        n = X_new.shape[0]
        return sp.csr_array((np.ones(n), (np.arange(n), idx[:, 0])), shape=(n, anchors.n_anchors))


@gc.part
class ToyAffinity(gc.GraphBuilder):
    """Complete graph."""

    name: ClassVar[str] = "toy-affinity"
    produces: ClassVar[str] = "affinity"

    def build(self, X, anchors, ctx):
        n = X.shape[0]
        return gc.AffinityGraph(np.ones((n, n)) - np.eye(n))


@gc.part
class ToySolver(gc.Solver):
    """Soft assignment from the first feature's rank."""

    name: ClassVar[str] = "toy-solver"
    accepts: ClassVar[frozenset] = frozenset({"affinity"})
    needs_features: ClassVar[bool] = False
    provides: ClassVar[frozenset] = frozenset({"soft"})
    out_of_sample: ClassVar[bool] = True
    lam: float = gc.param(1.0, doc="λ", check=gc.real(0, low_open=True))
    mode: str = gc.param("a", doc="mode", check=gc.one_of("a", "b"))
    init: object = gc.param(None, doc="nested", check=gc.optional(gc.part_spec("pipeline")))

    def solve(self, graph, X, n_clusters, ctx):
        soft = np.zeros((graph.n, n_clusters))
        soft[np.arange(graph.n), np.arange(graph.n) % n_clusters] = 1
        return gc.Solution(soft=soft)


@gc.part
class ToyArgmax(gc.Rounding):
    """argmax."""

    name: ClassVar[str] = "toy-argmax"
    needs: ClassVar[str] = "soft"

    def round(self, solution, n_clusters, ctx):
        return solution.soft.argmax(1)

    def assign(self, solution):
        return solution.soft.argmax(1)


@gc.part
class ToyKMeans(gc.Rounding):
    """needs an embedding."""

    name: ClassVar[str] = "toy-kmeans"
    needs: ClassVar[str] = "embedding"

    def round(self, solution, n_clusters, ctx):
        return np.zeros(solution.n, dtype=int)


@gc.part
class ToyExplicitW(gc.Adapter):
    """Runs the solver on the explicit point graph W = Z Λ⁻¹ Zᵀ, for tests only."""

    name: ClassVar[str] = "toy-explicit-w"
    accepts: ClassVar[frozenset] = frozenset({"anchor"})
    produces: ClassVar[str] = "affinity"
    provides_features: ClassVar[bool] = True
    out_of_sample: ClassVar[bool] = True
    scale: float = gc.param(1.0, doc="Factor applied to W.", check=gc.real(0, low_open=True))

    def adapt(self, graph, X, n_clusters, ctx):
        import scipy.sparse as sp

        inv = sp.dia_array((gc.numerics.safe_inverse(graph.anchor_degrees)[None, :], [0]),
                           shape=(graph.n_anchors, graph.n_anchors))
        W = graph.Z @ inv @ graph.Z.T
        return gc.Adapted(gc.AffinityGraph(self.scale * W), X, n_clusters)

    def lift(self, solution, graph, adapted, ctx):
        inv = gc.numerics.safe_inverse(graph.anchor_degrees)

        def per_anchor(F):  # a new point's row of W is z Λ⁻¹ Zᵀ, so it gets z (Λ⁻¹ Zᵀ F)
            return None if F is None else inv[:, None] * (graph.Z.T @ F)

        return gc.Solution(embedding=solution.embedding, soft=solution.soft,
                           anchor_embedding=per_anchor(solution.embedding),
                           anchor_soft=per_anchor(solution.soft))


@gc.part
class ToyDropLoops(gc.Adapter):
    """Removes self-loops of an affinity graph (features are not passed on)."""

    name: ClassVar[str] = "toy-drop-loops"
    accepts: ClassVar[frozenset] = frozenset({"affinity"})
    produces: ClassVar[str] = "affinity"

    def adapt(self, graph, X, n_clusters, ctx):
        A = graph.adjacency.copy()
        A.setdiag(0)
        return gc.Adapted(gc.AffinityGraph(A), None, n_clusters)

    def lift(self, solution, graph, adapted, ctx):
        return solution


@pytest.fixture
def toy_registry():
    reg = Registry()
    reg.anchors.add(ToyAnchors)
    reg.graphs.add(ToyAnchorGraph)
    reg.graphs.add(ToyAffinity)
    reg.adapters.add(ToyExplicitW)
    reg.adapters.add(ToyDropLoops)
    reg.solvers.add(ToySolver)
    reg.roundings.add(ToyArgmax)
    reg.roundings.add(ToyKMeans)
    reg.presets.add("toy", {"graph": {"name": "toy-affinity"}, "solver": {"name": "toy-solver"},
                            "rounding": {"name": "toy-argmax"}}, summary="toy preset")
    return reg


@gc.part
class RowKMeans(gc.Consensus):
    """k-means on the dense membership rows (tests only: ensembles with a consensus that can assign)."""

    name = "rows-kmeans"

    def combine(self, memberships, n_clusters, ctx):
        self.km_ = KMeans(n_clusters, n_init=4, random_state=ctx.seed_for("rows")).fit(
            memberships.matrix.toarray())
        return self.km_.labels_

    def assign(self, memberships):
        return self.km_.predict(memberships.matrix.toarray())
