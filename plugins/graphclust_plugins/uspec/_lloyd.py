"""Lloyd's k-means of the hybrid selection's candidates, on every BLAS thread, labels
decided on exact distances.

The representatives of U-SPEC (Sec. 3.1) are ``max_iter`` Lloyd steps of ``p'``
candidates into ``p`` centres from ``p`` random candidates (the authors'
``litekmeans``). The assignment step is the ``p' x p x d`` product that dominates a fit
on wide data (MNIST-70k: 10 000 x 1 000 x 784 per step, 10 steps a start). scikit-learn's
Lloyd step sums each thread's partial centres in the order the threads finish, so it
was run on one thread; here the assignment is :func:`graphclust.numerics.nearest_anchors`
(a BLAS product on all threads, the nearest centre decided on exact distances wherever
the product's round-off could change it) and the update is a fixed-order sparse sum,
so the centres are the same bits for any thread count.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from graphclust.numerics import nearest_anchors

__all__ = ["initial_centres", "lloyd_representatives"]


def initial_centres(m: int, p: int, seed: int) -> np.ndarray:
    """``p`` distinct candidates of ``m`` at random: scikit-learn's ``init="random"``
    draw for ``random_state = seed`` (the representatives' k-means before issue 48), so
    a seed keeps its start."""
    return np.random.RandomState(seed).choice(m, size=p, replace=False,
                                              p=np.full(m, 1.0 / m))


def lloyd_representatives(C: np.ndarray, p: int, max_iter: int, seed: int,
                          progress=None) -> tuple[np.ndarray, int, float]:
    """``max_iter`` Lloyd steps of the rows of ``C`` into ``p`` centres.

    Parameters
    ----------
    C : ndarray of shape (m, d), float32 or float64
        The candidates (dense).
    p : int
        Number of centres, ``1 <= p <= m``.
    max_iter : int
        Assignment steps at most; the steps stop early when an assignment repeats the
        previous one (the centres are then fixed).
    seed : int
        The initial centres are the candidates :func:`initial_centres` draws.
    progress : graphclust.Progress, optional
        One step per assignment.

    Returns
    -------
    centres : ndarray of shape (p, d), the dtype of ``C``
        Each the mean of the candidates assigned to it by the last step; a centre no
        candidate chose keeps its previous value (scikit-learn would move it to a far
        candidate, ``litekmeans`` would drop it: either way a centre without candidates,
        here one that the graph's points may still choose).
    n_iter : int
        Assignment steps run.
    inertia : float
        Sum of the squared distances of the last assignment (to the centres it was
        made with).
    """
    C = np.asarray(C)
    m = C.shape[0]
    if not 1 <= p <= m:
        raise ValueError(f"p must be in [1, {m}], got {p}")
    centres = C[initial_centres(m, p, seed)].copy()
    C64 = np.asarray(C, dtype=np.float64)
    rows = np.arange(m)
    if progress is not None:
        progress.start(max_iter, f"k-means of {m} candidates into {p} representatives")
    labels, n_iter, inertia = None, 0, float("nan")
    for it in range(1, max_iter + 1):
        near, sq = nearest_anchors(C, centres, 1)
        new = near[:, 0]
        inertia = float(sq[:, 0].sum())
        n_iter = it
        if progress is not None:
            progress.step(it, max_iter, f"inertia {inertia:.6g}")
        if labels is not None and np.array_equal(new, labels):
            break  # the same assignment: the centres would not move
        labels = new
        onehot = sp.csr_array((np.ones(m), (labels, rows)), shape=(p, m))
        counts = np.bincount(labels, minlength=p)
        sums = onehot @ C64  # each centre's members added in row order: no thread in it
        used = counts > 0
        centres[used] = (sums[used] / counts[used, None]).astype(C.dtype, copy=False)
    if progress is not None:
        progress.end()
    return centres, n_iter, inertia
