"""Leading eigenvectors of a symmetric matrix or operator: the one dense-vs-iterative rule.

Every solver that needs the ``k`` largest eigenpairs (spectral embedding, ONGR's start,
NCER, ULGE, Nyström) calls :func:`leading_eigenvectors`, so the choice between a dense
LAPACK solve and ARPACK is made, and tuned, here only.

The rule
--------
* **dense** ``scipy.linalg.eigh`` (only the ``k`` wanted eigenpairs) when
  ``n <= DENSE_MAX`` (500) for a sparse matrix or a ``LinearOperator``, or
  ``n <= DENSE_MAX_HELD`` (1500) for a matrix that is already a dense array (the m×m
  Gram matrices of anchor graphs), or when ``4 k >= n`` (a Krylov basis of ``2k + 1``
  vectors then spans half the space and saves nothing; ARPACK also needs ``k < n``);
* **ARPACK** (``eigsh``, largest algebraic, ``tol = 0``) otherwise, started from
  :func:`~graphclust.numerics.start_vector` of the caller's seeded generator.

Why these numbers (2-core machine shared with other jobs, medians of 5 side by side in
one process, ``k = 11``; scripts in the issue-20 report): on a random sparse symmetric
matrix with about 20 nonzeros a row, dense/ARPACK time was 1.1 at n = 500, 9 at
n = 1000 and 38 at n = 2000, so a sparse matrix leaves the dense path above 500. The
dense m×m Gram matrix of an anchor graph (ULGE graph on BKHK anchors, 20 000 blob
points) has clustered leading eigenvalues, where ARPACK restarts often and every
product costs m²: dense/ARPACK was 0.4, 0.9 and 1.9 at m = 512, 1024 and 2048 with one
BLAS thread (0.7, 0.2 and 2.6 with two), so a matrix already held dense stays on the
dense path up to 1500. Below the limits the dense path is also the robust one: LAPACK
returns every copy of a repeated eigenvalue (a graph with several components), which
a Krylov method started from one vector may miss.

Before this module the five callers used five thresholds (spectral: dense below 500 or
``p >= n/2``; ONGR: anchor Gram dense up to 300, affinity up to 2000; NCER: dense up to
600, anchor Gram always dense; ULGE and Nyström: always dense).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from graphclust.numerics.random import start_vector
from graphclust.numerics.threads import fixed_threads

__all__ = ["leading_eigenvectors", "use_dense_eigensolver", "sign_flip",
           "singular_values_from_gram", "DENSE_MAX", "DENSE_MAX_HELD", "DENSE_FALLBACK_MAX"]

DENSE_MAX = 500
#: Largest ``n`` at which an ARPACK run that did not converge is redone densely (an
#: ``n x n`` ``eigh`` costs seconds there); above it the error is raised with advice.
DENSE_FALLBACK_MAX = 6000
"""Largest size solved densely when the matrix is sparse or an operator."""

DENSE_MAX_HELD = 1500
"""Largest size solved densely when the matrix is already a dense array."""


def use_dense_eigensolver(M, k: int) -> bool:
    """Whether :func:`leading_eigenvectors` takes the dense path for ``k`` pairs of ``M``
    (see the module docstring for the rule and the measurements behind it)."""
    n = M.shape[0]
    held = not (sp.issparse(M) or isinstance(M, LinearOperator))
    return n <= (DENSE_MAX_HELD if held else DENSE_MAX) or 4 * k >= n


def _dense(M) -> np.ndarray:
    if isinstance(M, LinearOperator):
        M = M @ np.eye(M.shape[0])
    Md = M.toarray() if sp.issparse(M) else np.asarray(M, dtype=np.float64)
    return 0.5 * (Md + Md.T)


#: First guess of the ARPACK restarts a solve takes (the progress total; raised by half
#: whenever a solve reaches it, and set to the restart reached when the solve ends).
ARPACK_RESTARTS_GUESS = 20


class _CountingOperator(LinearOperator):
    """``M`` as an operator that reports ARPACK's restarts to ``progress``.

    Implicitly restarted Lanczos with ``ncv`` basis vectors spends ``ncv`` products on
    its first factorisation and ``ncv - k`` on each restart, so the product count gives
    the restart reached. The products are ``M``'s own, so the result is unchanged.
    """

    def __init__(self, M, k: int, ncv: int, progress):
        super().__init__(dtype=np.float64, shape=M.shape)
        self._M, self._k, self._ncv, self._progress = M, k, ncv, progress
        self.products, self.restart, self.total = 0, 0, ARPACK_RESTARTS_GUESS

    def _matvec(self, v):
        self.products += 1
        if self.products >= self._ncv:
            restart = 1 + (self.products - self._ncv) // max(self._ncv - self._k, 1)
            if restart > self.restart:
                self.restart = restart
                if restart >= self.total:  # the guess was short: raise it by half
                    self.total = restart + max(restart // 2, 1)
                self._progress.step(restart, self.total,
                                    f"{self.products} products with the matrix")
        return self._M @ v


def leading_eigenvectors(M, k: int, *, rng: np.random.Generator | None = None,
                         method: str = "auto", tol: float = 0.0,
                         progress=None) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest (algebraic) eigenpairs of a symmetric matrix or operator.

    Parameters
    ----------
    M : ndarray, sparse matrix or LinearOperator of shape (n, n)
        Symmetric (the dense path symmetrises ``(M + Mᵀ)/2`` against round-off).
    k : int
        Number of pairs; clamped to ``n``.
    rng : numpy.random.Generator, optional
        Source of the ARPACK start vector (:func:`~graphclust.numerics.start_vector`);
        required when the iterative path is taken.
    method : {"auto", "dense", "arpack"}
        ``"auto"`` applies the rule of this module; the others force a path
        (``"arpack"`` still falls back to dense when ``k >= n - 1``, which ARPACK
        cannot do).
    tol : float, default=0.0
        ARPACK's relative accuracy of the Ritz values (0 = machine precision). The dense
        path is exact whatever ``tol``.
    progress : graphclust.Progress, optional
        Receives one phase: a single step for the dense path; for ARPACK one step per
        restart against an estimated total (``ARPACK_RESTARTS_GUESS``, raised when
        reached), closed at the restart where the solve converged.

    Returns
    -------
    values : ndarray of shape (k,)
        Descending.
    vectors : ndarray of shape (n, k)
        Orthonormal columns, in the order of ``values``; signs as the solver returns
        them (fix them with :func:`sign_flip` or a caller's own convention).
    """
    n = M.shape[0]
    k = int(min(k, n))
    if method not in ("auto", "dense", "arpack"):
        raise ValueError(f"method must be 'auto', 'dense' or 'arpack', got {method!r}")
    dense = (method == "dense" or k >= n - 1
             or (method == "auto" and use_dense_eigensolver(M, k)))
    if k <= 0:
        return np.zeros(0), np.zeros((n, 0))
    # one BLAS thread: LAPACK's eigh (and ARPACK's dense updates) split sums between
    # threads, so the vectors would depend on the thread count (numerics.threads)
    with fixed_threads():
        if dense:
            if progress is not None:
                progress.start(1, f"dense eigh, {k} pairs of {n} x {n}")
            vals, vecs = sla.eigh(_dense(M), subset_by_index=[n - k, n - 1])
            if progress is not None:
                progress.step(1, 1)
                progress.end()
        else:
            if rng is None:
                raise ValueError("leading_eigenvectors: the iterative path needs rng (a seeded "
                                 "numpy Generator) for its start vector")
            v0 = start_vector(rng, n)
            op = M
            if progress is not None:
                ncv = min(n, max(2 * k + 1, 20))  # eigsh's default basis size
                op = _CountingOperator(M, k, ncv, progress)
                progress.start(op.total, f"ARPACK, {k} pairs of {n} x {n} (restarts estimated)")
            try:
                vals, vecs = eigsh(op, k=k, which="LA", v0=v0, tol=tol,
                                   maxiter=max(1000, 50 * n))
            except ArpackNoConvergence as exc:
                # clustered eigenvalues (e.g. a graph of many components, where the leading
                # eigenvalue is repeated) can stall ARPACK; a dense solve is exact and cheap
                # enough up to DENSE_FALLBACK_MAX
                if n > DENSE_FALLBACK_MAX:
                    raise ArpackNoConvergence(
                        f"ARPACK found {len(exc.eigenvalues)} of {k} leading eigenpairs of an "
                        f"{n} x {n} problem; the graph probably has more connected components "
                        f"than k (more neighbours or anchors connect it)", exc.eigenvalues,
                        exc.eigenvectors) from None
                vals, vecs = sla.eigh(_dense(M), subset_by_index=[n - k, n - 1])
            if progress is not None:
                progress.step(max(op.restart, 1), max(op.restart, 1))  # ends at the last restart
                progress.end()
    order = np.argsort(-vals, kind="stable")
    return vals[order], vecs[:, order]


