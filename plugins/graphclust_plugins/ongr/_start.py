"""Starting points of the ONGR alternation (Algorithm 1, step 3, and the default start).

Private maths of the ``ongr`` solver: the initial ``F`` of Eq. 7.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning
from threadpoolctl import threadpool_limits

from graphclust.numerics import normalize_rows

__all__ = ["drop_trivial", "indicator_start", "spectral_kmeans_start"]


def drop_trivial(U: np.ndarray, t: np.ndarray | None) -> np.ndarray:
    """An orthonormal basis of ``span(U)`` with the unit direction ``t`` projected out.

    ``U`` (n × q, orthonormal) spans the leading invariant subspace of ``W``; ``t`` is
    its trivial eigenvector (``W t = t``: the constant vector for an anchor graph with
    row-stochastic ``Z``, ``√d`` for ``D^{-1/2} A D^{-1/2}``). The ``q − 1`` leading
    left singular vectors of ``U − t tᵀU`` are returned (the basis is only defined up
    to a rotation, which k-means on unit rows does not see). ``t=None`` drops the
    first column.
    """
    if t is None or U.shape[1] < 2:
        return U[:, 1:]
    R = U - np.outer(t, t @ U)
    Q, _, _ = np.linalg.svd(R, full_matrices=False)
    return Q[:, : U.shape[1] - 1]


def indicator_start(labels: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """The scaled indicator matrix of ``labels`` (Eq. 1 with ``|A_j|``): orthonormal
    and nonnegative, so a feasible point of Eq. 6. Columns of empty clusters are filled
    with random directions orthogonal to the others (they are then not nonnegative)."""
    n = labels.shape[0]
    H = np.zeros((n, k))
    H[np.arange(n), labels] = 1.0
    counts = H.sum(axis=0)
    keep = counts > 0
    H[:, keep] /= np.sqrt(counts[keep])[None, :]
    if not keep.all():
        # the kept columns stay exact; the new ones are orthonormalised against them
        R = rng.standard_normal((n, int((~keep).sum())))
        K = H[:, keep]
        for _ in range(2):  # twice is enough (Gram-Schmidt re-orthogonalisation)
            R -= K @ (K.T @ R)
            R = np.linalg.qr(R)[0]
        H[:, ~keep] = R
    return H


def spectral_kmeans_start(U: np.ndarray, t: np.ndarray | None, k: int, seed: int,
                          n_init: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Initial ``F`` from k-means on the ``k`` nontrivial leading eigenvectors of ``W``.

    ``U`` holds the ``k + 1`` leading eigenvectors (fewer when ``n`` is smaller); the
    trivial direction ``t`` is projected out (:func:`drop_trivial`), rows are scaled to
    unit length (Ng–Jordan–Weiss) and k-means (``n_init`` restarts, k-means++ seeding,
    one OpenMP thread so the result does not depend on the thread count) partitions
    them; ``F`` is the scaled indicator of that partition (:func:`indicator_start`).

    Returns ``(F, labels)``.
    """
    E = drop_trivial(U, t) if U.shape[1] > k else U
    E = normalize_rows(E)
    km = KMeans(n_clusters=k, n_init=n_init, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SkConvergenceWarning)  # fewer distinct rows than k
        with threadpool_limits(limits=1, user_api="openmp"):
            labels = km.fit_predict(np.ascontiguousarray(E, dtype=np.float64))
    return indicator_start(labels, k, rng), labels
