"""The BKHK tree: balanced binary hierarchical k-means without copying the data
(Nie, Zhu, Li; Eq. 12–16, Algorithm 1).

The tree is grown one level at a time. Every point carries the id of its node at the
current level (``node``, in the caller's row order); the data matrix is never
reordered or copied as a whole, so the working memory beyond ``X`` is a few arrays of
length ``n`` plus one bounded block:

* **top levels** (at most ``stream_max_nodes`` nodes, each holding a large share of
  the points) *stream* over ``X`` in row blocks: one iteration computes
  ``x·(−2(c_a − c_b))`` for every point against the direction of its own node as one
  ``block × nodes`` matrix product per block;
* **deeper levels** gather the rows of a few consecutive nodes at a time (at most
  ``group_bytes``) into a contiguous buffer and run all iterations of those nodes on it
  while it is in cache; the nodes of a group are processed together with array
  operations (one ``lexsort`` by (node, score) for the balanced assignment). A single
  node larger than ``group_bytes`` (large ``n``) is gathered alone and split with the
  bounded iteration of the top levels.

Both paths implement the same rule (the ``κ`` smallest ``e₁ − e₂`` of a node go to its
first child; ties keep their side, then go by row index) and give the same tree.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from graphclust.numerics import float_dtype

__all__ = ["bkhk"]

_CHUNK = 8192
STREAM_MAX_NODES = 8
GROUP_BYTES = 16 * 2**20


def _signed_sums(X, rows, groups, signs, n_groups: int, wdt) -> np.ndarray:
    """``Σ signs[i] · X[rows[i]]`` per group, float64, gathered ``_CHUNK`` rows at a time."""
    out = np.zeros((n_groups, X.shape[1]))
    for lo in range(0, rows.size, _CHUNK):
        r = rows[lo:lo + _CHUNK]
        ind = sp.csr_array((np.asarray(signs[lo:lo + _CHUNK], dtype=wdt),
                            (groups[lo:lo + _CHUNK], np.arange(r.size))),
                           shape=(n_groups, r.size))
        out += ind @ np.asarray(X[r], dtype=wdt)
    return out


def _column_sums(X, wdt) -> np.ndarray:
    out = np.zeros(X.shape[1])
    for lo in range(0, X.shape[0], _CHUNK):
        out += np.asarray(X[lo:lo + _CHUNK], dtype=wdt).sum(axis=0, dtype=np.float64)
    return out


def _centres(sum_a, totals, sizes, kappa, active, wdt):
    """Half centres of the active nodes; returns ``const = ‖c_a‖² − ‖c_b‖²`` and the
    directions ``−2(c_a − c_b)`` (Eq. 16: ``e₁ − e₂ = const + x·direction``)."""
    na = kappa[active].astype(np.float64)
    ca = sum_a[active] / na[:, None]
    cb = (totals[active] - sum_a[active]) / (sizes[active] - na)[:, None]
    const = np.einsum("ij,ij->i", ca, ca) - np.einsum("ij,ij->i", cb, cb)
    return const, (-2.0 * (ca - cb)).astype(wdt)


def _balanced_side(score: np.ndarray, in_a: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` smallest scores (ties: current side "a" first, then position)."""
    s = score.size
    if k <= 0 or k >= s:
        return np.full(s, k >= s)
    v = np.partition(score, k - 1)[k - 1]
    new = score < v
    eq = np.flatnonzero(score == v)
    need = k - int(np.count_nonzero(new))
    if need == eq.size:
        new[eq] = True
    else:
        new[eq[np.lexsort((eq, ~in_a[eq]))[:need]]] = True
    return new


def _row_norms(X, wdt) -> np.ndarray:
    out = np.empty(X.shape[0])
    for lo in range(0, X.shape[0], _CHUNK):
        B = np.asarray(X[lo:lo + _CHUNK], dtype=wdt)
        out[lo:lo + _CHUNK] = np.sqrt(np.einsum("ij,ij->i", B, B, dtype=np.float64))
    return out


