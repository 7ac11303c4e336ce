"""Row normalisation: unit Euclidean length (``l2``) or unit sum (``l1``); the degree
scaling ``D^{-p}`` with zero for a zero degree (:func:`safe_inverse`)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from graphclust.numerics.dtypes import as_float

__all__ = ["normalize_rows", "row_norms", "safe_inverse"]


#: Sums of squares below this (or not finite) are recomputed on the row divided by its
#: largest entry: squares of entries near 1e-162 fall into float64's subnormal range (or
#: past 1e154 overflow) and the plain sum loses every digit.
_SAFE_SQUARES = (1e-250, 1e300)


def row_norms(E: ArrayLike) -> np.ndarray:
    """Euclidean length of every row, accumulated in float64 (shape ``(n,)``).

    Rows whose sum of squares would underflow or overflow are measured as
    ``max|x| · ||x / max|x|||`` (the scaling of LAPACK's ``dnrm2``), so a row of tiny or
    huge entries still gets its length to rounding."""
    E = np.asarray(E)
    sq = np.einsum("ij,ij->i", E, E, dtype=np.float64)
    out = np.sqrt(sq)
    lo, hi = _SAFE_SQUARES
    redo = np.flatnonzero(~((sq >= lo) & (sq <= hi)))
    if redo.size:
        rows, top, R = _by_largest_entry(E, redo)
        with np.errstate(over="ignore"):  # a length past float64's largest is inf
            out[rows] = top * np.sqrt(np.einsum("ij,ij->i", R, R))
    return out


def _by_largest_entry(E: np.ndarray, rows: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows of ``rows`` with a positive finite largest entry, that entry, and those
    rows divided by it (float64): the scaling that keeps a length's digits."""
    R = np.asarray(E[rows], dtype=np.float64)
    top = np.abs(R).max(axis=1) if R.shape[1] else np.zeros(rows.size)
    ok = (top > 0) & np.isfinite(top)
    return rows[ok], top[ok], R[ok] / top[ok, None]


def normalize_rows(E: ArrayLike, norm: str = "l2") -> np.ndarray:
    """Rows of ``E`` divided by their length (``"l2"``) or by their sum (``"l1"``).

    Parameters
    ----------
    E : array-like of shape (n, p)
    norm : {"l2", "l1"}
        ``"l2"``: unit Euclidean length (Ng–Jordan–Weiss); the norms are taken in
        float64. ``"l1"``: rows sum to one (row-stochastic rows of nonnegative
        weights, probability rows); the sums are taken in the array's type.

    Returns
    -------
    ndarray of shape (n, p)
        A new array of the dtype of :func:`~graphclust.numerics.as_float` (float32
        stays float32). A row whose norm (or sum) is not positive is left as it is, so
        an all-zero row stays zero and nothing is divided by zero.
    """
    E = as_float(E)
    if norm == "l2":
        scale = row_norms(E)
    elif norm == "l1":
        scale = E.sum(axis=1)
    else:
        raise ValueError(f"norm must be 'l2' or 'l1', got {norm!r}")
    scale = np.where(scale > 0, scale, 1.0).astype(E.dtype, copy=False)
    out = E / scale[:, None]
    if norm == "l2":
        # a length within the dtype's last digits of underflow (or past its largest
        # value) has lost its precision: divide by the largest entry first
        info = np.finfo(E.dtype)
        redo = np.flatnonzero((scale < info.tiny / info.eps) | ~np.isfinite(scale))
        if redo.size:
            rows, _, R = _by_largest_entry(E, redo)
            out[rows] = R / np.sqrt(np.einsum("ij,ij->i", R, R))[:, None]
    return out


def safe_inverse(values: ArrayLike, power: float = 1.0) -> np.ndarray:
    """``values ** -power`` where ``values > 0`` and ``0`` elsewhere, in float64.

    The rule for degrees (``D^{-1/2}``, ``Λ^{-1}``): an isolated vertex or an anchor no
    point chose gets ``0``, so nothing is divided by zero.
    """
    values = np.asarray(values, dtype=np.float64)
    out = np.zeros_like(values)
    positive = values > 0
    out[positive] = values[positive] ** (-power)
    return out
