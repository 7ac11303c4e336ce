"""Rows of a sparse anchor graph ``Z`` from each point's nearest anchors.

Every anchor-graph builder finds each point's ``s`` nearest anchors with
:func:`~graphclust.numerics.nearest_anchors` (indices and squared distances, nearest
first) and turns them into one row-stochastic sparse row with ``s`` nonzeros:

* :func:`gaussian_anchor_rows`: Gaussian kernel weights ``exp(−d²/h)`` normalised to
  sum to one — ``h = σ²`` in the Anchor Graph of Liu et al. (2010) and ONGR (Eq. 12),
  ``h = 2σ²`` in LSC, DLC and Nyström;
* :func:`adaptive_anchor_rows`: the parameter-free adaptive-neighbour weights of ULGE
  (Nie, Zhu, Li, Eq. 18), from the ``k + 1`` nearest.

Nothing ``n × m`` is dense: rows are built from ``n × s`` arrays.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from graphclust.numerics.rows import normalize_rows, safe_inverse

__all__ = ["rows_to_csr", "gaussian_weights", "gaussian_anchor_rows", "self_tuning_sigma",
           "adaptive_weights", "adaptive_anchor_rows", "scaled_anchor_rows"]


def rows_to_csr(idx: np.ndarray, weights: np.ndarray, n_cols: int) -> sp.csr_array:
    """Sparse ``n × n_cols`` matrix with ``weights[i, j]`` at column ``idx[i, j]``.

    ``idx`` holds distinct columns per row (as nearest-anchor searches return them);
    the column indices of the result are sorted within each row.
    """
    n, s = idx.shape
    indptr = np.arange(0, n * s + 1, s, dtype=np.int64)
    Z = sp.csr_array((np.ascontiguousarray(weights).ravel(),
                      np.ascontiguousarray(idx).ravel(), indptr), shape=(n, int(n_cols)))
    Z.sort_indices()
    return Z


def gaussian_weights(d2: np.ndarray, width: float) -> np.ndarray:
    """Gaussian weights ``exp(−d²/h)`` of each row's squared distances, rows summing to one.

    Parameters
    ----------
    d2 : ndarray of shape (n, s)
        Squared distances, smallest first in every row.
    width : float
        ``h`` of ``exp(−d²/h)`` (``σ²`` or ``2σ²`` according to the method).

    Returns
    -------
    ndarray of shape (n, s), float64

    Notes
    -----
    Each row's smallest ``d²`` is subtracted before the exponential; the shift cancels
    in the normalisation and keeps the nearest weight at ``exp(0) = 1``, so no row can
    underflow to all zeros however far the point lies. ``width <= 0`` (a zero
    bandwidth) gives equal weights.
    """
    d2 = np.asarray(d2, dtype=np.float64)
    shifted = d2 - d2[:, :1]
    w = np.exp(-shifted / width) if width > 0 else np.ones_like(shifted)
    return normalize_rows(w, "l1")


def gaussian_anchor_rows(idx: np.ndarray, d2: np.ndarray, n_anchors: int,
                         width: float) -> sp.csr_array:
    """Row-stochastic ``Z`` (``n × n_anchors``, ``s`` nonzeros a row) with the
    :func:`gaussian_weights` of each point's nearest anchors.

    ``idx``/``d2`` (``n × s``) are the output of
    :func:`~graphclust.numerics.nearest_anchors`; a parameter search may compute them
    once for the largest ``s`` and pass ``idx[:, :s], d2[:, :s]`` for every smaller one.
    """
    return rows_to_csr(idx, gaussian_weights(d2, width), n_anchors)


def self_tuning_sigma(d2: np.ndarray) -> float:
    """Bandwidth of Liu et al. (2010): the mean over points of the (unsquared) distance
    to their ``s``-th nearest anchor, from the sorted squared distances ``d2`` (n × s).

    ``1.0`` when there are no points or every such distance is zero (every point sits on
    its ``s`` nearest anchors: any bandwidth then gives the same uniform weights).
    """
    d2 = np.asarray(d2)
    if d2.shape[0] == 0:
        return 1.0
    sigma = float(np.mean(np.sqrt(d2[:, -1])))
    return sigma if np.isfinite(sigma) and sigma > 0.0 else 1.0


def adaptive_weights(dist: np.ndarray, k: int) -> np.ndarray:
    """Adaptive-neighbour weights of ULGE Eq. (18) from the ``k + 1`` smallest squared
    distances of each row.

    ``w_j = (d_{k+1} − d_j) / (k·d_{k+1} − Σ_{j'≤k} d_{j'})`` for ``j ≤ k``. When the
    denominator vanishes (all ``k + 1`` distances equal, relative tolerance 1e-12) the
    row gets uniform weights ``1/k``. Rows are nonnegative and sum to one.

    Parameters
    ----------
    dist : ndarray of shape (n, k + 1), sorted ascending per row
    k : int

    Returns
    -------
    ndarray of shape (n, k)
    """
    dist = np.asarray(dist, dtype=np.float64)
    dk1 = dist[:, k:k + 1]
    num = np.maximum(dk1 - dist[:, :k], 0.0)
    den = num.sum(axis=1, keepdims=True)
    flat = den[:, 0] <= 1e-12 * np.maximum(k * dk1[:, 0], np.finfo(float).tiny)
    w = np.empty_like(num)
    ok = ~flat
    w[ok] = num[ok] / den[ok]
    w[flat] = 1.0 / k
    return w


def adaptive_anchor_rows(idx: np.ndarray, dist: np.ndarray, n_anchors: int,
                         k: int) -> sp.csr_array:
    """Row-stochastic ``Z`` of ULGE Eq. (18): :func:`adaptive_weights` on the ``k``
    nearest of each point's ``k + 1`` nearest anchors (``idx``/``dist``, n × (k+1)).

    An anchor tied with the ``(k+1)``-th distance gets weight 0 and is dropped from the
    sparse row, so ``Z`` does not depend on how such ties were broken.
    """
    Z = rows_to_csr(idx[:, :k], adaptive_weights(dist, k), n_anchors)
    Z.eliminate_zeros()
    return Z


def scaled_anchor_rows(Z, lam: np.ndarray) -> sp.csr_array:
    """Rows of ``B = Z Λ^{-1/2}`` (``W = B Bᵀ``) for a block of rows of ``Z``, with
    ``λ = Zᵀ1`` of **all** rows (summed over the blocks first), computed as
    :meth:`graphclust.AnchorGraph.B` does (``0`` for an anchor no point chose)."""
    m = Z.shape[1]
    scale = sp.dia_array((safe_inverse(lam, 0.5)[None, :], [0]), shape=(m, m))
    return sp.csr_array(sp.csr_array(Z, dtype=np.float64) @ scale)
