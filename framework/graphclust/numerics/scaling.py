"""The preprocessing stage ``scale``: column statistics fitted at ``fit``, reapplied at
``predict``.

=============  ==============================================================
kind           transform of a row ``x``
=============  ==============================================================
``none``       ``x`` (the identity; nothing is fitted)
``center``     ``x - mean``
``standard``   ``(x - mean) / std`` (population std, ``ddof = 0``)
``minmax``     ``(x - min) / (max - min)``, the training data land in ``[0, 1]``
``l2``         ``x / ||x||``, unit Euclidean length; a zero row stays zero
=============  ==============================================================

Constant-column rule: a column whose minimum equals its maximum on the training data
gets scale 1 and its value as offset (exactly, not a rounded mean), so it becomes a
column of zeros and nothing is divided by zero; this holds for ``center``,
``standard`` and ``minmax``.

Columns whose range lies outside ``[1e-100, 1e100]`` have their mean and std measured
in units of the range (a second blocked pass), so tiny or huge data standardise
without underflow or overflow.

The statistics are a sum over row blocks (:class:`ColumnStats` of each block, merged
with Chan's pairwise update of the mean and the sum of squared deviations), so fitting
is row-local and can later run chunk by chunk. Statistics are accumulated in float64;
the transform keeps the data's float type (float32 stays float32).
"""

from __future__ import annotations

from typing import Literal

import attrs
import numpy as np
from numpy.typing import ArrayLike

from graphclust.numerics.dtypes import as_float
from graphclust.numerics.rows import normalize_rows

__all__ = ["SCALE_KINDS", "ColumnStats", "ScaleKind", "Scaling", "fit_scaling"]

#: the values of the spec key ``scale``
SCALE_KINDS: tuple[str, ...] = ("none", "center", "standard", "minmax", "l2")
ScaleKind = Literal["none", "center", "standard", "minmax", "l2"]
#: kinds that need column statistics
_COLUMN_KINDS = ("center", "standard", "minmax")


@attrs.frozen(eq=False)
class ColumnStats:
    """Mergeable per-column statistics of a block of rows (float64).

    Attributes
    ----------
    n : int
        Rows seen.
    mean : ndarray of shape (d,)
    m2 : ndarray of shape (d,)
        Sum of squared deviations from ``mean``.
    min, max : ndarray of shape (d,)
    """

    n: int
    mean: np.ndarray
    m2: np.ndarray
    min: np.ndarray
    max: np.ndarray

    @classmethod
    def of_block(cls, block: np.ndarray) -> ColumnStats:
        """Statistics of one block of rows (at least one row)."""
        B = np.asarray(block)
        mean = B.mean(axis=0, dtype=np.float64)
        dev = B.astype(np.float64, copy=False) - mean
        return cls(B.shape[0], mean, np.einsum("ij,ij->j", dev, dev),
                   B.min(axis=0).astype(np.float64), B.max(axis=0).astype(np.float64))

    def merge(self, other: ColumnStats) -> ColumnStats:
        """The statistics of both blocks' rows together (Chan, Golub and LeVeque's
        pairwise update: ``M2 = M2_a + M2_b + δ² n_a n_b / n``)."""
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.n / n)
        m2 = self.m2 + other.m2 + delta * delta * (self.n * other.n / n)
        return ColumnStats(n, mean, m2, np.minimum(self.min, other.min),
                           np.maximum(self.max, other.max))

    @property
    def std(self) -> np.ndarray:
        """Population standard deviation (``ddof = 0``)."""
        return np.sqrt(np.maximum(self.m2, 0.0) / self.n)

    @property
    def constant(self) -> np.ndarray:
        """Columns whose minimum equals their maximum."""
        return self.min == self.max


