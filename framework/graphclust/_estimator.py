"""The scikit-learn compatible estimator :class:`GraphClustering`."""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from graphclust._composer import compose
from graphclust._degenerate import check_distances, warn_fewer_labels
from graphclust._ensemble import Ensemble
from graphclust._fitwarnings import one_warning_per_cause
from graphclust._toml import resolved_spec
from graphclust._errors import InputError, SpecError, Problem
from graphclust._graphs import AffinityGraph, Anchors, AnchorGraph
from graphclust._parts import AnchorSelector, Context, GraphBuilder, Part, part
from graphclust._pipeline import Pipeline, check_input
from graphclust.numerics import float_dtype
from graphclust._progress import Progress
from graphclust._spec import SECTIONS, merge_overrides, read_spec

__all__ = ["GraphClustering"]

DEFAULT_N_CLUSTERS = 8
#: Spec sections that are also constructor parameters of the estimator.
_SECTION_PARAMS = (*SECTIONS, "metrics")


@part
class GivenAnchors(AnchorSelector):
    """Anchors given by the user as an array (not registered; built by the estimator)."""

    name: ClassVar[str] = "given"
    chunkwise: ClassVar[bool] = True  # needs nothing of X but its dtype and width
    points: Any = None

    def select(self, X, ctx):
        raw = self.points.toarray() if sp.issparse(self.points) else np.asarray(self.points)
        if raw.dtype.kind not in "biuf":
            raise InputError(f"given anchors must be numeric, got dtype {raw.dtype}")
        pts = raw.astype(X.dtype if X.dtype == np.float32 else np.float64, copy=False)
        if pts.ndim != 2 or pts.shape[0] == 0 or pts.shape[1] != X.shape[1]:
            raise InputError(f"given anchors must have shape (m, {X.shape[1]}) with m >= 1, "
                             f"got {pts.shape}")
        if not np.all(np.isfinite(pts)):
            raise InputError("given anchors must be finite (NaN or inf found)")
        return Anchors(pts, info={"given": True})


@part
class GivenGraph(GraphBuilder):
    """A precomputed graph: a sparse ``n x n`` affinity or ``n x m`` anchor matrix ``Z``."""

    name: ClassVar[str] = "precomputed"
    matrix: Any = None

    @property
    def produces(self) -> str:  # type: ignore[override]
        shape = np.shape(self.matrix)
        return "affinity" if len(shape) == 2 and shape[0] == shape[1] else "anchor"

    def check_matrix(self) -> None:
        """Raise :class:`InputError` unless the matrix is a 2-D, numeric, finite and
        nonnegative graph."""
        M = self.matrix
        dtype = M.dtype if sp.issparse(M) else np.asarray(M).dtype
        if len(np.shape(M)) != 2:
            raise InputError(f"a precomputed graph must be a 2-D (sparse) matrix, got shape "
                             f"{np.shape(M)}")
        if dtype.kind not in "biuf":
            raise InputError(f"a precomputed graph must be numeric, got dtype {dtype}")
        values = M.data if sp.issparse(M) else np.asarray(M)
        if values.size and not np.all(np.isfinite(values)):
            raise InputError("a precomputed graph must have finite entries (NaN or inf found)")
        if values.size and values.min() < 0:
            raise InputError("a precomputed graph must be nonnegative")

    def build(self, X, anchors, ctx):
        if X is not None and self.matrix.shape[0] != X.shape[0]:
            raise InputError(f"the precomputed graph has {self.matrix.shape[0]} rows but X has "
                             f"{X.shape[0]} samples")
        if self.produces == "affinity":
            A = sp.csr_array(self.matrix)
            if abs(A - A.T).sum() > 1e-8 * max(1.0, abs(A).sum()):
                raise InputError("a precomputed n x n graph must be symmetric")
            return AffinityGraph(A, info={"precomputed": True})
        return AnchorGraph(sp.csr_array(self.matrix), None, info={"precomputed": True})


def _is_array_like(value) -> bool:
    return sp.issparse(value) or isinstance(value, np.ndarray)


