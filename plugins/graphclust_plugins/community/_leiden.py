"""Leiden runs through ``leidenalg`` on ``igraph``, and the ways a given ``k`` is hit.

Nothing of the optimisation is written here: :func:`leiden_membership` hands the graph to
``leidenalg.find_partition`` (Traag, Waltman & van Eck 2019). This module only converts the
adjacency, searches the resolution for a given number of communities
(:func:`membership_with_k`) and, when no resolution gives exactly that number, merges
communities by Newman's greedy modularity rule on the ``k'``-node community graph
(:func:`merge_to_k`).
"""

from __future__ import annotations

import math

import attrs
import numpy as np
import scipy.sparse as sp
from graphclust.numerics import row_blocks

__all__ = [
    "MERGE_LIMIT",
    "KSearch",
    "TooManyToMerge",
    "attach_isolated",
    "igraph_of",
    "leiden_membership",
    "membership_with_k",
    "merge_to_k",
    "n_communities",
]


#: The search stops when the resolutions below and above ``k`` are this close (relative):
#: Leiden's count is not monotone in ``γ`` at that scale (its runs are randomised), so
#: bisecting further only repeats the jump.
BRACKET_TOLERANCE = 1e-3


#: Most communities :func:`merge_to_k` merges (its ``c x c`` matrices: 2 x 72 MB here).
MERGE_LIMIT = 3000


class TooManyToMerge(ValueError):
    """:func:`merge_to_k` was asked to merge more than :data:`MERGE_LIMIT` communities."""

    def __init__(self, communities: int):
        super().__init__(f"{communities} communities to merge, more than MERGE_LIMIT = "
                         f"{MERGE_LIMIT}")
        self.communities = int(communities)


def _upper_entries(adjacency: sp.csr_array) -> tuple[np.ndarray, np.ndarray]:
    """``(edges, weights)`` of the upper triangle (diagonal included) of a CSR matrix:
    an ``m x 2`` int64 array and the ``m`` weights, filled row block by row block
    (:func:`graphclust.numerics.row_blocks`), with no ``O(nnz)`` scratch beyond them."""
    A = sp.csr_array(adjacency)
    blocks = row_blocks(A.indptr)

    def upper(lo, hi):
        rows = np.repeat(np.arange(lo, hi), np.diff(A.indptr[lo:hi + 1]))
        cols = A.indices[A.indptr[lo]:A.indptr[hi]]
        keep = cols >= rows
        return rows, cols, keep

    total = sum(int(upper(lo, hi)[2].sum()) for lo, hi in blocks)
    edges = np.empty((total, 2), dtype=np.int64)
    weights = np.empty(total, dtype=np.float64)
    at = 0
    for lo, hi in blocks:
        rows, cols, keep = upper(lo, hi)
        m = int(keep.sum())
        edges[at:at + m, 0] = rows[keep]
        edges[at:at + m, 1] = cols[keep]
        weights[at:at + m] = A.data[A.indptr[lo]:A.indptr[hi]][keep]
        weights[at:at + m][rows[keep] == cols[keep]] *= 0.5
        at += m
    return edges, weights


def igraph_of(adjacency: sp.csr_array):
    """``(graph, weighted)``: the undirected ``igraph.Graph`` of a symmetric adjacency,
    and whether it carries the edge attribute ``weight``.

    Each undirected edge ``{i, j}`` (``i < j``) carries ``A_ij``; a diagonal entry ``A_ii``
    becomes a loop of weight ``A_ii / 2``, because igraph counts a loop twice in a vertex's
    strength: every vertex's strength then equals its row sum of ``A``, the degree the
    modularity of :func:`graphclust.modularity` uses. When every edge has the same
    weight the graph gets no weight attribute (``weighted`` is False): the modularity
    (with any resolution) of a graph whose weights are all ``c`` is that of the
    unweighted graph, since ``c`` scales every term alike; igraph keeps an attribute as
    a Python list of floats (about 32 bytes an edge), which a binary graph is spared.
    The edges reach igraph as one int64 array (its buffer path), never a Python list.
    """
    import igraph

    edges, weights = _upper_entries(adjacency)
    graph = igraph.Graph(n=int(adjacency.shape[0]), edges=edges, directed=False)
    del edges
    weighted = bool(weights.size) and not bool(np.all(weights == weights[0]))
    if weighted:
        graph.es["weight"] = weights.tolist()
    return graph, weighted


