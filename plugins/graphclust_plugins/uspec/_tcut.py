"""Transfer cut (Tcut): Ncut of a bipartite graph through its small side.

Li, Wu, Zhang, Chang, "Segmentation using superpixels: a bipartite graph partitioning
approach", CVPR 2012 (Theorem 1), as used by U-SPEC (Huang et al., IEEE TKDE 2020,
Sec. 3.3) and U-SENC's consensus function (Sec. 4.2).

A bipartite graph between ``n`` points (side X) and ``p`` representatives (side Y)
has the sparse nonnegative cross-affinity ``B`` (``n x p``) and the full
``(n + p) x (n + p)`` adjacency ``W = [[0, B], [Bᵀ, 0]]``. Its Ncut eigenproblem
``(D − W) f = γ D f`` is solved through the ``p x p`` problem

    D_X = diag(B 1),  E = Bᵀ D_X⁻¹ B,  D_Y = diag(Bᵀ 1),
    (D_Y − E) v = λ D_Y v,                                   (Tcut)

whose eigenpairs give those of the bipartite graph by ``γ (2 − γ) = λ`` (the root
``γ ≤ 1``: ``1 − γ = √(1 − λ)``) and ``u = D_X⁻¹ B v / (1 − γ)``; then
``f = (u, v)``. Nothing of size ``n x n`` or dense ``n x p`` is formed: the work is
``O(nnz(B)·k)`` on the point side plus one ``p x p`` eigenproblem.
"""

from __future__ import annotations

import functools
import operator

import attrs
import numpy as np
import scipy.sparse as sp

from graphclust.numerics import ExactSum, leading_eigenvectors, safe_inverse, sign_flip
from graphclust.numerics.eigen import DENSE_FALLBACK_MAX

__all__ = ["TcutResult", "transfer_cut", "ZERO_GAIN", "DENSE_TCUT_MAX", "point_transfer", "representative_side",
           "exact_degrees", "exact_transfer_gram", "gram_from_exact", "EXACT_WINDOW",
           "FixedPointSum", "degrees_from_exact"]

ZERO_GAIN = 1e-10
"""``1 − γ`` at or below this (relative to the largest) gives a zero column instead of
dividing by ~0 (an eigenvalue ``λ = 1``: a direction the point side does not see)."""


DENSE_TCUT_MAX = DENSE_FALLBACK_MAX
"""Up to this many active representatives the ``p x p`` problem is solved densely
(``eigh``, all eigenpairs exact), as the authors' ``Tcut_for_bipartite_graph`` does
(``eig(full(...))``); ARPACK only above. Lanczos from one start vector finds one copy of
a repeated eigenvalue: on a bipartite graph of ``c`` components (``λ = 0`` repeated ``c``
times, e.g. well-separated blobs) it returned 8 of the 10 zero eigenvalues at ``p = 1000``
and k-means then had to split two blobs that the embedding did not tell apart (ARI .86 and
.89 on two of five seeds of 50 000 x 8 blobs, 1.0 with the dense solve). Cost of the dense
solve on one thread: 0.06 s at ``p = 1000``, 0.5 s at 2 000, 6 s at 4 000 (CPU)."""


@attrs.frozen(eq=False)
class TcutResult:
    """The ``k`` smallest Ncut eigenpairs of a bipartite graph, from :func:`transfer_cut`.

    Attributes
    ----------
    point_embedding : ndarray of shape (n, k)
        ``u = D_X⁻¹ B v / (1 − γ)``: the point half of each bipartite eigenvector.
    rep_embedding : ndarray of shape (p, k)
        ``v / (1 − γ)``, so that ``D_X⁻¹ B @ rep_embedding`` is ``point_embedding``. For a
        new point with row ``b`` of cross-affinities, ``b @ rep_embedding`` is its ``u``
        times its degree ``b 1`` (a positive factor per row, which row normalisation
        removes).
    v : ndarray of shape (p, k)
        The ``D_Y``-orthonormal eigenvectors of the Tcut problem (``vᵀ D_Y v = I``).
    eigenvalues : ndarray of shape (k,)
        ``λ`` of the Tcut problem, ascending, in ``[0, 1]``.
    gamma : ndarray of shape (k,)
        ``γ = 1 − √(1 − λ)``, the bipartite graph's Ncut eigenvalues, ascending.
    active : ndarray of shape (p,), bool
        Representatives with a positive degree (the others have zero rows in ``v``).
    """

    point_embedding: np.ndarray
    rep_embedding: np.ndarray
    v: np.ndarray
    eigenvalues: np.ndarray
    gamma: np.ndarray
    active: np.ndarray


