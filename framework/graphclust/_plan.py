"""One fit, one plan: what :meth:`GraphClustering.fit` decides before any work runs.

:func:`make_plan` computes a :class:`FitPlan` once per fit, in this order:

1. the estimator's own parameters (:class:`FitParameters`) are checked by the machinery
   that checks a part's (:func:`graphclust.param` declarations with checks): one
   :class:`~graphclust.SpecError` lists every problem;
2. a spec that needs no data is composed (through :func:`graphclust.compose` only);
3. the executor for the container (:mod:`graphclust._executors`: in memory, or chunked
   on Dask) validates the data's shape and dtype; a rule preset (``"auto"``) is then
   resolved by the composer from the data's profile and composed;
4. ``n_clusters`` (checked against ``n``), the seed and the run's
   :class:`~graphclust.Context` are fixed. With no ``n_clusters`` (neither the
   estimator's nor the spec's) the plan holds ``None`` and the range
   ``[1, k_max]``: a part of the pipeline estimates it (:doc:`/choosing-k`); a pipeline
   with no part able is refused here, before any work. A pipeline whose part would
   estimate by the eigengap takes ``auto``'s ``k`` instead: the plan says so
   (``auto_k``), the fit's first stage finds it (:mod:`graphclust._kshared`; a spec's
   ``k_from = "parts"`` keeps the eigengap). ``k_max`` is the estimator's,
   else the spec's ``k_max`` key (a rule preset's resolved spec states the range its
   estimator resolves: a density tree as many clusters as its resolution allows), else
   :data:`~graphclust.DEFAULT_K_MAX`.

The executor runs the plan (``plan.executor.fit(plan)``: it admits the spec, checks the
values, runs) and the estimator records what it returns in one place, whichever of the
four paths ran (pipeline or ensemble, in memory or chunked).
"""

from __future__ import annotations

import numbers
from typing import Any

import attrs
import numpy as np

from graphclust._checks import Check, check_fields, integer, optional
from graphclust._composer import compose, needs_data, resolve_spec
from graphclust._errors import InputError, Problem, ProblemKind, SpecError, spec_error
from graphclust._given import GivenAnchors, GivenGraph, PrecomputedGraph, is_array_like
from graphclust._kselect import DEFAULT_K_MAX, check_estimable
from graphclust._kshared import takes_auto_k
from graphclust._ongraph import graph_default_spec, graph_k_max, is_precomputed
from graphclust._parts import Context, param
from graphclust._progress import Progress
from graphclust._spec import SECTIONS, SEED_LIMIT, merge_overrides

__all__ = ["FitPlan", "FitParameters", "make_plan", "estimator_spec", "refuse_feature_parts",
           "DEFAULT_N_CLUSTERS",
           "SECTION_PARAMS", "DEFAULT_K_MAX"]

#: Kept for callers that need a number to show: the old default of ``n_clusters``. A fit
#: with no ``n_clusters`` no longer uses it: ``k`` is estimated (:doc:`/choosing-k`).
DEFAULT_N_CLUSTERS = 8
#: Spec sections that are also constructor parameters of the estimator.
SECTION_PARAMS = (*SECTIONS, "metrics")


def _seed_problem(value: Any) -> str | None:
    if value is None or isinstance(value, np.random.RandomState):
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if 0 <= value < SEED_LIMIT:
            return None
        return (f"must be an integer in [0, 2**32) (NumPy's seed range), got {value}; "
                "seeds are used as given, so that two different seeds never run alike")
    return f"must be None, an integer or a RandomState, got {value!r}"


def _flag_problem(value: Any) -> str | None:
    ok = isinstance(value, (bool, numbers.Integral, np.bool_))
    return None if ok else f"must be a boolean, got {value!r}"


def _jobs_problem(value: Any) -> str | None:
    if value is None or (isinstance(value, numbers.Integral) and not isinstance(value, bool)
                         and value != 0):
        return None
    return f"must be None or a nonzero integer (-1: all cores), got {value!r}"


def _mapping_problem(value: Any) -> str | None:
    if value is None or isinstance(value, dict):
        return None
    return f"must be a dict of section overrides, got {type(value).__name__}"