def leiden_membership(graph, resolution: float, seed: int, n_iterations: int,
                      weighted: bool = True) -> np.ndarray:
    """Community of every vertex: ``leidenalg.find_partition`` with the
    ``RBConfigurationVertexPartition`` quality (modularity with resolution ``γ``; at
    ``γ = 1`` exactly Newman–Girvan modularity) on the edge weights (``weighted``: the
    ``weight`` attribute, else every edge 1), seeded."""
    import leidenalg

    part = leidenalg.find_partition(graph, leidenalg.RBConfigurationVertexPartition,
                                    weights="weight" if weighted else None,
                                    resolution_parameter=float(resolution),
                                    n_iterations=int(n_iterations), seed=int(seed))
    return np.asarray(part.membership, dtype=np.int64)


def attach_isolated(membership: np.ndarray, degrees: np.ndarray) -> np.ndarray:
    """``membership`` with every vertex of zero degree moved into the largest community of
    the others (the lowest label on ties).

    Leiden leaves a vertex with no edge alone, a community of its own, so isolated vertices
    would count as communities (and fill a given ``k``). Such a vertex carries no evidence,
    and where it goes does not change the modularity (its degree is 0, so its terms are
    0): it joins the largest community. With no vertex of nonzero degree nothing changes.
    """
    isolated = np.asarray(degrees) <= 0
    if not isolated.any() or isolated.all():
        return membership
    out = membership.copy()
    sizes = np.bincount(out[~isolated])
    out[isolated] = int(np.argmax(sizes))
    return out


def n_communities(membership: np.ndarray) -> int:
    return int(np.unique(membership).size)


@attrs.define
class KSearch:
    """What the search for ``k`` communities did (reported in the solution's ``info``)."""

    k: int
    resolutions: list[float] = attrs.field(factory=list)
    counts: list[int] = attrs.field(factory=list)
    resolution: float = float("nan")  #: the resolution of the partition kept
    merged: int = 0  #: communities merged by the greedy rule after the search

    def as_dict(self) -> dict:
        return {"k": self.k, "resolutions": list(self.resolutions),
                "counts": list(self.counts), "resolution": self.resolution,
                "merged": self.merged}


def membership_with_k(run, adjacency: sp.csr_array, k: int, start: float, max_steps: int,
                      first: np.ndarray | None = None) -> tuple[np.ndarray, KSearch]:
    """A partition into ``k`` communities, searched over the resolution ``γ``.

    ``run(γ)`` returns a membership of the vertices of ``adjacency``; ``first``, when
    given, is ``run(start)`` already computed. The number of communities of the modularity optimum
    grows with ``γ`` (Reichardt & Bornholdt 2006; Traag, Waltman & van Eck 2019, Sec. 2:
    ``γ`` sets the density a community must exceed): from ``start`` the bracket is
    doubled or halved until it encloses ``k``, then bisected in ``log γ``. At most
    ``max_steps`` Leiden runs in all; the first partition with exactly ``k`` communities
    is kept. Otherwise (the count jumps over ``k``: the bracket narrows to
    :data:`BRACKET_TOLERANCE`; or the steps ran out) the kept one is
    the partition with the fewest communities above ``k``, merged down to ``k`` by
    :func:`merge_to_k` (``KSearch.merged`` > 0), or, when every run gave fewer than ``k``
    (possible only for ``k`` above what any ``γ`` tried splits into), the one with the
    most communities.
    """
    log = KSearch(k)

    def count_of(gamma, membership=None):
        membership = run(gamma) if membership is None else membership
        c = n_communities(membership)
        log.resolutions.append(float(gamma))
        log.counts.append(c)
        return membership, c

    best_above: tuple[int, float, np.ndarray] | None = None  # (count, γ, membership)
    best_below: tuple[int, float, np.ndarray] | None = None
    lo = hi = None  # γ with count < k, γ with count > k
    gamma = float(start)
    membership, c = count_of(gamma, first)
    steps = 0 if first is not None else 1
    while True:
        if c == k:
            log.resolution = gamma
            return membership, log
        if c > k:
            hi = gamma
            if best_above is None or c < best_above[0]:
                best_above = (c, gamma, membership)
        else:
            lo = gamma
            if best_below is None or c > best_below[0]:
                best_below = (c, gamma, membership)
        if steps >= max_steps:
            break
        if lo is None:
            gamma = hi / 2.0
        elif hi is None:
            gamma = lo * 2.0
        else:
            gamma = math.sqrt(lo * hi)
            if hi / lo < 1.0 + BRACKET_TOLERANCE:  # closed on a jump over k
                break
        membership, c = count_of(gamma)
        steps += 1
    if best_above is not None:
        c, gamma, membership = best_above
        log.resolution = gamma
        log.merged = c - k
        return merge_to_k(membership, adjacency, k), log
    c, gamma, membership = best_below
    log.resolution = gamma
    return membership, log


