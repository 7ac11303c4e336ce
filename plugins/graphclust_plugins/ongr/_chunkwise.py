"""ONGR on row chunks (Algorithm 1 over :class:`graphclust.chunks.RowChunks`).

Private maths of :meth:`OngrSolver.solve_chunked`. With ``W = B Bᵀ``, ``B = Z Σ^{-1/2}``
and the rows ``F_b``, ``G_b`` of the iterates **kept per block** (a
:class:`~graphclust.chunks.BlockState`), one iteration is two passes over the blocks:

1. ``P = Σ B_bᵀ F_b`` is at hand (from pass 2); per block ``M_b = (B_b P + λ F_b)/(1+λ)``,
   ``G_b = (M_b)₊`` (Eq. 9) and the argmax labels are kept; summed: ``Q = Σ B_bᵀ G_b``
   (``m x k``), ``GᵀG``, the changed labels, and the Eq. 7 pieces ``⟨G, WF⟩``, ``FᵀF``,
   ``‖F − G‖²``;
2. ``F_b = Y_b M`` with ``Y_b = B_b Q + λ G_b`` and ``M = V w^{-1/2} Vᵀ`` from
   ``YᵀY = C = V w Vᵀ`` (Eq. 11, the Gram route of the in-memory ``_polar``), where
   ``C = Qᵀ(BᵀB)Q + 2λ QᵀQ + λ² GᵀG`` needs no pass (:func:`y_gram`); summed: the next
   ``P`` and ``⟨F, WG⟩``, ``FᵀF``, ``‖F − G‖²``.

Only ``m x k`` and ``k x k`` values reach the caller. When ``Y`` is ill-conditioned
(the in-memory solver's QR fallback) the ``k x k`` factor ``R`` of ``Y = QR`` is a
TSQR sum (:class:`RFactor`: QR of stacked ``R`` factors, added in the protocol's fixed
tree) and ``R = U_R S Vᵀ`` gives the polar factor ``Y V S⁻¹ Vᵀ``; directions with
``S ≈ 0`` (rank-deficient ``Y``: a column of ``G`` vanished) are completed with
random orthonormal directions orthogonal to ``range(Y)``
(:func:`~graphclust_plugins.ongr._start.complete_orthonormal`). Any completion maximises
``Tr(FᵀY)``; the in-memory QR picks another one, so only then may the two differ.
"""

from __future__ import annotations

import graphclust
import numpy as np
import scipy.sparse as sp
from graphclust.chunks import anchor_degrees
from graphclust.numerics import (fixed_threads, leading_eigenvectors, safe_inverse,
                                 scaled_anchor_rows)

from graphclust_plugins.ongr._loop import finish_iterations, iteration_done, objective_from_pieces
from graphclust_plugins.ongr._start import canonical_eigenbasis, complete_orthonormal, gram_polar

__all__ = ["Extreme", "Minimum", "RFactor", "flip_signs", "leading_rows", "polar_step",
           "setup_sums", "solve_chunked"]


# -- reductions that add like chunk sums ---------------------------------------------

class Minimum:
    """A number whose ``+`` is ``min`` (a minimum over blocks through ``chunks.sum``)."""

    def __init__(self, value: float):
        self.value = float(value)

    def __add__(self, other: Minimum) -> Minimum:
        return Minimum(min(self.value, other.value))


class Extreme:
    """Per column, the entry of largest magnitude and its global row; ``+`` keeps the
    larger (ties: the earlier row), as ``argmax(|F|, axis=0)`` over all rows does."""

    def __init__(self, magnitude, value, row):
        self.magnitude, self.value, self.row = (np.asarray(magnitude), np.asarray(value),
                                                np.asarray(row))

    def __add__(self, other: Extreme) -> Extreme:
        take = (other.magnitude > self.magnitude) | (
            (other.magnitude == self.magnitude) & (other.row < self.row))
        return Extreme(np.where(take, other.magnitude, self.magnitude),
                       np.where(take, other.value, self.value),
                       np.where(take, other.row, self.row))


class RFactor:
    """The ``R`` factor of a block's rows (``QR``); ``+`` is the ``R`` of the two stacked
    factors, so a sum over blocks is the ``R`` of all rows up to the signs of its rows
    (TSQR)."""

    def __init__(self, R: np.ndarray):
        self.R = R

    @classmethod
    def of(cls, Y: np.ndarray) -> RFactor:
        with fixed_threads():  # a tall thin QR: one thread (numerics.threads)
            return cls(np.linalg.qr(Y, mode="r"))

    def __add__(self, other: RFactor) -> RFactor:
        return RFactor.of(np.vstack([self.R, other.R]))


# -- setup: degrees, the m x m Gram, the trivial direction ------------------------------

