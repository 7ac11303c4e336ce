"""The keep-float32 rule: which float type data are computed in.

float32 input stays float32 (half the memory of float64 at scale), and so do integers
and booleans of at most 16 bits (pixels, counts), which float32 holds exactly; any
other input is computed in float64. Sums, centres and small m×m algebra are
accumulated in float64 by the callers whatever the data type.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, DTypeLike

__all__ = ["float_dtype", "as_float", "as_dense_float", "common_float_dtype"]


def float_dtype(dtype: DTypeLike) -> type:
    """The float type data of ``dtype`` are computed in.

    Parameters
    ----------
    dtype : dtype-like

    Returns
    -------
    type
        ``numpy.float32`` for float32 and for integers (and booleans) of at most 16
        bits, which float32 holds exactly; ``numpy.float64`` otherwise.
    """
    dtype = np.dtype(dtype)
    if dtype == np.float32 or (dtype.kind in "biu" and dtype.itemsize <= 2):
        return np.float32
    return np.float64


def as_float(X: ArrayLike) -> np.ndarray:
    """``X`` as a float array of :func:`float_dtype` (no copy when it already is one).

    Parameters
    ----------
    X : array-like

    Returns
    -------
    ndarray
        float32 for float32 and small-integer input, float64 otherwise.
    """
    X = np.asarray(X)
    return X.astype(float_dtype(X.dtype), copy=False)


def as_dense_float(X) -> np.ndarray:
    """``X`` as a dense float array: a sparse matrix is densified, then :func:`as_float`."""
    if sp.issparse(X):
        X = X.toarray()
    return as_float(X)


def common_float_dtype(*arrays: np.ndarray) -> type:
    """float32 when every array is float32, float64 otherwise (the type two arrays that
    meet in one product are computed in)."""
    return np.float32 if all(np.asarray(a).dtype == np.float32 for a in arrays) else np.float64
