"""Exact (or approximate) k-nearest-neighbour affinity graph."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import graphclust
from graphclust.numerics import resolve_knn_method
from graphclust.numerics import fit_pca, float_rows, knn, rows_by_zeros
from graphclust.numerics.distances import sparse_knn_width


def local_scale_sigma(dist_sq: np.ndarray, local_scale: int) -> np.ndarray:
    """Self-tuning bandwidths σ_i = distance to the ``local_scale``-th neighbour.

    ``dist_sq`` holds sorted squared neighbour distances (n x k); when
    ``local_scale > k`` the k-th (last) neighbour is used. A zero σ_i (duplicates)
    is replaced by the smallest positive σ; if none is positive, σ = 1.
    """
    col = min(local_scale, dist_sq.shape[1]) - 1
    sigma = np.sqrt(np.maximum(dist_sq[:, col], 0.0))
    pos = sigma > 0
    sigma[~pos] = sigma[pos].min() if pos.any() else 1.0
    return sigma


def symmetrize(W: sp.csr_array, rule: str) -> sp.csr_array:
    """Symmetrise a directed kNN graph: ``or`` = max(W, Wᵀ), ``and`` = min(W, Wᵀ),
    ``mean`` = (W + Wᵀ) / 2."""
    Wt = sp.csr_array(W.T)
    if rule == "or":
        A = W.maximum(Wt)
    elif rule == "and":
        A = W.minimum(Wt)
    else:
        A = (W + Wt) * 0.5
    A = sp.csr_array(A)
    A.eliminate_zeros()
    return A


@graphclust.part
class KNNGraph(graphclust.GraphBuilder):
    """k-nearest-neighbour affinity graph, Gaussian (self-tuning) or binary weights.

    Each point is linked to its ``n_neighbors`` nearest other points (squared Euclidean
    distances; the point itself excluded). Weights:

    * ``"gaussian"``: self-tuning kernel of Zelnik-Manor & Perona (2004),
      ``w_ij = exp(-‖x_i − x_j‖² / (σ_i σ_j))`` with ``σ_i`` the distance of ``x_i`` to
      its ``local_scale``-th nearest neighbour (7 in the paper; the last neighbour when
      ``n_neighbors < local_scale``). A zero σ_i (≥ ``local_scale`` duplicates of a
      point) is replaced by the smallest positive σ; if all are zero, σ = 1.
    * ``"binary"``: ``w_ij = 1``.

    The directed graph is then symmetrised: ``"or"`` keeps an edge found from either
    end (max), ``"and"`` only mutual neighbours (min), ``"mean"`` averages
    (one-directional edges get half weight, as scikit-learn's ``0.5 (A + Aᵀ)``).
    Unlike scikit-learn's connectivity graph no self-loops are added.

    ``method="exact"`` is brute force through BLAS (faiss' flat index when installed);
    ``"approx"`` uses faiss HNSW (``pip install graphclust[ann]``) for large n;
    ``"auto"`` (the default) is exact up to ``n²·d = 1e13`` and approximate above, by
    the size rule of ``graphclust.numerics.knn_size`` (the choice is in ``graph.info``).
    ``n_neighbors`` is clamped to ``n - 1`` on tiny inputs. Duplicate points are legal
    (distance 0, weight 1).

    Sparse ``X`` (tf-idf) stays sparse: the exact search takes ``X_b Xᵀ`` per row block,
    the approximate one is pynndescent's on the CSR rows (no faiss needed), and the size
    rule counts ``d`` as the mean nonzeros per row (at least 200); with
    ``pca_components`` the components are those of the implicitly centred sparse
    matrix (:func:`graphclust.numerics.fit_pca`). Cosine neighbours: ``scale = "l2"``
    first (unit rows: squared distance ``2 − 2 cos``).
    """

    name = "knn"
    produces = graphclust.GraphKind.AFFINITY
    needs_anchors = False
    accepts_sparse = True  # sparse rows: exact blocked sparse products or pynndescent

    n_neighbors: int = graphclust.param(10, doc="Neighbours per point k.",
                                        check=graphclust.integer(1))
    weight: str = graphclust.param("gaussian", doc="Edge weights: self-tuning Gaussian or 1.",
                                   check=graphclust.one_of("gaussian", "binary"))
    local_scale: int = graphclust.param(7, doc="Neighbour whose distance is σ_i "
                                        "(Zelnik-Manor & Perona use 7).",
                                        check=graphclust.integer(1))
    symmetrize: str = graphclust.param("or", doc="Symmetrisation: or (max), and (min), mean.",
                                       check=graphclust.one_of("or", "and", "mean"))
    method: str = graphclust.param("auto", doc="Neighbour search: exact brute force, "
                                   "approximate faiss HNSW, or auto (exact up to n²·d = 1e13).",
                                   check=graphclust.one_of("auto", "exact", "approx"))
    pca_components: int | None = graphclust.param(
        None, doc="Search and weigh the neighbours on this many leading principal "
        "components (graphclust.numerics.fit_pca) instead of all d features; None = all.",
        check=graphclust.optional(graphclust.integer(1)))

    def build(self, X, anchors, ctx):
        if self.pca_components is not None and self.pca_components < np.shape(X)[1] \
                and np.shape(X)[0] > self.pca_components:
            X = float_rows(X)
            X = fit_pca(X, int(self.pca_components)).transform(X)
        else:  # rows mostly zero are searched as CSR, whatever container they came in
            X = rows_by_zeros(X)
        n = X.shape[0]
        if n < 2:
            return graphclust.AffinityGraph(sp.csr_array((n, n)),
                                            info={"n_neighbors": 0, "weight": self.weight})
        k = int(min(self.n_neighbors, n - 1))
        if sp.issparse(X):
            method, rule = resolve_knn_method(n, sparse_knn_width(X), self.method,
                                              sparse=True)
        else:
            method, rule = resolve_knn_method(n, X.shape[1], self.method)
        idx, dsq = knn(X, k, method=method, progress=ctx.progress)
        rows = np.repeat(np.arange(n), k)
        cols = idx.ravel()
        info = {"n_neighbors": k, "weight": self.weight, "symmetrize": self.symmetrize,
                "method": method, "method_rule": rule}
        if self.weight == "gaussian":
            sigma = local_scale_sigma(dsq, self.local_scale)
            vals = np.exp(-dsq.ravel() / (sigma[rows] * sigma[cols]))
            info["sigma_median"] = float(np.median(sigma))
        else:
            vals = np.ones(rows.size)
        W = sp.csr_array((vals, (rows, cols)), shape=(n, n))
        return graphclust.AffinityGraph(symmetrize(W, self.symmetrize), info=info)
