"""The two executions of a :class:`~graphclust._plan.FitPlan`: in memory and chunked.

An executor owns everything that depends on the data's container, so the estimator and
the plan never branch on it. The plan meets it twice: :func:`open_data` picks the executor
for the data (a Dask collection runs chunked, :mod:`graphclust._dask`; anything else in
memory), validates their shape and dtype without a pass over the values, and profiles them
for a rule preset; ``executor.fit(plan)`` then admits the spec (the chunked executor
refuses one that cannot run chunk-wise, before any pass over the data), checks the
values (finite; a precomputed graph's rows) and runs. New points are placed by
:meth:`predict` and :meth:`transform` of :func:`executor_for`'s executor, and a fitted
n-sized attribute is read through :func:`held` (the chunked executor checks that the
cluster holding it is still there), so the estimator never reaches into the Dask layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from graphclust._degenerate import (check_spread, count_distinct_sparse, distinct_rows,
                                   warn_few_distinct, warn_fewer_labels)
from graphclust._ensemble import Ensemble
from graphclust._errors import ClusterLostError, InputError
from graphclust._fitwarnings import one_warning_per_cause
from graphclust._given import GivenGraph
from graphclust._input import check_input, validate_rows

__all__ = ["InMemory", "Chunked", "executor_for", "held", "is_dask_input", "open_data"]


def check_values(pipe, n_clusters: int, ranges, n: int, dtype, n_distinct: int) -> None:
    """The decisions on the data's values that both executors take, from the column
    ranges and the (capped) number of distinct rows their container computes (the whole
    array in memory, reductions over the chunks on Dask): distances that underflow or
    overflow (:func:`check_spread`), more clusters than distinct rows
    (:func:`warn_few_distinct`). Nothing for a precomputed graph (no distance is taken).
    "standard", "minmax" and "l2" bound the column ranges the parts see, so the raw
    ranges cannot underflow or overflow them; identical rows still warn."""
    if isinstance(getattr(pipe, "graph", None), GivenGraph):
        return
    ranges = np.asarray(ranges, dtype=np.float64)
    bounded = pipe.scale in ("standard", "minmax", "l2")
    if not bounded or not ranges.any():
        check_spread(ranges, n, dtype, n_clusters)
    warn_few_distinct(n_distinct, n, n_clusters)


def _solution_rows(solution):
    return solution.embedding if solution.embedding is not None else solution.soft


def _dense_if_needed(X, pipe):
    """Sparse ``X`` densified (within the limit, with a warning) when something in
    ``pipe`` needs dense rows (:meth:`Pipeline.dense_needs`); else ``X`` unchanged."""
    if not sp.issparse(X):
        return X
    needs = pipe.dense_needs() if hasattr(pipe, "dense_needs") else ["the pipeline"]
    if not needs:
        return X
    from graphclust.numerics import densify

    return densify(X, needs)


def _column_ranges(X) -> np.ndarray:
    if sp.issparse(X):
        from graphclust.numerics.sparse import sparse_column_range

        return sparse_column_range(X)
    return np.ptp(X, axis=0)


def _n_distinct(X, k: int) -> int:
    if sp.issparse(X):
        return count_distinct_sparse(X, k)
    return distinct_rows(X, k).shape[0]


class InMemory:
    """NumPy/SciPy in this process (the default)."""

    chunked = False

    def take(self, estimator, X, profile_k):
        """``(X, profile)``: shape, dtype and scikit-learn's bookkeeping
        (``n_features_in_``); the profile of ``X`` for a rule preset's ``profile_k``
        (``(n_clusters or None, k_max)``)."""
        from graphclust._rules import profile_data
        from graphclust.numerics import drop_empty_columns, magnitude_unit

        X = validate_rows(estimator, X, reset=True)
        # a sparse X wider than its stored values: the parts see its non-empty columns
        X, estimator._column_map = drop_empty_columns(X)
        # data in units where squared distances overflow or underflow: exact power-of-two
        # units where they do not (magnitude_unit); predict uses the same
        estimator._unit = magnitude_unit(X)
        if estimator._unit != 1.0:
            X = X * estimator._unit
        if profile_k is None:
            return X, None
        return X, profile_data(X, profile_k[0], k_max=profile_k[1])

    def fit(self, plan):
        """Check the values (finite; a precomputed graph valid, of ``n`` rows), then run.

        Sparse ``X`` stays sparse when every part that receives it declares
        ``accepts_sparse``; otherwise it is densified here, before any work, within
        :data:`graphclust.numerics.DENSIFY_LIMIT_BYTES` (with a warning; refused above)."""
        pipe, k = plan.pipeline, plan.n_clusters
        checked_k = 2 if k is None else k  # estimating: distances must separate points
        X = _dense_if_needed(check_input(plan.X), pipe)
        given = getattr(pipe, "graph", None)
        if isinstance(given, GivenGraph):
            given.check_matrix()
            if given.matrix.shape[0] != X.shape[0]:
                raise InputError(f"the precomputed graph has {given.matrix.shape[0]} rows but "
                                 f"X has {X.shape[0]} samples")
        with one_warning_per_cause():
            check_values(pipe, checked_k, _column_ranges(X), X.shape[0], X.dtype,
                         _n_distinct(X, checked_k) if checked_k > 1 else 1)
            result = pipe.run(X, plan.y, n_clusters=k, ctx=plan.ctx, k_range=plan.k_range)
            warn_fewer_labels(result.labels, result.n_clusters or k, plan.who)
        return result

    def embedding(self, plan, result):
        """The training rows' solution (``embedding_``)."""
        return _solution_rows(result.solution)

    def held(self, value, what: str):
        """``value`` itself: an in-memory result lives in this process."""
        return value

    def _new_rows(self, estimator, X):
        X = check_input(validate_rows(estimator, X, reset=False))
        cmap = getattr(estimator, "_column_map", None)
        if cmap is not None:  # the training columns, and the norm of the others
            X = cmap.apply(X)
        unit = getattr(estimator, "_unit", 1.0)
        if unit != 1.0:  # the training rows' units (take)
            X = X * unit
        return _dense_if_needed(X, estimator.pipeline_)

    def predict(self, estimator, X):
        return estimator.pipeline_.predict(self._new_rows(estimator, X), estimator.result_)

    def transform(self, estimator, X):
        ext = estimator.pipeline_.extend(self._new_rows(estimator, X), estimator.result_)
        return _solution_rows(ext)


