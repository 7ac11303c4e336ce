"""Polynomial-kernel p-nearest-neighbour graph (Mizutani, Eq. 1 and Section 2)."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

import graphclust
from graphclust.numerics import (as_float, default_block_size, knn, nearest_anchors,
                                 normalize_rows, smallest_per_row)

__all__ = ["PolyKnnGraph", "poly_knn_adjacency"]


def _kernel(t: np.ndarray, b: float, c: int) -> np.ndarray:
    return t if (b == 0 and c == 1) else (t + b) ** c


def _nearest_by_distance(X: np.ndarray, p: int, b: float, c: int, include_self: bool):
    """Indices of each point's ``p`` Euclidean nearest points, with kernel values.

    With ``include_self`` the point itself is the first of its ``p`` (distance 0; it
    wins ties with duplicates of itself) and ``p - 1`` others follow.
    """
    n = X.shape[0]
    if include_self:
        self_idx = np.arange(n)[:, None]
        if p > 1:
            others, _ = knn(X, p - 1, metric="sqeuclidean")
            idx = np.hstack([self_idx, others])
        else:
            idx = self_idx
    else:
        idx, _ = knn(X, p, metric="sqeuclidean")
    return idx, _kernel(_pair_inner(X, idx), b, c)


def _pair_inner(X: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``out[i, j] = x_iᵀ x_{idx[i, j]}`` in float64 without an ``n·k x d`` temporary:
    one gathered column at a time for few neighbours, row blocks of the Gram matrix
    for many (``p`` in the hundreds, Table 2)."""
    n, k = idx.shape
    Xd = X.astype(np.float64, copy=False)
    out = np.empty((n, k))
    if k <= 64:
        for j in range(k):
            out[:, j] = np.einsum("ij,ij->i", Xd, Xd[idx[:, j]])
        return out
    block = max(1, min(n, int(2e7 // max(n, 1))))
    for s in range(0, n, block):
        e = min(n, s + block)
        out[s:e] = np.take_along_axis(Xd[s:e] @ Xd.T, idx[s:e], axis=1)
    return out


def _top_similar(X: np.ndarray, p: int, b: float, c: int, include_self: bool):
    """Indices and kernel values of each point's ``p`` most similar points."""
    n = X.shape[0]
    monotone = (c % 2 == 1) or float(X.min(initial=0.0)) >= 0.0
    if monotone:
        # (t + b)^c increases with t (odd c, or all inner products >= 0 >= -b):
        # the p most similar points are the p largest inner products.
        if include_self:
            idx, ip = nearest_anchors(X, X, p, metric="inner_product")
        else:
            idx, ip = knn(X, p, metric="inner_product")
        return idx, _kernel(ip, b, c)
    # Even c with mixed-sign inner products: rank by the kernel itself, in row blocks.
    Xw = as_float(X)
    block = default_block_size(n)
    idx_out = np.empty((n, p), dtype=np.int64)
    val_out = np.empty((n, p))
    for s in range(0, n, block):
        e = min(n, s + block)
        K = _kernel((Xw[s:e] @ Xw.T).astype(np.float64), b, c)
        if not include_self:
            K[np.arange(e - s), np.arange(s, e)] = -np.inf
        idx_out[s:e], val_out[s:e] = smallest_per_row(K, p, largest=True)
    return idx_out, val_out


def poly_knn_adjacency(X: np.ndarray, p: int, b: float = 0.0, c: int = 1,
                       include_self: bool = False, neighbors: str = "similarity") -> sp.csr_array:
    """The adjacency ``K`` of Section 2: ``k_ij = (a_iᵀa_j + b)^c`` when ``a_i ∈ N_p(a_j)``
    or ``a_j ∈ N_p(a_i)``, else 0. Negative similarities are dropped (no edge)."""
    n = X.shape[0]
    select = _top_similar if neighbors == "similarity" else _nearest_by_distance
    idx, vals = select(X, p, b, c, include_self)
    vals = np.maximum(vals, 0.0)  # the paper's similarity is nonnegative; k <= 0 => no edge
    rows = np.repeat(np.arange(n), idx.shape[1])
    S = sp.csr_array((vals.ravel(), (rows, idx.ravel())), shape=(n, n))
    S.sum_duplicates()
    # k is symmetric, so an edge chosen from either side carries the same weight:
    # the elementwise maximum keeps it once ("either side chose it").
    K = S.maximum(S.T).tocsr()
    K.eliminate_zeros()
    return sp.csr_array(K)


@graphclust.part
class PolyKnnGraph(graphclust.GraphBuilder):
    """Polynomial-kernel p-nearest-neighbour graph: weights (a_iᵀa_j + b)^c (Eq. 1).

    Section 2: each point ``a_i`` has a *p-nearest neighbour set* ``N_p(a_i)``, "the
    top p data points with high similarity to a_i as measured by a similarity function
    k"; the edge ``ij`` is kept when ``a_i ∈ N_p(a_j)`` or ``a_j ∈ N_p(a_i)`` ("or"
    symmetrisation) with the kernel value ``k_ij = (a_iᵀa_j + b)^c`` as its weight (not
    1). With the defaults ``b = 0, c = 1`` the similarity is the inner product, as in all
    of the paper's experiments. By default a point is not its own neighbour (``p``
    others, no self-loop); ``include_self=True`` lets ``a_i`` count among its own ``p``
    (``p = m`` then gives ``K = AᵀA`` of Eq. 8, Section 4.3).

    ``normalize=True`` scales every point to unit Euclidean length before Eq. (1). The
    paper's Section 7.1 describes raw pixel values, but its numbers are those of
    unit-length data: with ``normalize=True`` we get Table 2 at all four ``p``, MNIST
    of Tables 3–4 and MNIST of Table 5 to three decimals, and with raw values none of
    them (``docs/bundles/ncer.rst``, "Reproduction"); the ``ncer`` preset sets it. On
    unit vectors the inner product is the cosine, and "most similar" = "nearest in
    Euclidean distance".

    ``neighbors="distance"`` is a variant: the ``p`` nearest points in Euclidean
    distance (the kernel-induced distance of the inner product), still weighted by the
    kernel; with ``include_self`` the point itself comes first (distance 0, before any
    duplicate). Neighbours come from :func:`graphclust.numerics.knn` (inner-product
    metric when the kernel is monotone in the inner product: odd ``c`` or nonnegative
    data), else from a blocked brute-force kernel evaluation.

    Rules for degenerate input (documented deviations): a nonpositive kernel value is
    no edge (the paper assumes ``k >= 0``); an all-zero row stays zero under
    ``normalize``; an *isolated* vertex (zero degree, e.g. an all-zero row with
    ``b = 0``) is, by the default ``on_isolated="self-loop"``, given a self-loop of
    weight 1 and a warning — it then forms its own connected component (its
    normalized-Laplacian row is zero), which is the paper's advice of setting such a
    point apart (Section 2: "such a data point should be removed") without changing
    ``n``; ``on_isolated="raise"`` raises :class:`graphclust.InputError`.
    """

    name = "poly-knn"
    produces = graphclust.GraphKind.AFFINITY
    needs_anchors = False

    n_neighbors: int = graphclust.param(5, doc="Neighbour number p (Section 2; 5 in Section 7.3).",
                                        check=graphclust.integer(1))
    b: float = graphclust.param(0.0, doc="Offset b >= 0 of the polynomial kernel (Eq. 1).",
                                check=graphclust.real(0))
    c: int = graphclust.param(1, doc="Degree c >= 1 of the polynomial kernel (Eq. 1).",
                              check=graphclust.integer(1))
    include_self: bool = graphclust.param(
        False, doc="a_i belongs to its own N_p(a_i) (p = m gives K = AᵀA, Section 4.3).",
        check=graphclust.boolean)
    neighbors: str = graphclust.param(
        "similarity", doc="Who is nearest: 'similarity' (largest kernel value, Section 2) or "
        "'distance' (Euclidean, the kernel-induced distance of the inner product).",
        check=graphclust.one_of("similarity", "distance"))
    normalize: bool = graphclust.param(
        False, doc="Scale each point to unit Euclidean length first (the data of the "
        "paper's experiments, Tables 2-5; set by the ncer preset).",
        check=graphclust.boolean)
    on_isolated: str = graphclust.param(
        "self-loop", doc="Isolated vertex: 'self-loop' (weight 1, own component) or 'raise'.",
        check=graphclust.one_of("self-loop", "raise"))

    def build(self, X, anchors, ctx):
        X = as_float(X)
        n = X.shape[0]
        if n < 2:
            raise graphclust.InputError(f"poly-knn needs at least 2 samples, got n_samples = {n}")
        if self.normalize:
            X = normalize_rows(X)
        p = min(int(self.n_neighbors), n if self.include_self else n - 1)
        K = poly_knn_adjacency(X, p, float(self.b), int(self.c), bool(self.include_self),
                               self.neighbors)
        deg = np.asarray(K.sum(axis=1)).ravel()
        isolated = np.flatnonzero(deg <= 0)
        if isolated.size:
            msg = (f"poly-knn: {isolated.size} isolated vertex(es) (no positive similarity to "
                   f"any chosen neighbour), e.g. point {int(isolated[0])}")
            if self.on_isolated == "raise":
                raise graphclust.InputError(msg + "; remove them or use on_isolated='self-loop'")
            warnings.warn(msg + "; each gets a self-loop of weight 1 (its own component)",
                          graphclust.GraphClustWarning, stacklevel=2)
            K = sp.csr_array(K + sp.csr_array((np.ones(isolated.size), (isolated, isolated)),
                                              shape=(n, n)))
        info = {"n_neighbors": p, "neighbors": self.neighbors, "include_self": bool(self.include_self),
                "normalize": bool(self.normalize), "b": float(self.b), "c": int(self.c),
                "n_isolated": int(isolated.size)}
        return graphclust.AffinityGraph(K, info=info)
