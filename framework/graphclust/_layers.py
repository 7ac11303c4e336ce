"""Layers: nested partitions of one fit, coarse to fine, each with its ``k`` and a stability.

A fit's hierarchy (:class:`Layers`) is a partition of the rows into ``m`` atoms and an
ordered list of merges (:mod:`graphclust.numerics.hierarchy`): the partition with ``k``
groups is the atoms after the first ``m − k`` merges, so every ``k`` of the hierarchy has
one partition and the layers are nested by construction. Where they come from:

* a rounding that has a hierarchy of its own returns it from its ``layers`` hook
  (:meth:`graphclust.Rounding.layers`): the density tree (its condensed tree, finer and
  coarser than the fitted ``k``), Genie (its merges, at every ``k``); an adapter that
  cuts the labels itself from its own rounding (``on-sample``) carries that rounding's
  layers to the rows (:meth:`graphclust.Adapter.layers`);
* any other fit gets the framework's merge tree over its clusters
  (:func:`merge_tree_over_clusters`): Ward's merges of the clusters' centroids in the
  representation the rounding cut (the solution's embedding or soft assignment; an
  ensemble's membership rows), layers from the fitted ``k`` down to 1.

In every case the fitted ``labels_`` are the layer at the fitted ``k`` (up to the
numbering: layers are numbered in the order groups first appear in the rows).

The estimator computes the layers when first asked (``layers_``, ``cluster_layers_``,
``partition_at``), from what the fit kept: no refit, and nothing at fit time.
"""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np

from graphclust._errors import InputError
from graphclust.numerics.hierarchy import check_merges, cut, persistence, ward_merges

__all__ = ["Layers", "merge_tree_over_clusters", "layers_of_fit", "LayersMixin"]


def _as_merges(value) -> np.ndarray:
    return np.asarray(value, dtype=np.int64).reshape(-1, 2)


