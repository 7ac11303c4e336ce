"""Contract of solvers (kind ``"solver"``, work method ``solve``).

Declarations: ``accepts`` and ``provides`` are non-empty frozensets (of
:class:`graphclust.GraphKind` and of :class:`graphclust.SolutionField` values, or their
plain strings); ``needs_features`` and ``out_of_sample`` are bools. ``solve(graph, X, k,
ctx)`` runs on every graph kind in ``accepts`` and returns a :class:`graphclust.Solution`
with ``n`` finite rows holding everything ``provides`` declares (``soft`` nonnegative with at most ``k`` columns;
per-anchor values of shape ``(m, p)``). Own checks: ``one-cluster`` (``k = 1`` works)
and ``out-of-sample`` (on an anchor graph, the solution places new points exactly
when ``out_of_sample`` says so, with every per-anchor value it can set); ``chunked`` for
a ``chunkwise`` solver: ``solve_chunked`` over three row blocks then ``lift_rows`` per
block gives the solution of ``solve`` (compared through the Gram matrix of its rows, which
a rotation of a repeated eigenspace or a sign does not change); rows the solver keeps per
block (``info["kept_rows"]``) reach ``lift_rows`` as ``block.state``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from graphclust import GraphKind, SolutionField
from graphclust import AnchorGraph
from graphclust import Context, Part
from graphclust import Solution
from graphclust.testing._common import Session, lifted_rows
from graphclust.testing._contract import (KindCheck, KindContract, Variant, accepts_anchor,
                                          chunked_on_anchors, ensure, guard)
from graphclust.testing._fixture import (
    Fixture,
    KitAnchorGraph,
    KitAnchors,
    KitArgmaxRounding,
    KitKMeansRounding,
    KitKnnGraph,
)

__all__ = ["SolverContract", "CONTRACT"]

_GRAPH_KINDS = tuple(k.value for k in GraphKind)
_OUTPUTS = tuple(f.value for f in SolutionField)


def _variant(graph_kind: str) -> Variant:
    return Variant(graph_kind, f" on an {graph_kind} graph")


def _check_one_cluster(session: Session) -> None:
    """``solve`` with ``n_clusters = 1`` gives a valid solution on every accepted graph."""
    c = "one-cluster"
    fx = session.fixture()
    for v in session.variants(c):
        out, inst = session.call(c, v, X=fx.X.copy(), n_clusters=1)
        session.contract.check_output(inst, out, fx, fx.X, check=c, variant=v, n_clusters=1)


def _check_out_of_sample(session: Session) -> None:
    """On an anchor graph, ``out_of_sample`` matches what the solution offers."""
    cls, c = session.cls, "out-of-sample"
    out = session.first_output(c, _variant("anchor"))
    ensure(isinstance(out, Solution), cls, c,
           f"solve() must return graphclust.Solution, got {type(out).__name__}")
    declared = cls.out_of_sample
    ensure(out.extendable or not declared, cls, c,
           "declares out_of_sample=True but its solution on an anchor graph has neither a "
           "feature projection nor per-anchor values: predict() would fail")
    ensure(not out.extendable or declared, cls, c,
           "its solution on an anchor graph places new points but the solver does not "
           "declare out_of_sample=True, so predict() is never offered")
    if out.extendable:
        # an embedding placed through the feature projection needs no anchor_embedding
        partial = [a for a in sorted(out.provides) if getattr(out, f"anchor_{a}") is None
                   and not (a == "embedding" and out.projection is not None)]
        ensure(not partial, cls, c,
               f"the solution sets per-anchor values for new points but not anchor_"
               f"{' / anchor_'.join(partial)}, although it holds that too: predict() would "
               "fail with a rounding that reads it (set every anchor_* value it can)")


def _check_chunked(session: Session) -> None:
    """``solve_chunked`` + ``lift_rows`` over three row blocks equals ``solve``."""
    from graphclust.chunks import split_kept

    cls, c = session.cls, "chunked"
    p, graph, k, chunks = session.chunked_case("a solver")
    fx = session.fixture()
    with guard(cls, c, "solve(), then solve_chunked() and lift_rows() per block"):
        ref = p.solve(graph, fx.X.copy(), k, Context(seed=0))
        sol = session.instance(c).solve_chunked(chunks, k, Context(seed=0))
        sol, kept = split_kept(sol)  # rows a solver keeps per block reach lift_rows
        parts = [p.lift_rows(sol, b) for b in chunks.blocks(kept)]
    ensure(isinstance(sol, Solution) and sol.n == 0, cls, c,
           "solve_chunked() must return a Solution with zero rows")
    for attr in _OUTPUTS:
        want = getattr(ref, attr)
        if want is None:
            continue
        got = lifted_rows(parts, attr, cls)
        ensure(got.shape == want.shape, cls, c, f"lift_rows() {attr} has shape {got.shape}, "
               f"solve() {want.shape}")
        G, R = got @ got.T, want @ want.T
        scale = max(float(np.abs(R).max()), 1e-12)
        ensure(np.allclose(G, R, atol=1e-6 * scale), cls, c,
               f"the chunked {attr} differs from solve()'s (Gram matrices differ by "
               f"{float(np.abs(G - R).max()) / scale:.3g} relative)")


class SolverContract(KindContract):
    """The solver contract."""

    kind = "solver"
    label = "solver"
    work_method = "solve"
    sparse_input = True
    attributes = (
        ("accepts", 'non-empty frozenset of ``GraphKind`` (``"affinity"``, ``"anchor"``): '
                    "graph kinds it works on"),
        ("needs_features", "bool: whether ``solve`` needs ``X`` besides the graph"),
        ("provides", 'non-empty frozenset of ``SolutionField`` (``"embedding"``, '
                     '``"soft"``): what its solution holds'),
        ("out_of_sample", "bool: whether its anchor-graph solutions place new points "
                          "(a ``projection`` or every ``anchor_*`` value it can set)"),
    )

    def declaration_problems(self, cls: type[Part]) -> list[str]:
        problems = []
        for attr, allowed in (("accepts", set(_GRAPH_KINDS)), ("provides", set(_OUTPUTS))):
            value = getattr(cls, attr)
            if not (isinstance(value, (frozenset, set)) and value and value <= allowed):
                problems.append(f"{attr} must be a non-empty frozenset of {sorted(allowed)}, "
                                f"got {value!r}")
        for attr in ("needs_features", "out_of_sample"):
            if not isinstance(getattr(cls, attr), bool):
                problems.append(f"{attr} must be a bool, got {getattr(cls, attr)!r}")
        return problems

    def variants(self, inst: Part) -> list[Variant]:
        return [_variant(g) for g in sorted(inst.accepts)]

    def inputs(self, inst: Part, fx: Fixture, X: Any, variant: Variant,
               n_clusters: int) -> tuple:
        return (fx.graph(variant.name), X)

    def invoke(self, inst: Part, args: tuple, ctx: Context, n_clusters: int) -> Any:
        return inst.solve(args[0], args[1], n_clusters, ctx)

    def check_output(self, inst: Part, out: Any, fx: Fixture, X: Any, *, check: str,
                     variant: Variant, n_clusters: int) -> None:
        cls, c = type(inst), check
        n, k = X.shape[0], n_clusters
        ensure(isinstance(out, Solution), cls, c,
               f"solve() must return graphclust.Solution, got {type(out).__name__}")
        missing = sorted(str(f) for f in inst.provides - out.provides)
        ensure(not missing, cls, c, f"declares provides={sorted(map(str, inst.provides))} but "
               f"the solution has no {' / '.join(missing)}")
        ensure(out.n == n, cls, c, f"the solution must have n = {n} rows, got {out.n}")
        for attr in _OUTPUTS:
            arr = getattr(out, attr)
            if arr is None:
                continue
            ensure(arr.shape[0] == n and arr.shape[1] >= 1, cls, c,
                   f"solution.{attr} must have shape ({n}, p >= 1), got {arr.shape}")
            values = arr.data if sp.issparse(arr) else arr  # a sparse soft assignment
            ensure(np.all(np.isfinite(values)), cls, c, f"solution.{attr} has non-finite values")
        if out.soft is not None:
            ensure(out.soft.shape[1] <= max(k, 1) and out.soft.min() >= 0, cls, c,
                   f"solution.soft must be nonnegative with at most k = {k} columns, got "
                   f"{out.soft.shape}")
        graph = fx.graph(variant.name)
        if isinstance(graph, AnchorGraph):
            m = graph.n_anchors
            for attr, full in (("anchor_embedding", out.embedding), ("anchor_soft", out.soft)):
                arr = getattr(out, attr)
                if arr is None:
                    continue
                ensure(full is not None and arr.shape == (m, full.shape[1]), cls, c,
                       f"solution.{attr} must have shape (m, p) = ({m}, "
                       f"{None if full is None else full.shape[1]}), got {arr.shape}")

    def extra_checks(self, cls: type[Part]) -> list[KindCheck]:
        checks = [KindCheck("one-cluster", "n_clusters = 1 gives a valid solution on every "
                            "accepted graph kind.", _check_one_cluster)]
        if chunked_on_anchors(cls):
            checks.append(KindCheck("chunked", "chunkwise: solve_chunked() over row blocks "
                                    "and lift_rows() per block equal solve().",
                                    _check_chunked))
        if accepts_anchor(cls):
            checks.append(KindCheck("out-of-sample", "out_of_sample matches what an "
                                    "anchor-graph solution offers to place new points.",
                                    _check_out_of_sample))
        return checks

    def minimal_spec(self, inst: Part) -> dict:
        spec: dict
        if GraphKind.ANCHOR in inst.accepts:
            spec = {"anchors": KitAnchors(), "graph": KitAnchorGraph()}
        else:
            spec = {"graph": KitKnnGraph()}
        spec["solver"] = inst
        spec["rounding"] = (KitKMeansRounding() if SolutionField.EMBEDDING in inst.provides
                            else KitArgmaxRounding())
        return spec


CONTRACT = SolverContract()
