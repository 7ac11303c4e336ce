"""Seeded random helpers: every draw comes from a :class:`numpy.random.Generator` that
the caller got from its run's seed (``ctx.rng(...)``), so one seed fixes the result."""

from __future__ import annotations

import numpy as np

__all__ = ["start_vector", "sample_rows", "fit_rows", "random_orthonormal", "random_block_rows"]

#: Rows drawn per seed of :func:`random_block_rows` (one generator per tile of rows).
ROW_TILE = 1024


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


def fit_rows(rng: np.random.Generator, n: int, max_fit: int) -> np.ndarray | None:
    """The rows a part fitted on at most ``max_fit`` rows reads: ``None`` (every row)
    when ``max_fit <= 0`` or ``n <= max_fit``, else :func:`sample_rows` of ``max_fit``
    rows as int64 (the ``sample_rows`` chunk hook of ``gmm``, ``genie``, ``density``)."""
    n, max_fit = int(n), int(max_fit)
    if max_fit <= 0 or n <= max_fit:
        return None
    return sample_rows(rng, n, max_fit).astype(np.int64)


def random_orthonormal(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """An ``n × k`` matrix with orthonormal columns spanning a uniformly random subspace
    (QR of a standard normal matrix), ``k <= n``."""
    return np.linalg.qr(rng.standard_normal((int(n), int(k))))[0]


def random_block_rows(seed: int, start: int, stop: int, columns: int) -> np.ndarray:
    """Rows ``start..stop-1`` of an endless standard normal matrix with ``columns``
    columns determined by ``seed`` alone.

    The rows come in tiles of :data:`ROW_TILE`; tile ``j`` is drawn by its own generator
    ``default_rng([seed, j])``, so any row block is computed without the rows before it
    and the matrix does not depend on how the rows are cut (the chunked execution draws
    each chunk's rows where the chunk lives). Cost: the tiles overlapping the block.
    """
    start, stop, columns = int(start), int(stop), int(columns)
    if stop <= start:
        return np.zeros((0, columns))
    first, last = start // ROW_TILE, (stop - 1) // ROW_TILE
    tiles = [np.random.default_rng([int(seed), j]).standard_normal((ROW_TILE, columns))
             for j in range(first, last + 1)]
    out = np.vstack(tiles)
    offset = start - first * ROW_TILE
    return out[offset:offset + (stop - start)]