def _check_names(estimator, names) -> None:
    """scikit-learn's rule for ``feature_names_in_`` at predict, for a dask DataFrame
    (pandas input is checked by scikit-learn's ``validate_data``): the same names in the
    same order, else an :class:`InputError`; names on one side only: a warning."""
    import warnings

    fitted = getattr(estimator, "feature_names_in_", None)
    if fitted is None and names is None:
        return
    if fitted is None or names is None:
        which = ("X has feature names, but GraphClustering was fitted without feature names"
                 if fitted is None else "X does not have valid feature names, but "
                 "GraphClustering was fitted with feature names")
        warnings.warn(which, UserWarning, stacklevel=4)
        return
    if len(fitted) != len(names) or any(a != b for a, b in zip(fitted, names)):
        unseen = [n for n in names if n not in set(fitted)]
        missing = [n for n in fitted if n not in set(names)]
        detail = ("the same columns in another order" if not unseen and not missing else
                  f"unseen at fit: {unseen[:5]}; seen at fit but missing: {missing[:5]}")
        raise InputError("The feature names should match those that were passed during "
                         f"fit ({detail}): fitted with {list(fitted)[:10]}, got "
                         f"{list(names)[:10]}; select the columns as at fit, "
                         "e.g. X[model.feature_names_in_]")