def _split_streaming(X, node, in_a, sizes, kappa, totals, split, wdt, max_iter, norms):
    """All splits of a top level, streaming over ``X`` (few, large nodes).

    Scores are not recomputed for points that cannot change side: each point keeps
    an interval ``[lo, hi]`` around its score, widened every iteration by how far its
    node's centres moved (``e₁ − e₂ = const + x·D`` changes by at most
    ``|Δconst| + ‖x‖·‖ΔD‖``). A point whose ``hi`` is below the ``κ``-th smallest
    ``lo`` of its node is certainly in the first child, one whose ``lo`` is above the
    ``κ``-th smallest ``hi`` certainly not; only the others get an exact score. The
    assignment is the same as with every score recomputed (up to rounding of exact
    ties), as in Hamerly's accelerated k-means.
    """
    n, N, d = X.shape[0], sizes.size, X.shape[1]
    members = np.split(np.argsort(node, kind="stable"), np.cumsum(sizes)[:-1])
    rows_a = np.flatnonzero(in_a)
    sum_a = _signed_sums(X, rows_a, node[rows_a], np.ones(rows_a.size), N, wdt)
    lo = np.full(n, -np.inf)
    hi = np.full(n, np.inf)
    prev_const = np.zeros(N)
    prev_dir = np.zeros((N, d), dtype=wdt)
    rounding = 4 * d * float(np.finfo(wdt).eps)
    col = np.full(N, -1, dtype=np.int64)
    active = np.flatnonzero(split)
    n_iter = 0
    while active.size and n_iter < max_iter:
        n_iter += 1
        const, direction = _centres(sum_a, totals, sizes, kappa, active, wdt)
        # Widen the intervals by the move of the centres; find the undecided points.
        unsure, sure_a = [], []
        for i, j in enumerate(active):
            r = members[j]
            if n_iter > 1:
                move = float(np.linalg.norm(direction[i] - prev_dir[j]))
                dc = const[i] - prev_const[j]
                pad = norms[r] * (move + rounding * float(np.linalg.norm(direction[i])))
                pad += rounding * abs(const[i])
                lo[r] += dc - pad
                hi[r] += dc + pad
            k = int(kappa[j])
            v_lo = np.partition(lo[r], k - 1)[k - 1]
            v_hi = np.partition(hi[r], k - 1)[k - 1]
            unsure.append(np.flatnonzero((hi[r] >= v_lo) & (lo[r] <= v_hi)))
            sure_a.append(hi[r] < v_lo)
        prev_const[active] = const
        prev_dir[active] = direction
        n_unsure = sum(u.size for u in unsure)
        if n_unsure > 0.3 * sizes[active].sum():
            # Most points undecided: one streamed pass over X for all active nodes.
            col[:] = -1
            col[active] = np.arange(active.size)
            for b in range(0, n, _CHUNK):
                c = col[node[b:b + _CHUNK]]
                ok = np.flatnonzero(c >= 0)
                if ok.size:
                    P = np.asarray(X[b:b + _CHUNK], dtype=wdt) @ direction.T
                    s = const[c[ok]] + P[ok, c[ok]]
                    lo[b + ok] = s
                    hi[b + ok] = s
            unsure = [np.arange(members[j].size) for j in active]
            sure_a = [np.zeros(members[j].size, dtype=bool) for j in active]
        else:
            for i, j in enumerate(active):
                u = members[j][unsure[i]]
                for b in range(0, u.size, _CHUNK):
                    ub = u[b:b + _CHUNK]
                    s = const[i] + np.asarray(X[ub], dtype=wdt) @ direction[i]
                    lo[ub] = s
                    hi[ub] = s
        changed = []
        for i, j in enumerate(active):
            r = members[j]
            k = int(kappa[j])
            new = sure_a[i]
            u = unsure[i]
            # The undecided points fill the remaining places by exact score.
            need = k - int(np.count_nonzero(new))
            new[u] = _balanced_side(lo[r[u]], in_a[r[u]], need)
            moved = np.flatnonzero(new != in_a[r])
            if moved.size:
                mv = r[moved]
                signs = np.where(new[moved], 1.0, -1.0)
                sum_a[j] += _signed_sums(X, mv, np.zeros(mv.size, dtype=np.int64), signs, 1,
                                         wdt)[0]
                in_a[mv] = new[moved]
                changed.append(j)
        active = np.asarray(changed, dtype=np.int64)
    return sum_a, n_iter, int(active.size)


def _split_gathered(Xg, node, in_a, sizes, kappa, totals, split, max_iter):
    """All splits of a group of nodes whose rows are contiguous in ``Xg`` (sorted by
    node, row order kept within a node); ``in_a`` is updated in place."""
    n, N = Xg.shape[0], sizes.size
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    ra = np.flatnonzero(in_a)
    ind = sp.csr_array((np.ones(ra.size, dtype=Xg.dtype), (node[ra], ra)), shape=(N, n))
    sum_a = np.asarray(ind @ Xg, dtype=np.float64)
    prod = np.zeros(n, dtype=Xg.dtype)
    active = np.flatnonzero(split)
    n_iter = 0
    while active.size and n_iter < max_iter:
        n_iter += 1
        const, direction = _centres(sum_a, totals, sizes, kappa, active, Xg.dtype)
        for i, j in enumerate(active):
            lo, hi = starts[j], starts[j] + sizes[j]
            np.matmul(Xg[lo:hi], direction[i], out=prod[lo:hi])
        is_active = np.zeros(N, dtype=bool)
        is_active[active] = True
        rows = np.flatnonzero(is_active[node])
        nd, ga = node[rows], in_a[rows]
        const_of = np.zeros(N)
        const_of[active] = const
        score = const_of[nd] + prod[rows]
        o = np.lexsort((rows, ~ga, score, nd))
        rank = np.arange(rows.size) - np.searchsorted(nd[o], nd[o], side="left")
        new_a = np.empty(rows.size, dtype=bool)
        new_a[o] = rank < kappa[nd[o]]
        moved = new_a != ga
        changed = np.zeros(N, dtype=bool)
        if moved.any():
            mv = rows[moved]
            sign = np.where(new_a[moved], 1.0, -1.0).astype(Xg.dtype)
            upd = sp.csr_array((sign, (node[mv], np.arange(mv.size))), shape=(N, mv.size))
            sum_a += np.asarray(upd @ Xg[mv], dtype=np.float64)
            in_a[mv] = new_a[moved]
            changed[node[mv]] = True
        active = np.flatnonzero(changed)
    return sum_a, n_iter, int(active.size)