@attrs.frozen(eq=False)
class Layers:
    """Nested partitions of a fit's rows, from one list of merges over its atoms.

    Attributes
    ----------
    atoms : ndarray of int, shape (n,)
        Each row's atom, ``0..n_atoms-1`` (``-1``: a row in no group, e.g. the density
        tree's noise with ``noise=True``; it stays ``-1`` in every layer).
    merges : ndarray of int, shape (j, 2)
        Merges in the order they apply, each joining the groups of two atoms.
    heights : ndarray of float, shape (j,)
        The height of each merge in the source's own units (a distance, a Ward cost).
    n_atoms : int
        The number of atoms (the finest layer's ``k``).
    source : str
        Where the hierarchy comes from, in words.
    chosen : int or None
        The fitted ``k`` (the layer ``labels_`` is).
    reason : str
        Why that ``k`` (the fit's ``k_selection_`` rule, or ``"n_clusters given"``).
    base_height : float or None
        The height by which every atom exists, when the source knows it (the density
        tree: where its last leaf appears); it scores the finest layer.
    """

    atoms: np.ndarray = attrs.field(converter=lambda a: np.asarray(a, dtype=np.int64))
    merges: np.ndarray = attrs.field(converter=_as_merges)
    heights: np.ndarray = attrs.field(converter=lambda h: np.asarray(h, dtype=np.float64))
    n_atoms: int = attrs.field(converter=int)
    source: str = ""
    chosen: int | None = None
    reason: str = ""
    base_height: float | None = None

    def __attrs_post_init__(self):
        if self.heights.shape != (self.merges.shape[0],):
            raise InputError(f"Layers: {self.merges.shape[0]} merges but "
                             f"{self.heights.size} heights")
        if self.atoms.size and (self.atoms.max() >= self.n_atoms or self.atoms.min() < -1):
            raise InputError(f"Layers: atoms must be in [-1, {self.n_atoms})")
        check_merges(self.merges, self.n_atoms)

    @property
    def k_min(self) -> int:
        """The coarsest layer's ``k`` (1 when the merges join everything)."""
        return self.n_atoms - self.merges.shape[0]

    @property
    def ks(self) -> list[int]:
        """Every ``k`` of the hierarchy, coarse to fine."""
        return list(range(self.k_min, self.n_atoms + 1))

    @property
    def stability(self) -> dict[int, float]:
        """``{k: stability}``: each layer's relative persistence in ``[0, 1]``
        (:func:`graphclust.numerics.hierarchy.persistence`)."""
        score = persistence(self.heights, self.n_atoms, self.base_height)
        return {k: float(score[k - 1]) for k in self.ks}

    def partition_at(self, k: int) -> np.ndarray:
        """The rows' labels in the layer of ``k`` groups (no refit): ``0..k-1`` numbered
        in the order the groups first appear in the rows, ``-1`` kept."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise InputError(f"partition_at: k must be an integer, got {k!r}")
        if not self.k_min <= k <= self.n_atoms:
            raise InputError(f"partition_at: k = {k} is not a layer of this fit's hierarchy "
                             f"({self.source}); k must be in [{self.k_min}, {self.n_atoms}]")
        return cut(self.atoms, self.merges, self.n_atoms, int(k))

    def parent_of(self, k_fine: int, k_coarse: int) -> np.ndarray:
        """For each group of the layer ``k_fine`` (in its numbering), the group of the
        layer ``k_coarse`` it lies in: the nesting, read off the atoms."""
        fine, coarse = self.partition_at(k_fine), self.partition_at(k_coarse)
        out = np.full(k_fine, -1, dtype=np.int64)
        keep = fine >= 0
        out[fine[keep]] = coarse[keep]
        return out

    def layers(self, k_max: int | None = None) -> list[tuple[int, float, np.ndarray]]:
        """``(k, stability, labels)`` for every layer coarse to fine, up to ``k_max``
        groups (default: all)."""
        top = self.n_atoms if k_max is None else min(int(k_max), self.n_atoms)
        score = self.stability
        return [(k, score[k], self.partition_at(k)) for k in range(self.k_min, top + 1)]

    def summary(self, k_max: int | None = None) -> list[dict[str, Any]]:
        """``{"k", "stability", "chosen"}`` per layer up to ``k_max`` (JSON-friendly)."""
        top = self.n_atoms if k_max is None else min(int(k_max), self.n_atoms)
        score = self.stability
        return [{"k": k, "stability": score[k], "chosen": k == self.chosen}
                for k in range(self.k_min, top + 1)]

    def describe(self) -> str:
        """One line: where the layers come from, their range and the chosen one."""
        chosen = "" if self.chosen is None else f"; layer k = {self.chosen} chosen: {self.reason}"
        return f"{self.source}: layers k = {self.k_min}..{self.n_atoms}{chosen}"


def cluster_means(rows, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(classes, centroids, sizes)`` of the rows grouped by ``labels >= 0`` (dense or
    sparse rows; sums over the rows, no ``n x k`` dense matrix)."""
    import scipy.sparse as sp

    labels = np.asarray(labels, dtype=np.int64)
    keep = np.flatnonzero(labels >= 0)
    classes, inv = np.unique(labels[keep], return_inverse=True)
    H = sp.csr_array((np.ones(keep.size), (np.asarray(inv).ravel(), keep)),
                     shape=(classes.size, labels.size))
    sums = H @ rows
    sums = sums.toarray() if sp.issparse(sums) else np.asarray(sums, dtype=np.float64)
    sizes = np.asarray(H.sum(axis=1)).ravel()
    return classes, sums / np.maximum(sizes, 1.0)[:, None], sizes


def merge_tree_over_clusters(rows, labels: np.ndarray, source: str) -> Layers:
    """The framework's layers for a fit without a hierarchy of its own: the atoms are the
    clusters of ``labels``, merged by Ward's rule on their centroids in ``rows`` (the
    representation the clusters were cut from), weighted by their sizes; layers from the
    fitted ``k`` down to 1, ``labels`` itself the finest."""
    labels = np.asarray(labels, dtype=np.int64)
    classes, centroids, sizes = cluster_means(rows, labels)
    atoms = np.full(labels.shape, -1, dtype=np.int64)
    keep = labels >= 0
    atoms[keep] = np.searchsorted(classes, labels[keep])
    merges, heights = ward_merges(centroids, sizes)
    return Layers(atoms, merges, heights, max(classes.size, 1),
                  f"Ward's merges of the {classes.size} clusters' centroids in {source}")