@attrs.define
class FitParameters:
    """The estimator's own parameters, declared and checked as a part's are."""

    n_clusters: Any = param(None, doc="Number of clusters; None: the spec's, else "
                            "estimated in [1, k_max].", check=optional(integer(1)))
    k_max: Any = param(None, doc="Largest number of clusters searched when it is "
                       f"estimated; None: {DEFAULT_K_MAX}.", check=optional(integer(1)))
    random_state: Any = param(None, doc="Seed of the run (overrides the spec's seed).",
                              check=Check("None, an integer or a RandomState", _seed_problem))
    verbose: Any = param(False, doc="Report progress of long stages.",
                         check=Check("a boolean", _flag_problem))
    n_jobs: Any = param(None, doc="Processes for an ensemble's members (-1: all cores).",
                        check=Check("None or a nonzero integer", _jobs_problem))
    overrides: Any = param(None, doc="Overrides of top-level spec keys.",
                           check=Check("a dict", _mapping_problem))
    noise: Any = param(False, doc="Label -1 the points the fit says belong to no cluster.",
                       check=Check("a boolean", _flag_problem))

    @classmethod
    def of(cls, estimator) -> "FitParameters":
        """The estimator's values of the declared parameters."""
        return cls(**{f.name: getattr(estimator, f.name) for f in attrs.fields(cls)})

    def check(self) -> None:
        """Raise one :class:`SpecError` listing every invalid parameter."""
        problems = [Problem(name, msg, ProblemKind.INVALID_PARAMETER)
                    for name, msg in check_fields(self)]
        if problems:
            raise SpecError(problems, title="invalid parameter")

    def asked_k(self) -> int | None:
        """The ``n_clusters`` asked of a rule preset's profile: the estimator's, else the
        ``overrides``' one, else ``None`` (to be estimated)."""
        k = self.n_clusters
        if k is None and isinstance(self.overrides, dict):
            k = self.overrides.get("n_clusters")
        return None if k is None else _checked_k(k)

    def searched_k_max(self) -> int:
        """``k_max``, else :data:`DEFAULT_K_MAX`."""
        return DEFAULT_K_MAX if self.k_max is None else int(self.k_max)


def _checked_k(k: Any) -> int:
    msg = integer(1)(k)
    if msg:
        raise SpecError(Problem("n_clusters", msg, ProblemKind.INVALID_PARAMETER),
                        title="invalid parameter")
    return int(k)


def _section_overrides(estimator) -> dict[str, Any]:
    """``overrides`` with the section parameters (``solver=...``) merged on top."""
    out = dict(estimator.overrides or {})
    for key in SECTION_PARAMS:
        value = getattr(estimator, key)
        if value is None:
            continue
        if isinstance(value, str) and key in SECTIONS:
            value = {"name": value}
        current = out.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            out[key] = {**current, **value}
        else:
            out[key] = value
    return out


def estimator_spec(estimator, profile=None) -> dict:
    """The spec ``estimator`` composes: its ``spec`` resolved by the composer (a rule
    preset's decision for ``profile``), with its section parameters and ``overrides``
    merged in; arrays given as ``anchors`` / ``graph`` become the given parts."""
    on_graph = is_precomputed(estimator)
    if on_graph and needs_data(estimator.spec) and profile is not None:
        base = graph_default_spec(profile)  # graph="precomputed", a rule preset
    else:
        base = resolve_spec(estimator.spec, profile=profile)
    problem = _mapping_problem(estimator.overrides)
    if problem:
        raise SpecError(Problem("overrides", problem))
    given: dict[str, Any] = {}
    plain: dict[str, Any] = {}
    for key, value in _section_overrides(estimator).items():
        if key == "anchors" and is_array_like(value):
            given[key] = GivenAnchors(points=value)
        elif key == "graph" and is_array_like(value):
            given[key] = GivenGraph(matrix=value)
        elif key == "graph" and on_graph:
            given[key] = PrecomputedGraph()  # its matrix: the one fit is given
        elif key in SECTIONS and not isinstance(value, (dict, str, type(None))):
            given[key] = value  # a part instance; the composer checks it
        else:
            plain[key] = value
    spec = merge_overrides(base, plain)
    spec.update(given)
    if isinstance(given.get("graph"), GivenGraph):
        spec.pop("anchors", None)
    if on_graph:  # the graph replaces what built it from X (asked for explicitly: refused)
        explicit = _section_overrides(estimator)
        for key in ("anchors", "scale"):
            if key in explicit:
                spec[key] = explicit[key]
            else:
                spec.pop(key, None)
    return spec


