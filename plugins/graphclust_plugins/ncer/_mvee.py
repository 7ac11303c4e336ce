"""Origin-centred minimum-volume enclosing ellipsoid of ``{±p_1, ..., ±p_n}``.

Problem R(S) of Mizutani (Section 3.2)::

    minimize  -log det L   subject to  p_iᵀ L p_i <= 1 (all i),  L ≻ 0.

Its dual (the D-optimal design problem) is ``max log det M(u)`` over the simplex,
``M(u) = Σ u_i p_i p_iᵀ``; at the optimum ``L* = M(u*)^{-1} / r`` and the *active*
points are those with ``ω_i = p_iᵀ M(u*)^{-1} p_i = r`` (``p_iᵀ L* p_i = 1``). Because
the set is symmetric, ``±p_i`` give the same term and only the ``p_i`` enter.

Two backends:

* :func:`mvee_cvxpy` solves R(S) itself with cvxpy's ``log_det`` (the reference).
* :func:`mvee_fw` is the Frank–Wolfe (Khachiyan) method on the dual with Todd–Yildirim
  away steps (Ahipasaoglu, Sun, Todd 2008 — the method the paper's Section 8 suggests),
  wrapped in a core-set (cutting-plane) loop: it iterates on a small working set and
  only sweeps all ``n`` points (one ``n x r`` BLAS product) to add violators, so
  ``n = 10⁶`` points in ``r <= 100`` dimensions fit in memory and time.
"""

from __future__ import annotations

import warnings

import numpy as np
from graphclust.numerics import fixed_threads
from scipy.linalg import solve_triangular

__all__ = ["MVEEResult", "mvee", "mvee_fw", "mvee_cvxpy", "reduce_rank"]


class MVEEResult:
    """Outcome of an MVEE solve.

    Attributes
    ----------
    L : ndarray (r, r)       shape matrix of the ellipsoid ``{x : xᵀ L x <= 1}``
    weights : ndarray (n,)   dual weights ``u`` (on the simplex)
    omega : ndarray (n,)     ``p_iᵀ L p_i`` (``<= 1``; ``1`` on the boundary)
    active : ndarray         indices with ``omega >= 1 - active_tol`` (sorted)
    n_iter : int ; converged : bool ; backend : str
    """

    def __init__(self, L, weights, omega, active, n_iter, converged, backend):
        self.L = L
        self.weights = weights
        self.omega = omega
        self.active = active
        self.n_iter = n_iter
        self.converged = converged
        self.backend = backend


#: Relative singular-value tolerance below which a direction of P counts as absent.
_RANK_RTOL = 1e-10


def reduce_rank(P: np.ndarray, rtol: float = _RANK_RTOL) -> np.ndarray:
    """Coordinates of the rows of ``P`` in an orthonormal basis of their span.

    R(S) has a solution only when ``rank(P) = r`` (Assumption 1). The active points are
    invariant under nonsingular linear maps (Lemma 1), so a rank-deficient ``P`` is
    handled by solving in its row space (an orthogonal change of coordinates there).
    The singular values come from the triangular factor of ``P = QR`` (for a tall
    ``P``), not from the Gram matrix ``PᵀP``: the Gram matrix squares the condition
    number, so its singular values are noise below ``sqrt(eps)`` of the largest and
    ``rtol = 1e-10`` could not see a rank-one ``P`` with rounding in a second column.
    """
    with fixed_threads():  # tall thin factorisations: one thread (numerics.threads)
        A = np.linalg.qr(P, mode="r") if P.shape[0] > P.shape[1] else P
        _, s, vt = np.linalg.svd(A, full_matrices=False)
    rank = int(np.sum(s > rtol * max(s[0], 1e-300))) if s.size else 0
    if rank == P.shape[1]:
        return P
    return P @ vt[:rank].T


