"""Contract of anchor selectors (kind ``"anchors"``, work method ``select``).

``select(X, ctx)`` returns :class:`graphclust.Anchors` with ``1 <= m <= n`` finite rows
of ``d`` columns; ``assignment`` (if set) holds ints of shape ``(n,)`` in ``[0, m)``.
Own check: ``clamp`` — asking for more anchors than points (an ``n_anchors``
parameter) gives at most ``n`` anchors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphclust import Anchors
from graphclust import Context, Part
from graphclust.testing._common import Session
from graphclust.testing._contract import KindCheck, KindContract, Variant, ensure, guard
from graphclust.testing._fixture import (
    Fixture,
    KitAnchorGraph,
    KitKMeansRounding,
    KitSolver,
)

__all__ = ["AnchorsContract", "CONTRACT"]


def _check_clamp(session: Session) -> None:
    """``n_anchors`` above ``n`` is clamped to ``n``."""
    cls, c = session.cls, "clamp"
    fx = session.fixture()
    n = fx.X.shape[0]
    p = session.instance(c)
    with guard(cls, c, f"set_params(n_anchors = n + 7 = {n + 7}) then select()"):
        out = p.set_params(n_anchors=n + 7).select(fx.X.copy(), Context(seed=0))
    ensure(isinstance(out, Anchors) and out.n_anchors <= n, cls, c,
           f"with n_anchors > n the anchor count must be clamped to n = {n}, got "
           f"{getattr(out, 'n_anchors', type(out).__name__)}")


class AnchorsContract(KindContract):
    """The anchor-selector contract."""

    kind = "anchors"
    label = "anchor selector"
    work_method = "select"
    sparse_input = True
    attributes = ()

    def inputs(self, inst: Part, fx: Fixture, X: Any, variant: Variant,
               n_clusters: int) -> tuple:
        return (X,)

    def invoke(self, inst: Part, args: tuple, ctx: Context, n_clusters: int) -> Any:
        return inst.select(args[0], ctx)

    def check_output(self, inst: Part, out: Any, fx: Fixture, X: Any, *, check: str,
                     variant: Variant, n_clusters: int) -> None:
        cls, c = type(inst), check
        n, d = X.shape
        ensure(isinstance(out, Anchors), cls, c,
               f"select() must return graphclust.Anchors, got {type(out).__name__}")
        P = np.asarray(out.points)
        ensure(P.ndim == 2 and P.shape[1] == d and 1 <= P.shape[0] <= n, cls, c,
               f"anchors must have shape (m, {d}) with 1 <= m <= n = {n}, got {P.shape}")
        ensure(P.dtype.kind == "f" and np.all(np.isfinite(P)), cls, c,
               "anchor points must be finite floats")
        if out.assignment is not None:
            a = np.asarray(out.assignment)
            ensure(a.shape == (n,) and a.dtype.kind in "iu" and a.min() >= 0
                   and a.max() < P.shape[0], cls, c,
                   f"assignment must be ints of shape ({n},) in [0, {P.shape[0]}), got "
                   f"{a.dtype} {a.shape}")

    def extra_checks(self, cls: type[Part]) -> list[KindCheck]:
        if "n_anchors" in [f.name for f in cls.parameters()]:
            return [KindCheck("clamp", "n_anchors > n gives at most n anchors.", _check_clamp)]
        return []

    def minimal_spec(self, inst: Part) -> dict:
        return {"anchors": inst, "graph": KitAnchorGraph(), "solver": KitSolver(),
                "rounding": KitKMeansRounding()}


CONTRACT = AnchorsContract()
