"""HDBSCAN's minimum spanning tree, exact, by Borůvka's rounds over a k-d tree.

Campello, Moulavi & Sander (2013), PAKDD, Def. 3: the mutual reachability distance of
rows ``p`` and ``q`` is ``w(p, q) = max(core(p), core(q), ‖x_p − x_q‖)``, ``core(p)``
the distance to the ``min_samples``-th nearest other row (the ``hdbscan`` package's
``min_samples``; scikit-learn's counts ``p`` itself). HDBSCAN's hierarchy is the single-linkage tree of the
minimum spanning tree of ``w``.

Borůvka (1926): every component joins the component at the other end of its lightest
outgoing edge, until one is left (at most ``log2 n`` rounds). Each round here:

1. every row's lightest edge to another component among its nearest rows (the first
   :data:`~graphclust_plugins.manifold._kdtree` ``core_sqdist`` keeps) bounds its
   component's lightest edge;
2. every row that can still beat its component's bound (``core(p)`` at most the bound)
   searches the k-d tree for its lightest edge out of the component, skipping nodes whose
   rows all belong to its component and nodes whose lower bound
   ``max(core(p), min core in the node, distance to the node's box)`` exceeds the bound;
   the bound is lowered as rows find edges;
3. each component keeps its first outgoing edge in the order below, and the edges are
   joined in component order.

Edges are compared by ``(w², ‖x_p − x_q‖², min(p, q), max(p, q))``, a strict order, so
the tree is the unique minimum spanning tree under that order, the same for any thread
count and any order in which rows lower the bounds (a row's search returns its first
edge among those no heavier than the bound, and the bound never drops below its
component's lightest edge). Ties in ``w`` are common: on every edge inside a core
neighbourhood ``w = max(core(p), core(q))``. The distance breaks them, so a row equally
reachable from two clusters joins through its nearer neighbour (the ``hdbscan`` package
leaves such ties to its traversal order), and the returned edges are in this order, the
order in which the single-linkage tree merges them. Rows are searched in parallel in
tree order.
"""

from __future__ import annotations

import numba
import numpy as np

from graphclust_plugins.manifold._jit import PARALLEL
from graphclust_plugins.manifold._kdtree import box_sqdist, build, core_sqdist
from graphclust_plugins.manifold._linkage import _find

__all__ = ["mutual_reachability_mst"]


@numba.njit(cache=True)
def _node_minimum(values, perm, start, stop, first_leaf, out):
    for node in range(start.size - 1, -1, -1):
        if node >= first_leaf:
            m = np.inf
            for t in range(start[node], stop[node]):
                m = min(m, values[perm[t]])
            out[node] = m
        else:
            out[node] = min(out[2 * node + 1], out[2 * node + 2])


@numba.njit(cache=True)
def _node_components(comp, perm, start, stop, first_leaf, out):
    """``out[node]``: the component of all the node's rows, ``-1`` if they differ."""
    for node in range(start.size - 1, -1, -1):
        if node >= first_leaf:
            s, e = start[node], stop[node]
            c = comp[perm[s]] if e > s else -1
            for t in range(s + 1, e):
                if comp[perm[t]] != c:
                    c = -1
                    break
            out[node] = c
        else:
            a, b = out[2 * node + 1], out[2 * node + 2]
            out[node] = a if a == b else -1


@numba.njit(forceinline=True, cache=True)
def _better(w, d, a, b, w0, d0, a0, b0):
    """Edge ``(w, d, a, b)`` before edge ``(w0, d0, a0, b0)`` (``a < b``; ``a0 = -1``:
    none)."""
    if a0 < 0 or w < w0:
        return True
    if w > w0:
        return False
    return d < d0 or (d == d0 and (a < a0 or (a == a0 and b < b0)))


@numba.njit(cache=True)
def _search(p, X, core2, comp, perm, start, stop, lo, hi, first_leaf, node_comp,
            node_core2, bound, stack):
    """Row ``p``'s first edge out of its component, in the order of the module's
    docstring, among those no heavier than ``bound[comp[p]]`` (lowering it):
    ``(w², d², q)``, ``q = -1`` if none."""
    cp = comp[p]
    x = X[p]
    c2 = core2[p]
    mw, md, mq = np.inf, np.inf, -1  # the first edge found
    lim = bound[cp]  # prune above it (other rows may lower it meanwhile)
    top = 0
    stack[0] = 0
    while top >= 0:
        node = stack[top]
        top -= 1
        if node_comp[node] == cp:
            continue
        lim = min(lim, bound[cp])
        if max(c2, node_core2[node], box_sqdist(x, lo, hi, node)) > lim:
            continue
        if node >= first_leaf:
            for t in range(start[node], stop[node]):
                q = perm[t]
                if comp[q] == cp:
                    continue
                w = max(c2, core2[q])
                if w > lim:
                    continue
                s = 0.0
                for k in range(x.size):
                    u = x[k] - X[q, k]
                    s += u * u
                w = max(w, s)
                if w <= lim and (w < mw or (w == mw and (s < md or (s == md and q < mq)))):
                    mw, md, mq = w, s, q
                    lim = w
            if mq >= 0 and mw < bound[cp]:
                bound[cp] = mw
            continue
        a, b = 2 * node + 1, 2 * node + 2
        if box_sqdist(x, lo, hi, a) <= box_sqdist(x, lo, hi, b):
            a, b = b, a
        stack[top + 1] = a
        stack[top + 2] = b
        top += 2
    return mw, md, mq


