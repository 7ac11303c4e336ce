"""Single-linkage tree and condensed cluster tree from a minimum spanning tree.

Campello, Moulavi & Sander (2013), "Density-Based Clustering Based on Hierarchical
Density Estimates", PAKDD: HDBSCAN* reads clusters off the single-linkage hierarchy of
the mutual-reachability minimum spanning tree, after condensing it so that a split
counts only when both sides keep at least ``min_cluster_size`` points.

Formats (those of SciPy and of the ``hdbscan`` package, row for row):

* :func:`single_linkage` gives an ``(n - 1, 4)`` float64 array of merges ``(left, right,
  distance, size)``; points are ``0 .. n-1`` and the ``k``-th merge creates ``n + k``.
* :func:`condense_tree` gives a structured array with fields ``parent``, ``child``,
  ``lambda_val`` and ``child_size``: one row per cluster born from a split (child
  ``>= n``) and one per point leaving a cluster (child ``< n``, size 1), at density
  ``lambda = 1 / distance`` (``inf`` at distance 0). The root cluster is ``n``.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["CONDENSED_DTYPE", "condense_tree", "single_linkage"]

CONDENSED_DTYPE = np.dtype([("parent", np.intp), ("child", np.intp),
                            ("lambda_val", np.float64), ("child_size", np.intp)])


@numba.njit(forceinline=True, cache=True)
def _find(up, x):
    r = x
    while up[r] != -1:
        r = up[r]
    while x != r:  # path compression: point the walked path at the root
        nxt = up[x]
        up[x] = r
        x = nxt
    return r


@numba.njit(cache=True)
def _merge(mst, n):
    out = np.empty((mst.shape[0], 4))
    up = np.full(2 * n - 1, -1, dtype=np.intp)  # parent in the merge forest
    size = np.zeros(2 * n - 1, dtype=np.intp)
    size[:n] = 1
    for k in range(mst.shape[0]):
        a = _find(up, np.intp(mst[k, 0]))
        b = _find(up, np.intp(mst[k, 1]))
        new = n + k
        size[new] = size[a] + size[b]
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = a, b, mst[k, 2], size[new]
        up[a] = new
        up[b] = new
    return out


def single_linkage(mst: np.ndarray, n: int) -> np.ndarray:
    """Single-linkage merges of a sorted minimum spanning tree.

    Parameters
    ----------
    mst : ndarray of shape (n - 1, 3)
        Edges ``(u, v, weight)`` sorted by weight, ascending; merges follow this order.
    n : int
        Number of points.

    Returns
    -------
    ndarray of shape (n - 1, 4), float64
        Rows ``(left, right, distance, size)``: ``left`` and ``right`` are the clusters
        holding ``u`` and ``v``, and merge ``k`` creates cluster ``n + k``.
    """
    mst = np.ascontiguousarray(mst, dtype=np.float64).reshape(-1, 3)
    if mst.shape[0] != n - 1 or not np.all((mst[:, :2] >= 0) & (mst[:, :2] < n)):
        raise ValueError(f"not a tree on {n} points: needs {n - 1} edges between 0 .. n-1")
    return _merge(mst, np.intp(n))


@numba.njit(cache=True)
def _condense(hier, min_size):
    n = hier.shape[0] + 1
    parent = np.empty(2 * n, dtype=np.intp)
    child = np.empty(2 * n, dtype=np.intp)
    lam = np.empty(2 * n, dtype=np.float64)
    csize = np.empty(2 * n, dtype=np.intp)
    label = np.empty(2 * n - 1, dtype=np.intp)  # condensed cluster of each kept node
    kept = np.empty(n, dtype=np.intp)  # FIFO of kept merges: breadth-first order
    queue = np.empty(2 * n - 1, dtype=np.intp)  # breadth-first walk of a pruned side
    root = 2 * n - 2
    label[root] = n
    next_label = n + 1
    pos = 0
    head, tail = 0, 0
    if root >= n:
        kept[tail] = root
        tail += 1
    while head < tail:
        node = kept[head]
        head += 1
        row = node - n
        d = hier[row, 2]
        lam_node = 1.0 / d if d > 0.0 else np.inf
        left, right = np.intp(hier[row, 0]), np.intp(hier[row, 1])
        n_left = np.intp(hier[left - n, 3]) if left >= n else 1
        n_right = np.intp(hier[right - n, 3]) if right >= n else 1
        big = (n_left >= min_size, n_right >= min_size)
        for s in range(2):
            side, count = (left, n_left) if s == 0 else (right, n_right)
            if big[0] and big[1]:  # a true split: two new clusters
                label[side] = next_label
                next_label += 1
                parent[pos], child[pos] = label[node], label[side]
                lam[pos], csize[pos] = lam_node, count
                pos += 1
            elif big[s]:  # the only big side carries its parent's cluster on
                label[side] = label[node]
            else:  # a runt: its points leave, in breadth-first order of its subtree
                queue[0] = side
                qh, qt = 0, 1
                while qh < qt:
                    x = queue[qh]
                    qh += 1
                    if x < n:
                        parent[pos], child[pos] = label[node], x
                        lam[pos], csize[pos] = lam_node, 1
                        pos += 1
                    else:
                        queue[qt] = np.intp(hier[x - n, 0])
                        queue[qt + 1] = np.intp(hier[x - n, 1])
                        qt += 2
                continue
            if side >= n:
                kept[tail] = side
                tail += 1
    return parent[:pos], child[:pos], lam[:pos], csize[:pos]


def condense_tree(hierarchy: np.ndarray, min_cluster_size: int) -> np.ndarray:
    """Condense a single-linkage tree, pruning sides smaller than ``min_cluster_size``.

    Merges are visited breadth first from the last one (left side before right). At
    each, a side with fewer than ``min_cluster_size`` points is pruned and its points
    leave the current cluster at ``lambda = 1 / distance``; if both sides are big
    enough, each becomes a new cluster; if one is, it continues the current cluster.

    Parameters
    ----------
    hierarchy : ndarray of shape (n - 1, 4)
        Single-linkage merges as returned by :func:`single_linkage`.
    min_cluster_size : int
        Smallest side that counts as a cluster.

    Returns
    -------
    ndarray, dtype :data:`CONDENSED_DTYPE`
        Rows ``(parent, child, lambda_val, child_size)`` in the order of the walk.
    """
    hier = np.ascontiguousarray(hierarchy, dtype=np.float64).reshape(-1, 4)
    n = hier.shape[0] + 1
    kids = hier[:, :2]  # each node but the root once, below the merge that takes it
    if not (np.all((kids >= 0) & (kids < n + np.arange(n - 1)[:, None])) and np.all(
            np.bincount(kids.astype(np.intp).ravel(), minlength=2 * n - 2) == 1)):
        raise ValueError("not a single-linkage tree: each node must merge exactly once")
    parts = _condense(hier, np.intp(min_cluster_size))
    out = np.empty(parts[0].size, dtype=CONDENSED_DTYPE)
    for name, values in zip(CONDENSED_DTYPE.names, parts):
        out[name] = values
    return out
