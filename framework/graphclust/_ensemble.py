"""Ensembles: members (whole pipelines) → point × base-cluster memberships → consensus.

An ensemble spec (see :mod:`graphclust._spec`) lists members, each a preset or a full
pipeline spec with parts from any bundles, and a registered
:class:`~graphclust.Consensus` part. A run

0. fits the spec's ``scale`` stage on ``X`` once and hands every member the scaled
   data (members may not set their own ``scale``); ``predict`` reapplies it;
1. gives member ``j`` (after ``count`` expansion) the seed
   ``ctx.seed_for(f"ensemble.members[{j}]")`` and its number of clusters ``k_j``:
   the member's integer, or a draw from its ``[lo, hi]`` range with
   ``ctx.rng(f"ensemble.members[{j}].n_clusters")``, or the member spec's own
   ``n_clusters``, else the ensemble's;
2. runs the members, in parallel with joblib when ``ctx.n_jobs`` asks for it (the
   labels do not depend on ``n_jobs``: every member has its own seed, and worker
   processes keep the caller's BLAS / OpenMP thread counts);
3. stacks their labels into the sparse ``n x Σk_j`` 0/1
   :class:`~graphclust.Memberships` and hands it to the consensus part.

Range clipping for small data: a range ``[lo, hi]`` is clipped to
``hi' = min(hi, max(⌊√n⌋, k), n)`` and ``lo' = min(lo, hi')`` (``k`` the ensemble's
number of clusters), so that base clusters keep several points on average. An integer
``n_clusters`` is used as given.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from typing import Any

import attrs
import numpy as np

from graphclust._errors import InputError
from graphclust._kselect import DEFAULT_K_MAX, KDispatch, estimating_stage
from graphclust._membership import Memberships
from graphclust._parts import Consensus, Context, Metric
from graphclust._pipeline import FitResult, Pipeline, scale_stage
from graphclust._progress import Progress
from graphclust.numerics.scaling import SCALE_KINDS, Scaling

__all__ = ["Ensemble", "EnsembleMember", "EnsembleResult", "clip_range"]


@attrs.define
class EnsembleMember:
    """One member of an ensemble: a composed pipeline and how many clusters it makes.

    Attributes
    ----------
    pipeline : Pipeline
    n_clusters : int, (lo, hi) or None
        Fixed ``k``, an inclusive range drawn from per run, or ``None`` (the pipeline's
        ``n_clusters``, else the ensemble's).
    label : str
        Where it came from, for messages and progress (``"members[1] uspec#3"``).
    name : str
        The preset it came from, else its solver's name.
    """

    pipeline: Pipeline
    n_clusters: int | tuple[int, int] | None = None
    label: str = ""
    name: str = ""


@attrs.define(eq=False)
class EnsembleResult:
    """What one ensemble run produced.

    Attributes
    ----------
    labels : ndarray of shape (n,)
        The consensus labels.
    members : list of FitResult
        Each member's result (its labels as the pipeline's rounding gave them).
    memberships : Memberships
        The point × base-cluster matrix the consensus combined.
    member_classes : list of ndarray
        Per member, the distinct labels it used; column ``c`` of member ``j``'s block
        is its label ``member_classes[j][c]``.
    member_n_clusters, member_seeds : list of int
        The ``k_j`` asked of each member and the seed it ran with.
    timings, scores : dict of str to float
        ``"members"`` (sum of member run times), ``"consensus"``, ``"total"`` (and
        ``"scale"`` when the spec scales); the ensemble's metrics on the consensus labels.
    scaling : Scaling
        The fitted ``scale`` stage, reapplied to new points.
    member_names : list of str
        Each member's label (``"members[1] uspec#3"``), in the order of ``members``.
    member_scores : list of dict of str to float
        The ensemble's metrics on each member's own labels (empty dicts when ``y`` was
        not given), so that members and consensus are compared on the same run.
    """

    labels: np.ndarray
    members: list[FitResult]
    memberships: Memberships
    member_classes: list[np.ndarray]
    member_n_clusters: list[int]
    member_seeds: list[int]
    timings: dict[str, float] = attrs.field(factory=dict)
    scores: dict[str, float] = attrs.field(factory=dict)
    scaling: Scaling = attrs.field(factory=lambda: Scaling("none"))
    member_names: list[str] = attrs.field(factory=list)
    member_scores: list[dict[str, float]] = attrs.field(factory=list)
    #: how the consensus ``k`` was chosen (:class:`~graphclust.KSelection`)
    k_selection: Any = None

    @property
    def n_clusters(self) -> int | None:
        """The number of consensus clusters (``None`` when not recorded)."""
        return None if self.k_selection is None else int(self.k_selection.k)

    @property
    def member_labels(self) -> list[np.ndarray]:
        """Each member's labels, as its pipeline's rounding gave them (``k_j`` clusters)."""
        return [np.asarray(r.labels) for r in self.members]


def clip_range(lo: int, hi: int, n: int, n_clusters: int) -> tuple[int, int]:
    """The member ``k`` range used on ``n`` points (see the module notes)."""
    top = min(hi, max(math.isqrt(n), n_clusters), n)
    top = max(top, 1)
    return min(lo, top), top


def _summary(result: FitResult) -> str:
    scores = " ".join(f"{k} {v:.4f}" for k, v in result.scores.items())
    return f"{np.unique(result.labels).size} clusters" + (f", {scores}" if scores else "")


def _thread_counts() -> dict[str, int]:
    """This process's BLAS / OpenMP thread counts, by threadpoolctl API."""
    from threadpoolctl import threadpool_info

    counts: dict[str, int] = {}
    for pool in threadpool_info():
        api = pool["user_api"]
        counts[api] = max(counts.get(api, 1), int(pool["num_threads"]))
    return counts


