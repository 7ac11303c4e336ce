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

Sparse ``X`` (``scipy.sparse``) stays sparse: centring would turn every implicit zero
into a stored value, so on sparse training data ``standard`` divides each column by its
std without centring (scikit-learn's ``StandardScaler(with_mean=False)``) and
``minmax`` divides by the column's largest absolute value (``MaxAbsScaler``): the
fitted ``offset`` is 0, zeros stay zeros, and Euclidean distances are those of the
dense kind up to the translation (none for ``standard``: distances are translation
invariant; ``minmax`` scales by ``max |x|`` instead of ``max − min``, the same for
nonnegative columns that hold a zero, e.g. tf-idf). ``l2`` normalises the sparse rows;
``center`` needs dense rows (the pipeline densifies within the limit of
:mod:`graphclust.numerics.sparse` before it).
"""

from __future__ import annotations

from typing import Literal

import attrs
import numpy as np
from numpy.typing import ArrayLike

import scipy.sparse as sp

from graphclust.numerics.dtypes import as_float
from graphclust.numerics.rows import normalize_rows

__all__ = ["COLUMN_KINDS", "SCALE_KINDS", "ColumnStats", "ScaleKind", "Scaling", "fit_scaling",
           "scaling_from_stats", "unitless_block_stats"]

#: the values of the spec key ``scale``
SCALE_KINDS: tuple[str, ...] = ("none", "center", "standard", "minmax", "l2")
ScaleKind = Literal["none", "center", "standard", "minmax", "l2"]
#: kinds that need column statistics
_COLUMN_KINDS = ("center", "standard", "minmax")
#: public name of the kinds fitted from column statistics (the chunked execution)
COLUMN_KINDS: tuple[str, ...] = _COLUMN_KINDS


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
    def empty(cls, n_features: int) -> ColumnStats:
        """The statistics of no rows: the neutral element of :meth:`merge`."""
        d = int(n_features)
        return cls(0, np.zeros(d), np.zeros(d), np.full(d, np.inf), np.full(d, -np.inf))

    @classmethod
    def of_block(cls, block: np.ndarray) -> ColumnStats:
        """Statistics of one block of rows (:meth:`empty` for a block of no rows)."""
        B = np.asarray(block)
        if B.shape[0] == 0:
            return cls.empty(B.shape[1])
        mean = B.mean(axis=0, dtype=np.float64)
        dev = B.astype(np.float64, copy=False) - mean
        return cls(B.shape[0], mean, np.einsum("ij,ij->j", dev, dev),
                   B.min(axis=0).astype(np.float64), B.max(axis=0).astype(np.float64))

    def merge(self, other: ColumnStats) -> ColumnStats:
        """The statistics of both blocks' rows together (Chan, Golub and LeVeque's
        pairwise update: ``M2 = M2_a + M2_b + δ² n_a n_b / n``)."""
        if other.n == 0:
            return self
        if self.n == 0:
            return other
        n = self.n + other.n
        delta = other.mean - self.mean
        mean = self.mean + delta * (other.n / n)
        m2 = self.m2 + other.m2 + delta * delta * (self.n * other.n / n)
        return ColumnStats(n, mean, m2, np.minimum(self.min, other.min),
                           np.maximum(self.max, other.max))

    def __add__(self, other: ColumnStats) -> ColumnStats:
        """``a + b`` is :meth:`merge`, so row-block statistics add like any chunk sum
        (:func:`graphclust.chunks.add_sums`)."""
        return self.merge(other)

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
            return X if sp.issparse(X) else np.asarray(X)
        if sp.issparse(X):
            return self._transform_sparse(X)
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

    def _transform_sparse(self, X):
        """Sparse rows: ``l2`` and column scalings without an offset stay sparse; an
        offset (a scaling fitted on dense rows) needs the rows densified, within the
        limit of :func:`graphclust.numerics.sparse.densify`."""
        from graphclust.numerics.sparse import as_csr, densify, normalize_sparse_rows, \
            scale_columns

        X = as_csr(X)
        if self.kind == "l2":
            return normalize_sparse_rows(X)
        if X.shape[1] != self.n_features:
            raise ValueError(f"scale {self.kind!r} was fitted on {self.n_features} columns, "
                             f"got shape {X.shape}")
        if not np.any(self.offset):
            return scale_columns(X, self.scale)
        return self.transform(densify(X, f"scale {self.kind!r} (fitted on dense rows, "
                                         "it subtracts an offset)"))


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


def unitless_block_stats(block: np.ndarray, offset: np.ndarray, unit: np.ndarray
                         ) -> ColumnStats:
    """Statistics of one block of rows in range units, ``(block - offset) / unit``
    (the second pass for extreme columns, see :func:`scaling_from_stats`)."""
    with np.errstate(over="ignore", under="ignore"):
        return ColumnStats.of_block((np.asarray(block).astype(np.float64) - offset) / unit)


def _mean_std(stats: ColumnStats, unitless) -> tuple[np.ndarray, np.ndarray]:
    """Column mean and population std; a column whose range is extreme is measured in
    units of its range (``unitless(offset, unit)``: a second pass over the blocks), so
    its squares neither underflow nor overflow."""
    mean, std = stats.mean, stats.std
    spread = stats.max - stats.min
    extreme = (spread > 0) & ((spread < _SAFE_LOW) | (spread > _SAFE_HIGH))
    if extreme.any():
        unit = np.where(extreme, spread, 1.0)
        offset = np.where(extreme, stats.min, 0.0)
        unitless_stats = unitless(offset, unit)
        mean = np.where(extreme, stats.min + unitless_stats.mean * unit, mean)
        std = np.where(extreme, unitless_stats.std * unit, std)
    return mean, std


def scaling_from_stats(kind: str, stats: ColumnStats, unitless=None) -> Scaling:
    """The fitted :class:`Scaling` of a column kind from the training rows' statistics.

    This is the reduction step of :func:`fit_scaling`, shared with the chunked execution
    (whose ``stats`` are the sum of :meth:`ColumnStats.of_block` over row chunks).

    Parameters
    ----------
    kind : {"center", "standard", "minmax"}
    stats : ColumnStats
        Statistics of all training rows (``stats.n >= 1``).
    unitless : callable, optional
        ``unitless(offset, unit)`` returns the statistics of ``(X - offset) / unit`` over
        all training rows; called only by ``standard`` when a column's range lies outside
        ``[1e-100, 1e100]`` (see the module notes). Required in that case.

    Returns
    -------
    Scaling
    """
    if kind not in _COLUMN_KINDS:
        raise ValueError(f"scaling_from_stats fits {', '.join(_COLUMN_KINDS)}; got {kind!r}")
    if stats.n < 1:
        raise ValueError("scale needs at least one row")
    d = stats.mean.shape[0]
    const = stats.constant
    if kind == "center":
        offset, spread = stats.mean, np.ones(d)
    elif kind == "standard":
        if unitless is None:
            def unitless(offset, unit):
                raise ValueError("scale 'standard' of a column with an extreme range needs "
                                 "a second pass over the rows (give `unitless`)")
        offset, spread = _mean_std(stats, unitless)
    else:
        offset, spread = stats.min, stats.max - stats.min
    offset = np.where(const, stats.min, offset)
    spread = np.where(const | ~(spread > 0), 1.0, spread)
    return Scaling(kind, offset, spread, d)


def fit_scaling(X: ArrayLike, kind: str, *, block_size: int | None = None) -> Scaling:
    """Fit the ``scale`` stage of kind ``kind`` on training rows ``X``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d), n >= 1
        Sparse rows are fitted without centring (see the module notes).
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
    if sp.issparse(X):
        return _fit_sparse(X, kind)
    X = as_float(X)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"scale {kind!r} needs a non-empty 2-D array, got shape {X.shape}")
    if block_size is not None and block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    bs = block_size or X.shape[0]
    with np.errstate(over="ignore", under="ignore"):  # extreme columns: see _mean_std
        stats = _block_stats(X, bs)
    return scaling_from_stats(kind, stats, lambda offset, unit: _block_stats(X, bs, offset, unit))