class GraphClustering(ClusterMixin, BaseEstimator):
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
        Number of clusters; defaults to the spec's ``n_clusters``, else 8.
    random_state : int, RandomState or None
        Seed of the run (overrides the spec's ``seed``). The same spec, data and seed
        give identical labels.
    anchors, graph, adapter, solver, rounding : dict, str, part or array, optional
        Override one section of the spec: a dict of parameters merged into the spec's
        part (``graph={"n_neighbors": 15}``; with ``"name"`` it chooses another part), a
        registered name, or a part instance. ``anchors`` may also be an ``(m, d)`` array
        of anchors and ``graph`` a precomputed sparse ``n x n`` affinity or ``n x m``
        matrix ``Z``. ``set_params(solver__lam=0.1)`` and grid searches over
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

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        A dask array chunked like the rows of ``X`` when ``X`` was a Dask collection.
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
        Wall time per stage in seconds (a ``"scale"`` entry only when the spec scales).
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
                 overrides=None, verbose=False, n_jobs=None):
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

    # -- spec handling ------------------------------------------------------------------
    def _rule(self):
        """The rule preset record ``spec`` names, else ``None``."""
        from graphclust._plugins import get_registry

        rules = get_registry().rules
        return rules.get(self.spec) if isinstance(self.spec, str) and self.spec in rules else None

    def _spec_dict(self, base: dict | None = None) -> dict:
        """The spec to compose: ``spec`` (or ``base``, a rule preset's decision) with the
        section parameters and ``overrides`` merged in."""
        from graphclust._composer import rule_needs_data
        from graphclust._plugins import get_registry

        registry = get_registry()
        if base is not None:
            base = copy.deepcopy(base)
        elif isinstance(self.spec, str) and self.spec in registry.rules:
            raise rule_needs_data(self.spec)
        elif isinstance(self.spec, str) and self.spec in registry.presets:
            base = copy.deepcopy(registry.presets.get(self.spec))
        elif isinstance(self.spec, str) and not any(c in self.spec for c in "=[{./\\"):
            registry.presets.record(self.spec)  # raises with the list of presets
            base = {}
        else:
            base = read_spec(self.spec)
        if self.overrides is not None and not isinstance(self.overrides, dict):
            raise SpecError(Problem("overrides", "must be a dict of section overrides, got "
                                    f"{type(self.overrides).__name__}"))
        given: dict[str, Any] = {}
        plain: dict[str, Any] = {}
        for key, value in self._section_overrides().items():
            if key == "anchors" and _is_array_like(value):
                given[key] = GivenAnchors(points=value)
            elif key == "graph" and _is_array_like(value):
                given[key] = GivenGraph(matrix=value)
            elif key in SECTIONS and not isinstance(value, (dict, str, type(None))):
                given[key] = value  # a part instance; the composer checks it
            else:
                plain[key] = value
        spec = merge_overrides(base, plain)
        spec.update(given)
        if isinstance(given.get("graph"), GivenGraph):
            spec.pop("anchors", None)
        return spec

    def _section_overrides(self) -> dict[str, Any]:
        """``overrides`` with the section parameters (``solver=...``) merged on top."""
        out = dict(self.overrides or {})
        for key in _SECTION_PARAMS:
            value = getattr(self, key)
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

    def _compose(self, base: dict | None = None) -> Pipeline:
        return compose(self._spec_dict(base))

    def _compose_rule(self, rule, X) -> Pipeline:
        """Profile ``X`` (validated, finite), let the rule preset decide, compose."""
        from graphclust._rules import profile_data

        k = self.n_clusters
        if k is None:
            k = (self.overrides or {}).get("n_clusters") if isinstance(self.overrides, dict) else None
        k = DEFAULT_N_CLUSTERS if k is None else k
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise SpecError(Problem("n_clusters", f"must be an integer >= 1, got {k!r}"))
        from graphclust._dask import is_dask_input

        if is_dask_input(X):  # the leading rows in memory; n and d of the whole array
            import attrs

            from graphclust._rules import PROFILE_SAMPLE

            head = profile_data(np.asarray(X[:PROFILE_SAMPLE].compute()), int(k))
            self.profile_ = attrs.evolve(head, n=int(X.shape[0]), chunked=True)
        else:
            self.profile_ = profile_data(X, int(k))
        self._decided_ = rule.resolve(self.profile_)
        return self._compose(self._decided_)

    def _n_clusters(self, pipe: Pipeline) -> int:
        k = self.n_clusters if self.n_clusters is not None else pipe.n_clusters
        k = DEFAULT_N_CLUSTERS if k is None else k
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise SpecError(Problem("n_clusters", f"must be an integer >= 1, got {k!r}"))
        return int(k)

    def _seed(self, pipe: Pipeline) -> int:
        if self.random_state is None and pipe.seed is not None:
            return int(pipe.seed)
        if isinstance(self.random_state, (int, np.integer)) and not isinstance(
                self.random_state, bool):
            return int(self.random_state) & 0x7FFFFFFF
        try:
            state = check_random_state(self.random_state)
        except (ValueError, TypeError) as exc:
            raise SpecError(Problem("random_state", f"must be None, an integer or a "
                                    f"RandomState, got {self.random_state!r}: {exc}"),
                            title="invalid parameter") from None
        return int(state.randint(0, 2**31 - 1))

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
            if sec not in _SECTION_PARAMS or sec == "metrics":
                sections = ", ".join(s for s in _SECTION_PARAMS if s != "metrics")
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
    def _validate(self, X, *, reset: bool):
        """scikit-learn's bookkeeping (``n_features_in_``, dtypes, shape errors as
        :class:`InputError`); finiteness is left to :func:`check_input`, whose messages
        say where the NaN is."""
        if not sp.issparse(X):  # shape and dtype first, in graphclust's words
            try:
                arr = np.asarray(X)
            except Exception:  # ragged lists and the like: check_input names it
                arr = None
            if arr is not None and arr.ndim == 1:
                raise InputError(f"X must be 2-D (n_samples, n_features), got 1-D with shape "
                                 f"{arr.shape}. Reshape your data: X.reshape(-1, 1) for a "
                                 "single feature, X.reshape(1, -1) for a single sample")
            # (object arrays of numbers are scikit-learn's to convert)
            if arr is None or arr.ndim != 2 or arr.dtype.kind in "USV":
                check_input(X)
        dtype = (np.float64, np.float32)
        if float_dtype(getattr(X, "dtype", np.float64)) == np.float32:
            dtype = np.float32  # integers of <= 16 bits: exact in float32, half the memory
        try:
            return validate_data(self, X, accept_sparse=("csr", "csc", "coo"),
                                 dtype=dtype, ensure_min_samples=1,
                                 ensure_all_finite=False, reset=reset)
        except ValueError as exc:
            raise InputError(str(exc)) from None

    def _check_plain_params(self) -> None:
        """``verbose`` and ``n_jobs`` are checked at fit, like every other parameter."""
        problems = []
        if not isinstance(self.verbose, (bool, int, np.bool_, np.integer)):
            problems.append(Problem("verbose", f"must be a boolean, got {self.verbose!r}"))
        if self.n_jobs is not None and (isinstance(self.n_jobs, bool)
                                        or not isinstance(self.n_jobs, (int, np.integer))):
            problems.append(Problem("n_jobs", f"must be None or an integer, got {self.n_jobs!r}"))
        if problems:
            raise SpecError(problems, title="invalid parameter")

    def _emit(self):
        if not self.verbose:
            return None
        from graphclust._plugins import get_plugin_manager

        return get_plugin_manager().report_progress

    def fit(self, X, y=None):
        """Build the graph, solve, round. ``y`` is only used by the spec's metrics.

        A ``dask.array.Array`` or a dask DataFrame of numeric columns runs the chunked
        execution on the active Dask scheduler (:doc:`/dask`): ``labels_`` is then a dask
        array chunked like the rows of ``X``.
        """
        from graphclust._dask import is_dask_input

        if is_dask_input(X):
            return self._fit_chunked(X, y)
        self._check_plain_params()
        rule = self._rule()
        self.profile_ = self._decided_ = None
        if rule is None:
            pipe = self._compose()
            n_clusters = self._n_clusters(pipe)
            X = self._validate(X, reset=True)
            X = check_input(X, n_clusters)
        else:  # the data decide the spec (profiled as given: sparse stays sparse)
            X = self._validate(X, reset=True)
            with np.errstate(all="ignore"):  # NaN/inf are reported by check_input below
                pipe = self._compose_rule(rule, X)
            n_clusters = self._n_clusters(pipe)
            X = check_input(X, n_clusters)
        precomputed = isinstance(getattr(pipe, "graph", None), GivenGraph)
        if precomputed:
            pipe.graph.check_matrix()
        if precomputed and pipe.graph.matrix.shape[0] != X.shape[0]:
            raise InputError(f"the precomputed graph has {pipe.graph.matrix.shape[0]} rows but X "
                             f"has {X.shape[0]} samples")
        jobs = self.n_jobs
        if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer))
                                 or jobs == 0):
            raise SpecError(Problem("n_jobs", f"must be None or a nonzero integer (-1: all "
                                    f"cores), got {jobs!r}"))
        seed = self._seed(pipe)
        ctx = Context(seed=seed, progress=Progress(self._emit()), n_jobs=jobs)
        y_arr = None if y is None else np.asarray(y)
        if y_arr is not None and (y_arr.ndim == 0 or y_arr.shape[0] != X.shape[0]):
            raise InputError(f"y must hold one label per sample: X has {X.shape[0]} samples, "
                             f"y has shape {y_arr.shape}")
        who = f"preset {self.spec!r}" if isinstance(self.spec, str) else repr(pipe)
        with one_warning_per_cause():
            # "standard", "minmax" and "l2" bound the column ranges the parts see, so the
            # raw ranges cannot underflow or overflow them; identical rows still warn
            bounded = getattr(pipe, "scale", "none") in ("standard", "minmax", "l2")
            if not precomputed and (not bounded or not np.ptp(X, axis=0).any()):
                check_distances(X, n_clusters)
            if isinstance(pipe, Ensemble):
                self._fit_ensemble(pipe, X, y_arr, n_clusters, ctx)
                warn_fewer_labels(self.labels_, n_clusters, who)
                self.resolved_spec_ = self._with_summary(
                    self._resolved_ensemble(pipe, n_clusters, seed))
                return self
            result = pipe.run(X, y_arr, n_clusters=n_clusters, ctx=ctx)
            warn_fewer_labels(result.labels, n_clusters, who)
        sol = result.solution
        return self._keep_pipeline(pipe, result, n_clusters, seed,
                                   sol.embedding if sol.embedding is not None else sol.soft)

    def _keep_pipeline(self, pipe: Pipeline, result, n_clusters: int, seed: int, embedding):
        """Keep a pipeline run's result as the fitted attributes (in memory or chunked)."""
        self.pipeline_ = pipe
        self.result_ = result
        self.labels_ = result.labels
        self.graph_ = result.graph
        self.solution_ = result.solution
        self.anchors_ = result.anchors
        self.embedding_ = embedding
        self.timings_ = dict(result.timings)
        self.scores_ = dict(result.scores)
        self.scaling_ = result.scaling
        self.n_clusters_ = n_clusters
        self.resolved_spec_ = self._with_summary(
            resolved_spec(pipe, result.graph, n_clusters, seed))
        return self

    def _with_summary(self, spec: dict) -> dict:
        """A rule preset's resolved spec carries the rule's ``summary`` (why it chose)."""
        if self._decided_ is not None and self._decided_.get("summary"):
            spec = {"summary": self._decided_["summary"], **spec}
        return spec

    def _fit_chunked(self, X, y=None):
        """``fit`` on a Dask collection: refuse a spec that cannot run chunk-wise before
        anything runs, then :func:`graphclust._dask._run.fit_chunked`. The spec's metrics
        are not scored (``scores_`` is empty): score ``labels_.compute()`` if wanted."""
        from graphclust._dask import require_dask
        from graphclust._dask._input import as_row_chunked
        from graphclust._dask._refuse import check_chunkwise
        from graphclust._dask._run import fit_chunked, training_embedding

        require_dask()
        self._check_plain_params()
        rule = self._rule()
        self.profile_ = self._decided_ = None
        if rule is None:
            pipe = self._compose()
            check_chunkwise(pipe)
            n_clusters = self._n_clusters(pipe)
            X = as_row_chunked(X, n_clusters)
        else:  # a rule preset decides from a profile of the chunked rows
            X = as_row_chunked(X)
            pipe = self._compose_rule(rule, X)
            check_chunkwise(pipe)
            n_clusters = self._n_clusters(pipe)
            X = as_row_chunked(X, n_clusters)
        self.n_features_in_ = int(X.shape[1])
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        seed = self._seed(pipe)
        ctx = Context(seed=seed, progress=Progress(self._emit()), n_jobs=self.n_jobs)
        who = f"preset {self.spec!r}" if isinstance(self.spec, str) else repr(pipe)
        if isinstance(pipe, Ensemble):
            from graphclust._dask._ensemble import fit_ensemble_chunked

            with one_warning_per_cause():
                result = fit_ensemble_chunked(pipe, X, n_clusters, ctx, who)
            self._keep_ensemble(pipe, result, n_clusters)
            self.resolved_spec_ = self._resolved_ensemble(pipe, n_clusters, seed)
            return self
        with one_warning_per_cause():
            result = fit_chunked(pipe, X, n_clusters, ctx, who)
        return self._keep_pipeline(pipe, result, n_clusters, seed,
                                   training_embedding(pipe, result, X))

    def _chunked_input(self, X):
        from graphclust._dask import require_dask
        from graphclust._dask._input import as_row_chunked

        require_dask()
        X = as_row_chunked(X)
        if X.shape[1] != self.n_features_in_:
            raise InputError(f"X has {X.shape[1]} features, but GraphClustering is expecting "
                             f"{self.n_features_in_} features as input")
        return X

    def _fit_ensemble(self, pipe: Ensemble, X, y, n_clusters: int, ctx: Context):
        result = pipe.run(X, y, n_clusters=n_clusters, ctx=ctx)
        return self._keep_ensemble(pipe, result, n_clusters)

    def _keep_ensemble(self, pipe: Ensemble, result, n_clusters: int):
        """Keep an ensemble run's result as the fitted attributes (in memory or chunked)."""
        self.pipeline_ = pipe
        self.result_ = result
        self.labels_ = result.labels
        self.members_ = result.members
        self.memberships_ = result.memberships
        self.graph_ = self.solution_ = self.anchors_ = self.embedding_ = None
        self.scaling_ = result.scaling
        self.timings_ = dict(result.timings)
        self.scores_ = dict(result.scores)
        self.n_clusters_ = n_clusters
        return self

    def _resolved_ensemble(self, pipe: Ensemble, n_clusters: int, seed: int) -> dict:
        """The ensemble spec a fit ran: every member as the pipeline spec it ran (its
        ``n_clusters`` and seed), and the consensus with its parameters."""
        from graphclust._toml import plain_spec

        res = self.result_
        members = [resolved_spec(m.pipeline, r.graph, k, s) for m, r, k, s in
                   zip(pipe.members, res.members, res.member_n_clusters, res.member_seeds)]
        for member in members:
            member.pop("scale", None)  # the ensemble's, applied once to X
        return {"n_clusters": int(n_clusters), "seed": int(seed), "scale": pipe.scale,
                "ensemble": {"members": members, "consensus": plain_spec(pipe.consensus)}}

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
        pipe = self._pipeline_or_none()
        if isinstance(pipe, Ensemble) and not pipe.can_predict():
            # hasattr(model, "predict") stays False; a direct call says why
            raise AttributeError(f"this ensemble cannot predict: {pipe.why_not_predict()}")
        return pipe is not None and pipe.can_predict()

    def _can_transform(self) -> bool:
        pipe = self._pipeline_or_none()
        return pipe is not None and not isinstance(pipe, Ensemble) and pipe.can_predict()

    @available_if(_can_predict)
    def predict(self, X):
        """Label new points through the fitted anchors (anchor-graph pipelines only).

        Each new point gets its row of ``Z`` against the fitted anchors, its solution
        row as ``z @ (per-anchor values)``, then a label from the fitted rounding. An
        ensemble runs every member's ``predict`` and the consensus part's ``assign``.
        """
        check_is_fitted(self, "pipeline_")
        from graphclust._dask import is_dask_input

        if is_dask_input(X):  # one task per row block; a dask array of labels
            from graphclust._dask._run import predict_chunked

            if isinstance(self.pipeline_, Ensemble):
                from graphclust._dask._ensemble import predict_ensemble_chunked as predict_chunked
            return predict_chunked(self.pipeline_, self.result_, self._chunked_input(X))
        X = check_input(self._validate(X, reset=False))
        return self.pipeline_.predict(X, self.result_)

    @available_if(_can_transform)
    def transform(self, X):
        """Embed new points: through the solver's feature projection when it has one
        (ULGE), else through the fitted anchors (``z @ anchor_embedding``)."""
        check_is_fitted(self, "pipeline_")
        from graphclust._dask import is_dask_input

        if is_dask_input(X) and not isinstance(self.pipeline_, Ensemble):
            from graphclust._dask._run import embed_chunked

            sol = self.result_.solution
            width = (sol.embedding if sol.embedding is not None else sol.soft).shape[1]
            return embed_chunked(self.pipeline_, self.result_, self._chunked_input(X), width)
        X = check_input(self._validate(X, reset=False))
        ext = self.pipeline_.extend(X, self.result_)
        return ext.embedding if ext.embedding is not None else ext.soft

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
