"""BKHK anchors: balanced binary hierarchical k-means (Nie, Zhu, Li; Eq. 12–16, Algorithm 1)."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

import graphclust
from graphclust import clamp_anchors

__all__ = ["BKHK", "bkhk"]

_BLOCK = 8192


def _work_array(X) -> np.ndarray:
    """``X`` as a float array: float32 stays float32, small integers become float32
    (exact), everything else float64."""
    X = np.asarray(X)
    if X.dtype == np.float32:
        return X
    if X.dtype.kind in "biu" and X.dtype.itemsize <= 2:
        return X.astype(np.float32)
    return X.astype(np.float64, copy=False)


def _group_sums(X: np.ndarray, rows: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Sum of ``X[rows]`` per group (float64), one sparse indicator product."""
    ind = sp.csr_array(
        (np.ones(rows.size, dtype=X.dtype), (group, rows)), shape=(n_groups, X.shape[0])
    )
    return np.asarray(ind @ X, dtype=np.float64)


def bkhk(X, n_anchors: int, *, rng: np.random.Generator, max_iter: int = 100,
         progress=None) -> tuple[np.ndarray, np.ndarray, dict]:
    """Balanced binary hierarchical k-means.

    Returns ``(anchors (m, d) float64, leaf (n,) int64, info)``; leaves are numbered in
    left-to-right tree order. See :class:`BKHK` for the rules.

    Layout: the rows are kept in a copy ``Xs`` ordered by tree node, so every node is
    a contiguous segment ``[start, start + size)``. Per iteration, the scores of a
    node's points are one BLAS product on its segment; everything else (centre
    updates from the points that changed side, the balanced assignment of all nodes
    of the level by one ``lexsort`` on (node, score), convergence flags, the
    renumbering of the next level) is done for the whole level with array operations.
    """
    Xw = _work_array(X)
    n, d = Xw.shape
    m = int(n_anchors)
    perm = np.arange(n)  # Xs[i] = Xw[perm[i]]
    Xs = Xw if Xw is not X else Xw.copy()
    totals = Xs.sum(axis=0, dtype=np.float64)[None, :]  # per-node sums, kept level to level
    target = np.array([m], dtype=np.int64)  # leaves each node of the level must become
    sizes = np.array([n], dtype=np.int64)
    n_levels = int(np.ceil(np.log2(m))) if m > 1 else 0
    iters_per_level: list[int] = []
    not_converged = 0
    if progress is not None:
        progress.start(n_levels)
    for level in range(n_levels):
        N = target.size
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        node = np.repeat(np.arange(N), sizes)  # node of every (sorted) position
        split = target >= 2
        # Children of node j: "a" must become floor(t/2) leaves and gets kappa points.
        t_a = target // 2
        kappa = np.where(split, (sizes * t_a) // np.maximum(target, 1), sizes)
        # Random balanced start (Algorithm 1, line 2): a random kappa points go to "a".
        order = np.lexsort((rng.random(n), node))
        rank = np.empty(n, dtype=np.int64)
        rank[order] = np.arange(n) - starts[node[order]]
        in_a = rank < kappa[node]
        sum_a = _group_sums(Xs, np.flatnonzero(in_a), node[in_a], N)
        prod = np.zeros(n, dtype=Xs.dtype)  # x·(−2(c_a − c_b)) per sorted position
        active = np.flatnonzero(split)
        n_iter = 0
        while active.size and n_iter < max_iter:
            n_iter += 1
            # Centres of both halves of every active node (Algorithm 1, line 6).
            na = kappa[active].astype(np.float64)
            ca = sum_a[active] / na[:, None]
            cb = (totals[active] - sum_a[active]) / (sizes[active] - na)[:, None]
            # e1 - e2 = ‖x−c_a‖² − ‖x−c_b‖² = ‖c_a‖² − ‖c_b‖² − 2 x·(c_a − c_b)  (Eq. 16)
            const = np.einsum("ij,ij->i", ca, ca) - np.einsum("ij,ij->i", cb, cb)
            D = (-2.0 * (ca - cb)).astype(Xs.dtype)
            # One BLAS product per active node on its contiguous segment; single-threaded
            # (memory-bound gemv; threads only add synchronisation on a busy machine).
            with threadpool_limits(limits=1, user_api="blas"):
                for i, j in enumerate(active):
                    lo, hi = starts[j], starts[j] + sizes[j]
                    np.matmul(Xs[lo:hi], D[i], out=prod[lo:hi])
            # The kappa smallest scores of each active node go to "a" (Eq. 16); ties keep
            # the previous side (so a tie never flips back and forth), then the position.
            is_active = np.zeros(N, dtype=bool)
            is_active[active] = True
            rows = np.flatnonzero(is_active[node])
            nd, ga = node[rows], in_a[rows]
            const_of = np.zeros(N)
            const_of[active] = const
            score = const_of[nd] + prod[rows]
            o = np.lexsort((rows, ~ga, score, nd))
            r = np.arange(rows.size) - np.searchsorted(nd[o], nd[o], side="left")
            new_a = np.empty(rows.size, dtype=bool)
            new_a[o] = r < kappa[nd[o]]
            moved = new_a != ga
            if moved.any():
                # Incremental centre sums: only the points that changed side.
                mv = rows[moved]
                sign = np.where(new_a[moved], 1.0, -1.0).astype(Xs.dtype)
                ind = sp.csr_array((sign, (node[mv], np.arange(mv.size))), shape=(N, mv.size))
                sum_a += np.asarray(ind @ Xs[mv], dtype=np.float64)
                in_a[mv] = new_a[moved]
            changed = np.zeros(N, dtype=bool)
            changed[node[rows[moved]]] = True
            active = np.flatnonzero(changed)
        not_converged += int(active.size)
        iters_per_level.append(n_iter)
        # Next level: "a" points first within each node's segment, children in tree order.
        reorder = np.lexsort((np.arange(n), ~in_a, node))
        Xs = Xs[reorder]
        perm = perm[reorder]
        n_children = np.where(split, 2, 1)
        first_child = np.concatenate(([0], np.cumsum(n_children)[:-1]))
        new_target = np.empty(int(n_children.sum()), dtype=np.int64)
        new_sizes = np.empty_like(new_target)
        new_target[first_child] = np.where(split, t_a, target)
        new_sizes[first_child] = kappa
        second = first_child[split] + 1
        new_target[second] = target[split] - t_a[split]
        new_sizes[second] = sizes[split] - kappa[split]
        new_totals = np.empty((new_target.size, d))
        new_totals[first_child] = np.where(split[:, None], sum_a, totals)
        new_totals[second] = totals[split] - sum_a[split]
        target, sizes, totals = new_target, new_sizes, new_totals
        if progress is not None:
            progress.step(level + 1, n_levels, f"level {level + 1}: {int(split.sum())} splits, "
                          f"{n_iter} iterations")
    if progress is not None:
        progress.end()
    assert target.size == m and np.all(target == 1)
    anchors = totals / sizes[:, None]
    leaf = np.empty(n, dtype=np.int64)
    leaf[perm] = np.repeat(np.arange(m), sizes)
    info = {"n_levels": n_levels, "iterations": iters_per_level,
            "splits_not_converged": not_converged, "leaf_sizes": sizes}
    return anchors, leaf, info


@graphclust.part
class BKHK(graphclust.AnchorSelector):
    """Balanced binary hierarchical k-means anchors (BKHK; Nie, Zhu, Li, Algorithm 1).

    Every node of a binary tree is split by *balanced* 2-means (Eq. 12–16): with the
    two current centres ``c_a, c_b`` the ``κ`` points with the smallest
    ``e₁ − e₂ = ‖x − c_a‖² − ‖x − c_b‖²`` form the first child and the rest the
    second; centres are recomputed and the two steps repeat until the assignment
    does not change (at most ``max_iter`` times). Each split starts from a random
    balanced assignment drawn from ``ctx.rng("bkhk")``. The anchors are the means of
    the ``m`` leaves; :attr:`Anchors.assignment` is the leaf of every point, numbered
    left to right in the tree. A whole tree level is processed at once with array
    operations (one sparse indicator product for the centres, one blocked row-dot
    for the scores and one ``lexsort`` by (node, score) for the balanced assignment),
    and only the nodes whose assignment still changes take part in the next
    iteration. Cost ``O(n d ⌈log₂ m⌉ t)``.

    Rules for what the paper leaves open:

    * **m a power of two** (the paper's case): every split is exactly
      ``⌊s/2⌋ / ⌈s/2⌉`` points (``κ = ⌊s/2⌋``, Eq. 12), ``log₂ m`` levels, leaf
      sizes ``⌊n/m⌋`` or ``⌈n/m⌉``.
    * **any other m**: each node carries the number ``t`` of leaves it must become
      (the root ``m``); a node with ``t ≥ 2`` is split into children that must become
      ``⌊t/2⌋`` and ``⌈t/2⌉`` leaves, holding ``κ = ⌊s·⌊t/2⌋/t⌋`` and ``s − κ``
      points (problem (12) with general ``[κ, ι]``); a node with ``t = 1`` is a leaf.
      This gives exactly ``m`` non-empty leaves of nearly equal size in
      ``⌈log₂ m⌉`` levels, and reduces to the paper's rule when ``m = 2^L``.
    * ``n_anchors > n`` is clamped to ``n`` with a warning; ``m = 1`` gives the mean.
    * **ties and duplicate points**: equal scores keep the side they are on, then go
      by point index, so the split stays exactly balanced and the iteration cannot
      cycle; identical points may land in different leaves, so data with fewer than
      ``m`` distinct points yields repeated anchors (the anchor graph handles ties).
    * A split still changing after ``max_iter`` iterations keeps its last balanced
      assignment and one :class:`graphclust.ConvergenceWarning` names how many did.

    Integer inputs of at most 16 bits and float32 inputs are processed in float32
    (exact for pixels); centre sums are accumulated in float64.
    """

    name = "bkhk"

    n_anchors: int = graphclust.param(
        1024, doc="Number of anchors m (leaves of the tree); the paper uses 1024.",
        check=graphclust.integer(1))
    max_iter: int = graphclust.param(
        100, doc="Maximum balanced 2-means iterations per split (the paper uses 100).",
        check=graphclust.integer(1))

    def select(self, X, ctx) -> graphclust.Anchors:
        X = np.asarray(X)
        m = clamp_anchors(int(self.n_anchors), X.shape[0], who="bkhk")
        points, leaf, info = bkhk(X, m, rng=ctx.rng("bkhk"), max_iter=int(self.max_iter),
                                  progress=ctx.progress)
        if info["splits_not_converged"]:
            warnings.warn(
                f"bkhk: {info['splits_not_converged']} balanced 2-means split(s) still changed "
                f"after max_iter={self.max_iter} iterations",
                graphclust.ConvergenceWarning, stacklevel=2)
        return graphclust.Anchors(points, assignment=leaf, info=info)
