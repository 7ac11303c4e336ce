"""Genie rounding of an embedding: minimum spanning tree with a Gini cap on sizes."""

from __future__ import annotations

from typing import Any

import numpy as np

import graphclust
from graphclust.numerics import as_dense_float, fit_rows, nearest_anchors, normalize_rows
from graphclust_plugins.genie._genie import (distinct_rows, first_seen, genie_partition,
                                             nearest_labels)

#: Fitted rows searched for the confidence margin (:meth:`GenieRounding.confidence`):
#: UMAP's and HDBSCAN's usual neighbourhood of 15.
MARGIN_NEIGHBORS = 15
#: The anchor selector of the anchored path when ``anchors`` is not given.
DEFAULT_ANCHORS = {"name": "kmeans", "n_anchors": 2000, "max_iter": 10}


@graphclust.part
class GenieRounding(graphclust.Rounding):
    """Genie clustering (genieclust) of the embedding rows; anchors above ``max_exact``.

    Genie (Gagolewski, Bartoszuk & Cena 2016, Information Sciences 363) is single
    linkage on the Euclidean minimum spanning tree with one change: while the Gini index
    of the cluster sizes exceeds ``gini_threshold``, the next merge must involve a
    cluster of the smallest size (joined to its nearest neighbour). Chained shapes
    (spirals, rings, moons) are kept whole as in single linkage, while outliers and
    thin noise bridges cannot leave ``k - 1`` singleton clusters. It runs after any
    solver that produces an embedding (``features`` for the raw features, a spectral
    embedding, a layout).

    Rules
    -----
    * Exactly ``min(n_clusters, distinct rows)`` clusters, labels ``0..k'-1`` numbered
      in the order they first appear; every point is labelled (Genie with ``M = 1``:
      the plain distance, so no noise points).
    * Identical rows share a label: Genie runs on the distinct rows (sorted), so the
      result does not depend on the row order of ties.
    * ``n <= max_exact``: Genie on all (distinct) rows. Cost: genieclust's exact
      Euclidean MST (``quitefastmst``; near ``O(n log n)`` in a few dimensions, at
      worst ``O(n²)`` time, ``O(n)`` memory) and the Genie merges (``O(n √n)``).
    * ``n > max_exact``: the ``anchors`` selector picks ``m`` anchors of the embedding
      (default k-means, ``m = 2000``), Genie clusters the anchors, and every row takes
      the label of its nearest anchor (row blocks). Memory ``O(n·p + m·p +
      block·m)``, time ``O(n·m·p)`` for the search plus Genie on ``m`` points; nothing
      ``n × n``. A cluster that keeps no point (an anchor cell that no row is nearest
      to) is dropped: its anchors take the label of the nearest anchor of a kept cluster.
    * ``max_fit > 0`` and ``n > max_fit``: the rules above run on ``max_fit`` rows drawn
      uniformly by global row index from ``ctx.rng("rounding.genie.sample")``
      (:meth:`sample_rows`; with ``max_fit <= max_exact``, exact Genie on the sample), and
      every row takes the label of its nearest sample row (:meth:`assign`, row-local,
      ``O(n·max_fit·p)``). The chunked execution gathers exactly those rows, so the labels
      are the same in memory and for every chunking.
    * ``normalize_rows`` scales rows to unit length first (an all-zero row stays zero),
      in :meth:`round` and :meth:`assign` alike, as the ``kmeans`` rounding does.
    * Deterministic: the MST runs on one thread, anchors come from
      ``ctx.child("rounding.genie")``.
    * :meth:`assign`: a new row takes the label of the nearest training row (exact
      path) or the nearest anchor (anchored path), kept in ``anchors_`` /
      ``anchor_labels_`` (at most ``max(max_exact, m)`` rows).
    """

    name = "genie"
    needs = graphclust.SolutionField.EMBEDDING
    chunkwise = True  # round() on a uniform sample of rows, assign() per block

    gini_threshold: float = graphclust.param(
        0.3, doc="Gini-index cap g on the cluster sizes during the merges (genieclust's "
        "default 0.3; 1.0 = single linkage, lower = more even sizes).",
        check=graphclust.real(0.0, 1.0))
    max_exact: int = graphclust.param(
        20000, doc="Largest number of rows clustered directly; above it Genie runs on "
        "anchors and rows take their nearest anchor's label.",
        check=graphclust.integer(2))
    normalize_rows: bool = graphclust.param(
        False, doc="Scale embedding rows to unit norm first, in round and assign (pair "
        "with a spectral embedding whose rows are normalised, so new points match).",
        check=graphclust.boolean)
    anchors: Any = graphclust.param(
        None, doc="Anchor selector of the anchored path (a spec table or a part); "
        "None = k-means anchors, n_anchors = 2000, max_iter = 10.",
        check=graphclust.optional(graphclust.part_spec("anchors")))
    max_fit: int = graphclust.param(
        0, doc="Fit on at most this many rows, drawn by global row index (every row then "
        "takes its nearest sample row's label); 0 = fit on all rows.",
        check=graphclust.integer(0))

    def sample_rows(self, n, n_clusters, ctx):
        """Sorted global row indices Genie is fitted on, ``None`` for all rows."""
        return fit_rows(ctx.rng("rounding.genie.sample"), n, self.max_fit)

    def round(self, solution, n_clusters, ctx):
        if solution.embedding is None:
            raise ValueError("rounding 'genie' needs a solution with an embedding")
        E = self._points(solution.embedding)
        idx = self.sample_rows(E.shape[0], n_clusters, ctx)
        if idx is None:
            return self._fit(E, n_clusters, ctx)
        self._fit(E[idx], n_clusters, ctx)  # every sample cluster keeps its own rows
        near, _ = nearest_anchors(E, self.anchors_, 1, progress=ctx.progress)
        self._row_atoms = near[:, 0]
        return np.asarray(self.anchor_labels_, dtype=np.int64)[self._row_atoms]

    def _fit(self, E: np.ndarray, n_clusters: int, ctx) -> np.ndarray:
        """The rules on the prepared rows ``E``: their labels (``anchors_`` set)."""
        n = E.shape[0]
        if n <= self.max_exact:
            uniq, inverse = distinct_rows(E)
            tree: list = []
            base = genie_partition(uniq, n_clusters, self.gini_threshold, tree)
            self._tree, self._row_atoms = (tuple(tree) or None), inverse
            labels = first_seen(base[inverse])
            keep = np.empty(uniq.shape[0], dtype=np.int64)
            keep[inverse] = labels
            self.anchors_, self.anchor_labels_ = uniq, keep
            self.n_anchors_ = 0
            return labels
        selector = graphclust.resolve_part(
            DEFAULT_ANCHORS if self.anchors is None else self.anchors, "anchors")
        actx = ctx.child("rounding.genie")
        U = _points(selector.select(E, actx).points)  # already in normalised units
        U, _ = distinct_rows(U)
        tree = []
        anchor_lab = genie_partition(U, n_clusters, self.gini_threshold, tree)
        near, _ = nearest_anchors(E, U, 1, progress=ctx.progress)
        self._tree, self._row_atoms = (tuple(tree) or None), near[:, 0]
        raw = anchor_lab[self._row_atoms]
        labels = first_seen(raw)
        self.anchors_ = U
        self.anchor_labels_ = _carry(raw, labels, anchor_lab, U)
        self.n_anchors_ = int(U.shape[0])
        return labels

    def layers(self, solution, labels):
        """Genie's merges (layers hook): the fitted rows Genie ran on (``anchors_``) as
        atoms, every row in its own or its nearest one's, and Genie's whole merge
        sequence, whose first ``m − k`` merges are its partition with ``k`` clusters:
        a layer at every ``k`` from 1 to the number of rows Genie ran on. ``None`` when
        genieclust was not called (``k = 1``, or as many clusters as rows)."""
        tree = getattr(self, "_tree", None)
        atoms = getattr(self, "_row_atoms", None)
        if tree is None or atoms is None or atoms.shape[0] != np.shape(labels)[0]:
            return None
        m = self.anchors_.shape[0]
        where = "anchors" if self.n_anchors_ else "distinct rows"
        return graphclust.Layers(atoms, tree[0], tree[1], m,
                                 f"Genie's merges of its {m} {where}")

    def assign(self, solution):
        if not hasattr(self, "anchors_"):
            raise RuntimeError("rounding 'genie': call round() before assign()")
        if solution.embedding is None:
            raise ValueError("rounding 'genie' needs a solution with an embedding")
        E = self._points(solution.embedding)
        if E.shape[1] != self.anchors_.shape[1]:
            raise ValueError(f"rounding 'genie': the embedding has {E.shape[1]} columns, "
                             f"the fitted one had {self.anchors_.shape[1]}")
        return nearest_labels(E, self.anchors_, self.anchor_labels_)

    def confidence(self, solution, labels):
        """The margin among the fitted rows: ``1 − d_same / d_other``, the distance to
        the nearest fitted row of the row's own cluster (at a positive distance) over
        that to the nearest fitted row of another, among its
        :data:`MARGIN_NEIGHBORS` nearest fitted rows (a distance not found among them is
        read as the farthest of them, a bound). 0 on a boundary, near 1 deep inside a
        cluster. Cost ``O(n · m · p)`` in row blocks (``m`` fitted rows or anchors)."""
        from graphclust.numerics import nearest_anchors

        if not hasattr(self, "anchors_"):
            raise RuntimeError("rounding 'genie': call round() before confidence()")
        E = self._points(solution.embedding)
        U, lab_u = self.anchors_, np.asarray(self.anchor_labels_, dtype=np.int64)
        labels = np.asarray(labels, dtype=np.int64)
        q = int(min(MARGIN_NEIGHBORS + 1, U.shape[0]))
        idx, dsq = nearest_anchors(E, U, q)
        d = np.sqrt(np.maximum(np.asarray(dsq, dtype=np.float64), 0.0))
        far = d[:, -1:]
        same = lab_u[idx] == labels[:, None]
        d_same = np.where(same & (d > 0), d, np.inf).min(axis=1)
        d_other = np.where(~same, d, np.inf).min(axis=1)
        d_same = np.minimum(d_same, far[:, 0])
        d_other = np.where(np.isfinite(d_other), d_other, far[:, 0])
        out = np.divide(d_same, d_other, out=np.ones(labels.size), where=d_other > 0)
        return np.clip(1.0 - out, 0.0, 1.0)

    def _points(self, E) -> np.ndarray:
        E = _points(E)
        return normalize_rows(E) if self.normalize_rows else E


def _points(E) -> np.ndarray:
    """The embedding as a dense float array with at least one column."""
    E = as_dense_float(E)
    if E.shape[1] == 0:
        return np.zeros((E.shape[0], 1), dtype=E.dtype)
    return E


def _carry(raw: np.ndarray, labels: np.ndarray, anchor_lab: np.ndarray,
           U: np.ndarray) -> np.ndarray:
    """The anchors' labels in the numbering of the rows' ``labels`` (``raw`` relabelled);
    anchors of a cluster no row kept take the label of their nearest kept anchor."""
    mapping = np.full(int(anchor_lab.max()) + 1, -1, dtype=np.int64)
    mapping[raw] = labels
    out = mapping[anchor_lab]
    lost = out < 0
    if lost.any():
        kept = np.flatnonzero(~lost)
        out[lost] = nearest_labels(U[lost], U[kept], out[kept])
    return out
