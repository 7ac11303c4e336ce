"""Transfer cut (Tcut) solver: Ncut of the point–representative bipartite graph."""

from __future__ import annotations

import graphclust
import numpy as np
import scipy.sparse as sp
from graphclust.chunks import anchor_degrees

from graphclust_plugins.uspec._tcut import point_transfer, representative_side, transfer_cut


@graphclust.part
class TransferCut(graphclust.Solver):
    """Transfer cut on a bipartite (anchor) graph: ``p x p`` eigenproblem, lifted to the points.

    Reads the anchor graph's ``Z`` as the cross-affinity ``B`` (``n x p``) of the
    bipartite graph ``[[0, B], [Bᵀ, 0]]`` and returns the point half ``u`` of its
    ``n_components`` smallest Ncut eigenvectors (U-SPEC Sec. 3.3; Li et al., CVPR 2012,
    Theorem 1): with ``D_X = diag(B 1)``, ``E = Bᵀ D_X⁻¹ B``, ``D_Y = diag(Bᵀ 1)``, the
    smallest eigenpairs of ``(D_Y − E) v = λ D_Y v`` are lifted by ``γ(2 − γ) = λ`` and
    ``u = D_X⁻¹ B v / (1 − γ)`` (:func:`graphclust_plugins.uspec._tcut.transfer_cut`).
    Nothing ``n x n`` or dense ``n x p`` is formed. The trivial vector (``λ = 0``) is
    kept, as in the authors' code.

    Column scaling: by default (``eigen_scaling = False``) the embedding is
    ``D_X⁻¹ B v`` without the theorem's factor ``1 / (1 − γ_j)``, as the authors'
    ``Tcut_for_bipartite_graph`` (USPEC.m) computes it; after row normalisation the
    factor would stretch the columns with larger ``γ`` (the less informative
    eigenvectors). ``eigen_scaling = True`` returns the lifted ``u`` itself.

    Out of sample: ``anchor_embedding = v`` (``v / (1 − γ)`` when scaling), so a new
    point with row ``b`` of ``B`` gets ``b @ anchor_embedding = (b 1)·u``: its Tcut
    coordinates times its (positive) degree. A rounding that normalises rows (the ``uspec`` preset's
    ``kmeans`` with ``normalize_rows = true``, as the authors' code) therefore labels
    new points exactly as training points; without row normalisation the degree
    factor remains.

    Rules: a representative no point chose is left out of the eigenproblem (zero row of
    ``anchor_embedding``); a point with no edge gets a zero row; a disconnected
    graph repeats ``λ = 0`` once per component; ``n_components`` is clamped to the
    number of chosen representatives. The ARPACK start vector (large ``p`` only) comes
    from ``ctx.seed_for("solver.tcut")``.
    """

    name = "tcut"
    accepts = frozenset({graphclust.GraphKind.ANCHOR})
    needs_features = False
    accepts_sparse = True  # reads nothing of X (the graph only)
    provides = frozenset({graphclust.SolutionField.EMBEDDING})
    out_of_sample = True

    n_components: int | None = graphclust.param(
        None, doc="Eigenvectors kept; None = n_clusters (U-SPEC).",
        check=graphclust.optional(graphclust.integer(1)))
    eigen_scaling: bool = graphclust.param(
        False, doc="Divide eigenvector j by 1 - γ_j (the lifted eigenvector u of Li et al. "
        "Theorem 1); False = D_X⁻¹ B v as the authors' USPEC.m.", check=graphclust.boolean)

    def solve(self, graph, X, n_clusters, ctx) -> graphclust.Solution:
        if not isinstance(graph, graphclust.AnchorGraph):  # the composer checks kinds
            raise TypeError(f"solver 'tcut' needs an anchor graph, got {type(graph).__name__}")
        k = int(self.n_components or n_clusters)
        res = transfer_cut(graph.Z, k, random_state=ctx.seed_for("solver.tcut"))
        ctx.progress.message(f"transfer cut: {res.v.shape[1]} eigenpairs of a "
                             f"{int(res.active.sum())} x {int(res.active.sum())} problem")
        point, rep = res.point_embedding, res.rep_embedding
        if not self.eigen_scaling:  # v and D_X⁻¹ B v (λ = 1 columns stay zero)
            gain = 1.0 - res.gamma
            point, rep = point * gain[None, :], rep * gain[None, :]
        return graphclust.Solution(
            embedding=point, anchor_embedding=rep,
            info={"eigenvalues": res.eigenvalues, "gamma": res.gamma,
                  "unused_representatives": int((~res.active).sum())})

    # -- chunked execution (graphclust.chunks) ---------------------------------------
    chunkwise = True  # D_Y and E = Bᵀ D_X⁻¹ B are sums over row blocks

    def solve_chunked(self, chunks, n_clusters, ctx) -> graphclust.Solution:
        """The transfer cut from sums over row blocks (the chunked execution).

        ``D_X`` is per row, so ``D_Y = Σ B_bᵀ1`` (pass 1) and ``E = Σ B_bᵀ D_{X,b}⁻¹ B_b``
        (pass 2) are sums over the blocks; the ``p x p`` problem is then
        :func:`~graphclust_plugins.uspec._tcut.representative_side`, as in :meth:`solve`,
        and :meth:`lift_rows` gives a block ``D_{X,b}⁻¹ B_b rep``. Equal to :meth:`solve`
        up to the order of the block sums.
        """
        k = int(self.n_components or n_clusters)
        dy = chunks.sum(anchor_degrees)
        cols = np.flatnonzero(dy > 0)
        k_eff = int(min(k, cols.size))
        if k_eff == 0:
            rep = np.zeros((dy.size, 1))
            info = {"eigenvalues": np.zeros(1), "gamma": np.zeros(1),
                    "unused_representatives": int(dy.size)}
        else:
            E = chunks.sum(_transfer_gram, cols)
            rep, v, lam, gamma = representative_side(E, dy, cols, k_eff,
                                                     random_state=ctx.seed_for("solver.tcut"))
            if not self.eigen_scaling:  # as in solve: D_X⁻¹ B v, no 1 / (1 - γ)
                rep = rep * (1.0 - gamma)[None, :]
            info = {"eigenvalues": lam, "gamma": gamma,
                    "unused_representatives": int(dy.size - cols.size)}
        info["chunked"] = {"cols": cols}
        return graphclust.Solution(embedding=np.zeros((0, rep.shape[1])),
                                   anchor_embedding=rep, info=info)

    def lift_rows(self, solution, block) -> graphclust.Solution:
        """The embedding rows of one block, ``D_{X,b}⁻¹ B_b rep`` (:meth:`solve_chunked`)."""
        cols = solution.info["chunked"]["cols"]
        rep = solution.anchor_embedding
        if cols.size == 0:
            return graphclust.Solution(embedding=np.zeros((block.Z.shape[0], rep.shape[1])))
        PX = point_transfer(block.Z, cols)
        return graphclust.Solution(embedding=np.asarray(PX @ rep[cols]))


def _transfer_gram(block, cols):
    """``B_bᵀ D_{X,b}⁻¹ B_b`` on the active columns (chunk function)."""
    B = sp.csr_array(block.Z, dtype=np.float64)
    Ba = B[:, cols] if cols.size < B.shape[1] else B
    return sp.csr_array(Ba.T @ point_transfer(B, cols))
