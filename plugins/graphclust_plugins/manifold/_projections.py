"""The principal components of the sample rows, computed once per fit for both their users.

Rule 7 of ``auto`` asks for the rows' leading principal components twice: the sample's
neighbour search runs on 64 of them (``fuzzy-knn``'s ``pca_components``) and the layout
starts from 10 of them (``umap-layout``'s ``init="pca"``). Both are handed the very same
array of sample rows (``on-sample`` gives the solver the rows its graph was built on), so
the projection :func:`graphclust_plugins.manifold._neighbors.project` fitted is kept here
(:func:`remember_projection`) while those rows live, and the layout's start takes its
leading components (:func:`leading_projection`) instead of fitting a second PCA: on
MNIST-70k the second fit cost about 4 s of processor time (benchmarks/HISTORY.md,
2026-11-28).

The leading ``p`` rows of a projection fitted with more components are the leading ``p``
principal components themselves (exactly so on the covariance route, which takes every
eigenvector of the scatter matrix; on the randomized route a subspace fitted with more
test vectors is at least as close), so the start does not depend on which user ran
first. Only one projection is kept, by a weak reference to its rows: none outlives its
fit.

Every score the family computes goes through :func:`scores`, on one BLAS thread: OpenBLAS
splits a float32 product with a long inner dimension differently on one thread and on
two (MNIST-70k's ``70 000 x 784`` rows by 64 components differ in the last bits, and
the NN-descent on them then kept other neighbours for a few rows: 66 labels of 70 000
differed between one and two threads), so the search, the start and the placement of
rows are the same whatever the thread count, in memory and on Dask's one-thread
workers. The product costs about 0.15 s of one core on MNIST-70k.
"""

from __future__ import annotations

import weakref

import attrs
import numpy as np

from graphclust.numerics import Projection, fit_pca, fixed_threads

__all__ = ["leading_projection", "remember_projection", "scores"]

#: ``[weak reference to the rows, Projection]`` of the last :func:`remember_projection`.
_LAST: list = []


def remember_projection(X: np.ndarray, projection: Projection) -> None:
    """Keep ``projection`` (fitted on the rows ``X``) for :func:`leading_projection`
    while ``X`` lives (one projection at a time)."""
    _LAST[:] = [weakref.ref(X, _forget), projection]


def _forget(ref: weakref.ref) -> None:
    if _LAST and _LAST[0] is ref:
        _LAST.clear()


def leading_projection(X: np.ndarray, n_components: int) -> Projection:
    """The ``n_components`` leading principal components of ``X``: those of the
    projection remembered for this very array when it has at least as many, else
    :func:`graphclust.numerics.fit_pca` (clamped to ``min(n, d)`` as it clamps)."""
    p = int(n_components)
    if _LAST and _LAST[0]() is X and _LAST[1].n_components >= min(p, *np.shape(X)):
        proj = _LAST[1]
        p = min(p, proj.n_components)
        return attrs.evolve(proj, components=proj.components[:p],
                            explained_variance=proj.explained_variance[:p])
    return fit_pca(X, p)


def scores(projection: Projection, X) -> np.ndarray:
    """``projection.transform(X)`` (C-contiguous, ``X``'s float type) on one BLAS thread:
    the same bits whatever the thread count (module notes)."""
    with fixed_threads():
        return np.ascontiguousarray(projection.transform(X))