class Chunked:
    """Row chunks of a dask array on the active Dask scheduler (:doc:`/dask`)."""

    chunked = True

    def __init__(self):
        from graphclust._dask import require_dask

        require_dask()

    def take(self, estimator, X, profile_k: int | None):
        """``(X, profile)``: a row-chunked float dask array (its values are checked by
        :meth:`fit`); for a rule preset's ``profile_k``, the in-memory profile of the
        same rows, gathered by global row index (:func:`graphclust._rules.profile_rows`)."""
        import attrs

        from graphclust._dask._input import as_row_chunked, feature_names, without_empty_chunks
        from graphclust._rules import GatheredRows, profile_data, profile_rows

        names = feature_names(X)
        X = as_row_chunked(X, check_finite=False, drop_empty=False)
        self.row_chunks = X.chunks[0]  # the outputs' chunking (empty chunks included)
        X = without_empty_chunks(X)
        estimator.n_features_in_ = int(X.shape[1])
        self._owner, self._unit = estimator, None  # the unit is found by fit (or below)
        estimator._column_map = None  # dense rows: no column is dropped (nor a stale map)
        if names is not None:
            estimator.feature_names_in_ = names
        elif hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
        if profile_k is None:  # no value is read before fit's chunk-wise check
            return X, None
        Xs = self._in_safe_units(X)  # the profile reads the rows: in the units fitted
        # the rows the in-memory profile reads, gathered by global index (one pass)
        index = profile_rows(*X.shape)
        rows = np.asarray((Xs if index is None else Xs[index]).compute())
        gathered = GatheredRows(tuple(X.shape), np.arange(X.shape[0]) if index is None
                                else index, rows)
        return X, attrs.evolve(profile_data(gathered, profile_k[0], k_max=profile_k[1]),
                               chunked=True)

    def _in_safe_units(self, X):
        """``X`` in the power-of-two units of :func:`graphclust.numerics.magnitude_unit`
        (the largest ``|x|`` in one reduction over the chunks, found once), as in memory;
        the unit is kept on the estimator for predict."""
        from graphclust.numerics import unit_for_magnitude

        if self._unit is None:
            top = float(abs(X).max().compute()) if X.size else 0.0
            self._unit = unit_for_magnitude(top, X.dtype, int(X.shape[1]))
            self._owner._unit = self._unit
        return X * self._unit if self._unit != 1.0 else X

    def fit(self, plan):
        """Refuse, naming the part, a spec that cannot run chunk-wise; check the values
        (one reduction over the chunks); run on the active scheduler."""
        from graphclust._dask._ensemble import fit_ensemble_chunked
        from graphclust._dask._chunks import cluster_lost
        from graphclust._dask._input import value_summary, with_row_chunks
        from graphclust._dask._refuse import check_chunkwise
        from graphclust._dask._run import fit_chunked

        check_chunkwise(plan.pipeline)
        X = self._in_safe_units(plan.X)
        k = plan.n_clusters
        checked_k = 2 if k is None else k
        ranges, n_distinct = value_summary(X, checked_k)
        run = fit_ensemble_chunked if isinstance(plan.pipeline, Ensemble) else fit_chunked
        with one_warning_per_cause():
            check_values(plan.pipeline, checked_k, ranges, int(X.shape[0]), X.dtype,
                         n_distinct)
            try:
                result = run(plan.pipeline, X, k, plan.ctx, plan.who,
                             k_range=plan.k_range)
            except Exception as exc:
                if not cluster_lost(exc):
                    raise
                raise ClusterLostError(
                    "the Dask cluster went away during the chunked fit (its client closed "
                    f"or its workers were lost: {type(exc).__name__}: {str(exc)[:120]}); "
                    "keep the client open until fit returns, then refit") from exc
        result.labels = with_row_chunks(result.labels, self.row_chunks)
        return result

    def embedding(self, plan, result):
        """The training rows' solution, lazily per block."""
        from graphclust._dask._input import with_row_chunks
        from graphclust._dask._run import training_embedding

        return with_row_chunks(training_embedding(plan.pipeline, result,
                                                  self._in_safe_units(plan.X)),
                               self.row_chunks)

    def held(self, value, what: str):
        """``value``, a chunked fit's n-sized result kept lazily on the cluster that ran it,
        after checking that cluster still holds it: :class:`~graphclust.ClusterLostError`
        naming ``what`` (its client closed, or the model was unpickled elsewhere)."""
        from graphclust._dask._chunks import check_held

        check_held(value, what)
        return value

    def _new_rows(self, estimator, X):
        from graphclust._dask._input import as_row_chunked, feature_names, without_empty_chunks

        _check_names(estimator, feature_names(X))
        X = as_row_chunked(X, drop_empty=False)
        self.row_chunks = X.chunks[0]
        X = without_empty_chunks(X)
        if X.shape[1] != estimator.n_features_in_:
            raise InputError(f"X has {X.shape[1]} features, but GraphClustering is expecting "
                             f"{estimator.n_features_in_} features as input")
        unit = getattr(estimator, "_unit", 1.0)
        return X * unit if unit != 1.0 else X

    def predict(self, estimator, X):
        """A dask array of labels, one task per row block."""
        if isinstance(estimator.pipeline_, Ensemble):
            from graphclust._dask._ensemble import predict_ensemble_chunked as predict
        else:
            from graphclust._dask._run import predict_chunked as predict
        from graphclust._dask._input import with_row_chunks

        X = self._new_rows(estimator, X)
        return with_row_chunks(predict(estimator.pipeline_, estimator.result_, X),
                               self.row_chunks)

    def confidence(self, plan, result, noise: bool):
        """``confidence_`` (lazy, per block), noise and the predict state of a chunked fit
        (:mod:`graphclust._dask._confidence`)."""
        from graphclust._dask._confidence import chunked_confidence

        return chunked_confidence(plan, result, noise)

    def predict_proba(self, estimator, X, rows_fn, state):
        """Class probabilities of a dask array's rows, one task per block."""
        from graphclust._dask._confidence import proba_chunked

        return proba_chunked(self, estimator, X, rows_fn, state)

    def predict_noise(self, estimator, X, rows_fn, state):
        """Labels (``-1`` for noise) of a dask array's rows after ``noise=True``."""
        from graphclust._dask._confidence import noise_labels_chunked

        return noise_labels_chunked(self, estimator, X, rows_fn, state)

    def transform(self, estimator, X):
        from graphclust._dask._run import embed_chunked

        width = _solution_rows(estimator.result_.solution).shape[1]
        from graphclust._dask._input import with_row_chunks

        X = self._new_rows(estimator, X)
        return with_row_chunks(embed_chunked(estimator.pipeline_, estimator.result_, X, width),
                               self.row_chunks)