def _groups(sizes: np.ndarray, row_bytes: int, budget: int):
    """Consecutive node ranges ``[j0, j1)`` of at most ``budget`` bytes (or one node)."""
    j0, acc = 0, 0
    for j, s in enumerate(sizes.tolist()):
        if j > j0 and acc + s * row_bytes > budget:
            yield j0, j
            j0, acc = j, 0
        acc += s * row_bytes
    if sizes.size:
        yield j0, sizes.size


def bkhk(X, n_anchors: int, *, rng: np.random.Generator, max_iter: int = 100,
         progress=None, stream_max_nodes: int = STREAM_MAX_NODES,
         group_bytes: int = GROUP_BYTES) -> tuple[np.ndarray, np.ndarray, dict]:
    """Balanced binary hierarchical k-means.

    Returns ``(anchors (m, d) float64, leaf (n,) int64, info)``; leaves are numbered in
    left-to-right tree order. See :class:`~graphclust_plugins.ulge.anchors_bkhk.BKHK` for the
    rules and the module docstring for the memory layout. ``stream_max_nodes`` and
    ``group_bytes`` only change speed and memory, never the tree.
    """
    X = np.asarray(X)
    n, d = X.shape
    wdt = np.dtype(float_dtype(X.dtype))  # the core rule: float32 for float32 / small ints
    m = int(n_anchors)
    node = np.zeros(n, dtype=np.int64)
    totals = _column_sums(X, wdt)[None, :]  # per-node sums, kept level to level
    target = np.array([m], dtype=np.int64)  # leaves each node of the level must become
    sizes = np.array([n], dtype=np.int64)
    n_levels = int(np.ceil(np.log2(m))) if m > 1 else 0
    iters_per_level: list[int] = []
    not_converged = 0
    norms = None
    if progress is not None:
        progress.start(n_levels)
    # Memory-bound matrix-vector products: one thread avoids synchronisation costs.
    with threadpool_limits(limits=1, user_api="blas"):
        for level in range(n_levels):
            N = target.size
            starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
            split = target >= 2
            # Children of node j: "a" must become floor(t/2) leaves and gets kappa points.
            t_a = target // 2
            kappa = np.where(split, (sizes * t_a) // np.maximum(target, 1), sizes)
            # Random balanced start (Algorithm 1, line 2): a random kappa points go to "a".
            order = np.lexsort((rng.random(n), node))
            rank = np.empty(n, dtype=np.int64)
            rank[order] = np.arange(n) - starts[node[order]]
            in_a = rank < kappa[node]
            del order, rank
            if N <= stream_max_nodes:
                if norms is None:
                    norms = _row_norms(X, wdt)
                sum_a, n_iter, left = _split_streaming(X, node, in_a, sizes, kappa, totals,
                                                       split, wdt, max_iter, norms)
            else:
                sum_a = np.empty((N, d))
                n_iter, left = 0, 0
                by_node = np.argsort(node, kind="stable")
                for j0, j1 in _groups(sizes, d * wdt.itemsize, group_bytes):
                    idx = by_node[starts[j0]:starts[j1 - 1] + sizes[j1 - 1]]
                    ga = in_a[idx]
                    Xg = np.asarray(X[idx], dtype=wdt)
                    if Xg.nbytes > group_bytes:
                        # One node too large for the cache: the bounded iteration of the
                        # top levels on its gathered rows (most scores are not recomputed).
                        if norms is None:
                            norms = _row_norms(X, wdt)
                        sa, it, lf = _split_streaming(
                            Xg, np.zeros(idx.size, dtype=np.int64), ga, sizes[j0:j1],
                            kappa[j0:j1], totals[j0:j1], split[j0:j1], wdt, max_iter,
                            norms[idx])
                    else:
                        sa, it, lf = _split_gathered(
                            Xg, node[idx] - j0, ga, sizes[j0:j1], kappa[j0:j1],
                            totals[j0:j1], split[j0:j1], max_iter)
                    del Xg
                    in_a[idx] = ga
                    sum_a[j0:j1] = sa
                    n_iter, left = max(n_iter, it), left + lf
                del by_node
            not_converged += left
            iters_per_level.append(n_iter)
            # Next level: the "a" child first, children in tree order.
            n_children = np.where(split, 2, 1)
            first_child = np.concatenate(([0], np.cumsum(n_children)[:-1]))
            node = first_child[node] + (~in_a)
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
                progress.step(level + 1, n_levels, f"level {level + 1}: "
                              f"{int(split.sum())} splits, {n_iter} iterations")
    if progress is not None:
        progress.end()
    assert target.size == m and np.all(target == 1)
    anchors = totals / sizes[:, None]
    info = {"n_levels": n_levels, "iterations": iters_per_level,
            "splits_not_converged": not_converged, "leaf_sizes": sizes}
    return anchors, node, info
