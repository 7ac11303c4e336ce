"""Contract of graph builders (kind ``"graph"``, work method ``build``).

Declarations: ``produces`` is ``"affinity"`` or ``"anchor"``; ``needs_anchors`` is a
bool; only anchor-graph builders implement ``transform``. ``build(X, anchors, ctx)``
returns the declared graph with ``n`` rows: an affinity graph symmetric with edges on
the fixture blobs, an anchor graph with one column of ``Z`` per anchor (when it
takes anchors) and entries. Own check: ``transform`` — builders implementing
``transform(X_new, graph)`` return finite nonnegative rows of shape ``(n_new, m)``.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import scipy.sparse as sp

from graphclust._graphs import AffinityGraph, AnchorGraph
from graphclust._parts import Context, Part
from graphclust.testing._common import Session
from graphclust.testing._contract import KindCheck, KindContract, Variant, ensure, guard
from graphclust.testing._fixture import Fixture, KitAnchors, KitKMeansRounding, KitSolver

__all__ = ["GraphContract", "CONTRACT"]


def _check_transform(session: Session) -> None:
    """``transform`` places new points: rows of shape ``(n_new, m)``, finite, >= 0."""
    cls, c = session.cls, "transform"
    fx = session.fixture()
    p = session.instance(c)
    with guard(cls, c, "build() then transform(X_new, graph)"):
        graph = p.build(fx.X.copy(), fx.anchors if p.needs_anchors else None, Context(seed=0))
        rows = p.transform(fx.X[:7] + 0.01, graph)
    R = rows.toarray() if sp.issparse(rows) else np.asarray(rows)
    m = getattr(graph, "n_anchors", None)
    ensure(R.shape == (7, m), cls, c,
           f"transform() must return rows of shape (n_new, m) = (7, {m}), got {R.shape}")
    ensure(np.all(np.isfinite(R)) and R.min() >= 0, cls, c,
           "transform() rows must be finite and nonnegative")


class GraphContract(KindContract):
    """The graph-builder contract."""

    kind = "graph"
    label = "graph builder"
    work_method = "build"
    sparse_input = True
    attributes = (
        ("produces", '``"affinity"`` or ``"anchor"``: the graph ``build`` returns'),
        ("needs_anchors", "bool: whether an anchor selector must run before it"),
        ("transform", "method, anchor graphs only: rows of ``Z`` for new points "
                      "(enables ``predict``)"),
    )

    def declaration_problems(self, cls: type[Part]) -> list[str]:
        problems = []
        produces = inspect.getattr_static(cls, "produces", None)
        if produces not in ("affinity", "anchor"):
            problems.append(f"produces must be 'affinity' or 'anchor', got {produces!r}")
        if not isinstance(cls.needs_anchors, bool):
            problems.append(f"needs_anchors must be a bool, got {cls.needs_anchors!r}")
        if cls.can_transform() and produces != "anchor":
            problems.append("only anchor-graph builders place new points, but it implements "
                            "transform()")
        return problems

    def inputs(self, inst: Part, fx: Fixture, X: Any, variant: Variant,
               n_clusters: int) -> tuple:
        return (X, fx.anchors if inst.needs_anchors else None)

    def invoke(self, inst: Part, args: tuple, ctx: Context, n_clusters: int) -> Any:
        return inst.build(args[0], args[1], ctx)

    def check_output(self, inst: Part, out: Any, fx: Fixture, X: Any, *, check: str,
                     variant: Variant, n_clusters: int) -> None:
        cls, c = type(inst), check
        n = X.shape[0]
        produces = inst.produces
        want = AnchorGraph if produces == "anchor" else AffinityGraph
        ensure(isinstance(out, want), cls, c, f"declares produces={produces!r} so build() "
               f"must return graphclust.{want.__name__}, got {type(out).__name__}")
        ensure(out.n == n, cls, c, f"the graph must have n = {n} rows, got {out.n}")
        if isinstance(out, AffinityGraph):
            A = out.adjacency
            asym = abs(A - A.T).max() if A.nnz else 0.0
            scale = max(1.0, abs(A).max() if A.nnz else 0.0)
            ensure(asym <= 1e-8 * scale, cls, c,
                   f"an affinity graph must be symmetric (max |A - Aᵀ| = {asym:.3g})")
            ensure(A.nnz > 0, cls, c, "the affinity graph has no edges on well-separated blobs")
            return
        if inst.needs_anchors:
            m = fx.anchors.n_anchors
            ensure(out.n_anchors == m, cls, c,
                   f"Z must have one column per anchor ({m}), got {out.n_anchors}")
        if out.anchors is not None:
            ensure(out.anchors.n_anchors == out.n_anchors, cls, c,
                   "graph.anchors and the columns of Z disagree")
        ensure(out.nnz > 0, cls, c, "Z has no entries")

    def extra_checks(self, cls: type[Part]) -> list[KindCheck]:
        if cls.can_transform():
            return [KindCheck("transform", "transform() rows for new points: (n_new, m), "
                              "finite, nonnegative.", _check_transform)]
        return []

    def minimal_spec(self, inst: Part) -> dict:
        spec: dict = {"graph": inst, "solver": KitSolver(), "rounding": KitKMeansRounding()}
        if inst.needs_anchors:
            spec["anchors"] = KitAnchors()
        return spec


CONTRACT = GraphContract()