def sign_flip(U: np.ndarray) -> np.ndarray:
    """Make the largest-magnitude entry of every column positive (deterministic signs).

    Returns a new array; an all-zero column is left as it is.
    """
    if U.size == 0:
        return U
    i = np.abs(U).argmax(axis=0)
    s = np.sign(U[i, np.arange(U.shape[1])])
    s[s == 0] = 1.0
    return U * s


def singular_values_from_gram(eigvals: np.ndarray, rtol: float = 1e-10,
                              largest: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Singular values ``σ = √λ`` of ``B`` from eigenvalues ``λ`` of its Gram ``BᵀB``, and
    their inverses with a cut-off, for left singular vectors ``U = B V Σ⁻¹``.

    Parameters
    ----------
    eigvals : ndarray of shape (p,)
        Eigenvalues of ``BᵀB`` (negative round-off is clipped to 0).
    rtol : float
        ``σ <= rtol · σ_max`` counts as zero: its inverse is 0, so the column of ``U`` is
        zero instead of round-off divided by ~0.
    largest : float, optional
        ``σ_max``; by default the largest of ``σ`` (pass it when ``eigvals`` omits the
        leading pair, e.g. after dropping a trivial vector).

    Returns
    -------
    sigma : ndarray of shape (p,)
    inv_sigma : ndarray of shape (p,)
    """
    sigma = np.sqrt(np.maximum(np.asarray(eigvals, dtype=np.float64), 0.0))
    ref = sigma.max(initial=0.0) if largest is None else float(largest)
    keep = sigma > rtol * max(ref, np.finfo(float).tiny)
    inv = np.zeros_like(sigma)
    inv[keep] = 1.0 / sigma[keep]
    return sigma, inv
