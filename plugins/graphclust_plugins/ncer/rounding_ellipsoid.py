"""Ellipsoid rounding: MVEE active points, SPA, NNLS assignment (Mizutani, Algorithm 2)."""

from __future__ import annotations

import time

import numpy as np

import graphclust
from graphclust.numerics import normalize_rows
from graphclust_plugins.ncer._mvee import mvee, reduce_rank
from graphclust_plugins.ncer._nnls import nnls_many
from graphclust_plugins.ncer._spa import spa

__all__ = ["EllipsoidRounding", "ellipsoid_round", "assign_by_nnls"]


def assign_by_nnls(P: np.ndarray, reps: np.ndarray, backend: str = "fast") -> np.ndarray:
    """Step 4 of Algorithm 2: each row of ``P`` goes to the representative with the
    largest weight in its nonnegative least-squares fit on the rows of ``reps``.

    Rule for a fit that is all zeros (a point in the polar cone of the representatives,
    or a zero row): the representative with the largest cosine similarity.
    Ties go to the lowest index.
    """
    W = nnls_many(reps, P, backend=backend)
    labels = W.argmax(axis=1)
    zero = W.max(axis=1) <= 0
    if zero.any():
        labels[zero] = (normalize_rows(P[zero]) @ normalize_rows(reps).T).argmax(axis=1)
    return labels


def ellipsoid_round(P: np.ndarray, r: int, *, mvee_backend: str = "fw",
                    nnls_backend: str = "fast", tol: float = 1e-7, active_tol: float = 1e-5,
                    max_iter: int = 100_000, progress=None) -> dict:
    """Algorithm 2 steps 2–4 on the rows of ``P`` (any embedding; the theory of
    Section 3 wants the rows on a hyperplane not through the origin).

    Returns a dict with ``labels``, ``active`` (MVEE active points, step 2),
    ``representatives`` (the set J of step 3, in SPA order), ``mvee`` (the result
    object) and timings ``mvee_seconds``, ``spa_seconds``, ``nnls_seconds``. An
    embedding of rank 0 (every row zero: nothing tells the points apart) is one cluster,
    with the first row as its representative and no MVEE (``mvee`` is None).
    """
    P = np.asarray(P, dtype=np.float64)
    n = P.shape[0]
    Pr = reduce_rank(P)  # Assumption 1: work in the row space if rank(P) < dim
    if Pr.shape[1] == 0:  # rank 0: every row is zero, nothing tells the points apart
        first = np.arange(min(n, 1), dtype=np.int64)
        return {"labels": np.zeros(n, dtype=np.int64), "active": first,
                "representatives": first, "mvee": None, "mvee_seconds": 0.0,
                "spa_seconds": 0.0, "nnls_seconds": 0.0, "n": n}
    t0 = time.perf_counter()
    res = mvee(Pr, mvee_backend, tol=tol, active_tol=active_tol, max_iter=max_iter,
               progress=progress)
    t1 = time.perf_counter()
    active = res.active
    if active.size == r:  # step 3
        J = active.copy()
    else:
        J = spa(Pr, r, candidates=active)
        if J.size < r:  # fewer independent active points than r: complete by SPA on all
            extra = spa(Pr, r)
            taken = set(J.tolist())
            more = np.asarray([j for j in extra if j not in taken], dtype=np.int64)
            J = np.concatenate([J.astype(np.int64), more])[:r]
    t2 = time.perf_counter()
    labels = assign_by_nnls(P, P[J], nnls_backend)  # step 4
    t3 = time.perf_counter()
    return {"labels": labels, "active": active, "representatives": J, "mvee": res,
            "mvee_seconds": t1 - t0, "spa_seconds": t2 - t1, "nnls_seconds": t3 - t2,
            "n": n}