def _rows_of(result, pipeline) -> tuple[Any, str]:
    """The representation the labels were cut from, with its name."""
    memberships = getattr(result, "memberships", None)
    if memberships is not None:  # an ensemble: the point x base-cluster rows
        return memberships.matrix, "the ensemble's membership rows"
    sol = result.solution
    if sol.embedding is not None:
        return sol.embedding, "the solution's embedding"
    return sol.soft, "the solution's soft assignment"


def layers_of_fit(pipeline, result, labels: np.ndarray, selection) -> Layers:
    """The layers of a fitted pipeline or ensemble (:mod:`graphclust._layers`): the
    rounding's ``layers`` hook when it has one, else the merge tree over the clusters;
    ``chosen`` and ``reason`` from the fit's ``k_selection_``."""
    if hasattr(labels, "__dask_graph__"):
        raise InputError("layers of a chunked fit are not available yet: compute the "
                         "labels (labels_.compute()) and refit in memory, or give n_clusters")
    labels = np.asarray(labels, dtype=np.int64)
    layers = None
    if getattr(result, "memberships", None) is None:  # not an ensemble
        adapter, rounding = pipeline.adapter, pipeline.rounding
        if adapter is not None:
            layers = adapter.layers(result.solution, result.graph, labels)
        if layers is None and rounding is not None:
            layers = rounding.layers(result.solution, labels)
    if layers is None or not _refines(layers, labels):
        rows, where = _rows_of(result, pipeline)
        layers = merge_tree_over_clusters(rows, labels, where)
    return attrs.evolve(layers, chosen=int(selection.k), reason=selection.rule)


def _refines(layers: Layers, labels: np.ndarray) -> bool:
    """Whether every atom lies in one cluster of ``labels`` (a hook's hierarchy whose
    fitted layer is not ``labels`` — e.g. identical rows relabelled after the rounding —
    is replaced by the merge tree over the clusters)."""
    atoms = layers.atoms
    if atoms.shape != labels.shape:
        return False
    keep = atoms >= 0
    if not np.array_equal(keep, labels >= 0):
        return False
    pairs = np.unique(np.c_[atoms[keep], labels[keep]], axis=0)
    return np.unique(pairs[:, 0]).size == pairs.shape[0]


class LayersMixin:
    """The estimator's layers: ``layers_``, ``cluster_layers_`` and :meth:`partition_at`,
    computed when first asked from what the fit kept (and kept until the next fit)."""

    @property
    def layers_(self) -> Layers:
        """The fit's :class:`~graphclust.Layers` (nested partitions, coarse to fine)."""
        result = self.__dict__.get("result_")
        if result is None:
            raise AttributeError("'GraphClustering' object has no attribute 'layers_' "
                                 "(call fit first)")
        cached = self.__dict__.get("_layers_cache")
        if cached is not None and cached[0] is result:
            return cached[1]
        layers = layers_of_fit(self.pipeline_, result, self.labels_, self.k_selection_)
        self.__dict__["_layers_cache"] = (result, layers)
        return layers

    @property
    def cluster_layers_(self) -> list[np.ndarray]:
        """The layers' labels, coarse to fine, from ``k = layers_.k_min`` up to the larger
        of the fitted ``k`` and the searched ``k_max`` (``partition_at`` reaches every
        ``k`` of the hierarchy)."""
        layers = self.layers_
        top = max(int(self.n_clusters_), int(self.k_selection_.k_max))
        return [labels for _, _, labels in layers.layers(top)]

    def partition_at(self, k: int) -> np.ndarray:
        """The training rows' labels in the layer of ``k`` clusters, without a refit
        (:meth:`graphclust.Layers.partition_at`)."""
        return self.layers_.partition_at(k)

