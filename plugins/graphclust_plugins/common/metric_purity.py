"""Cluster purity."""

from __future__ import annotations

import graphclust
from graphclust_plugins.common._labels import contingency


@graphclust.part
class Purity(graphclust.Metric):
    """Purity: each cluster counts its majority class, ``Σ_c max_y n_cy / n``.

    Not one-to-one (several clusters may take the same class), so purity >= ACC, and
    it reaches 1 with one point per cluster.
    """

    name = "purity"
    needs_truth = True

    def score(self, labels, y_true=None, graph=None):
        if y_true is None:
            raise ValueError("metric 'purity' needs the true labels")
        C = contingency(labels, y_true)
        if C.size == 0:
            return 0.0
        return float(C.max(axis=1).sum() / C.sum())