def _check_B(B) -> sp.csr_array:
    if not sp.issparse(B):
        arr = np.asarray(B)
        if arr.ndim != 2:
            raise ValueError(f"transfer_cut: B must be a 2-D matrix, got shape {arr.shape}")
        B = arr
    B = sp.csr_array(B, dtype=np.float64)
    if B.ndim != 2 or B.shape[0] == 0 or B.shape[1] == 0:
        raise ValueError(f"transfer_cut: B must be a non-empty n x p matrix, got shape {B.shape}")
    B.sum_duplicates()
    if B.nnz and not np.all(np.isfinite(B.data)):
        raise ValueError("transfer_cut: B has non-finite entries")
    if B.nnz and B.data.min() < 0:
        raise ValueError("transfer_cut: B must be nonnegative")
    return B


def transfer_cut(B, k: int, *, random_state: int | np.random.Generator | None = None,
                 dense_below: int | None = None) -> TcutResult:
    """The ``k`` smallest Ncut eigenpairs of the bipartite graph with cross-affinity ``B``.

    Solves the ``p x p`` generalised problem ``(D_Y − E) v = λ D_Y v`` with
    ``E = Bᵀ D_X⁻¹ B`` (U-SPEC Sec. 3.3; Li et al. 2012, Theorem 1) as the largest
    eigenpairs ``μ = 1 − λ`` of ``D_Y^{-1/2} E D_Y^{-1/2}`` (dense ``eigh`` up to
    :data:`DENSE_TCUT_MAX` active representatives, as the authors' code; ARPACK above),
    and transfers them to the points by ``u = D_X⁻¹ B v / (1 − γ)``, ``γ(2 − γ) = λ``.

    Parameters
    ----------
    B : sparse or dense matrix of shape (n, p)
        Nonnegative, finite cross-affinities (points × representatives, or points ×
        clusters for an ensemble's consensus graph).
    k : int
        Number of eigenpairs (``>= 1``); clamped to the number of representatives with a
        positive degree.
    random_state : int, Generator or None
        Seeds the ARPACK start vector (used only when ``p`` is large), so a seed fixes
        the result.
    dense_below : int, optional
        Use the dense eigensolver below this many active representatives and ARPACK from
        there on (default: dense up to :data:`DENSE_TCUT_MAX` active representatives).

    Returns
    -------
    TcutResult
        ``point_embedding`` (n × k'), ``rep_embedding`` (p × k'), ``v``, ``eigenvalues``,
        ``gamma``, ``active`` with ``k' = min(k, number of active representatives)``.

    Notes
    -----
    Degenerate but legal inputs follow fixed rules, never a division by zero:

    * **zero column** (a representative no point chose, ``D_Y[j] = 0``): it is left out
      of the eigenproblem and gets a zero row in ``v`` and ``rep_embedding``.
    * **zero row** (a point with no edge, ``D_X[i] = 0``): ``D_X⁻¹`` is taken as 0, so
      the point gets a zero row in ``point_embedding``.
    * **disconnected graph**: ``λ = 0`` is repeated once per connected component (among
      components holding a representative); the solver returns a ``D_Y``-orthonormal
      basis of that eigenspace (indicator vectors up to a rotation), so different
      components get different rows whenever ``k`` is at least the number of components.
    * **λ = 1** (``1 − γ = 0``; only when ``k`` exceeds the rank of ``E``): the column is
      set to zero in ``point_embedding`` and ``rep_embedding`` (see :data:`ZERO_GAIN`).
    * Signs are fixed (the largest-magnitude entry of each ``v`` column is positive).
    """
    B = _check_B(B)
    n, p = B.shape
    dy = degrees_from_exact(exact_degrees(B))  # the chunked execution's sums, bit for bit
    active = dy > 0
    cols = np.flatnonzero(active)
    k_eff = int(min(k, cols.size)) if cols.size else 0
    if k_eff == 0:  # an all-zero B: nothing to embed
        z = np.zeros((n, 1))
        return TcutResult(z, np.zeros((p, 1)), np.zeros((p, 1)), np.zeros(1), np.zeros(1),
                          active)
    PX = point_transfer(B, cols)  # D_X⁻¹ B on the active columns
    E = gram_from_exact(exact_transfer_gram(B, cols), cols.size)
    rep, v, lam, gamma = representative_side(E, dy, cols, k_eff, random_state=random_state,
                                             dense_below=dense_below)
    point = np.asarray(PX @ rep[cols])
    return TcutResult(point, rep, v, lam, gamma, active)


#: The grid of the exact sums of ``D_Y`` and ``E`` (:class:`graphclust.numerics.ExactSum`):
#: entries of ``B`` and products below ``2**64``, bits below ``2**-128`` dropped.
EXACT_WINDOW = {"top": 64, "n_digits": 6}


