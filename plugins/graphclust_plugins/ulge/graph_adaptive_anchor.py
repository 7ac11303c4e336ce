"""Parameter-free (adaptive-neighbour) anchor graph (Nie, Zhu, Li; Eq. 17–19)."""

from __future__ import annotations

import attrs
import numpy as np
import scipy.sparse as sp

import graphclust
from graphclust.numerics import (adaptive_anchor_rows, as_float, default_block_size,
                                 grouped_nearest, nearest_anchors, self_first_neighbors)

__all__ = ["AdaptiveAnchorGraph", "AdaptiveAnchorState"]


@attrs.frozen
class AdaptiveAnchorState(graphclust.FittedState):
    """What ``adaptive-anchor`` keeps in ``AnchorGraph.state`` to place new points.

    Attributes
    ----------
    leaf_candidates : ndarray of shape (m, c) or None
        For ``search='leaf'``: the candidate anchors searched for a point whose nearest
        anchor is ``j`` (row ``j``); ``None`` when every anchor is searched.
    """

    leaf_candidates: np.ndarray | None = attrs.field(
        default=None, eq=attrs.cmp_using(eq=lambda a, b: np.array_equal(a, b)
                                         if a is not None and b is not None else a is b))


@graphclust.part
class AdaptiveAnchorGraph(graphclust.GraphBuilder):
    """Parameter-free anchor graph: adaptive-neighbour weights over the k nearest anchors (Eq. 17–18).

    Row ``i`` of ``Z`` solves problem (17) with ``γ`` chosen so that exactly ``k``
    anchors get weight, which gives Eq. (18): with the squared Euclidean distances
    ``d_1 ≤ … ≤ d_{k+1}`` to the ``k + 1`` nearest anchors,
    ``z_ij = (d_{k+1} − d_j) / (k·d_{k+1} − Σ_{j'≤k} d_{j'})`` for the ``k`` nearest and
    ``0`` elsewhere (:func:`graphclust.numerics.adaptive_anchor_rows`). No bandwidth, rows nonnegative and summing to one, so
    ``W = Z Δ⁻¹ Zᵀ`` (Eq. 19) is symmetric, PSD and doubly stochastic. ``Z`` is built
    in row blocks and stored sparse (``k`` entries per row).

    Rules:

    * **zero denominator** (all ``k + 1`` distances equal, e.g. duplicate anchors or
      a point equidistant from them): uniform weights ``1/k`` on the ``k`` chosen.
    * **ties**: an anchor tied with the ``(k+1)``-th distance gets weight 0 and is
      dropped from the sparse row, so ``Z`` does not depend on how ties are broken
      (except in the uniform case above).
    * ``k ≥ m``: ``k`` is lowered to ``m − 1`` (there must be a ``(k+1)``-th anchor);
      ``m = 1`` gives the all-ones column.

    ``search = "leaf"`` is the fast search of the ULGE authors' code: a point only
    looks at the ``candidates · k`` anchors nearest to its *own* anchor — its BKHK
    leaf (:attr:`Anchors.assignment`), or for new points in :meth:`transform` and for
    anchors without an assignment, its nearest anchor — so building ``Z`` costs
    ``O(n · candidates · k · d)`` instead of ``O(n · m · d)``
    (:func:`graphclust.numerics.self_first_neighbors` for the candidate lists,
    :func:`graphclust.numerics.grouped_nearest` for the search). It equals the exact
    search whenever ``candidates · k ≥ m``; otherwise a point may miss a true
    neighbour (see the bundle docs for the measured cost). ``search = "exact"``
    (default, the paper's Eq. 18 as written) compares every point with all anchors.
    """

    name = "adaptive-anchor"
    produces = graphclust.GraphKind.ANCHOR
    needs_anchors = True
    chunkwise = True  # no global state but the candidate lists; rows are transform()

    n_neighbors: int = graphclust.param(
        5, doc="Number k of nearest anchors with nonzero weight (Eq. 18; the paper uses 5).",
        check=graphclust.integer(1))
    search: str = graphclust.param(
        "exact", doc="'exact' (all anchors) or 'leaf' (only anchors near the point's BKHK leaf).",
        check=graphclust.one_of("exact", "leaf"))
    candidates: int = graphclust.param(
        10, doc="For search='leaf': candidates per point, as a multiple of k (the authors use 10).",
        check=graphclust.integer(1))

    def _k(self, m: int) -> int:
        return max(1, min(int(self.n_neighbors), m - 1))

    def _n_candidates(self, m: int, k: int) -> int:
        return int(min(m, max(k + 1, int(self.candidates) * k)))

    def _rows(self, X: np.ndarray, U: np.ndarray, own: np.ndarray | None,
              cand: np.ndarray | None, progress=None) -> sp.csr_array:
        n, m = X.shape[0], U.shape[0]
        if m == 1:
            return sp.csr_array(np.ones((n, 1)))
        k = self._k(m)
        if self.search == "leaf" and cand is not None and cand.shape[1] < m:
            if own is None:
                own = nearest_anchors(X, U, 1)[0][:, 0]
            idx, dist = grouped_nearest(X, U, own, cand, k + 1)
        else:
            idx, dist = nearest_anchors(X, U, k + 1, block_size=default_block_size(m, 64 * 2**20),
                                        progress=progress)
        return adaptive_anchor_rows(idx, dist, m, k)

    def build(self, X, anchors, ctx) -> graphclust.AnchorGraph:
        X = as_float(X)
        U = np.asarray(anchors.points)
        if X.dtype == np.float32:
            U = U.astype(np.float32)
        m = U.shape[0]
        k = self._k(m)
        cand = None
        if self.search == "leaf" and m > 1:
            cand = self_first_neighbors(U, self._n_candidates(m, k))
        own = anchors.assignment
        if own is not None and np.asarray(own).shape[0] != X.shape[0]:
            own = None
        Z = self._rows(X, U, None if own is None else np.asarray(own, dtype=np.int64), cand,
                       ctx.progress)
        info = {"n_neighbors": k, "search": self.search}
        return graphclust.AnchorGraph(Z, anchors=anchors, info=info,
                                      state=AdaptiveAnchorState(leaf_candidates=cand))

    def transform(self, X_new, graph) -> sp.csr_array:
        """Rows of ``Z`` for new points (for ``search='leaf'``: nearest anchor first)."""
        X_new = as_float(X_new)
        U = np.asarray(graph.anchors.points)
        if X_new.dtype == np.float32:
            U = U.astype(np.float32)
        state = graphclust.fitted_state(graph, AdaptiveAnchorState, f"graph {self.name!r}")
        cand = state.leaf_candidates
        return self._rows(X_new, U, None, cand if self.search == "leaf" else None)

    def prepare_chunked(self, anchors, chunks, ctx) -> graphclust.AnchorGraph:
        """The fitted graph without rows (chunked runs): the anchors and, for
        ``search='leaf'``, their candidate lists. Every block's rows are then
        :meth:`transform`'s, which with ``search='exact'`` are exactly :meth:`build`'s; with
        ``'leaf'`` a point starts from its nearest anchor, as new points do, instead of
        its BKHK leaf (the selector saw only a sample)."""
        U = np.asarray(anchors.points)
        m = U.shape[0]
        cand = None
        if self.search == "leaf" and m > 1:
            cand = self_first_neighbors(U, self._n_candidates(m, self._k(m)))
        info = {"n_neighbors": self._k(m), "search": self.search}
        return graphclust.AnchorGraph(np.zeros((0, m)), anchors=anchors, info=info,
                                      state=AdaptiveAnchorState(leaf_candidates=cand))
