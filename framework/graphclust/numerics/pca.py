"""Principal component reduction, by the ``d x d`` covariance or randomized subspace
iteration, whichever costs less (never a step cubic in ``d`` beyond ``O(n·d·p)``).

A PCA to a few dozen dimensions before a graph is built makes the neighbour search
cheap (``d`` 784 → 50 on MNIST) and, on image data, cleans the kNN graph: measured on
MNIST-70k (pixels/255, self-tuning 10-NN graph, Ncut, k-means), ACC/NMI .821/.803 on
the raw pixels and .839/.825 on 50 components (issue 16 study).

The method
----------
Passes over row blocks, all row-local (sums over blocks, so they can later run chunk
by chunk): the column means ``μ`` and the centred column sums of squares (the total
variance), accumulated in float64. Then the ``p`` leading right singular vectors of the
centred rows ``A = X − 1 μᵀ`` by the route :mod:`graphclust.numerics.pca_routes`
chooses from ``(n, d, p)`` alone:

* ``"covariance"``: the scatter matrix ``S = Σ_blocks (X_b − μ)ᵀ (X_b − μ)`` (each block
  product in the data's float type, float32 staying float32, summed in float64) and
  ``eigh(S)``: ``O(n·d² + d³)``, exact; taken while it costs less than the randomized
  route (a few hundred columns: MNIST's 784 with 70 000 rows) or under a tenth of a
  second. The ``eigh`` runs on one BLAS thread (:func:`~graphclust.numerics.
  fixed_threads`): its components feed every later step (thread-count-free), and
  OpenBLAS's threaded ``eigh`` of a matrix this size gains nothing and loses much on a
  busy machine (``1024 x 1024``, load 9 on two cores: 0.26 CPU s on one thread, 9.8 on
  two, spent waiting; ``benchmarks/HISTORY.md``, "eigh on one thread"). So do the
  scatter's block products: OpenBLAS splits a product's long inner dimension (the
  block's rows) between threads, so ``S`` differed in its last bits between one thread
  and two (3 000 random rows of 784 columns), and with it the components; on a busy
  machine the two threads also cost four times the processor time of one (MNIST-70k:
  1.6 against 0.4 CPU s, load 7; ``benchmarks/HISTORY.md``, 2026-11-28);
* ``"randomized"``: randomized subspace iteration over the implicitly centred ``A``
  (Halko, Martinsson & Tropp 2011): ``O(n·d·p)``; wide data (3 000 x 8 000: 244 s of
  ``eigh`` before, about a second now).

Conventions (those of :class:`sklearn.decomposition.PCA`): ``explained_variance_`` is
the population variance divided by ``n − 1``; components are rows of unit length in
descending order of variance. Signs are fixed so that the largest-magnitude entry of
each component is positive (deterministic for a given ``X``; scikit-learn's own sign
rule may differ, a column of scores then differs by its sign only).

Sparse ``X``
------------
A ``scipy.sparse`` ``X`` is never densified nor centred in memory: it takes the same
route as its dense copy (the choice reads the shape only), the covariance as
``XᵀX − nμμᵀ``, the randomized products as ``X V − 1(μᵀV)`` with the same seeded test
vectors, so dense and sparse copies of one data set get the same components up to
round-off; :meth:`Projection.transform` takes ``X Wᵀ − μ Wᵀ`` the same way.
"""

from __future__ import annotations

import attrs
import numpy as np
from numpy.typing import ArrayLike

import scipy.sparse as sp

from graphclust.numerics.distances import default_block_size
from graphclust.numerics.dtypes import as_dense_float
from graphclust.numerics.pca_routes import choose_route, randomized_components
from graphclust.numerics.threads import fixed_threads

__all__ = ["Projection", "fit_pca"]


