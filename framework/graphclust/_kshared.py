"""One estimate of ``k`` for every preset: a pipeline whose estimator is an eigengap
takes the ``k`` of ``auto`` instead (:doc:`/choosing-k`, "Presets without k").

Why: the eigengap of a preset's own graph reads ``k`` off one spectrum, and on data
whose clusters touch (images, digits) no gap in that spectrum is large enough to count:
on scikit-learn's digits, without ``k``, eight of the presets whose estimator is the
eigengap answered 1 with a :class:`~graphclust.NoClusterStructureWarning` and twelve
answered 2 to 4, while ``auto`` answered 10 (benchmarks/HISTORY.md, "Every preset
without k on digits"). ``auto``'s estimate is the one the project measures on data it
was not tuned on (the generated battery's check half, the ten small sets, MNIST-70k) and
chooses the estimator from the data (a density tree where clusters are dense, the
eigengap where its graph is the right one), so every preset gets it rather than a
second, weaker one.

The rule, decided by the plan (``FitPlan.auto_k``) and run as the fit's first stage
(``k`` in ``timings_`` and the progress), before any of the preset's work: with no
``n_clusters``, a pipeline (or an ensemble) whose estimating part declares
``estimates_k = "eigengap"`` is fitted at the ``k`` that ``GraphClustering("auto")``
finds on the same data (the same container, seed, ``k_max`` and ``n_jobs``), and
``k_selection_`` is ``auto``'s selection, its ``details`` naming the rule that decided.
When ``auto`` finds no cluster structure, the part's own eigengap has the last word (its
warnings, not ``auto``'s): "no structure" is said only when both estimators say it
(three Gaussian blobs in 2-d, 600 rows, which ``auto``'s rule 9 tree calls one cluster
and the eigengap finds 3). A spec's ``k_from = "parts"`` keeps the part's own eigengap;
parts that estimate otherwise (the density tree, modularity, a sample's rounding) always
estimate themselves, and a rule preset (``auto``) is never redirected. The cost is one
``auto`` fit before the preset's; giving ``n_clusters`` skips both.

Imports: none of the estimator's; ``auto`` is fitted by the class of the estimator
being planned (this module is imported by the plan, which the estimator imports).
"""

from __future__ import annotations

import warnings
from typing import Any

import attrs

from graphclust._kselect import estimating_stage
from graphclust._kselection import KSelection

__all__ = ["k_from_auto", "settle_k", "takes_auto_k"]


def takes_auto_k(pipe: Any, spec: Any) -> bool:
    """Whether a pipeline with no ``n_clusters`` takes ``auto``'s ``k``: its estimating
    part estimates by the eigengap and ``spec`` does not say ``k_from = "parts"``."""
    if isinstance(spec, dict) and spec.get("k_from", "auto") == "parts":
        return False
    stage = estimating_stage(pipe)
    return stage is not None and getattr(stage[1], "estimates_k", None) == "eigengap"


def k_from_auto(estimator: Any, X: Any, k_max: int | None, who: str) -> KSelection | None:
    """``auto``'s selection of ``k`` on ``X`` (validated, in its container), recorded as
    the selection of ``who``: the method and candidates of ``auto``'s estimator, the part
    ``"auto (<its part>)"`` and ``details["auto"]`` the rule that decided; its warnings
    are raised again. ``None`` (and no warning) when ``auto`` found no cluster structure:
    the pipeline's own part estimates then."""
    auto = type(estimator)("auto", random_state=estimator.random_state, k_max=k_max,
                           n_jobs=estimator.n_jobs)  # its progress: the caller's stage k
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        auto.fit(X)
    sel = auto.k_selection_
    if not sel.structure:
        return None
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    summary = str(auto.resolved_spec_.get("summary", ""))
    return attrs.evolve(sel, part=f"auto ({sel.part or sel.method}) for {who}",
                        details={**sel.details, "k_from": "auto", "auto": summary})


def settle_k(estimator: Any, plan: Any) -> Any:
    """``plan`` with its ``k`` found by ``auto`` when the plan says so (``auto_k``): the
    progress stage ``k``, timed into ``plan.timings["k"]``; ``n_clusters`` and
    ``selection`` set when ``auto`` found structure, else left for the pipeline's own
    estimator (which then adds its seconds to the same ``k``)."""
    if plan.auto_k is None:
        return plan
    progress = plan.ctx.progress.for_stage("k", "auto")
    progress.open()
    sel = k_from_auto(estimator, plan.X, plan.auto_k[0], plan.who)
    seconds = progress.close(f"auto's estimate: {sel.k} clusters" if sel is not None else
                             "auto found no cluster structure: the pipeline's own estimate "
                             "follows")
    timings = {**plan.timings, "k": seconds}
    if sel is None:
        return attrs.evolve(plan, auto_k=None, timings=timings)
    return attrs.evolve(plan, auto_k=None, n_clusters=int(sel.k), selection=sel,
                        timings=timings)
