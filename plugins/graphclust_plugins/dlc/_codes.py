"""Gaussian kNN landmark codes (DLC paper, Algorithm 1 step 2), shared by the graph
builder (first layer) and the solver (later layers)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from graphclust.numerics import as_float, gaussian_anchor_rows, nearest_anchors

__all__ = ["gaussian_codes"]


def gaussian_codes(X, U, n_neighbors: int, sigma: float,
                   block_size: int | None = None) -> sp.csr_array:
    """Sparse ``n x m`` codes: each row holds the Gaussian weights of its ``k`` nearest
    landmarks, normalised to sum to one (the transpose of the paper's ``A``).

    ``[A]_ij = φ(x_j, u_i) / Σ_u φ(x_j, u_u)`` over the ``k`` nearest landmarks ``u``
    of ``x_j``, with ``φ(x, u) = exp(−‖x − u‖² / (2σ²))``
    (:func:`graphclust.numerics.gaussian_anchor_rows` with ``h = 2σ²``).

    Rules
    -----
    * ``k`` is clamped to ``m``; ``X`` is computed in the float type of
      :func:`graphclust.numerics.as_float` (float32 stays float32).
    * The smallest squared distance of the row is subtracted before ``exp`` (it cancels
      in the normalisation), so no row can underflow to all zeros, whatever ``σ`` and
      the scale of the data (this matters for later layers, whose inputs are codes).
    """
    X = as_float(X)
    U = np.asarray(U, dtype=X.dtype)
    m = U.shape[0]
    idx, d2 = nearest_anchors(X, U, int(min(n_neighbors, m)), block_size=block_size)
    return gaussian_anchor_rows(idx, d2, m, 2.0 * float(sigma) ** 2)