def refuse_feature_parts(estimator) -> None:
    """For ``graph="precomputed"``: refuse, before any work, the parts of ``estimator``'s
    spec that read features (:func:`graphclust._ongraph.check_runs_on_graph`); for a rule
    preset, the sections the estimator gives (the rule's spec for graphs needs none)."""
    from graphclust._ongraph import check_runs_on_graph

    check_runs_on_graph(_section_overrides(estimator) if needs_data(estimator.spec)
                        else estimator_spec(estimator))


def _seed(random_state: Any, spec_seed: int | None) -> int:
    """The run's seed: ``random_state`` (else the spec's ``seed``) as given, or one drawn
    from a ``RandomState`` (or from fresh entropy for ``None``).

    An integer seed is used unchanged, so it must lie in NumPy's seed range
    ``[0, 2**32)`` (refused otherwise by the parameter check and the spec parser). Masking
    it to 31 bits, as before, made ``2**31 + s`` run exactly as ``s``; hashing every seed
    into 31 bits (e.g. through ``SeedSequence``) would be injective only by luck and
    would change the labels of every seeded run users have recorded. Used as given, the
    seeds below ``2**31`` keep their labels and the others get runs of their own:
    :meth:`Context.seed_for` keys the parts' streams on all 32 bits.
    """
    if random_state is None and spec_seed is not None:
        return int(spec_seed)
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    from sklearn.utils import check_random_state

    return int(check_random_state(random_state).randint(0, 2**31 - 1))


def _reporter(verbose) -> Progress:
    if not verbose:
        return Progress(None)
    from graphclust._plugins import get_plugin_manager

    return Progress(get_plugin_manager().report_progress)


@attrs.frozen(eq=False)
class FitPlan:
    """Everything a fit runs with, decided before any work.

    Attributes
    ----------
    pipeline : Pipeline or Ensemble
        The composed parts.
    X : ndarray, sparse matrix or dask array
        The validated data, in the executor's container.
    y : ndarray or None
        The labels the metrics score against (in memory only).
    n_clusters : int or None
        ``None``: estimated by a part within ``k_range``.
    seed : int
    ctx : Context
        Seed, progress reporter and ``n_jobs`` of the run.
    executor : Executor
        Runs the plan (:mod:`graphclust._executors`).
    profile : DataProfile or None
        The data's profile, for a rule preset.
    summary : str or None
        A rule preset's reason for its choice.
    who : str
        The spec as named in messages (``"preset 'uspec'"``).
    k_range : (int, int)
        ``(k_min, k_max)`` searched when ``n_clusters`` is ``None``.
    auto_k : tuple or None
        ``(k_max,)`` when ``n_clusters`` is to be ``auto``'s estimate (an eigengap
        estimator, :mod:`graphclust._kshared`; ``k_max`` ``None``: ``auto``'s own),
        found by :func:`~graphclust._kshared.settle_k` as the fit's first stage.
    second_opinion : dict or None
        The spec fitted when this one's estimate of ``k`` finds no cluster structure (the
        spec's ``second_opinion``, :mod:`graphclust._ksecond`); ``None`` when ``k`` is
        given, the input is chunked or a graph, or the estimator sets parts itself.
    selection : KSelection or None
        How ``n_clusters`` was chosen when that stage chose it; ``None`` otherwise.
    timings : dict
        Seconds of the stages run before the executor's (``{"k": ...}``).
    """

    pipeline: Any
    X: Any
    y: np.ndarray | None
    n_clusters: int | None
    seed: int
    ctx: Context
    executor: Any
    profile: Any = None
    summary: str | None = None
    who: str = "the pipeline"
    k_range: tuple[int, int] = (1, DEFAULT_K_MAX)
    auto_k: tuple | None = None
    second_opinion: dict | None = None
    selection: Any = None
    timings: dict = attrs.field(factory=dict)


