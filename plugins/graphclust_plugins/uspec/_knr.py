"""K nearest representatives, exact or coarse-to-fine approximate (U-SPEC Sec. 3.2).

The approximate search of U-SPEC (Huang et al., IEEE TKDE 2020, Sec. 3.2.2) never
compares a point with all ``p`` representatives:

1. the representatives are split by k-means into about ``√p`` groups;
2. each representative's ``K'`` nearest representatives are precomputed (``p x p``,
   small);
3. a point finds its nearest group centre, then its nearest representative *within
   that group*, then its ``K`` nearest among that representative's ``K'`` neighbours.

Cost ``O(n·(g + p/g + K')·d)`` with ``g ≈ √p`` groups instead of ``O(n·p·d)``. Every
step is one BLAS product per group of points (points sorted by their group or their
nearest representative), so memory stays ``O(block · candidates)``.
"""

from __future__ import annotations

import warnings

import attrs
import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning
from threadpoolctl import threadpool_limits

from graphclust.numerics import default_block_size, nearest_anchors

__all__ = ["RepresentativeIndex", "grouped_nearest", "build_index", "exact_nearest"]


def _work(X: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    dtype = np.float32 if (X.dtype == np.float32 and U.dtype == np.float32) else np.float64
    return X, U.astype(dtype, copy=False)


def grouped_nearest(X: np.ndarray, U: np.ndarray, owner: np.ndarray,
                    candidates: list[np.ndarray], s: int,
                    block_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``s`` nearest rows of ``U`` for every row of ``X`` among the candidates of its owner.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    U : ndarray of shape (m, d)
    owner : ndarray of shape (n,), int
        Index into ``candidates`` for every row of ``X``.
    candidates : list of int ndarrays
        ``candidates[g]``: the rows of ``U`` that points owned by ``g`` are compared with
        (each of length ``>= s``).
    s : int
        Neighbours kept per point.
    block_rows : int, optional
        Rows per BLAS product within one owner (default: about 64 MB of scores).

    Returns
    -------
    indices : ndarray of shape (n, s), int64
        Rows of ``U``, nearest first.
    sqdist : ndarray of shape (n, s), float64
        Squared Euclidean distances (clipped at 0), ascending.

    Notes
    -----
    The products are small (a few dozen rows against a few dozen candidates), so BLAS
    runs single-threaded here: thread start-up and synchronisation cost more than the
    product (7x slower with 2 threads on a busy 2-core machine, MNIST-70k).
    """
    with threadpool_limits(limits=1, user_api="blas"):
        return _grouped_nearest(X, U, owner, candidates, s, block_rows)


def _grouped_nearest(X: np.ndarray, U: np.ndarray, owner: np.ndarray,
                     candidates: list[np.ndarray], s: int,
                     block_rows: int | None) -> tuple[np.ndarray, np.ndarray]:
    n = X.shape[0]
    X, Uw = _work(X, U)
    dtype = Uw.dtype
    u_sq = np.einsum("ij,ij->i", Uw, Uw)
    owner = np.asarray(owner, dtype=np.int64)
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=len(candidates))
    bounds = np.concatenate(([0], np.cumsum(counts)))
    idx_out = np.empty((n, s), dtype=np.int64)
    val_out = np.empty((n, s), dtype=np.float64)
    for g in np.flatnonzero(counts):
        cand = np.asarray(candidates[g], dtype=np.int64)
        if cand.size < s:
            raise ValueError(f"owner {g} has {cand.size} candidates, fewer than s={s}")
        Uc = Uw[cand]
        uc_sq = u_sq[cand]
        rows_all = order[bounds[g]:bounds[g + 1]]
        step = block_rows or default_block_size(cand.size, 64 * 2**20)
        for start in range(0, rows_all.size, step):
            rows = rows_all[start:start + step]
            Xb = X[rows].astype(dtype, copy=False)
            dist = Xb @ Uc.T
            dist *= -2.0
            dist += np.einsum("ij,ij->i", Xb, Xb)[:, None]
            dist += uc_sq[None, :]
            np.maximum(dist, 0.0, out=dist)
            if s < cand.size:
                part = np.argpartition(dist, s - 1, axis=1)[:, :s]
            else:
                part = np.broadcast_to(np.arange(cand.size), dist.shape)
            vals = np.take_along_axis(dist, part, axis=1)
            srt = np.argsort(vals, axis=1, kind="stable")
            idx_out[rows] = cand[np.take_along_axis(part, srt, axis=1)]
            val_out[rows] = np.take_along_axis(vals, srt, axis=1)
    return idx_out, val_out


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

        Returns ``(indices, sqdist)`` as :func:`grouped_nearest`; ``s`` must not exceed
        the number of columns of :attr:`neighbors`.
        """
        if s > self.neighbors.shape[1]:
            raise ValueError(f"s={s} exceeds the {self.neighbors.shape[1]} precomputed "
                             "neighbours per representative")
        group = nearest_anchors(X, self.centers.astype(U.dtype, copy=False), 1)[0][:, 0]
        rep = grouped_nearest(X, U, group, list(self.members), 1)[0][:, 0]
        return grouped_nearest(X, U, rep, list(self.neighbors), s)


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
    c = int(min(p, int(n_neighbors) + 1))
    neighbors = nearest_anchors(U, U, c)[0]
    # the representative itself first even when duplicates tie with it
    own = np.arange(p)[:, None]
    has_own = (neighbors == own).any(axis=1)
    neighbors[~has_own, -1] = np.flatnonzero(~has_own)
    neighbors = np.take_along_axis(neighbors, np.argsort(neighbors != own, axis=1,
                                                         kind="stable"), axis=1)
    return RepresentativeIndex(np.ascontiguousarray(centers[used]), members, neighbors)


def exact_nearest(X: np.ndarray, U: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``s`` nearest representatives (all ``p`` compared, blocked BLAS)."""
    return nearest_anchors(X, U, s, block_size=default_block_size(U.shape[0], 64 * 2**20))
