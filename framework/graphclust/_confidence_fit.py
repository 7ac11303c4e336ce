"""``confidence_``, ``noise=True`` and ``predict_proba`` of a fit, for the four paths
(pipeline or ensemble, in memory or chunked; :doc:`/confidence`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from graphclust._confidence import (ConfidenceState, FitConfidence, agree, label_profile,
                                    member_agreement, member_probabilities, rows_confidence,
                                    rows_outliers, rows_probabilities, source_of)
from graphclust._ensemble import Ensemble
from graphclust._graphs import AnchorGraph

__all__ = ["GRAPH_RULE", "FitConfidence", "fit_confidence", "on_new_rows", "predict_proba"]

#: ``ConfidenceState.noise_rule`` of a graph input's rule (:mod:`graphclust.numerics.
#: graph_noise`): its ``noise_model`` is the clusters' volume shares.
GRAPH_RULE = "modularity term"


def _width(result, labels_max: int) -> int:
    k = getattr(result, "n_clusters", None) or 0
    return int(max(k, labels_max + 1, 1))


def framework_outliers(X, labels: np.ndarray, width: int, seed: int):
    """The framework's noise rule on the rows the parts saw (:mod:`graphclust.numerics.
    confidence`): improbable under their own cluster's robust Gaussian. Sparse rows flag
    none (no covariance of their columns is formed). Returns the flags and the fitted
    model (``None`` for sparse rows), which ``predict`` applies to new points."""
    import scipy.sparse as sp

    from graphclust.numerics.confidence import fit_cluster_gaussians, gaussian_outliers

    if X is None or sp.issparse(X):
        return np.zeros(len(labels), dtype=bool), None
    model = fit_cluster_gaussians(X, labels, width, seed)
    return gaussian_outliers(X, labels, model), model


def fit_confidence(plan, result, noise: bool, on_graph: bool = False) -> FitConfidence:
    """The fit's confidence (and noise) by the protocol of :mod:`graphclust._confidence`;
    ``on_graph``: the input was the graph (``graph="precomputed"``), whose noise rule,
    where no part flags, is :mod:`graphclust.numerics.graph_noise`."""
    pipe = plan.pipeline
    if plan.executor.chunked:
        return plan.executor.confidence(plan, result, noise)
    labels = np.asarray(result.labels, dtype=np.int64)
    width = _width(result, int(labels.max()) if labels.size else 0)
    if isinstance(pipe, Ensemble):
        conf = member_agreement(result.memberships, labels, width)
        _, owner = member_probabilities(result.memberships, labels, width)
        state = ConfidenceState(width, owner, source="ensemble members")
        flagged = None
    else:
        graph = result.graph
        Z = graph.Z if isinstance(graph, AnchorGraph) else None
        conf = rows_confidence(pipe, Z, result.solution, labels, graph=graph)
        profile = label_profile(Z, labels, width) if Z is not None else None
        state = ConfidenceState(width, profile, source_of(pipe))
        flagged = rows_outliers(pipe, Z, result.solution, labels) if noise else None
    if not noise:
        return FitConfidence(conf, labels, state)
    if flagged is None and on_graph:
        from graphclust.numerics.graph_noise import graph_outliers

        flagged, state.noise_model = graph_outliers(result.graph.adjacency, labels, width)
        state.noise_rule = GRAPH_RULE
    elif flagged is None:
        X = result.scaling.transform(plan.X)
        flagged, state.noise_model = framework_outliers(X, labels, width, plan.seed)
        state.noise_rule = "cluster Gaussians"
    else:
        state.noise_rule = state.source
    mask = np.asarray(flagged, dtype=bool)
    return FitConfidence(conf, np.where(mask, -1, labels), state, int(mask.sum()))


def _proba_rows(X_new, pipe, result, state: ConfidenceState) -> np.ndarray:
    """Class probabilities of new rows (in the training units), in one process."""
    if isinstance(pipe, Ensemble):
        member_rows = pipe.memberships_of(X_new, result)
        labels = np.asarray(pipe.consensus.assign(member_rows), dtype=np.int64)
        P, _ = member_probabilities(member_rows, labels, state.width, state.profile)
        return agree(P, labels, state.width)
    solution = pipe.extend(X_new, result)
    labels = np.asarray(pipe.rounding.assign(solution), dtype=np.int64)
    Z = None
    if not type(pipe.rounding).implements("probabilities"):
        Z = pipe.graph.transform(result.scaling.transform(X_new), result.graph)
    return rows_probabilities(pipe, Z, solution, labels, state.width, state.profile)


def on_new_rows(estimator, X, rows_fn, chunked_method: str) -> Any:
    """``rows_fn(rows, pipeline, result, confidence state)`` on the new rows ``X``: in one
    call in memory, else block by block through the chunked executor's
    ``chunked_method`` (``"predict_proba"``, ``"predict_noise"``)."""
    from graphclust._executors import executor_for

    executor = executor_for(X)
    state = estimator._confidence_state
    if not executor.chunked:
        return rows_fn(executor._new_rows(estimator, X), estimator.pipeline_,
                       estimator.result_, state)
    return getattr(executor, chunked_method)(estimator, X, rows_fn, state)


def predict_proba(estimator, X) -> Any:
    """``n x k`` class probabilities of new points whose argmax is ``predict(X)``."""
    return on_new_rows(estimator, X, _proba_rows, "predict_proba")
