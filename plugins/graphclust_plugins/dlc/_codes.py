"""Gaussian kNN landmark codes (DLC paper, Algorithm 1 step 2), shared by the graph
builder (first layer) and the solver (later layers)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from graphclust.neighbors import nearest_anchors

__all__ = ["gaussian_codes", "work_array"]


def work_array(X) -> np.ndarray:
    """``X`` as a float array: float32 stays float32, small integers become float32
    (exact), everything else float64. No copy when already float."""
    X = np.asarray(X)
    if X.dtype == np.float32 or X.dtype == np.float64:
        return X
    if X.dtype.kind in "biu" and X.dtype.itemsize <= 2:
        return X.astype(np.float32)
    return X.astype(np.float64)


def gaussian_codes(X, U, n_neighbors: int, sigma: float,
                   block_size: int | None = None) -> sp.csr_array:
    """Sparse ``n x m`` codes: each row holds the Gaussian weights of its ``k`` nearest
    landmarks, normalised to sum to one (the transpose of the paper's ``A``).

    ``[A]_ij = φ(x_j, u_i) / Σ_u φ(x_j, u_u)`` over the ``k`` nearest landmarks ``u``
    of ``x_j``, with ``φ(x, u) = exp(−‖x − u‖² / (2σ²))``.

    Rules
    -----
    * ``k`` is clamped to ``m``.
    * The smallest squared distance of the row is subtracted before ``exp`` (it cancels
      in the normalisation), so the nearest landmark always has weight ``exp(0) = 1``
      before normalising: no row can underflow to all zeros, whatever ``σ`` and the
      scale of the data (this matters for later layers, whose inputs are codes).
    * Ties between equally distant landmarks are broken by landmark index (stable).
    """
    X = work_array(X)
    U = np.asarray(U, dtype=X.dtype)
    n, m = X.shape[0], U.shape[0]
    k = int(min(n_neighbors, m))
    idx, d2 = nearest_anchors(X, U, k, block_size=block_size)
    d2 -= d2[:, :1]
    w = np.exp(d2 * (-0.5 / float(sigma) ** 2))
    w /= w.sum(axis=1, keepdims=True)
    indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
    Z = sp.csr_array((w.ravel(), idx.ravel(), indptr), shape=(n, m))
    Z.sum_duplicates()
    Z.sort_indices()
    return Z
