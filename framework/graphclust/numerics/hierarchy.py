"""Merge sequences over atoms: nested partitions at every ``k`` from one list of merges.

A fit's layers (:class:`graphclust.Layers`) are a partition of the rows into ``m`` *atoms*
(the finest groups the fit can tell apart) and an ordered list of merges, each joining the
groups of two atoms. Applying the first ``j`` merges gives ``m − j`` groups, so every
``k`` from ``m`` down to ``m − len(merges)`` has one partition, and each is a union of
groups of the next finer one: the layers are nested by construction, whatever order the
merges come in.

* :func:`cut` — the labels after ``m − k`` merges (union–find, ``O(n + m)``);
* :func:`check_merges` — a merge list is a forest (no merge joins a group to itself);
* :func:`ward_merges` — Ward's merges of groups given their centroids and sizes
  (Lance–Williams update, ``O(m²)`` memory, ``O(m³)`` time: for ``m`` up to a few
  hundred groups, the clusters of a fit);
* :func:`persistence` — each layer's relative persistence, its stability score.

Nothing here imports graphclust but its errors.
"""

from __future__ import annotations

import numpy as np

from graphclust._errors import InputError

__all__ = ["cut", "check_merges", "ward_merges", "persistence", "first_seen", "atom_groups"]


def _find(parent: np.ndarray, a: int) -> int:
    root = a
    while parent[root] != root:
        root = parent[root]
    while parent[a] != root:  # path compression
        parent[a], a = root, parent[a]
    return root


def check_merges(merges: np.ndarray, n_atoms: int) -> None:
    """Raise :class:`~graphclust.InputError` unless every merge joins atoms in
    ``[0, n_atoms)`` whose groups differ at that point (a forest of merges)."""
    merges = np.asarray(merges, dtype=np.int64).reshape(-1, 2)
    if merges.size and (merges.min() < 0 or merges.max() >= n_atoms):
        raise InputError(f"merges name atoms outside [0, {n_atoms})")
    parent = np.arange(n_atoms)
    for j, (a, b) in enumerate(merges):
        ra, rb = _find(parent, int(a)), _find(parent, int(b))
        if ra == rb:
            raise InputError(f"merge {j} joins atoms {a} and {b}, already in one group: "
                             "merges must form a forest")
        parent[max(ra, rb)] = min(ra, rb)


