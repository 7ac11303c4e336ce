"""The numerical core of SLC/DLC (Shao et al., Eq. 3–7, Algorithms 1–2).

Notation (paper → here). The paper stores samples as columns: ``X`` (d×n), dictionary
``D`` (d×m), codes ``A`` (m×n), transform ``W`` (d×d). Here samples are rows:
``X`` (n×d), landmarks ``U = Dᵀ`` (m×d), codes ``C = Aᵀ`` (n×m).

Why no n×m matrix is ever needed
--------------------------------
The ridge update (Eq. 7) is linear in the data:
``A = (D̃ᵀD̃ + λI)⁻¹ D̃ᵀ X``, i.e. ``C = X R`` with ``R = D̃ (D̃ᵀD̃ + λI)⁻¹`` (d×m).
So after the first A-update the codes are ``X R`` and every quantity of the next
iteration is a small product with the Gram matrix ``S = XᵀX`` (d×d):

* ``X̃ = DA`` has rows ``C U = X R U``; with ``V = R U`` (d×d):
  ``P = X X̃ᵀ = S V`` and ``Q = X̃ X̃ᵀ = Vᵀ S V`` (Eq. 5);
* ``‖X − W D A‖² = tr S − 2 tr(P Wᵀ) + tr(W Q Wᵀ)`` and ``‖A‖² = tr(Rᵀ S R)``.

Only the first W-update uses the sparse Gaussian codes ``Z`` (Algorithm 1 step 2):
``P = (XᵀZ) U``, ``Q = Uᵀ (ZᵀZ) U``. Hence one layer costs one pass over the data
(``S``, ``XᵀZ``) plus ``O(T·(d³ + d²m + dm² + min(d, m)³))`` in memory-small algebra,
whatever ``n`` is — an exact reformulation of Algorithm 1, not an approximation.

The codes of a layer, ``C = X R`` (n×m), have rank ``r ≤ min(d, m)``. With ``V_r`` an
orthonormal basis (m×r) of their row space, ``Y = X R V_r`` (n×r) is an *isometric*
copy of them: all distances and inner products between rows are the same. Everything
the next layer does — k-means / BKHK landmarks, nearest landmarks, Gaussian weights,
the W and A updates — depends on the rows only through distances and linear maps, so
layer ``l + 1`` runs on ``Y`` exactly as on ``C`` (the minimum-norm W of Eq. 5 on the
embedded data is ``V W' Vᵀ`` with ``W'`` the solution on ``Y``, and the ridge codes are
identical). ``Y`` is stored in float32, n×r, in row blocks.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from graphclust.numerics import common_float_dtype

__all__ = [
    "gram",
    "sparse_cross",
    "w_update",
    "ridge_map",
    "slc_layer",
    "compact_basis",
    "project",
]

BLOCK = 16384


def gram(X: np.ndarray, block: int = BLOCK) -> np.ndarray:
    """``S = XᵀX`` (d×d, float64) accumulated over row blocks."""
    n, d = X.shape
    S = np.zeros((d, d), dtype=np.float64)
    for start in range(0, n, block):
        Xb = np.asarray(X[start:start + block], dtype=np.float64)
        S += Xb.T @ Xb
    return S


def sparse_cross(X: np.ndarray, Z: sp.csr_array, block: int = BLOCK) -> tuple[np.ndarray, np.ndarray, float]:
    """``(XᵀZ (d×m), ZᵀZ (m×m), ‖Z‖²_F)`` in float64, over row blocks of ``X``."""
    n, d = X.shape
    m = Z.shape[1]
    XtZ = np.zeros((d, m), dtype=np.float64)
    for start in range(0, n, block):
        stop = min(n, start + block)
        Zb = Z[start:stop]
        XtZ += (Zb.T @ np.asarray(X[start:stop], dtype=np.float64)).T
    ZtZ = np.asarray((Z.T @ Z).toarray(), dtype=np.float64)
    return XtZ, ZtZ, float(np.dot(Z.data, Z.data))


def w_update(P: np.ndarray, Q: np.ndarray, reg: float = 1e-10) -> np.ndarray:
    """``W = P (Q + εI)⁻¹`` (Eq. 5), the minimiser of ``‖X − W X̃‖²_F`` (Eq. 4).

    ``Q = X̃X̃ᵀ`` is singular whenever the reconstructed data do not span all ``d``
    directions (always-zero pixels; a later layer whose input has rank below its
    width). The paper writes ``Q⁻¹``; we add the tiny ridge ``ε = reg · tr(Q)/d`` and
    solve by Cholesky. As ``reg → 0`` this is the Moore–Penrose solution ``P Q⁺`` (the
    minimum-norm minimiser of Eq. 4); at ``reg = 1e-10`` they agree to about six
    digits (roundoff in the null directions of ``Q`` is amplified by 1/ε), which does
    not change ``‖X − W X̃‖²`` measurably. All-zero ``Q`` gives ``W = 0``.
    """
    d = Q.shape[0]
    scale = float(np.trace(Q)) / max(d, 1)
    if not scale > 0.0:
        return np.zeros_like(P)
    Qr = 0.5 * (Q + Q.T)
    Qr[np.diag_indices(d)] += reg * scale
    try:
        factor = sla.cho_factor(Qr, lower=False, check_finite=False)
        return sla.cho_solve(factor, P.T, check_finite=False).T
    except np.linalg.LinAlgError:  # pragma: no cover - only if roundoff made Qr indefinite
        evals, evecs = np.linalg.eigh(Qr)
        keep = evals > reg * scale
        E = evecs[:, keep]
        return ((P @ E) / evals[keep]) @ E.T


def ridge_map(Ut: np.ndarray, lam: float) -> np.ndarray:
    """``R`` (d×m) with codes ``C = X R``, i.e. the paper's Eq. 7
    ``A = (D̃ᵀD̃ + λI)⁻¹ D̃ᵀ X`` for ``D̃ = Ũᵀ`` (``Ut`` = Ũ = U Wᵀ, m×d).

    Uses the push-through identity ``D̃ (D̃ᵀD̃ + λI_m)⁻¹ = (D̃D̃ᵀ + λI_d)⁻¹ D̃`` to solve
    the smaller of the d×d and m×m systems (both positive definite for λ > 0). Rule: a
    system that is singular in floating point (λ negligible against ``‖Ũ‖²``, e.g. when a
    deep layer's codes have collapsed) is solved in the least-squares sense, minimum norm.
    """
    m, d = Ut.shape
    if d <= m:
        G = Ut.T @ Ut
        G[np.diag_indices(d)] += lam
        return _solve_psd(G, Ut.T)
    G = Ut @ Ut.T
    G[np.diag_indices(m)] += lam
    return _solve_psd(G, Ut).T


def _solve_psd(G: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``G⁻¹ B`` for a symmetric positive (semi)definite ``G``; minimum-norm least squares
    when ``G`` is singular in floating point."""
    try:
        return sla.solve(G, B, assume_a="pos")
    except np.linalg.LinAlgError:
        return sla.lstsq(G, B)[0]


def _recon_after_w(trS: float, P: np.ndarray, Q: np.ndarray, W: np.ndarray) -> float:
    return trS - 2.0 * float(np.sum(P * W)) + float(np.sum((W @ Q) * W))


def _recon_after_a(S: np.ndarray, trS: float, K: np.ndarray) -> float:
    return trS - 2.0 * float(np.sum(S * K.T)) + float(np.sum((S @ K) * K))


def slc_layer(S: np.ndarray, XtZ: np.ndarray, ZtZ: np.ndarray, z_sq: float, U: np.ndarray,
              lam: float, n_iter: int, tol: float, q_reg: float = 1e-10,
              on_iter=None) -> dict:
    """One SLC layer (Algorithm 1 steps 3–7) on the sufficient statistics.

    Parameters
    ----------
    S : (d, d) ``XᵀX``.
    XtZ, ZtZ, z_sq : statistics of the initial sparse codes (see :func:`sparse_cross`).
    U : (m, d) landmarks (the paper's ``Dᵀ``).
    lam : ridge weight λ (Eq. 3, 6, 7).
    n_iter : T.
    tol : ε relative to ``‖X‖²_F``: stop when ``‖X − WDA‖² < tol · ‖X‖²_F`` (step 6).
    on_iter : callable ``(t, objective)``, optional.

    Returns
    -------
    dict with ``R`` (d×m, codes ``C = X R``), ``W`` (d×d), ``objective`` (Eq. 3 after
    each iteration), ``objective_w`` (Eq. 3 after each W-update, before the A-update),
    ``reconstruction`` (``‖X − WDA‖²`` after each iteration), ``n_iter``, ``stopped``.
    """
    U = np.asarray(U, dtype=np.float64)
    trS = float(np.trace(S))
    P = XtZ @ U
    Q = U.T @ ZtZ @ U
    penalty = lam * z_sq
    obj, obj_w, recon = [], [], []
    R = W = None
    stopped = False
    t = 0
    for t in range(1, n_iter + 1):
        W = w_update(P, Q, q_reg)                        # step 4, Eq. 5
        obj_w.append(max(_recon_after_w(trS, P, Q, W), 0.0) + penalty)
        Ut = U @ W.T                                     # D̃ = W D
        R = ridge_map(Ut, lam)                           # step 5, Eq. 7
        K = R @ Ut                                       # X − WDA = X (I − K)
        rec = max(_recon_after_a(S, trS, K), 0.0)
        SR = S @ R
        penalty = lam * float(np.sum(R * SR))            # λ‖A‖² = λ tr(Rᵀ S R)
        recon.append(rec)
        obj.append(rec + penalty)
        if on_iter is not None:
            on_iter(t, obj[-1])
        if rec < tol * trS:                              # step 6
            stopped = True
            break
        V = R @ U                                        # X̃ rows = X V
        P = S @ V
        Q = V.T @ P
    return {"R": R, "W": W, "objective": np.array(obj), "objective_w": np.array(obj_w),
            "reconstruction": np.array(recon), "n_iter": t, "stopped": stopped}


def compact_basis(S: np.ndarray, R: np.ndarray, rtol: float = 1e-7) -> np.ndarray:
    """``V_r`` (m×r, orthonormal columns) whose span holds every row of the codes ``C = X R``.

    The rows of ``C`` lie in the column space of ``Rᵀ``; a pivoted (rank-revealing) QR
    of ``Rᵀ`` gives its orthonormal basis, columns with ``|r_jj| < rtol · |r_11|`` being
    dropped. ``Y = X R V_r`` then has the same pairwise distances and inner products as
    ``C``. At least one column is kept, so ``r ≥ 1`` even for all-zero codes. (``S`` is
    not needed for the basis; it is accepted so callers could restrict to the data's
    range later.)
    """
    Qm, Rm, _ = sla.qr(R.T, mode="economic", pivoting=True, check_finite=False)
    diag = np.abs(np.diag(Rm))
    keep = int(np.sum(diag > rtol * diag[0])) if diag.size and diag[0] > 0 else 0
    return Qm[:, :max(1, keep)]


def project(X: np.ndarray, M: np.ndarray, dtype=np.float32, block: int = BLOCK) -> np.ndarray:
    """``X M`` (n×p) in row blocks, stored as ``dtype``."""
    n = X.shape[0]
    out = np.empty((n, M.shape[1]), dtype=dtype)
    work = common_float_dtype(X)
    Mw = M.astype(work)
    for start in range(0, n, block):
        out[start:start + block] = np.asarray(X[start:start + block], dtype=work) @ Mw
    return out