def _row_degrees(Z, lam):
    """Row sums of ``W`` for the block: ``Z Λ⁻¹ λ`` (as ``AnchorGraph.degrees``)."""
    return sp.csr_array(Z) @ (safe_inverse(lam) * lam)


def _gram(block, lam):
    B = scaled_anchor_rows(block.Z, lam)
    sd = np.sqrt(np.maximum(_row_degrees(block.Z, lam), 0.0))
    return {"gram": sp.csr_array(B.T @ B), "sd2": float(np.sum(sd * sd))}


def setup_sums(chunks) -> tuple[np.ndarray, np.ndarray, float]:
    """``(λ = Σ Z_bᵀ1, the dense m x m Gram BᵀB = Σ B_bᵀB_b, ‖√d‖²)``: two passes."""
    lam = chunks.sum(anchor_degrees)
    sums = chunks.sum(_gram, lam)
    return lam, np.asarray(sums["gram"].toarray()), sums["sd2"]


# -- the leading eigenvectors of W (Section 3.2, Initialization) ------------------------

def _lead(block, lam, coef, sd_norm):
    U = np.asarray(scaled_anchor_rows(block.Z, lam) @ coef)
    if sd_norm is None:
        return U
    t = np.sqrt(np.maximum(_row_degrees(block.Z, lam), 0.0)) / sd_norm
    return {"U": U, "t": t}


def _with_t(block, lam, sd_norm):
    t = np.sqrt(np.maximum(_row_degrees(block.Z, lam), 0.0)) / sd_norm
    return {"U": block.state, "t": t}


def leading_rows(chunks, lam, gram, q: int, rng, sd2: float | None = None):
    """The ``q`` leading eigenvectors of ``W`` per block, as ``OngrOperator.leading``:
    ``U_b = B_b V Λ^{-1/2}`` from the eigenpairs of ``BᵀB`` (same eigensolver rule and
    ``rng``), directions with a (numerically) zero eigenvalue completed with random
    orthonormal ones (seeded from ``rng`` as in memory). With ``sd2 = ‖√d‖²`` the state
    is ``{"U": U_b, "t": t_b}`` with the unit trivial direction ``t = √d/‖√d‖`` (``t``
    omitted when ``d = 0``). Returns ``(state, eigenvalues padded to q, has_t)``."""
    vals, vecs = leading_eigenvectors(gram, q, rng=rng)
    vecs = canonical_eigenbasis(vals, vecs)
    p = vecs.shape[1]
    ok = vals > max(vals[0], 0.0) * 1e-10
    coef = np.zeros((gram.shape[0], q))
    coef[:, :p] = vecs
    coef[:, np.flatnonzero(ok)] *= safe_inverse(vals[ok], 0.5)[None, :]
    keep = np.zeros(q, dtype=bool)
    keep[:p] = ok
    has_t = sd2 is not None and sd2 > 0
    sd_norm = float(np.sqrt(sd2)) if has_t else None
    if keep.all():
        state = chunks.map(_lead, lam, coef, sd_norm)
    else:
        state = chunks.map(_lead, lam, coef, None)
        state = complete_orthonormal(chunks, state, keep, int(rng.integers(2**31)))
        if has_t:
            old, state = state, chunks.map(_with_t, lam, sd_norm, state=state)
            old.release()
    eig = np.zeros(q)
    eig[: len(vals)] = vals
    return state, eig, has_t


def _sign_stats(block):
    U = block.state
    pos = np.sum(np.maximum(U, 0.0) ** 2, axis=0)
    neg = np.sum(np.minimum(U, 0.0) ** 2, axis=0)
    i = np.abs(U).argmax(axis=0)
    cols = np.arange(U.shape[1])
    return pos, neg, Extreme(np.abs(U[i, cols]), U[i, cols], block.start + i)


def _scale_columns(block, signs):
    return block.state * signs[None, :]


def flip_signs(chunks, U):
    """The in-memory ``_flip_signs`` over blocks: each column's positive part wins
    (ties: the sign of its entry of largest magnitude, first in row order)."""
    pos, neg, big = chunks.sum(_sign_stats, state=U)
    flip = neg > pos
    tie = np.isclose(neg, pos)
    flip = np.where(tie, big.value < 0, flip)
    F = chunks.map(_scale_columns, np.where(flip, -1.0, 1.0), state=U)
    U.release()
    return F


# -- one iteration (module docstring) ----------------------------------------------------

def _bt(block, lam):
    return np.asarray(scaled_anchor_rows(block.Z, lam).T @ block.state)


def first_P(chunks, lam, F):
    """``P = Σ B_bᵀ F_b`` of the start, and the iteration state ``{"F", "G", "labels"}``."""
    return chunks.sum(_bt, lam, state=F)


def _as_iterate(block):
    return {"F": block.state, "G": None, "labels": None}