@attrs.frozen(eq=False)
class Projection:
    """A fitted principal-component projection ``x ↦ (x − mean) @ componentsᵀ``.

    Attributes
    ----------
    mean : ndarray of shape (d,)
        Column means of the training data (float64).
    components : ndarray of shape (p, d)
        Orthonormal rows, in descending order of explained variance (float64).
    explained_variance : ndarray of shape (p,)
        Variance of the training data along each component (divided by ``n − 1``, as
        scikit-learn's ``explained_variance_``).
    total_variance : float
        Sum of the variances of all ``d`` columns (same normalisation).
    """

    mean: np.ndarray
    components: np.ndarray
    explained_variance: np.ndarray
    total_variance: float

    @property
    def n_components(self) -> int:
        """Number of components ``p``."""
        return int(self.components.shape[0])

    @property
    def explained_variance_ratio(self) -> np.ndarray:
        """Share of the total variance each component explains."""
        if self.total_variance <= 0:
            return np.zeros_like(self.explained_variance)
        return self.explained_variance / self.total_variance

    def transform(self, X: ArrayLike, *, block_size: int | None = None) -> np.ndarray:
        """Scores of the rows of ``X`` (``n x p``), in ``X``'s float type (float32 stays
        float32), computed block by block.

        Parameters
        ----------
        X : array-like of shape (n, d)
        block_size : int, optional
            Rows per block; default :func:`~graphclust.numerics.default_block_size` with a 64 MB
            budget.

        Returns
        -------
        ndarray of shape (n, p)
        """
        if sp.issparse(X):
            return self._transform_sparse(X)
        X = as_dense_float(X)
        if X.ndim != 2 or X.shape[1] != self.mean.shape[0]:
            raise ValueError(f"Projection.transform: X must have {self.mean.shape[0]} "
                             f"columns, got shape {X.shape}")
        mean = self.mean.astype(X.dtype)
        W = self.components.T.astype(X.dtype)
        out = np.empty((X.shape[0], self.n_components), dtype=X.dtype)
        step = _block(X, block_size)
        for start in range(0, X.shape[0], step):
            stop = min(X.shape[0], start + step)
            np.matmul(X[start:stop] - mean, W, out=out[start:stop])
        return out

    def _transform_sparse(self, X) -> np.ndarray:
        """``X Wᵀ − μ Wᵀ`` for sparse rows (nothing ``n x d`` is dense)."""
        from graphclust.numerics.dtypes import float_dtype

        X = sp.csr_array(X)
        if X.shape[1] != self.mean.shape[0]:
            raise ValueError(f"Projection.transform: X must have {self.mean.shape[0]} "
                             f"columns, got shape {X.shape}")
        dtype = float_dtype(X.dtype)
        W = self.components.T
        out = np.asarray(X.astype(np.float64) @ W) - (self.mean @ W)[None, :]
        return out.astype(dtype, copy=False)


def _block(X: np.ndarray, block_size: int | None) -> int:
    if block_size is not None:
        if int(block_size) < 1:
            raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
        return int(block_size)
    return default_block_size(X.shape[1], 64 * 2**20)  # a 64 MB float64-sized slab


def fit_pca(X: ArrayLike, n_components: int, *, block_size: int | None = None) -> Projection:
    """Fit a principal-component projection of ``X`` to ``n_components`` dimensions.

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n, d)
        Features (n ≥ 1); sparse ``X`` is never densified nor centred in memory.
    n_components : int
        Components kept ``p ≥ 1``; clamped to ``min(n, d)``.
    block_size : int, optional
        Rows per block of the passes over dense ``X``; default
        :func:`~graphclust.numerics.default_block_size`.

    Returns
    -------
    Projection

    Raises
    ------
    ValueError
        For ``n_components < 1``, an empty or non-2-d ``X``, or non-finite values.

    Notes
    -----
    The route (the ``d x d`` covariance or randomized subspace iteration) is the
    cheaper for ``(n, d, p)``: :func:`graphclust.numerics.pca_routes.choose_route`.
    Rule for fewer than two rows: the variances are zero (no division by ``n − 1 = 0``)
    and the components are the leading unit vectors of the zero scatter matrix.
    """
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) \
            or n_components < 1:
        raise ValueError(f"n_components must be an integer >= 1, got {n_components!r}")
    if sp.issparse(X):
        X = sp.csr_array(X).astype(np.float64)
        mean, col_m2 = _sparse_moments(X)
    else:
        X = as_dense_float(X)
        mean = _dense_mean(X, _block(X, block_size) if X.ndim == 2 else 1)
        col_m2 = None  # the covariance route reads it off the scatter matrix's diagonal
    n, d = X.shape
    p = int(min(n_components, n, d))
    denom = max(n - 1, 1)
    if choose_route(n, d, p) == "covariance":
        S = _scatter(X, mean, block_size)
        if col_m2 is None:
            col_m2 = np.maximum(np.diag(S), 0.0)
        with fixed_threads():  # d x d: global-small (numerics.threads), and see the notes
            vals, vecs = np.linalg.eigh(0.5 * (S + S.T))
        order = np.argsort(-vals, kind="stable")[:p]
        comps, sq = vecs[:, order].T, np.maximum(vals[order], 0.0)
    else:
        if col_m2 is None:
            col_m2 = _dense_m2(X, mean, _block(X, block_size))
        comps, svals = randomized_components(X, mean, p)
        sq = svals ** 2
    i = np.abs(comps).argmax(axis=1)
    signs = np.sign(comps[np.arange(p), i])
    signs[signs == 0] = 1.0
    comps = np.asarray(comps * signs[:, None], dtype=np.float64)
    var = sq / denom if n > 1 else np.zeros(p)
    tot = float(col_m2.sum() / denom) if n > 1 else 0.0
    return Projection(mean=mean, components=comps, explained_variance=var, total_variance=tot)


