"""Row-wise reductions over a CSR matrix without densifying it, and its row blocks.

A soft assignment that is a hard partition lifted by a few edge shares (the ``leiden``
solver's) has a handful of stored entries a row; its dense ``n x k`` form is what does
not fit at scale (``n = 10**6``, ``k = 100``: 800 MB in float64). The roundings read it
through these functions, which give the same answers as the dense ``argmax`` / ``max``
on the rows (the missing entries read as 0), in ``O(nnz)`` memory. :func:`row_blocks`
splits an ``n x n`` CSR graph into row ranges of bounded stored entries, so an ``O(nnz)``
pass over it needs ``O(block)`` scratch memory, not ``O(nnz)``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["ROW_BLOCK_ENTRIES", "row_blocks", "sparse_row_argmax", "sparse_row_margin"]

#: Stored entries a row block of :func:`row_blocks` holds at most (unless one row has
#: more): 2**22, so its int64 / float64 scratch arrays take 32 MiB each.
ROW_BLOCK_ENTRIES = 2**22


def row_blocks(indptr: np.ndarray, max_entries: int = ROW_BLOCK_ENTRIES
               ) -> list[tuple[int, int]]:
    """``[(lo, hi), ...]``: consecutive row ranges covering all rows of a CSR matrix with
    row pointer ``indptr``, each holding at most ``max_entries`` stored entries (a row
    with more is a block of its own)."""
    indptr = np.asarray(indptr)
    n = indptr.size - 1
    blocks, lo = [], 0
    while lo < n:
        hi = int(np.searchsorted(indptr, indptr[lo] + max_entries, side="right")) - 1
        hi = min(max(hi, lo + 1), n)
        blocks.append((lo, hi))
        lo = hi
    return blocks


def _canonical(S) -> sp.csr_array:
    S = sp.csr_array(S)
    if not S.has_canonical_format:
        S = S.copy()
        S.sum_duplicates()
    return S


def _entry_rows(S: sp.csr_array) -> np.ndarray:
    return np.repeat(np.arange(S.shape[0]), np.diff(S.indptr))


def _row_max(S: sp.csr_array, data: np.ndarray) -> np.ndarray:
    """Largest stored value of each row (``-inf`` for a row with none)."""
    out = np.full(S.shape[0], -np.inf)
    lengths = np.diff(S.indptr)
    some = np.flatnonzero(lengths > 0)
    if some.size:
        out[some] = np.maximum.reduceat(data, S.indptr[some])
    return out


def sparse_row_argmax(S) -> tuple[np.ndarray, np.ndarray]:
    """``(columns, maxima)``: for each row of a nonnegative sparse ``S``, the lowest
    column holding the row's largest value, and that value — what ``S.toarray().argmax(
    axis=1)`` and ``.max(axis=1)`` give. A row whose largest value is 0 (no positive
    entry) gets column 0 and maximum 0, like the dense argmax of a zero row."""
    S = _canonical(S)
    n = S.shape[0]
    rowmax = np.maximum(_row_max(S, S.data), 0.0)
    cols = np.zeros(n, dtype=np.int64)
    rows = _entry_rows(S)
    hit = np.flatnonzero((S.data == rowmax[rows]) & (S.data > 0))
    # entries are in row order, columns increasing within a row: the first hit of a row
    # is its lowest column
    first_rows, first = np.unique(rows[hit], return_index=True)
    cols[first_rows] = S.indices[hit[first]]
    return cols, rowmax


def sparse_row_margin(S, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(own, rival)``: each row's value in its label's column and the largest value in
    its other columns (at least 0: a missing entry is a 0), of a nonnegative sparse
    ``S``; labels outside ``[0, k)`` read as column ``clip(label, 0, k - 1)``, as the
    dense margin does."""
    S = _canonical(S)
    n, k = S.shape
    labels = np.clip(np.asarray(labels, dtype=np.int64), 0, max(k - 1, 0))
    rows = _entry_rows(S)
    mine = S.indices == labels[rows]
    own = np.zeros(n)
    own[rows[mine]] = S.data[mine]
    others = np.where(mine, -np.inf, S.data)
    rival = np.maximum(_row_max(S, others), 0.0)
    return own, rival
