"""Numerics of DCD (Yang & Oja, ICML 2012): the sparse approximation and the relaxed MM update.

Everything here works on the nonzero pattern of a sparse symmetric ``A`` only:

* ``Â_ij = Σ_k W_ik W_jk / s_k`` (Eq. 6, ``s_k = Σ_v W_vk``) is evaluated only where
  ``A_ij ≠ 0`` — ``O(nnz(A)·r)`` work, done in blocks of rows so the ``nnz x r``
  temporaries stay bounded;
* the KL divergence (Eq. 4) needs ``Σ_ij Â_ij`` over *all* pairs, which is
  ``Σ_i Σ_k W_ik`` (the row sums of ``Â`` are the row sums of ``W``), so it is exact
  without touching the zeros of ``A``;
* one relaxed MM iteration (Algorithm 1 / Eq. 13) costs ``O(nnz(A)·r + n·r)``.

No ``n x n`` dense matrix is ever formed.

Numerically stable form of Algorithm 1
--------------------------------------
With ``N = W ∘ ∇⁻ = 2 W ∘ (ZW) / s + α`` and ``P = W ∘ ∇⁺ = W ∘ diag(WᵀZW) / s² + 1``
(both finite even where ``W_ik → 0``), ``a_i = Σ_l W_il²/P_il``,
``b_i = Σ_l W_il N_il/P_il`` and the update ``W ∘ (∇⁻a + 1)/(∇⁺a + b)`` becomes
``W ∘ (N a + W) / (P a + b W)``. An entry that is exactly zero stays zero; a row of
``W`` that is all zero (only possible when given as such) is left unchanged.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from graphclust.numerics import normalize_rows

__all__ = [
    "approximation_on_pattern",
    "kl_objective",
    "dcd_objective",
    "mm_step",
    "lagrangian",
    "run_dcd",
    "indicator_init",
    "prepare_pattern",
]

#: Floor for ``Â_ij`` on the pattern of ``A`` (``Â_ij = 0`` where ``A_ij > 0`` would make
#: the KL infinite; it can only happen when rows of W have disjoint supports).
_TINY = 1e-300

#: Target number of pattern entries per block when gathering ``W[i]·W[j]``.
_BLOCK_NNZ = 1 << 18


def _csr(A) -> sp.csr_array:
    A = sp.csr_array(A)
    if A.dtype != np.float64:
        A = A.astype(np.float64)
    A.sum_duplicates()
    return A


class _Pattern:
    """The nonzero pattern of ``A`` prepared once for all iterations.

    ``A`` is symmetric, so ``Â`` (also symmetric) is evaluated only on the entries with
    ``i <= j`` and copied to their transposes: half the gather work. If the pattern is
    not symmetric (a hand-made graph), every entry is evaluated.
    """

    def __init__(self, A):
        A = _csr(A)
        A.sort_indices()
        self.A = A
        n = A.shape[0]
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(A.indptr))
        cols = A.indices.astype(np.int64)
        keys = rows * n + cols                      # sorted (CSR order, sorted indices)
        tkeys = cols * n + rows
        pos = np.searchsorted(keys, tkeys)
        pos = np.minimum(pos, max(keys.size - 1, 0))
        symmetric = keys.size == 0 or bool(np.all(keys[pos] == tkeys))
        if symmetric:
            self.eval_idx = np.flatnonzero(rows <= cols)
            self.copy_idx = np.flatnonzero(rows > cols)
            self.copy_from = pos[self.copy_idx]
        else:
            self.eval_idx = np.arange(keys.size)
            self.copy_idx = self.copy_from = np.empty(0, dtype=np.int64)
        self.rows = rows[self.eval_idx]
        self.cols = cols[self.eval_idx]

    def approximation(self, W: np.ndarray, inv_s: np.ndarray) -> np.ndarray:
        """``Σ_k W_ik W_jk inv_s_k`` on the pattern (CSR order)."""
        return self.approximations(W, [inv_s])[0]

    def approximations(self, W: np.ndarray, inv_list, row_scale: np.ndarray | None = None):
        """One gather of ``W[i], W[j]`` for several column weightings.

        Returns ``[Σ_k W_ik W_jk w_k for w in inv_list]``; with ``row_scale`` (``d``) the
        *last* one is multiplied by ``d_i d_j`` (``Â`` of the row-rescaled ``diag(d) W``
        when ``inv_list[-1]`` holds its inverse column sums).
        """
        outs = [np.empty(self.A.nnz, dtype=np.float64) for _ in inv_list]
        weights = [np.asarray(w, dtype=np.float64) for w in inv_list]
        m = self.eval_idx.size
        for lo in range(0, m, _BLOCK_NNZ):
            hi = min(m, lo + _BLOCK_NNZ)
            sel = self.eval_idx[lo:hi]
            r_idx, c_idx = self.rows[lo:hi], self.cols[lo:hi]
            prod = np.take(W, r_idx, axis=0)
            prod *= np.take(W, c_idx, axis=0)
            for t, out in enumerate(outs):
                vals = np.einsum("ij,j->i", prod, weights[t])
                if row_scale is not None and t == len(outs) - 1:
                    vals *= np.take(row_scale, r_idx) * np.take(row_scale, c_idx)
                out[sel] = vals
        if self.copy_idx.size:
            for out in outs:
                out[self.copy_idx] = out[self.copy_from]
        return outs


def prepare_pattern(A) -> _Pattern:
    """The pattern of ``A`` prepared once for many evaluations (returned as is when it
    already is one)."""
    return A if isinstance(A, _Pattern) else _Pattern(A)


def _column_sums(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``s = Σ_v W_vk`` and ``1/s`` (``0`` for an empty column: it contributes nothing)."""
    s = W.sum(axis=0)
    inv = np.zeros_like(s)
    pos = s > 0
    inv[pos] = 1.0 / s[pos]
    return s, inv


