"""Contract of metrics (kind ``"metric"``, work method ``score``).

Declarations: ``needs_truth`` and ``greater_is_better`` are bools.
``score(labels, y_true, graph)`` returns a finite float. Own check: ``truth`` — a
truth metric scores the true labels at least as well as shuffled ones (respecting
``greater_is_better``). Its pipeline check composes a minimal pipeline with it as a
metric and runs it with the true labels: the score is reported.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graphclust import Context, Part
from graphclust import Registry
from graphclust.testing._common import Session
from graphclust.testing._contract import KindCheck, KindContract, Variant, ensure, guard
from graphclust.testing._fixture import Fixture, KitKMeansRounding, KitKnnGraph, KitSolver

__all__ = ["MetricContract", "CONTRACT"]


def _check_truth(session: Session) -> None:
    """The true labels score at least as well as shuffled labels."""
    cls, c = session.cls, "truth"
    fx = session.fixture()
    shuffled = np.random.default_rng(0).permutation(fx.y)
    with guard(cls, c, "score()"):
        good = float(session.instance(c).score(fx.y.copy(), fx.y.copy(), fx.affinity_graph))
        bad = float(session.instance(c).score(shuffled, fx.y.copy(), fx.affinity_graph))
    better = good >= bad if cls.greater_is_better else good <= bad
    ensure(better, cls, c, f"greater_is_better={cls.greater_is_better} but the true labels "
           f"score {good:.4g} and shuffled labels {bad:.4g}")


class MetricContract(KindContract):
    """The metric contract."""

    kind = "metric"
    label = "metric"
    work_method = "score"
    float32_input = False  # scores read integer labels only
    attributes = (
        ("needs_truth", "bool: whether ``score`` needs the true labels"),
        ("greater_is_better", "bool: the direction of the score"),
    )

    def declaration_problems(self, cls: type[Part]) -> list[str]:
        return [f"{attr} must be a bool, got {getattr(cls, attr)!r}"
                for attr in ("needs_truth", "greater_is_better")
                if not isinstance(getattr(cls, attr), bool)]

    def inputs(self, inst: Part, fx: Fixture, X: Any, variant: Variant,
               n_clusters: int) -> tuple:
        return (fx.y.copy(), fx.y.copy() if inst.needs_truth else None, fx.affinity_graph)

    def invoke(self, inst: Part, args: tuple, ctx: Context, n_clusters: int) -> Any:
        return inst.score(*args)

    def check_output(self, inst: Part, out: Any, fx: Fixture, X: Any, *, check: str,
                     variant: Variant, n_clusters: int) -> None:
        cls, c = type(inst), check
        ensure(isinstance(out, (float, np.floating)) and not isinstance(out, bool), cls, c,
               f"score() must return a float, got {type(out).__name__}")
        ensure(np.isfinite(out), cls, c, f"score() returned {out!r}")

    def extra_checks(self, cls: type[Part]) -> list[KindCheck]:
        if cls.needs_truth is True:
            return [KindCheck("truth", "true labels score at least as well as shuffled ones.",
                              _check_truth)]
        return []

    def minimal_spec(self, inst: Part) -> dict:
        return {"graph": KitKnnGraph(), "solver": KitSolver(), "rounding": KitKMeansRounding(),
                "metrics": [inst]}

    def check_pipeline(self, session: Session) -> bool:
        from graphclust import compose

        cls, c = session.cls, "pipeline"
        fx = session.fixture()
        with guard(cls, c, "compose() of a minimal pipeline with it"):
            pipe = compose(self.minimal_spec(session.instance(c)), registry=Registry())
        with guard(cls, c, "a minimal pipeline run with it as a metric"):
            res = pipe.run(fx.X.copy(), fx.y.copy(), n_clusters=fx.n_clusters,
                           ctx=Context(seed=0))
        ensure(cls.name in res.scores or not cls.needs_truth, cls, c,
               "the pipeline did not report its score")
        return True


CONTRACT = MetricContract()
