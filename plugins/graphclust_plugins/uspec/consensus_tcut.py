"""Transfer-cut consensus: U-SENC's consensus function on the point × base-cluster graph."""

from __future__ import annotations

import graphclust
import numpy as np
from graphclust.numerics import safe_inverse

from graphclust_plugins.common.rounding_kmeans import KMeansRounding
from graphclust_plugins.uspec._tcut import (
    degrees_from_exact,
    gram_from_exact,
    representative_side,
    transfer_cut,
)
from graphclust_plugins.uspec.solver_tcut import _exact_degrees, _exact_transfer_gram


@graphclust.part
class TcutConsensus(graphclust.Consensus):
    """Transfer cut of the bipartite graph between points and base clusters, then k-means.

    U-SENC's consensus (Huang et al., IEEE TKDE 2020, Sec. 4.2): the ensemble's
    ``n x Σk_i`` 0/1 membership matrix is the cross-affinity ``B`` of the bipartite
    graph ``[[0, B], [Bᵀ, 0]]`` between the points and the base clusters, and its
    Ncut is solved through the small side by the same transfer cut as U-SPEC
    (Sec. 3.3; Li et al., CVPR 2012, Theorem 1; :func:`~graphclust_plugins.uspec._tcut.
    transfer_cut`): with ``D_X = diag(B 1)`` (the number of members, ``m``, on the
    training points), ``E = Bᵀ D_X⁻¹ B`` and ``D_Y = diag(Bᵀ 1)`` (cluster sizes), the
    ``k`` smallest eigenpairs of ``(D_Y − E) v = λ D_Y v`` give each point the
    coordinates ``D_X⁻¹ B v``: the mean of its base clusters' rows of ``v``. k-means
    (``n_init`` restarts of at most ``max_iter`` iterations, rows scaled to unit length
    first when ``normalize_rows``) turns them into ``k`` labels.

    Rules
    -----
    * ``k`` eigenvectors are kept, the first one the trivial constant vector (as in the
      paper); ``extra_components = 1`` keeps one more. In the ``ensemble`` benchmark
      suite (rows ``usenc-k1`` and ``cross-ensemble-k1`` of ``benchmarks/HISTORY.md``)
      one more raised U-SENC's MNIST-70k ACC from 77.1 to 82.1 (3 seeds); on sklearn's
      digits (ARI .826 → .817, 3 seeds) and four small blobs (.988 → .926) it lost, so
      neither the default nor the ``usenc`` preset adopts it: both stay the paper's.
    * ``eigen_scaling=False`` (default) uses ``v`` as is; ``True`` divides column ``j``
      by ``1 − γ_j`` as in the theorem's lifted eigenvector ``u``. With row
      normalisation the unscaled form weighs every eigenvector alike, while the scaled
      form stretches the columns with larger ``γ`` (the less informative ones).
    * A base cluster no point belongs to (possible only in hand-built memberships) is
      left out of the eigenproblem; the eigenproblem is ``Σk_i x Σk_i``, dense up to
      :data:`~graphclust_plugins.uspec._tcut.DENSE_TCUT_MAX` (6 000) base clusters
      (every copy of a repeated eigenvalue found) and ARPACK (start vector from
      ``ctx``) above.
    * :meth:`assign` gives a new point the mean of the rows of ``v`` of the base clusters
      its members' ``predict`` chose (members that could not place it are left out; a
      point no member placed gets a zero row, labelled by the nearest centre to 0); a
      training point's row gives its training label back.
    """

    name = "tcut"
    chunkwise = True  # D_Y and E are sums over row blocks of the memberships


    n_components: int | None = graphclust.param(
        None, doc="Eigenvectors kept; None = n_clusters + extra_components (U-SENC: "
        "n_clusters).", check=graphclust.optional(graphclust.integer(1)))
    extra_components: int = graphclust.param(
        0, doc="Eigenvectors kept beyond n_clusters when n_components is None (0: U-SENC).",
        check=graphclust.integer(0))
    eigen_scaling: bool = graphclust.param(
        False, doc="Divide eigenvector j by 1 - γ_j (the bipartite eigenvector of Li et al. "
        "Theorem 1) before rounding.", check=graphclust.boolean)
    n_init: int = graphclust.param(3, doc="k-means restarts on the point coordinates.",
                                   check=graphclust.integer(1))
    max_iter: int = graphclust.param(100, doc="Maximum k-means iterations per restart.",
                                     check=graphclust.integer(1))
    normalize_rows: bool = graphclust.param(
        True, doc="Scale the point coordinates to unit length before k-means.",
        check=graphclust.boolean)

    def combine(self, memberships, n_clusters, ctx):
        B = memberships.matrix
        k = int(self.n_components or n_clusters + self.extra_components)
        res = transfer_cut(B, k, random_state=ctx.seed_for("consensus.tcut"))
        ctx.progress.message(f"transfer cut: {res.v.shape[1]} eigenpairs of a "
                             f"{int(res.active.sum())} x {int(res.active.sum())} problem")
        rep = res.v
        if self.eigen_scaling:
            rep = res.rep_embedding
        self.cluster_embedding_ = rep
        self.eigenvalues_ = res.eigenvalues
        self.rounding_ = KMeansRounding(n_init=self.n_init, max_iter=self.max_iter,
                                        normalize_rows=self.normalize_rows)
        point = self._coordinates(B)
        return self.rounding_.round(graphclust.Solution(embedding=point), n_clusters, ctx)

    def combine_chunked(self, chunks, n_clusters, ctx) -> None:
        """The ``Σk_i``-sized side of :meth:`combine` from sums over row blocks (the
        chunked execution, :mod:`graphclust._dask`): ``block.Z`` of each block is its
        rows of the membership matrix ``B``; ``D_Y = Σ B_bᵀ1`` and
        ``E = Σ B_bᵀ D_{X,b}⁻¹ B_b`` are summed, the eigenproblem is
        :func:`~graphclust_plugins.uspec._tcut.representative_side` as in
        :func:`~graphclust_plugins.uspec._tcut.transfer_cut`. Sets ``cluster_embedding_``,
        ``eigenvalues_`` and an unfitted ``rounding_``; the caller fits the rounding on
        :meth:`embed_rows` of a row sample and assigns every block. The sums are exact,
        as in :meth:`combine`, so the result is the same for any cut of the rows."""
        k = int(self.n_components or n_clusters + self.extra_components)
        dy = degrees_from_exact(chunks.sum(_exact_degrees))
        cols = np.flatnonzero(dy > 0)
        k_eff = int(min(k, cols.size))
        if k_eff == 0:  # as transfer_cut: an all-zero B embeds nothing
            v = rep = np.zeros((dy.size, 1))
            lam = np.zeros(1)
        else:
            E = gram_from_exact(chunks.sum(_exact_transfer_gram, cols), cols.size)
            rep, v, lam, _ = representative_side(E, dy, cols, k_eff,
                                                 random_state=ctx.seed_for("consensus.tcut"))
        ctx.progress.message(f"transfer cut: {v.shape[1]} eigenpairs of a "
                             f"{cols.size} x {cols.size} problem (summed over chunks)")
        self.cluster_embedding_ = rep if self.eigen_scaling else v
        self.eigenvalues_ = lam
        self.rounding_ = KMeansRounding(n_init=self.n_init, max_iter=self.max_iter,
                                        normalize_rows=self.normalize_rows)

    def embed_rows(self, block) -> np.ndarray:
        """The point coordinates of one block of membership rows (``block.Z``), after
        :meth:`combine_chunked`: ``D_{X,b}⁻¹ B_b`` times the cluster embedding."""
        return self._coordinates(block.Z)

    def _coordinates(self, B) -> np.ndarray:
        """``D_X⁻¹ B @ cluster_embedding_``: each row's mean over its base clusters."""
        degree = np.asarray(B.sum(axis=1)).ravel()
        return safe_inverse(degree)[:, None] * np.asarray(B @ self.cluster_embedding_)

    def assign(self, memberships):
        if not hasattr(self, "rounding_"):
            raise RuntimeError("consensus 'tcut': call combine() before assign()")
        if memberships.matrix.shape[1] != self.cluster_embedding_.shape[0]:
            raise ValueError(f"consensus 'tcut': memberships have "
                             f"{memberships.matrix.shape[1]} base clusters, the fitted "
                             f"ensemble {self.cluster_embedding_.shape[0]}")
        point = self._coordinates(memberships.matrix)
        return self.rounding_.assign(graphclust.Solution(embedding=point))
