"""Contract of adapters (kind ``"adapter"``, work method ``adapt``).

Declarations: ``accepts`` a non-empty frozenset of :class:`graphclust.GraphKind`
(``"affinity"``, ``"anchor"``), ``produces`` one graph kind, ``provides_features`` and
``out_of_sample`` bools, and ``lift`` implemented. ``adapt(graph, X, k, ctx)`` runs once per accepted
graph kind and returns a :class:`graphclust.Adapted` whose graph is of the declared
kind, whose features (if any) have one row per vertex (and are present when
``provides_features`` and the graph has anchors), and whose ``n_clusters`` lies in
``[1, min(k, vertices)]``. Own check: ``lift`` (the kit's solver on the adapted graph,
lifted back: one row per point of the input graph, the same solution parts, a soft part
still nonnegative, and extendable when ``out_of_sample``). A ``chunkwise`` adapter (on
anchor graphs) also gets ``chunked``: ``adapt_chunked`` over three row blocks equals
``adapt``, ``lift`` on the zero-row graph has zero rows, and ``lift_rows`` per block
stacks to ``lift``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphclust import GraphKind
from graphclust import Adapted, Adapter, Context, Part
from graphclust import Solution
from graphclust.testing._common import Session, lifted_rows
from graphclust.testing._contract import (KindCheck, KindContract, Variant, chunked_on_anchors,
                                          ensure, guard)
from graphclust.testing._fixture import (
    Fixture,
    KitAnchorGraph,
    KitAnchors,
    KitKMeansRounding,
    KitKnnGraph,
    KitSolver,
)

__all__ = ["AdapterContract", "CONTRACT"]

_KINDS = tuple(k.value for k in GraphKind)


def _check_lift(session: Session) -> None:
    """``lift`` after ``adapt`` and the kit's solver gives one row per point."""
    cls, c = session.cls, "lift"
    fx = session.fixture()
    for kind in sorted(cls.accepts):
        p = session.instance(c)
        graph = fx.graph(kind)
        with guard(cls, c, f"adapt() then lift() on an {kind} graph"):
            ctx = Context(seed=0)
            adapted = p.adapt(graph, fx.X, fx.n_clusters, ctx)
            sol = KitSolver().solve(adapted.graph, adapted.X, adapted.n_clusters, ctx)
            lifted = p.lift(sol, graph, adapted, ctx)
        ensure(isinstance(lifted, Solution), cls, c,
               f"lift() must return a graphclust.Solution, got {type(lifted).__name__}")
        n = graph.n
        for part in ("embedding", "soft"):
            inner, outer = getattr(sol, part), getattr(lifted, part)
            ensure((inner is None) == (outer is None), cls, c,
                   f"lift() must keep the solver's {part} (present: {inner is not None}), "
                   f"got present: {outer is not None}")
            if outer is not None:
                ensure(np.asarray(outer).shape[0] == n, cls, c,
                       f"the lifted {part} must have one row per point ({n}), "
                       f"got {np.asarray(outer).shape[0]}")
                ensure(np.all(np.isfinite(outer)), cls, c, f"the lifted {part} is not finite")
        if lifted.soft is not None:
            ensure(np.min(lifted.soft) >= 0, cls, c, "a lifted soft assignment must stay "
                   "nonnegative")
        if cls.out_of_sample:
            ensure(lifted.extendable, cls, c, "declares out_of_sample = True, so the lifted "
                   "solution must place new points (per-anchor values or a projection)")


def _check_chunked(session: Session) -> None:
    """``adapt_chunked`` over three row blocks and ``lift_rows`` per block equal ``adapt``
    and ``lift`` (the kit's solver in between)."""
    import scipy.sparse as sp

    from graphclust import AnchorGraph

    cls, c = session.cls, "chunked"
    p, graph, k, chunks = session.chunked_case("an adapter")
    fx = session.fixture()
    template = AnchorGraph(sp.csr_array((0, graph.n_anchors)), anchors=graph.anchors,
                           state=graph.state)
    with guard(cls, c, "adapt() and lift(), then adapt_chunked(), lift() on the zero-row "
               "graph and lift_rows() per block"):
        ctx = Context(seed=0)
        ref = p.adapt(graph, fx.X.copy(), k, ctx)
        got = session.instance(c).adapt_chunked(template, chunks, k, Context(seed=0))
        sol = KitSolver().solve(ref.graph, ref.X, ref.n_clusters, Context(seed=0))
        want = p.lift(sol, graph, ref, ctx)
        zero = p.lift(sol, template, got, Context(seed=0))
        parts = [p.lift_rows(zero, b) for b in chunks.blocks()]
    ensure(isinstance(got, Adapted) and got.graph.kind == ref.graph.kind, cls, c,
           "adapt_chunked() must return graphclust.Adapted with a graph of the kind adapt() "
           "gives")
    ensure(got.n_clusters == ref.n_clusters, cls, c, f"adapt_chunked() asks for "
           f"{got.n_clusters} clusters, adapt() for {ref.n_clusters}")
    A, B = got.graph.to_dense(), ref.graph.to_dense()
    scale = max(float(np.abs(B).max()), 1e-12)
    ensure(A.shape == B.shape and np.allclose(A, B, atol=1e-9 * scale), cls, c,
           "the graph of adapt_chunked() differs from adapt()'s")
    ensure((got.X is None) == (ref.X is None) and (got.X is None
                                                   or np.allclose(got.X, ref.X)), cls, c,
           "adapt_chunked() hands the solver other features than adapt()")
    ensure(isinstance(zero, Solution) and zero.n == 0, cls, c,
           "lift() on the zero-row graph must return a Solution with zero rows")
    for attr in ("embedding", "soft"):
        full = getattr(want, attr)
        if full is None:
            continue
        rows = lifted_rows(parts, attr, cls)
        ensure(rows.shape == np.shape(full) and np.allclose(rows, full, atol=1e-9), cls, c,
               f"lift_rows() {attr} per block differs from lift()'s")


