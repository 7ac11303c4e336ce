"""Nonnegative least squares ``min_w ||P_J w - p_i||²,  w >= 0`` for many points.

All points share the same ``r`` representatives ``P_J`` (NCER step 4), so the Gram
matrix ``G = P_Jᵀ P_J`` is shared and only ``c_i = P_Jᵀ p_i`` differs. Three backends:

* ``"fast"``: block principal pivoting for many right-hand sides (Kim & Park 2011),
  vectorised over all points; columns with the same passive set are solved together
  with one factorisation. Exact (the KKT conditions are checked), warm-started from
  the sign pattern of the unconstrained solution.
* ``"scipy"``: :func:`scipy.optimize.nnls` (Lawson–Hanson active set, as MATLAB's
  ``lsqnonneg`` used in the paper) point by point.
* ``"cvxpy"``: one cvxpy problem per block of points (reference; slow).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import nnls as _scipy_nnls

__all__ = ["nnls_many"]


def _solve_groups(G: np.ndarray, C: np.ndarray, F: np.ndarray) -> np.ndarray:
    """``X`` with ``X[F_j, j] = G[F_j, F_j]^{-1} C[F_j, j]`` and zero elsewhere (per column)."""
    r, n = C.shape
    X = np.zeros((r, n))
    if n == 0:
        return X
    # group columns by passive set: pack each boolean column into an integer key
    if r <= 62:
        keys = (F.astype(np.int64) << np.arange(r, dtype=np.int64)[:, None]).sum(axis=0)
    else:
        keys = np.packbits(F, axis=0).T.copy().view(f"V{(r + 7) // 8}").ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(first.size + 1))
    for g in range(first.size):
        cols = order[bounds[g]:bounds[g + 1]]
        sel = np.flatnonzero(F[:, first[g]])
        if sel.size == 0:
            continue
        Gs = G[np.ix_(sel, sel)]
        rhs = C[np.ix_(sel, cols)]
        try:
            sol = np.linalg.solve(Gs, rhs)
        except np.linalg.LinAlgError:
            sol = np.linalg.lstsq(Gs, rhs, rcond=None)[0]
        X[np.ix_(sel, cols)] = sol
    return X


def _bpp(G: np.ndarray, C: np.ndarray, max_iter: int = 1000) -> np.ndarray:
    """Block principal pivoting NNLS for ``min ½ xᵀGx - cᵀx, x >= 0`` column-wise."""
    r, n = C.shape
    X = _solve_groups(G, C, np.ones((r, n), dtype=bool))
    F = X > 0  # warm start: passive set = positive part of the unconstrained solution
    X = _solve_groups(G, C, F)
    Y = G @ X - C
    Y[F] = 0.0
    tol = 1e-12 * (float(np.abs(C).max()) if C.size else 0.0)
    alpha = np.full(n, 3)
    ninf = np.full(n, r + 1)
    for _ in range(max_iter):
        V = (F & (X < -tol)) | (~F & (Y < -tol))
        counts = V.sum(axis=0)
        bad = np.flatnonzero(counts > 0)
        if bad.size == 0:
            break
        full = np.zeros(n, dtype=bool)
        single = np.zeros(n, dtype=bool)
        improved = counts < ninf
        ninf[improved] = counts[improved]
        alpha[improved] = 3
        full[improved] = True
        rest = ~improved & (counts > 0)
        dec = rest & (alpha >= 1)
        alpha[dec] -= 1
        full[dec] = True
        single[rest & ~dec] = True
        full[counts == 0] = False
        exch = V & full[None, :]
        if single.any():  # Murty's backup rule: flip only the largest infeasible index
            cols = np.flatnonzero(single)
            last = r - 1 - np.argmax(V[::-1, cols], axis=0)
            exch[last, cols] = True
        F = F ^ exch
        cols = bad
        Xc = _solve_groups(G, C[:, cols], F[:, cols])
        Yc = G @ Xc - C[:, cols]
        Yc[F[:, cols]] = 0.0
        X[:, cols] = Xc
        Y[:, cols] = Yc
    X[~F] = 0.0
    return np.maximum(X, 0.0)


def nnls_many(PJ: np.ndarray, Q: np.ndarray, backend: str = "fast",
              block: int = 65536) -> np.ndarray:
    """Nonnegative weights of every row of ``Q`` on the representatives ``PJ``.

    Parameters
    ----------
    PJ : ndarray (k, q)
        The representatives as rows (``P(J)ᵀ``).
    Q : ndarray (n, q)
        Points to fit, as rows.
    backend : {"fast", "scipy", "cvxpy"}

    Returns
    -------
    W : ndarray (n, k)
        ``W[i] = argmin_{w >= 0} ||PJᵀ w - Q[i]||``.
    """
    PJ = np.asarray(PJ, dtype=np.float64)
    Q = np.asarray(Q, dtype=np.float64)
    n, k = Q.shape[0], PJ.shape[0]
    # The weights are invariant under a common scaling of PJ and Q; spectral embeddings
    # can be tiny (entries ~ 1/sqrt(vol)), so scale to unit size before any tolerance.
    scale = float(np.abs(PJ).max()) if PJ.size else 0.0
    if scale > 0:
        PJ = PJ / scale
        Q = Q / scale
    if backend == "scipy":
        A = PJ.T
        W = np.empty((n, k))
        for i in range(n):
            W[i] = _scipy_nnls(A, Q[i])[0]
        return W
    if backend == "cvxpy":
        import cvxpy as cp

        W = np.empty((n, k))
        A = PJ.T
        for s in range(0, n, 2000):
            B = Q[s:s + 2000].T
            Wv = cp.Variable((k, B.shape[1]), nonneg=True)
            prob = cp.Problem(cp.Minimize(cp.sum_squares(A @ Wv - B)))
            prob.solve()
            W[s:s + B.shape[1]] = np.maximum(Wv.value, 0.0).T
        return W
    if backend != "fast":
        raise ValueError(f"unknown NNLS backend {backend!r}; use 'fast', 'scipy' or 'cvxpy'")
    G = PJ @ PJ.T
    W = np.empty((n, k))
    for s in range(0, n, block):
        C = PJ @ Q[s:s + block].T
        W[s:s + block] = _bpp(G, C).T
    return W
