"""The :class:`Solution` a solver returns."""

from __future__ import annotations

import attrs
import numpy as np
import scipy.sparse as sp

from graphclust._contracts import SolutionField

__all__ = ["Solution"]


def _opt_array(value):
    return None if value is None else np.asarray(value)


def _opt_soft(value):
    """A dense soft assignment as an ndarray; a sparse one as a CSR array, kept sparse
    (a hard partition lifted by a few edge shares has a handful of entries a row: at
    ``n = 10**6``, ``k = 100`` its dense form would take 800 MB)."""
    if value is not None and sp.issparse(value):
        return sp.csr_array(value)
    return _opt_array(value)


@attrs.define(eq=False)
class Solution:
    """What a :class:`~graphclust.Solver` produces.

    At least one of ``embedding`` and ``soft`` is set.

    Attributes
    ----------
    embedding : ndarray of shape (n, p) or None
        A real-valued embedding of the points (spectral coordinates, codes...).
    soft : ndarray or scipy sparse array of shape (n, k), or None
        A nonnegative soft assignment of points to ``k`` clusters. A sparse one (kept as
        a CSR array; the ``leiden`` solver's) is read row by row by the ``argmax``
        rounding, the one rounding that reads a soft assignment, and densified by an
        adapter that lifts it (its ``m x k`` anchor rows are small).
    objective : ndarray of shape (n_iter,)
        Objective value after each iteration (empty for direct solvers).
    n_iter : int
        Iterations run.
    converged : bool
        Whether the stopping rule held before ``max_iter``.
    anchor_embedding, anchor_soft : ndarray of shape (m, p) / (m, k) or None
        For solvers on an :class:`~graphclust.AnchorGraph`: per-anchor values such that
        a point with anchor row ``z`` gets ``z @ anchor_embedding`` (out-of-sample
        extension used by ``predict``).
    projection : ndarray of shape (d, p) or None
        A linear map of the features, ``(X - center) @ projection`` (used by ``transform``).
    center : ndarray of shape (d,) or None
        The feature mean removed before ``projection``.
    history : dict of str to ndarray
        Other per-iteration traces (e.g. ``"label_change"``, ``"gap"``).
    info : dict
        Other diagnostics.
    """

    embedding: np.ndarray | None = attrs.field(default=None, converter=_opt_array)
    soft: np.ndarray | sp.csr_array | None = attrs.field(default=None, converter=_opt_soft)
    objective: np.ndarray = attrs.field(factory=lambda: np.empty(0), converter=np.asarray)
    n_iter: int = 0
    converged: bool = True
    anchor_embedding: np.ndarray | None = attrs.field(default=None, converter=_opt_array)
    anchor_soft: np.ndarray | None = attrs.field(default=None, converter=_opt_array)
    projection: np.ndarray | None = attrs.field(default=None, converter=_opt_array)
    center: np.ndarray | None = attrs.field(default=None, converter=_opt_array)
    history: dict = attrs.field(factory=dict)
    info: dict = attrs.field(factory=dict)

    def __attrs_post_init__(self):
        if self.embedding is None and self.soft is None:
            raise ValueError("a Solution needs an embedding or a soft assignment")
        if self.embedding is not None and self.embedding.ndim != 2:
            raise ValueError(f"embedding must be 2-D, got shape {self.embedding.shape}")
        if self.soft is not None:
            if self.soft.ndim != 2:
                raise ValueError(f"soft assignment must be 2-D, got shape {self.soft.shape}")
            if self.soft.shape[0] * self.soft.shape[1] and self.soft.min() < 0:
                raise ValueError("soft assignment must be nonnegative")
        if self.embedding is not None and self.soft is not None:
            if self.embedding.shape[0] != self.soft.shape[0]:
                raise ValueError("embedding and soft assignment have different numbers of rows")

    @property
    def n(self) -> int:
        arr = self.embedding if self.embedding is not None else self.soft
        return int(arr.shape[0])

    @property
    def provides(self) -> frozenset[SolutionField]:
        """What this solution offers a rounding: both :class:`~graphclust.SolutionField`
        values or one of them."""
        out = set()
        if self.embedding is not None:
            out.add(SolutionField.EMBEDDING)
        if self.soft is not None:
            out.add(SolutionField.SOFT)
        return frozenset(out)

    @property
    def extendable(self) -> bool:
        """Whether new points can be placed (a feature projection or per-anchor values)."""
        return (self.projection is not None or self.anchor_embedding is not None
                or self.anchor_soft is not None)

    def extend(self, Z_new=None, X_new=None) -> Solution:
        """Solution rows for new points.

        The embedding comes from the feature projection, ``(X_new - center) @ projection``,
        when there is one, else from the anchor rows, ``Z_new @ anchor_embedding``; the
        soft assignment from ``Z_new @ anchor_soft``.
        """
        if not self.extendable:
            raise ValueError("this solution has no projection or per-anchor values to extend "
                             "to new points")
        emb = soft = None
        if self.projection is not None and X_new is not None:
            center = 0.0 if self.center is None else self.center
            emb = np.asarray((X_new - center) @ self.projection)
        elif self.anchor_embedding is not None and Z_new is not None:
            emb = np.asarray(Z_new @ self.anchor_embedding)
        if self.anchor_soft is not None and Z_new is not None:
            soft = np.asarray(Z_new @ self.anchor_soft)
        if emb is None and soft is None:
            raise ValueError("extend needs X_new for a projection or Z_new for anchor values")
        return Solution(embedding=emb, soft=soft, info={"extended": True})