def first_seen(labels: np.ndarray) -> np.ndarray:
    """Labels renumbered ``0..k-1`` in the order they first appear (``-1`` kept)."""
    labels = np.asarray(labels, dtype=np.int64)
    out = np.full(labels.shape, -1, dtype=np.int64)
    keep = labels >= 0
    if not keep.any():
        return out
    _, first, inverse = np.unique(labels[keep], return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    out[keep] = rank[np.asarray(inverse).ravel()]
    return out


def atom_groups(merges: np.ndarray, n_atoms: int, k: int) -> np.ndarray:
    """The group (its smallest atom) of every atom after the first ``n_atoms − k``
    merges."""
    merges = np.asarray(merges, dtype=np.int64).reshape(-1, 2)
    parent = np.arange(n_atoms)
    for a, b in merges[:n_atoms - k]:
        ra, rb = _find(parent, int(a)), _find(parent, int(b))
        parent[max(ra, rb)] = min(ra, rb)
    return np.array([_find(parent, a) for a in range(n_atoms)], dtype=np.int64)


def cut(atoms: np.ndarray, merges: np.ndarray, n_atoms: int, k: int) -> np.ndarray:
    """Row labels with ``k`` groups: the first ``n_atoms − k`` merges applied to the atoms
    (``-1`` atoms stay ``-1``), numbered in the order the groups first appear in the rows.

    ``k`` must lie in ``[n_atoms − len(merges), n_atoms]``."""
    merges = np.asarray(merges, dtype=np.int64).reshape(-1, 2)
    lo = n_atoms - merges.shape[0]
    if not lo <= k <= n_atoms:
        raise InputError(f"k = {k} is not a layer of this hierarchy: k must be in "
                         f"[{lo}, {n_atoms}]")
    group = atom_groups(merges, n_atoms, k)
    atoms = np.asarray(atoms, dtype=np.int64)
    return first_seen(np.where(atoms >= 0, group[np.maximum(atoms, 0)], -1))


def ward_merges(centroids: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ward's agglomeration of ``m`` groups with ``centroids`` (m, p) and ``sizes`` (m,).

    Each step joins the two groups whose union raises the within-group sum of squares
    least, ``Δ(A, B) = |A||B| / (|A| + |B|) · ‖c_A − c_B‖²`` (Ward 1963), updated by
    Lance–Williams. Returns ``merges`` (m − 1, 2) as pairs of atoms (the smallest atom of
    each group) and ``heights`` ``sqrt(2 Δ)`` (scipy's Ward height; non-decreasing).
    Ties: the pair with the smallest atoms."""
    C = np.asarray(centroids, dtype=np.float64)
    w = np.asarray(sizes, dtype=np.float64).copy()
    m = C.shape[0]
    if m <= 1:
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0)
    sq = (C * C).sum(axis=1)
    D2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * C @ C.T, 0.0)
    D = (w[:, None] * w[None, :] / (w[:, None] + w[None, :])) * D2  # Δ of every pair
    alive = np.ones(m, dtype=bool)
    rep = np.arange(m)
    merges, heights = [], []
    for _ in range(m - 1):
        Dm = np.where(alive[:, None] & alive[None, :], D, np.inf)
        np.fill_diagonal(Dm, np.inf)
        a, b = np.unravel_index(int(np.argmin(Dm)), Dm.shape)
        a, b = (a, b) if a < b else (b, a)
        d_ab = D[a, b]
        merges.append((int(rep[a]), int(rep[b])))
        heights.append(float(np.sqrt(2.0 * max(d_ab, 0.0))))
        wa, wb, wc = w[a], w[b], w
        new = ((wa + wc) * D[a] + (wb + wc) * D[b] - wc * d_ab) / (wa + wb + wc)
        D[a, :], D[:, a] = new, new
        w[a] = wa + wb
        rep[a] = min(rep[a], rep[b])
        alive[b] = False
        D[a, a] = 0.0
    return np.asarray(merges, dtype=np.int64), np.asarray(heights)


def persistence(heights: np.ndarray, n_atoms: int, base: float | None = None) -> np.ndarray:
    """Stability of each layer: entry ``k − 1`` for ``k`` groups, ``k`` in
    ``[n_atoms − len(heights), n_atoms]`` (0 outside).

    The layer of ``k`` groups forms at the height of the merge that made it
    (``h_form``) and lasts until the next merge (``h_break``); its score is the relative
    persistence ``(h_break − h_form) / h_break`` in ``[0, 1]``: near 1 when the groups
    were joined far below the height that joins two of them (a gap in the hierarchy, the
    dendrogram analogue of the eigengap's relative gap), near 0 when the next merge
    follows at once. Heights are made non-decreasing first (running maximum), so a merge
    list applied out of height order scores its layers by the heights reached. The
    coarsest layer never breaks: 0. The finest (the atoms) forms at ``base``, the height
    by which every atom exists when the source knows it (the density tree: where its
    last leaf appears); without it, 0."""
    h = np.maximum.accumulate(np.asarray(heights, dtype=np.float64)) if len(heights) else \
        np.zeros(0)
    out = np.zeros(max(int(n_atoms), 1))
    if base is not None and h.size and h[0] > 0:
        out[n_atoms - 1] = (h[0] - min(float(base), h[0])) / h[0]
    for j in range(1, h.size):  # after j merges: k = n_atoms - j groups
        form, brk = h[j - 1], h[j]
        out[n_atoms - j - 1] = (brk - form) / brk if brk > 0 else 0.0
    return np.clip(out, 0.0, 1.0)