def _fit_sparse(X, kind: str) -> Scaling:
    """:func:`fit_scaling` of sparse rows, without centring (see the module notes):
    ``standard`` divides by the column std, ``minmax`` by ``max |x|``; offset 0."""
    from graphclust.numerics.sparse import sparse_column_maxabs, sparse_column_mean_std

    if kind == "center":
        raise ValueError("scale 'center' of sparse X would densify it (every zero becomes "
                         "-mean): densify X first, or use 'standard' (no centring on "
                         "sparse X), 'minmax' (max-abs) or 'l2'")
    X = sp.csr_array(X)
    if X.shape[0] == 0:
        raise ValueError(f"scale {kind!r} needs a non-empty 2-D array, got shape {X.shape}")
    d = X.shape[1]
    spread = (sparse_column_mean_std(X)[1] if kind == "standard"
              else sparse_column_maxabs(X))
    spread = np.where(spread > 0, spread, 1.0)
    return Scaling(kind, np.zeros(d), spread, d)


def safe_magnitude_limits(dtype, d: int) -> tuple[float, float]:
    """``(low, high)``: the sizes of coordinates between which squared Euclidean
    distances of ``d`` columns neither underflow nor overflow in ``dtype``
    (``√tiny · 1e4`` and ``√max / (4 √d)``: a squared distance sums ``d`` squares of
    differences of at most twice the size, so it stays below ``max / 4``)."""
    info = np.finfo(dtype)
    return (float(np.sqrt(info.tiny)) * 1e4,
            float(np.sqrt(info.max)) / 4.0 / float(np.sqrt(max(int(d), 1))))