@graphclust.part
class EllipsoidRounding(graphclust.Rounding):
    """Ellipsoid rounding: origin-centred MVEE of {±p_i}, SPA on its active points, NNLS.

    Algorithm 2 (NCER) steps 2–4 of Mizutani: compute the origin-centred minimum-volume
    enclosing ellipsoid of ``{±p_1, ..., ±p_n}`` (problem R(S)) and its active points
    ``I``; if ``|I| = r`` they are the representatives ``J``, otherwise SPA (Gillis &
    Vavasis) picks ``r`` of them; every point is assigned to the representative with the
    largest weight in its nonnegative least-squares fit on ``P(J)``. No randomness, no
    k-means: the same embedding always gives the same labels.

    Works after any embedding; the geometry of Section 3 (Proposition 3) assumes its
    rows lie on a hyperplane not through the origin, as ``ncer-embedding``, ``er`` and
    ``mer`` produce. Backends: ``mvee="fw"`` (Frank–Wolfe with Todd–Yildirim away
    steps on the dual, core-set sweeps; the paper's Section 8 suggestion) or
    ``"cvxpy"`` (``log_det``, the reference; the paper used SDPT3 with cutting planes),
    ``nnls="fast"`` (vectorised block principal pivoting with the shared Gram matrix),
    ``"scipy"`` (Lawson–Hanson, like MATLAB's ``lsqnonneg``) or ``"cvxpy"``.

    Rules: a rank-deficient embedding is reduced to its row space first (Lemma 1:
    active points are invariant under linear maps); when SPA finds fewer than ``r``
    independent active points it continues on all points; a point with an all-zero
    fit goes to the representative of largest cosine similarity. ``assign`` labels new
    rows (e.g. from ``anchor_embedding``) by the same NNLS against the stored
    representatives.
    """

    name = "ellipsoid"
    needs = graphclust.SolutionField.EMBEDDING

    mvee: str = graphclust.param("fw", doc="MVEE backend: 'fw' (Frank–Wolfe, away steps) or 'cvxpy'.",
                                 check=graphclust.one_of("fw", "cvxpy"))
    nnls: str = graphclust.param("fast", doc="NNLS backend for step 4: 'fast', 'scipy' or 'cvxpy'.",
                                 check=graphclust.one_of("fast", "scipy", "cvxpy"))
    tol: float = graphclust.param(1e-7, doc="Frank–Wolfe stopping tolerance ε on max p_iᵀLp_i - 1.",
                                  check=graphclust.real(0, low_open=True))
    active_tol: float = graphclust.param(
        1e-5, doc="A point is active when p_iᵀ L* p_i >= 1 - active_tol (Section 3.2).",
        check=graphclust.real(0, 1, low_open=True, high_open=True))
    max_iter: int = graphclust.param(100_000, doc="Maximum Frank–Wolfe iterations.",
                                     check=graphclust.integer(1))

    def round(self, solution, n_clusters, ctx):
        P = np.asarray(solution.embedding, dtype=np.float64)
        out = ellipsoid_round(P, int(n_clusters), mvee_backend=self.mvee, nnls_backend=self.nnls,
                              tol=self.tol, active_tol=self.active_tol, max_iter=self.max_iter,
                              progress=ctx.progress)
        self.representatives_ = P[out["representatives"]]
        self.representative_index_ = out["representatives"]
        self.active_ = out["active"]
        self.timings_ = {k: out[k] for k in ("mvee_seconds", "spa_seconds", "nnls_seconds")}
        labels = out["labels"]
        # consecutive labels 0..k'-1 (a representative may win no point only if duplicated)
        _, labels = np.unique(labels, return_inverse=True)
        self.label_map_ = np.unique(out["labels"])
        return labels.astype(np.int64)

    def assign(self, solution):
        P = np.asarray(solution.embedding, dtype=np.float64)
        raw = assign_by_nnls(P, self.representatives_, self.nnls)
        return np.searchsorted(self.label_map_, raw).clip(0, len(self.label_map_) - 1)
