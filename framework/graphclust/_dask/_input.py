"""A dask array or DataFrame → a validated float array, one chunk across the columns."""

from __future__ import annotations

import numpy as np

from graphclust._errors import InputError
from graphclust.numerics import float_dtype

__all__ = ["as_row_chunked", "check_finite_rows"]


def as_row_chunked(X, n_clusters: int | None = None, *, what: str = "X",
                   check_finite: bool = True):
    """Validate chunked input and return it as a ``dask.array`` chunked by rows only.

    A dask DataFrame must hold numeric (or boolean) columns only; it becomes an array
    with known chunk sizes (``to_dask_array(lengths=True)``, one pass to count rows).
    The dtype follows the in-memory rule (:func:`graphclust.numerics.float_dtype`:
    float32 and integers of <= 16 bits stay float32). Columns are gathered into one chunk
    per row block (a row-local stage needs whole rows). Finiteness is checked with one
    reduction over the chunks (unless ``check_finite`` is false: the fit plan checks it
    once the spec is admitted), and the row count against ``n_clusters``.
    """
    import dask.array as da

    if not isinstance(X, da.Array):
        if not hasattr(X, "to_dask_array"):
            raise InputError(f"{what} is a Dask collection of type {type(X).__name__}; give a "
                             "dask.array.Array or a dask DataFrame of numeric columns")
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        dtypes = getattr(X, "dtypes", None)
        bad = [str(c) for c, t in dict(dtypes.items()).items()
               if not (is_numeric_dtype(t) or is_bool_dtype(t))] if dtypes is not None else []
        if bad:
            raise InputError(f"{what}: a dask DataFrame must have numeric columns only; "
                             f"not numeric: {', '.join(bad)}")
        X = X.to_dask_array(lengths=True)
    if X.ndim != 2:
        raise InputError(f"{what} must be 2-D (n_samples, n_features), got {X.ndim}-D with "
                         f"shape {X.shape}")
    if any(np.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    if X.dtype == object or not (np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_):
        raise InputError(f"{what} must be numeric, got dtype {X.dtype}")
    n, d = X.shape
    if n == 0 or d == 0:
        raise InputError(f"{what} is empty: shape {X.shape}")
    X = X.astype(float_dtype(X.dtype), copy=False)
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    if check_finite:
        check_finite_rows(X, what=what)
    if n_clusters is not None and n < n_clusters:
        raise InputError(f"{what} has {n} sample{'s' if n != 1 else ''}, fewer than "
                         f"n_clusters={n_clusters}")
    return X


def check_finite_rows(X, *, what: str = "X") -> None:
    """Raise :class:`InputError` naming the first row of ``X`` (a dask array) holding NaN
    or infinity; one reduction over the chunks (two when one is found)."""
    import dask.array as da

    bad_rows = (~da.isfinite(X)).any(axis=1)
    if bool(bad_rows.any().compute()):
        first = int(da.argmax(bad_rows).compute())
        raise InputError(f"{what} contains NaN or infinity (first at row {first})")
