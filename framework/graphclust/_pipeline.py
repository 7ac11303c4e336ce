"""A composed pipeline: scale → anchors? → graph → adapter? → solver → rounding (→ metrics).

The ``scale`` stage (see :mod:`graphclust.numerics.scaling`) is fitted on the training
``X``, kept in the :class:`FitResult` and reapplied to new points in :meth:`Pipeline.extend`.
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from typing import Any

import attrs
import numpy as np

from graphclust._contracts import GraphKind
from graphclust._errors import DisconnectedGraphWarning, InputError
from graphclust._graphs import AffinityGraph, Anchors, AnchorGraph
from graphclust._kselect import KDispatch, estimating_stage
from graphclust._parts import Adapter, Context, Metric, Part
from graphclust._solution import Solution
from graphclust.numerics import float_dtype
from graphclust.numerics.scaling import SCALE_KINDS, Scaling, fit_scaling

__all__ = ["Pipeline", "FitResult", "STAGES", "float_dtype"]

#: The part stages of a pipeline in data-flow order (after the ``scale`` stage, which is
#: a spec key, not a part); also the spec's part sections and the keys of
#: :meth:`Pipeline.named_parts` and of the stage timings. Written here only.
STAGES = ("anchors", "graph", "adapter", "solver", "rounding")


def given_in_scaled_units(anchors, scaling):
    """User-given anchors are in the units of the raw ``X``: bring them into the units of
    the scaled data (any other anchors were selected on the scaled data already)."""
    if anchors.info.get("given") and not scaling.is_identity:
        return attrs.evolve(anchors, points=scaling.transform(anchors.points))
    return anchors


@attrs.define
class FitResult:
    """What one pipeline run produced.

    ``labels`` of a chunked run are a dask array held by the cluster that ran it:
    reading them once that cluster is gone raises :class:`~graphclust.ClusterLostError`
    (what to do, not Dask's ``Missing dependency``)."""

    _labels: np.ndarray = attrs.field(alias="labels")
    graph: AffinityGraph | AnchorGraph
    solution: Solution
    anchors: Anchors | None = None
    timings: dict[str, float] = attrs.field(factory=dict)
    scores: dict[str, float] = attrs.field(factory=dict)
    #: connected components of a graph the pipeline built; None for a given graph
    n_components: int | None = None
    #: the fitted ``scale`` stage, reapplied to new points
    scaling: Scaling = attrs.field(factory=lambda: Scaling("none"))
    #: how the number of clusters was chosen (:class:`~graphclust.KSelection`)
    k_selection: Any = None
    #: with ``starts > 1``: each start's modularity on its own graph, and the kept start
    start_modularity: tuple[float, ...] = ()
    start: int = 0

    @property
    def n_clusters(self) -> int | None:
        """The number of clusters the run used (``None`` when not recorded)."""
        return None if self.k_selection is None else int(self.k_selection.k)

    @property
    def labels(self) -> np.ndarray:
        from graphclust._executors import held  # the executors import this module

        return held(self._labels, "members_[j].labels")

    @labels.setter
    def labels(self, value) -> None:
        self._labels = value


def solve_adapted(solver, adapter, adapted, graph, stage, timings: dict[str, float],
                  k_range: tuple[int, int] | None = None):
    """The solver on an adapter's problem (through the adapter's ``solve``), then the
    adapter's ``lift`` back to ``graph`` (in memory and in the chunked run, where
    ``graph`` is the zero-row template).

    Each step is its own progress stage, timed into ``timings`` under the same name by
    the seconds its close reports: ``solver`` (the adapter's ``solve``), ``k`` (the
    adapter's ``estimate_k`` on the solver's solution, when ``k_range`` is given) and
    ``lift``. ``stage(name, part)`` gives a stage's context. Returns the lifted solution
    and the :class:`KSelection` of the estimate (``None`` without ``k_range``)."""
    if solver.needs_features and adapted.X is None:
        raise InputError(f"solver {solver.name!r} needs features, but adapter "
                         f"{adapter.name!r} had none to hand it for this graph")
    sctx = stage("solver", solver)
    sctx.progress.open()
    sol = adapter.solve(solver, adapted, sctx, k_range)
    timings["solver"] = sctx.progress.close(iterations_note(sol))
    selection = None
    if k_range is not None:
        kctx = stage("k", adapter)
        kctx.progress.open()
        selection = adapter.estimate_k(sol, adapted, *k_range, kctx)
        adapted = attrs.evolve(adapted, n_clusters=min(int(selection.k), adapted.graph.n))
        timings["k"] = kctx.progress.close(selection.method)
    lctx = stage("lift", adapter)
    lctx.progress.open()
    lifted = adapter.lift(sol, graph, adapted, lctx)
    timings["lift"] = lctx.progress.close(f"{graph.n} rows")
    return lifted, selection


def iterations_note(solution) -> str:
    """The solver stage's closing note: its iteration count, when it has one."""
    return f"{solution.n_iter} iterations" if solution.n_iter else ""


class Pipeline:
    """Parts in data-flow order, as built by :func:`graphclust.compose`.

    ``graph`` may be ``None`` in a nested pipeline (it then reuses the graph it is given).
    ``adapter`` is an :class:`~graphclust.Adapter` part or ``None``. ``scale`` is the
    spec's preprocessing kind (one of :data:`~graphclust.numerics.SCALE_KINDS`).
    """

    def __init__(self, *, anchors: Part | None = None, graph: Part | None = None,
                 solver: Part | None = None, rounding: Part | None = None,
                 metrics: list[Metric] | None = None, adapter: Adapter | None = None,
                 n_clusters: int | None = None, seed: int | None = None,
                 scale: str = "none", starts: int = 1):
        if scale not in SCALE_KINDS:
            raise ValueError(f"scale must be one of {', '.join(SCALE_KINDS)}; got {scale!r}")
        if isinstance(starts, bool) or not isinstance(starts, int) or starts < 1:
            raise ValueError(f"starts must be an integer >= 1; got {starts!r}")
        self.scale = scale
        self.starts = starts
        self.anchors = anchors
        self.graph = graph
        self.solver = solver
        self.rounding = rounding
        self.metrics = list(metrics or [])
        if isinstance(adapter, str):
            raise TypeError(f"Pipeline(adapter={adapter!r}): adapter must be an Adapter part, "
                            "not a name; build the pipeline with graphclust.compose(spec) or "
                            f"pass graphclust.resolve_part({{'name': {adapter!r}}}, 'adapter')")
        self.adapter = adapter
        self.n_clusters = n_clusters
        self.seed = seed

    def __repr__(self) -> str:
        parts = [f"{k}={getattr(self, k).name!r}" for k in STAGES if getattr(self, k)]
        if self.scale != "none":
            parts.insert(0, f"scale={self.scale!r}")
        if self.starts != 1:
            parts.append(f"starts={self.starts}")
        return f"Pipeline({', '.join(parts)})"

    def dense_needs(self) -> list[str]:
        """What in this pipeline needs dense rows of ``X``, as named in messages: the
        parts that receive ``X`` (anchors, graph, adapter, solver) and do not declare
        ``accepts_sparse``, and the ``scale`` stage ``center``. Empty when a sparse ``X``
        can stay sparse end to end."""
        needs = [f"scale {self.scale!r}"] if self.scale == "center" else []
        for section in ("anchors", "graph", "adapter", "solver"):
            part = getattr(self, section)
            if part is not None and not part.accepts_sparse:
                needs.append(f"{section} {part.name!r}")
        return needs

    def named_parts(self) -> dict[str, Part]:
        """The parts in data-flow order, keyed by section (``adapter`` when there is one)."""
        return {k: getattr(self, k) for k in STAGES if getattr(self, k) is not None}

    def estimating_stage(self) -> tuple[str, Part] | None:
        """``(stage, part)`` of the part that estimates ``k`` when no ``n_clusters`` is
        given (the latest stage that can, :doc:`/choosing-k`), or ``None`` when no part
        can (a run without ``n_clusters`` is then refused before any work)."""
        return estimating_stage(self)

    # -- stages --------------------------------------------------------------------
    def _solve(self, graph, X, n_clusters, stage, timings, k_range=None):
        """Run the solver, through the adapter when there is one; returns the solution
        and the adapter's :class:`KSelection` when ``k_range`` is given (it estimates
        ``k``), else None. Stages ``adapter`` (its ``adapt``), ``solver`` and, with an
        adapter, ``k`` and ``lift`` are opened, closed and timed into ``timings``."""
        adapter = self.adapter
        if adapter is None:
            sctx = stage("solver", self.solver)
            sctx.progress.open()
            solution = self.solver.solve(graph, X, n_clusters, sctx)
            timings["solver"] = sctx.progress.close(iterations_note(solution))
            return solution, None
        if graph.kind not in adapter.accepts:
            kinds = " or ".join(sorted(adapter.accepts))
            raise InputError(f"adapter {adapter.name!r} accepts {kinds} graphs, but it was "
                             f"given an {graph.kind} graph")
        actx = stage("adapter", adapter)
        actx.progress.open()
        adapted = adapter.adapt(graph, X, n_clusters, actx)
        timings["adapter"] = actx.progress.close(
            f"{type(adapted.graph).__name__} n={adapted.graph.n} nnz={adapted.graph.nnz}")
        return solve_adapted(self.solver, adapter, adapted, graph, stage, timings, k_range)

    def fit_labels(self, graph, X, n_clusters: int, ctx: Context) -> np.ndarray:
        """Labels from this (nested) pipeline's solver and rounding on a given graph."""
        return self.run(X, n_clusters=n_clusters, ctx=ctx, graph=graph).labels

    def run(self, X: np.ndarray | None, y: np.ndarray | None = None, *,
            n_clusters: int | None, ctx: Context | None = None, graph=None, emit=None,
            k_range: tuple[int, int] | None = None) -> FitResult:
        """Run every stage on validated data, ``starts`` times; returns a :class:`FitResult`.

        With ``starts = 1`` (the default) this is one run (:meth:`run_once`). With
        ``starts = R`` the pipeline runs ``R`` times, start 0 with ``ctx`` and start
        ``r`` with ``ctx.child(f"start{r}")`` (its own seed streams: another draw of
        anchors, another solver start), and the result kept is the one whose labels have
        the highest Newman–Girvan modularity on that start's own graph
        (:func:`graphclust.modularity`; the first on ties). Modularity reads no labels of
        the data, only the graph the start built, so it compares partitions of the same
        data by how much of their graph's weight they keep inside clusters beyond chance:
        a start whose anchors or layout merged two classes and cut another keeps less.
        The kept result records every start's score (``start_modularity``) and its index
        (``start``); its timings are the sums over the starts. Parameters as
        :meth:`run_once`.
        """
        ctx = ctx or Context(seed=self.seed or 0)
        if self.starts == 1:
            return self.run_once(X, y, n_clusters=n_clusters, ctx=ctx, graph=graph,
                                 k_range=k_range)
        from graphclust._identical import row_groups_once

        best = BestStart()
        with row_groups_once():  # the starts' identical rows found once
            for r, rctx, copy_ in start_copies(self, ctx):
                with best.warnings_once():
                    res = copy_.run_once(X, y, n_clusters=n_clusters, ctx=rctx, graph=graph,
                                         k_range=k_range)
                best.offer(r, res, float(res.graph.modularity(res.labels)), copy_)
        return best.kept(self)

    def run_once(self, X: np.ndarray | None, y: np.ndarray | None = None, *,
                 n_clusters: int | None, ctx: Context | None = None, graph=None,
                 k_range: tuple[int, int] | None = None) -> FitResult:
        """Run every stage once on validated data; returns a :class:`FitResult`.

        Parameters
        ----------
        X : ndarray (n, d) or None
            Features (``None`` only with a given ``graph`` and a solver that needs none).
        y : ndarray, optional
            True labels, for the metrics that need them.
        n_clusters : int or None
            ``None``: estimated by the pipeline's latest part that declares
            ``estimates_k`` (:mod:`graphclust._kselect`), within ``k_range``.
        ctx : Context, optional
            Seed and progress; default seed 0, quiet.
        graph : AffinityGraph or AnchorGraph, optional
            Skip anchors and graph building and use this graph.
        k_range : (int, int), optional
            ``(k_min, k_max)`` searched when ``n_clusters`` is ``None`` (default
            ``(1, DEFAULT_K_MAX)``), clipped to the graph's size.
        """
        from graphclust._identical import identical_rows_share_labels

        ctx = ctx or Context(seed=self.seed or 0)
        progress = ctx.progress
        timings: dict[str, float] = {}
        anchors = None

        def stage(name: str, part: Part):
            return Context(ctx.seed, progress.for_stage(name, part.name), ctx.n_jobs)

        scaling, X = scale_stage(self.scale, X, progress, timings)

        if graph is None:
            if self.graph is None:
                raise InputError("this pipeline has no graph builder; pass a graph")
            if self.anchors is not None:
                sctx = stage("anchors", self.anchors)
                sctx.progress.open()
                anchors = given_in_scaled_units(self.anchors.select(X, sctx), scaling)
                timings["anchors"] = sctx.progress.close(f"{anchors.n_anchors} anchors")
            sctx = stage("graph", self.graph)
            sctx.progress.open()
            graph = self.graph.build(X, anchors, sctx)
            timings["graph"] = sctx.progress.close(f"{type(graph).__name__} nnz={graph.nnz}")
            built_here = True
        else:
            built_here = False  # a given graph was checked by whoever built it
            if isinstance(graph, AnchorGraph):
                anchors = graph.anchors
        kd = KDispatch.begin(self, n_clusters, k_range, graph.n, repr(self))
        kd.at("graph", lambda part, lo, hi, c: part.estimate_k(graph, lo, hi, c), stage, timings)
        kd.at("solver", lambda part, lo, hi, c: part.estimate_k(graph, X, lo, hi, c), stage,
              timings)
        n_clusters = kd.k
        # an adapter building its own graph from the anchors (``own_graph``) makes the
        # built graph a placement of the rows: its components are not the solver's problem
        own = self.adapter is not None and getattr(self.adapter, "own_graph", False)
        n_comp = graph.n_components() if built_here and not own else None
        if n_comp is not None and n_clusters is not None and n_comp > n_clusters > 1:  # else it cannot change the result
            from graphclust._degenerate import component_sizes, disconnected_message

            given = bool(getattr(self.graph, "given", False))  # the user's own graph
            warnings.warn(disconnected_message(component_sizes(graph), n_clusters, given),
                          DisconnectedGraphWarning, stacklevel=3)
        # a solver that does not use k (the rounding estimates it) is handed k_max
        solution, adapter_sel = self._solve(graph, X, kd.solver_k, stage, timings,
                                            kd.range_for("adapter"))
        kd.take("adapter", adapter_sel)  # estimated on the sample, in the adapter's stage
        kd.at("rounding", lambda part, lo, hi, c: part.estimate_k(solution, lo, hi, c), stage,
              timings)
        n_clusters, selection = kd.k, kd.selection
        sctx = stage("rounding", self.rounding)
        sctx.progress.open()
        labels = np.asarray(self.rounding.round(solution, n_clusters, sctx), dtype=np.int64)
        labels = identical_rows_share_labels(X, labels)  # no part can tell them apart
        timings["rounding"] = sctx.progress.close(f"{len(np.unique(labels))} clusters")
        scores = {}
        for metric in self.metrics:
            if metric.needs_truth and y is None:
                continue
            scores[metric.name] = float(metric.score(labels, y, graph))
        timings["total"] = sum(timings.values())
        return FitResult(labels, graph, solution, anchors, timings, scores, n_comp, scaling,
                         selection)

    # -- new points ---------------------------------------------------------------
    def can_predict(self) -> bool:
        """Whether new points can be labelled: an anchor builder that places new points,
        solutions that extend to them (the solver's ``out_of_sample``, or the adapter's
        when there is one, since its lifted solutions are what is extended), and a
        rounding that labels them."""
        from graphclust._parts import GraphBuilder, Rounding

        g, s, r, a = self.graph, self.solver, self.rounding, self.adapter
        extends = a.out_of_sample if a is not None else (s is not None and s.out_of_sample)
        return (g is not None and g.produces == GraphKind.ANCHOR
                and type(g).transform is not GraphBuilder.transform
                and s is not None and extends
                and r is not None and type(r).assign is not Rounding.assign)

    def extend(self, X_new: np.ndarray, result: FitResult) -> Solution:
        """Solution rows for new points (anchor pipelines), given in the units of the
        training ``X``: the fitted ``scale`` stage is applied to them first."""
        if not self.can_predict():
            raise TypeError(f"{self!r} cannot place new points")
        sol = result.solution
        if not sol.extendable:
            who = (f"adapter {self.adapter.name!r}" if self.adapter is not None
                   else f"solver {self.solver.name!r}")
            raise TypeError(f"{who} provided neither a feature projection nor per-anchor "
                            "values, so new points cannot be placed")
        X_new = result.scaling.transform(X_new)
        needs_Z = sol.anchor_embedding is not None or sol.anchor_soft is not None
        Z_new = self.graph.transform(X_new, result.graph) if needs_Z else None
        return sol.extend(Z_new, X_new)

    def predict(self, X_new: np.ndarray, result: FitResult) -> np.ndarray:
        return np.asarray(self.rounding.assign(self.extend(X_new, result)), dtype=np.int64)



def start_copies(pipe, ctx: Context):
    """``(r, ctx_r, pipeline)`` for each of ``pipe.starts`` starts: start 0 at ``ctx``,
    start ``r`` at ``ctx.child(f"start{r}")``, each on its own one-start copy of the parts
    (parts keep what they fit, e.g. a rounding's centres, for ``predict``)."""
    for r in range(pipe.starts):
        copy_ = copy.copy(pipe)
        for sec in STAGES:
            setattr(copy_, sec, copy.deepcopy(getattr(pipe, sec)))
        copy_.starts = 1
        yield r, ctx if r == 0 else ctx.child(f"start{r}"), copy_


@attrs.define
class BestStart:
    """The most modular start so far (the first on ties); only it is kept in memory."""

    scores: list[float] = attrs.field(factory=list)
    timings: dict[str, float] = attrs.field(factory=dict)
    best: tuple[int, FitResult, Any] | None = None
    seen: set = attrs.field(factory=set)

    @contextlib.contextmanager
    def warnings_once(self):
        """Run one start, re-issuing its warnings except those an earlier start gave
        (the same cause in every start is one warning, not ``starts`` of them)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        for w in caught:
            key = (w.category, str(w.message))
            if key not in self.seen:
                self.seen.add(key)
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

    def offer(self, r: int, result: FitResult, score: float, pipe) -> None:
        self.scores.append(score)
        for key, value in result.timings.items():
            self.timings[key] = self.timings.get(key, 0.0) + value
        if self.best is None or score > self.scores[self.best[0]]:
            self.best = (r, result, pipe)

    def kept(self, pipe) -> FitResult:
        """The kept start's result, with every start's score, its index and the timings
        summed over the starts; its fitted parts are moved into ``pipe``."""
        r, result, fitted = self.best
        for sec in STAGES:
            setattr(pipe, sec, getattr(fitted, sec))
        result.timings = dict(self.timings)
        result.start_modularity = tuple(self.scores)
        result.start = r
        return result


def scale_stage(kind: str, X: np.ndarray | None, progress, timings: dict[str, float]
                ) -> tuple[Scaling, np.ndarray | None]:
    """Fit and apply the ``scale`` stage of kind ``kind`` to training data ``X``.

    Returns the fitted :class:`~graphclust.numerics.Scaling` and the scaled ``X``. For
    ``"none"`` (or no ``X``) it does nothing: no timing, no progress. Otherwise it
    reports one progress stage ``"scale"`` and records ``timings["scale"]``.
    """
    if kind == "none" or X is None:
        return Scaling("none"), X
    bar = progress.for_stage("scale", kind)
    bar.open()
    scaling = fit_scaling(X, kind)
    X = scaling.transform(X)
    timings["scale"] = bar.close(f"{X.shape[1]} columns")
    return scaling, X
