"""Sparse rows kept sparse: the row and column statistics the parts need on a CSR ``X``,
and the one guarded way to densify.

Text data (tf-idf, bag of words) come as ``scipy.sparse`` matrices whose dense form is
hundreds of times larger (5 000 documents × 50 000 terms with 250 000 nonzeros: 3 MB
as CSR, 2 GB dense in float64). Parts that can work on sparse rows declare
``accepts_sparse = True`` and get the CSR matrix; their maths go through this module and
the sparse branches of :mod:`.distances` (distances to anchors as ``‖x‖² − 2 X Uᵀ +
‖u‖²`` with ``X Uᵀ`` a sparse product), :mod:`.scaling` (column scaling without
centring) and :mod:`.pca` (a truncated SVD without centring, LSA).

A part that cannot work on sparse rows gets them densified by :func:`densify`, which
refuses above :data:`DENSIFY_LIMIT_BYTES` (the environment variable
``GRAPHCLUST_DENSIFY_LIMIT``, in bytes, overrides it) with the dense size in the message,
and warns below it: a densification is never silent.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import attrs
import numpy as np
import scipy.sparse as sp

from graphclust._errors import DensifyWarning, InputError

__all__ = ["DENSIFY_LIMIT_BYTES", "DensifyWarning", "SPARSE_ALTERNATIVES", "as_csr",
           "densify", "densify_limit", "dense_bytes", "sparse_column_range",
           "sparse_column_mean_std", "ColumnMap", "drop_empty_columns",
           "sparse_column_maxabs", "sparse_row_sq_norms",
           "scale_columns", "normalize_sparse_rows", "float_rows", "SPARSE_ROWS_ZEROS",
           "rows_by_zeros"]

#: Largest dense size (bytes) a sparse ``X`` is densified to for a part that needs dense
#: rows: 1 GiB (a tenth of a laptop's memory; 5 000 × 25 000 in float64). Above it the
#: fit is refused before any work with the dense size in the message.
DENSIFY_LIMIT_BYTES = 2**30

#: Rows count as sparse when at least this fraction of their entries are zero, whatever
#: the container: a product over the nonzeros then costs no more than BLAS over every
#: entry (2 000 x 10 000 rows, one thread: CSR 0.34x the dense time at 2 % nonzero,
#: 0.83x at 5 %, 2.2x at 10 %). ``auto``'s rule 6 and :func:`rows_by_zeros` read it.
SPARSE_ROWS_ZEROS = 0.95

#: The sparse-capable alternatives named by a refusal (built-in part names by stage).
SPARSE_ALTERNATIVES = ("anchors 'kmeans', 'random' or 'hybrid'; graph 'knn', "
                       "'gaussian-anchor' or 'knr-bipartite'; scale 'none', 'standard' "
                       "(no centring on sparse data), 'minmax' (max-abs) or 'l2'; the "
                       "presets 'auto', 'uspec' and 'anchor-spectral'")


def densify_limit() -> int:
    """The limit in force: ``GRAPHCLUST_DENSIFY_LIMIT`` (bytes) when set, else
    :data:`DENSIFY_LIMIT_BYTES`."""
    from graphclust.environ import read_env

    value = read_env("GRAPHCLUST_DENSIFY_LIMIT")
    return DENSIFY_LIMIT_BYTES if value is None else value


def as_csr(X) -> sp.csr_array:
    """``X`` as a canonical CSR array (sorted indices, duplicates summed, stored zeros
    dropped; 32-bit indices where they fit) of a float type: float32 stays float32,
    anything else float64."""
    from graphclust.numerics.dtypes import float_dtype

    A = sp.csr_array(X)
    A = A.astype(float_dtype(A.dtype), copy=False)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    A.eliminate_zeros()
    if A.indices.dtype != np.int32 and A.nnz < 2**31 and max(A.shape) < 2**31:
        # 32-bit indices where they fit: scikit-learn's sparse k-means takes no other
        A = sp.csr_array((A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)),
                         shape=A.shape)
    return A


def float_rows(X):
    """Rows to compute with, sparse or dense: a sparse ``X`` as :func:`as_csr`, anything
    else as :func:`graphclust.numerics.as_float` (what a part with ``accepts_sparse``
    calls where a dense-only part calls ``as_dense_float``)."""
    from graphclust.numerics.dtypes import as_float

    return as_csr(X) if sp.issparse(X) else as_float(X)


def rows_by_zeros(X):
    """:func:`float_rows`, except that dense rows with at least :data:`SPARSE_ROWS_ZEROS`
    zeros become CSR (one counting pass): a part then computes on the same rows, and the
    same way, whether the data arrived dense or sparse."""
    if not sp.issparse(X):
        X = np.asarray(X)
        if X.ndim == 2 and X.size and \
                np.count_nonzero(X) <= (1.0 - SPARSE_ROWS_ZEROS) * X.size:
            return as_csr(X)
    return float_rows(X)


def dense_bytes(X) -> int:
    """Bytes of the dense form of ``X`` (``n · d · itemsize``)."""
    n, d = X.shape
    return int(n) * int(d) * int(np.dtype(X.dtype).itemsize)


def _gib(nbytes: float) -> str:
    return f"{nbytes / 2**30:.3g} GiB"


def densify(X, needs: Sequence[str] | str, *, limit: int | None = None) -> np.ndarray:
    """The dense form of sparse ``X`` for the parts named in ``needs``, within the limit.

    Parameters
    ----------
    X : sparse matrix of shape (n, d)
    needs : sequence of str or str
        What needs dense rows, as named in messages (``"graph 'poly-knn'"``).
    limit : int, optional
        Bytes; default :func:`densify_limit`.

    Returns
    -------
    ndarray of shape (n, d)
        Emits one :class:`DensifyWarning` saying what was densified, for whom and its size.

    Raises
    ------
    InputError
        When the dense form exceeds ``limit``: the message gives its size in GiB and the
        sparse-capable alternatives.
    """
    if not sp.issparse(X):
        return np.asarray(X)
    who = needs if isinstance(needs, str) else ", ".join(needs)
    limit = densify_limit() if limit is None else int(limit)
    size = dense_bytes(X)
    if size > limit:
        raise InputError(
            f"sparse X ({X.shape[0]} x {X.shape[1]}, {X.nnz} nonzeros) would have to be "
            f"densified to {_gib(size)} for {who}, above the densify limit of "
            f"{_gib(limit)} (graphclust.numerics.DENSIFY_LIMIT_BYTES; the environment "
            "variable GRAPHCLUST_DENSIFY_LIMIT sets another, in bytes). Parts that keep "
            f"sparse rows sparse: {SPARSE_ALTERNATIVES}")
    warnings.warn(f"sparse X ({X.shape[0]} x {X.shape[1]}, {X.nnz} nonzeros) densified to "
                  f"{_gib(size)} for {who} (dense rows needed; limit {_gib(limit)})",
                  DensifyWarning, stacklevel=3)
    return np.asarray(X.toarray())


def sparse_row_sq_norms(X) -> np.ndarray:
    """``‖x‖²`` of every row of sparse ``X``, accumulated in float64 (shape ``(n,)``)."""
    X = sp.csr_array(X)
    sq = np.asarray(X.data, dtype=np.float64) ** 2
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    return np.bincount(rows, weights=sq, minlength=X.shape[0]).astype(np.float64)


def _col_nnz(X: sp.csr_array) -> np.ndarray:
    return np.bincount(X.indices, minlength=X.shape[1])


def sparse_column_range(X) -> np.ndarray:
    """``max - min`` of every column of sparse ``X``, the implicit zeros included
    (float64, shape ``(d,)``)."""
    X = sp.csr_array(X)
    if X.shape[0] == 0:
        return np.zeros(X.shape[1])
    hi = np.asarray(X.max(axis=0).toarray(), dtype=np.float64).ravel()
    lo = np.asarray(X.min(axis=0).toarray(), dtype=np.float64).ravel()
    return hi - lo  # scipy's max/min count the implicit zeros of a column


def sparse_column_mean_std(X) -> tuple[np.ndarray, np.ndarray]:
    """Column means and population standard deviations of sparse ``X`` (float64),
    the implicit zeros included, from deviations (no ``E[x²] − E[x]²`` cancellation)."""
    X = sp.csr_array(X)
    n = X.shape[0]
    data = np.asarray(X.data, dtype=np.float64)
    mean = np.bincount(X.indices, weights=data, minlength=X.shape[1]) / max(n, 1)
    dev = data - mean[X.indices]
    m2 = np.bincount(X.indices, weights=dev * dev, minlength=X.shape[1])
    m2 += (n - _col_nnz(X)) * mean * mean  # the implicit zeros
    return mean, np.sqrt(np.maximum(m2 / max(n, 1), 0.0))


def sparse_column_maxabs(X) -> np.ndarray:
    """``max |x|`` of every column of sparse ``X`` (float64, 0 for an empty column)."""
    X = sp.csr_array(X)
    out = np.zeros(X.shape[1])
    if X.nnz:
        np.maximum.at(out, X.indices, np.abs(np.asarray(X.data, dtype=np.float64)))
    return out


def scale_columns(X, divisor: np.ndarray) -> sp.csr_array:
    """Sparse ``X`` with column ``j`` divided by ``divisor[j]`` (zeros stay zeros; the
    float type of ``X`` is kept)."""
    X = sp.csr_array(X)
    out = X.copy()
    inv = (1.0 / np.asarray(divisor, dtype=np.float64)).astype(X.dtype)
    out.data = out.data * inv[out.indices]
    return out


def normalize_sparse_rows(X) -> sp.csr_array:
    """Rows of sparse ``X`` divided by their Euclidean length (a zero row stays zero)."""
    X = sp.csr_array(X)
    norms = np.sqrt(sparse_row_sq_norms(X))
    norms = np.where(norms > 0, norms, 1.0)
    out = X.copy()
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    out.data = (out.data / norms[rows]).astype(X.dtype, copy=False)
    return out


@attrs.frozen(eq=False)
class ColumnMap:
    """The columns of a wide sparse ``X`` that hold a stored value, and how new rows are
    mapped onto them (:func:`drop_empty_columns`).

    A column with no stored value in the training rows adds nothing to any Euclidean
    distance, inner product or column statistic the parts compute on them, so the parts
    see only the ``kept`` columns plus one last column, zero in every training row. A
    new row puts there the Euclidean norm of its values in the dropped columns: its
    distances to anything fitted (anchors, centres: zero in every dropped column), its
    inner products with it and its norm are then exactly those of the whole row.

    Attributes
    ----------
    width : int
        ``d``, the number of columns of the data given.
    kept : ndarray of int64
        The sorted columns that hold a stored value in the training rows.
    """

    width: int
    kept: np.ndarray

    @property
    def n_columns(self) -> int:
        """Columns the parts see: the kept ones and the rest column."""
        return int(self.kept.size) + 1

    def apply(self, X):
        """New rows (sparse or dense, ``width`` columns) on the kept columns plus the
        norm of the others; sparse stays sparse, dense stays dense."""
        if sp.issparse(X):  # O(nnz log m): nothing of the width is allocated
            X = as_csr(X)
            n, m = X.shape[0], int(self.kept.size)
            pos = np.searchsorted(self.kept, X.indices)
            hit = pos < m
            hit[hit] = self.kept[pos[hit]] == X.indices[hit]
            rows = np.repeat(np.arange(n), np.diff(X.indptr))
            data = np.asarray(X.data, dtype=np.float64)
            rest = np.sqrt(np.bincount(rows[~hit], weights=data[~hit] ** 2, minlength=n))
            has = np.flatnonzero(rest)
            out = sp.csr_array((np.concatenate([X.data[hit], rest[has].astype(X.dtype)]),
                                (np.concatenate([rows[hit], has]),
                                 np.concatenate([pos[hit], np.full(has.size, m)]))),
                               shape=(n, m + 1))
            return as_csr(out)
        X = np.asarray(X)
        kept = X[:, self.kept]
        others = np.delete(X, self.kept, axis=1)  # summed directly: no cancellation
        rest = np.sqrt(np.einsum("ij,ij->i", others, others, dtype=np.float64))
        return np.hstack([kept, rest[:, None].astype(kept.dtype)])


def drop_empty_columns(X):
    """``(X', column_map)``: a sparse ``X`` wider than its stored values on the columns
    that hold one (plus a zero rest column, see :class:`ColumnMap`), else ``(X, None)``.

    The rule is ``d > nnz``: then at least ``d − nnz`` columns are empty and every
    vector of length ``d`` a part allocates (column means, ranges and scales, the
    anchors' centre, each dense anchor row) is larger than the whole stored matrix —
    ``2 000 x 10**6`` at 20 values a row holds 40 000 values (0.5 MB) while one column
    vector is 8 MB and 1 000 dense anchors 8 GB; one LIBSVM row with the index
    ``2 000 000 000`` implies 16 GB a column vector. With the empty columns dropped the
    width is at most ``nnz + 1``, so memory follows the stored values, not the index
    range. Data with ``d <= nnz`` (a tf-idf matrix of any real corpus) are left as they
    are: a ``d``-vector then costs no more than the data.
    """
    if not sp.issparse(X):
        return X, None
    X = as_csr(X)
    if X.shape[1] <= X.nnz:
        return X, None
    kept = np.unique(X.indices).astype(np.int64)
    cmap = ColumnMap(int(X.shape[1]), kept)
    remap = np.searchsorted(kept, X.indices).astype(X.indices.dtype)
    Xc = sp.csr_array((X.data, remap, X.indptr), shape=(X.shape[0], cmap.n_columns))
    return as_csr(Xc), cmap