def _omega(P: np.ndarray, M: np.ndarray) -> np.ndarray:
    """``p_iᵀ M^{-1} p_i`` for all rows, through a Cholesky factor (row blocks)."""
    C = np.linalg.cholesky(M)
    out = np.empty(P.shape[0])
    block = max(1024, int(2**24 // max(P.shape[1], 1)))
    for s in range(0, P.shape[0], block):
        Y = solve_triangular(C, P[s:s + block].T, lower=True, check_finite=False)
        out[s:s + block] = np.einsum("ij,ij->j", Y, Y)
    return out


def _wa_ty(P: np.ndarray, u: np.ndarray, tol: float, max_iter: int, progress=None):
    """Todd–Yildirim Frank–Wolfe with away steps on the dual, on the rows of ``P``.

    Works with ``Minv = M(u)^{-1}`` and ``ω = diag(P Minv Pᵀ)``, each updated by a
    rank-one (Sherman–Morrison) formula in ``O(n r)`` per iteration. Stops when
    ``max ω <= (1 + tol) r`` and ``min_{u_i>0} ω_i >= (1 - tol) r``.
    """
    n, r = P.shape
    M = (P * u[:, None]).T @ P
    Minv = np.linalg.inv(M)
    Minv = 0.5 * (Minv + Minv.T)
    omega = np.einsum("ij,jk,ik->i", P, Minv, P)
    it = 0
    converged = False
    refresh = 50
    while it < max_iter:
        j = int(np.argmax(omega))
        supp = u > 0
        k_candidates = np.flatnonzero(supp)
        k = int(k_candidates[np.argmin(omega[k_candidates])])
        eps_plus = omega[j] / r - 1.0
        eps_minus = 1.0 - omega[k] / r
        if eps_plus <= tol and eps_minus <= tol:
            converged = True
            break
        if eps_plus >= eps_minus:
            idx, w = j, omega[j]
            tau = (w - r) / (r * (w - 1.0))
        else:
            idx, w = k, omega[k]
            tau = (w - r) / (r * (w - 1.0)) if w > 1.0 else -np.inf
            bound = -u[k] / (1.0 - u[k]) if u[k] < 1.0 else -np.inf
            tau = max(tau, bound)
        # u <- (1 - tau) u + tau e_idx ;  M <- (1 - tau) (M + s p pᵀ), s = tau / (1 - tau)
        s = tau / (1.0 - tau)
        p = P[idx]
        Mp = Minv @ p
        denom = 1.0 + s * w
        Minv = (Minv - (s / denom) * np.outer(Mp, Mp)) / (1.0 - tau)
        Pm = P @ Mp
        omega = (omega - (s / denom) * Pm * Pm) / (1.0 - tau)
        u *= (1.0 - tau)
        u[idx] += tau
        if u[idx] < 1e-14 * (1.0 + tau):
            u[idx] = 0.0
        it += 1
        if it % refresh == 0:  # fight drift of the rank-one updates
            M = (P * u[:, None]).T @ P
            Minv = np.linalg.inv(M)
            Minv = 0.5 * (Minv + Minv.T)
            omega = np.einsum("ij,jk,ik->i", P, Minv, P)
            if progress is not None:
                progress.step(it, None, f"max ω/r - 1 = {eps_plus:.2e}")
    return u, it, converged


def _spa_init(P: np.ndarray) -> np.ndarray:
    from graphclust_plugins.ncer._spa import spa

    return spa(P, P.shape[1])


def mvee_fw(P: np.ndarray, *, tol: float = 1e-7, active_tol: float = 1e-5,
            max_iter: int = 100_000, batch: int | None = None, progress=None) -> MVEEResult:
    """Origin-centred MVEE by Frank–Wolfe with away steps in a core-set loop.

    Parameters
    ----------
    P : ndarray (n, r)
        The points ``p_i`` as rows; ``rank(P) = r`` (use :func:`reduce_rank`).
    tol : float
        Stop when ``max_i p_iᵀ L p_i <= 1 + tol`` over **all** points and the dual
        support satisfies ``p_iᵀ L p_i >= 1 - tol`` (ε-primal feasibility and
        ε-approximate optimality, Ahipasaoglu–Sun–Todd).
    active_tol : float
        A point is active when ``p_iᵀ L p_i >= 1 - active_tol``.
    max_iter : int
        Total Frank–Wolfe iterations over all working sets.
    batch : int, optional
        Violators added to the working set per sweep (default ``max(10 r, 50)``).
    """
    P0 = np.ascontiguousarray(P, dtype=np.float64)
    n, r = P0.shape
    if r == 1:  # closed form: the interval [-max|p|, max|p|]
        sq = P0[:, 0] ** 2
        L = np.array([[1.0 / sq.max()]])
        om = sq / sq.max()
        active = np.flatnonzero(om >= 1.0 - active_tol)
        u = np.zeros(n)
        u[active] = 1.0 / active.size
        return MVEEResult(L, u, om, active, 0, True, "fw")
    batch = batch or max(10 * r, 50)
    # Whiten (Lemma 1: active points are invariant under nonsingular linear maps);
    # the ellipsoid maps back as L = G Lw Gᵀ. The whitening goes through the triangular
    # factor of P0 = QR (P0ᵀP0/n = RᵀR/n), not a Cholesky factor of the Gram matrix,
    # whose condition number is squared; a numerically rank-deficient P0 is solved in
    # its row space.
    with fixed_threads():
        R = np.linalg.qr(P0, mode="r") / np.sqrt(n)
        _, s, vt = np.linalg.svd(R, full_matrices=False)
    rank = int(np.sum(s > _RANK_RTOL * max(s[0], 1e-300)))
    if rank == 0:
        raise ValueError("mvee_fw: every point is zero (rank 0); no ellipsoid exists")
    if rank < r:
        return mvee_fw(P0 @ vt[:rank].T, tol=tol, active_tol=active_tol,
                       max_iter=max_iter, batch=batch, progress=progress)
    G = solve_triangular(R, np.eye(r), lower=False)
    P = P0 @ G
    # Working set: SPA's r points (linearly independent: M(u) > 0 at once) plus the
    # largest-norm points, a cheap Kumar–Yildirim-style start.
    work = set(_spa_init(P).tolist())
    norms = np.einsum("ij,ij->i", P, P)
    top = np.argsort(-norms, kind="stable")[: min(n, batch)]
    work.update(top.tolist())
    work = np.array(sorted(work), dtype=np.int64)
    u_full = np.zeros(n)
    u_full[work] = 1.0 / work.size
    total = 0
    converged = False
    if progress is not None:
        progress.start(None, "MVEE (Frank-Wolfe, away steps)")
    for _sweep in range(1000):
        u_w, it, conv_w = _wa_ty(P[work], u_full[work].copy(), tol, max_iter - total, progress)
        total += it
        u_full[:] = 0.0
        u_full[work] = u_w
        M = (P[work] * u_w[:, None]).T @ P[work]
        omega = _omega(P, M)
        viol = np.flatnonzero(omega > (1.0 + tol) * r)
        if viol.size == 0 and conv_w:
            converged = True
            break
        if total >= max_iter:
            break
        if viol.size:
            order = np.argsort(-omega[viol], kind="stable")[:batch]
            work = np.union1d(work, viol[order])
    if progress is not None:
        progress.end()
    if not converged:
        from graphclust import ConvergenceWarning

        resid = float(omega.max() / r - 1.0)
        warnings.warn(f"rounding 'ellipsoid': MVEE (Frank-Wolfe) stopped after {total} "
                      f"iterations before reaching tol={tol} (residual: max ω/r - 1 = "
                      f"{resid:.2e})", ConvergenceWarning, stacklevel=2)
    L = G @ (np.linalg.inv(M) / r) @ G.T
    om = omega / r
    active = np.flatnonzero(om >= 1.0 - active_tol)
    return MVEEResult(L, u_full, om, active, total, converged, "fw")


def mvee_cvxpy(P: np.ndarray, *, active_tol: float = 1e-5, solver: str | None = None,
               **_ignored) -> MVEEResult:
    """Origin-centred MVEE by solving R(S) with cvxpy's ``log_det`` (reference backend)."""
    import cvxpy as cp

    P = np.asarray(P, dtype=np.float64)
    n, r = P.shape
    # Whiten for conditioning: p -> Gᵀp with G = chol(PᵀP/n)^{-T}. Active points are
    # invariant under nonsingular linear maps (Lemma 1); L = G Lw Gᵀ maps back.
    C = np.linalg.cholesky(P.T @ P / n + 1e-300 * np.eye(r))
    G = solve_triangular(C, np.eye(r), lower=True).T
    Ps = P @ G
    scale = float(np.sqrt(np.max(np.einsum("ij,ij->i", Ps, Ps)))) or 1.0
    Ps = Ps / scale
    L = cp.Variable((r, r), PSD=True)
    cons = [cp.sum(cp.multiply(Ps @ L, Ps), axis=1) <= 1]
    prob = cp.Problem(cp.Minimize(-cp.log_det(L)), cons)
    solvers = [solver] if solver else [s for s in ("CLARABEL", "SCS") if s in cp.installed_solvers()]
    for name in solvers:
        kwargs = {"eps": 1e-9, "max_iters": 200_000} if name == "SCS" else {}
        try:
            prob.solve(solver=name, **kwargs)
        except cp.error.SolverError:
            continue
        if L.value is not None:
            break
    if L.value is None:
        raise RuntimeError(f"cvxpy failed to solve the MVEE problem (status {prob.status})")
    Lw = 0.5 * (L.value + L.value.T) / scale**2
    Lv = G @ Lw @ G.T
    om = np.einsum("ij,jk,ik->i", P, Lv, P)
    dual = cons[0].dual_value
    u = np.maximum(np.asarray(dual, dtype=np.float64).ravel(), 0.0) if dual is not None else np.zeros(n)
    if u.sum() > 0:
        u = u / u.sum()
    active = np.flatnonzero(om >= 1.0 - active_tol)
    return MVEEResult(Lv, u, om, active, 0, prob.status == "optimal", "cvxpy")


def mvee(P: np.ndarray, backend: str = "fw", **kwargs) -> MVEEResult:
    """Dispatch to :func:`mvee_fw` or :func:`mvee_cvxpy`."""
    if backend == "fw":
        return mvee_fw(P, **kwargs)
    if backend == "cvxpy":
        kwargs.pop("tol", None)
        kwargs.pop("max_iter", None)
        kwargs.pop("progress", None)
        return mvee_cvxpy(P, **kwargs)
    raise ValueError(f"unknown MVEE backend {backend!r}; use 'fw' or 'cvxpy'")
