"""Identical rows share a label: the invariant every fit keeps (issue 46, S3 and S4).

No part can tell two identical rows apart by their values, so a partition that puts them
in different clusters says something about the parts (a kNN graph gives each copy an
arbitrary subset of the other copies as neighbours; the embedding rows then differ), not
about the data. After the rounding, every group of identical rows takes the label most of
its rows received (ties: the smaller label), and the labels are renumbered ``0..c-1`` when
a label lost all its rows. Rows are compared as the parts see them (after ``scale``), so
rows identical in ``X`` always share a label; ``0.0`` and ``-0.0`` are equal.

Cost: for dense rows, two BLAS products with fixed weights in row blocks (a projection
and its bound) and one sort of ``n`` projections find the candidates — the rows whose
projection lies within the summation's rounding bound of another row's, a superset of the
rows that have a twin; only those are fingerprinted (an exact 64-bit fingerprint, a
wrapping sum of the value bits times fixed odd multipliers; sparse rows are fingerprinted
directly in O(nnz)), sorted, and compared value by value where fingerprints coincide
(nothing merges rows that differ). MNIST-70k (no twins): 0.11 s, against 0.39 s when
every row was fingerprinted.
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np
import scipy.sparse as sp

from graphclust.numerics import fixed_threads

__all__ = ["row_groups", "identical_rows_share_labels", "row_groups_once"]

#: Within :func:`row_groups_once`: ``id(X) -> (X, groups)`` (the array held, so its id
#: is not reused while remembered); ``None`` outside.
_REMEMBERED: contextvars.ContextVar = contextvars.ContextVar("graphclust_row_groups",
                                                             default=None)


@contextlib.contextmanager
def row_groups_once():
    """Within this block, :func:`identical_rows_share_labels` finds the groups of one
    array object once: a pipeline's starts round the same rows (issue 48: 0.3 CPU s a
    start on MNIST-70k). Parts never modify ``X`` in place, so the groups hold."""
    token = _REMEMBERED.set({})
    try:
        yield
    finally:
        _REMEMBERED.reset(token)


def _groups_of(X) -> np.ndarray | None:
    """:func:`row_groups`, remembered inside :func:`row_groups_once`."""
    memo = _REMEMBERED.get()
    if memo is None:
        return row_groups(X)
    hit = memo.get(id(X))
    if hit is None or hit[0] is not X:
        hit = memo[id(X)] = (X, row_groups(X))
    return hit[1]

#: Rows fingerprinted at a time (bounds the temporary to a block of 64-bit words).
BLOCK_ROWS = 4096


def _multipliers(d: int) -> np.ndarray:
    """Fixed odd 64-bit multipliers, one per column (a constant stream: the same
    fingerprint for the same row in every fit)."""
    rng = np.random.default_rng(0x1D3)
    return rng.integers(0, 2**63, size=d, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


def _bits(values: np.ndarray) -> np.ndarray:
    """The values' bit patterns as 64-bit words, ``-0.0`` mapped to ``0.0``'s."""
    values = np.asarray(values)
    if values.dtype.kind not in "biuf" or values.dtype.itemsize > 8:
        values = values.astype(np.float64)
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[values.dtype.itemsize]
    bits = np.ascontiguousarray(values).view(width).astype(np.uint64)
    bits[values == 0] = 0
    return bits


def _fingerprints(X) -> np.ndarray:
    n, d = X.shape
    mult = _multipliers(d)
    if sp.issparse(X):
        X = sp.csr_array(X)
        with np.errstate(over="ignore"):
            terms = _bits(X.data) * mult[X.indices]
            total = np.concatenate([np.zeros(1, np.uint64), np.cumsum(terms, dtype=np.uint64)])
            return total[X.indptr[1:]] - total[X.indptr[:-1]]
    out = np.empty(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for lo in range(0, n, BLOCK_ROWS):
            out[lo:lo + BLOCK_ROWS] = (_bits(X[lo:lo + BLOCK_ROWS]) * mult).sum(
                axis=1, dtype=np.uint64)
    return out


def _same(X, i: int, j: np.ndarray) -> np.ndarray:
    """Whether rows ``j`` equal row ``i`` exactly (as values)."""
    if sp.issparse(X):
        diff = sp.csr_array(X[j] - X[np.full(len(j), i)])
        diff.eliminate_zeros()
        return np.diff(diff.indptr) == 0
    return np.all(X[j] == X[i], axis=1)


def _candidates(X: np.ndarray) -> np.ndarray:
    """The rows of dense ``X`` that may equal another row: their projections ``x·w`` on
    fixed weights ``w`` in [1, 2) lie within ``4(d+1)·eps·max(|x|·w)`` of another row's —
    the rounding bound of any summation order, so identical rows are always among them."""
    n, d = X.shape
    w = np.random.default_rng(0x1D3).uniform(1.0, 2.0, size=d)
    proj, bound = np.empty(n), 0.0
    # matrix-vector products on one BLAS thread: a threaded one gains little and, on a
    # busy machine, spends twice the processor time waiting (MNIST-70k, 2026-11-28)
    with fixed_threads():
        for lo in range(0, n, BLOCK_ROWS):
            block = np.asarray(X[lo:lo + BLOCK_ROWS], dtype=np.float64)
            proj[lo:lo + BLOCK_ROWS] = block @ w
            size = proj[lo:lo + BLOCK_ROWS] if block.min() >= 0 else np.abs(block) @ w
            bound = max(bound, float(size.max()))
    order = np.argsort(proj, kind="stable")
    close = np.diff(proj[order]) <= 4.0 * (d + 1) * np.finfo(np.float64).eps * bound
    mark = np.zeros(n, dtype=bool)
    mark[order[1:][close]] = True
    mark[order[:-1][close]] = True
    return np.flatnonzero(mark)


def row_groups(X) -> np.ndarray | None:
    """A group id per row, equal exactly for identical rows (dense or sparse ``X``), or
    ``None`` when every row is distinct."""
    X = X if sp.issparse(X) else np.asarray(X)
    n = X.shape[0]
    if n < 2:
        return None
    if sp.issparse(X):
        return _exact_groups(X)
    rows = _candidates(X)
    if rows.size == 0:
        return None
    sub = _exact_groups(X[rows])
    if sub is None:
        return None
    group = np.arange(n)
    group[rows] = rows[sub]
    return group


def _exact_groups(X) -> np.ndarray | None:
    """:func:`row_groups` on every row of ``X``: fingerprints, then exact comparison."""
    n = X.shape[0]
    if n < 2:
        return None
    fp = _fingerprints(X)
    order = np.argsort(fp, kind="stable")
    sorted_fp = fp[order]
    starts = np.flatnonzero(np.r_[True, sorted_fp[1:] != sorted_fp[:-1]])
    if starts.size == n:
        return None
    group = np.arange(n)
    sizes = np.diff(np.r_[starts, n])
    for start, size in zip(starts[sizes > 1], sizes[sizes > 1]):
        members = order[start:start + size]
        while members.size > 1:  # exact: rows that differ are never merged
            same = _same(X, members[0], members)
            group[members[same]] = members[0]
            members = members[~same]
    if np.unique(group).size == n:
        return None
    return group


def identical_rows_share_labels(X, labels: np.ndarray) -> np.ndarray:
    """``labels`` with every group of identical rows of ``X`` given its majority label
    (ties: the smaller label), renumbered ``0..c-1`` when a label lost all its rows;
    ``labels`` itself when no group was split."""
    labels = np.asarray(labels)
    if X is None or labels.ndim != 1 or X.shape[0] != labels.size:
        return labels
    group = _groups_of(X)
    if group is None:
        return labels
    codes, lab = np.unique(labels, return_inverse=True)
    pair = group.astype(np.int64) * codes.size + lab
    pairs, counts = np.unique(pair, return_counts=True)
    owner, code = pairs // codes.size, pairs % codes.size
    # per group: the most frequent label code, smallest on ties (pairs sorted by code)
    best = np.lexsort((code, -counts, owner))
    first = best[np.r_[True, owner[best][1:] != owner[best][:-1]]]
    vote = np.full(labels.size, -1, dtype=np.int64)
    vote[owner[first]] = code[first]
    out_codes = vote[group]
    if np.array_equal(out_codes, lab):
        return labels
    kept = np.unique(out_codes)
    if kept.size < codes.size:  # a label lost all its rows: 0..c-1 again
        return np.searchsorted(kept, out_codes).astype(labels.dtype)
    return codes[out_codes].astype(labels.dtype)
