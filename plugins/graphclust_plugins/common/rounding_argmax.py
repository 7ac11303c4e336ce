"""Argmax rounding of a soft assignment."""

from __future__ import annotations

import numpy as np

import graphclust
from graphclust_plugins.common._labels import consecutive


@graphclust.part
class ArgmaxRounding(graphclust.Rounding):
    """Label of each point = the column of its largest soft-assignment entry.

    The rounding of ONGR (argmax of G), DCD and other nonnegative factorisations.

    Rules
    -----
    * Ties go to the lowest column index (``numpy.argmax``).
    * An all-zero row (no evidence) goes to the *fallback* column: the column with
      the largest total mass ``Σ_i S_ij`` (lowest index on ties).
    * Empty clusters are repaired by relabelling: the columns that received at least
      one point are renumbered to consecutive labels ``0..k'-1`` in increasing column
      order (scikit-learn's ``check_clustering`` wants consecutive labels from 0).
      ``k' < k`` is then possible; no point is moved to fill an empty cluster.
    * :meth:`assign` applies the same argmax restricted to the kept columns
      (``columns_``), all-zero rows going to the fallback column's label.
    """

    name = "argmax"
    needs = graphclust.SolutionField.SOFT
    chunkwise = True  # round() on a uniform sample of rows, assign() per block

    def _argmax(self, S: np.ndarray, fallback: int) -> np.ndarray:
        raw = S.argmax(axis=1)
        zero = ~(S > 0).any(axis=1)
        raw[zero] = fallback
        return raw

    def round(self, solution, n_clusters, ctx):
        if solution.soft is None:
            raise ValueError("rounding 'argmax' needs a solution with a soft assignment")
        S = np.asarray(solution.soft, dtype=np.float64)
        fallback = int(np.argmax(S.sum(axis=0))) if S.shape[1] else 0
        if S.shape[1] == 0:
            S = np.zeros((S.shape[0], 1))
        raw = self._argmax(S, fallback)
        labels, kept = consecutive(raw)
        self.columns_ = kept
        self.fallback_ = int(np.searchsorted(kept, fallback)) if fallback in kept else 0
        return labels

    def _kept(self, solution) -> np.ndarray:
        if not hasattr(self, "columns_"):
            raise RuntimeError("rounding 'argmax': call round() before assign()")
        if solution.soft is None:
            raise ValueError("rounding 'argmax' needs a solution with a soft assignment")
        return np.asarray(solution.soft, dtype=np.float64)[:, self.columns_]

    def confidence(self, solution, labels):
        """The normalised margin ``(s_own − s_rival) / s_own`` of the row's soft
        assignment (its label's entry against the largest other): 1 when only its label
        has mass, 0 on a tie or an all-zero row."""
        S = np.maximum(self._kept(solution), 0.0)
        labels = np.asarray(labels, dtype=np.int64)
        n, k = S.shape
        rows = np.arange(n)
        own = S[rows, np.clip(labels, 0, max(k - 1, 0))] if k else np.zeros(n)
        if k < 2:
            return (own > 0).astype(np.float64)
        S[rows, np.clip(labels, 0, k - 1)] = -np.inf
        rival = np.maximum(S.max(axis=1), 0.0)
        return np.divide(own - rival, own, out=np.zeros(n), where=own > 0).clip(0.0, 1.0)

    def probabilities(self, solution, labels):
        """The soft assignment over the kept columns (scaled to sum to one by the
        framework)."""
        return np.maximum(self._kept(solution), 0.0)

    def assign(self, solution):
        if not hasattr(self, "columns_"):
            raise RuntimeError("rounding 'argmax': call round() before assign()")
        if solution.soft is None:
            raise ValueError("rounding 'argmax' needs a solution with a soft assignment")
        S = np.asarray(solution.soft, dtype=np.float64)[:, self.columns_]
        return np.asarray(self._argmax(S, self.fallback_), dtype=np.int64)
