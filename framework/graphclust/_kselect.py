"""``n_clusters`` found, not asked: the record of a choice and who may make it.

A fit with no ``n_clusters`` (the estimator's, the spec's) asks a part to estimate it
(:doc:`/choosing-k`). Parts declare it on their class (``estimates_k = "eigengap"``) and
implement the ``estimate_k`` hook of their interface; this module decides which part of
a pipeline does (:func:`estimating_stage`), records what it decided
(:class:`KSelection`, the fitted ``k_selection_``) and says the bad cases
(:func:`warn_selection`).

Which stage estimates: the **latest** that can, because it sees the representation the
labels are cut from: the rounding (the density tree of the solver's embedding), when the
solver's solution does not depend on ``k`` (``Solver.uses_k`` is false); else, with such
a solver, an adapter that cuts the labels itself (``on-sample``: the density tree of the
sample's layout, :meth:`graphclust.Adapter.estimate_k`); else the solver; else the graph builder (every graph the core knows has a normalised spectrum, so
:class:`~graphclust.GraphBuilder` estimates by its eigengap unless a builder opts out).
"""

from __future__ import annotations

import warnings
from typing import Any

import attrs
import numpy as np

from graphclust._errors import (KRangeWarning, NoClusterStructureWarning, Problem,
                                ProblemKind, SpecError)

__all__ = ["KSelection", "DEFAULT_K_MAX", "estimating_stage", "check_estimable",
           "eigengap_selection", "warn_selection", "k_range_for", "given_selection"]

#: The largest ``k`` searched when none is given (``k_max``; CLI ``--k-max``).
DEFAULT_K_MAX = 20


@attrs.frozen
class KSelection:
    """How the number of clusters of a fit was chosen (the fitted ``k_selection_``).

    Attributes
    ----------
    method : str
        ``"given"`` (the user's or the spec's integer), or the estimating part's
        declared method (``"eigengap"``, ``"density-tree"``, ...).
    k : int
        The number of clusters used.
    candidates : tuple of int
        The ``k`` values examined (empty for ``"given"``).
    scores : tuple of float
        One score per candidate, in the method's own units (the eigengap
        ``λ_{k+1} − λ_k``; a density tree's total stability).
    rule : str
        The rule that chose, in words.
    part : str
        The part that estimated, as ``"graph 'knn'"`` (empty for ``"given"``).
    k_min, k_max : int
        The searched range.
    structure : bool
        ``False`` when the method found no cluster structure (``k = 1`` then, with a
        :class:`~graphclust.NoClusterStructureWarning`).
    details : dict
        Method-specific values (the eigenvalues, relative gaps, ...), JSON-friendly.
    """

    method: str
    k: int
    candidates: tuple = ()
    scores: tuple = ()
    rule: str = ""
    part: str = ""
    k_min: int = 1
    k_max: int = DEFAULT_K_MAX
    structure: bool = True
    details: dict = attrs.field(factory=dict)

    @property
    def estimated(self) -> bool:
        return self.method != "given"

    def as_dict(self) -> dict[str, Any]:
        """Plain Python values (for ``--json`` and reports)."""
        return {"method": self.method, "k": int(self.k), "part": self.part, "rule": self.rule,
                "k_min": int(self.k_min), "k_max": int(self.k_max),
                "structure": bool(self.structure),
                "candidates": [int(c) for c in self.candidates],
                "scores": [float(s) for s in self.scores],
                "details": self.details}

    def describe(self) -> str:
        """One line: ``estimated: eigengap of graph 'knn', k in [1, 20], ...``."""
        if not self.estimated:
            return "given"
        return (f"estimated: {self.method} of {self.part}, k in [{self.k_min}, {self.k_max}]"
                f"; {self.rule}")


def given_selection(k: int) -> KSelection:
    return KSelection("given", int(k), rule="n_clusters given")


def k_range_for(k_min: int, k_max: int, n: int) -> tuple[int, int]:
    """The searched range on ``n`` points: ``k_max`` clipped to ``n - 1`` (the eigengap
    needs ``k_max + 1`` eigenvalues), ``k_min`` to ``k_max``."""
    top = max(1, min(int(k_max), int(n) - 1))
    return min(int(k_min), top), top


