"""``n_clusters`` found, not asked: who estimates it, and the one dispatch every run calls.

A fit with no ``n_clusters`` (the estimator's, the spec's) asks a part to estimate it
(:doc:`/choosing-k`). Parts declare it on their class (``estimates_k = "eigengap"``) and
implement the ``estimate_k`` hook of their interface; this module decides which part of
a pipeline does (:func:`estimating_stage`), refuses a pipeline where none can
(:func:`check_estimable`) and holds :class:`KDispatch`, the one place a run loop (in
memory, chunked, an ensemble's consensus in either) asks for ``k``: the record of the
choice, :class:`~graphclust.KSelection`, and the bad cases said about it live in the leaf
:mod:`graphclust._kselection`.

Which stage estimates: the **latest** that can, because it sees the representation the
labels are cut from: the rounding (the density tree of the solver's embedding), when the
solver's solution does not depend on ``k`` (``Solver.uses_k`` is false); else, with such
a solver, an adapter that cuts the labels itself (``on-sample``: the density tree of the
sample's layout, :meth:`graphclust.Adapter.estimate_k`); else the solver; else the graph
builder (every graph the core knows has a normalised spectrum, so
:class:`~graphclust.GraphBuilder` estimates by its eigengap unless a builder opts out).
An ensemble's ``k`` is its consensus part's.

Imports: this module reads pipelines and ensembles by their attributes only (it imports
neither), so the run loops import it at module level without an import circle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from graphclust._errors import InputError, Problem, ProblemKind, SpecError
from graphclust._kselection import (DEFAULT_K_MAX, KSelection, eigengap_selection,
                                    given_selection, k_range_for, warn_selection)

__all__ = ["KSelection", "DEFAULT_K_MAX", "estimating_stage", "check_estimable",
           "eigengap_selection", "warn_selection", "k_range_for", "given_selection",
           "KDispatch", "can_estimate"]

#: The stages whose part estimates ``k`` before the solver runs, from the graph (and
#: ``X``); the others estimate from what a later stage produced.
BEFORE_SOLVE = ("graph", "solver")


def can_estimate(part: Any) -> bool:
    """Whether ``part`` declares ``estimates_k`` (and, for an adapter, its nested parts
    can: ``can_estimate_k``)."""
    if part is None or not getattr(part, "estimates_k", None):
        return False
    can = getattr(part, "can_estimate_k", None)  # adapters: from their nested parts
    return bool(can()) if callable(can) else True


_can = can_estimate  # the name the ensemble module used


def _is_ensemble(pipe) -> bool:
    return hasattr(pipe, "members") and hasattr(pipe, "consensus")


def estimating_stage(pipe) -> tuple[str, Any] | None:
    """``(stage, part)`` of the pipeline part that estimates ``k`` (see the module
    notes), or ``None`` when no part can. For an ensemble: ``("consensus", part)``."""
    if _is_ensemble(pipe):
        return ("consensus", pipe.consensus) if can_estimate(pipe.consensus) else None
    rounding, solver = getattr(pipe, "rounding", None), getattr(pipe, "solver", None)
    fixed = solver is not None and not getattr(solver, "uses_k", True)
    if can_estimate(rounding) and fixed:
        return "rounding", rounding
    adapter = getattr(pipe, "adapter", None)
    if can_estimate(adapter) and fixed:  # it cuts the labels itself (on-sample's rounding)
        return "adapter", adapter
    if can_estimate(solver):
        return "solver", solver
    graph = getattr(pipe, "graph", None)
    if can_estimate(graph):
        return "graph", graph
    return None


def _able_parts() -> list[str]:
    from graphclust._plugins import get_registry  # the registry loads plugins: at call

    reg = get_registry()
    out = []
    for kind, catalog in (("graph", reg.graphs), ("adapter", reg.adapters),
                          ("solver", reg.solvers), ("rounding", reg.roundings),
                          ("consensus", reg.consensus)):
        for rec in catalog.records():
            method = getattr(rec.cls, "estimates_k", None)
            if method:
                out.append(f"{kind} {rec.name!r} ({method})")
    return out


def check_estimable(pipe, who: str) -> None:
    """Refuse, before any work, a pipeline that has no ``n_clusters`` and no part able
    to estimate it; the message names the registered parts that can."""
    if _is_ensemble(pipe):
        for m in pipe.members:  # a member with no k of its own estimates it
            if m.n_clusters is None and m.pipeline.n_clusters is None:
                check_estimable(m.pipeline, f"ensemble {m.label}")
        if can_estimate(pipe.consensus):
            return
        what = f"consensus {pipe.consensus.name!r}"
    else:
        if estimating_stage(pipe) is not None:
            return
        named = [f"{s} {p.name!r}" for s, p in pipe.named_parts().items()
                 if s in ("graph", "adapter", "solver", "rounding")]
        what = ", ".join(named) or "no part"
    able = _able_parts()
    raise SpecError(Problem("n_clusters", f"no n_clusters given and no part of {who} can "
                            f"estimate it ({what} declare no estimates_k); give "
                            "n_clusters, or use a part that estimates it: "
                            f"{', '.join(able) or '(none registered)'}",
                            ProblemKind.INCOMPATIBLE), title="n_clusters cannot be estimated")


#: ``estimate(part, k_min, k_max, ctx) -> KSelection``: a stage's call of its part's hook
Estimate = Callable[[Any, int, int, Any], KSelection]


@attrs.define
class KDispatch:
    """The ``k`` of one run: given, or estimated by one part at one stage.

    Every run loop (:meth:`graphclust.Pipeline.run_once`, the chunked run, an ensemble's
    consensus in memory and chunked) makes one with :meth:`begin` and then, at each
    stage, asks it: :meth:`at` runs the estimating part's hook when the run reaches that
    part's stage (the loop says how the hook is called on what it holds there), and
    :meth:`take` records an estimate a stage made itself (an adapter inside its solve, a
    rounding on rows it drew on a worker; those stages are handed :meth:`range_for`).
    Whatever estimated, the choice is warned about once (:func:`warn_selection`) and
    :attr:`k` is the number of clusters from then on.

    Attributes
    ----------
    who : str
        The run, as named in warnings and errors.
    k_min, k_max : int
        The searched range, clipped to the number of points (:func:`k_range_for`).
    stage : str or None
        The stage whose part estimates (``None``: ``n_clusters`` was given).
    part : Part or None
        That part.
    selection : KSelection or None
        The choice, once made (at :meth:`begin` when given).
    """

    who: str
    k_min: int
    k_max: int
    stage: str | None = None
    part: Any = None
    selection: KSelection | None = None

    @classmethod
    def begin(cls, pipe, n_clusters: int | None, k_range: tuple[int, int] | None, n: int,
              who: str, chunked: bool = False) -> KDispatch:
        """The dispatch of a run of ``pipe`` on ``n`` points: with ``n_clusters`` the
        given choice; else the estimating stage (refused when there is none, and in a
        chunked run when that stage estimates in memory only)."""
        k_min, k_max = k_range_for(*(k_range or (1, DEFAULT_K_MAX)), n)
        if n_clusters is not None:
            return cls(who, k_min, k_max, selection=given_selection(n_clusters))
        check_estimable(pipe, who)
        stage, part = estimating_stage(pipe)
        if chunked and not _estimates_chunked(stage, part):
            raise InputError(f"{who}: {stage} {part.name!r} estimates n_clusters in "
                             "memory only; give n_clusters for a chunked fit")
        return cls(who, k_min, k_max, stage, part)

    @property
    def k(self) -> int | None:
        """The chosen ``k`` (``None`` until a stage has estimated it)."""
        return None if self.selection is None else int(self.selection.k)

    @property
    def solver_k(self) -> int:
        """The ``k`` handed to the solver: the chosen one, else ``k_max`` (a solver that
        does not use ``k`` runs before the rounding or adapter estimates it)."""
        return self.k_max if self.k is None else self.k

    def range_for(self, stage: str) -> tuple[int, int] | None:
        """``(k_min, k_max)`` when ``stage`` is to estimate ``k`` itself, else ``None``."""
        return (self.k_min, self.k_max) if self.pending(stage) else None

    def pending(self, stage: str) -> bool:
        """Whether ``stage``'s part is to estimate ``k`` and has not yet."""
        return self.selection is None and self.stage == stage

    def at(self, stage: str, estimate: Estimate, stage_ctx=None,
           timings: dict[str, float] | None = None) -> int | None:
        """At ``stage`` of the run: when its part estimates, call ``estimate(part, k_min,
        k_max, ctx)`` and record the result (:meth:`take`). With ``stage_ctx(name,
        part)`` (a run's stage contexts) the call is its own progress stage ``k``, timed
        into ``timings["k"]``; without, ``ctx`` is ``None``. Returns :attr:`k`."""
        if not self.pending(stage):
            return self.k
        kctx = None
        if stage_ctx is not None:
            kctx = stage_ctx("k", self.part)
            kctx.progress.open()
        selection = estimate(self.part, self.k_min, self.k_max, kctx)
        if stage_ctx is not None and timings is not None:
            timings["k"] = kctx.progress.close(selection.method)
        return self.take(stage, selection, _frames=2)

    def take(self, stage: str, selection: KSelection | None, _frames: int = 1) -> int | None:
        """Record the estimate ``stage`` made (ignored unless ``stage`` was to estimate),
        warning about its bad cases once. Returns :attr:`k`."""
        if self.pending(stage):
            if selection is None:
                raise ValueError(f"{self.who}: {stage} {self.part.name!r} was to estimate "
                                 "n_clusters but returned no KSelection")
            self.selection = selection
            warn_selection(selection, self.who, stacklevel=3 + _frames)
        return self.k


def _estimates_chunked(stage: str, part: Any) -> bool:
    """Whether ``stage``'s part can estimate ``k`` in a chunked run: the graph (from
    ``m``-sized sums), an adapter (on its sample) and a rounding that draws its own rows
    (on those rows); a solver or a rounding on all rows, in memory only."""
    if stage in ("graph", "adapter", "consensus"):
        return True
    return stage == "rounding" and bool(part.draws_rows())