def merge_to_k(membership: np.ndarray, adjacency: sp.csr_array, k: int) -> np.ndarray:
    """Merge communities, two at a time, until ``k`` remain (Newman 2004's greedy rule).

    Each step merges the pair ``(a, b)`` whose merge changes the modularity most
    favourably, ``ΔQ = 2 (e_ab − a_a a_b)`` with ``e_ab`` the fraction of the weight
    between them and ``a_x`` a community's fraction of the total degree (Newman,
    *Fast algorithm for detecting community structure in networks*, Phys. Rev. E 69,
    066133, 2004, Eq. 4), over all pairs, connected or not (two pieces of different
    components merge at the smallest loss); ties go to the pair of smallest indices.
    Works on the dense ``c x c`` community graph of the ``c`` communities (at most
    :data:`MERGE_LIMIT`; ``O(c²)`` memory) with each row's best pair cached, so a step
    costs ``O(c)`` plus the rows whose best partner was merged; labels are renumbered
    ``0..k-1`` in order of first appearance.
    """
    _, codes = np.unique(membership, return_inverse=True)
    c = int(codes.max()) + 1
    if c > MERGE_LIMIT:
        raise TooManyToMerge(c)
    M = sp.csr_array((np.ones(codes.size), (np.arange(codes.size), codes)),
                     shape=(codes.size, c))
    E = np.asarray((M.T @ adjacency @ M).toarray(), dtype=np.float64)
    total = E.sum()
    E /= total if total > 0 else 1.0  # no edges: every gain is 0, pairs merge in order
    a = E.sum(axis=1)
    G = 2.0 * (E - np.outer(a, a))
    np.fill_diagonal(G, -np.inf)
    best = G.argmax(axis=1)
    value = G[np.arange(c), best]
    alive = np.ones(c, dtype=bool)
    target = np.arange(c)
    for _ in range(c - k):
        i = int(np.argmax(value))
        j = int(best[i])
        x, y = min(i, j), max(i, j)
        E[x, :] += E[y, :]
        E[:, x] += E[:, y]
        a[x] += a[y]
        alive[y] = False
        target[target == y] = x
        row = 2.0 * (E[x, :] - a[x] * a)
        row[~alive] = -np.inf
        row[x] = -np.inf
        G[x, :] = row
        G[:, x] = row
        G[y, :] = -np.inf
        G[:, y] = -np.inf
        value[y] = -np.inf
        stale = alive & ((best == x) | (best == y))
        stale[x] = True
        rows = np.flatnonzero(stale)
        if rows.size:
            best[rows] = G[rows].argmax(axis=1)
            value[rows] = G[rows, best[rows]]
        # the others: the merged community may now be their best partner (smaller
        # index first on ties, as a fresh argmax would choose)
        col = G[:, x]
        better = alive & ~stale & ((col > value) | ((col == value) & (x < best)))
        best[better] = x
        value[better] = col[better]
    merged = target[codes]
    _, first = np.unique(merged, return_index=True)
    order = np.argsort(np.argsort(first))
    _, inv = np.unique(merged, return_inverse=True)
    return order[inv].astype(np.int64)
