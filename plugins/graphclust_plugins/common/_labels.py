"""Small label helpers shared by the common roundings and metrics."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["consecutive", "contingency"]


def consecutive(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Relabel to consecutive integers ``0..k'-1`` keeping the order of the old ids.

    Returns
    -------
    new_labels : ndarray of shape (n,), int64
    kept : ndarray of shape (k',)
        The old ids, ``kept[new] = old``.
    """
    kept, new = np.unique(np.asarray(labels), return_inverse=True)
    return new.astype(np.int64).ravel(), kept


def contingency(labels: np.ndarray, y_true: np.ndarray) -> np.ndarray:
    """Dense ``k_pred x k_true`` count matrix (ids made consecutive first)."""
    a, _ = consecutive(np.asarray(labels).ravel())
    b, _ = consecutive(np.asarray(y_true).ravel())
    if a.shape != b.shape:
        raise ValueError(f"labels and y_true have different lengths: {a.size} and {b.size}")
    m = sp.coo_array((np.ones(a.size, dtype=np.int64), (a, b)),
                     shape=(int(a.max(initial=-1)) + 1, int(b.max(initial=-1)) + 1))
    return m.toarray()