def is_dask_input(X: Any) -> bool:
    """Whether ``X`` is a Dask collection (array or DataFrame), without importing Dask."""
    module = type(X).__module__ or ""
    return module.split(".")[0] in ("dask", "dask_expr") and hasattr(X, "__dask_graph__")


def executor_for(X: Any) -> InMemory | Chunked:
    """The executor for data ``X``: chunked for a Dask collection, else in memory."""
    return Chunked() if is_dask_input(X) else InMemory()


def held(value: Any, what: str):
    """A fitted n-sized attribute ``what`` (``labels_``, ``embedding_``, an ensemble
    member's labels), read through the executor of its container: a chunked fit's dask
    collection is checked to be still held by its cluster (:meth:`Chunked.held`); an
    in-memory value is returned as it is."""
    executor = Chunked() if hasattr(value, "__dask_graph__") else InMemory()
    return executor.held(value, what)


def open_data(estimator, X: Any, profile_k: tuple[int | None, int] | None):
    """``(executor, X, profile)``: the executor for ``X``, the data validated in its
    container (shape, dtype; no pass over the values) and, when ``profile_k`` is given
    (a rule preset's ``(n_clusters or None, k_max)``), the data's profile."""
    from graphclust._ongraph import OnGraph, is_precomputed

    executor = OnGraph() if is_precomputed(estimator) else executor_for(X)
    with np.errstate(all="ignore"):  # NaN/inf in a profile are reported by fit's checks
        X, profile = executor.take(estimator, X, profile_k)
    return executor, X, profile
