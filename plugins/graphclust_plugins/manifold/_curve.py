"""The two small numerics of a UMAP layout's start, without importing umap-learn.

Importing ``umap`` imports pynndescent, whose modules compile dozens of numba kernels
with explicit signatures at import time: 43 s of a cold first run of
``graphclust run --dataset digits`` (``python -X importtime``, empty NUMBA_CACHE_DIR,
issue 48) on a route that calls neither. The layout's pca and random starts need only
these two functions; umap-learn is imported only on the routes that use it (its
spectral start, its own engine, pynndescent's index above the sample).

* :func:`fit_ab`: ``a`` and ``b`` of the low-dimensional similarity
  ``(1 + a·x^{2b})^{-1}``, least-squares fitted (SciPy's ``curve_fit``) to the offset
  exponential ``1`` for ``x < min_dist`` and ``exp(-(x − min_dist) / spread)`` beyond, on
  300 points of ``[0, 3·spread]`` (McInnes, Healy & Melville 2018, Sec. 3.2 and
  Definition 11's ``Φ``) — the same grid and fit as umap-learn, so the same ``a, b``.
* :func:`scaled_start`: the start coordinates scaled so the largest magnitude is 10,
  plus Gaussian noise of standard deviation 1e-4 drawn from the run's generator (as
  umap-learn's start, so a seed gives the same layout as before).
"""

from __future__ import annotations

import numpy as np

__all__ = ["fit_ab", "scaled_start"]


def _similarity(x, a, b):
    return 1.0 / (1.0 + a * x ** (2.0 * b))


def fit_ab(spread: float, min_dist: float) -> tuple[float, float]:
    """``(a, b)`` of the curve ``(1 + a·x^{2b})^{-1}`` closest to the offset exponential
    of ``min_dist`` and ``spread`` (module notes)."""
    from scipy.optimize import curve_fit

    x = np.linspace(0.0, 3.0 * spread, 300)
    target = np.where(x < min_dist, 1.0, np.exp(-(x - min_dist) / spread))
    (a, b), _ = curve_fit(_similarity, x, target)
    return float(a), float(b)


def scaled_start(coords: np.ndarray, random_state: np.random.RandomState,
                 max_coord: float = 10.0, noise: float = 1e-4) -> np.ndarray:
    """``coords`` scaled to largest magnitude ``max_coord`` (float32) plus N(0, noise²)."""
    coords = (coords * (max_coord / np.abs(coords).max())).astype(np.float32)
    jitter = random_state.normal(scale=noise, size=coords.shape).astype(np.float32)
    return coords + jitter
