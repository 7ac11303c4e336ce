"""A dask array or DataFrame → a validated float array, one chunk across the columns."""

from __future__ import annotations

import numpy as np

from graphclust._errors import InputError
from graphclust._input import check_dtype
from graphclust.numerics import float_dtype

__all__ = ["as_row_chunked", "check_finite_rows", "value_summary", "feature_names"]


def without_empty_chunks(X):
    """``X`` (row-chunked) without its empty row chunks (the same rows, in order)."""
    sizes = X.chunks[0]
    if all(sizes) or not any(sizes):
        return X
    return X.rechunk({0: tuple(c for c in sizes if c)})


def with_row_chunks(out, row_chunks):
    """``out`` (one row per input row) chunked by rows as ``row_chunks`` again, empty
    chunks included, so labels line up block by block with the input."""
    if out is None or not hasattr(out, "chunks") or out.chunks[0] == tuple(row_chunks):
        return out
    return out.rechunk({0: tuple(row_chunks)})


def feature_names(X):
    """The column names of a dask DataFrame as scikit-learn records them
    (``feature_names_in_``: all strings), else ``None``."""
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "to_dask_array"):
        return None
    names = list(columns)
    if names and all(isinstance(c, str) for c in names):
        return np.asarray(names, dtype=object)
    return None


def as_row_chunked(X, n_clusters: int | None = None, *, what: str = "X",
                   check_finite: bool = True, drop_empty: bool = True):
    """Validate chunked input and return it as a ``dask.array`` chunked by rows only.

    A dask DataFrame must hold numeric (or boolean) columns only; it becomes an array
    with known chunk sizes (``to_dask_array(lengths=True)``, one pass to count rows).
    The dtype follows the in-memory rule (:func:`graphclust.numerics.float_dtype`:
    float32 and integers of <= 16 bits stay float32). Columns are gathered into one chunk
    per row block (a row-local stage needs whole rows). Finiteness is checked with one
    reduction over the chunks (unless ``check_finite`` is false: the fit plan checks it
    once the spec is admitted), and the row count against ``n_clusters``. Empty row
    chunks (a filtered DataFrame's empty partition) are dropped unless ``drop_empty`` is
    false, so that no part meets an empty block; the executor drops them itself and
    gives its outputs the input's chunking back (:func:`with_row_chunks`).
    """
    import dask.array as da

    if not isinstance(X, da.Array):
        if getattr(X, "ndim", None) == 1 or (hasattr(X, "to_frame")
                                             and not hasattr(X, "columns")):
            raise InputError(f"{what} must be 2-D (n_samples, n_features), but a dask Series "
                             "is 1-D; use series.to_frame() for a single feature")
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
    check_dtype(X.dtype, what)
    n, d = X.shape
    if n == 0 or d == 0:
        raise InputError(f"{what} is empty: shape {X.shape}")
    X = X.astype(float_dtype(X.dtype), copy=False)
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    if drop_empty:
        X = without_empty_chunks(X)
    if check_finite:
        check_finite_rows(X, what=what)
    if n_clusters is not None and n < n_clusters:
        raise InputError(f"{what} has {n} sample{'s' if n != 1 else ''}, fewer than "
                         f"n_clusters={n_clusters}")
    return X


def _first_bad_row(bad_rows, what: str):
    import dask.array as da

    first = int(da.argmax(bad_rows).compute())
    raise InputError(f"{what} contains NaN or infinity (first at row {first})")


def check_finite_rows(X, *, what: str = "X") -> None:
    """Raise :class:`InputError` naming the first row of ``X`` (a dask array) holding NaN
    or infinity; one reduction over the chunks (two when one is found)."""
    import dask.array as da

    bad_rows = (~da.isfinite(X)).any(axis=1)
    if bool(bad_rows.any().compute()):
        _first_bad_row(bad_rows, what)


def _block_min(b):
    return b.min(axis=0, keepdims=True) if b.shape[0] else np.full((1, b.shape[1]), np.inf)


def _block_max(b):
    return b.max(axis=0, keepdims=True) if b.shape[0] else np.full((1, b.shape[1]), -np.inf)


def _block_distinct(b, cap):
    from graphclust._degenerate import distinct_rows

    return distinct_rows(b, cap)


def value_summary(X, cap: int, *, what: str = "X") -> tuple[np.ndarray, int]:
    """``(ranges, n_distinct)`` of a row-chunked dask array in one pass over the chunks,
    after checking it is finite (:func:`check_finite_rows`' error): the column ranges
    (min/max per chunk, reduced on the client: ``d``-sized) and the number of distinct
    rows capped at ``cap + 1`` (each chunk ships at most ``cap + 1`` distinct rows).
    These are what the in-memory fit computes from the whole array, for the same
    decisions (:func:`graphclust._degenerate.check_spread`, :func:`warn_few_distinct`)."""
    import dask
    import dask.array as da

    from graphclust._degenerate import distinct_rows

    bad_rows = (~da.isfinite(X)).any(axis=1)
    d = X.shape[1]
    lows = X.map_blocks(_block_min, chunks=((1,) * len(X.chunks[0]), (d,)), dtype=X.dtype)
    highs = X.map_blocks(_block_max, chunks=((1,) * len(X.chunks[0]), (d,)), dtype=X.dtype)
    parts = [dask.delayed(_block_distinct)(b, cap) for b in X.to_delayed().ravel()]
    bad, low, high, *rows = dask.compute(bad_rows.any(), lows.min(axis=0), highs.max(axis=0),
                                         *parts)
    if bool(bad):
        _first_bad_row(bad_rows, what)
    ranges = np.asarray(high, dtype=np.float64) - np.asarray(low, dtype=np.float64)
    rows = [r for r in rows if r.shape[0]]
    n_distinct = distinct_rows(np.vstack(rows), cap).shape[0] if rows else 0
    return ranges, n_distinct
