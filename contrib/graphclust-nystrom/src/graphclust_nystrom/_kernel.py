"""Gaussian kernel rows against the landmarks, computed block by block."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from graphclust.numerics import default_block_size, nearest_anchors, sq_distances
from graphclust.numerics import self_tuning_sigma as _sigma_from_distances

__all__ = ["self_tuning_sigma", "kernel_blocks", "gaussian_kernel"]


def self_tuning_sigma(X: np.ndarray, L: np.ndarray, s: int) -> float:
    """Mean over the points of the distance to their ``s``-th nearest landmark.

    ``s`` is clamped to the number of landmarks; ``1.0`` when every such distance is
    zero (all points sit on landmarks: any bandwidth gives the same kernel on them).
    """
    s = max(1, min(int(s), L.shape[0]))
    return _sigma_from_distances(nearest_anchors(X, L, s)[1])


def gaussian_kernel(X: np.ndarray, L: np.ndarray, sigma: float) -> np.ndarray:
    """Dense ``exp(-‖x - l‖² / (2σ²))`` for a block of rows (``block x m``).

    A ``σ`` so small that ``2σ²`` underflows to zero (or so large that it overflows) is
    divided out one factor at a time: a coinciding pair keeps kernel 1 instead of
    ``exp(-0/0)`` = NaN, every other pair gets 0 (found by the spec fuzz: ``bandwidth =
    1e-300`` made the landmark kernel NaN)."""
    sq = sq_distances(X, L)
    den = 2.0 * sigma * sigma
    if 0.0 < den < np.inf:
        return np.exp(-sq / den)
    with np.errstate(over="ignore"):
        return np.exp(-((sq / sigma) / sigma) / 2.0)


def kernel_blocks(X: np.ndarray, L: np.ndarray, sigma: float,
                  block_size: int | None = None) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield ``(rows, K[rows])`` for consecutive row blocks of ``X``: memory O(block · m)."""
    n = X.shape[0]
    block = int(block_size or default_block_size(L.shape[0]))
    for start in range(0, n, block):
        rows = slice(start, min(n, start + block))
        yield rows, gaussian_kernel(X[rows], L, sigma)
