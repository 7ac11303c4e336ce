"""Which computation finds the leading principal components, and the randomized one.

:func:`graphclust.numerics.fit_pca` needs the ``p`` leading right singular vectors of
the centred rows ``A = X − 1 μᵀ`` (``n x d``). Two computations give them; the route is
the cheaper by its count of multiply-adds, decided from ``(n, d, p)`` alone, so dense
and sparse copies of the same data take the same route (and get the same components):

* ``"covariance"``: the ``d x d`` scatter matrix ``AᵀA`` and its full eigendecomposition,
  ``n·d² + EIGH_FACTOR·d³``. Exact; the cheapest for a few hundred columns (MNIST's 784
  columns and 70 000 rows: 4.7e10 against 1.3e11 for the randomized route).
* ``"randomized"``: randomized subspace iteration (Halko, Martinsson & Tropp 2011,
  *Finding structure with randomness*, SIAM Review 53(2), Alg. 4.4): ``l = p +``
  :data:`OVERSAMPLES` Gaussian test vectors, :data:`POWER_ITERATIONS` passes of ``A``
  and ``Aᵀ`` with a QR after each, then the SVD of the small ``l x d`` matrix ``QᵀA``:
  ``2·(2q + 2)·n·d·l`` multiply-adds, linear in ``n``, ``d`` and ``p``. On a wide set
  (3 000 x 8 000, 50 components) it is 4.6e10 against 4.8e12 for the covariance route
  (whose ``eigh`` of 8 000 x 8 000 took 244 s here). The ``n x n`` Gram matrix
  ``AAᵀ`` (``n²·d + EIGH_FACTOR·n³``) would beat it only below about ``32·(p + 10)``
  rows, where both cost well under a second, so it is not a route of its own.

So the ``d³`` of the covariance route is paid only where it costs less than the
randomized route's ``O(n·d·p)``, or below :data:`EXACT_FLOOR` multiply-adds (a tenth
of a second), where the exact route is kept so small problems get exact components.

Why not :func:`sklearn.utils.extmath.randomized_svd`: it validates its input as an
array (``check_array``), so it would need the centred ``n x d`` copy of dense ``X``
and the densified centred copy of a sparse one; here ``A`` is never formed: every
product is ``X V − 1 (μᵀV)`` or ``XᵀU − μ (1ᵀU)``, in ``X``'s float type for dense
``X`` (float32 stays float32) and through the sparse product for sparse ``X``, so one
seeded computation serves both containers.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from graphclust.numerics.threads import fixed_threads

__all__ = ["EIGH_FACTOR", "EXACT_FLOOR", "OVERSAMPLES", "POWER_ITERATIONS", "choose_route",
           "randomized_components", "route_costs"]

#: Multiply-adds of a symmetric eigendecomposition with eigenvectors, per ``size³``
#: (tridiagonal reduction and back-transformation, about 9 in Golub & Van Loan's count).
EIGH_FACTOR = 9.0
#: Test vectors beyond the ``p`` components (Halko et al.'s ``p`` of Sec. 4.2).
OVERSAMPLES = 10
#: Passes of subspace iteration (scikit-learn's ``randomized_svd`` uses 7 for few
#: components): enough for the leading subspace of slowly decaying spectra.
POWER_ITERATIONS = 7
#: Below this many multiply-adds (about 0.1 s) an exact route is kept whatever the
#: randomized one would cost.
EXACT_FLOOR = 1e9


def route_costs(n: int, d: int, p: int) -> dict[str, float]:
    """Multiply-adds of each route for ``p`` components of ``n x d`` rows."""
    n, d = float(n), float(d)
    size = min(p + OVERSAMPLES, n, d)
    return {"covariance": n * d * d + EIGH_FACTOR * d ** 3,
            "randomized": 2.0 * (2 * POWER_ITERATIONS + 2) * n * d * size}


def choose_route(n: int, d: int, p: int) -> str:
    """The route :func:`~graphclust.numerics.fit_pca` takes (module notes):
    ``"covariance"`` when it costs at most the randomized route or :data:`EXACT_FLOOR`,
    else ``"randomized"`` (whose test vectors then span all ``min(n, d)`` directions when
    ``p + OVERSAMPLES`` reaches it: exact too)."""
    costs = route_costs(n, d, p)
    if costs["covariance"] <= max(costs["randomized"], EXACT_FLOOR):
        return "covariance"
    return "randomized"


class _Centred:
    """``A = X − 1 μᵀ`` as products only; dense products in ``X``'s float type."""

    def __init__(self, X, mean: np.ndarray):
        self.X = X
        self.sparse = sp.issparse(X)
        self.dtype = np.float64 if self.sparse else X.dtype
        self.mean = mean

    def dot(self, V: np.ndarray) -> np.ndarray:  # A V, (n, l), float64
        V = np.asarray(V, dtype=self.dtype)
        out = np.asarray(self.X @ V, dtype=np.float64)
        return out - (self.mean @ V.astype(np.float64))[None, :]

    def tdot(self, U: np.ndarray) -> np.ndarray:  # Aᵀ U, (d, l), float64
        Uc = np.asarray(U, dtype=self.dtype)
        out = np.asarray(self.X.T @ Uc, dtype=np.float64)
        return out - np.outer(self.mean, U.sum(axis=0))


def randomized_components(X, mean: np.ndarray, p: int, seed: int = 0
                          ) -> tuple[np.ndarray, np.ndarray]:
    """The ``p`` leading right singular vectors of ``X − 1 μᵀ`` and their singular
    values, by randomized subspace iteration (module notes).

    Parameters
    ----------
    X : ndarray (float32 or float64) or scipy sparse matrix (float64), shape (n, d)
    mean : ndarray of shape (d,)
        The column means ``μ`` (float64).
    p : int
        Components, ``1 <= p < min(n, d)``.
    seed : int, default=0
        Seed of the Gaussian test matrix (the same for every container).

    Returns
    -------
    components : ndarray of shape (p, d), float64, orthonormal rows
    singular_values : ndarray of shape (p,), descending
    """
    A = _Centred(X, mean)
    n, d = X.shape
    size = int(min(p + OVERSAMPLES, n, d))
    omega = np.random.default_rng(seed).standard_normal((d, size))
    Q = _orthonormal(A.dot(omega))
    for _ in range(POWER_ITERATIONS):
        W = _orthonormal(A.tdot(Q))
        Q = _orthonormal(A.dot(W))
    B = A.tdot(Q).T  # Qᵀ A, (size, d)
    with fixed_threads():
        _, svals, vt = np.linalg.svd(B, full_matrices=False)
    return vt[:p], svals[:p]


def _orthonormal(Y: np.ndarray) -> np.ndarray:
    """An orthonormal basis of ``Y``'s columns (the ``Q`` of its QR), on one BLAS thread:
    a tall, thin factorisation whose threads only wait for each other (on a busy two-core
    machine 3.1 CPU s for 15 of them, ``3 000 x 8 000`` to 60 columns, against about 0.15
    on one thread), and whose result feeds the next pass (thread-count-free,
    :mod:`graphclust.numerics.threads`). The products around it keep their threads."""
    with fixed_threads():
        Q, _ = np.linalg.qr(Y)
    return Q
