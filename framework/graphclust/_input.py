"""Data at the boundary: what every fit and every predict checks before any work.

:func:`check_input` is graphclust's own check (2-D, non-empty, numeric, finite,
``n >= n_clusters``); :func:`validate_rows` adds scikit-learn's bookkeeping for an
estimator (``n_features_in_``, ``feature_names_in_``, the dtype rule) with graphclust's
messages.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from graphclust._errors import InputError
from graphclust.numerics import float_dtype

__all__ = ["check_input", "check_dtype", "validate_rows"]


def check_dtype(dtype: Any, what: str = "X") -> None:
    """Refuse a dtype no part can compute with: not numeric (strings, objects) or
    complex (casting to real would silently drop the imaginary part). The one dtype
    rule of the in-memory and the chunked input (:func:`graphclust._dask._input.as_row_chunked`)."""
    dtype = np.dtype(dtype)
    if dtype == object or not (np.issubdtype(dtype, np.number) or dtype == np.bool_):
        raise InputError(f"{what} must be numeric, got dtype {dtype}")
    if dtype.kind == "c":
        raise InputError(f"Complex data not supported: {what} has complex dtype {dtype}; "
                         "graphclust clusters real vectors and does not drop the imaginary "
                         "part silently: pass "
                         "X.real, np.abs(X), or the real and imaginary parts as columns "
                         "(np.hstack([X.real, X.imag]))")


def check_input(X: Any, n_clusters: int | None = None, *, what: str = "X"):
    """Validate data: 2-D, non-empty, finite, numeric; ``n >= n_clusters``.

    Dense float32 stays float32, and so do integers of at most 16 bits (pixels,
    counts: exact in float32, half the memory of float64); anything else becomes
    float64. Sparse input (CSR, CSC, COO, ...) stays sparse: it becomes a canonical CSR
    array of the same float rule, its stored values checked for NaN and infinity, and
    it is never densified here (parts that need dense rows get them from the executor,
    within :data:`graphclust.numerics.DENSIFY_LIMIT_BYTES`).
    """
    if sp.issparse(X):
        return _check_sparse(X, n_clusters, what)
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise InputError(f"{what} cannot be read as an array: {exc}") from None
    check_dtype(arr.dtype, what)
    if arr.ndim != 2:
        raise InputError(f"{what} must be 2-D (n_samples, n_features), got {arr.ndim}-D "
                         f"with shape {arr.shape}" + ("; reshape a single feature with "
                                                      "X.reshape(-1, 1)" if arr.ndim == 1 else ""))
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InputError(f"{what} is empty: shape {arr.shape}")
    arr = arr.astype(float_dtype(arr.dtype), copy=False)
    if not np.all(np.isfinite(arr)):
        bad = "NaN" if np.isnan(arr).any() else "infinity"
        raise InputError(f"{what} contains {bad} (first at row "
                         f"{int(np.argwhere(~np.isfinite(arr))[0, 0])})")
    if n_clusters is not None and arr.shape[0] < n_clusters:
        n = arr.shape[0]
        raise InputError(f"{what} has {n} sample{'s' if n != 1 else ''}, fewer than "
                         f"n_clusters={n_clusters}")
    return arr


def _check_sparse(X, n_clusters: int | None, what: str) -> sp.csr_array:
    """:func:`check_input` of a sparse matrix: the same rules on its stored values."""
    from graphclust.numerics import as_csr

    check_dtype(X.dtype, what)
    if len(X.shape) != 2:
        raise InputError(f"{what} must be 2-D (n_samples, n_features), got shape {X.shape}")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise InputError(f"{what} is empty: shape {X.shape}")
    A = as_csr(X)
    bad = ~np.isfinite(A.data)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        row = int(np.searchsorted(A.indptr, first, side="right") - 1)
        kind = "NaN" if np.isnan(A.data).any() else "infinity"
        raise InputError(f"{what} contains {kind} (first at row {row})")
    if n_clusters is not None and A.shape[0] < n_clusters:
        n = A.shape[0]
        raise InputError(f"{what} has {n} sample{'s' if n != 1 else ''}, fewer than "
                         f"n_clusters={n_clusters}")
    return A


def validate_rows(estimator, X, *, reset: bool):
    """scikit-learn's bookkeeping for ``estimator`` (``n_features_in_``, dtypes, shape
    errors as :class:`InputError`); finiteness is left to :func:`check_input`, whose
    messages say where the NaN is."""
    from sklearn.utils.validation import validate_data

    if sp.issparse(X):
        check_dtype(X.dtype)
    else:  # shape and dtype first, in graphclust's words
        try:
            arr = np.asarray(X)
        except Exception:  # ragged lists and the like: check_input names it
            arr = None
        if arr is not None and arr.ndim == 1:
            raise InputError(f"X must be 2-D (n_samples, n_features), got 1-D with shape "
                             f"{arr.shape}. Reshape your data: X.reshape(-1, 1) for a "
                             "single feature, X.reshape(1, -1) for a single sample")
        # (object arrays of numbers are scikit-learn's to convert)
        if arr is None or arr.ndim != 2 or arr.dtype.kind in "USVc":
            check_input(X)
    dtype = (np.float64, np.float32)
    if float_dtype(getattr(X, "dtype", np.float64)) == np.float32:
        dtype = np.float32  # integers of <= 16 bits: exact in float32, half the memory
    try:
        return validate_data(estimator, X, accept_sparse=("csr", "csc", "coo"),
                             dtype=dtype, ensure_min_samples=1,
                             ensure_all_finite=False, reset=reset)
    except ValueError as exc:
        raise InputError(str(exc)) from None
