"""BKHK anchors: balanced binary hierarchical k-means (Nie, Zhu, Li; Eq. 12–16, Algorithm 1)."""

from __future__ import annotations

import warnings

import numpy as np

import graphclust
from graphclust.numerics import clamp_anchors
from graphclust_plugins.ulge._bkhk_tree import bkhk

__all__ = ["BKHK", "bkhk"]


@graphclust.part
class BKHK(graphclust.AnchorSelector):
    """Balanced binary hierarchical k-means anchors (BKHK; Nie, Zhu, Li, Algorithm 1).

    Every node of a binary tree is split by *balanced* 2-means (Eq. 12–16): with the
    two current centres ``c_a, c_b`` the ``κ`` points with the smallest
    ``e₁ − e₂ = ‖x − c_a‖² − ‖x − c_b‖²`` form the first child and the rest the
    second; centres are recomputed and the two steps repeat until the assignment
    does not change (at most ``max_iter`` times). Each split starts from a random
    balanced assignment drawn from ``ctx.rng("bkhk")``. The anchors are the means of
    the ``m`` leaves; :attr:`Anchors.assignment` is the leaf of every point, numbered
    left to right in the tree. The tree grows a level at a time and only the nodes
    whose assignment still changes take part in the next iteration. The data are
    never copied or reordered as a whole: the top levels stream over ``X`` in row
    blocks, deeper levels gather a few nodes at a time into a cache-sized buffer
    (module :mod:`graphclust_plugins.ulge._bkhk_tree`). Cost ``O(n d ⌈log₂ m⌉ t)``
    time, ``O(n)`` memory beyond ``X`` plus one bounded block.

    Rules for what the paper leaves open:

    * **m a power of two** (the paper's case): every split is exactly
      ``⌊s/2⌋ / ⌈s/2⌉`` points (``κ = ⌊s/2⌋``, Eq. 12), ``log₂ m`` levels, leaf
      sizes ``⌊n/m⌋`` or ``⌈n/m⌉``.
    * **any other m**: each node carries the number ``t`` of leaves it must become
      (the root ``m``); a node with ``t ≥ 2`` is split into children that must become
      ``⌊t/2⌋`` and ``⌈t/2⌉`` leaves, holding ``κ = ⌊s·⌊t/2⌋/t⌋`` and ``s − κ``
      points (problem (12) with general ``[κ, ι]``); a node with ``t = 1`` is a leaf.
      This gives exactly ``m`` non-empty leaves of nearly equal size in
      ``⌈log₂ m⌉`` levels, and reduces to the paper's rule when ``m = 2^L``.
    * ``n_anchors > n`` is clamped to ``n`` with a warning; ``m = 1`` gives the mean.
    * **ties and duplicate points**: equal scores keep the side they are on, then go
      by row index, so the split stays exactly balanced and the iteration cannot
      cycle; identical points may land in different leaves, so data with fewer than
      ``m`` distinct points yields repeated anchors (the anchor graph handles ties).
    * A split still changing after ``max_iter`` iterations keeps its last balanced
      assignment and one :class:`graphclust.ConvergenceWarning` names how many did.

    Integer inputs of at most 16 bits and float32 inputs are processed in float32
    (exact for pixels); centre sums are accumulated in float64.
    """

    name = "bkhk"
    chunkwise = True  # select() runs on a uniform row sample

    n_anchors: int = graphclust.param(
        1024, doc="Number of anchors m (leaves of the tree); the paper uses 1024.",
        check=graphclust.integer(1))
    max_iter: int = graphclust.param(
        100, doc="Maximum balanced 2-means iterations per split (the paper uses 100).",
        check=graphclust.integer(1))

    def select(self, X, ctx) -> graphclust.Anchors:
        X = np.asarray(X)
        m = clamp_anchors(int(self.n_anchors), X.shape[0], who="bkhk")
        points, leaf, info = bkhk(X, m, rng=ctx.rng("bkhk"), max_iter=int(self.max_iter),
                                  progress=ctx.progress)
        if info["splits_not_converged"]:
            warnings.warn(
                f"anchors 'bkhk': {info['splits_not_converged']} balanced 2-means split(s) "
                f"still changed "
                f"after max_iter={self.max_iter} iterations",
                graphclust.ConvergenceWarning, stacklevel=2)
        return graphclust.Anchors(points, assignment=leaf, info=info)
