"""ONGR solver: orthogonal and nonnegative graph reconstruction (Eq. 7, Algorithm 1)."""

from __future__ import annotations

import graphclust
import numpy as np
from graphclust.chunks import InMemoryChunks
from graphclust.numerics import fixed_threads, leading_eigenvectors, safe_inverse
from threadpoolctl import threadpool_limits

from graphclust_plugins.ongr._loop import finish_iterations, iteration_done, objective_from_pieces
from graphclust_plugins.ongr._start import (
    canonical_eigenbasis,
    complete_orthonormal,
    one_block,
    random_start,
    spectral_kmeans_start,
)

__all__ = ["OngrOperator", "OngrSolver", "ongr_objective"]


class OngrOperator:
    """The graph ``W`` of Eq. 7, applied implicitly.

    * :class:`~graphclust.AnchorGraph`: ``W = Z Σ⁻¹ Zᵀ = B Bᵀ`` with ``B = Z Σ^{-1/2}``
      (Section 3.2, "Important tips"); ``‖W‖_F² = ‖Bᵀ B‖_F²`` from the ``m × m`` Gram.
    * :class:`~graphclust.AffinityGraph`: ``W = D^{-1/2} A D^{-1/2}`` (``normalize=True``,
      the Ncut relaxation of Eq. 3) or ``W = A``.
    """

    def __init__(self, graph, normalize: bool = True):
        self.graph = graph
        self.kind = graph.kind
        self._normalized = bool(normalize)
        if self.kind == "anchor":
            self.n = graph.n
            B = graph.B()
            self.gram = np.asarray((B.T @ B).toarray())  # m x m
            self.norm2 = float(np.sum(self.gram * self.gram))
            self._W = None
        else:
            self.n = graph.n
            self._W = graph.normalized_adjacency() if normalize else graph.adjacency
            self.gram = None
            self.norm2 = float(np.sum(self._W.data ** 2))

    def trivial_direction(self) -> np.ndarray | None:
        """The unit eigenvector ``t`` of ``W`` with ``W t = t`` (eigenvalue 1): ``√d/‖√d‖``
        with ``d = W 1`` the degrees of the anchor graph's ``W`` (constant when the rows
        of ``Z`` sum to one) or of ``A`` for ``D^{-1/2} A D^{-1/2}``. ``None`` for an
        unnormalised affinity ``W = A`` (no known trivial vector) or all-zero degrees."""
        if self.kind != "anchor" and self._normalized is False:
            return None
        t = np.sqrt(np.maximum(np.asarray(self.graph.degrees, dtype=np.float64), 0.0))
        nrm = float(np.linalg.norm(t))
        return t / nrm if nrm > 0 else None

    def matvec(self, F: np.ndarray) -> np.ndarray:
        """``W @ F``."""
        if self.kind == "anchor":
            return np.asarray(self.graph.matvec(F))
        return np.asarray(self._W @ F)

    def leading(self, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` leading eigenvectors of ``W`` (left singular vectors of ``B``), orthonormal.

        For an anchor graph: eigenvectors ``V`` of the ``m × m`` Gram ``BᵀB`` give
        ``U = B V Λ^{-1/2}`` (Section 3.2, Initialization); the basis of a repeated
        eigenvalue is made canonical (``_start.canonical_eigenbasis``). Directions with a
        (numerically) zero eigenvalue are filled with random vectors orthogonalised
        against the rest (``_start.complete_orthonormal``: row-keyed draws seeded from
        ``rng``, so the chunked solve fills them identically).
        Dense or Lanczos by the rule of :func:`graphclust.numerics.leading_eigenvectors`
        (the Lanczos start vector comes from ``rng``, the run's seed).
        """
        if self.kind == "anchor":
            vals, vecs = leading_eigenvectors(self.gram, k, rng=rng)
            vecs = canonical_eigenbasis(vals, vecs)
            Y = np.asarray(self.graph.B() @ vecs)
            ok = vals > max(vals[0], 0.0) * 1e-10
            Y[:, ok] *= safe_inverse(vals[ok], 0.5)[None, :]
        else:
            vals, Y = leading_eigenvectors(self._W, k, rng=rng)
            ok = np.abs(vals) > max(abs(vals[0]), 0.0) * 1e-10
        U = np.zeros((self.n, k))
        U[:, : Y.shape[1]] = Y
        keep = np.zeros(k, dtype=bool)
        keep[: Y.shape[1]] = ok
        if not keep.all():
            chunks, state = one_block(U)
            U = complete_orthonormal(chunks, state, keep, int(rng.integers(2**31))).values[0]
        eig = np.zeros(k)
        eig[: len(vals)] = vals
        return U, eig


def _flip_signs(F: np.ndarray) -> np.ndarray:
    """Sign convention for the initial singular vectors: make each column's largest
    positive part win, i.e. ``‖f₊‖ ≥ ‖f₋‖`` (ties: the entry of largest magnitude positive)."""
    pos = np.sum(np.maximum(F, 0.0) ** 2, axis=0)
    neg = np.sum(np.minimum(F, 0.0) ** 2, axis=0)
    flip = neg > pos
    tie = np.isclose(neg, pos)
    if tie.any():
        big = F[np.abs(F).argmax(axis=0), np.arange(F.shape[1])] < 0
        flip = np.where(tie, big, flip)
    F[:, flip] *= -1.0
    return F


def _polar(Y: np.ndarray) -> np.ndarray:
    """``U Vᵀ`` from the thin SVD ``U Λ Vᵀ`` of ``Y`` (Eq. 11): the orthonormal ``F``
    maximising ``Tr(Fᵀ Y)``.

    Computed through the ``k × k`` Gram matrix, ``U Vᵀ = Y V Λ⁻¹ Vᵀ`` with ``YᵀY = V Λ² Vᵀ``
    (one pass over the ``n × k`` data; a thin LAPACK SVD of a tall matrix is several times
    slower). When ``Y`` is ill-conditioned (``Λ_min < 1e-5 Λ_max``, e.g. a column of G
    vanished) it falls back to QR followed by the SVD of the ``k × k`` factor, which is
    exact for rank-deficient ``Y`` too.
    """
    C = Y.T @ Y
    w, V = np.linalg.eigh(C)
    if w[0] > 1e-10 * w[-1] and w[-1] > 0:
        return Y @ ((V / np.sqrt(w)[None, :]) @ V.T)
    with fixed_threads():  # a tall thin QR: one thread (numerics.threads)
        Q, R = np.linalg.qr(Y)
        Ur, _, Vt = np.linalg.svd(R)
    return Q @ (Ur @ Vt)


def ongr_objective(norm2_W: float, F: np.ndarray, G: np.ndarray, WF: np.ndarray | None = None,
                   WG: np.ndarray | None = None, lam: float = 1.0) -> float:
    """Eq. 7, ``‖W − F Gᵀ‖_F² + λ ‖F − G‖_F²``, without forming ``W``.

    Expanding the norm (``W`` symmetric)::

        ‖W − FGᵀ‖² = ‖W‖² − 2 Tr(Gᵀ W F) + Tr((FᵀF)(GᵀG))

    where ``Tr(Gᵀ W F) = ⟨G, WF⟩ = ⟨F, WG⟩``; pass whichever of ``WF``/``WG`` is at hand.
    """
    if WF is not None:
        cross = float(np.vdot(G, WF))
    elif WG is not None:
        cross = float(np.vdot(F, WG))
    else:
        raise ValueError("pass WF or WG")
    return objective_from_pieces(norm2_W, cross, F.T @ F, G.T @ G, lam,
                                 float(np.sum((F - G) ** 2)))


@graphclust.part
class OngrSolver(graphclust.Solver):
    """ONGR: orthogonal F and nonnegative label matrix G reconstructing the graph (Eq. 7).

    Solves ``min ‖W − F Gᵀ‖_F² + λ ‖F − G‖_F²`` subject to ``FᵀF = I``, ``G ≥ 0``
    (Eq. 7) by Algorithm 1:

    1. ``F`` ← the ``k`` leading left singular vectors of ``Ẑ = Z Σ^{-1/2}`` (the ``k``
       leading eigenvectors of ``W``), computed through the ``m × m`` Gram matrix
       ``ẐᵀẐ``. Each column's sign is fixed so that its positive part has the larger
       norm (the paper leaves the sign open; it matters for the positive part).
    2. repeat: ``G = ((WF + λF)/(1 + λ))₊`` (Eq. 9), then ``F = U Vᵀ`` from the thin SVD
       ``U Λ Vᵀ`` of ``WG + λG`` (Eq. 11), with ``W`` applied as ``Z(Σ⁻¹(ZᵀF))``;
    3. until fewer than a fraction ``tol`` of the argmax labels of ``G`` change between
       two iterations (Section 4.3), or ``max_iter``.

    Starts (``init``): ``"svd"`` is step 1 above (Algorithm 1, the paper's start);
    ``"random"`` a random orthonormal ``F``; ``"spectral-kmeans"`` (the ``ongr-k`` /
    ``ongr-r`` presets' default, issue 16) computes the ``k + 1`` leading eigenvectors
    of ``W``, projects out its trivial eigenvector ``t`` (``W t = t``; constant for a
    doubly stochastic ``W``), scales the rows of the remaining ``k`` to unit length and
    starts from the scaled indicator of a k-means partition of them (``init_restarts``
    restarts) — a feasible point of Eq. 6 (orthonormal and nonnegative). Why: ``t``
    carries no cluster information, so the paper's start offers only ``k − 1``
    informative directions for ``k`` clusters, and with ``max`` the alternation stays
    next to its start (it converges in a few iterations), so the start decides the
    local optimum. Measured with the presets' other values (docs, "Defaults that need no
    search"): USPS ACC .66 → .77, PenDigits .72 → .84 (``ongr-k``, 3 seeds); ``m``,
    ``s``, ``σ`` and ``λ`` moved the mean by less than the anchor draw once the start is
    fixed. The extra cost is one more eigenvector and k-means on an ``n × k`` matrix.

    ``positive_part="max"`` (default) uses ``max(·, 0)``, the exact minimiser of Eq. 8
    over ``G ≥ 0``; the alternation is then block-coordinate descent with exact steps and
    the Eq. 7 objective is non-increasing. ``"abs"`` takes absolute values, as the text
    under Eq. 9 says; it is not the minimiser of Eq. 8 and the objective is not
    guaranteed to decrease.

    The objective of Eq. 7 is evaluated without ``W`` (expanding the norm; ``‖W‖_F² =
    ‖ẐᵀẐ‖_F²``) after every G-step and F-step and stored in ``Solution.objective`` (after
    each full iteration) and ``Solution.history`` (``"objective_after_G"``,
    ``"fg_gap"`` = ``‖F − G‖_F²``, ``"label_change"`` = fraction of changed labels).

    Zero rows: with ``max`` a row of ``G`` can be all zero (the paper's Figure 3
    remark). Such a row is labelled by the argmax of its row of the unclipped matrix
    ``(WF + λF)/(1 + λ)`` (the cluster it is least far from), which is also what the
    argmax of every nonzero row of ``G`` equals; in the returned ``soft`` the row gets
    that single entry set to the smallest positive entry of ``G`` so an argmax rounding
    gives the same label. Their number is ``info["n_zero_rows"]``.

    Outputs: ``soft`` = ``G`` (n × k), ``embedding`` = ``F``. For anchor graphs
    ``anchor_soft = Σ⁻¹ Zᵀ G`` and ``anchor_embedding = Σ⁻¹ Zᵀ F``, so a new point with
    anchor row ``z`` gets the soft row ``z Σ⁻¹ Zᵀ G`` — its row of ``W G``, the label
    matrix propagated through the graph — and the embedding row ``z Σ⁻¹ Zᵀ F`` (its row
    of ``W F``; the leading eigenvalues of ``W`` are close to 1, so this is on the scale
    of ``F``).

    Affinity graphs (small ``n``) are accepted: ``W`` is then the normalised adjacency
    ``D^{-1/2} A D^{-1/2}`` (``normalize=True``), and the initial eigenvectors come from
    a dense or Lanczos eigensolver.

    References
    ----------
    Han, Xiong, Nie. Orthogonal and Nonnegative Graph Reconstruction for Large Scale
    Clustering. IJCAI 2017, Eq. 7–11, Algorithm 1, Section 4.3.
    """

    name = "ongr"
    out_of_sample = True  # places new points (projection or per-anchor values)
    accepts = frozenset({graphclust.GraphKind.ANCHOR, graphclust.GraphKind.AFFINITY})
    needs_features = False
    accepts_sparse = True  # reads nothing of X (the graph only)
    provides = frozenset({graphclust.SolutionField.SOFT, graphclust.SolutionField.EMBEDDING})

    lam: float = graphclust.param(
        1.0, doc="Trade-off λ between reconstruction and ‖F − G‖² (Eq. 7).",
        check=graphclust.real(0))
    max_iter: int = graphclust.param(
        100, doc="Maximum number of F/G alternations (Algorithm 1).",
        check=graphclust.integer(1))
    tol: float = graphclust.param(
        0.001, doc="Stop when fewer than this fraction of labels change (Section 4.3).",
        check=graphclust.real(0, 1))
    positive_part: str = graphclust.param(
        "max", doc="(·)₊ of Eq. 9: 'max' = max(·, 0), the minimiser of Eq. 8; 'abs' = "
                   "absolute value, as the paper's text says.",
        check=graphclust.one_of("max", "abs"))
    init: str = graphclust.param(
        "svd", doc="Initial F: 'svd' = k leading left singular vectors of Ẑ (Algorithm 1); "
                   "'random' = random orthonormal F (Section 3.2, Initialization); "
                   "'spectral-kmeans' = scaled indicator of k-means on the k nontrivial "
                   "leading eigenvectors of W, rows at unit length (the presets' default).",
        check=graphclust.one_of("svd", "random", "spectral-kmeans"))
    init_restarts: int = graphclust.param(
        10, doc="init='spectral-kmeans' only: k-means restarts (best inertia kept).",
        check=graphclust.integer(1))
    normalize: bool = graphclust.param(
        True, doc="Affinity graphs only: use W = D^{-1/2} A D^{-1/2} (True) or A itself.",
        check=graphclust.boolean)
    track_objective: bool = graphclust.param(
        True, doc="Record the Eq. 7 objective per iteration (costs O(nk²) per iteration).",
        check=graphclust.boolean)

    def solve(self, graph, X, n_clusters, ctx):
        # Everything here is m x m or skinny n x k work (plus sparse matvecs): extra BLAS
        # threads give little and oversubscribe busy machines (measured 5-10x slowdowns of
        # eigh/SVD on a loaded 2-core box), so BLAS runs single-threaded inside the solver.
        with threadpool_limits(limits=1, user_api="blas"):
            return self._solve(graph, n_clusters, ctx)

    def _solve(self, graph, n_clusters, ctx):
        k = int(n_clusters)  # 1 <= k <= graph.n: the Solver contract, checked by the plan
        lam = float(self.lam)
        op = OngrOperator(graph, normalize=self.normalize)
        rng = ctx.rng("ongr-init")
        if self.init == "svd":
            F, eig = op.leading(k, rng)
            F = _flip_signs(F)
        elif self.init == "spectral-kmeans":
            U, eig = op.leading(min(k + 1, op.n), rng)
            F, _ = spectral_kmeans_start(U, op.trivial_direction(), k,
                                         ctx.seed_for("ongr-init.kmeans"),
                                         int(self.init_restarts), rng)
        else:
            F = random_start(InMemoryChunks(np.zeros((op.n, 0)), block_rows=op.n), k,
                             int(rng.integers(2**31))).values[0]
            eig = None
        positive = (lambda M: np.maximum(M, 0.0)) if self.positive_part == "max" else np.abs

        objective, obj_g, gap, change = [], [], [], []
        labels = None
        converged = False
        progress = ctx.progress
        progress.start(self.max_iter)
        n_iter = 0
        G = M = None
        for it in range(1, self.max_iter + 1):
            n_iter = it
            WF = op.matvec(F)
            M = (WF + lam * F) / (1.0 + lam)             # Eq. 8 target
            G = positive(M)                               # Eq. 9
            new_labels = self._labels(M)
            if self.track_objective:
                obj_g.append(ongr_objective(op.norm2, F, G, WF=WF, lam=lam))
            WG = op.matvec(G)
            F = _polar(WG + lam * G)                      # Eq. 11
            if self.track_objective:
                objective.append(ongr_objective(op.norm2, F, G, WG=WG, lam=lam))
            gap.append(float(np.sum((F - G) ** 2)))
            frac = 1.0 if labels is None else float(np.mean(new_labels != labels))
            change.append(frac)
            labels = new_labels
            if iteration_done(self, progress, it, frac, objective):
                converged = True
                break
        finish_iterations(self, progress, converged, change, stacklevel=4)

        soft, n_zero = self._soft(G, labels)
        anchor_soft = anchor_embedding = None
        if graph.kind == "anchor":
            inv = safe_inverse(graph.anchor_degrees)
            anchor_soft = inv[:, None] * np.asarray(graph.Z.T @ soft)
            anchor_embedding = inv[:, None] * np.asarray(graph.Z.T @ F)
        return graphclust.Solution(
            embedding=F, soft=soft, objective=np.asarray(objective), n_iter=n_iter,
            converged=converged, anchor_soft=anchor_soft, anchor_embedding=anchor_embedding,
            history={"objective_after_G": np.asarray(obj_g), "fg_gap": np.asarray(gap),
                     "label_change": np.asarray(change)},
            info={"n_zero_rows": n_zero, "lam": lam, "positive_part": self.positive_part,
                  "init_eigenvalues": eig, "labels": labels})

    # -- chunked execution (graphclust.chunks) ---------------------------------------
    chunkwise = True  # anchor graphs: m x k sums per pass, F and G kept per block

    def solve_chunked(self, chunks, n_clusters, ctx):
        """Algorithm 1 on row chunks (anchor graphs): the same iterations as
        :meth:`solve`, each two passes over the blocks whose sums are ``m x k``
        (``BᵀF``, ``BᵀG``) or ``k x k`` (``GᵀG``, which with ``BᵀB`` gives the Gram of
        Eq. 11's ``Y``); the ``n x k``
        iterates ``F`` and ``G`` stay with their blocks as a per-block state
        (:mod:`graphclust_plugins.ongr._chunkwise`). The start is :meth:`solve`'s, its
        k-means (``spectral-kmeans``) fitted on the rounding's row sample
        (:func:`graphclust.chunks.sample_size`: all rows up to 100 000) and applied per
        block. Returns a zero-row solution whose ``info["kept_rows"]`` holds each block's
        rows of ``G`` (``soft``) and ``F`` (``embedding``) for :meth:`lift_rows`; the
        per-anchor values are those of :meth:`solve`."""
        from graphclust_plugins.ongr._chunkwise import solve_chunked

        with threadpool_limits(limits=1, user_api="blas"):
            return solve_chunked(self, chunks, n_clusters, ctx)

    def lift_rows(self, solution, block):
        """A block's rows of ``G`` (``soft``) and ``F`` (``embedding``): the kept rows of
        :meth:`solve_chunked` (``block.state``), else — points the fit did not see — their
        rows of ``W G`` and ``W F`` through the per-anchor values, as ``predict`` gives."""
        if isinstance(block.state, graphclust.Solution):
            return block.state
        return solution.extend(Z_new=block.Z)

    def _labels(self, M: np.ndarray) -> np.ndarray:
        """Argmax labels of G; for ``max`` these equal the argmax of the unclipped ``M``
        (zero rows included, by the zero-row rule), for ``abs`` the argmax of ``|M|``."""
        if self.positive_part == "max":
            return M.argmax(axis=1)
        return np.abs(M).argmax(axis=1)

    @staticmethod
    def _soft(G: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, int]:
        zero = ~(G > 0).any(axis=1)
        n_zero = int(zero.sum())
        if not n_zero:
            return G, 0
        soft = G.copy()
        positive = G[G > 0]
        fill = float(positive.min()) if positive.size else 1.0
        rows = np.flatnonzero(zero)
        soft[rows, labels[rows]] = fill
        return soft, n_zero