def approximation_on_pattern(A, W: np.ndarray, inv_s: np.ndarray | None = None) -> np.ndarray:
    """``Â_ij = Σ_k W_ik W_jk / s_k`` (Eq. 6) for the stored entries of ``A``, in CSR order.

    Parameters
    ----------
    A : sparse (n, n)
        Only its pattern (``indptr``, ``indices``) is used.
    W : ndarray of shape (n, r)
        Nonnegative cluster-assigning probabilities.
    inv_s : ndarray of shape (r,), optional
        ``1 / s_k`` (computed from ``W`` when omitted).

    Returns
    -------
    ndarray of shape (nnz,)
        Aligned with ``A.data`` (indices sorted). Cost ``O(nnz·r)``.
    """
    pat = prepare_pattern(A)
    W = np.asarray(W, dtype=np.float64)
    if inv_s is None:
        inv_s = _column_sums(W)[1]
    return pat.approximation(W, inv_s)


def _kl_from(a: np.ndarray, ahat: np.ndarray, total_w: float) -> float:
    """``Σ_ij A log(A/Â) − A + Â`` given ``A``, ``Â`` on the pattern and ``Σ_ij Â = Σ W``."""
    pos = a > 0
    ap = a[pos]
    return float(np.sum(ap * (np.log(ap) - np.log(np.maximum(ahat[pos], _TINY))))
                 - a.sum() + total_w)


def kl_objective(A, W: np.ndarray) -> float:
    """The DCD approximation error ``D_KL(A || Â)`` of Eq. (4), computed sparsely.

    ``Σ_ij Â_ij`` over all pairs equals ``Σ_ik W_ik`` (row sums of ``Â`` are the row sums
    of ``W``), so the value is exact even though ``Â`` is only evaluated where
    ``A_ij ≠ 0``. Cost ``O(nnz(A)·r)``.
    """
    pat = prepare_pattern(A)
    W = np.asarray(W, dtype=np.float64)
    return _kl_from(pat.A.data, approximation_on_pattern(pat, W), float(W.sum()))


def _log_prior(W: np.ndarray, alpha: float) -> float:
    if alpha == 1.0:
        return 0.0
    return float((alpha - 1.0) * np.log(np.maximum(W, _TINY)).sum())