class FixedPointSum:
    """An exact, order-free sum of values in ``[0, 1]`` by entry: each value is cut into
    two 32-bit integers on the grid ``2**-64`` (``hi = ⌊2³²v⌋``, ``lo`` the rest rounded
    to ``2**-64``) and the integers are summed as int64 sparse matrices (scipy adds
    duplicates and matrices exactly in integers; no overflow below ``2**31`` values an
    entry). :meth:`value` converts the exact totals once. About 17 times cheaper than
    :class:`graphclust.numerics.ExactSum` on a 200 000-row block of ``B``, for the same
    order-freedom; values outside ``[0, 1]`` take :class:`~graphclust.numerics.ExactSum`.
    """

    def __init__(self, hi, lo):
        self.hi, self.lo = hi, lo

    @classmethod
    def of(cls, values, rows, cols, shape) -> FixedPointSum:
        v = np.ldexp(np.asarray(values, dtype=np.float64), 32)
        hi = np.floor(v)
        lo = np.rint(np.ldexp(v - hi, 32))
        def mat(data):
            return sp.csr_array((data.astype(np.int64), (rows, cols)), shape=shape)
        return cls(mat(hi), mat(lo))

    def __add__(self, other):
        if not isinstance(other, FixedPointSum):
            return NotImplemented
        return FixedPointSum(sp.csr_array(self.hi + other.hi), sp.csr_array(self.lo + other.lo))

    def value(self) -> sp.csr_array:
        total = (sp.csr_array(self.hi, dtype=np.float64) * 2.0**-32
                 + sp.csr_array(self.lo, dtype=np.float64) * 2.0**-64)
        total = sp.csr_array(total)
        total.sum_duplicates()
        return total


def _unit_values(values) -> bool:
    values = np.asarray(values)
    return values.size == 0 or (values.min() >= 0 and values.max() <= 1)


def exact_degrees(B) -> ExactSum:
    """``D_Y = Bᵀ1`` of a block of rows of ``B`` as an exact sum: the sums of blocks add
    exactly, so ``D_Y`` is the same bits for any cut of the rows (and in memory, where
    :func:`transfer_cut` sums all rows with this function)."""
    B = sp.csr_array(B, dtype=np.float64)
    if _unit_values(B.data):
        return FixedPointSum.of(B.data, np.zeros(B.indices.size, dtype=np.int64), B.indices,
                                (1, B.shape[1]))
    return ExactSum.of(B.data, B.indices, B.shape[1], **EXACT_WINDOW)


#: Entry pairs ``(a, b)`` of one row batch of :func:`exact_transfer_gram` (the pair
#: arrays of a batch take about 10 x 8 bytes a pair, so a batch stays near 160 MB on any
#: block; a 500 000-row block of 5 entries a row held 1.36 GB at once).
PAIRS_PER_BATCH = 2**21


def exact_transfer_gram(B, cols: np.ndarray) -> ExactSum:
    """``E = Baᵀ D_X⁻¹ Ba`` of a block of rows of ``B`` (``Ba``: the active columns
    ``cols``, ``D_X`` the rows' degrees over all columns) as an exact sum keyed by entry
    ``j · len(cols) + k``: every row adds ``Ba_ij Ba_ik / D_X,i`` to ``(j, k)`` for each
    pair of its entries, so ``E`` does not depend on how the rows are cut. The rows are
    taken in batches of at most :data:`PAIRS_PER_BATCH` pairs (the exact sums of the
    batches add exactly), so the memory held is bounded whatever the block's size."""
    B = sp.csr_array(B, dtype=np.float64)
    B.sum_duplicates()
    p = B.shape[1]
    where = None
    if cols.size < p:  # renumber the active columns 0..len(cols)-1, drop the others
        where = np.full(p, -1, dtype=np.int64)
        where[cols] = np.arange(cols.size)
    bounds = _batch_bounds(np.diff(B.indptr), PAIRS_PER_BATCH)

    def batches():  # (values, j, k) of each row slice, made one at a time
        return (_pair_values(B[start:stop], where)
                for start, stop in zip(bounds[:-1], bounds[1:]))

    # one kind of sum for the whole block, as when it was one batch: fixed point when
    # every value is in [0, 1] (each batch's pairs made once); if a batch has a value
    # outside, the keyed exact sum of all batches instead
    total = None
    for values, j, k in batches():
        if not _unit_values(values):
            break
        part = FixedPointSum.of(values, j, k, (cols.size, cols.size))
        total = part if total is None else total + part
    else:
        return total
    return functools.reduce(operator.add, (
        ExactSum.of(values, j * cols.size + k, keys=True, **EXACT_WINDOW)
        for values, j, k in batches()))


