"""The noise rule of a graph given as the input: a node no more attached to its own
cluster than the configuration model expects (:doc:`/confidence`, the noise rule;
:doc:`/graphs`).

A graph fit has no features, so the framework's rule of feature fits (each cluster a
Gaussian, :mod:`graphclust.numerics.confidence`) has nothing to measure. What a graph
does say about a node is how its edge weight splits between the clusters. Let ``d_i``
be node ``i``'s weighted degree, ``w_i(c)`` the weight of its edges into cluster ``c``,
``vol(c)`` the sum of the degrees of ``c``'s nodes and ``vol(G)`` that of all nodes.
Under the configuration model (the null of the modularity, Newman 2006, *Modularity
and community structure in networks*, PNAS 103, eq. 3) an edge end of ``i`` lands in
``c`` with probability ``vol(c) / vol(G)``, so ``i`` is expected to send
``d_i · vol(c) / vol(G)`` of its weight into ``c`` whatever ``c`` is. Node ``i``, labelled
``c``, is **noise** when

.. math::

    d_i = 0 \\quad\\text{or}\\quad w_i(c) < d_i \\, \\frac{\\mathrm{vol}(c)}{\\mathrm{vol}(G)},

that is when its own term in the modularity sum is negative: it is attached to its
cluster less than to a random set of the same volume, so the fit's label carries no
evidence of membership (a node of no edge carries none at all). A node exactly at the
expectation is kept, so with one cluster (``vol(c) = vol(G)``, ``w_i(c) = d_i``) nothing
but isolated nodes is flagged. Nothing is tuned: the threshold is the null's own
expectation, read off the graph's degrees and the fit's labels. Self-loops are not
edges to the cluster (the graph input drops them before any part runs).

New nodes (``predict`` after ``noise=True``) are judged by the same inequality, with
``d_i`` the weight of their edges to the fitted nodes and the fitted clusters' volume
shares (:func:`cluster_volume_shares`), so a node flagged as a new node would have been
flagged among the fitted ones. Cost: ``O(nnz(A))``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["cluster_volume_shares", "graph_outliers", "weakly_attached"]


def cluster_volume_shares(A, labels: np.ndarray, width: int) -> np.ndarray:
    """``vol(c) / vol(G)`` for each cluster ``c < width``: the share of the graph's
    degree sum held by the nodes labelled ``c`` (nodes labelled ``-1`` hold theirs
    outside every cluster). All zeros for a graph of no edge."""
    labels = np.asarray(labels, dtype=np.int64)
    degree = np.asarray(A.sum(axis=1)).ravel().astype(np.float64)
    total = degree.sum()
    keep = labels >= 0
    volume = np.bincount(labels[keep], weights=degree[keep], minlength=width)[:width]
    return volume / total if total > 0 else np.zeros(width)


def weakly_attached(own: np.ndarray, degree: np.ndarray, share: np.ndarray) -> np.ndarray:
    """The inequality of the module: ``degree == 0`` or ``own < degree · share``, where
    ``own`` is each node's edge weight into its cluster and ``share`` that cluster's
    ``vol(c) / vol(G)`` (all arrays one value a node)."""
    own, degree, share = (np.asarray(a, dtype=np.float64) for a in (own, degree, share))
    return (degree <= 0) | (own < degree * share)


def graph_outliers(A, labels: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The nodes of the graph ``A`` (``n x n``, symmetric, nonnegative, no self-loops)
    that the rule of the module flags, given the fit's ``labels`` (``0 .. width-1``),
    and the clusters' volume shares, which ``predict`` applies to new nodes."""
    A = sp.csr_array(A)
    labels = np.asarray(labels, dtype=np.int64)
    n = labels.size
    degree = np.asarray(A.sum(axis=1)).ravel().astype(np.float64)
    shares = cluster_volume_shares(A, labels, width)
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    same = labels[A.indices] == labels[rows]
    own = np.bincount(rows[same], weights=A.data[same], minlength=n)
    return weakly_attached(own, degree, shares[labels]), shares
