"""Exactly ``k`` clusters from an HDBSCAN condensed tree (Campello, Moulavi, Sander 2013).

The condensed tree has one row per (parent cluster, child) pair: a child below ``n``
is a point that leaves its parent at density ``λ = 1/distance``; a child at or above
``n`` is a cluster born at that ``λ`` when its parent splits. The root is ``n``.

Stability of a cluster ``C`` born at ``λ_birth(C)`` (Campello et al. 2013, Eq. 3):
``S(C) = Σ_{rows with parent C} (λ − λ_birth(C)) · size``. HDBSCAN's excess-of-mass
selection picks the set of clusters, one on every root-to-leaf path and never the
root, that maximises ``Σ S``. :func:`select_k` picks, among such sets with exactly
``k`` clusters, the one of largest total stability: a knapsack over the tree,
``best(C, j) = max(S(C) if j = 1, max over j_1 + … = j of Σ best(child, j_c))``.
With ``k`` equal to the number excess of mass finds, it is that selection (up to
ties).
"""

from __future__ import annotations

import numpy as np

__all__ = ["CondensedTree", "excess_of_mass", "label_points", "select_k"]


class CondensedTree:
    """The cluster part of a condensed tree as arrays.

    Parameters
    ----------
    tree : structured ndarray with fields parent, child, lambda_val, child_size
        :func:`graphclust_plugins.manifold._linkage.condense_tree`'s rows (the format
        of ``hdbscan``'s ``condensed_tree_.to_numpy()``).
    n : int
        Number of points.
    """

    def __init__(self, tree: np.ndarray, n: int):
        self.n = int(n)
        parent = np.asarray(tree["parent"], dtype=np.int64)
        child = np.asarray(tree["child"], dtype=np.int64)
        lam = np.asarray(tree["lambda_val"], dtype=np.float64)
        size = np.asarray(tree["child_size"], dtype=np.float64)
        finite = np.isfinite(lam)
        # λ = ∞ (points leaving at distance 0: duplicates) counts as the densest level
        lam = np.where(finite, lam, lam[finite].max(initial=0.0))
        self.root = self.n
        n_clusters = int(max(parent.max(initial=self.n), child.max(initial=self.n))) + 1 - self.n
        self.n_nodes = max(n_clusters, 1)
        is_cluster = child >= self.n
        # cluster id c is stored at c - n
        self.parent = np.full(self.n_nodes, -1, dtype=np.int64)
        self.birth = np.zeros(self.n_nodes)
        self.parent[child[is_cluster] - self.n] = parent[is_cluster] - self.n
        self.birth[child[is_cluster] - self.n] = lam[is_cluster]
        self.children: list[list[int]] = [[] for _ in range(self.n_nodes)]
        for p, c in sorted(zip(parent[is_cluster] - self.n, child[is_cluster] - self.n)):
            self.children[int(p)].append(int(c))
        p_idx = parent - self.n
        self.stability = np.bincount(p_idx, weights=(lam - self.birth[p_idx]) * size,
                                     minlength=self.n_nodes)
        # each point's cluster (where it falls out); points missing from the tree: root
        self.point_parent = np.zeros(self.n, dtype=np.int64)
        pts = ~is_cluster
        self.point_parent[child[pts]] = parent[pts] - self.n
        self.order = self._top_down()
        leaves = np.zeros(self.n_nodes, dtype=np.int64)
        for c in reversed(self.order):
            kids = self.children[c]
            leaves[c] = 1 if not kids else sum(leaves[k] for k in kids)
        self.leaves = leaves

    def _top_down(self) -> list[int]:
        out, stack = [], [0]
        while stack:
            c = stack.pop()
            out.append(c)
            stack.extend(reversed(self.children[c]))
        return out

    @property
    def max_clusters(self) -> int:
        """The most clusters a selection can have (the tree's leaves)."""
        return int(self.leaves[0])


def select_k(tree: CondensedTree, k: int) -> list[int]:
    """The ``k`` clusters (node ids, root = 0) of largest total stability that cover every
    root-to-leaf path once; ``k = 1`` is the root. ``k`` must be at most
    ``tree.max_clusters``. Ties go to the split found first (children in id order)."""
    if not 1 <= k <= tree.max_clusters:
        raise ValueError(f"k must be in [1, {tree.max_clusters}], got {k}")
    if k == 1:
        return [0]
    neg = -np.inf
    best: dict[int, np.ndarray] = {}
    choice: dict[int, list[np.ndarray]] = {}
    for c in reversed(tree.order):  # children before parents
        cap = int(min(k, tree.leaves[c]))
        kids = tree.children[c]
        # combine children one by one: acc[j] = best total with j clusters so far
        acc = np.array([0.0])
        splits = []
        for kid in kids:
            kb = best[kid]
            new = np.full(min(cap, acc.size - 1 + kb.size - 1) + 1, neg)
            arg = np.zeros(new.size, dtype=np.int64)
            for j_kid in range(1, kb.size):
                if kb[j_kid] == neg:
                    continue
                for j_acc in range(acc.size):
                    j = j_acc + j_kid
                    if j >= new.size or acc[j_acc] == neg:
                        continue
                    val = acc[j_acc] + kb[j_kid]
                    if val > new[j]:
                        new[j], arg[j] = val, j_kid
            acc = new
            splits.append(arg)
        own = np.full(cap + 1, neg)
        if c != 0:
            own[1] = tree.stability[c]
        if kids:
            m = min(own.size, acc.size)
            own[2:m] = acc[2:m]
        best[c] = own
        choice[c] = splits
    if best[0][k] == neg:  # pragma: no cover - excluded by max_clusters
        raise ValueError(f"no selection of {k} clusters")
    # walk back down
    selected: list[int] = []
    todo = [(0, k)]
    while todo:
        c, j = todo.pop()
        if j == 1 and c != 0:
            selected.append(c)
            continue
        kids = tree.children[c]
        rest = j
        for i in range(len(kids) - 1, -1, -1):
            j_kid = int(choice[c][i][rest])
            todo.append((kids[i], j_kid))
            rest -= j_kid
    return sorted(selected)


def excess_of_mass(tree: CondensedTree) -> list[int]:
    """HDBSCAN's own selection (Campello et al. 2013, Sec. 4; the root excluded): bottom
    up, a cluster is kept when its stability is at least the best total of its
    children's selections (it wins a tie), else it passes that total up. Returns the
    kept clusters (node ids, sorted); ``[]`` when the root never splits."""
    total = tree.stability.astype(np.float64).copy()
    keep = np.zeros(tree.n_nodes, dtype=bool)
    for c in reversed(tree.order):  # children before parents
        if c == 0:
            continue
        below = sum(total[k] for k in tree.children[c])
        if tree.children[c] and below > total[c]:
            total[c] = below
        else:
            keep[c] = True
    selected, todo = [], list(tree.children[0])
    while todo:
        c = todo.pop()
        if keep[c]:
            selected.append(c)
        else:
            todo.extend(tree.children[c])
    return sorted(selected)


def label_points(tree: CondensedTree, selected: list[int]) -> np.ndarray:
    """Label ``i`` for the points under ``selected[i]`` (their path from the root meets
    it), ``-1`` for the others (they left the tree above every selected cluster)."""
    owner = np.full(tree.n_nodes, -1, dtype=np.int64)
    pos = {c: i for i, c in enumerate(selected)}
    for c in tree.order:
        if c in pos:
            owner[c] = pos[c]
        elif tree.parent[c] >= 0:
            owner[c] = owner[tree.parent[c]]
    return owner[tree.point_parent]
