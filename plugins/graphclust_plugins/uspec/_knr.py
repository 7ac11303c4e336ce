"""K nearest representatives, exact or coarse-to-fine approximate (U-SPEC Sec. 3.2).

The approximate search of U-SPEC (Huang et al., IEEE TKDE 2020, Sec. 3.2.2) never
compares a point with all ``p`` representatives:

1. the representatives are split by k-means into about ``√p`` groups;
2. each representative's ``K'`` nearest representatives are precomputed (``p x p``,
   small);
3. a point finds its nearest group centre, then its nearest representative *within
   that group*, then its ``K`` nearest among that representative's ``K'`` neighbours.

Cost ``O(n·(g + p/g + K')·d)`` with ``g ≈ √p`` groups instead of ``O(n·p·d)``. Steps
2 and 3 are the shared restricted search of :mod:`graphclust.numerics`
(:func:`~graphclust.numerics.self_first_neighbors` for the neighbour lists,
:func:`~graphclust.numerics.grouped_nearest` for the two within-candidates searches,
one BLAS product per group of points), so memory stays ``O(block · candidates)``.
"""

from __future__ import annotations

import warnings

import attrs
import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning
from threadpoolctl import threadpool_limits

from graphclust.numerics import (default_block_size, grouped_nearest, nearest_anchors,
                                 self_first_neighbors)

__all__ = ["RepresentativeIndex", "build_index", "exact_nearest"]

#: Rows per block of the search's first step (each row against the ``√p`` group
#: centres): the block's shifted rows and scores stay in cache (one block of all ``n``
#: rows made ``n x d`` temporaries).
COARSE_BLOCK = 2048


@attrs.frozen(eq=False)
class RepresentativeIndex:
    """The fitted coarse-to-fine search structure over ``p`` representatives.

    Attributes
    ----------
    centers : ndarray of shape (g, d)
        Group centres (k-means of the representatives; only non-empty groups).
    members : tuple of int ndarrays
        ``members[j]``: the representatives of group ``j``.
    neighbors : ndarray of shape (p, c), int64
        For every representative, its ``c = min(p, K' + 1)`` nearest representatives
        (itself included, nearest first).
    """

    centers: np.ndarray
    members: tuple
    neighbors: np.ndarray

    @property
    def n_groups(self) -> int:
        return int(self.centers.shape[0])

    def search(self, X: np.ndarray, U: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
        """Approximate ``s`` nearest representatives of every row of ``X`` (steps 1–3).

        Returns ``(indices, sqdist)`` as :func:`graphclust.numerics.grouped_nearest`;
        ``s`` must not exceed the number of columns of :attr:`neighbors`.
        """
        if s > self.neighbors.shape[1]:
            raise ValueError(f"s={s} exceeds the {self.neighbors.shape[1]} precomputed "
                             "neighbours per representative")
        # steps 1 and 2 keep only the choice (their distances are not used), so a row is
        # recomputed exactly only where a near-tie could change it; step 1 in blocks of
        # COARSE_BLOCK rows, its temporaries in cache instead of n x d
        group = nearest_anchors(X, self.centers.astype(U.dtype, copy=False), 1,
                                block_size=COARSE_BLOCK, values=False)[0][:, 0]
        rep = grouped_nearest(X, U, group, list(self.members), 1, values=False)[0][:, 0]
        return grouped_nearest(X, U, rep, self.neighbors, s)


def build_index(U: np.ndarray, n_neighbors: int, *, n_groups: int | None = None,
                max_iter: int = 20, seed: int = 0) -> RepresentativeIndex:
    """Group the representatives and precompute their neighbour lists.

    Parameters
    ----------
    U : ndarray of shape (p, d)
        The representatives.
    n_neighbors : int
        ``K'``, neighbours precomputed per representative (itself added on top).
    n_groups : int, optional
        Number of groups ``g``; default ``⌊√p⌋`` (U-SPEC Sec. 3.2.2), at least 1.
    max_iter : int
        Lloyd iterations of the grouping k-means.
    seed : int
        Seed of the grouping k-means.
    """
    p = U.shape[0]
    g = int(n_groups) if n_groups is not None else int(np.floor(np.sqrt(p)))
    g = max(1, min(g, p))
    if g == 1:
        labels = np.zeros(p, dtype=np.int64)
        centers = U.mean(axis=0, keepdims=True)
    else:
        km = KMeans(n_clusters=g, n_init=1, max_iter=max_iter, random_state=seed)
        # a p x d problem: threads cost more than they save (10x on a busy 2-core machine)
        with warnings.catch_warnings(), threadpool_limits(limits=1):
            warnings.simplefilter("ignore", SkConvergenceWarning)  # duplicate representatives
            km.fit(U)
        labels = np.asarray(km.labels_, dtype=np.int64)
        centers = np.asarray(km.cluster_centers_)
    used = np.flatnonzero(np.bincount(labels, minlength=centers.shape[0]))
    members = tuple(np.flatnonzero(labels == j) for j in used)
    neighbors = self_first_neighbors(U, int(min(p, int(n_neighbors) + 1)))
    return RepresentativeIndex(np.ascontiguousarray(centers[used]), members, neighbors)


def exact_nearest(X: np.ndarray, U: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``s`` nearest representatives (all ``p`` compared, blocked BLAS)."""
    return nearest_anchors(X, U, s, block_size=default_block_size(U.shape[0], 64 * 2**20))