@attrs.frozen(eq=False)
class Scaling:
    """The fitted state of the ``scale`` stage: ``transform(x) = (x - offset) / scale``
    for the column kinds, row normalisation for ``l2``, the identity for ``none``.

    Attributes
    ----------
    kind : str
        One of :data:`SCALE_KINDS`.
    offset, scale : ndarray of shape (d,) or None
        Per-column offset and divisor (float64; ``scale`` is never zero, see the module
        notes); ``None`` for ``none`` and ``l2``, which fit nothing.
    n_features : int or None
        Columns seen at fit (``None`` for ``none`` and ``l2``).
    """

    kind: str
    offset: np.ndarray | None = None
    scale: np.ndarray | None = None
    n_features: int | None = None

    @property
    def is_identity(self) -> bool:
        """Whether :meth:`transform` returns its input unchanged (``none``)."""
        return self.kind == "none"

    def transform(self, X: ArrayLike) -> np.ndarray:
        """Apply the fitted scaling to rows ``X`` (row-local; float32 stays float32).

        Parameters
        ----------
        X : array-like of shape (n, d)

        Returns
        -------
        ndarray of shape (n, d)
            A new array (``X`` itself for ``none``).

        Raises
        ------
        ValueError
            When ``X`` has another number of columns than the data it was fitted on.
        """
        if self.kind == "none":
            return np.asarray(X)
        X = as_float(X)
        if self.kind == "l2":
            return normalize_rows(X, "l2")
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"scale {self.kind!r} was fitted on {self.n_features} columns, "
                             f"got shape {X.shape}")
        offset = self.offset.astype(X.dtype)
        if self.kind == "center":
            return X - offset
        return (X - offset) / self.scale.astype(X.dtype)


#: column ranges outside [_SAFE_LOW, _SAFE_HIGH] have squared deviations that may
#: underflow or overflow float64; their mean and std are taken in range units instead
_SAFE_LOW, _SAFE_HIGH = 1e-100, 1e100


def _block_stats(X: np.ndarray, block_size: int, offset: np.ndarray | None = None,
                 unit: np.ndarray | None = None) -> ColumnStats:
    """Statistics of ``(X - offset) / unit`` (or of ``X``), one row block at a time."""
    stats = None
    for start in range(0, X.shape[0], block_size):
        block = X[start:start + block_size]
        if unit is not None:
            block = (block.astype(np.float64) - offset) / unit
        part = ColumnStats.of_block(block)
        stats = part if stats is None else stats.merge(part)
    return stats


def _mean_std(X: np.ndarray, stats: ColumnStats, block_size: int
              ) -> tuple[np.ndarray, np.ndarray]:
    """Column mean and population std; a column whose range is extreme is measured in
    units of its range (a second pass over the blocks), so its squares neither
    underflow nor overflow."""
    mean, std = stats.mean, stats.std
    spread = stats.max - stats.min
    extreme = (spread > 0) & ((spread < _SAFE_LOW) | (spread > _SAFE_HIGH))
    if extreme.any():
        unit = np.where(extreme, spread, 1.0)
        offset = np.where(extreme, stats.min, 0.0)
        unitless = _block_stats(X, block_size, offset, unit)
        mean = np.where(extreme, stats.min + unitless.mean * unit, mean)
        std = np.where(extreme, unitless.std * unit, std)
    return mean, std


def fit_scaling(X: ArrayLike, kind: str, *, block_size: int | None = None) -> Scaling:
    """Fit the ``scale`` stage of kind ``kind`` on training rows ``X``.

    Parameters
    ----------
    X : array-like of shape (n, d), n >= 1
    kind : {"none", "center", "standard", "minmax", "l2"}
    block_size : int, optional
        Rows per block of the statistics (default: all rows in one block); the result
        does not depend on it beyond rounding.

    Returns
    -------
    Scaling
        ``offset`` is the column mean (``center``, ``standard``) or minimum
        (``minmax``); ``scale`` is 1 (``center``), the population std (``standard``)
        or ``max - min`` (``minmax``), and 1 for a constant column.

    Raises
    ------
    ValueError
        For an unknown ``kind``, an empty ``X`` or a ``block_size`` below 1.
    """
    if kind not in SCALE_KINDS:
        raise ValueError(f"scale must be one of {', '.join(SCALE_KINDS)}; got {kind!r}")
    if kind not in _COLUMN_KINDS:
        return Scaling(kind)
    X = as_float(X)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"scale {kind!r} needs a non-empty 2-D array, got shape {X.shape}")
    if block_size is not None and block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    with np.errstate(over="ignore", under="ignore"):  # extreme columns: see _mean_std
        stats = _block_stats(X, block_size or X.shape[0])
    const = stats.constant
    if kind == "center":
        offset, spread = stats.mean, np.ones(X.shape[1])
    elif kind == "standard":
        offset, spread = _mean_std(X, stats, block_size or X.shape[0])
    else:
        offset, spread = stats.min, stats.max - stats.min
    offset = np.where(const, stats.min, offset)
    spread = np.where(const | ~(spread > 0), 1.0, spread)
    return Scaling(kind, offset, spread, X.shape[1])
