"""``predict`` after ``noise=True``: a new point the fitted noise rule calls noise is
labelled ``-1``, as a training point would be (:doc:`/confidence`, "New points").

The rule that flagged the training points flags the new ones, from the same fitted
state and row-local (a new row's flag depends on that row alone):

* the framework's rule (``noise_rule == "cluster Gaussians"``): the fitted robust
  Gaussians, uniform density and weights (:class:`~graphclust.numerics.confidence.
  ClusterGaussians`) evaluated at the new row under the cluster ``predict`` gives it, the
  posterior of the noise component above one half;
* a part's flags (the ``on-sample`` adapter's, the ``density`` rounding's): the part's
  ``outliers`` on the new rows' anchor memberships ``Z`` and lifted solution rows, the
  same call the chunked fit makes per block.

``predict_proba`` is unchanged: the probabilities over the ``k`` clusters given that the
point belongs to one; its argmax is ``predict``'s label wherever that is not ``-1``, and
is the cluster a noise point is nearest to otherwise.
"""

from __future__ import annotations

import numpy as np

from graphclust._confidence import ConfidenceState, rows_outliers
from graphclust._ensemble import Ensemble

__all__ = ["FRAMEWORK_RULE", "labels_with_noise", "predict_with_noise"]

#: ``ConfidenceState.noise_rule`` of the framework's rule.
FRAMEWORK_RULE = "cluster Gaussians"


def labels_with_noise(X_new, pipe, result, state: ConfidenceState) -> np.ndarray:
    """Labels of new rows (in the training units), ``-1`` where the fit's noise rule
    flags them; in one process (a block of the chunked ``predict``)."""
    X_new = np.asarray(X_new) if not hasattr(X_new, "tocsr") else X_new
    if isinstance(pipe, Ensemble):
        labels, flags = pipe.predict(X_new, result), None
    else:
        solution = pipe.extend(X_new, result)
        labels = np.asarray(pipe.rounding.assign(solution), dtype=np.int64)
        flags = None
        if state.noise_rule != FRAMEWORK_RULE:
            Z = pipe.graph.transform(result.scaling.transform(X_new), result.graph)
            flags = rows_outliers(pipe, Z, solution, labels)
    labels = np.asarray(labels, dtype=np.int64)
    if state.noise_rule == FRAMEWORK_RULE and state.noise_model is not None:
        from graphclust.numerics.confidence import gaussian_outliers

        flags = gaussian_outliers(result.scaling.transform(X_new), labels, state.noise_model)
    if flags is None:
        return labels
    return np.where(np.asarray(flags, dtype=bool), -1, labels)


def predict_with_noise(estimator, X):
    """``predict`` of a model fitted with ``noise=True`` (in memory or chunked)."""
    from graphclust._confidence_fit import on_new_rows

    return on_new_rows(estimator, X, labels_with_noise, "predict_noise")
