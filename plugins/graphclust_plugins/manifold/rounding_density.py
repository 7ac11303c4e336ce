"""HDBSCAN density-tree rounding with exactly k clusters."""

from __future__ import annotations

import warnings

import numpy as np

import graphclust
from graphclust.numerics import as_float, fit_rows, nearest_anchors
from graphclust_plugins.manifold._boruvka import mutual_reachability_mst
from graphclust_plugins.manifold._condensed import (CondensedTree, excess_of_mass, label_points,
                                                    select_k)
from graphclust_plugins.manifold._layers import density_layers, leaves_appear
from graphclust_plugins.manifold._linkage import condense_tree, single_linkage


#: Default ``min_cluster_size``: ``max(15, n // DEFAULT_SIZE_DIVISOR)`` (2 % of the points).
DEFAULT_SIZE_DIVISOR = 50
#: ``min_samples`` of the estimate's tree when none is given: the core distance over the
#: 15 neighbours of the ``manifold`` family's fuzzy graph (UMAP's default n_neighbors),
#: not over a cluster's worth of points (docs/choosing-k.rst).
ESTIMATE_MIN_SAMPLES = 15


@graphclust.part
class DensityRounding(graphclust.Rounding):
    """HDBSCAN condensed tree of the embedding, cut to exactly ``n_clusters`` clusters.

    Campello, Moulavi & Sander (2013), *Density-Based Clustering Based on Hierarchical
    Density Estimates*, PAKDD: the exact mutual-reachability minimum spanning tree of
    the embedding rows (Def. 3; ``min_samples`` other rows for the core distances, as
    the ``hdbscan`` package counts them) by Borůvka's rounds over a k-d tree
    (:mod:`~graphclust_plugins.manifold._boruvka`, on all threads, the same tree for
    any thread count), and its single-linkage tree condensed
    (:mod:`~graphclust_plugins.manifold._linkage`, row for row the ``hdbscan``
    package's condensed tree of the same spanning tree): a split whose sides both hold at
    least ``min_cluster_size`` points makes two clusters, smaller pieces are points
    falling out. The default ``min_cluster_size`` is ``max(15, n // 50)`` (2 % of the
    points, at least HDBSCAN's usual 15): on UMAP layouts a fixed 15 splits every
    cluster into many small stable pieces (two moons, n = 1 500: 9–19 clusters found
    by excess of mass; with 30: 6–8), which the ``k`` cut does not need but the count
    ``n_clusters_found_`` would report. Every cluster ``C`` has a stability ``S(C) = Σ_p (λ_p − λ_birth(C))``
    (``λ = 1/distance``; Eq. 3 of the paper).

    Rule for ``k`` clusters: among the sets of clusters that hold one cluster on every
    path from the root to a leaf of the condensed tree (HDBSCAN's admissible
    selections), take the one with exactly ``k`` clusters and the largest total
    stability (a knapsack over the tree, :mod:`graphclust_plugins.manifold._condensed`).
    With ``k`` equal to the number excess of mass selects on its own, it is HDBSCAN's
    own selection; ``k = 1`` is the root (one cluster). When the tree has fewer than
    ``k`` leaves, ``min_cluster_size`` (and ``min_samples``, if larger) is halved and the
    tree rebuilt, down to 2 (``min_cluster_size_`` is the size used); if even then it
    cannot split ``k`` ways (fewer than about ``k`` distinct rows) it returns as many
    clusters as it can, with a :class:`graphclust.FewerClustersWarning`.

    Noise: points that leave the tree above every selected cluster are HDBSCAN's noise.
    By default each joins the cluster most common among its ``vote_neighbors`` nearest
    labelled points in the embedding (ties: the cluster of the nearest); labels are
    then ``0..k-1`` for every point. ``noise=True`` leaves them ``-1``: for users who
    read ``labels_`` only — ensembles and metrics treat ``-1`` as one more cluster.

    Fitted attributes: ``n_clusters_found_`` (how many clusters excess of mass selects
    by itself, HDBSCAN's stable clusters; 1 when the tree never splits), ``n_noise_``
    (HDBSCAN's noise points under the ``k`` selection), ``min_cluster_size_``,
    ``selected_`` (the condensed-tree ids of the ``k`` clusters), ``stability_`` (their
    stabilities), ``condensed_tree_`` (the tree, ``O(n)`` rows).

    Sample: with ``max_fit > 0`` and more rows than that, the tree (and the estimate of
    ``k``) is built on ``max_fit`` rows drawn uniformly by global row index from
    ``ctx.rng("rounding.density.sample")`` (:meth:`sample_rows`), and every row takes
    the label of its nearest sample row (:meth:`assign`, row-local, blocks of
    :func:`graphclust.numerics.nearest_anchors`). The chunked execution gathers exactly
    those rows, so labels and estimate are the same in memory and for every chunking.
    :meth:`assign` labels new rows the same way (the fitted rows are kept as
    ``anchors_`` / ``anchor_labels_``; with ``noise=True`` a row nearest to a noise row
    is noise too).

    Costs: Borůvka's at most ``log2 n`` rounds of k-d tree searches, about
    ``O(n log n)`` each for low dimensions (the 10 of ``umap-layout``, the few features
    of ``auto``'s rule 9); memory ``O(n · (p + 16))``, ``n`` the rows fitted on; :meth:`assign` ``O(n · max_fit · p)``.
    Deterministic (no random step beyond the sample).
    """

    name = "density"
    needs = "embedding"
    estimates_k = "density-tree"
    chunkwise = True  # round() on the rows of sample_rows(), assign() per block

    min_cluster_size: int | None = graphclust.param(
        None, doc="Smallest cluster of the condensed tree (HDBSCAN's m_clSize); None = "
        "max(15, n // 50); halved while the tree has fewer than k leaves.",
        check=graphclust.optional(graphclust.integer(2)))
    min_samples: int | None = graphclust.param(
        None, doc="Neighbours of the core distance (HDBSCAN's m_pts); None = "
        "min_cluster_size.", check=graphclust.optional(graphclust.integer(1)))
    noise: bool = graphclust.param(
        False, doc="Keep HDBSCAN's noise points as -1 instead of voting them into a cluster.",
        check=graphclust.boolean)
    vote_neighbors: int = graphclust.param(
        5, doc="Labelled neighbours in the embedding whose majority a noise point joins.",
        check=graphclust.integer(1))
    estimate: str = graphclust.param(
        "eom", doc="How estimate_k counts the clusters of its tree: 'leaf' (the leaves of "
        "the condensed tree at min_cluster_size = n // k_max) or 'eom' (excess of mass at "
        "the rounding's own min_cluster_size).", check=graphclust.one_of("leaf", "eom"))
    structure_ratio: float = graphclust.param(
        1.0, doc="estimate_k finds no cluster structure (k = 1) when the total stability "
        "of excess of mass's selection is at most this share of the root's stability; 1 = "
        "hdbscan's allow_single_cluster rule (the root wins a tie).",
        check=graphclust.real(0.0, None))
    max_fit: int = graphclust.param(
        0, doc="Build the tree (and estimate k) on at most this many rows, drawn by global "
        "row index (every row then takes its nearest sample row's label); 0 = all rows.",
        check=graphclust.integer(0))

    def sample_rows(self, n, n_clusters, ctx):
        """Sorted global row indices the tree is built on, ``None`` for all rows (the
        draw does not depend on ``n_clusters``: the estimate of ``k`` reads the same rows)."""
        return fit_rows(ctx.rng("rounding.density.sample"), n, self.max_fit)

    def _fit_rows(self, solution, ctx):
        """The embedding rows the tree is built on (all rows, or :meth:`sample_rows`)."""
        E = self._embedding(solution)
        idx = self.sample_rows(E.shape[0], None, ctx)
        return E if idx is None else E[idx], E, idx

    def estimate_k(self, solution, k_min, k_max, ctx):
        """The number of clusters of the condensed density tree of the embedding
        (Campello, Moulavi & Sander 2013), clipped to ``[k_min, k_max]``.

        ``estimate = "leaf"`` (``auto``'s manifold family): the tree is built at the
        resolution the search asks for, ``min_cluster_size = max(15, n // k_max)`` (a cluster holds at least
        the share of the points that ``k_max`` equal clusters would, so the tree has at
        most ``k_max`` leaves), with the core distance over
        :data:`ESTIMATE_MIN_SAMPLES` neighbours, and ``k`` is its number of leaves: the
        dense pieces that never split into two pieces of that size. ``estimate =
        "eom"`` (default): HDBSCAN's excess-of-mass selection (§4 of the paper) at the
        rounding's own ``min_cluster_size`` / ``min_samples``. A given
        ``min_cluster_size`` or ``min_samples`` is used by both. The measured effect of each is in
        docs/choosing-k.rst.

        No structure (both): excess of mass on the same tree with the root allowed
        (``hdbscan``'s ``allow_single_cluster``) keeps all points in one cluster, i.e.
        the root's own stability ``S(root)`` is at least the total stability of its
        selection (times ``structure_ratio``, default 1); then ``k = 1``. The tree is kept for the :meth:`round` that follows
        on the same solution (built once). Scores: the total stability of the best
        selection of each candidate ``k`` (:func:`select_k`)."""
        from graphclust import KSelection

        E = self._fit_rows(solution, ctx)[0]
        n = E.shape[0]
        if n <= 2:
            return KSelection("density-tree", 1, (1,), (0.0,), "fewer than 3 points",
                              f"rounding {self.name!r}", k_min, k_max, structure=False)
        leaf = self.estimate == "leaf"
        if leaf and self.min_cluster_size is None:
            size = int(min(max(15, n // max(int(k_max), 1)), n))
        else:
            size = int(min(self._size(n), n))
        samples = None
        if leaf and self.min_samples is None:
            samples = int(min(ESTIMATE_MIN_SAMPLES, size))
        tree, eom = self._tree(E, size, ctx, samples)
        self._kept = (solution.embedding, size, tree, eom)
        top = int(min(k_max, tree.max_clusters))
        cands = list(range(max(1, k_min), max(top, 1) + 1))
        scores = [float(tree.stability[select_k(tree, c)].sum()) if c > 1 else
                  float(tree.stability[0]) for c in cands]
        root = float(tree.stability[0])
        eom_total = float(tree.stability[select_k(tree, eom)].sum()) if eom > 1 else 0.0
        structure = eom > 1 and eom_total > self.structure_ratio * root
        found = tree.max_clusters if leaf else eom
        k = int(min(max(found if structure else 1, k_min), max(k_max, 1)))
        samples_used = size if samples is None and self.min_samples is None else (
            samples if samples is not None else int(self.min_samples))
        how = " = max(15, n // k_max)" if self.min_cluster_size is None else ""
        what = (f"the condensed tree's leaves (min_cluster_size = {size}{how}, "
                f"min_samples = {samples_used}): {found}" if leaf else
                f"HDBSCAN's excess-of-mass selection (min_cluster_size = {size}) found "
                f"{found} stable cluster{'s' if found != 1 else ''}")
        rule = what
        if not structure:
            share = "" if self.structure_ratio == 1.0 else f"{self.structure_ratio:g} x "
            rule += (f"; {share}the root's stability {root:.4g} is at least that of "
                     f"excess of mass's {eom} ({eom_total:.4g}): one cluster")
        return KSelection("density-tree", k, tuple(cands), tuple(scores), rule,
                          f"rounding {self.name!r}", k_min, k_max, structure=k > 1,
                          details={"excess_of_mass_clusters": int(eom),
                                   "leaves": int(tree.max_clusters),
                                   "selection": self.estimate,
                                   "root_stability": root,
                                   "selection_stability": eom_total,
                                   "min_cluster_size": size,
                                   "min_samples": int(samples_used)})

    def layers(self, solution, labels):
        """The condensed tree's layers (layers hook): its leaves as atoms, its splits as
        merges, the fitted selection the layer at the fitted ``k``
        (:mod:`graphclust_plugins.manifold._layers`). Rows fitted through a sample take
        their nearest sample row's atom, as they took its label. ``None`` when no tree
        was built (fewer than 3 rows, or ``k`` as large as the rows)."""
        raw = getattr(self, "condensed_tree_", None)
        if raw is None or not hasattr(self, "anchors_") or len(self.selected_) == 0:
            return None
        E = self.anchors_
        tree = CondensedTree(raw, E.shape[0])
        selected = np.asarray(self.selected_, dtype=np.int64) - E.shape[0]
        atoms, merges, heights, m = density_layers(tree, selected, self.anchor_labels_, E)
        full = self._embedding(solution)
        if full.shape[0] != E.shape[0] or not np.array_equal(full, E):
            idx, _ = nearest_anchors(full, E, 1)
            atoms = atoms[idx[:, 0]]
        return graphclust.Layers(atoms, merges, heights, m,
                                 f"the density tree's splits ({m} leaves)",
                                 base_height=leaves_appear(raw, E.shape[0], tree))

    def _embedding(self, solution):
        if solution.embedding is None:
            raise ValueError("rounding 'density' needs a solution with an embedding")
        E = np.ascontiguousarray(as_float(solution.embedding), dtype=np.float64)
        if E.ndim != 2 or E.shape[1] == 0:
            E = np.zeros((E.shape[0], 1))
        return E

    def round(self, solution, n_clusters, ctx):
        E, full, idx = self._fit_rows(solution, ctx)
        labels = self._round_rows(solution, E, n_clusters, ctx)
        self.anchors_, self.anchor_labels_ = E, labels
        if idx is None:
            return labels
        return self._nearest(full)

    def assign(self, solution):
        """The label of the nearest fitted row (first on a tie) for every row of
        ``solution``'s embedding."""
        if not hasattr(self, "anchors_"):
            raise RuntimeError("rounding 'density': call round() before assign()")
        E = self._embedding(solution)
        if E.shape[1] != self.anchors_.shape[1]:
            raise ValueError(f"rounding 'density': the embedding has {E.shape[1]} columns, "
                             f"the fitted one had {self.anchors_.shape[1]}")
        return self._nearest(E)

    def _nearest(self, E):
        idx, _ = nearest_anchors(E, self.anchors_, 1)
        return np.asarray(self.anchor_labels_, dtype=np.int64)[idx[:, 0]]

    def _round_rows(self, solution, E, n_clusters, ctx):
        """The labels of the fitted rows ``E`` (a tree kept by :meth:`estimate_k` on the
        same ``solution`` is reused)."""
        kept, self._kept = getattr(self, "_kept", None), None
        n = E.shape[0]
        k = int(min(n_clusters, n))
        if n <= 2 or k >= n:
            return self._trivial(E, k)
        size = int(min(self._size(n), n))
        found = None
        memo = {}
        if kept is not None and kept[0] is solution.embedding and kept[2].max_clusters >= k:
            size = kept[1]  # the tree estimate_k built on this solution, cut to its k
        while True:
            if kept is not None and kept[0] is solution.embedding and kept[1] == size:
                tree, eom = kept[2], kept[3]  # built by estimate_k on this solution
                self.condensed_tree_ = kept[2].raw
                kept = None
            else:
                tree, eom = self._tree(E, size, ctx, memo=memo)
            if found is None:
                found = eom
            if tree.max_clusters >= k or size <= 2:
                break
            size = max(2, size // 2)
        got = min(k, tree.max_clusters)
        if got < k:
            warnings.warn(f"rounding 'density': the density tree of the embedding splits "
                          f"into at most {got} clusters even with min_cluster_size = 2; "
                          f"returning {got} of the {k} asked", graphclust.FewerClustersWarning,
                          stacklevel=2)
        selected = select_k(tree, got)
        labels = label_points(tree, selected)
        lam = leaving_levels(tree.raw, n)
        self.n_clusters_found_ = int(found)
        self.n_noise_ = int((labels < 0).sum())
        self.min_cluster_size_ = size
        self.selected_ = np.asarray(selected, dtype=np.int64) + n
        self.stability_ = tree.stability[selected] if got > 1 else np.zeros(1)
        self.fit_noise_ = labels < 0
        share = np.ones(n)
        if not self.noise:
            labels, share = vote_with_shares(E, labels, self.vote_neighbors)
        self.fit_confidence_ = membership_strength(lam, labels) * share
        return labels.astype(np.int64)

    def confidence(self, solution, labels):
        """HDBSCAN's membership strength (``probabilities_``): ``λ_p / λ_max(C)``, the
        density level at which the point leaves the tree over the densest level any
        point of its cluster reaches; a noise point voted into a cluster gets its own
        level over that cluster's, times the share of its voters that chose it. A row
        placed by its nearest fitted row takes that row's value (0 when their labels
        differ)."""
        return self._per_fitted_row(solution, labels, self.fit_confidence_, 0.0)

    def outliers(self, solution, labels):
        """HDBSCAN's noise: the points that leave the tree above every selected cluster
        (a placed row: its nearest fitted row's flag)."""
        return self._per_fitted_row(solution, labels, self.fit_noise_, None).astype(bool)

    def _per_fitted_row(self, solution, labels, values, other):
        if not hasattr(self, "anchors_"):
            raise RuntimeError("rounding 'density': call round() first")
        E = self._embedding(solution)
        labels = np.asarray(labels, dtype=np.int64)
        values = np.asarray(values)
        if E.shape == self.anchors_.shape and np.array_equal(E, self.anchors_):
            near = np.arange(E.shape[0])
        else:
            near = nearest_anchors(E, self.anchors_, 1)[0][:, 0]
        out = values[near]
        if other is not None:
            out = np.where(np.asarray(self.anchor_labels_)[near] == labels, out, other)
        return out

    def _size(self, n: int) -> int:
        if self.min_cluster_size is not None:
            return int(self.min_cluster_size)
        return int(max(15, n // DEFAULT_SIZE_DIVISOR))

    def _tree(self, E, size, ctx, samples=None, memo=None):
        """The condensed tree of ``E`` at ``min_cluster_size = size`` and the number of
        clusters excess of mass selects; ``memo`` keeps minimum spanning trees by
        ``min_samples`` (the halving loop changes only the condensation)."""
        n = E.shape[0]
        if samples is None:
            samples = size if self.min_samples is None else int(self.min_samples)
            if size < self._size(n):  # halved: min_samples no larger than the size
                samples = min(samples, size)
        samples = int(max(1, min(samples, n - 1)))
        memo = {} if memo is None else memo
        if samples not in memo:
            memo[samples] = mutual_reachability_mst(E, samples)[0]
        mst = memo[samples]
        raw = condense_tree(single_linkage(mst, n), size)
        self.condensed_tree_ = raw
        tree = CondensedTree(raw, n)
        tree.raw = raw
        return tree, max(len(excess_of_mass(tree)), 1)

    def _trivial(self, E, k):
        n = E.shape[0]
        if k <= 1:
            labels = np.zeros(n, dtype=np.int64)
        else:  # k == n (or n <= 2): every point its own cluster
            labels = np.arange(n, dtype=np.int64) if k >= n else np.zeros(n, dtype=np.int64)
        self.n_clusters_found_ = 1
        self.n_noise_ = 0
        self.min_cluster_size_ = int(min(self._size(n), max(n, 1)))
        self.selected_ = np.arange(0)
        self.stability_ = np.zeros(0)
        self.fit_confidence_ = np.ones(n)
        self.fit_noise_ = np.zeros(n, dtype=bool)
        self.condensed_tree_ = None
        return labels


def leaving_levels(raw, n: int) -> np.ndarray:
    """Each point's ``λ = 1/distance`` at which it leaves the condensed tree ``raw``
    (``λ = ∞``, a duplicate, read as the largest finite level; 0 for a point missing
    from the tree)."""
    lam = np.zeros(n)
    child = np.asarray(raw["child"], dtype=np.int64)
    val = np.asarray(raw["lambda_val"], dtype=np.float64)
    pts = child < n
    finite = np.isfinite(val)
    top = val[finite].max(initial=0.0)
    lam[child[pts]] = np.where(finite[pts], val[pts], top)
    return lam


def membership_strength(lam: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """``min(λ_p, λ_max(C)) / λ_max(C)`` with ``λ_max(C)`` the largest leaving level of
    the points labelled ``C`` (HDBSCAN's ``probabilities_``); 1 in a cluster whose points
    all leave at level 0, 0 for a label ``-1``."""
    out = np.zeros(labels.size)
    ok = labels >= 0
    if not ok.any():
        return out
    k = int(labels.max()) + 1
    top = np.zeros(k)
    np.maximum.at(top, labels[ok], lam[ok])
    t = top[labels[ok]]
    out[ok] = np.where(t > 0, np.minimum(lam[ok], t) / np.where(t > 0, t, 1.0), 1.0)
    return out


def vote(E: np.ndarray, labels: np.ndarray, n_vote: int) -> np.ndarray:
    """Labels with every ``-1`` replaced by the majority label of its ``n_vote``
    nearest labelled rows of ``E`` (ties: the nearest's label)."""
    return vote_with_shares(E, labels, n_vote)[0]


def vote_with_shares(E: np.ndarray, labels: np.ndarray, n_vote: int
                     ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`vote`'s labels and, per row, the share of its voters that chose its label
    (1 for a row that was labelled already)."""
    from sklearn.neighbors import NearestNeighbors

    shares = np.ones(labels.size)
    noise = np.flatnonzero(labels < 0)
    if noise.size == 0:
        return labels, shares
    have = np.flatnonzero(labels >= 0)
    if have.size == 0:
        return np.zeros_like(labels), np.zeros(labels.size)
    v = int(min(n_vote, have.size))
    _, nbr = NearestNeighbors(n_neighbors=v).fit(E[have]).kneighbors(E[noise])
    votes = labels[have][nbr]  # (noise, v), nearest first
    k = int(labels.max()) + 1
    score = np.zeros((noise.size, k))
    weight = 1.0 + 1e-6 * (v - np.arange(v))  # a majority first, then the nearer
    np.add.at(score, (np.repeat(np.arange(noise.size), v), votes.ravel()),
              np.tile(weight, noise.size))
    out = labels.copy()
    out[noise] = score.argmax(axis=1)
    shares[noise] = (votes == out[noise][:, None]).mean(axis=1)
    return out, shares
