"""Contract of graph builders (kind ``"graph"``, work method ``build``).

Declarations: ``produces`` is a :class:`graphclust.GraphKind` (or its plain string); ``needs_anchors`` is a
bool; only anchor-graph builders implement ``transform``. ``build(X, anchors, ctx)``
returns the declared graph with ``n`` rows: an affinity graph symmetric with edges on
the fixture blobs, an anchor graph with one column of ``Z`` per anchor (when it
takes anchors) and entries. Own check: ``transform`` — builders implementing
``transform(X_new, graph)`` return finite nonnegative rows of shape ``(n_new, m)``; and
``chunked`` — a ``chunkwise`` builder's ``prepare_chunked`` over three row blocks then
``transform`` per block gives the rows of ``build``, and so do its one-search hooks
(``prepare_search``, ``search_block`` per block, ``finish_search`` over the kept
searches, ``rows_from_search`` per block) when it implements them.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import scipy.sparse as sp

from graphclust import GraphKind
from graphclust import AffinityGraph, AnchorGraph
from graphclust import Context, Part
from graphclust.chunks import Block, InMemoryChunks
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


def _check_chunked(session: Session) -> None:
    """``prepare_chunked`` over three row blocks, then ``transform`` per block, gives the
    rows of ``build`` (the chunked execution's graph, :mod:`graphclust.chunks`), and so
    do the one-search hooks when the builder implements them."""
    cls, c = session.cls, "chunked"
    fx = session.fixture()
    p = session.instance(c)
    ensure(p.produces == GraphKind.ANCHOR and cls.can_transform(), cls, c,
           "declares chunkwise=True, which needs an anchor graph builder with transform()")
    rows = -(-fx.X.shape[0] // 3)
    with guard(cls, c, "build(), then prepare_chunked() and transform() per block"):
        graph = p.build(fx.X.copy(), fx.anchors, Context(seed=0))
        template = p.prepare_chunked(fx.anchors, InMemoryChunks(fx.X.copy(), block_rows=rows),
                                     Context(seed=0))
        blocks = [p.transform(fx.X[i:i + rows], template)
                  for i in range(0, fx.X.shape[0], rows)]
    ensure(isinstance(template, AnchorGraph) and template.n == 0, cls, c,
           "prepare_chunked() must return an AnchorGraph with zero rows, got "
           f"{type(template).__name__}" + (f" with {template.n} rows"
                                           if isinstance(template, AnchorGraph) else ""))
    _ensure_rows(blocks, graph, cls, "transform() per block after prepare_chunked()")
    if cls.can_search_once():
        with guard(cls, c, "prepare_search(), search_block() per block, finish_search() "
                   "and rows_from_search() per block"):
            template = p.prepare_search(fx.anchors, Context(seed=0))
            found = [p.search_block(fx.X[i:i + rows], template)
                     for i in range(0, fx.X.shape[0], rows)]
            fitted = p.finish_search(template, _SearchChunks(fx.X.copy(), found, rows))
            blocks = [p.rows_from_search(f, fitted) for f in found]
        ensure(isinstance(fitted, AnchorGraph) and fitted.n == 0, cls, c,
               "finish_search() must return an AnchorGraph with zero rows")
        _ensure_rows(blocks, graph, cls, "rows_from_search() per block")


def _ensure_rows(blocks: list, graph: AnchorGraph, cls: type, what: str) -> None:
    """The rows of ``blocks`` stacked equal ``graph.Z`` (a ``chunked`` failure if not)."""
    Z = sp.vstack([sp.csr_array(b) for b in blocks]).toarray()
    ref = graph.Z.toarray()
    ensure(Z.shape == ref.shape and np.allclose(Z, ref, rtol=1e-8, atol=1e-12), cls,
           "chunked", f"the rows of {what} differ from build()'s"
           + ("" if Z.shape != ref.shape else f" (largest difference {abs(Z - ref).max():.3g})"))


class _SearchChunks(InMemoryChunks):
    """Row blocks whose ``block.Z`` is the block's kept ``search_block`` result (what
    ``finish_search`` receives)."""

    def __init__(self, X: np.ndarray, found: list, block_rows: int) -> None:
        super().__init__(X, block_rows=block_rows)
        self.found = found

    def blocks(self, state=None):
        for block, found in zip(super().blocks(state), self.found, strict=True):
            yield Block(block.X, found, block.start, block.state)


class GraphContract(KindContract):
    """The graph-builder contract."""

    kind = "graph"
    label = "graph builder"
    work_method = "build"
    sparse_input = True
    attributes = (
        ("produces", '``GraphKind`` (``"affinity"`` or ``"anchor"``): the graph built'),
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
        if cls.can_transform() and produces != GraphKind.ANCHOR:
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
        want = AnchorGraph if produces == GraphKind.ANCHOR else AffinityGraph
        ensure(isinstance(out, want), cls, c, f"declares produces={str(produces)!r} so build() "
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
        checks = []
        if cls.can_transform():
            checks.append(KindCheck("transform", "transform() rows for new points: (n_new, "
                                    "m), finite, nonnegative.", _check_transform))
        if getattr(cls, "chunkwise", False):
            checks.append(KindCheck("chunked", "chunkwise: prepare_chunked() over row blocks, "
                                    "then transform() per block, gives build()'s rows "
                                    "(and so do the one-search hooks, if implemented).",
                                    _check_chunked))
        return checks

    def minimal_spec(self, inst: Part) -> dict:
        spec: dict = {"graph": inst, "solver": KitSolver(), "rounding": KitKMeansRounding()}
        if inst.needs_anchors:
            spec["anchors"] = KitAnchors()
        return spec


CONTRACT = GraphContract()
