"""The scikit-learn compatible estimator :class:`GraphClustering`."""

from __future__ import annotations

from sklearn.base import BaseEstimator, ClusterMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from graphclust._composer import compose
from graphclust._ensemble import Ensemble
from graphclust._errors import Problem, SpecError
from graphclust._executors import executor_for, held
from graphclust._ksecond import fit_with_second_opinion
from graphclust._kshared import settle_k
from graphclust._layers import LayersMixin
from graphclust._parts import Part
from graphclust._pipeline import Pipeline
from graphclust._plan import SECTION_PARAMS, FitPlan, estimator_spec, make_plan
from graphclust._toml import resolved_ensemble_spec, resolved_spec

__all__ = ["GraphClustering"]


class _Held:
    """A fitted attribute whose value a chunked fit leaves on its cluster: read through
    the executors' :func:`~graphclust._executors.held` (``ClusterLostError`` once the
    cluster is gone); ``AttributeError`` before a fit, as scikit-learn expects."""

    def __init__(self, doc: str):
        self.__doc__ = doc

    def __set_name__(self, owner, name: str) -> None:
        self.name, self.key = name, "_" + name.rstrip("_")

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        try:
            value = obj.__dict__[self.key]
        except KeyError:
            raise AttributeError(f"{type(obj).__name__!r} object has no attribute "
                                 f"{self.name!r}") from None
        return held(value, self.name)

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.key] = value