def magnitude_limits(dtype, d: int) -> tuple[float, float]:
    """``(low, high)``: the sizes of coordinates between which data are fitted as given
    (:func:`magnitude_unit`): the square roots of :func:`safe_magnitude_limits`'
    squares, i.e. fourth powers of distances stay normal. Squared distances are what
    most parts compute, but some square them again (ULGE's adaptive-neighbour rows
    weigh squared distances by squared distances: ``1e-84`` data gave one cluster), so
    the window leaves room for a second squaring: about ``[1e-75, 1e76]`` in float64."""
    low, high = safe_magnitude_limits(dtype, d)
    return float(np.sqrt(low)), float(np.sqrt(high))


def magnitude_unit(X) -> float:
    """The power of two ``u`` that brings the largest ``|x|`` of ``X`` into ``[1/2, 1)``
    when that largest value lies outside :func:`magnitude_limits`, else ``1.0``.

    Multiplying by a power of two is exact in binary floating point (no digit of the
    data changes, only the exponent), and every distance-based step of a pipeline that
    sets its scales from the data (self-tuning bandwidths, mean distances, ranks of
    neighbours) gives the same partition of ``c·X`` as of ``X``; so data given in units
    where squared distances (or their squares) overflow (``1e200``) or underflow
    (``1e-300``) are clustered in units where they do not, instead of failing deep
    inside a library. Data within the limits are left exactly as given.
    """
    import scipy.sparse as sp

    vals = X.data if sp.issparse(X) else np.asarray(X)
    if vals.size == 0 or vals.dtype.kind != "f":
        return 1.0
    # the largest |x| from the extremes: no n x d copy of |X| (NaN propagates as in abs)
    top = np.maximum(np.abs(vals.max()), np.abs(vals.min()))
    return unit_for_magnitude(float(top), vals.dtype, X.shape[1])


def unit_for_magnitude(top: float, dtype, d: int) -> float:
    """:func:`magnitude_unit` from the largest ``|x|`` already known (a reduction over
    the chunks of a dask array): ``1.0`` for ``0``, a non-finite value (refused later by
    the input check) or a value within :func:`magnitude_limits`."""
    low, high = magnitude_limits(dtype, d)
    if top == 0.0 or not np.isfinite(top) or low <= top <= high:
        return 1.0
    return float(np.ldexp(1.0, -int(np.frexp(top)[1])))
