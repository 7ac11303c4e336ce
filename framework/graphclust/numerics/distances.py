"""Blocked pairwise distances and nearest-``s`` search shared by every graph builder.

Row-local work done block by block: each block of rows meets all candidates in one
BLAS product (``‖x‖² − 2 x uᵀ + ‖u‖²``, :func:`sq_distances`) and only the ``s`` best
are kept (:func:`smallest_per_row`), so memory is ``O(block · m)`` whatever ``n`` is.

The expansion cancels catastrophically when the data sit far from the origin (a
constant offset of ``1e9`` leaves no significant digit of a unit distance in float64),
while a translation changes no Euclidean distance. So both sides are first shifted by
a reference point, the mean of the candidates (:func:`distance_reference`): the
expansion then works on coordinates of the size of the data's spread. The squared
distances a search returns for the ``s`` kept are recomputed from the differences
``x − u`` (``O(n · s · d)``), so they are exact whatever the offset. Inner products
(``metric="inner_product"``) are not translation invariant and are left as they are.
For data-to-data graphs at large ``n`` the approximate path uses faiss
(``pip install graphclust[ann]``).

Sparse rows (a ``scipy.sparse`` ``X``; the anchors ``U`` are always dense) stay sparse:
:func:`sparse_sq_distances` takes ``X Uᵀ`` as one sparse-times-dense product and the row
norms from the stored values, with no shift (shifting would densify ``X``; sparse data
contain the origin's coordinates in most columns, so their offset is of the size of
their spread and the expansion keeps its digits). The kept distances are recomputed in
float64 by :func:`sparse_pair_sq` from the stored values only (``O(nnz · s)``).
"""

from __future__ import annotations

from typing import Any

import warnings
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from graphclust._errors import GraphClustWarning
from graphclust.numerics.knn_size import resolve_knn_method
from graphclust.numerics.dtypes import common_float_dtype

__all__ = ["nearest_anchors", "grouped_nearest", "self_first_neighbors", "knn", "clamp_anchors",
           "default_block_size", "sq_distances", "smallest_per_row", "mean_sq_distance",
           "clamp_neighbors", "distance_reference", "exact_smallest", "sparse_sq_distances",
           "sparse_pair_sq"]


