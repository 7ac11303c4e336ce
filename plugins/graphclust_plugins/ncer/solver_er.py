"""ER and MER for separable NMF (Mizutani, Algorithm 3 and Section 4.3).

The paper's data matrix ``A`` is ``d x m`` with one point per column; here ``X`` is
``n x d`` with one point per row (``A = Xᵀ``).

* :func:`er_embedding` runs steps 1–2 of Algorithm 3 (SVD reduction to ``r``
  dimensions, scaling onto a hyperplane) and returns the points ``q_i`` as rows.
* :func:`er` runs the whole of Algorithm 3 and returns the index set ``J`` (the
  columns of ``A`` chosen as the basis ``F = A(J)``).
* The solvers ``er`` (here) and ``mer`` (:mod:`.solver_mer`) expose steps 1–2 as
  graph-free solvers (``needs_features=True``; the graph is ignored) so that the
  ``ellipsoid`` rounding performs steps 3–4 and then NCER's step 4 (the NNLS
  assignment), which is how Section 7.4 turns ER/MER into clusterings.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import graphclust
from graphclust.numerics import leading_eigenvectors

__all__ = ["er_embedding", "er", "ErEmbedding"]


def _top_right_singular(Xs, r: int):
    """Top ``r`` singular values and the corresponding left singular vectors of the
    ``n x d`` matrix ``Xs`` (= right singular vectors of ``A D^{-1/2} = Xsᵀ``)."""
    n, d = Xs.shape
    if sp.issparse(Xs):
        if r < min(n, d) - 1:
            from scipy.sparse.linalg import svds

            U, s, _ = svds(sp.csr_array(Xs, dtype=np.float64), k=r, tol=0.0,
                           v0=np.ones(min(n, d)) / np.sqrt(min(n, d)))
            order = np.argsort(-s, kind="stable")
            return s[order], U[:, order]
        Xs = Xs.toarray()
    Xs = np.asarray(Xs, dtype=np.float64)
    rng = np.random.default_rng(0)  # ER is deterministic: a fixed start if ARPACK is used
    if d <= n:  # through the d x d Gram matrix: Xsᵀ Xs = W Σ² Wᵀ, U = Xs W Σ^{-1}
        s2, W = leading_eigenvectors(Xs.T @ Xs, r, rng=rng)
        s = np.sqrt(np.maximum(s2, 0.0))
        return s, Xs @ (W / np.where(s > 0, s, 1.0)[None, :])
    s2, U = leading_eigenvectors(Xs @ Xs.T, r, rng=rng)
    return np.sqrt(np.maximum(s2, 0.0)), U


def er_embedding(X, r: int, *, modified: bool = False, degree_scaling: bool = False) -> dict:
    """Steps 1–2 of Algorithm 3 (ER), or of MER when ``modified``.

    Parameters
    ----------
    X : array or sparse matrix (n, d), nonnegative (Assumption 2)
        The data points as rows.
    r : int
        Basis number, ``r <= rank(X)`` (Assumption 4(b)).
    modified : bool
        MER: ``B = V_rᵀ`` instead of ``Σ_r V_rᵀ`` in step 1 (Section 4.3).
    degree_scaling : bool
        Assumption 4: the input is ``A D^{-1/2}`` with ``d_i = a_iᵀ(a_1 + ... + a_m)``
        (Eq. 7) and the step-2 scaling is ``S = D^{-1/2}``. Without it (plain ER), the
        points are scaled onto the hyperplane ``e_1ᵀ x = 1`` (``s_i = 1 / b_{1i}``; the
        first right singular vector of a nonnegative matrix is nonnegative).

    Returns
    -------
    dict with ``Q`` (n x r, the points ``q_i`` as rows, all on a hyperplane
    ``e_1ᵀ x = const``), ``kept`` (indices of nonzero columns of ``B``; a removed
    point — an all-zero data row — has a zero row in ``Q``), ``singular_values``.
    """
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64)
        if X.nnz and X.data.min() < 0:
            raise graphclust.InputError("ER/MER need nonnegative data (Assumption 2)")
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.size and X.min() < 0:
            raise graphclust.InputError("ER/MER need nonnegative data (Assumption 2)")
    n = X.shape[0]
    if degree_scaling:
        total = np.asarray(X.sum(axis=0)).ravel()
        deg = np.asarray(X @ total).ravel()  # Eq. (7): d_i = a_iᵀ (a_1 + ... + a_m)
        dinv = np.zeros(n)
        dinv[deg > 0] = deg[deg > 0] ** -0.5
        Xs = (sp.dia_array((dinv[None, :], [0]), shape=(n, n)) @ X) if sp.issparse(X) \
            else X * dinv[:, None]
    else:
        Xs = X
    s, Vr = _top_right_singular(Xs, r)
    if Vr[:, 0].sum() < 0:
        Vr[:, 0] = -Vr[:, 0]
    Bt = Vr if modified else Vr * s[None, :]  # rows of Bᵀ = columns of B (step 1)
    if degree_scaling:
        scale = dinv  # S = D^{-1/2} (Assumption 4(c))
        kept = np.flatnonzero(dinv > 0)
    else:
        first = Bt[:, 0]
        kept = np.flatnonzero(first > 1e-12 * np.abs(first).max())
        scale = np.zeros(n)
        scale[kept] = 1.0 / first[kept]
    Q = Bt * scale[:, None]
    return {"Q": Q, "kept": kept, "singular_values": s}


def er(X, r: int, *, modified: bool = False, degree_scaling: bool = False,
       mvee_backend: str = "fw", tol: float = 1e-7, active_tol: float = 1e-5) -> np.ndarray:
    """Algorithm 3 (ER; MER when ``modified``): the index set ``J`` of ``r`` points
    (rows of ``X``) chosen as the basis, in SPA order (step 4)."""
    from graphclust_plugins.ncer._mvee import mvee, reduce_rank
    from graphclust_plugins.ncer._spa import spa

    emb = er_embedding(X, r, modified=modified, degree_scaling=degree_scaling)
    kept = emb["kept"]
    Q = reduce_rank(emb["Q"][kept])
    res = mvee(Q, mvee_backend, tol=tol, active_tol=active_tol)  # step 3
    J = res.active if res.active.size == r else spa(Q, r, candidates=res.active)  # step 4
    return kept[J]


@graphclust.part
class ErEmbedding(graphclust.Solver):
    """ER steps 1–2 for separable NMF (Algorithm 3): points on a hyperplane, graph ignored.

    Reduces the nonnegative data to ``r`` dimensions by SVD (``B = Σ_r V_rᵀ``) and scales
    the columns onto a hyperplane; follow it with the ``ellipsoid`` rounding (steps 3–4
    plus NCER's NNLS assignment, as in Section 7.4). ``degree_scaling=True`` is the
    setting of Assumption 4 / Section 7.4 (input ``A D^{-1/2}``, ``S = D^{-1/2}``). It
    needs the features and accepts any graph, which it does not use. Data must be
    nonnegative (Assumption 2).
    """

    name = "er"
    accepts = frozenset({graphclust.GraphKind.AFFINITY, graphclust.GraphKind.ANCHOR})
    needs_features = True
    provides = frozenset({graphclust.SolutionField.EMBEDDING})
    _modified = False

    degree_scaling: bool = graphclust.param(
        True, doc="Assumption 4: input A D^{-1/2} with D of Eq. (7) and S = D^{-1/2}.",
        check=graphclust.boolean)

    def solve(self, graph, X, n_clusters, ctx):
        out = er_embedding(X, int(n_clusters), modified=self._modified,
                           degree_scaling=bool(self.degree_scaling))
        return graphclust.Solution(embedding=out["Q"], info={
            "kept": out["kept"], "singular_values": out["singular_values"],
            "variant": self.name})
