"""Rows placed among a sample: each row's fuzzy memberships to its nearest sample rows."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import scipy.sparse as sp

import graphclust
from graphclust.numerics import as_dense_float
from graphclust_plugins.manifold._neighbors import project, sample_index
from graphclust_plugins.manifold._place import (exact_search, index_search, match_rows,
                                                memberships, row_keys)
from graphclust_plugins.manifold._projections import scores
from graphclust_plugins.manifold._query import DescentIndex, descent_index, place_search

#: ``method="auto"`` searches exactly while ``S · d`` (the brute-force work per placed row)
#: stays at or below this, and through a pynndescent index above it.
PLACE_EXACT_MAX = 2e6
#: Rows placed per step (their projection, search and distances): bounds the copies of
#: the rows to place at ``PLACE_BLOCK x d`` values whatever ``n``.
PLACE_BLOCK = 8192


@attrs.frozen(eq=False)
class SampleKNNState(graphclust.FittedState):
    """What ``sample-knn`` keeps in ``AnchorGraph.state`` to place rows.

    Attributes
    ----------
    n_neighbors : int
        Sample rows each placed row is linked to (after clamping to ``S``).
    method : str
        ``"exact"``, ``"approx"`` or ``"descent"``: the search for rows that are not
        sample rows.
    keys, order : ndarray
        :func:`row_keys` of the sample rows and its stable argsort (duplicate matching).
    index : object or None
        The pynndescent index of the sample (``"approx"`` with rows to place), the
        :class:`~graphclust_plugins.manifold._query.DescentIndex` (``"descent"``), else
        None.
    projection : Projection or None
        The sample's principal-component projection the search runs in (None: the
        features).
    search_rows : ndarray of shape (S, p) or None
        The sample rows in the searched space (the projected sample, or the sample
        itself); None when no row is searched.
    """

    n_neighbors: int
    method: str
    keys: np.ndarray
    order: np.ndarray
    index: Any = None
    projection: Any = None
    search_rows: np.ndarray | None = None


@graphclust.part
class SampleKNNGraph(graphclust.GraphBuilder):
    """Each row linked to its nearest sample rows by UMAP memberships (rows of ``Z``).

    The anchors are a sample of the rows (``sample``); this builder places every row
    among them, row by row, as umap-learn's ``transform`` places new points (McInnes,
    Healy & Melville 2018, arXiv:1802.03426, Sec. 3.1 and umap-learn's ``transform``
    initialisation): the ``n_neighbors`` nearest sample rows at distances ``d_j``,
    memberships ``w_j = exp(−max(0, d_j − ρ)/σ)`` with ``ρ`` the smallest positive
    distance and ``σ`` solving ``Σ_j w_j = log2(n_neighbors + 1)``, normalised to sum to
    one. ``Z @ F`` is then the membership-weighted mean of per-sample values ``F``: a
    position in the sample's layout, or a vote of the sample's labels (``on-sample``).

    Rules
    -----
    * A row bytewise equal to a sample row (the sample's own rows, and their exact
      duplicates) is that sample row: its row of ``Z`` is 1 there (the first such row
      in sample order) and 0 elsewhere. With ``n <= S`` every row is a sample row and
      ``Z`` is the identity, so a fit-on-a-sample pipeline is the fit on all rows.
    * Other rows: ``method="exact"`` is blocked brute force (BLAS) against the ``S``
      sample rows; ``"approx"`` queries a pynndescent index of the sample (built once,
      seeded from ``ctx.seed_for("graph.sample-knn")``), **one row per query** so a row's
      neighbours never depend on the rows searched with it; ``"auto"`` is exact while
      ``S·d <= 2e6`` (about 0.1 ms of brute force a row) and approximate above. The
      index is built only when some row is not a sample row (``n > S``).
    * ``method="descent"``: graphclust's NN-descent graph of the sample (the same lists
      on any thread count), walked by each row from ``ceil(sqrt(S))`` fixed pivots
      keeping a pool of ``2k`` sample rows (:mod:`graphclust_plugins.manifold._query`,
      one row per task: the same neighbours on any thread count, block and worker); the
      pool is measured on the features (float64) and the ``k`` nearest kept, so with
      ``pca_components`` the components only *find* the candidates (``fuzzy-knn``'s
      ``distances="features"``). The sample's ``fuzzy-knn`` asking for the same
      projection and metric reads its lists from this graph.
    * The ``k`` kept distances are recomputed row by row in float64 (``‖x − u_j‖``), so
      the weights do not depend on how BLAS blocked the search.
    * ``pca_components``: the search and the distances use the leading principal
      components of the sample (:func:`graphclust.numerics.fit_pca`, fitted once on the
      ``S`` rows), each placed row projected with them (row-local); the approximate
      index is the one ``on-sample``'s ``fuzzy-knn`` reads its graph from when it asks
      for the same projection, metric and at most ``max(n_neighbors, 15) + 1``
      neighbours (one NNDescent over the sample, not two).
    * Rows are placed :data:`PLACE_BLOCK` at a time: beyond the sample, the index and
      ``Z``, memory is ``O(PLACE_BLOCK·d)``.

    Costs: matching ``O(n·d)``; exact search ``O(n·S·d)`` time, ``O(block·S)`` memory;
    approximate search about ``O(n·log S·d)`` time after an ``O(S^1.14·d)`` index build
    (global-small); ``descent``: NN-descent of the ``S`` rows (about ``O(S^1.14·p)``)
    and, a row, ``ceil(sqrt(S))`` pivot distances and the walk's (both in ``p``
    dimensions) plus ``2k`` distances on the features; ``Z`` has ``n·n_neighbors``
    entries. Nothing ``n x n`` or dense
    ``n x S``. Every step after the index is row-local: the chunked execution builds the
    index once (:meth:`prepare_chunked`, ``S``-sized) and places each block by
    :meth:`transform`, giving every row exactly the row it gets in memory.
    """

    name = "sample-knn"
    #: The placement graph's spectrum is that of rows tied to sample rows, not the
    #: data's: it offers no eigengap estimate of k (the nested rounding of ``on-sample``
    #: cuts the sample; give ``n_clusters`` with this graph).
    estimates_k = None
    produces = "anchor"
    needs_anchors = True
    chunkwise = True  # prepare_chunked: the sample's index; transform: rows per block

    n_neighbors: int = graphclust.param(
        15, doc="Nearest sample rows a row is placed by (umap-learn's transform uses the "
        "graph's n_neighbors); 1 = the nearest sample row's values.",
        check=graphclust.integer(1))
    metric: str = graphclust.param("euclidean", doc="Distance: euclidean or cosine (1 − cos).",
                                   check=graphclust.one_of("euclidean", "cosine"))
    method: str = graphclust.param(
        "auto", doc="Search for rows that are not sample rows: exact brute force, approx "
        "(pynndescent index of the sample, one query a row), descent (graphclust's "
        "NN-descent graph of the sample walked by each row, the candidates measured on "
        "the features), or auto (exact while S·d <= 2e6, approx above).",
        check=graphclust.one_of("auto", "exact", "approx", "descent"))
    pca_components: int | None = graphclust.param(
        None, doc="Search on this many leading principal components of the sample instead "
        "of all d features; None = all.", check=graphclust.optional(graphclust.integer(1)))

    def _method(self, m: int, d: int) -> str:
        if self.method == "descent" and m < 2:
            return "exact"  # one sample row: no graph to walk, every row its neighbour
        if self.method != "auto":
            return self.method
        return "exact" if float(m) * float(d) <= PLACE_EXACT_MAX else "approx"

    def _prepare(self, anchors, n: int, ctx) -> graphclust.AnchorGraph:
        if anchors is None:
            raise ValueError(f"graph {self.name!r} needs anchors (the sample)")
        U = np.ascontiguousarray(as_dense_float(anchors.points))
        m, d = U.shape
        k = int(min(self.n_neighbors, m))
        pca = None if self.pca_components is None else int(self.pca_components)
        method = self._method(m, d if pca is None else min(d, pca))
        keys = row_keys(U)
        order = np.argsort(keys, kind="stable")
        index = proj = V = None
        if n > m and method == "approx":
            shared = sample_index(U, max(k, 15) + 1, self.metric, pca,
                                  ctx.seed_for("graph.sample-knn"))
            index, proj = shared.index, shared.projection
            V = U if proj is None else scores(proj, U)
        elif n > m and method == "descent":
            index = descent_index(U, max(k, 15) + 1, self.metric, pca,
                                  ctx.seed_for("graph.sample-knn"))
            proj, V = index.projection, index.rows
        elif n > m:
            V, proj = project(U, pca)
        state = SampleKNNState(n_neighbors=k, method=method, keys=keys, order=order,
                               index=index, projection=proj, search_rows=V)
        anchors = attrs.evolve(anchors, points=U)
        return graphclust.AnchorGraph(sp.csr_array((0, m)), anchors=anchors, state=state,
                                      info={"n_neighbors": k, "method": method,
                                            "sample_size": m,
                                            "searched_dims": int(d if proj is None
                                                                 else proj.n_components)})

    def build(self, X, anchors, ctx):
        X = as_dense_float(X)
        template = self._prepare(anchors, X.shape[0], ctx)
        Z, placed = self._rows(X, template)
        return graphclust.AnchorGraph(Z, anchors=template.anchors, state=template.state,
                                      info={**template.info, "placed": placed})

    def prepare_chunked(self, anchors, chunks, ctx):
        """The sample's keys and (``approx``, ``n > S``) its index: ``S``-sized, no pass
        over the blocks."""
        return self._prepare(anchors, int(chunks.n), ctx)

    def transform(self, X_new, graph):
        return self._rows(X_new, graph)[0]

    def _rows(self, X_new, graph):
        """Rows of ``Z`` and how many rows were searched (not sample rows)."""
        state = graphclust.fitted_state(graph, SampleKNNState, f"graph {self.name!r}")
        U = np.asarray(graph.anchors.points)
        X_new = as_dense_float(X_new)
        n, m = X_new.shape[0], U.shape[0]
        same = match_rows(X_new, U, state.keys, state.order)
        rest = np.flatnonzero(same < 0)
        hit = np.flatnonzero(same >= 0)
        rows, cols, vals = [hit], [same[hit]], [np.ones(hit.size)]
        if rest.size:
            V, proj = state.search_rows, state.projection
            if V is None:  # fitted with every row a sample row (predict): project now
                pca = None if self.pca_components is None else int(self.pca_components)
                V, proj = project(U, pca)
            k = state.n_neighbors
            for lo in range(0, rest.size, PLACE_BLOCK):
                block = rest[lo:lo + PLACE_BLOCK]
                Xb = X_new[block]
                if isinstance(state.index, DescentIndex):
                    idx, dist = place_search(Xb, U, state.index, k)
                else:
                    if proj is not None:
                        Xb = scores(proj, Xb)
                    if state.index is not None:
                        idx, _ = index_search(Xb, state.index, k)
                    else:
                        idx, _ = exact_search(Xb, V, k, self.metric)
                    dist = _row_distances(Xb, V, idx, self.metric)
                Zb = memberships(idx, dist, m).tocoo()
                rows.append(block[Zb.row])
                cols.append(Zb.col)
                vals.append(Zb.data)
        Z = sp.csr_array((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n, m))
        Z.sum_duplicates()
        return Z, int(rest.size)


def _row_distances(X: np.ndarray, U: np.ndarray, idx: np.ndarray, metric: str) -> np.ndarray:
    """``d(x_i, u_idx[i, j])`` row by row in float64 (``inf`` where ``idx < 0``)."""
    X = np.asarray(X, dtype=np.float64)
    out = np.full(idx.shape, np.inf)
    for j in range(idx.shape[1]):
        ok = idx[:, j] >= 0
        if not ok.any():
            continue
        A = X[ok]
        B = np.asarray(U[idx[ok, j]], dtype=np.float64)
        if metric == "cosine":
            na = np.sqrt(np.einsum("ij,ij->i", A, A))
            nb = np.sqrt(np.einsum("ij,ij->i", B, B))
            denom = na * nb
            cos = np.divide(np.einsum("ij,ij->i", A, B), denom, out=np.zeros_like(denom),
                            where=denom > 0)
            out[ok, j] = np.maximum(1.0 - cos, 0.0)
        else:
            diff = A - B
            out[ok, j] = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    return out