def default_block_size(n_candidates: int, budget_bytes: int = 256 * 2**20) -> int:
    """Rows per block so that one ``block x n_candidates`` float64 slab fits ``budget_bytes``."""
    return int(max(16, min(65536, budget_bytes // (8 * max(n_candidates, 1)))))


def clamp_anchors(n_anchors: int, n_samples: int, who: str = "anchors") -> int:
    """Clamp a requested anchor count to ``n_samples`` with a warning."""
    if n_anchors > n_samples:
        warnings.warn(
            f"{who}: n_anchors={n_anchors} exceeds the number of samples {n_samples}; "
            f"using {n_samples}",
            GraphClustWarning,
            stacklevel=3,
        )
        return int(n_samples)
    return int(n_anchors)


def distance_reference(U: np.ndarray) -> np.ndarray:
    """The point both sides of a squared-distance expansion are shifted by: the mean of
    the rows of ``U`` (computed in float64, returned in ``U``'s float type).

    A translation changes no Euclidean distance, and after the shift the terms of
    ``‖x‖² − 2 x·u + ‖u‖²`` have the size of the data's spread instead of its offset,
    so the expansion loses no digits to cancellation (see the module notes).
    """
    U = np.asarray(U)
    if U.shape[0] == 0:
        return np.zeros(U.shape[1], dtype=U.dtype)
    return U.mean(axis=0, dtype=np.float64).astype(U.dtype, copy=False)


def sq_distances(Xb: np.ndarray, U: np.ndarray, u_sq: np.ndarray | None = None, *,
                 center: np.ndarray | None = None) -> np.ndarray:
    """Squared Euclidean distances of the rows of ``Xb`` to the rows of ``U`` (one BLAS
    product, ``‖x − c‖² − 2 (x − c)(u − c)ᵀ + ‖u − c‖²``, clipped at 0 against round-off).

    Parameters
    ----------
    Xb : ndarray of shape (b, d)
        One block of rows, already of the working float type.
    U : ndarray of shape (m, d)
        Same float type as ``Xb``.
    u_sq : ndarray of shape (m,), optional
        ``‖u − c‖²`` of the rows of ``U`` when the caller reuses them across blocks,
        for the ``center`` given with them; given alone, they are ``‖u‖²`` and no
        shift is made (``c = 0``: exact only for data near the origin).
    center : ndarray of shape (d,), optional
        The shift ``c`` of both sides; by default (and without ``u_sq``)
        :func:`distance_reference` of ``U`` (the candidates' mean), so a large common
        offset of the data cancels exactly instead of in the expansion.

    Returns
    -------
    ndarray of shape (b, m), of the type of ``Xb``
    """
    if center is None and u_sq is None:
        center = distance_reference(U)
    Uc = U if center is None else U - center
    Xc = Xb if center is None else Xb - center
    if u_sq is None:
        u_sq = np.einsum("ij,ij->i", Uc, Uc)
    dist = Xc @ Uc.T
    dist *= -2.0
    dist += np.einsum("ij,ij->i", Xc, Xc)[:, None]
    dist += u_sq[None, :]
    np.maximum(dist, 0.0, out=dist)
    return dist


def _csr(X) -> sp.csr_array:
    X = sp.csr_array(X)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return X


def _sparse_sq_norms(X: sp.csr_array) -> np.ndarray:
    sq = np.asarray(X.data, dtype=np.float64) ** 2
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    return np.bincount(rows, weights=sq, minlength=X.shape[0]).astype(np.float64)


def sparse_sq_distances(Xb, U: np.ndarray, u_sq: np.ndarray | None = None,
                        x_sq: np.ndarray | None = None, *, UT: np.ndarray | None = None
                        ) -> np.ndarray:
    """Squared Euclidean distances of the sparse rows ``Xb`` to the dense rows of ``U``:
    ``‖x‖² − 2 x uᵀ + ‖u‖²`` with ``Xb Uᵀ`` one sparse-times-dense product, clipped at 0.

    Parameters
    ----------
    Xb : sparse matrix of shape (b, d)
    U : ndarray of shape (m, d)
    u_sq, x_sq : ndarray, optional
        ``‖u‖²`` of the rows of ``U`` and ``‖x‖²`` of the rows of ``Xb`` when the caller
        reuses them (float64).
    UT : ndarray of shape (d, m), optional
        ``Uᵀ`` as a C-contiguous array, when the caller reuses it across blocks: SciPy's
        sparse-times-dense product copies a non-contiguous ``Uᵀ`` on every call (400 MB
        and 3 s for 1 000 anchors of 50 000 terms), so a search over many blocks passes
        it once made.

    Returns
    -------
    ndarray of shape (b, m), of the common float type of ``Xb`` and ``U``

    Notes
    -----
    No shift is made (it would densify ``Xb``), unlike :func:`sq_distances`; the norms
    are accumulated in float64. Nothing ``b x d`` is formed.
    """
    Xb = _csr(Xb)
    dtype = common_float_dtype(Xb.data, U)
    U = np.asarray(U, dtype=dtype)
    if u_sq is None:
        u_sq = np.einsum("ij,ij->i", U, U, dtype=np.float64)
    if x_sq is None:
        x_sq = _sparse_sq_norms(Xb)
    if UT is None:
        UT = np.ascontiguousarray(U.T)
    dist = np.asarray(Xb.astype(dtype, copy=False) @ UT, dtype=dtype)
    dist *= -2.0
    dist += x_sq.astype(dtype)[:, None]
    dist += u_sq.astype(dtype)[None, :]
    np.maximum(dist, 0.0, out=dist)
    return dist


def sparse_pair_sq(Xb, U: np.ndarray, idx: np.ndarray,
                   u_sq: np.ndarray | None = None) -> np.ndarray:
    """``‖Xb[i] − U[idx[i, j]]‖²`` in float64 for sparse rows ``Xb`` (``b x d``) and the
    ``s`` chosen rows of ``U`` per row (``idx``, ``b x s``), from the stored values only:
    ``‖x‖² − 2 Σ_{c ∈ nz(x)} x_c u_c + ‖u‖²``, ``O(nnz · s)``, clipped at 0; ``u_sq``:
    the float64 ``‖u‖²`` of all rows of ``U`` when the caller has them."""
    Xb = _csr(Xb)
    b, s = idx.shape
    counts = np.diff(Xb.indptr)
    rows = np.repeat(np.arange(b), counts)
    data = np.asarray(Xb.data, dtype=np.float64)
    dots = np.zeros((b, s))
    for j in range(s):  # s is small (the kept neighbours); no copy of U
        gathered = (np.asarray(U[idx[rows, j], Xb.indices], dtype=np.float64)
                    if rows.size else np.zeros(0))
        dots[:, j] = np.bincount(rows, weights=data * gathered, minlength=b)
    if u_sq is None:
        u_sq = np.einsum("ij,ij->i", U, U, dtype=np.float64)
    out = _sparse_sq_norms(Xb)[:, None] - 2.0 * dots + u_sq[idx]
    np.maximum(out, 0.0, out=out)
    return out


EXACT_SLAB_BYTES = 512 * 2**10
"""Slab of :func:`_exact_sq`'s float64 differences: small enough to stay in a core's
cache between the subtraction, the squares and the sum (measured, 20 000 x 6 pairs of
784 columns: 32 MB slabs 1.47 s, 1 MB 0.43 s, 256 KB 0.37 s, 64 KB 0.62 s, the same
bits)."""


def _exact_sq(X: np.ndarray, U: np.ndarray, idx: np.ndarray,
              budget_bytes: int = EXACT_SLAB_BYTES) -> np.ndarray:
    """``‖X[i] − U[idx[i, j]]‖²`` from the differences, float64 (``O(b · s · d)``, in
    slabs of about ``budget_bytes``). Each value is a function of the two rows alone (a
    sum over the ``d`` columns in numpy's fixed pairwise order, no BLAS), so it is the
    same bits whatever the block, the thread count or the machine's BLAS, and whatever
    ``budget_bytes``: the slab only decides whether the differences stay in cache
    (:data:`EXACT_SLAB_BYTES`)."""
    b, s = idx.shape
    out = np.empty((b, s), dtype=np.float64)
    step = max(1, budget_bytes // (8 * max(s * X.shape[1], 1)))
    U64 = _float64_source(U, idx.size)
    for lo in range(0, b, step):
        hi = min(b, lo + step)
        diff = np.asarray(U64[idx[lo:hi]], dtype=np.float64)
        # x - u into the gathered rows (the same operands and operation as x - u anew)
        np.subtract(np.asarray(X[lo:hi], dtype=np.float64)[:, None, :], diff, out=diff)
        np.square(diff, out=diff)
        out[lo:hi] = diff.sum(axis=2)
    return out


def _float64_source(U: np.ndarray, n_gathered: int) -> np.ndarray:
    """``U`` in float64 when converting it once costs less than converting the
    ``n_gathered`` rows taken from it (the exact recomputations gather then convert):
    U-SPEC's candidate lists, a few dozen rows gathered hundreds of times (issue 48);
    ``U`` as it is otherwise. The conversion is exact, so the values are the same."""
    if U.dtype != np.float64 and U.shape[0] < n_gathered:
        return U.astype(np.float64)
    return U


def _exact_pairs(X: np.ndarray, U: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                 budget_bytes: int = EXACT_SLAB_BYTES) -> np.ndarray:
    """``‖X[rows[t]] − U[cols[t]]‖²`` for each pair ``t``: :func:`_exact_sq`'s value of
    the same two rows (the same differences summed in the same pairwise order), for
    scattered pairs."""
    out = np.empty(rows.size, dtype=np.float64)
    step = max(1, budget_bytes // (8 * max(X.shape[1], 1)))
    U64 = _float64_source(U, rows.size)
    for lo in range(0, rows.size, step):
        hi = min(rows.size, lo + step)
        diff = np.asarray(U64[cols[lo:hi]], dtype=np.float64)
        np.subtract(np.asarray(X[rows[lo:hi]], dtype=np.float64), diff, out=diff)
        np.square(diff, out=diff)
        out[lo:hi] = diff.sum(axis=1)
    return out


def _resorted(idx: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``idx`` and ``vals`` reordered per row by ascending ``vals`` (stable)."""
    order = np.argsort(vals, axis=1, kind="stable")
    return np.take_along_axis(idx, order, axis=1), np.take_along_axis(vals, order, axis=1)


def _expansion_slack(Xc: np.ndarray, u_sq: np.ndarray) -> np.ndarray:
    """Per row of the shifted block ``Xc``, a bound on twice the round-off of a squared
    distance from the expansion ``‖x‖² − 2 x·u + ‖u‖²`` plus that of :func:`_exact_sq`:
    ``4 (d + 2) ε (‖x‖² + max ‖u‖²)`` (each inner product of ``d`` terms errs by at most
    ``d ε Σ|x_k u_k| ≤ d ε (‖x‖² + ‖u‖²) / 2``, whatever order BLAS sums in)."""
    eps = float(np.finfo(Xc.dtype).eps)
    d = Xc.shape[1]
    x_sq = np.einsum("ij,ij->i", Xc, Xc).astype(np.float64)
    top = float(u_sq.max(initial=0.0))
    return 4.0 * (d + 2) * eps * (x_sq + top) + np.finfo(np.float64).tiny


def exact_smallest(Xb: np.ndarray, U: np.ndarray, scores: np.ndarray, s: int,
                   slack: np.ndarray, *,
                   values: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """The ``s`` nearest columns of every row from approximate squared distances
    ``scores`` (one BLAS product), decided on exact ones: every column whose score is
    within ``slack`` (per row, the expansion's round-off bound) of the row's ``s``-th
    smallest is recomputed from the differences (:func:`_exact_sq`), and the ``s``
    smallest exact values are kept, ties to the lower column index.

    The choice is then a function of the data alone: the last bits of a BLAS product
    depend on the thread count and on how many rows the call holds (measured, OpenBLAS
    0.3.30: a ``5000 x 784`` product differs between one and two threads, and a row's
    distances differ between a call of 1 000 and of 5 000 rows), and on data with
    exactly tied distances (integer pixels) those bits decided which neighbour won, so
    the chunking changed the graph (issue 27). Cost: the recomputed columns, ``s`` plus
    the near-ties of each row; only the rows with near-ties at their boundary go through
    the scattered pairs (:func:`_smallest_of_pairs`), each row's answer being a function
    of that row alone.

    With ``values=False`` the exact values are not returned (``None``), and for ``s = 1``
    a row is recomputed only when another column lies within its slack: its argmin is
    then already the exact choice (issue 48: most rows of U-SPEC's coarse searches).
    """
    b, m = scores.shape
    if b == 0:
        return np.zeros((0, s), dtype=np.int64), (np.zeros((0, s)) if values else None)
    s = int(min(s, m))
    if s == m:
        cand = np.broadcast_to(np.arange(m), (b, m))
        tied = None
    else:
        if s == 1:  # the row minimum, without a partition of the whole row
            first = np.argmin(scores, axis=1)[:, None]
            kth = np.take_along_axis(scores, first, axis=1)[:, 0]
        else:
            first = np.argpartition(scores, s - 1, axis=1)
            kth = np.take_along_axis(scores, first[:, s - 1:s], axis=1)[:, 0]
        near = scores <= (kth + slack)[:, None]
        tied = np.flatnonzero(near.sum(axis=1) > s)  # near-ties at a row's boundary
        cand = first[:, :s]
        if s == 1 and not values:  # the untied rows' argmin is the exact choice
            idx = np.array(cand, dtype=np.int64)
            if tied.size:
                idx[tied] = _smallest_of_pairs(Xb[tied], U, near[tied], 1)[0]
            return idx, None
    exact = _exact_sq(Xb, U, cand)
    order = np.lexsort((cand, exact), axis=1)[:, :s]
    idx = np.ascontiguousarray(np.take_along_axis(cand, order, axis=1), dtype=np.int64)
    vals = np.take_along_axis(exact, order, axis=1)
    if tied is not None and tied.size:  # the near-tied rows decided on all their pairs
        idx[tied], vals[tied] = _smallest_of_pairs(Xb[tied], U, near[tied], s)
    return idx, (vals if values else None)


def _smallest_of_pairs(Xb: np.ndarray, U: np.ndarray, near: np.ndarray,
                       s: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`exact_smallest` when some row has more than ``s`` columns within its slack
    (``near``, at least ``s`` a row): only those pairs are recomputed, and each row keeps
    its ``s`` smallest exact values, ties to the lower column index."""
    rows, cols = np.nonzero(near)  # row by row, columns ascending
    exact = _exact_pairs(Xb, U, rows, cols)
    order = np.lexsort((cols, exact, rows))
    starts = np.searchsorted(rows[order], np.arange(near.shape[0]))
    take = order[starts[:, None] + np.arange(s)[None, :]]
    return np.ascontiguousarray(cols[take], dtype=np.int64), exact[take]


def mean_sq_distance(X: np.ndarray, U: np.ndarray, block_size: int = 8192) -> float:
    """Mean of all ``n × m`` squared distances between the rows of ``X`` and ``U``, in
    closed form (``O((n + m) d)``): ``var X + var U + ‖x̄ − ū‖²`` (total variances about
    each side's own mean, so a common offset cancels exactly), at least 0.

    A sparse ``X`` is not centred (that would densify it): its part is
    ``mean ‖x‖² − 2 x̄·ū`` from the stored values."""
    if sp.issparse(X):
        X = _csr(X)
        U64 = np.asarray(U, dtype=np.float64)
        xm = np.asarray(X.sum(axis=0), dtype=np.float64).ravel() / X.shape[0]
        um = U64.mean(axis=0)
        u_sq = float(np.einsum("ij,ij->", U64, U64)) / U64.shape[0]
        x_sq = float(_sparse_sq_norms(X).sum()) / X.shape[0]
        return max(x_sq + u_sq - 2.0 * float(xm @ um), 0.0)
    xm = X.mean(axis=0, dtype=np.float64)
    um = U.mean(axis=0, dtype=np.float64)

    def spread(A, mean):
        total = 0.0
        for start in range(0, A.shape[0], block_size):
            B = np.asarray(A[start:start + block_size], dtype=np.float64) - mean
            total += float(np.einsum("ij,ij->", B, B))
        return total / A.shape[0]

    gap = xm - um
    return max(spread(X, xm) + spread(U, um) + float(gap @ gap), 0.0)


#: ``smallest_per_row`` selects up to this many columns by ``s`` passes of ``argmin``
#: (vectorised, under a nanosecond an entry) instead of ``argpartition`` (about 100 ns an
#: entry with numpy 2.4 here: 4.2 s against 0.03 s for one pass on 2000 x 20 000
#: float32 scores); ties go to the lowest column.
ARGMIN_SELECT_MAX = 32


def _by_argmin(key: np.ndarray, s: int, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """The ``s`` smallest entries of every row of ``key`` (all finite) by repeated
    ``argmin`` (best first, ties to the lowest column); ``key`` is not modified."""
    work = np.array(key, copy=True)
    if work.dtype.kind != "f":
        work = work.astype(np.float64)
    b = work.shape[0]
    rows = np.arange(b)
    idx = np.empty((b, s), dtype=np.int64)
    vals = np.empty((b, s), dtype=work.dtype)
    for j in range(s):
        i = work.argmin(axis=1)
        idx[:, j] = i
        vals[:, j] = work[rows, i]
        work[rows, i] = np.inf
    vals = np.asarray(key)[rows[:, None], idx]  # the original values and dtype
    return idx, (-vals if largest else vals)


def smallest_per_row(scores: np.ndarray, s: int,
                     largest: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Column indices and values of the ``s`` smallest (or largest) entries of every row,
    best first (``argpartition`` then a stable sort of the ``s`` selected).

    Parameters
    ----------
    scores : ndarray of shape (b, m)
    s : int
        ``1 <= s``; ``s >= m`` returns every column, sorted.
    largest : bool
        Select the largest instead of the smallest.

    Returns
    -------
    indices : ndarray of shape (b, min(s, m)), int
    values : ndarray of shape (b, min(s, m))
    """
    key = -scores if largest else scores
    if (1 <= s <= ARGMIN_SELECT_MAX and s < scores.shape[1] and scores.shape[0]
            and np.isfinite(key).all()):  # inf marks (excluded columns) need argpartition
        return _by_argmin(key, s, largest)
    if s < scores.shape[1]:
        part = np.argpartition(key, s - 1, axis=1)[:, :s]
    else:
        part = np.broadcast_to(np.arange(scores.shape[1]), (scores.shape[0], scores.shape[1]))
    vals = np.take_along_axis(key, part, axis=1)
    order = np.argsort(vals, axis=1, kind="stable")
    idx = np.take_along_axis(part, order, axis=1)
    vals = np.take_along_axis(vals, order, axis=1)
    return idx, (-vals if largest else vals)


def nearest_anchors(
    X: np.ndarray,
    U: np.ndarray,
    s: int,
    *,
    metric: str = "sqeuclidean",
    block_size: int | None = None,
    exclude: np.ndarray | None = None,
    progress: Any = None,
    values: bool = True,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The ``s`` nearest rows of ``U`` for every row of ``X``, in row blocks.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
        A sparse ``X`` stays sparse (:func:`sparse_sq_distances`).
    U : ndarray of shape (m, d)
    s : int
        Neighbours kept per row (``s <= m``).
    metric : {"sqeuclidean", "inner_product"}
        ``"sqeuclidean"`` returns the smallest squared distances (clipped at 0);
        ``"inner_product"`` the largest inner products (most similar first).
    block_size : int, optional
        Rows per block; by default sized so one block of scores takes about 256 MB.
    exclude : ndarray of shape (n,), optional
        For each row of ``X``, one column of ``U`` that must not be returned (its own
        index when ``U is X``); ``-1`` for none.
    progress : graphclust.Progress, optional
        Receives the number of row blocks as the total and one step per block (a part
        passes ``ctx.progress``), so a long search shows a bar with its rate and ETA.
    values : bool
        ``False``: only the indices are wanted (the second output is ``None``); with
        ``s = 1`` and the squared Euclidean metric on dense rows, a row's exact distance
        is then recomputed only when another row of ``U`` lies within its round-off
        slack (:func:`exact_smallest`), the same choice at less cost.

    Returns
    -------
    indices : ndarray of shape (n, s), int64
    values : ndarray of shape (n, s), float64, or None
        Sorted best first; ``None`` with ``values=False``.
    """
    sparse = sp.issparse(X)
    X = _csr(X) if sparse else np.asarray(X)
    U = np.asarray(U)
    n, m = X.shape[0], U.shape[0]
    if not 1 <= s <= m - (exclude is not None):
        raise ValueError(f"s must be in [1, {m - (exclude is not None)}], got {s}")
    if metric not in ("sqeuclidean", "inner_product"):
        raise ValueError(f"metric must be 'sqeuclidean' or 'inner_product', got {metric!r}")
    dtype = common_float_dtype(X.data if sparse else X, U)
    U = U.astype(dtype, copy=False)
    if sparse:  # Uᵀ made contiguous once, not per block (see sparse_sq_distances)
        UT = np.ascontiguousarray(U.T)
    if metric == "sqeuclidean" and sparse:
        u_sq = np.einsum("ij,ij->i", U, U, dtype=np.float64)
    elif metric == "sqeuclidean":
        center = distance_reference(U)
        Uc = U - center
        u_sq = np.einsum("ij,ij->i", Uc, Uc)
    block = block_size or default_block_size(m)
    idx_out = np.empty((n, s), dtype=np.int64)
    val_out = np.empty((n, s), dtype=np.float64) if values else None
    n_blocks = -(-n // block)
    report = progress is not None and n > 0
    if report:
        progress.start(n_blocks, f"nearest {s} of {m}, {n_blocks} row blocks")
    for start in range(0, n, block):
        stop = min(n, start + block)
        Xb = X[start:stop].astype(dtype, copy=False)
        if metric == "sqeuclidean" and sparse:
            scores = sparse_sq_distances(Xb, U, u_sq, UT=UT)
            bad = np.inf
        elif metric == "sqeuclidean":
            scores = sq_distances(Xb, U, u_sq, center=center)
            bad = np.inf
        else:
            scores = np.asarray(Xb @ (UT if sparse else U.T))
            bad = -np.inf
        if exclude is not None:
            rows = np.arange(stop - start)
            ex = np.asarray(exclude[start:stop])
            ok = ex >= 0
            scores[rows[ok], ex[ok]] = bad
        if metric == "sqeuclidean" and sparse:  # the kept distances exact, from the rows
            idx, vals = smallest_per_row(scores, s)
            idx, vals = _resorted(idx, sparse_pair_sq(Xb, U, idx, u_sq))
        elif metric == "sqeuclidean":  # decided and returned on exact distances
            idx, vals = exact_smallest(Xb, U, scores, s,
                                       _expansion_slack(Xb - center, u_sq), values=values)
        else:
            idx, vals = smallest_per_row(scores, s, largest=True)
        idx_out[start:stop] = idx
        if values:
            val_out[start:stop] = vals
        if report:
            progress.step(start // block + 1, n_blocks)
    return idx_out, val_out


def grouped_nearest(
    X: np.ndarray,
    U: np.ndarray,
    owner: np.ndarray,
    candidates: Sequence[np.ndarray] | np.ndarray,
    s: int,
    *,
    block_size: int | None = None,
    values: bool = True,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The ``s`` nearest rows of ``U`` for every row of ``X``, among its owner's candidates.

    Row ``i`` of ``X`` is compared only with the rows ``candidates[owner[i]]`` of ``U``.
    This is the restricted search of the fast anchor graphs: ULGE's leaf search (a
    point meets the anchors nearest to its own BKHK leaf) and U-SPEC's coarse-to-fine
    search of the K nearest representatives (Huang et al., IEEE TKDE 2020, Sec. 3.2.2:
    a point meets the members of its nearest group, then the neighbours of its nearest
    representative). Rows are sorted by owner and every owner's rows meet its
    candidates in one BLAS product per block (:func:`sq_distances`), so the cost is
    ``O(n · c · d)`` for ``c`` candidates per owner instead of ``O(n · m · d)``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    U : ndarray of shape (m, d)
    owner : ndarray of shape (n,), int
        For every row of ``X``, an index into ``candidates``.
    candidates : sequence of int ndarrays, or int ndarray of shape (g, c)
        ``candidates[j]``: the distinct rows of ``U`` searched for the rows owned by
        ``j``. Lists may differ in length; each one that owns a row needs at least
        ``s`` entries.
    s : int
        Neighbours kept per row, ``>= 1``.
    block_size : int, optional
        Rows of one owner per BLAS product; by default sized so that one block of
        scores takes about 64 MB.
    values : bool
        ``False``: only the indices are wanted (``sqdist`` is ``None``); with ``s = 1``
        on dense rows a row's exact distance is then recomputed only when another
        candidate lies within its round-off slack (:func:`exact_smallest`).

    Returns
    -------
    indices : ndarray of shape (n, s), int64
        Rows of ``U``, nearest first.
    sqdist : ndarray of shape (n, s), float64, or None
        Squared Euclidean distances (clipped at 0), ascending; ``None`` with
        ``values=False``.

    Raises
    ------
    ValueError
        ``s < 1``, ``owner`` of the wrong shape or out of range, or an owner with fewer
        than ``s`` candidates.

    Notes
    -----
    float32 ``X`` and ``U`` are computed in float32, anything else in float64
    (:func:`~graphclust.numerics.common_float_dtype`). Within a row, ties are broken
    towards the earlier candidate. The products are small (a few dozen rows against a
    few dozen candidates), so BLAS runs single-threaded here: thread start-up and
    synchronisation cost more than the product (7x slower with 2 threads on a busy
    2-core machine, MNIST-70k).
    """
    sparse = sp.issparse(X)
    X = _csr(X) if sparse else np.asarray(X)
    U = np.asarray(U)
    n = X.shape[0]
    owner = np.asarray(owner)
    if owner.shape != (n,):
        raise ValueError(f"owner must have shape ({n},), got {owner.shape}")
    if s < 1:
        raise ValueError(f"s must be >= 1, got {s}")
    n_owners = len(candidates)
    owner = owner.astype(np.int64, copy=False)
    if n and (owner.min() < 0 or owner.max() >= n_owners):
        raise ValueError(f"owner must index the {n_owners} candidate lists, got values in "
                         f"[{owner.min()}, {owner.max()}]")
    dtype = common_float_dtype(X.data if sparse else X, U)
    Uw = U.astype(dtype, copy=False)
    if sparse:  # products against all of Uᵀ (contiguous, made once), then the candidates
        UT = np.ascontiguousarray(Uw.T)
        u_sq = np.einsum("ij,ij->i", Uw, Uw, dtype=np.float64)
    else:
        center = distance_reference(Uw)
        Ushift = Uw - center
        u_sq = np.einsum("ij,ij->i", Ushift, Ushift)
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=n_owners)
    bounds = np.concatenate(([0], np.cumsum(counts)))
    idx_out = np.empty((n, s), dtype=np.int64)
    val_out = np.empty((n, s), dtype=np.float64)  # filled, then dropped if not wanted
    with threadpool_limits(limits=1, user_api="blas"):
        for g in np.flatnonzero(counts):
            cand = np.asarray(candidates[g], dtype=np.int64)
            if cand.size < s:
                raise ValueError(f"owner {g} has {cand.size} candidates, fewer than s={s}")
            rows_all = order[bounds[g]:bounds[g + 1]]
            if sparse:
                step = block_size or default_block_size(Uw.shape[0], 64 * 2**20)
                for start in range(0, rows_all.size, step):
                    rows = rows_all[start:start + step]
                    Xb = X[rows].astype(dtype, copy=False)
                    dots = np.asarray(Xb @ UT)[:, cand]  # O(nnz · m), no copy of U[cand]
                    scores = _sparse_sq_norms(Xb)[:, None] - 2.0 * dots + u_sq[cand][None, :]
                    np.maximum(scores, 0.0, out=scores)
                    near, _ = smallest_per_row(scores, s)
                    near, val_out[rows] = _resorted(
                        near, sparse_pair_sq(Xb, Uw, cand[near], u_sq))
                    idx_out[rows] = cand[near]
                continue
            # the candidates as given (for the exact recomputation) and shifted (for the
            # product): (U - c)[cand] is U[cand] - c bit for bit, made once, not per block
            Uc, Us, uc_sq = Uw[cand], Ushift[cand], u_sq[cand]
            step = block_size or default_block_size(cand.size, 64 * 2**20)
            for start in range(0, rows_all.size, step):
                rows = rows_all[start:start + step]
                Xb = X[rows].astype(dtype, copy=False)
                Xc = Xb - center  # one shift for the product and the slack
                near, vals = exact_smallest(Xb, Uc, sq_distances(Xc, Us, uc_sq), s,
                                            _expansion_slack(Xc, uc_sq), values=values)
                idx_out[rows] = cand[near]
                if values:
                    val_out[rows] = vals
    return idx_out, (val_out if values else None)


def self_first_neighbors(U: np.ndarray, n_neighbors: int) -> np.ndarray:
    """For every row of ``U``, its ``n_neighbors`` nearest rows of ``U``, itself first.

    The candidate lists of :func:`grouped_nearest` when a point's owner is its nearest
    anchor: ULGE's leaf candidates and U-SPEC's ``K'`` neighbours of a representative.

    Parameters
    ----------
    U : ndarray of shape (m, d)
    n_neighbors : int
        ``1 <= n_neighbors <= m``.

    Returns
    -------
    ndarray of shape (m, n_neighbors), int64
        Row ``j`` starts with ``j``; the others follow by increasing distance.

    Notes
    -----
    A duplicate row ties with ``j`` at distance 0 and may be found in its place; ``j``
    is then put in first and the farthest neighbour dropped, so every list holds its
    own row whatever the duplicates.
    """
    idx, _ = nearest_anchors(U, U, int(n_neighbors))
    m = idx.shape[0]
    own = np.arange(m)[:, None]
    has_own = (idx == own).any(axis=1)
    idx[~has_own, -1] = np.flatnonzero(~has_own)
    order = np.argsort(idx != own, axis=1, kind="stable")
    return np.take_along_axis(idx, order, axis=1)


def clamp_neighbors(n_neighbors: int, n_anchors: int, who: str) -> int:
    """Clamp a requested number of nearest anchors to the number of anchors, with a
    :class:`~graphclust.GraphClustWarning` naming ``who`` (e.g. ``"graph 'ongr-anchor'"``)."""
    s = int(n_neighbors)
    if s > n_anchors:
        warnings.warn(f"{who}: n_neighbors={s} exceeds the number of anchors {n_anchors}; "
                      f"using {n_anchors}", GraphClustWarning, stacklevel=3)
        return int(n_anchors)
    return s


def _faiss_knn(X: np.ndarray, k: int, metric: str, exact: bool,
               block_size: int | None = None, progress: Any = None):
    import faiss  # optional dependency

    if metric == "sqeuclidean":  # float32 keeps no digit of a large offset: shift first
        X = np.asarray(X, dtype=np.float64) - X.mean(axis=0, dtype=np.float64)
    Xf = np.ascontiguousarray(X, dtype=np.float32)
    n, d = Xf.shape
    faiss_metric = faiss.METRIC_L2 if metric == "sqeuclidean" else faiss.METRIC_INNER_PRODUCT
    if exact:
        index = faiss.IndexFlat(d, faiss_metric)
    else:
        # HNSW: graph-based approximate search, no training pass needed.
        index = faiss.IndexHNSWFlat(d, 32, faiss_metric)
        index.hnsw.efConstruction = 80
        index.hnsw.efSearch = max(64, 2 * (k + 1))
    index.add(Xf)
    # Queries in row blocks (each row's answer does not depend on the others), so a long
    # search reports one step per block.
    block = block_size or default_block_size(n)
    n_blocks = -(-n // block)
    if progress is not None:
        progress.start(n_blocks, f"{'exact' if exact else 'HNSW'} faiss search, "
                       f"{n_blocks} row blocks")
    idx = np.empty((n, k + 1), dtype=np.int64)
    vals = np.empty((n, k + 1), dtype=np.float64)
    for b, start in enumerate(range(0, n, block)):
        stop = min(n, start + block)
        vb, ib = index.search(Xf[start:stop], k + 1)
        idx[start:stop], vals[start:stop] = ib, vb
        if progress is not None:
            progress.step(b + 1, n_blocks)
    return idx, vals


def knn(
    X: np.ndarray,
    k: int,
    *,
    metric: str = "sqeuclidean",
    method: str = "auto",
    block_size: int | None = None,
    progress: Any = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest other points of every point (itself excluded).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
        Sparse rows stay sparse: the exact search takes ``X_b Xᵀ`` per row block (a
        sparse product, ``b x n`` dense scores), the approximate one is pynndescent's
        NN-descent on the CSR rows (faiss takes dense rows only); ``"auto"`` sizes the
        exact work with ``d`` = :func:`sparse_knn_width` (see there).
    k : int
        ``1 <= k <= n - 1``.
    metric : {"sqeuclidean", "inner_product"}
    method : {"auto", "exact", "approx"}
        ``"exact"``: blocked brute force through BLAS (faiss' flat index when faiss is
        installed, which does the same product with a faster selection). ``"approx"``:
        faiss HNSW; requires faiss. ``"auto"``: exact up to ``n²·d = 1e13``, else
        approximate (the size rule of ``graphclust.numerics.knn_size``).
    progress : graphclust.Progress, optional
        Receives the number of row blocks of queries as the total and one step per
        block (as :func:`nearest_anchors`).

    Returns
    -------
    indices : ndarray of shape (n, k), int64
    values : ndarray of shape (n, k), float64
        Squared distances (ascending) or inner products (descending).
    """
    if sp.issparse(X):
        return _sparse_knn(_csr(X), k, metric=metric, method=method, block_size=block_size,
                           progress=progress)
    X = np.asarray(X)
    n = X.shape[0]
    if not 1 <= k <= n - 1:
        raise ValueError(f"k must be in [1, n - 1] = [1, {n - 1}], got {k}")
    if method not in ("exact", "approx", "auto"):
        raise ValueError(f"method must be 'exact', 'approx' or 'auto', got {method!r}")
    if method == "auto":  # the size rule of graphclust.numerics.knn_size

        method = resolve_knn_method(n, X.shape[1], method)[0]
    try:
        import faiss  # noqa: F401

        have_faiss = True
    except ImportError:
        have_faiss = False
    if method == "approx" and not have_faiss:
        raise ImportError("method='approx' needs faiss: pip install 'graphclust[ann]'")
    if have_faiss and (method == "approx" or n > 4096):
        idx, vals = _faiss_knn(X, k, metric, exact=(method == "exact"),
                               block_size=block_size, progress=progress)
        # Drop self (or, with duplicates, any one occurrence of self) from each row.
        rows = np.arange(n)[:, None]
        is_self = idx == rows
        has_self = is_self.any(axis=1)
        keep = ~is_self
        keep[~has_self, -1] = False  # self not returned: drop the worst instead
        # rows where self appears more than once cannot happen; take first k kept
        order = np.argsort(~keep, axis=1, kind="stable")[:, :k]
        idx = np.take_along_axis(idx, order, axis=1)
        vals = np.take_along_axis(vals, order, axis=1)
        if metric == "sqeuclidean":
            np.maximum(vals, 0.0, out=vals)
        return idx, vals
    return nearest_anchors(X, X, k, metric=metric, block_size=block_size,
                           exclude=np.arange(n), progress=progress)


#: The width a sparse search counts as ``d`` in the kNN size rule: the mean number of
#: nonzeros per row, but at least this (the exact sparse search forms and partitions
#: ``b x n`` dense scores per block whatever the rows hold).
SPARSE_KNN_MIN_WIDTH = 200


def sparse_knn_width(X) -> int:
    """``d`` of the kNN size rule for sparse ``X``: its mean nonzeros per row, at least
    :data:`SPARSE_KNN_MIN_WIDTH` (the cost of forming the ``n x n`` scores)."""
    n = max(int(X.shape[0]), 1)
    return int(max(SPARSE_KNN_MIN_WIDTH, -(-int(X.nnz) // n)))


def _sparse_knn(X: sp.csr_array, k: int, *, metric: str, method: str,
                block_size: int | None, progress: Any, seed: int = 0):
    """:func:`knn` on sparse rows (exact blocked sparse products, or pynndescent)."""
    n = X.shape[0]
    if not 1 <= k <= n - 1:
        raise ValueError(f"k must be in [1, n - 1] = [1, {n - 1}], got {k}")
    if metric not in ("sqeuclidean", "inner_product"):
        raise ValueError(f"metric must be 'sqeuclidean' or 'inner_product', got {metric!r}")
    if method not in ("exact", "approx", "auto"):
        raise ValueError(f"method must be 'exact', 'approx' or 'auto', got {method!r}")
    if method == "auto":
        method = resolve_knn_method(n, sparse_knn_width(X), method, sparse=True)[0]
    if method == "approx":
        return _sparse_knn_approx(X, k, metric, seed)
    x_sq = _sparse_sq_norms(X)
    XT = sp.csc_array(X.T)
    # blocks of about 32 MB of scores: the sparse product and its dense copy coexist
    block = block_size or default_block_size(n, 32 * 2**20)
    idx_out = np.empty((n, k), dtype=np.int64)
    val_out = np.empty((n, k), dtype=np.float64)
    n_blocks = -(-n // block)
    if progress is not None and n > 0:
        progress.start(n_blocks, f"exact sparse search, {n_blocks} row blocks")
    for b, start in enumerate(range(0, n, block)):
        stop = min(n, start + block)
        dots = np.asarray((X[start:stop] @ XT).toarray(), dtype=np.float64)
        rows = np.arange(stop - start)
        if metric == "sqeuclidean":  # in place: one b x n array per block
            scores = dots
            scores *= -2.0
            scores += x_sq[start:stop, None]
            scores += x_sq[None, :]
            np.maximum(scores, 0.0, out=scores)
            scores[rows, start + rows] = np.inf
            idx, vals = smallest_per_row(scores, k)
        else:
            dots[rows, start + rows] = -np.inf
            idx, vals = smallest_per_row(dots, k, largest=True)
        idx_out[start:stop], val_out[start:stop] = idx, vals
        if progress is not None:
            progress.step(b + 1, n_blocks)
    return idx_out, val_out


def _sparse_knn_approx(X: sp.csr_array, k: int, metric: str, seed: int):
    """pynndescent's NN-descent on CSR rows (a base dependency), self dropped; squared
    Euclidean distances or inner products as :func:`knn` returns them."""
    from pynndescent import NNDescent

    n = X.shape[0]
    nnd_metric = "euclidean" if metric == "sqeuclidean" else "dot"
    index = NNDescent(X.astype(np.float32), metric=nnd_metric, n_neighbors=min(n, k + 1),
                      random_state=seed, n_jobs=1, low_memory=True, compressed=True)
    idx, dist = index.neighbor_graph
    idx = np.asarray(idx, dtype=np.int64)
    dist = np.asarray(dist, dtype=np.float64)
    rows = np.arange(n)[:, None]
    keep = idx != rows
    keep &= idx >= 0
    order = np.argsort(~keep, axis=1, kind="stable")[:, :k]
    idx = np.take_along_axis(idx, order, axis=1)
    dist = np.take_along_axis(dist, order, axis=1)
    if metric == "sqeuclidean":  # the kept distances in float64 from the stored values
        x_sq = _sparse_sq_norms(X)
        dots = np.empty((n, k))
        for j in range(k):
            dots[:, j] = np.asarray(X.multiply(X[idx[:, j]]).sum(axis=1)).ravel()
        dist = np.maximum(x_sq[:, None] - 2.0 * dots + x_sq[idx], 0.0)
        order = np.argsort(dist, axis=1, kind="stable")
        return np.take_along_axis(idx, order, axis=1), np.take_along_axis(dist, order, axis=1)
    return idx, 1.0 - dist  # pynndescent's "dot" distance is 1 - x·y
