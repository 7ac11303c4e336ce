"""A second opinion before "no cluster structure": a spec's ``second_opinion`` is fitted
when the spec's own estimate of ``k`` answers 1 (:doc:`/choosing-k`, "No structure only
when a second test says it too").

Why: one estimator of ``k`` reads one kind of evidence. A density tree looks for dense
regions separated by sparse ones and sees none in two interleaved spirals, whose density
is even along each arm; the eigengap of a kNN graph reads the graph's connectivity and
finds the arms, which touch only across a few edges. Structureless data (one Gaussian,
a uniform cube) give neither a dense-to-sparse contrast nor a sparse cut, so both answer
1. "No structure" is therefore said only when both say it; when the second finds
``k >= 2``, its fit is the fit.

The rule, run by the estimator's ``fit`` around the executor's run (the plan decides
whether it applies: ``FitPlan.second_opinion``, set only when ``k`` is estimated, the
input is in memory and not a graph, and the estimator sets no part itself): the spec's
fit runs with its warnings held back; if its ``k_selection_`` says no structure, the
second opinion's spec is planned and fitted on the same data (same seed, ``k_max``,
``n_jobs``, progress). An eigengap's ``k >= 2`` then faces a null test
(:mod:`graphclust.numerics.null_reference`): the same spec fitted on two structureless
references with the data's mean and covariance (a Gaussian and a uniform box, seeded
from the run's seed) must each have a ``λ_k`` at least ``1 / NULL_RATIO`` times the
data's, else the second opinion counts as "no structure" too
(``details["second_opinion"]["null_test"]`` keeps the ratios). With ``k >= 2``
accepted, its plan and result are kept: ``k_selection_`` is
its selection, whose ``rule`` says it was a second opinion and whose ``details["first"]``
is the first selection (``candidates`` and ``rule`` kept); ``resolved_spec_["summary"]``
names both; the first fit's seconds are the stage ``"k"`` of ``timings_``. Otherwise the
first fit stands, its warnings (``NoClusterStructureWarning``) are raised again, and its
``k_selection_.details["second_opinion"]`` records what the second said. With
``n_clusters`` given nothing of this runs.

Imports: none of the estimator's (this module is imported by it); the second plan is made
by :func:`graphclust._plan.make_plan` for a clone of the estimator with the second spec.
"""

from __future__ import annotations

import warnings
from typing import Any

import attrs

__all__ = ["fit_with_second_opinion"]


def _fit_holding_warnings(plan: Any) -> tuple[Any, list]:
    """``plan``'s executor run, and the warnings it raised (held back, not shown)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = plan.executor.fit(plan)
    return result, list(caught)


def _raise_again(caught: list) -> None:
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _second_plan(estimator: Any, plan: Any) -> Any:
    """The plan of the second opinion: the estimator's parameters with the second spec,
    on the data the first plan validated."""
    from sklearn.base import clone

    from graphclust._plan import make_plan

    other = clone(estimator)
    other.spec = dict(plan.second_opinion)
    return make_plan(other, plan.X, plan.y)


def _reference_selection(estimator: Any, plan: Any) -> Any:
    """``fit_spec`` of :func:`graphclust.numerics.null_reference.null_test`: the second
    spec fitted on a reference ``R`` (warnings dropped), its ``KSelection``."""
    def fit_spec(R):
        ref_plan = _second_plan(estimator, attrs.evolve(plan, X=R, y=None))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ref_plan.executor.fit(ref_plan).k_selection
    return fit_spec


def _null_checked(estimator: Any, plan: Any, second: Any) -> tuple[bool, dict | None]:
    """Whether the second opinion's ``k`` passes the null test, and the test's record
    (``None``: nothing to test, the ``k`` stands)."""
    from graphclust._parts import Context
    from graphclust.numerics.null_reference import null_test

    test = null_test(second, plan.X, Context(plan.seed).rng("null-reference"),
                     _reference_selection(estimator, plan))
    return (test is None or test["accepted"]), test


def fit_with_second_opinion(estimator: Any, plan: Any) -> tuple[Any, Any]:
    """``(plan, result)`` of ``estimator``'s fit: ``plan``'s run, or the second opinion's
    plan and run when ``plan``'s finds no cluster structure and the second finds some (see
    the module notes)."""
    if plan.second_opinion is None or plan.n_clusters is not None:
        return plan, plan.executor.fit(plan)
    result, caught = _fit_holding_warnings(plan)
    first = getattr(result, "k_selection", None)
    if first is None or first.structure:
        _raise_again(caught)
        return plan, result
    plan2 = _second_plan(estimator, plan)
    result2, caught2 = _fit_holding_warnings(plan2)
    second = result2.k_selection
    said = str(plan.second_opinion.get("summary", "")) or repr(plan2.pipeline)
    found = second is not None and second.structure and second.k >= 2
    passed, test = _null_checked(estimator, plan, second) if found else (False, None)
    if not passed:
        _raise_again(caught)
        heard = {"k": 1 if second is None else int(second.k), "spec": said,
                 "part": "" if second is None else second.part}
        if test is not None:
            heard["null_test"] = test
        return attrs.evolve(plan, selection=attrs.evolve(
            first, details={**first.details, "second_opinion": heard})), result
    _raise_again(caught2)
    chosen = attrs.evolve(
        second,
        rule=f"{second.rule}; a second opinion: the {first.method} of {first.part} found "
             f"no cluster structure (k = 1)",
        details={**second.details, "second_opinion": said, "first": first.as_dict(),
                 **({"null_test": test} if test is not None else {})})
    summary = f"{plan.summary or plan.who}; no cluster structure found: second opinion " \
              f"{said}"
    seconds = float(result.timings.get("total", 0.0))
    return attrs.evolve(plan2, selection=chosen, summary=summary, profile=plan.profile,
                        who=plan.who,
                        timings={**plan.timings, "k": plan.timings.get("k", 0.0) + seconds}), \
        result2