def _labels(y, n: int, rows: str = "X has {n} samples") -> np.ndarray | None:
    if y is None:
        return None
    y_arr = np.asarray(y)
    if y_arr.ndim == 0 or y_arr.shape[0] != n:
        raise InputError(f"y must hold one label per sample: {rows.format(n=n)}, "
                         f"y has shape {y_arr.shape}")
    return y_arr


def make_plan(estimator, X, y=None) -> FitPlan:
    """The :class:`FitPlan` of ``estimator.fit(X, y)`` (see the module notes)."""
    from graphclust._executors import open_data

    params = FitParameters.of(estimator)
    params.check()
    rule = needs_data(estimator.spec)
    if is_precomputed(estimator):  # parts that need X are refused before the graph is read
        refuse_feature_parts(estimator)
    spec_k_max = None  # the spec's own k_max (a rule preset's: its estimator's range)
    if not rule:  # a spec error is reported before the data are looked at
        spec = estimator_spec(estimator)
        pipe = compose(spec)
        spec_k_max = spec.get("k_max") if isinstance(spec, dict) else None
    k_max = params.searched_k_max()
    executor, X, profile = open_data(estimator, X,
                                     (params.asked_k(), k_max) if rule else None)
    if is_precomputed(estimator) and params.k_max is None:
        k_max = graph_k_max(X)  # a graph resolves more communities than the default's 20
        profile = None if profile is None else attrs.evolve(profile, k_max=k_max)
    spec_summary = None
    if rule:
        spec = estimator_spec(estimator, profile)
        spec_summary = spec.get("summary")
        pipe = compose(spec)
        spec_k_max = spec.get("k_max")
    if params.k_max is None and spec_k_max is not None:
        k_max = int(spec_k_max)  # checked by the spec parser (compose)
    k = params.n_clusters if params.n_clusters is not None else pipe.n_clusters
    who = f"preset {estimator.spec!r}" if isinstance(estimator.spec, str) else repr(pipe)
    n_clusters = None if k is None else _checked_k(k)
    auto_k = None  # the k_max asked of auto's estimate, when the fit takes auto's k
    if n_clusters is None:
        check_estimable(pipe, who)
        if not rule and not is_precomputed(estimator) and takes_auto_k(pipe, spec):
            auto_k = (params.k_max if params.k_max is not None else spec_k_max, )
    n = int(X.shape[0])
    rows = "the graph has {n} nodes" if is_precomputed(estimator) else "X has {n} samples"
    if n_clusters is not None and n < n_clusters:
        raise InputError(f"{rows.format(n=n).removesuffix('s') if n == 1 else rows.format(n=n)}"
                         f", fewer than n_clusters={n_clusters}")
    y = None if executor.chunked else _labels(y, n, rows)
    seed = _seed(params.random_state, pipe.seed)
    ctx = Context(seed=seed, progress=_reporter(params.verbose), n_jobs=params.n_jobs)
    return FitPlan(pipe, X, y, n_clusters, seed, ctx, executor, profile, spec_summary, who,
                   (1, k_max), auto_k=auto_k,
                   second_opinion=_second_opinion(estimator, spec, n_clusters, executor))


def _second_opinion(estimator, spec: Any, n_clusters: int | None, executor) -> dict | None:
    """The spec's ``second_opinion`` (composed now, so a wrong one fails before any work)
    when the fit estimates ``k`` in memory on features with the spec's own parts; else
    ``None``."""
    second = spec.get("second_opinion") if isinstance(spec, dict) else None
    if second is None:
        return None
    try:
        compose(second)
    except SpecError as error:  # located under the key that holds it
        raise spec_error([p.at(f"second_opinion.{p.loc}" if p.loc else "second_opinion")
                          for p in error.problems]) from None
    if (n_clusters is not None or executor.chunked or is_precomputed(estimator)
            or _section_overrides(estimator)):
        return None
    return second