def dcd_objective(A, W: np.ndarray, alpha: float = 1.0) -> float:
    """What the run with Dirichlet parameter ``α`` minimises: ``D_KL(A||Â) − (α−1) Σ log W``.

    This is Eq. (9) plus the ``W``-free constants of the KL (and the ``Σ Â`` term, which is
    constant on the simplex); for ``α = 1`` it is the KL of Eq. (4).
    """
    return kl_objective(A, W) - _log_prior(np.asarray(W, dtype=np.float64), alpha)


def _row_scale(W: np.ndarray) -> np.ndarray:
    """``d_i = 1 / Σ_k W_ik`` (``0`` for an all-zero row, which stays zero)."""
    sums = W.sum(axis=1)
    d = np.zeros_like(sums)
    pos = sums > 0
    d[pos] = 1.0 / sums[pos]
    return d


def _gradient_parts(pat: _Pattern, W: np.ndarray, alpha: float, feasible: bool = False):
    """``N = W∘∇⁻``, ``P = W∘∇⁺`` of Algorithm 1 and ``Â`` on the pattern.

    With ``feasible=True`` also ``Â`` of the row-normalised ``W`` (same gather), returned as
    a fourth value together with the row scaling ``d``.
    """
    A = pat.A
    s, inv_s = _column_sums(W)
    if feasible:
        d = _row_scale(W)
        inv_sn = _column_sums(W * d[:, None])[1]
        ahat, ahat_n = pat.approximations(W, [inv_s, inv_sn], row_scale=d)
    else:
        ahat = pat.approximation(W, inv_s)
    zdata = np.zeros_like(ahat)
    pos = A.data > 0
    zdata[pos] = A.data[pos] / np.maximum(ahat[pos], _TINY)
    Zm = sp.csr_array((zdata, A.indices, A.indptr), shape=A.shape)
    ZW = Zm @ W                                     # O(nnz·r)
    diag = np.einsum("ik,ik->k", W, ZW)             # (WᵀZW)_kk
    N = 2.0 * W * (ZW * inv_s) + alpha              # W ∘ ∇⁻
    P = W * (diag * inv_s**2) + 1.0                 # W ∘ ∇⁺
    if feasible:
        return N, P, ahat, (ahat_n, d)
    return N, P, ahat


