"""The density tree's layers: the condensed tree cut finer and coarser than the fitted k.

The fitted labels select ``k`` clusters of the condensed tree (an antichain that covers
every root-to-leaf path). Its layers (:class:`graphclust.Layers`) take the tree's leaves
as atoms and its splits as merges:

* every row of a selected cluster ``s`` goes to a leaf below ``s``: the leaf it falls out
  of, else (it fell out of ``s`` or of a split node below it, or was a noise point voted
  into ``s``) the leaf of its nearest row in the embedding among the rows of ``s`` that
  sit in a leaf below ``s``. So the atoms refine the fitted labels;
* each split of the tree joins its children's groups at the distance ``1/λ`` at which
  they were born. The splits inside selected clusters come first (nearest first), then
  those above them (nearest first): after the first all the selected clusters are whole,
  so the layer at the fitted ``k`` is the fitted labels; finer layers undo the splits
  inside clusters from the widest down (the least dense split first), coarser ones join
  the selected clusters as the tree does.
"""

from __future__ import annotations

import numpy as np

from graphclust.numerics import nearest_anchors

__all__ = ["density_layers", "leaves_appear"]


def _owners(tree, selected: np.ndarray) -> np.ndarray:
    """For every node, the index in ``selected`` of itself or its selected ancestor
    (-1 above the selection)."""
    owner = np.full(tree.n_nodes, -1, dtype=np.int64)
    pos = {int(c): i for i, c in enumerate(selected)}
    for c in tree.order:  # parents before children
        if c in pos:
            owner[c] = pos[c]
        elif tree.parent[c] >= 0:
            owner[c] = owner[tree.parent[c]]
    return owner


def _first_leaf(tree, is_leaf: np.ndarray) -> np.ndarray:
    """A leaf below (or at) every node: the first in the tree's order."""
    rep = np.full(tree.n_nodes, -1, dtype=np.int64)
    for c in reversed(tree.order):  # children before parents
        rep[c] = c if is_leaf[c] else rep[tree.children[c][0]]
    return rep


def _atoms(tree, labels, E, owner, is_leaf, leaf_id, rep):
    pp = tree.point_parent
    atoms = np.full(labels.shape, -1, dtype=np.int64)
    direct = (labels >= 0) & is_leaf[pp] & (owner[pp] == labels)
    atoms[direct] = leaf_id[pp[direct]]
    for i in np.unique(labels[(labels >= 0) & ~direct]):
        rows = np.flatnonzero((labels == i) & ~direct)
        ref = np.flatnonzero((labels == i) & direct)
        if ref.size == 0:  # no row of it in a leaf: its first leaf
            atoms[rows] = leaf_id[rep[selected_node(owner, i)]]
            continue
        idx, _ = nearest_anchors(E[rows], E[ref], 1)
        atoms[rows] = atoms[ref[idx[:, 0]]]
    return atoms


def selected_node(owner: np.ndarray, i: int) -> int:
    """The node selected as cluster ``i`` (the shallowest node ``i`` owns)."""
    return int(np.flatnonzero(owner == i)[0])


def density_layers(tree, selected, labels: np.ndarray, E: np.ndarray):
    """``(atoms, merges, heights, n_atoms)`` of the condensed ``tree`` (a
    :class:`~graphclust_plugins.manifold._condensed.CondensedTree`) whose nodes
    ``selected`` (ids, root = 0) gave ``labels`` to the rows ``E`` (see the module notes)."""
    selected = np.asarray(selected, dtype=np.int64)
    is_leaf = np.array([not tree.children[c] for c in range(tree.n_nodes)])
    leaf_id = np.full(tree.n_nodes, -1, dtype=np.int64)
    leaf_id[is_leaf] = np.arange(int(is_leaf.sum()))
    owner = _owners(tree, selected)
    rep = _first_leaf(tree, is_leaf)
    atoms = _atoms(tree, np.asarray(labels, dtype=np.int64), E, owner, is_leaf, leaf_id, rep)
    inner, outer = [], []
    for c in range(tree.n_nodes):
        kids = tree.children[c]
        if not kids:
            continue
        lam = float(tree.birth[kids[0]])
        height = 1.0 / lam if lam > 0 else np.inf
        for kid in kids[1:]:
            pair = (int(leaf_id[rep[kids[0]]]), int(leaf_id[rep[kid]]), height)
            (inner if owner[c] >= 0 else outer).append(pair)
    order = sorted(inner, key=lambda t: t[2]) + sorted(outer, key=lambda t: t[2])
    merges = np.array([(a, b) for a, b, _ in order], dtype=np.int64).reshape(-1, 2)
    heights = np.array([h for _, _, h in order], dtype=np.float64)
    heights[~np.isfinite(heights)] = heights[np.isfinite(heights)].max(initial=1.0)
    return atoms, merges, heights, int(is_leaf.sum())


def leaves_appear(raw: np.ndarray, n: int, tree) -> float:
    """The distance by which every leaf of the condensed tree exists: each leaf appears
    at ``1/λ`` of its densest point (the last to fall out of it), the last leaf at the
    largest of these."""
    parent = np.asarray(raw["parent"], dtype=np.int64) - n
    child = np.asarray(raw["child"], dtype=np.int64)
    lam = np.asarray(raw["lambda_val"], dtype=np.float64)
    finite = np.isfinite(lam)
    lam = np.where(finite, lam, lam[finite].max(initial=0.0))
    pts = child < n
    top = np.zeros(tree.n_nodes)
    np.maximum.at(top, parent[pts], lam[pts])
    leaves = [c for c in range(tree.n_nodes) if not tree.children[c]]
    dens = top[leaves]
    dens = dens[dens > 0]
    return float(1.0 / dens.min()) if dens.size else 0.0