class AdapterContract(KindContract):
    """The adapter contract."""

    kind = "adapter"
    label = "adapter"
    work_method = "adapt"
    float32_input = False
    attributes = (
        ("accepts", 'frozenset of ``GraphKind`` (``"affinity"``, ``"anchor"``): kinds taken'),
        ("produces", '``GraphKind``: the graph kind it hands the solver'),
        ("provides_features", "bool: whether it hands the solver features "
                              "(e.g. the anchors)"),
        ("out_of_sample", "bool: whether its lifted solutions place new points "
                          "(enables ``predict``)"),
        ("lift", "method: the solver's solution on the adapted graph, lifted to the points"),
    )

    def declaration_problems(self, cls: type[Part]) -> list[str]:
        problems = []
        accepts = getattr(cls, "accepts", None)
        if not (isinstance(accepts, frozenset) and accepts and accepts <= set(_KINDS)):
            problems.append(f"accepts must be a non-empty frozenset of {_KINDS}, got {accepts!r}")
        if getattr(cls, "produces", None) not in _KINDS:
            problems.append(f"produces must be one of {_KINDS}, got {cls.produces!r}")
        for flag in ("provides_features", "out_of_sample"):
            if not isinstance(getattr(cls, flag, None), bool):
                problems.append(f"{flag} must be a bool, got {getattr(cls, flag, None)!r}")
        if getattr(cls, "lift", None) is Adapter.lift:
            problems.append("lift() is not implemented")
        return problems

    def variants(self, inst: Part) -> list[Variant]:
        accepts = getattr(inst, "accepts", frozenset())
        return [Variant(kind, f" on an {kind} graph") for kind in sorted(accepts)
                if kind in _KINDS] or [Variant()]

    def inputs(self, inst: Part, fx: Fixture, X: Any, variant: Variant,
               n_clusters: int) -> tuple:
        kind = variant.name or sorted(inst.accepts)[0]
        return (fx.graph(kind), X)

    def invoke(self, inst: Part, args: tuple, ctx: Context, n_clusters: int) -> Any:
        return inst.adapt(args[0], args[1], n_clusters, ctx)

    def check_output(self, inst: Part, out: Any, fx: Fixture, X: Any, *, check: str,
                     variant: Variant, n_clusters: int) -> None:
        cls, c = type(inst), check
        ensure(isinstance(out, Adapted), cls, c,
               f"adapt() must return graphclust.Adapted, got {type(out).__name__}")
        ensure(out.graph.kind == inst.produces, cls, c,
               f"declares produces={str(inst.produces)!r} but adapt() returned an "
               f"{out.graph.kind} graph")
        vertices = out.graph.n
        if out.X is not None:
            ensure(np.asarray(out.X).shape[0] == vertices, cls, c,
                   f"the adapted features must have one row per vertex ({vertices}), got "
                   f"{np.asarray(out.X).shape[0]}")
        source = fx.graph(variant.name or sorted(inst.accepts)[0])
        if inst.provides_features and getattr(source, "anchors", None) is not None:
            ensure(out.X is not None, cls, c, "declares provides_features = True but adapt() "
                   "handed the solver no features")
        ensure(1 <= out.n_clusters <= min(n_clusters, vertices), cls, c,
               f"the adapted n_clusters must lie in [1, min(k, vertices)] = "
               f"[1, {min(n_clusters, vertices)}], got {out.n_clusters}")

    def extra_checks(self, cls: type[Part]) -> list[KindCheck]:
        if getattr(cls, "lift", None) is Adapter.lift:
            return []
        checks = [KindCheck("lift", "lift() after adapt() and a solver: one row per point, "
                            "the solver's parts kept.", _check_lift)]
        if chunked_on_anchors(cls):
            checks.append(KindCheck("chunked", "chunkwise: adapt_chunked() over row blocks "
                                    "and lift_rows() per block equal adapt() and lift().",
                                    _check_chunked))
        return checks

    def minimal_spec(self, inst: Part) -> dict:
        spec: dict = {"adapter": inst, "solver": KitSolver(), "rounding": KitKMeansRounding()}
        if GraphKind.ANCHOR in inst.accepts:
            spec.update(anchors=KitAnchors(), graph=KitAnchorGraph())
        else:
            spec["graph"] = KitKnnGraph()
        return spec


CONTRACT = AdapterContract()