@numba.njit(parallel=PARALLEL, cache=True)
def _round(X, core2, comp, perm, start, stop, lo, hi, first_leaf, node_comp, node_core2,
           knn_d2, knn_idx, bound, best_w, best_d, best_q, depth):
    n = X.shape[0]
    # 1. bounds from the nearest rows (one thread: ``keep`` reads a row, and a parallel
    # loop of its own would cost a first run a compilation)
    for p in range(n):
        cp = comp[p]
        w0, q0 = np.inf, -1
        for j in range(knn_idx.shape[1]):
            q = knn_idx[p, j]
            if comp[q] != cp:
                w0 = min(w0, max(core2[p], core2[q], knn_d2[p, j]))
                q0 = q
        best_w[p], best_q[p] = w0, q0
    for c in range(n):
        bound[c] = np.inf
    for p in range(n):
        if best_q[p] >= 0 and best_w[p] < bound[comp[p]]:
            bound[comp[p]] = best_w[p]
    # 2. the searches (bound only lowered; see the module's docstring)
    for t in numba.prange(0, n):
        p = perm[t]
        if core2[p] > bound[comp[p]]:
            best_q[p] = -1
            continue
        stack = np.empty(2 * depth + 2, dtype=np.int64)
        best_w[p], best_d[p], best_q[p] = _search(p, X, core2, comp, perm, start, stop, lo,
                                                  hi, first_leaf, node_comp, node_core2,
                                                  bound, stack)


@numba.njit(cache=True)
def _join(comp, parent, best_w, best_d, best_q, edges, n_edges):
    """3. Each component's lightest edge, joined in component order; ``comp`` relabelled
    (a component's label is its root row). Returns the new edge count."""
    n = comp.size
    ew = np.full(n, np.inf)
    ed = np.full(n, np.inf)
    ea = np.full(n, -1, dtype=np.int64)
    eb = np.full(n, -1, dtype=np.int64)
    for p in range(n):
        q = best_q[p]
        if q < 0:
            continue
        c = comp[p]
        a, b = min(p, q), max(p, q)
        if _better(best_w[p], best_d[p], a, b, ew[c], ed[c], ea[c], eb[c]):
            ew[c], ed[c], ea[c], eb[c] = best_w[p], best_d[p], a, b
    for c in range(n):
        if ea[c] < 0:
            continue
        ra, rb = _find(parent, ea[c]), _find(parent, eb[c])
        if ra == rb:
            continue  # the other component chose the same edge
        parent[max(ra, rb)] = min(ra, rb)
        edges[n_edges, 0] = ea[c]
        edges[n_edges, 1] = eb[c]
        edges[n_edges, 2] = np.sqrt(ew[c])
        edges[n_edges, 3] = ed[c]
        n_edges += 1
    for p in range(n):
        comp[p] = _find(parent, p)
    return n_edges


def mutual_reachability_mst(X: np.ndarray, min_samples: int) -> tuple[np.ndarray, np.ndarray]:
    """The minimum spanning tree of the mutual reachability distance of the rows of ``X``.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Rows (converted to float64).
    min_samples : int
        Other rows in a core neighbourhood (clipped to ``[0, n - 1]``; 0: every core
        distance is 0 and ``w`` is the distance).

    Returns
    -------
    mst : ndarray of float64, shape (n - 1, 3)
        Edges ``(p, q, w)`` with ``p < q``, in the order of the module's docstring (the
        single-linkage tree merges them in this order).
    core : ndarray of float64, shape (n,)
        The core distances.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    tree = build(X)
    knn_d2, knn_idx, core2 = core_sqdist(tree, int(min_samples) + 1)
    node_core2 = np.empty(tree.n_nodes)
    _node_minimum(core2, tree.perm, tree.start, tree.stop, tree.first_leaf, node_core2)
    comp = np.arange(n, dtype=np.int64)
    parent = np.full(n, -1, dtype=np.int64)  # union-find: -1 at a root (_linkage._find)
    node_comp = np.empty(tree.n_nodes, dtype=np.int64)
    bound = np.empty(n)
    best_w = np.empty(n)
    best_d = np.empty(n)
    best_q = np.empty(n, dtype=np.int64)
    edges = np.empty((max(n - 1, 0), 4))  # p, q, w, squared distance
    n_edges = 0
    depth = int(np.log2(tree.n_nodes + 1)) + 1
    while n_edges < n - 1:
        _node_components(comp, tree.perm, tree.start, tree.stop, tree.first_leaf, node_comp)
        _round(X, core2, comp, tree.perm, tree.start, tree.stop, tree.lo, tree.hi,
               tree.first_leaf, node_comp, node_core2, knn_d2, knn_idx, bound, best_w,
               best_d, best_q, depth)
        before = n_edges
        n_edges = _join(comp, parent, best_w, best_d, best_q, edges, n_edges)
        if n_edges == before:  # pragma: no cover - every component has an outgoing edge
            raise RuntimeError("Borůvka's round joined no components")
    order = np.lexsort((edges[:, 1], edges[:, 0], edges[:, 3], edges[:, 2]))
    return np.ascontiguousarray(edges[order, :3]), np.sqrt(core2)
