"""UMAP's fuzzy kNN graph (fuzzy simplicial set 1-skeleton)."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

import graphclust
from graphclust.numerics import as_dense_float
from graphclust_plugins.manifold._fuzzy import (
    directed_graph,
    fuzzy_union,
    membership_weights,
    smooth_distances,
)
from graphclust_plugins.manifold._neighbors import (
    approx_neighbors,
    choose_method,
    exact_neighbors,
    feature_distances,
    project,
    shared_index,
)
from graphclust_plugins.manifold._nndescent import N_TREES, nn_descent

#: Public: the graph part, and its ``"approx"`` search for callers outside the bundle
#: (the benchmarks time and score :func:`nn_descent` against pynndescent).
__all__ = ["FuzzyKNNGraph", "N_TREES", "nn_descent"]


@graphclust.part
class FuzzyKNNGraph(graphclust.GraphBuilder):
    """Fuzzy kNN graph of UMAP: local-distance memberships, fuzzy union.

    McInnes, Healy & Melville (2018), UMAP, arXiv:1802.03426, Sec. 3.1 and Eqs. (1)–(2)
    of its computational description. For each point ``i`` with neighbours ``j`` at
    distances ``d_ij``:

    * ``ρ_i`` = distance to the nearest neighbour at positive distance (0 when every
      neighbour is a duplicate);
    * ``σ_i`` solves ``Σ_j exp(−max(0, d_ij − ρ_i)/σ_i) = log2(n_neighbors)`` by
      bisection, floored at ``1e-3`` × the mean neighbour distance (UMAP's rule; it binds
      only when the neighbours are all at about ``ρ_i``);
    * directed memberships ``w_ij = exp(−max(0, d_ij − ρ_i)/σ_i)`` in ``[0, 1]``;
    * the fuzzy union ``A = W + Wᵀ − W∘Wᵀ`` (symmetric, entries in ``[0, 1]``, no
      self-loops).

    ``n_neighbors`` counts the point itself, as UMAP's does: each point has
    ``n_neighbors − 1`` other neighbours, so the graph equals umap-learn's
    ``fuzzy_simplicial_set`` for the same ``n_neighbors``. It is clamped to ``n`` on
    tiny inputs (``graph.info["n_neighbors"]``).

    Neighbours: ``method="exact"`` is blocked brute force through BLAS
    (:func:`graphclust.numerics.knn`); ``"approx"`` is NN-descent (Dong, Charikar & Li
    2011) from a random-projection forest, seeded from the run, on all threads and with
    the same lists for any thread count (:func:`nn_descent`, public in this module;
    its numba kernels compile once and are cached); ``"auto"`` is exact while
    ``n²·d <= 1e12`` (about 50 s of brute force on a 2-core machine) and NN-descent
    above. The choice and its reason
    are in ``graph.info["method"]`` / ``["method_rule"]`` (the estimator's
    ``resolved_spec_`` shows the method). ``metric="cosine"`` uses ``1 − cos``
    (exact: on unit-length rows).

    ``pca_components``: search (and measure ``d_ij``) on the leading principal components
    of the rows (:func:`graphclust.numerics.fit_pca`) instead of all ``d`` features when
    that is fewer than ``d``; NN-descent's cost is linear in the dimension (MNIST-70k,
    784 → 50: the search about 3 x faster, see ``docs/auto.rst``, rule 7). With
    ``distances="features"`` the components only *find* each row's ``k − 1`` candidates:
    their ``d_ij`` are then measured on all ``d`` features and the list re-sorted
    (``O(n·k·d)`` more), so the memberships see the features' distances, not the
    smaller ones of a projection that dropped variance. Inside
    ``on-sample`` with a ``sample-knn`` placement that already indexed the same sample
    rows (pynndescent's index, or ``method="descent"``'s NN-descent graph; same metric,
    projection and at least ``n_neighbors``), the
    graph is read off that index's own neighbour lists instead of building a second
    index (``graph.info["shared_index"]``).

    Costs: no ``n x n`` array is ever formed. Memory ``O(n·(d + k))``: the data, the
    ``n x k`` neighbour lists and a graph of at most ``2nk`` entries; the exact search
    works in row blocks (``O(n²·d)`` time), NN-descent in about ``O(n^1.14·k·d)``.
    """

    name = "fuzzy-knn"
    produces = "affinity"
    needs_anchors = False

    n_neighbors: int = graphclust.param(
        15, doc="Neighbourhood size k, counting the point itself as UMAP does "
        "(σ_i solves Σ_j w_ij = log2 k over the k − 1 others).",
        check=graphclust.integer(2))
    metric: str = graphclust.param("euclidean", doc="Distance d_ij: euclidean or cosine "
                                   "(1 − cos).", check=graphclust.one_of("euclidean", "cosine"))
    method: str = graphclust.param(
        "auto", doc="Neighbour search: exact brute force, approx (NN-descent), "
        "or auto (exact up to n²·d = 1e12).",
        check=graphclust.one_of("auto", "exact", "approx"))
    pca_components: int | None = graphclust.param(
        None, doc="Search on this many leading principal components (fit on the rows) "
        "instead of all d features; None = all.",
        check=graphclust.optional(graphclust.integer(1)))
    distances: str = graphclust.param(
        "searched", doc="With pca_components: d_ij measured on the components searched "
        "(searched) or on the features, the candidates re-sorted (features).",
        check=graphclust.one_of("searched", "features"))

    def build(self, X, anchors, ctx):
        X = as_dense_float(X)
        n, d = X.shape
        if n < 2:
            return graphclust.AffinityGraph(sp.csr_array((n, n)),
                                            info={"n_neighbors": 1, "method": "exact",
                                                  "method_rule": "n < 2: no neighbours"})
        size = int(min(self.n_neighbors, n))
        k = size - 1
        # three steps for the stage's total: the search, the weights, the fuzzy union
        progress = ctx.progress
        progress.start(3, "neighbour search")
        pca = None if self.pca_components is None else int(self.pca_components)
        method, rule = choose_method(n, d if pca is None else min(d, pca), self.method)
        shared = shared_index(X, size, self.metric, pca) if method == "approx" else None
        if shared is not None:
            idx, dist = shared.neighbors(k)
            searched = d if shared.projection is None else shared.projection.n_components
        else:
            V, proj = project(X, pca)
            searched = V.shape[1]
            if method == "approx":
                idx, dist = approx_neighbors(np.asarray(V, dtype=np.float32), k, self.metric,
                                             ctx.seed_for("graph.fuzzy-knn"))
            else:
                idx, dist = exact_neighbors(V, k, self.metric)
        measured = searched
        if self.distances == "features" and searched < d:
            idx, dist = feature_distances(X, idx, self.metric)
            measured = d
        progress.step(1, 3, f"{method} neighbours")
        rho, sigma, floored = smooth_distances(dist, math.log2(size))
        W = directed_graph(idx, membership_weights(dist, rho, sigma), n)
        progress.step(2, 3, "membership weights")
        info = {"n_neighbors": size, "metric": self.metric, "method": method,
                "method_rule": rule, "searched_dims": int(searched),
                "measured_dims": int(measured),
                "shared_index": shared is not None, "sigma_median": float(np.median(sigma)),
                "rho_median": float(np.median(rho)), "sigma_floored": int(floored.sum())}
        union = fuzzy_union(W)
        progress.step(3, 3, "fuzzy union")
        progress.end()
        return graphclust.AffinityGraph(union, info=info)