def _can(part: Any) -> bool:
    if part is None or not getattr(part, "estimates_k", None):
        return False
    can = getattr(part, "can_estimate_k", None)  # adapters: from their nested parts
    return bool(can()) if callable(can) else True


def estimating_stage(pipe) -> tuple[str, Any] | None:
    """``(stage, part)`` of the pipeline part that estimates ``k`` (see the module
    notes), or ``None`` when no part can."""
    rounding, solver = getattr(pipe, "rounding", None), getattr(pipe, "solver", None)
    fixed = solver is not None and not getattr(solver, "uses_k", True)
    if _can(rounding) and fixed:
        return "rounding", rounding
    adapter = getattr(pipe, "adapter", None)
    if _can(adapter) and fixed:  # it cuts the labels itself (on-sample's rounding)
        return "adapter", adapter
    if _can(solver):
        return "solver", solver
    graph = getattr(pipe, "graph", None)
    if _can(graph):
        return "graph", graph
    return None


def _able_parts() -> list[str]:
    from graphclust._plugins import get_registry

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
    from graphclust._ensemble import Ensemble

    if isinstance(pipe, Ensemble):
        for m in pipe.members:  # a member with no k of its own estimates it
            if m.n_clusters is None and m.pipeline.n_clusters is None:
                check_estimable(m.pipeline, f"ensemble {m.label}")
        if _can(pipe.consensus):
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


def eigengap_selection(mu, k_min: int, k_max: int, part: str, tiny_rows: int = 0,
                       dropped: int = 0, n: int | None = None) -> KSelection:
    """The :class:`KSelection` of the eigengap rule on the leading eigenvalues ``mu`` of
    a normalised adjacency (:func:`graphclust.numerics.eigengap.choose_by_eigengap`);
    ``dropped`` eigenvalues, of groups holding ``tiny_rows`` of the ``n`` rows, were left
    out of ``mu`` (:func:`~graphclust.numerics.eigengap.anchor_spectrum_without_tiny_groups`)."""
    from graphclust.numerics.eigengap import RELATIVE_GAP, choose_by_eigengap, group_floor

    c = choose_by_eigengap(mu, k_min, k_max)
    rule = (f"largest eigengap λ(k+1) − λ(k) among the k whose relative gap is at least "
            f"{RELATIVE_GAP:g} (von Luxburg 2007, §8.3)")
    if dropped:
        rule += (f"; {dropped} eigenvalues of groups of fewer than {group_floor(n or 2)} "
                 f"(ln n) rows ({tiny_rows} rows) left out: such groups are not clusters")
    if not c.significant:
        rule += f"; none was (largest gap at k = {c.best}, relative {c.relative.max():.2f})"
    mu = np.asarray(mu, dtype=np.float64)
    return KSelection("eigengap", c.k, tuple(int(x) for x in c.candidates),
                      tuple(float(g) for g in c.gaps), rule, part, k_min, k_max,
                      structure=c.k > 1,
                      details={"laplacian_eigenvalues": [float(1 - v) for v in mu],
                               "tiny_group_rows": int(tiny_rows),
                               "tiny_group_eigenvalues": int(dropped),
                               "relative_gaps": [float(r) for r in c.relative],
                               "largest_gap_at": c.best})


def warn_selection(sel: KSelection, who: str) -> None:
    """The bad cases, said: no structure (``k = 1``), or ``k`` at the top of the range."""
    if not sel.estimated:
        return
    if sel.k == 1 and not sel.structure and sel.k_max > 1:
        warnings.warn(f"{who}: no cluster structure found by the {sel.method} of {sel.part} "
                      f"(k searched in [{sel.k_min}, {sel.k_max}]): returning one cluster "
                      "rather than an arbitrary split; give n_clusters to split anyway",
                      NoClusterStructureWarning, stacklevel=3)
    elif sel.k >= sel.k_max > 1:
        warnings.warn(f"{who}: the {sel.method} of {sel.part} chose k = {sel.k}, the top of "
                      f"the searched range [{sel.k_min}, {sel.k_max}]: the range may be too "
                      "small; raise k_max (CLI --k-max) or give n_clusters",
                      KRangeWarning, stacklevel=3)
