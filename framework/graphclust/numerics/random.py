"""Seeded random helpers: every draw comes from a :class:`numpy.random.Generator` that
the caller got from its run's seed (``ctx.rng(...)``), so one seed fixes the result."""

from __future__ import annotations

import numpy as np

__all__ = ["start_vector", "sample_rows", "random_orthonormal"]


def start_vector(rng: np.random.Generator, n: int) -> np.ndarray:
    """Start vector of an iterative eigensolver: ``n`` draws uniform in ``[-1, 1)``.

    ARPACK's own default start is random and unseeded; passing this one makes the
    eigenvectors a function of the seed.
    """
    return rng.uniform(-1.0, 1.0, int(n))


def sample_rows(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    """``m`` distinct row indices of ``0..n-1`` drawn uniformly, in increasing order.

    Raises
    ------
    ValueError
        When ``m > n`` (clamp first, :func:`graphclust.clamp_anchors`).
    """
    if m > n:
        raise ValueError(f"cannot draw {m} distinct rows out of {n}")
    return np.sort(rng.choice(int(n), size=int(m), replace=False))


def random_orthonormal(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """An ``n × k`` matrix with orthonormal columns spanning a uniformly random subspace
    (QR of a standard normal matrix), ``k <= n``."""
    return np.linalg.qr(rng.standard_normal((int(n), int(k))))[0]