def _batch_bounds(per_row: np.ndarray, pairs: int) -> list[int]:
    """Row bounds ``[0, …, n]`` of consecutive batches of at most ``pairs`` entry pairs
    (a row has its entry count squared; a row with more is a batch of its own). No rows:
    one empty batch."""
    total = np.cumsum(per_row.astype(np.int64) ** 2)
    n = int(per_row.size)
    bounds = [0]
    while bounds[-1] < n:
        start = bounds[-1]
        before = int(total[start - 1]) if start else 0
        stop = int(np.searchsorted(total, before + pairs, side="right"))
        bounds.append(min(n, max(stop, start + 1)))
    return bounds if n else [0, 0]


def _pair_values(B, where):
    """``(values, j, k)`` of a batch of rows: ``Ba_ij Ba_ik / D_X,i`` for every pair of
    entries of a row on the active columns (renumbered by ``where``; ``None``: all)."""
    n = B.shape[0]
    dx = np.asarray(B.sum(axis=1)).ravel()
    rows_all = np.repeat(np.arange(n), np.diff(B.indptr))
    idx_all = B.indices.astype(np.int64)
    if where is not None:
        idx_all = where[idx_all]
    keep = idx_all >= 0
    data, idx, rows = B.data[keep], idx_all[keep], rows_all[keep]
    counts = np.bincount(rows, minlength=n)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rep = counts[rows]
    a = np.repeat(np.arange(data.size), rep)
    first = np.repeat(starts[rows], rep)
    b = first + (np.arange(a.size) - np.repeat(np.cumsum(rep) - rep, rep))
    w = data * safe_inverse(dx)[rows]  # D_X⁻¹ Ba, entry by entry
    return data[a] * w[b], idx[a], idx[b]


def gram_from_exact(total, size: int) -> sp.csr_array:
    """The ``size x size`` sparse matrix of an exact sum from :func:`exact_transfer_gram`
    (zeros dropped)."""
    if isinstance(total, FixedPointSum):
        E = total.value()
        E.eliminate_zeros()
        return E
    vals = total.value()
    keys = total.keys
    nz = vals != 0
    return sp.csr_array((vals[nz], (keys[nz] // size, keys[nz] % size)), shape=(size, size))


def degrees_from_exact(total) -> np.ndarray:
    """The float64 degrees of an exact sum from :func:`exact_degrees`."""
    if isinstance(total, FixedPointSum):
        return np.asarray(total.value().toarray()).ravel()
    return total.value()


def point_transfer(B, cols: np.ndarray) -> sp.csr_array:
    """``D_X⁻¹ B`` restricted to the columns ``cols`` (the active representatives), for
    any block of rows of ``B``: ``D_X`` is a per-row quantity."""
    if not (isinstance(B, sp.csr_array) and B.dtype == np.float64):
        B = sp.csr_array(B, dtype=np.float64)
    n, p = B.shape
    dx = np.asarray(B.sum(axis=1)).ravel()
    Ba = B[:, cols] if cols.size < p else B
    return sp.csr_array(sp.dia_array((safe_inverse(dx)[None, :], [0]), shape=(n, n)) @ Ba)


def representative_side(E, dy: np.ndarray, cols: np.ndarray, k_eff: int, *,
                        random_state=None, dense_below: int | None = None):
    """The ``p``-side of :func:`transfer_cut`: from ``E = Bᵀ D_X⁻¹ B`` (active columns)
    and ``D_Y``, return ``(rep_embedding, v, λ, γ)``. ``E`` is a sum over row blocks of
    ``B``, so the chunked execution sums it and calls this."""
    p = dy.size
    s = safe_inverse(dy[cols], 0.5)
    S = sp.dia_array((s[None, :], [0]), shape=(cols.size, cols.size))
    M = sp.csr_array(S @ E @ S)
    M = 0.5 * (M + M.T)
    rng = (random_state if isinstance(random_state, np.random.Generator)
           else np.random.default_rng(random_state))
    below = DENSE_TCUT_MAX + 1 if dense_below is None else int(dense_below)
    method = "dense" if cols.size < below else "arpack"
    mu, W = leading_eigenvectors(M, k_eff, rng=rng, method=method)
    mu = np.clip(mu, 0.0, 1.0)
    lam = 1.0 - mu
    gain = np.sqrt(mu)  # 1 − γ
    gamma = 1.0 - gain
    Va = sign_flip(s[:, None] * W)  # v = D_Y^{-1/2} w
    ok = gain > ZERO_GAIN * max(float(gain.max(initial=0.0)), 1e-300)
    inv_gain = np.zeros_like(gain)
    inv_gain[ok] = 1.0 / gain[ok]
    v = np.zeros((p, k_eff))
    v[cols] = Va
    rep = v * inv_gain[None, :]
    return rep, v, lam, gamma
