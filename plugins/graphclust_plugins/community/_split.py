"""A second pass of Leiden inside every community, under the whole graph's null model.

On large graphs Leiden's local moves can stop in a partition that joins several planted
communities into one (``python -m benchmarks graph_scale``: 100 planted blocks of a
3 * 10**5-node graph found as 15 communities, modularity well below the blocks'). More
iterations do not leave it: each merged community is a local optimum for moves of single
vertices and of the aggregated pieces Leiden forms, because those pieces straddle the
planted blocks. Re-optimising each community from singletons does leave it, provided the
objective is still the whole graph's modularity.

:func:`split_communities` does that. For a community ``C`` and a partition ``P`` of its
vertices, the part of the modularity at resolution ``γ`` (Reichardt & Bornholdt 2006,
the ``RBConfigurationVertexPartition`` of leidenalg) that depends on how ``C`` is split is,
times ``2m``,

    q(P) = Σ_{p ∈ P} [ w(p) − γ · vol(p)² / 2m ],

with ``w(p)`` the weight of the entries of ``A`` inside ``p`` (each edge counted from both
ends), ``vol(p)`` the sum of the *whole graph's* degrees of its vertices and ``2m`` the
total degree. That is the Constant Potts Model (Traag, Van Dooren & Nesterov 2011,
leidenalg's ``CPMVertexPartition``) on the induced subgraph of ``C`` with each vertex's
size its degree in the whole graph and resolution ``γ / 2m``: so a Leiden run on the
subgraph maximises exactly the modularity restricted to splits of ``C``, and nothing of the
optimisation is written here. A split is kept only when ``q(P) > q({C})``, computed here
from the subgraph, so the modularity of the partition never decreases.

Cost: one Leiden run per community on its induced subgraph, about one more Leiden pass
over the edges inside communities; memory one community's subgraph (and its igraph copy)
at a time.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from graphclust_plugins.community._leiden import igraph_of

__all__ = ["split_communities", "split_quality"]


def split_quality(sub: sp.csr_array, parts: np.ndarray, volumes: np.ndarray,
                  resolution: float, total: float) -> float:
    """``q(P) = Σ_p [w(p) − γ vol(p)² / 2m]`` of the parts ``parts`` of a community whose
    induced adjacency is ``sub`` and whose vertices' whole-graph degrees are ``volumes``
    (``total`` = ``2m``, the whole graph's degree sum; ``resolution`` = ``γ``)."""
    parts = np.asarray(parts, dtype=np.int64)
    sub = sp.coo_array(sub)
    inside = float(sub.data[parts[sub.row] == parts[sub.col]].sum())
    vol = np.bincount(parts, weights=volumes)
    return inside - float(resolution) * float(np.dot(vol, vol)) / float(total)


def _leiden_parts(sub: sp.csr_array, volumes: np.ndarray, resolution: float, total: float,
                  seed: int, n_iterations: int) -> np.ndarray:
    """Leiden (CPM, vertex sizes = whole-graph degrees, resolution ``γ / 2m``) on one
    community's induced subgraph, from singletons, seeded."""
    import leidenalg

    graph, weighted = igraph_of(sub)
    part = leidenalg.CPMVertexPartition(
        graph, weights="weight" if weighted else None, node_sizes=volumes.tolist(),
        resolution_parameter=float(resolution) / float(total))
    optimiser = leidenalg.Optimiser()
    optimiser.set_rng_seed(int(seed))
    optimiser.optimise_partition(part, n_iterations=int(n_iterations))
    return np.asarray(part.membership, dtype=np.int64)


def split_communities(adjacency, membership: np.ndarray, degrees: np.ndarray,
                      resolution: float, seed: int, n_iterations: int
                      ) -> tuple[np.ndarray, int]:
    """``(membership, splits)``: every community of ``membership`` re-optimised from
    singletons under the whole graph's modularity at ``resolution`` (module docstring),
    the split kept where it raises that modularity, then the parts of every split
    community in turn, until no part splits; ``splits`` counts the splits kept. New
    communities take labels after the existing ones; communities of one vertex and of no
    edge are left as they are.

    A community whose split was refused is not asked again: its subgraph and the seed
    are the same, so Leiden would give the same parts. Only the parts of a split are, so
    the later rounds cost a pass over those parts' edges only.
    """
    A = sp.csr_array(adjacency)
    degrees = np.asarray(degrees, dtype=np.float64)
    _, codes = np.unique(np.asarray(membership), return_inverse=True)
    out = codes.astype(np.int64)
    total = float(degrees.sum())
    if total <= 0 or out.size == 0:
        return out, 0
    label = int(out.max()) + 1
    splits = 0
    ask = list(range(label))
    while ask:
        order = np.argsort(out, kind="stable")
        bounds = np.searchsorted(out[order], np.arange(label + 1))
        new = []
        for c in ask:
            members = order[bounds[c]:bounds[c + 1]]
            parts = _split_one(A[members][:, members], degrees[members], resolution, total,
                               seed, n_iterations) if members.size > 1 else None
            if parts is None:
                continue
            out[members] = np.where(parts == 0, c, label + parts - 1)
            new += [c, *range(label, label + int(parts.max()))]
            label += int(parts.max())
            splits += 1
        ask = new
    return out, splits


def _split_one(sub: sp.csr_array, volumes: np.ndarray, resolution: float, total: float,
               seed: int, n_iterations: int) -> np.ndarray | None:
    """The parts ``0..p-1`` of one community's best split found by Leiden, or ``None``
    when it has no edge, Leiden keeps it whole, or the split does not raise ``q``."""
    if sub.nnz == 0:
        return None
    parts = _leiden_parts(sub, volumes, resolution, total, seed, n_iterations)
    if parts.max() == 0:
        return None
    whole = split_quality(sub, np.zeros(parts.size, dtype=np.int64), volumes, resolution,
                          total)
    gain = split_quality(sub, parts, volumes, resolution, total) - whole
    if gain <= 1e-12 * max(abs(whole), 1.0):
        return None
    return np.unique(parts, return_inverse=True)[1].astype(np.int64)