def iterate_state(chunks, F):
    state = chunks.map(_as_iterate, state=F)
    F.release()
    return state


def _g_step(block, lam, P, reg, positive, track):
    s = block.state
    B = scaled_anchor_rows(block.Z, lam)
    F = s["F"]
    WF = np.asarray(B @ P)
    M = (WF + reg * F) / (1.0 + reg)                      # Eq. 8 target
    if positive == "max":
        G, labels = np.maximum(M, 0.0), M.argmax(axis=1)
    else:
        G, labels = np.abs(M), np.abs(M).argmax(axis=1)   # Eq. 9
    changed = 0 if s["labels"] is None else int(np.sum(labels != s["labels"]))
    pos = G[G > 0]
    out = {"Q": np.asarray(B.T @ G), "GtG": G.T @ G, "changed": changed,
           "zero": int(np.sum(~(G > 0).any(axis=1))),
           "min": Minimum(pos.min() if pos.size else np.inf)}
    if track:
        out.update(cross=float(np.vdot(G, WF)), FtF=F.T @ F,
                   gap=float(np.sum((F - G) ** 2)))
    return {"F": F, "G": G, "labels": labels}, out


def _y(block, lam, Q, reg):
    B = scaled_anchor_rows(block.Z, lam)
    WG = np.asarray(B @ Q)
    return B, WG, WG + reg * block.state["G"]


def y_gram(gram, Q, GtG, reg):
    """``C = YᵀY`` of ``Y = B Q + λ G`` without a pass: with ``BᵀG = Q``,
    ``C = Qᵀ(BᵀB)Q + 2λ QᵀQ + λ² GᵀG`` (``m``- and ``k``-sized; no cancellation: every
    term is nonnegative since ``B``, ``G`` and ``Q`` are)."""
    QtQ = Q.T @ Q
    C = Q.T @ (gram @ Q) + reg * (QtQ + QtQ.T) + reg * reg * GtG
    return (C + C.T) / 2.0


def _y_r(block, lam, Q, reg):
    return RFactor.of(_y(block, lam, Q, reg)[2])


def _f_step(block, lam, Q, reg, M, track, from_basis):
    s = block.state
    B, WG, Y = _y(block, lam, Q, reg)
    F = (s["U"] if from_basis else Y) @ M                  # Eq. 11
    G = s["G"]
    out = {"P": np.asarray(B.T @ F), "gap": float(np.sum((F - G) ** 2))}
    if track:
        out.update(cross=float(np.vdot(F, WG)), FtF=F.T @ F)
    return {"F": F, "G": G, "labels": s["labels"]}, out


def _range_basis(block, lam, Q, reg, coef, k):
    """``{"U": [Y_b V_r S_r⁻¹ | 0], ...}``: the rows of an orthonormal basis of
    ``range(Y)`` (rank ``r``), room for ``k − r`` completed directions."""
    Y = _y(block, lam, Q, reg)[2]
    U = np.zeros((Y.shape[0], k))
    U[:, : coef.shape[1]] = Y @ coef
    return {**block.state, "U": U}


def polar_step(chunks, state, lam, Q, reg, C, track, seed):
    """Pass 3 (the F-step, Eq. 11) from the ``k x k`` Gram ``C``; the ill-conditioned
    case through the TSQR ``R`` (module docstring). Returns ``(state, sums)``."""
    w = np.linalg.eigvalsh(C)
    k = C.shape[0]
    if w[0] > 1e-10 * w[-1] and w[-1] > 0:
        return chunks.map_sum(_f_step, lam, Q, reg, gram_polar(C), track, False, state=state)
    R = chunks.sum(_y_r, lam, Q, reg, state=state).R
    _, S, Vt = np.linalg.svd(R)
    Vt = np.vstack([Vt, np.zeros((k - Vt.shape[0], k))]) if Vt.shape[0] < k else Vt
    S = np.concatenate([S, np.zeros(k - S.size)])
    r = int(np.sum(S > (S[0] * max(chunks.n, k) * np.finfo(float).eps if S[0] > 0 else 0)))
    if r == k:
        M = (Vt.T / S[None, :]) @ Vt
        return chunks.map_sum(_f_step, lam, Q, reg, M, track, False, state=state)
    basis = chunks.map(_range_basis, lam, Q, reg, Vt[:r].T / S[None, :r], k, state=state)
    keep = np.arange(k) < r
    basis = complete_orthonormal(chunks, basis, keep, seed)
    out = chunks.map_sum(_f_step, lam, Q, reg, Vt, track, True, state=basis)
    basis.release()
    return out


# -- the result --------------------------------------------------------------------------

