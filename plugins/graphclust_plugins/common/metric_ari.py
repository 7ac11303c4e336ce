"""Adjusted Rand index."""

from __future__ import annotations

from sklearn.metrics import adjusted_rand_score

import graphclust


@graphclust.part
class ARI(graphclust.Metric):
    """Adjusted Rand index (ARI) between clusters and classes (scikit-learn)."""

    name = "ari"
    needs_truth = True

    def score(self, labels, y_true=None, graph=None):
        if y_true is None:
            raise ValueError("metric 'ari' needs the true labels")
        return float(adjusted_rand_score(y_true, labels))