def _run_member(pipeline: Pipeline, X: np.ndarray, y: np.ndarray | None, k: int | None,
                seed: int, threads: dict[str, int] | None = None,
                k_range: tuple[int, int] | None = None
                ) -> tuple[FitResult, list[tuple[type[Warning], str]], Pipeline]:
    """Run one member quietly; return its result, the warnings it raised and the fitted
    pipeline (in a worker process the fitted parts are a copy the parent must keep).

    ``threads`` (a worker process) sets the BLAS / OpenMP thread counts of the parent:
    joblib would lower them, and floating-point sums that depend on the thread count
    would make the labels depend on ``n_jobs``.
    """
    from threadpoolctl import threadpool_limits

    with warnings.catch_warnings(record=True) as caught, threadpool_limits(limits=threads):
        warnings.simplefilter("always")
        result = pipeline.run(X, y, n_clusters=k, ctx=Context(seed, Progress(), 1),
                              k_range=k_range)
    return result, [(w.category, str(w.message)) for w in caught], pipeline


class Ensemble:
    """Members, a consensus part and metrics, as built by :func:`graphclust.compose` from
    an ensemble spec.

    Parameters
    ----------
    members : list of EnsembleMember
        After ``count`` expansion.
    consensus : Consensus
    metrics : list of Metric, optional
        Scored on the consensus labels.
    n_clusters, seed : int, optional
        The spec's ``n_clusters`` and ``seed`` (the estimator's win).
    scale : str, default="none"
        The spec's preprocessing kind, applied once to ``X`` for all members.
    """

    def __init__(self, *, members: list[EnsembleMember], consensus: Consensus,
                 metrics: list[Metric] | None = None, n_clusters: int | None = None,
                 seed: int | None = None, scale: str = "none"):
        if scale not in SCALE_KINDS:
            raise ValueError(f"scale must be one of {', '.join(SCALE_KINDS)}; got {scale!r}")
        self.scale = scale
        self.members = list(members)
        self.consensus = consensus
        self.metrics = list(metrics or [])
        self.n_clusters = n_clusters
        self.seed = seed

    def __repr__(self) -> str:
        names = Counter(m.name for m in self.members)
        listed = ", ".join(f"{n} x{c}" if c > 1 else n for n, c in names.items())
        return f"Ensemble([{listed}], consensus={self.consensus.name!r})"

    def dense_needs(self) -> list[str]:
        """What needs dense rows of ``X`` (:meth:`Pipeline.dense_needs` of every member,
        each named once, and the ensemble's ``scale`` stage ``center``)."""
        needs = [f"scale {self.scale!r}"] if self.scale == "center" else []
        for member in self.members:
            for need in member.pipeline.dense_needs():
                if need not in needs:
                    needs.append(need)
        return needs

    def named_parts(self) -> dict[str, Any]:
        """Empty: an ensemble's parts are set through its spec (``ensemble`` override),
        not as ``section__parameter`` estimator parameters."""
        return {}

    # -- planning -----------------------------------------------------------------
    def plan(self, n: int, n_clusters: int | None, ctx: Context,
             k_max: int | None = None) -> tuple[list[int | None], list[int]]:
        """Each member's ``k_j`` and seed for a run on ``n`` points. With no
        ``n_clusters`` (estimated), ranges are clipped with ``k_max`` in its place and a
        member with no ``k`` of its own estimates it (``None``)."""
        clip_k = n_clusters if n_clusters is not None else (k_max or DEFAULT_K_MAX)
        ks, seeds = [], []
        for j, member in enumerate(self.members):
            key = f"ensemble.members[{j}]"
            seeds.append(ctx.seed_for(key))
            spec_k = member.n_clusters
            if spec_k is None:
                spec_k = member.pipeline.n_clusters or n_clusters
            if isinstance(spec_k, tuple):
                lo, hi = clip_range(*spec_k, n, clip_k)
                k = int(ctx.rng(f"{key}.n_clusters").integers(lo, hi + 1))
            elif spec_k is None:
                ks.append(None)
                continue
            else:
                k = int(spec_k)
            if k > n:
                raise InputError(f"ensemble member {member.label} asks for {k} clusters of "
                                 f"{n} samples")
            ks.append(k)
        return ks, seeds

    # -- running ------------------------------------------------------------------
    def run(self, X: np.ndarray, y: np.ndarray | None = None, *, n_clusters: int | None,
            ctx: Context | None = None,
            k_range: tuple[int, int] | None = None) -> EnsembleResult:
        """Run every member, then the consensus; returns an :class:`EnsembleResult`.

        Parameters
        ----------
        X : ndarray (n, d)
            Validated features.
        y : ndarray, optional
            True labels, for the metrics (the ensemble's and each member's).
        n_clusters : int or None
            Number of consensus clusters; ``None``: estimated by the consensus part's
            ``estimate_k`` within ``k_range`` (members without a ``k`` of their own
            estimate theirs).
        ctx : Context, optional
            Seed, progress (one stage over the members, then one for the consensus) and
            ``n_jobs`` (members in parallel when it is not ``None`` or 1).
        """
        ctx = ctx or Context(seed=self.seed or 0)
        pre: dict[str, float] = {}
        scaling, X = scale_stage(self.scale, X, ctx.progress, pre)
        n = X.shape[0]
        kd = KDispatch.begin(self, n_clusters, k_range, n, repr(self))
        k_range = k_range or (1, DEFAULT_K_MAX)
        ks, seeds = self.plan(n, n_clusters, ctx, k_range[1])
        bar = ctx.progress.for_stage("members", f"{len(self.members)} members")
        bar.open(len(self.members))
        jobs = 1 if ctx.n_jobs is None else int(ctx.n_jobs)
        if jobs == 1 or len(self.members) == 1:
            outputs = []
            for j, member in enumerate(self.members):
                outputs.append(_run_member(member.pipeline, X, y, ks[j], seeds[j],
                                           k_range=k_range))
                bar.step(j + 1, len(self.members),
                         f"{member.label}, k={ks[j]}: {_summary(outputs[-1][0])}")
        else:
            from joblib import Parallel, delayed

            outputs = []
            threads = _thread_counts()
            gen = Parallel(n_jobs=jobs, return_as="generator")(
                delayed(_run_member)(m.pipeline, X, y, ks[j], seeds[j], threads, k_range)
                for j, m in enumerate(self.members))
            for j, out in enumerate(gen):
                outputs.append(out)
                bar.step(j + 1, len(self.members),
                         f"{self.members[j].label}, k={ks[j]}: {_summary(out[0])}")
        t_members = bar.close(f"{len(self.members)} members")
        for member, (_, _, fitted) in zip(self.members, outputs, strict=True):
            member.pipeline = fitted  # the fitted parts (rounding centres...) for predict
        self._reemit([w for _, ws, _ in outputs for w in ws])
        results = [r for r, _, _ in outputs]
        ks = [r.n_clusters if k is None else k for r, k in zip(results, ks, strict=True)]
        classes, coded = [], []
        for r in results:
            cls, inv = np.unique(np.asarray(r.labels), return_inverse=True)
            classes.append(cls)
            coded.append(inv.ravel())
        memberships = Memberships.from_labels(coded, [c.size for c in classes])
        cstage = ctx.progress.for_stage("consensus", self.consensus.name)
        cstage.open(message=f"{memberships.n_base_clusters} base clusters")
        cctx = Context(ctx.seed_for("ensemble.consensus"), cstage, ctx.n_jobs)
        n_clusters = kd.at("consensus",
                           lambda part, lo, hi, _: part.estimate_k(memberships, lo, hi, cctx))
        selection = kd.selection
        labels = np.asarray(self.consensus.combine(memberships, n_clusters, cctx),
                            dtype=np.int64)
        t_consensus = cstage.close(f"{memberships.n_base_clusters} base clusters")
        if labels.shape != (n,):
            raise ValueError(f"consensus {self.consensus.name!r} returned labels of shape "
                             f"{labels.shape}, expected ({n},)")
        from graphclust._identical import identical_rows_share_labels

        labels = identical_rows_share_labels(X, labels)  # no part can tell them apart
        scores = self._score(labels, y)
        member_scores = [self._score(np.asarray(r.labels), y) for r in results]
        # a member's own scores are the ensemble's metrics on its labels, whatever its spec
        results = [attrs.evolve(r, scores=s) for r, s in zip(results, member_scores,
                                                             strict=True)]
        timings = {**pre, "members": t_members, "consensus": t_consensus}
        timings["total"] = sum(timings.values())
        return EnsembleResult(labels, results, memberships, classes, ks, seeds, timings, scores,
                              scaling, [m.label for m in self.members], member_scores,
                              selection)

    def _score(self, labels: np.ndarray, y: np.ndarray | None) -> dict[str, float]:
        """The ensemble's metrics on ``labels`` (those needing ``y`` only with ``y``)."""
        return {metric.name: float(metric.score(labels, y, None)) for metric in self.metrics
                if not (metric.needs_truth and y is None)}

    def _reemit(self, caught: list[tuple[type[Warning], str]]) -> None:
        """One warning per cause, with the number of members that raised it."""
        counts = Counter(caught)
        for (category, message), count in counts.items():
            warnings.warn(f"{message} (in {count} of {len(self.members)} ensemble members)",
                          category, stacklevel=5)

    def estimating_stage(self) -> tuple[str, Consensus] | None:
        """``("consensus", part)`` when the consensus estimates ``k`` for a run without
        ``n_clusters`` (a member without a ``k`` of its own is estimated by its own
        pipeline's :meth:`Pipeline.estimating_stage`), else ``None``."""
        return estimating_stage(self)

    # -- new points ---------------------------------------------------------------
    def can_predict(self) -> bool:
        """Whether every member can label new points and the consensus can assign them."""
        return (type(self.consensus).can_assign()
                and all(m.pipeline.can_predict() for m in self.members))

    def why_not_predict(self) -> str:
        """Why :meth:`can_predict` is false (empty when it is true)."""
        if not type(self.consensus).can_assign():
            return f"consensus {self.consensus.name!r} cannot label new points"
        bad = [m.label for m in self.members if not m.pipeline.can_predict()]
        if bad:
            return f"ensemble members {', '.join(bad)} cannot label new points"
        return ""

    def memberships_of(self, X_new: np.ndarray, result: EnsembleResult) -> Memberships:
        """Membership rows of new points: each member's ``predict``, laid out as in training
        (a label a member never used in training leaves that point's block empty).
        ``X_new`` is in the units of the training ``X``: the fitted ``scale`` stage is
        applied to it first."""
        X_new = result.scaling.transform(X_new)
        coded = []
        for member, res, cls in zip(self.members, result.members, result.member_classes,
                                    strict=True):
            pred = np.asarray(member.pipeline.predict(X_new, res))
            pos = np.searchsorted(cls, pred)
            pos_c = np.minimum(pos, cls.size - 1)
            coded.append(np.where(cls[pos_c] == pred, pos_c, -1))
        return Memberships.from_labels(coded, [c.size for c in result.member_classes])

    def predict(self, X_new: np.ndarray, result: EnsembleResult) -> np.ndarray:
        """Labels of new points: members' ``predict``, then the consensus ``assign``."""
        if not self.can_predict():
            raise TypeError(f"{self!r} cannot label new points: {self.why_not_predict()}")
        return np.asarray(self.consensus.assign(self.memberships_of(X_new, result)),
                          dtype=np.int64)
