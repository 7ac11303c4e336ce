"""Clustering accuracy with the best one-to-one matching."""

from __future__ import annotations

from scipy.optimize import linear_sum_assignment

import graphclust
from graphclust_plugins.common._labels import contingency


def clustering_accuracy(labels, y_true) -> float:
    """Fraction of points whose cluster maps to their class under the best one-to-one
    cluster-to-class matching (Hungarian algorithm on the contingency table)."""
    C = contingency(labels, y_true)
    if C.size == 0:
        return 0.0
    rows, cols = linear_sum_assignment(C, maximize=True)
    return float(C[rows, cols].sum() / C.sum())


@graphclust.part
class Accuracy(graphclust.Metric):
    """Clustering accuracy (ACC): best one-to-one cluster-to-class matching (Hungarian).

    ``ACC = max_π Σ_i [y_i = π(c_i)] / n`` over one-to-one maps ``π`` from clusters to
    classes, solved by :func:`scipy.optimize.linear_sum_assignment` on the contingency
    table. With more clusters than classes (or the reverse) the unmatched clusters count
    as errors. Label values need not be consecutive.
    """

    name = "acc"
    needs_truth = True

    def score(self, labels, y_true=None, graph=None):
        if y_true is None:
            raise ValueError("metric 'acc' needs the true labels")
        return clustering_accuracy(labels, y_true)
