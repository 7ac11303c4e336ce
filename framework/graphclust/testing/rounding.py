"""Contract of roundings (kind ``"rounding"``, work method ``round``).

Declarations: ``needs`` is a :class:`graphclust.SolutionField` (``"embedding"`` or
``"soft"``). ``round(solution, k, ctx)``
returns integer labels of shape ``(n,)`` in ``[0, k)`` from a solution holding only
what ``needs`` declares (its ``float32`` check hands it a float32 solution). Own checks: ``one-cluster`` (``k = 1`` works) and ``assign``
(when implemented, ``assign(solution)`` after ``round`` labels rows in ``[0, k)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphclust import Context, Part, Rounding
from graphclust import Solution
from graphclust.testing._common import Session
from graphclust.testing._contract import KindCheck, KindContract, Variant, check_labels, guard
from graphclust.testing._fixture import Fixture, KitKnnGraph, KitSolver

__all__ = ["RoundingContract", "CONTRACT"]


def _check_one_cluster(session: Session) -> None:
    """``round`` with ``n_clusters = 1`` labels everything 0."""
    c = "one-cluster"
    fx = session.fixture()
    out, inst = session.call(c, Variant(), n_clusters=1)
    session.contract.check_output(inst, out, fx, fx.X, check=c, variant=Variant(), n_clusters=1)


def _check_assign(session: Session) -> None:
    """``assign`` after ``round`` labels the rows of a solution in ``[0, k)``."""
    cls, c = session.cls, "assign"
    fx = session.fixture()
    p = session.instance(c)
    sol = fx.solution_with(p.needs)
    with guard(cls, c, "round() then assign(solution)"):
        p.round(sol, fx.n_clusters, Context(seed=0))
        new = p.assign(sol)
    session.contract.check_output(p, new, fx, fx.X, check=c, variant=Variant(),
                                  n_clusters=fx.n_clusters)


class RoundingContract(KindContract):
    """The rounding contract."""

    kind = "rounding"
    label = "rounding"
    work_method = "round"
    attributes = (
        ("needs", '``SolutionField`` (``"embedding"`` or ``"soft"``): what it reads'),
        ("assign", "method, optional: labels of new points after ``round`` "
                   "(enables ``predict``)"),
    )

    def declaration_problems(self, cls: type[Part]) -> list[str]:
        if cls.needs not in ("embedding", "soft"):
            return [f"needs must be 'embedding' or 'soft', got {cls.needs!r}"]
        return []

    def inputs(self, inst: Part, fx: Fixture, X: Any, variant: Variant,
               n_clusters: int) -> tuple:
        sol = fx.solution_with(inst.needs, n_clusters)
        if getattr(X, "dtype", None) == np.float32:  # the float32 check: a float32 solution
            sol = Solution(embedding=None if sol.embedding is None
                           else sol.embedding.astype(np.float32),
                           soft=None if sol.soft is None else sol.soft.astype(np.float32))
        return (sol,)

    def invoke(self, inst: Part, args: tuple, ctx: Context, n_clusters: int) -> Any:
        return inst.round(args[0], n_clusters, ctx)

    def check_output(self, inst: Part, out: Any, fx: Fixture, X: Any, *, check: str,
                     variant: Variant, n_clusters: int) -> None:
        what = "assign()" if check == "assign" else "round()"
        check_labels(type(inst), check, out, X.shape[0], n_clusters, what)

    def extra_checks(self, cls: type[Part]) -> list[KindCheck]:
        checks = [KindCheck("one-cluster", "n_clusters = 1 gives valid labels.",
                            _check_one_cluster)]
        if getattr(cls, "assign", None) is not Rounding.assign:
            checks.append(KindCheck("assign", "assign() after round() labels rows in [0, k).",
                                    _check_assign))
        return checks

    def minimal_spec(self, inst: Part) -> dict:
        return {"graph": KitKnnGraph(), "solver": KitSolver(), "rounding": inst}


CONTRACT = RoundingContract()