def _finish(block, fill):
    """The block's kept rows (``embedding`` = ``F``, ``soft`` = ``G`` with the zero-row
    rule of :meth:`OngrSolver.solve`); summed: ``Zᵀ soft`` and ``Zᵀ F``."""
    s = block.state
    F, G = s["F"], s["G"]
    soft = G
    zero = ~(G > 0).any(axis=1)
    if zero.any():
        soft = G.copy()
        rows = np.flatnonzero(zero)
        soft[rows, s["labels"][rows]] = fill
    Z = sp.csr_array(block.Z)
    kept = graphclust.Solution(embedding=F, soft=soft)
    return kept, {"ZtS": np.asarray(Z.T @ soft), "ZtF": np.asarray(Z.T @ F)}



def _start(solver, chunks, k, ctx, lam, gram, sd2):
    """The initial ``F`` per block, drawing from ``ctx`` exactly as :meth:`solve` does."""
    from graphclust.chunks import ROUNDING_SAMPLE_MIN, ROUNDING_SAMPLE_PER_CLUSTER, sample_size

    from graphclust_plugins.ongr._start import kmeans_start, random_start

    rng = ctx.rng("ongr-init")
    n = chunks.n
    if solver.init == "svd":
        U, eig, _ = leading_rows(chunks, lam, gram, k, rng)
        return flip_signs(chunks, U), eig
    if solver.init == "spectral-kmeans":
        q = min(k + 1, n)
        U, eig, has_t = leading_rows(chunks, lam, gram, q, rng, sd2)
        size = sample_size(n, k, per_unit=ROUNDING_SAMPLE_PER_CLUSTER,
                           minimum=ROUNDING_SAMPLE_MIN)
        rows = None if size >= n else np.sort(
            ctx.rng("ongr-init.sample").choice(n, size=size, replace=False))
        F, labels = kmeans_start(chunks, U, k, q, has_t, ctx.seed_for("ongr-init.kmeans"),
                                 int(solver.init_restarts), rng, rows)
        U.release()
        labels.release()
        return F, eig
    return random_start(chunks, k, int(rng.integers(2**31))), None


def solve_chunked(solver, chunks, n_clusters: int, ctx) -> graphclust.Solution:
    """Algorithm 1 on row chunks (module docstring); what :meth:`OngrSolver.solve` does
    on an anchor graph, with ``F`` and ``G`` kept per block."""
    from graphclust.chunks import KEPT_ROWS

    k, n = int(n_clusters), chunks.n  # 1 <= k <= n: the Solver contract
    reg, track = float(solver.lam), bool(solver.track_objective)
    lam, gram, sd2 = setup_sums(chunks)
    norm2 = float(np.sum(gram * gram))
    F, eig = _start(solver, chunks, k, ctx, lam, gram, sd2)
    P = first_P(chunks, lam, F)
    state = iterate_state(chunks, F)
    objective, obj_g, gap, change = [], [], [], []
    converged, progress, n_iter = False, ctx.progress, 0
    progress.start(solver.max_iter)
    for it in range(1, solver.max_iter + 1):
        n_iter = it
        old, (state, a) = state, chunks.map_sum(_g_step, lam, P, reg, solver.positive_part,
                                                track, state=state)
        old.release()
        if track:
            obj_g.append(objective_from_pieces(norm2, a["cross"], a["FtF"], a["GtG"], reg,
                                               a["gap"]))
        C = y_gram(gram, a["Q"], a["GtG"], reg)
        old, (state, c) = state, polar_step(chunks, state, lam, a["Q"], reg, C, track,
                                            ctx.seed_for(f"ongr.polar.{it}"))
        old.release()
        P = c["P"]
        if track:
            objective.append(objective_from_pieces(norm2, c["cross"], c["FtF"], a["GtG"],
                                                   reg, c["gap"]))
        gap.append(c["gap"])
        frac = 1.0 if it == 1 else a["changed"] / n
        change.append(frac)
        if iteration_done(solver, progress, it, frac, objective):
            converged = True
            break
    finish_iterations(solver, progress, converged, change, stacklevel=5)
    fill = a["min"].value if a["zero"] else 1.0
    fill = 1.0 if not np.isfinite(fill) else fill
    kept, sums = chunks.map_sum(_finish, fill, state=state)
    state.release()
    inv = safe_inverse(lam)
    return graphclust.Solution(
        embedding=np.zeros((0, k)), soft=np.zeros((0, k)), objective=np.asarray(objective),
        n_iter=n_iter, converged=converged, anchor_soft=inv[:, None] * sums["ZtS"],
        anchor_embedding=inv[:, None] * sums["ZtF"],
        history={"objective_after_G": np.asarray(obj_g), "fg_gap": np.asarray(gap),
                 "label_change": np.asarray(change)},
        info={"n_zero_rows": int(a["zero"]), "lam": reg, "positive_part": solver.positive_part,
              "init_eigenvalues": eig, KEPT_ROWS: kept})
