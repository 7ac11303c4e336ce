"""Small label helpers shared by the common roundings and metrics."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["consecutive", "contingency", "normalize_rows"]


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


def as_float(E) -> np.ndarray:
    """``E`` as a float array: float32 stays float32 (no copy), anything else float64."""
    E = np.asarray(E)
    return E.astype(np.float32 if E.dtype == np.float32 else np.float64, copy=False)


def normalize_rows(E: np.ndarray) -> np.ndarray:
    """Rows scaled to unit Euclidean norm; an all-zero row stays zero (no division by 0).
    float32 stays float32 (norms are taken in float64)."""
    E = as_float(E)
    norms = np.sqrt(np.einsum("ij,ij->i", E, E, dtype=np.float64))
    scale = np.zeros_like(norms)
    pos = norms > 0
    scale[pos] = 1.0 / norms[pos]
    return E * scale.astype(E.dtype)[:, None]


def dense_features(X) -> np.ndarray:
    """``X`` as a dense float array (sparse input densified; float32 kept)."""
    if sp.issparse(X):
        X = X.toarray()
    X = np.asarray(X)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return X
