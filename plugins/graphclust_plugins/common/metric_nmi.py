"""Normalised mutual information."""

from __future__ import annotations

from sklearn.metrics import normalized_mutual_info_score

import graphclust


@graphclust.part
class NMI(graphclust.Metric):
    """Normalised mutual information (NMI) between clusters and classes (scikit-learn).

    ``average_method="arithmetic"`` is scikit-learn's default, ``I / ((H(c)+H(y))/2)``;
    many clustering papers use ``"geometric"``, ``I / sqrt(H(c) H(y))`` (Strehl & Ghosh).
    """

    name = "nmi"
    needs_truth = True

    average_method: str = graphclust.param(
        "arithmetic", doc="Normaliser of the mutual information.",
        check=graphclust.one_of("arithmetic", "geometric", "min", "max"))

    def score(self, labels, y_true=None, graph=None):
        if y_true is None:
            raise ValueError("metric 'nmi' needs the true labels")
        return float(normalized_mutual_info_score(y_true, labels,
                                                  average_method=self.average_method))
