"""Gaussian kernel rows against the landmarks, computed block by block."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from graphclust.neighbors import default_block_size, nearest_anchors

__all__ = ["self_tuning_sigma", "kernel_blocks", "gaussian_kernel"]


def self_tuning_sigma(X: np.ndarray, L: np.ndarray, s: int) -> float:
    """Mean over the points of the distance to their ``s``-th nearest landmark.

    ``s`` is clamped to the number of landmarks; ``1.0`` when every such distance is
    zero (all points sit on landmarks: any bandwidth gives the same kernel on them).
    """
    s = max(1, min(int(s), L.shape[0]))
    _, d2 = nearest_anchors(X, L, s)
    sigma = float(np.mean(np.sqrt(d2[:, -1])))
    return sigma if np.isfinite(sigma) and sigma > 0 else 1.0


def gaussian_kernel(X: np.ndarray, L: np.ndarray, sigma: float) -> np.ndarray:
    """Dense ``exp(-‖x - l‖² / (2σ²))`` for a block of rows (``block x m``)."""
    x_sq = np.einsum("ij,ij->i", X, X)
    l_sq = np.einsum("ij,ij->i", L, L)
    d2 = np.maximum(x_sq[:, None] - 2.0 * (X @ L.T) + l_sq[None, :], 0.0)
    return np.exp(-d2 / (2.0 * sigma * sigma))


def kernel_blocks(X: np.ndarray, L: np.ndarray, sigma: float,
                  block_size: int | None = None) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield ``(rows, K[rows])`` for consecutive row blocks of ``X``: memory O(block · m)."""
    n = X.shape[0]
    block = int(block_size or default_block_size(L.shape[0]))
    for start in range(0, n, block):
        rows = slice(start, min(n, start + block))
        yield rows, gaussian_kernel(X[rows], L, sigma)
