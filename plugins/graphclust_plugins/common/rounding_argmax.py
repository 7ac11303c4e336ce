"""Argmax rounding of a soft assignment."""

from __future__ import annotations

import graphclust
import numpy as np
import scipy.sparse as sp
from graphclust.numerics import sparse_row_argmax, sparse_row_margin

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
    * A sparse soft assignment (e.g. the ``leiden`` solver's) is read row by row
      (:func:`graphclust.numerics.sparse_row_argmax`), never densified: the same labels,
      confidence and probabilities as its dense form.
    """

    name = "argmax"
    needs = graphclust.SolutionField.SOFT
    chunkwise = True  # round() on a uniform sample of rows, assign() per block

    @staticmethod
    def _soft(solution):
        """The solution's soft assignment as float64: an ndarray, or a CSR array when the
        solver handed a sparse one (read row by row, never densified)."""
        if solution.soft is None:
            raise ValueError("rounding 'argmax' needs a solution with a soft assignment")
        if sp.issparse(solution.soft):
            return sp.csr_array(solution.soft, dtype=np.float64)
        return np.asarray(solution.soft, dtype=np.float64)

    def _argmax(self, S, fallback: int) -> np.ndarray:
        if sp.issparse(S):
            raw, top = sparse_row_argmax(S)
            zero = ~(top > 0)
        else:
            raw = S.argmax(axis=1)
            zero = ~(S > 0).any(axis=1)
        raw[zero] = fallback
        return raw

    def round(self, solution, n_clusters, ctx):
        S = self._soft(solution)
        fallback = int(np.argmax(np.asarray(S.sum(axis=0)).ravel())) if S.shape[1] else 0
        if S.shape[1] == 0:
            S = np.zeros((S.shape[0], 1))
        raw = self._argmax(S, fallback)
        labels, kept = consecutive(raw)
        self.columns_ = kept
        self.fallback_ = int(np.searchsorted(kept, fallback)) if fallback in kept else 0
        return labels

    def _kept(self, solution):
        if not hasattr(self, "columns_"):
            raise RuntimeError("rounding 'argmax': call round() before assign()")
        S = self._soft(solution)
        if np.array_equal(self.columns_, np.arange(S.shape[1])):
            return S
        return S[:, self.columns_]

    def confidence(self, solution, labels):
        """The normalised margin ``(s_own − s_rival) / s_own`` of the row's soft
        assignment (its label's entry against the largest other): 1 when only its label
        has mass, 0 on a tie or an all-zero row. A sparse soft assignment is read row
        by row (its missing entries are 0)."""
        S = self._kept(solution)
        labels = np.asarray(labels, dtype=np.int64)
        n, k = S.shape
        if sp.issparse(S):
            S = S.maximum(0.0) if S.nnz and S.data.min() < 0 else S
            own, rival = sparse_row_margin(S, labels)
            if k < 2:
                return (own > 0).astype(np.float64)
            return np.divide(own - rival, own, out=np.zeros(n), where=own > 0).clip(0.0, 1.0)
        S = np.maximum(S, 0.0)
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
        S = self._kept(solution)
        return S.maximum(0.0) if sp.issparse(S) else np.maximum(S, 0.0)

    def assign(self, solution):
        if not hasattr(self, "columns_"):
            raise RuntimeError("rounding 'argmax': call round() before assign()")
        return np.asarray(self._argmax(self._kept(solution), self.fallback_), dtype=np.int64)
