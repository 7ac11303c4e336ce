"""UMAP's fuzzy membership weights of a kNN graph (McInnes, Healy, Melville 2018, Sec. 3).

Everything here works on the ``n x k`` neighbour lists only: memory and time are
``O(n·k)`` (a fixed number of bisection steps per row), nothing ``n x n`` is formed.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = [
    "BISECTION_STEPS",
    "SIGMA_FLOOR",
    "SIGMA_TOLERANCE",
    "directed_graph",
    "fuzzy_union",
    "membership_weights",
    "smooth_distances",
]

#: Bisection steps of the σ search (each halves the bracket).
BISECTION_STEPS = 64
#: Stop a row's search once ``|Σ_j w_ij − log2(k)|`` is below this.
SIGMA_TOLERANCE = 1e-5
#: σ_i is at least this fraction of the mean neighbour distance of row i (of all rows
#: when ρ_i = 0), as in UMAP's reference implementation; it only binds when a row's
#: neighbours are (nearly) all at distance ρ_i.
SIGMA_FLOOR = 1e-3


def _row_sums(dist: np.ndarray, rho: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    return np.exp(-np.maximum(dist - rho[:, None], 0.0) / sigma[:, None]).sum(axis=1)


def smooth_distances(dist: np.ndarray, target: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ρ_i`` and ``σ_i`` of every row of sorted neighbour distances.

    ``ρ_i`` is the smallest *positive* distance of row ``i`` (0 if there is none: all
    neighbours are duplicates), ``σ_i`` solves
    ``Σ_j exp(−max(0, d_ij − ρ_i)/σ_i) = target`` by bisection (the left side grows with
    σ_i), then is raised to the floor ``SIGMA_FLOOR · mean_j d_ij`` (the mean over all
    rows when ``ρ_i = 0``).

    Parameters
    ----------
    dist : ndarray of shape (n, k)
        Distances to the ``k`` nearest other points (ascending per row; ``inf`` or NaN
        marks a neighbour an approximate search did not find: it is ignored).
    target : float
        ``log2`` of the neighbourhood size (UMAP counts the point itself).

    Returns
    -------
    rho, sigma : ndarray of shape (n,)
    floored : ndarray of bool, shape (n,)
        Rows whose σ_i is the floor (the equation does not hold for them).
    """
    dist = np.asarray(dist, dtype=np.float64)
    n = dist.shape[0]
    d = np.where(np.isfinite(dist), dist, np.inf)
    pos = np.where(d > 0, d, np.inf)
    rho = pos.min(axis=1) if d.shape[1] else np.zeros(n)
    rho[~np.isfinite(rho)] = 0.0
    lo = np.zeros(n)
    hi = np.full(n, np.inf)
    mid = np.ones(n)
    active = np.ones(n, dtype=bool)
    for _ in range(BISECTION_STEPS):
        if not active.any():
            break
        idx = np.flatnonzero(active)
        s = _row_sums(d[idx], rho[idx], mid[idx])
        done = np.abs(s - target) < SIGMA_TOLERANCE
        over = (s > target) & ~done
        under = ~over & ~done
        hi[idx[over]] = mid[idx[over]]
        lo[idx[under]] = mid[idx[under]]
        grow = idx[under][~np.isfinite(hi[idx[under]])]
        mid[idx[over]] = 0.5 * (lo[idx[over]] + hi[idx[over]])
        settle = idx[under][np.isfinite(hi[idx[under]])]
        mid[settle] = 0.5 * (lo[settle] + hi[settle])
        mid[grow] = lo[grow] * 2.0
        active[idx[done]] = False
    finite = np.where(np.isfinite(d), d, np.nan)
    with np.errstate(invalid="ignore"):
        row_mean = np.nan_to_num(np.nanmean(finite, axis=1)) if d.shape[1] else np.zeros(n)
    all_mean = float(np.nanmean(finite)) if np.isfinite(finite).any() else 0.0
    floor = SIGMA_FLOOR * np.where(rho > 0, row_mean, all_mean)
    floored = mid < floor
    sigma = np.maximum(mid, floor)
    return rho, sigma, floored


def membership_weights(dist: np.ndarray, rho: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Directed memberships ``w_ij = exp(−max(0, d_ij − ρ_i)/σ_i)`` in ``[0, 1]``
    (1 at and below ρ_i; 0 for a neighbour not found; with σ_i = 0, 1 up to ρ_i and 0
    beyond)."""
    dist = np.asarray(dist, dtype=np.float64)
    excess = np.maximum(dist - rho[:, None], 0.0)
    s = sigma[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(s > 0, np.exp(-excess / np.where(s > 0, s, 1.0)), (excess <= 0) * 1.0)
    w[~np.isfinite(dist)] = 0.0
    return w


def directed_graph(indices: np.ndarray, weights: np.ndarray, n: int) -> sp.csr_array:
    """The directed ``n x n`` graph ``W`` from neighbour lists (missing neighbours,
    index ``< 0``, and zero weights dropped)."""
    rows = np.repeat(np.arange(n), indices.shape[1])
    cols = indices.ravel()
    vals = weights.ravel()
    keep = (cols >= 0) & (vals > 0)
    W = sp.csr_array((vals[keep], (rows[keep], cols[keep])), shape=(n, n))
    W.sum_duplicates()
    return W


def fuzzy_union(W: sp.csr_array) -> sp.csr_array:
    """Probabilistic t-conorm of ``W`` and ``Wᵀ``: ``A = W + Wᵀ − W∘Wᵀ`` (symmetric,
    entries in ``[0, 1]``, nonzero where either direction is)."""
    Wt = sp.csr_array(W.T)
    A = sp.csr_array(W + Wt - W.multiply(Wt))
    A.data = np.clip(A.data, 0.0, 1.0)
    A.eliminate_zeros()
    A.sort_indices()
    return A
