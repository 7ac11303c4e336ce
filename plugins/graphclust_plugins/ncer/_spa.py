"""Successive projection algorithm (Gillis & Vavasis 2014, Algorithm 1).

Pick the point of largest norm, project every point onto the orthogonal complement of
it, repeat. Ties go to the lowest index, so the result is deterministic.
"""

from __future__ import annotations

import numpy as np

__all__ = ["spa"]


def spa(P: np.ndarray, r: int, candidates: np.ndarray | None = None) -> np.ndarray:
    """Indices of ``r`` rows of ``P`` chosen by SPA (among ``candidates`` if given).

    Parameters
    ----------
    P : ndarray (n, q)
        Points as rows (SPA works on the columns of ``Pᵀ``).
    r : int
        How many to pick. Stops early (fewer indices) when every residual is zero,
        i.e. when the candidates span fewer than ``r`` dimensions.
    candidates : ndarray of int, optional
        Restrict the choice to these rows (e.g. the MVEE's active points).

    Returns
    -------
    ndarray of int
        Row indices of ``P`` in the order SPA picked them.
    """
    idx = np.arange(P.shape[0]) if candidates is None else np.asarray(candidates, dtype=np.int64)
    R = np.array(P[idx], dtype=np.float64, copy=True)
    norms = np.einsum("ij,ij->i", R, R)
    scale = norms.max() if norms.size else 0.0
    picked: list[int] = []
    for _ in range(min(r, R.shape[0])):
        j = int(np.argmax(norms))
        if norms[j] <= 1e-20 * max(scale, 1e-300):
            break
        v = R[j] / np.sqrt(norms[j])
        R -= np.outer(R @ v, v)
        norms = np.einsum("ij,ij->i", R, R)
        norms[j] = 0.0
        picked.append(j)
    return idx[np.array(picked, dtype=np.int64)]