def _dense_mean(X: np.ndarray, step: int) -> np.ndarray:
    """Column means (float64), one pass over row blocks that also refuses non-finite
    values.

    The centred sums of squares (the total variance) need a second pass only on the
    randomized route (:func:`_dense_m2`): the covariance route reads them off the
    diagonal of the scatter matrix it forms anyway, one pass over ``X`` fewer (on
    MNIST-70k about 0.2 of the fit's processor seconds; benchmarks/HISTORY.md,
    2026-11-28)."""
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"fit_pca: X must be a non-empty 2-d array, got shape {X.shape}")
    n, d = X.shape
    total = np.zeros(d)
    for start in range(0, n, step):
        blk = X[start:start + step]
        if not np.isfinite(blk).all():
            raise ValueError("fit_pca: X contains NaN or infinity")
        total += blk.sum(axis=0, dtype=np.float64)
    return total / n


def _dense_m2(X: np.ndarray, mean: np.ndarray, step: int) -> np.ndarray:
    """Centred column sums of squares (float64), one pass over row blocks."""
    n, d = X.shape
    m2 = np.zeros(d)
    for start in range(0, n, step):
        C = X[start:start + step].astype(np.float64) - mean
        m2 += np.einsum("ij,ij->j", C, C)
    return m2


def _sparse_moments(X) -> tuple[np.ndarray, np.ndarray]:
    """Column means and centred sums of squares of sparse ``X`` (float64)."""
    n, d = X.shape
    if n == 0 or d == 0:
        raise ValueError(f"fit_pca: X must be a non-empty 2-d array, got shape {X.shape}")
    if not np.isfinite(X.data).all():
        raise ValueError("fit_pca: X contains NaN or infinity")
    mean = np.asarray(X.sum(axis=0), dtype=np.float64).ravel() / n
    sq = np.asarray(X.multiply(X).sum(axis=0), dtype=np.float64).ravel()
    return mean, np.maximum(sq - n * mean * mean, 0.0)


def _scatter(X, mean: np.ndarray, block_size: int | None) -> np.ndarray:
    """``S = (X − 1μᵀ)ᵀ(X − 1μᵀ)`` (``d x d``, float64): dense ``X`` by row blocks, each
    product in ``X``'s float type and summed in float64; sparse ``X`` as ``XᵀX − nμμᵀ``."""
    n, d = X.shape
    if sp.issparse(X):
        return np.asarray((X.T @ X).toarray()) - n * np.outer(mean, mean)
    mean_x = mean.astype(X.dtype)
    S = np.zeros((d, d))
    step = _block(X, block_size)
    with fixed_threads():  # the same bits on any thread count (module notes)
        for start in range(0, n, step):
            C = X[start:start + step] - mean_x
            S += C.T @ C  # product in X's float type, sum in float64
    return S