class GraphClustering(LayersMixin, ClusterMixin, BaseEstimator):
    """Graph clustering pipeline from a preset or a declarative spec.

    Parameters
    ----------
    spec : str or dict, default="auto"
        A preset name (``graphclust plugins`` lists them), a path to a ``.toml`` /
        ``.json`` spec, TOML/JSON text, or a spec dict. ``"auto"`` is a *rule preset*:
        its concrete spec is decided at ``fit`` from the data's profile (n, d, k,
        sparsity, column scales; see ``graphclust describe auto``), and the other
        parameters below are merged into what it decided.
    n_clusters : int, optional
        Number of clusters; defaults to the spec's ``n_clusters``. When neither gives
        one it is **estimated** within ``[1, k_max]`` by the pipeline's part that
        declares ``estimates_k`` (the eigengap of the graph's normalised spectrum, the
        density tree of ``density``, the eigengap of an ensemble's memberships;
        :doc:`/choosing-k`): ``n_clusters_`` and ``k_selection_`` say what was found
        and how. Data without cluster structure give one cluster with a
        :class:`~graphclust.NoClusterStructureWarning`; an estimate at ``k_max`` warns
        with :class:`~graphclust.KRangeWarning`. An integer is used as given.
    random_state : int, RandomState or None
        Seed of the run (overrides the spec's ``seed``). The same spec, data and seed
        give identical labels.
    anchors, graph, adapter, solver, rounding : dict, str, part or array, optional
        Override one section of the spec: a dict of parameters merged into the spec's
        part (``graph={"n_neighbors": 15}``; with ``"name"`` it chooses another part), a
        registered name, or a part instance. ``anchors`` may also be an ``(m, d)`` array
        of anchors and ``graph`` a precomputed sparse ``n x n`` affinity or ``n x m``
        matrix ``Z``. ``graph="precomputed"`` (scikit-learn's convention) makes ``fit``
        take the graph itself instead of ``X``: ``fit(A)`` with ``A`` an ``n x n``
        nonnegative sparse or dense affinity, a networkx or an igraph graph; parts that
        read features are refused before any work, and ``"auto"`` runs a normalised cut
        on it (:doc:`/graphs`). ``set_params(solver__lam=0.1)`` and grid searches over
        ``solver__lam`` work on these.
    metrics : list of dict, optional
        Metrics to score at ``fit`` when ``y`` is given (``[{"name": "acc"}]``).
    overrides : dict, optional
        Overrides of any top-level spec key (the sections above, ``seed``, ``scale``,
        ...), merged into the spec; the section parameters above take precedence.
        ``overrides={"scale": "standard"}`` standardises the columns of ``X`` before
        the anchors and the graph, and again for the points given to ``predict``.
    verbose : bool, default=False
        Report progress of long stages (through the ``graphclust_report_progress`` hook;
        the built-in reporter draws tqdm bars on a terminal, one line per stage in logs).
    n_jobs : int or None, default=None
        Parallelism of joblib-level work: an ensemble spec runs its members in ``n_jobs``
        processes (``-1``: all cores). The labels do not depend on it.
    k_max : int or None, default=None
        The largest number of clusters searched when it is estimated (``None``: 20).
    noise : bool, default=False
        Label ``-1`` the points the fit says belong to no cluster (the density tree's
        noise, else the points more likely noise than their cluster under the clusters'
        Gaussians plus a uniform noise component; :doc:`/confidence`), in ``labels_``
        and in :meth:`predict` of new points. Default: every point labelled.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        A dask array chunked like the rows of ``X`` when ``X`` was a Dask collection.
    n_clusters_ : int
        The number of clusters the fit used (given or estimated).
    k_selection_ : KSelection
        How it was chosen: ``method`` (``"given"``, ``"eigengap"``, ``"density-tree"``),
        the ``candidates`` examined with their ``scores``, the ``rule`` in words and the
        ``part`` that estimated.
    layers_ : Layers
        Nested partitions of the training rows from coarse to fine, each with its ``k``
        and a stability, the fitted ``labels_`` the layer at ``n_clusters_``
        (``layers_.chosen``, with ``k_selection_``'s rule as ``layers_.reason``);
        computed when first read, from what the fit kept (:doc:`/layers`).
    cluster_layers_ : list of ndarray
        The labels of the layers, coarse to fine, up to ``max(n_clusters_, k_max)``
        clusters; :meth:`partition_at` gives any ``k`` of the hierarchy.
    pipeline_ : Pipeline or Ensemble
        The composed, fitted parts (an :class:`~graphclust.Ensemble` for an ensemble spec).
    graph_ : AffinityGraph, AnchorGraph or None
        ``None`` for an ensemble (each member has its own, in ``members_``).
    solution_ : Solution or None
        ``None`` for an ensemble.
    anchors_ : Anchors or None
    embedding_ : ndarray or None
        The solution's embedding (or soft assignment when it has no embedding).
    members_ : list of FitResult
        Ensemble specs only: every member's result (labels, graph, solution, scores).
    memberships_ : Memberships
        Ensemble specs only: the point × base-cluster matrix the consensus combined.
    scaling_ : Scaling
        The fitted ``scale`` stage of the spec (kind, per-column offset and scale),
        reapplied by ``predict`` and ``transform``; ``Scaling("none")`` by default.
    timings_ : dict of str to float
        Wall time per stage in seconds (a ``"scale"`` entry only when the spec scales);
        the last stage, ``"confidence"``, is the time of ``confidence_`` (and of the noise
        rule); ``"total"`` is their sum, as the progress reporter's stages.
    scores_ : dict of str to float
        The spec's metrics, when ``fit`` was given ``y``.
    resolved_spec_ : dict
        The spec the fit ran: every parameter written out, the run's ``n_clusters``,
        ``seed`` and ``scale``, and the graph builder's resolved choices (e.g. the kNN search
        ``method`` picked by the size rule, a clamped ``n_neighbors``). For a rule preset
        (``"auto"``) it is the concrete spec the rule chose, with a ``summary`` saying
        why; it is a valid spec of its own (``GraphClustering(model.resolved_spec_)``
        refits the same pipeline).
    profile_ : DataProfile or None
        Rule presets only: the profile of ``X`` that decided the spec (``None`` for a
        fixed spec).
    n_features_in_ : int
        The number of nodes after a fit on a precomputed graph.
    nodes_ : list or None
        After ``graph="precomputed"``: the node id of each row of ``labels_`` (the node
        order of a networkx or igraph graph), ``None`` for a matrix (row ``i`` is node
        ``i``).
    confidence_ : ndarray of shape (n_samples,)
        How sure the fit is of each point's label, in ``[0, 1]``; its meaning depends on
        the part that gives it (:doc:`/confidence`). A dask array after a chunked fit,
        computed when read.
    confidence_source_ : str
        The part that gave ``confidence_`` (or ``"graph neighbours"``, the fallback).
    n_noise_ : int
        Points labelled ``-1`` (``noise=True`` only; 0 otherwise).

    Notes
    -----
    Data are computed in float32 when ``X`` is float32 or an integer array of at most
    16 bits (``uint8`` pixels, ``int16`` counts; float32 holds them exactly), and in
    float64 otherwise. A float32 ``X`` is never copied; an ``uint8`` image set costs
    half the memory it would in float64. Pass ``X.astype(np.float64)`` to force double
    precision.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from graphclust import GraphClustering
    >>> X, y = load_digits(return_X_y=True)
    >>> model = GraphClustering("anchor-spectral", n_clusters=10, random_state=0,
    ...                         anchors={"n_anchors": 300}).fit(X)
    >>> model.labels_.shape
    (1797,)
    """

    def __init__(self, spec="auto", n_clusters=None, random_state=None, *, anchors=None,
                 graph=None, adapter=None, solver=None, rounding=None, metrics=None,
                 overrides=None, verbose=False, n_jobs=None, k_max=None, noise=False):
        self.spec = spec
        self.n_clusters = n_clusters
        self.random_state = random_state
        self.anchors = anchors
        self.graph = graph
        self.adapter = adapter
        self.solver = solver
        self.rounding = rounding
        self.metrics = metrics
        self.overrides = overrides  # a non-dict is reported by fit, never here
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.k_max = k_max
        self.noise = noise

    def _compose(self) -> Pipeline | Ensemble:
        """The composed spec without data (a rule preset raises: the data decide it)."""
        return compose(estimator_spec(self))

    # -- scikit-learn parameter protocol ------------------------------------------------
    def get_params(self, deep: bool = True) -> dict:
        params = super().get_params(deep=False)
        if not deep:
            return params
        try:
            pipe = self._compose()
        except Exception:  # an invalid spec has no nested parameters to show
            return params
        for sec, p in pipe.named_parts().items():
            for key, value in p.get_params(deep=False).items():
                params[f"{sec}__{key}"] = value
        return params

    def set_params(self, **params):
        """Set parameters; ``section__name`` sets one parameter of a section's part.

        ``set_params(solver=<part instance>)`` replaces the solver, ``solver={"lam": 1}``
        overrides parameters of the spec's solver, and ``solver__lam=1`` adds to whatever
        the section holds (a dict of overrides, or a copy of a given part instance).
        """
        if not params:
            return self
        valid = set(self._get_param_names())
        for key, value in params.items():
            sec, sep, sub = key.partition("__")
            if not sep:
                if key not in valid:
                    raise SpecError(Problem(key, f"invalid parameter {key!r} for "
                                            "GraphClustering; valid parameters: "
                                            f"{', '.join(sorted(valid))}"),
                                    title="invalid parameter")
                setattr(self, key, value)
                continue
            if sec not in SECTION_PARAMS or sec == "metrics":
                sections = ", ".join(s for s in SECTION_PARAMS if s != "metrics")
                raise SpecError(Problem(key, f"invalid parameter {key!r}: {sec!r} is not a "
                                        f"section ({sections})"), title="invalid parameter")
            current = getattr(self, sec)
            if isinstance(current, Part):
                updated = clone(current)
                try:
                    updated.set_params(**{sub: value})
                except ValueError as exc:  # scikit-learn's "Invalid parameter ..."
                    raise SpecError(Problem(key, str(exc)), title="invalid parameter") from None
            elif current is None or isinstance(current, dict):
                updated = {**(current or {}), sub: value}
            elif isinstance(current, str):  # a part given by name
                updated = {"name": current, sub: value}
            else:
                raise SpecError(Problem(key, f"invalid parameter {key!r}: section {sec!r} is "
                                        f"given as {type(current).__name__}, which has no "
                                        "parameters"), title="invalid parameter")
            setattr(self, sec, updated)
        return self

    # -- fitting --------------------------------------------------------------------
    def fit(self, X, y=None):
        """Build the graph, solve, round. ``y`` is only used by the spec's metrics.

        A ``dask.array.Array`` or a dask DataFrame of numeric columns runs the chunked
        execution on the active Dask scheduler (:doc:`/dask`): ``labels_`` is then a dask
        array chunked like the rows of ``X``, and the metrics are not scored
        (``scores_`` is empty: score ``labels_.compute()`` if wanted).
        """
        plan = settle_k(self, make_plan(self, X, y))  # auto's k first, where it is taken
        return self._record(*fit_with_second_opinion(self, plan))

    def _record(self, plan: FitPlan, result):
        """Keep a run's result as the fitted attributes, whichever path ran."""
        pipe, k, seed = plan.pipeline, plan.n_clusters, plan.seed
        self.pipeline_ = pipe
        self.result_ = result
        self.labels_ = result.labels
        self.scaling_ = result.scaling
        self.timings_ = dict(result.timings)
        for stage, seconds in plan.timings.items():  # stages before the run's (auto's k)
            self.timings_ = _before(self.timings_, stage, seconds)
        self.scores_ = dict(result.scores)
        from graphclust._kselection import given_selection

        selection = getattr(result, "k_selection", None)
        if plan.selection is not None:  # chosen by the plan (auto's k), then given
            selection = plan.selection
        elif selection is None:
            selection = given_selection(k)
        self.k_selection_ = selection
        self.n_clusters_ = k = int(selection.k)
        self.profile_ = plan.profile
        if isinstance(pipe, Ensemble):
            self.members_ = result.members
            self.memberships_ = result.memberships
            self.graph_ = self.solution_ = self.anchors_ = self.embedding_ = None
            spec = resolved_ensemble_spec(pipe, result, k, seed)
        else:
            for stale in ("members_", "memberships_"):  # of an earlier ensemble fit
                self.__dict__.pop(stale, None)
            self.graph_ = result.graph
            self.solution_ = result.solution
            self.anchors_ = result.anchors
            self.embedding_ = plan.executor.embedding(plan, result)
            spec = resolved_spec(pipe, result.graph, k, seed)
        self.resolved_spec_ = {"summary": plan.summary, **spec} if plan.summary else spec
        self._record_confidence(plan, result)
        return self

    def _record_confidence(self, plan: FitPlan, result) -> None:
        """``confidence_`` and, with ``noise``, ``-1`` labels (:doc:`/confidence`)."""
        from graphclust._confidence_fit import fit_confidence

        progress = plan.ctx.progress.for_stage("confidence", "noise" if self.noise else "")
        progress.open()
        fitted = fit_confidence(plan, result, bool(self.noise), on_graph=self._on_graph())
        elapsed = progress.close(fitted.state.source)
        self.timings_ = _with_stage(self.timings_, "confidence", elapsed)
        self.confidence_ = fitted.confidence
        self.confidence_source_ = fitted.state.source
        self._confidence_state = fitted.state
        self.n_noise_ = fitted.n_noise
        if self.noise:
            self.labels_ = fitted.labels

    labels_ = _Held("""The training labels (a dask array held by the cluster after a
        chunked fit: :class:`~graphclust.ClusterLostError` once that cluster is gone,
        :doc:`/dask`).""")
    embedding_ = _Held("""The training rows' solution (after a chunked fit a dask array,
        computed from ``X`` and the fitted state, or from rows the solver kept on the
        workers: :class:`~graphclust.ClusterLostError` once what it needs is gone).""")
    confidence_ = _Held("""How sure the fit is of each point's label (after a chunked fit
        a lazy dask array: :class:`~graphclust.ClusterLostError` once what it needs is
        gone).""")

    def fit_predict(self, X, y=None, **kwargs):
        return self.fit(X, y).labels_

    # -- new points -----------------------------------------------------------------
    def _pipeline_or_none(self) -> Pipeline | Ensemble | None:
        """The fitted pipeline, else the composed one, else ``None`` (an invalid spec)."""
        if hasattr(self, "pipeline_"):
            return self.pipeline_
        try:
            return self._compose()
        except Exception:
            return None

    def _can_predict(self) -> bool:
        if self._on_graph():  # new nodes by their edges to the fitted ones
            return True
        pipe = self._pipeline_or_none()
        if isinstance(pipe, Ensemble) and not pipe.can_predict():
            # hasattr(model, "predict") stays False; a direct call says why
            raise AttributeError(f"this ensemble cannot predict: {pipe.why_not_predict()}")
        return pipe is not None and pipe.can_predict()

    def _on_graph(self) -> bool:
        from graphclust._ongraph import is_precomputed

        return is_precomputed(self)

    def _can_transform(self) -> bool:
        pipe = self._pipeline_or_none()
        return pipe is not None and not isinstance(pipe, Ensemble) and pipe.can_predict()

    @available_if(_can_predict)
    def predict(self, X):
        """Label new points through the fitted anchors (anchor-graph pipelines only).

        After ``graph="precomputed"``, ``X`` is the new nodes' edge weights to the fitted
        nodes (``m x n``, sparse or dense), each labelled by the weighted vote of its
        fitted neighbours (:doc:`/graphs`).

        Each new point gets its row of ``Z`` against the fitted anchors, its solution
        row as ``z @ (per-anchor values)``, then a label from the fitted rounding. An
        ensemble runs every member's ``predict`` and the consensus part's ``assign``.
        After ``noise=True``, ``-1`` where the fitted noise rule flags the new point
        (:doc:`/confidence`).
        """
        check_is_fitted(self, "pipeline_")
        if self._on_graph():  # rows of edge weights to the fitted nodes
            from graphclust._graph_predict import predict_on_graph

            return predict_on_graph(self, X)
        if getattr(getattr(self, "_confidence_state", None), "noise_rule", ""):  # noise=True
            from graphclust._noise_predict import predict_with_noise

            return predict_with_noise(self, X)
        return executor_for(X).predict(self, X)

    @available_if(_can_predict)
    def predict_proba(self, X):
        """Class probabilities of new points: ``n x n_clusters_``, rows summing to one,
        whose argmax is :meth:`predict` (the rounding's probabilities, else the label
        shares of the points' neighbours through the anchors; :doc:`/confidence`; after
        ``graph="precomputed"`` the shares of the new nodes' votes, :doc:`/graphs`)."""
        check_is_fitted(self, "pipeline_")
        if self._on_graph():
            from graphclust._graph_predict import predict_proba_on_graph

            return predict_proba_on_graph(self, X)
        from graphclust._confidence_fit import predict_proba

        return predict_proba(self, X)

    @available_if(_can_transform)
    def transform(self, X):
        """Embed new points: through the solver's feature projection when it has one
        (ULGE), else through the fitted anchors (``z @ anchor_embedding``)."""
        check_is_fitted(self, "pipeline_")
        return executor_for(X).transform(self, X)

    @available_if(_can_transform)
    def fit_transform(self, X, y=None):
        """Fit, then embed the training points with :meth:`transform`."""
        return self.fit(X, y).transform(X)

    def __sklearn_tags__(self):
        from sklearn.utils import TransformerTags

        tags = super().__sklearn_tags__()
        if self._can_transform():
            tags.transformer_tags = TransformerTags(preserves_dtype=[])
        tags.input_tags.sparse = True
        tags.non_deterministic = False
        return tags


def _before(timings: dict, stage: str, seconds: float) -> dict:
    """``timings`` with ``stage``'s ``seconds`` first (added to the run's own ``stage``
    when it has one), and in ``"total"``."""
    out = {stage: seconds + timings.get(stage, 0.0)}
    out.update((k, v) for k, v in timings.items() if k != stage)
    if "total" in out:
        out["total"] = timings["total"] + seconds
    return out


def _with_stage(timings: dict, stage: str, seconds: float) -> dict:
    """``timings`` with ``stage`` added before ``"total"``, which counts it."""
    out = {k: v for k, v in timings.items() if k != "total"}
    out[stage] = seconds
    if "total" in timings:
        out["total"] = timings["total"] + seconds
    return out