def mm_step(A, W: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """One relaxed majorization–minimization update of Algorithm 1 (Eq. 13).

    ``W_ik ← W_ik (∇⁻_ik a_i + 1) / (∇⁺_ik a_i + b_i)`` with
    ``∇⁻ = 2 (ZW)/s + α/W``, ``∇⁺ = diag(WᵀZW)/s² + 1/W``, ``Z = A ⊘ Â`` on the pattern of
    ``A``, ``a_i = Σ_l W_il/∇⁺_il``, ``b_i = Σ_l W_il ∇⁻_il/∇⁺_il``. Cost ``O(nnz(A)·r)``.
    """
    W = np.asarray(W, dtype=np.float64)
    N, P, _ = _gradient_parts(prepare_pattern(A), W, alpha)
    return _apply_update(W, N, P)


def _apply_update(W, N, P):
    a = np.einsum("ik,ik->i", W, W / P)[:, None]
    b = np.einsum("ik,ik->i", W, N / P)[:, None]
    num = N * a + W
    den = P * a + b * W
    out = W.copy()
    ok = den > 0          # den == 0 only for an all-zero row of W: leave it unchanged
    out[ok] = W[ok] * num[ok] / den[ok]
    return out


def lagrangian(A, W: np.ndarray, lam: np.ndarray, alpha: float = 1.0) -> float:
    """``L(W, λ) = J(W) + Σ_i λ_i (Σ_k W_ik − 1)`` of Eq. (10), ``J`` of Eq. (9).

    ``J`` is taken without constants: ``−Σ A log Â − (α−1) Σ log W`` (on the pattern).
    """
    pat = prepare_pattern(A)
    A = pat.A
    W = np.asarray(W, dtype=np.float64)
    ahat = approximation_on_pattern(pat, W)
    pos = A.data > 0
    J = -float(np.sum(A.data[pos] * np.log(np.maximum(ahat[pos], _TINY)))) - _log_prior(W, alpha)
    return J + float(np.dot(lam, W.sum(axis=1) - 1.0))


def multipliers(A, W: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """The multipliers ``λ_i = (b_i − 1)/a_i`` of Eq. (12) chosen at ``W``."""
    W = np.asarray(W, dtype=np.float64)
    N, P, _ = _gradient_parts(prepare_pattern(A), W, alpha)
    a = np.einsum("ik,ik->i", W, W / P)
    b = np.einsum("ik,ik->i", W, N / P)
    return (b - 1.0) / a


def indicator_init(labels: np.ndarray, n_clusters: int, offset: float = 0.2) -> np.ndarray:
    """Binary indicator of ``labels`` plus ``offset``, rows normalised (Sections 2.4, 4.1)."""
    labels = np.asarray(labels, dtype=np.int64).ravel()
    n = labels.size
    W = np.full((n, n_clusters), float(offset))
    ok = (labels >= 0) & (labels < n_clusters)
    W[np.flatnonzero(ok), labels[ok]] += 1.0
    return normalize_rows(W, "l1")


def run_dcd(A, W0: np.ndarray, alpha: float = 1.0, *, max_iter: int = 1000,
            tol: float = 1e-6, progress=None, label: str = "") -> dict:
    """Iterate Algorithm 1 from ``W0`` until the objective settles or ``max_iter``.

    The iterates follow Algorithm 1 exactly (no renormalisation between updates); the
    objective is evaluated at the *row-normalised* iterate, a feasible point of Eq. (4)–(5)
    (one extra einsum on the same gather, so ~no extra cost). Stopping rule:
    ``|f_{t-1} − f_t| ≤ tol · |f_{t-1}|`` with ``f`` = :func:`dcd_objective` of the
    normalised iterate (the KL of Eq. 4 for ``α = 1``, plus the Dirichlet term otherwise).

    Returns
    -------
    dict with keys
        ``W`` (the last iterate, rows close to but not exactly on the simplex: the
        relaxed update only drives them there), ``objective`` (f after each iteration,
        ``f_0`` excluded), ``kl`` (KL of Eq. 4 after each iteration), ``kl0`` (KL at the
        start), ``n_iter``,
        ``converged``, ``max_row_deviation`` (largest ``|Σ_k W_ik − 1|`` seen).
    """
    pat = prepare_pattern(A)
    A = pat.A
    W = np.array(W0, dtype=np.float64, copy=True)
    alpha = float(alpha)
    total_a = A.data.sum()
    pos = A.data > 0
    ap = A.data[pos]
    a_log_a = float(np.sum(ap * np.log(ap)))

    def evaluate(W):
        """N, P for the next update; f and KL at the row-normalised W."""
        N, P, _, (ahat_n, d) = _gradient_parts(pat, W, alpha, feasible=True)
        kl = a_log_a - float(np.sum(ap * np.log(np.maximum(ahat_n[pos], _TINY)))) - total_a \
            + float(np.count_nonzero(d))
        f = kl - (_log_prior(W * d[:, None], alpha) if alpha != 1.0 else 0.0)
        return N, P, f, kl

    N, P, f_prev, kl0 = evaluate(W)
    objective, kls = [], []
    converged = False
    max_dev = float(np.abs(W.sum(axis=1) - 1.0).max(initial=0.0))
    it = 0
    if progress is not None:
        progress.start(max_iter, f"DCD {label}α={alpha:g}")
    for it in range(1, max_iter + 1):
        W = _apply_update(W, N, P)
        N, P, f, kl = evaluate(W)  # N, P also serve the next update
        objective.append(f)
        kls.append(kl)
        max_dev = max(max_dev, float(np.abs(W.sum(axis=1) - 1.0).max(initial=0.0)))
        if progress is not None:
            progress.step(it, max_iter, f"{label}α={alpha:g} KL {kl:.6g}")
        if not math.isfinite(f):
            break
        if abs(f_prev - f) <= tol * abs(f_prev):
            converged = True
            break
        f_prev = f
    if progress is not None:
        progress.end()
    return {
        "W": W,
        "objective": np.asarray(objective),
        "kl": np.asarray(kls),
        "kl0": kl0,
        "n_iter": it,
        "converged": converged,
        "max_row_deviation": max_dev,
    }
