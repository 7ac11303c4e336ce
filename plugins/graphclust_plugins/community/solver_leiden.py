"""Leiden modularity optimisation (``leidenalg`` on igraph) as a solver that finds ``k``.

Why a solver, paired with the ``argmax`` rounding, and not one part of another kind:
a :class:`graphclust.Rounding` sees only a :class:`graphclust.Solution` (an embedding or
a soft assignment), never the graph, so an optimisation over the graph's edges can only
be a :class:`graphclust.Solver` (it receives the graph). Its result is a hard partition,
which the solver hands on as what the contracts already carry: a one-hot soft assignment
(``provides = {soft}``), which ``argmax`` turns into the labels unchanged (a one-hot row
has a single nonzero). The pair therefore needs no new contract, composes with every
part that reads a soft assignment (an ensemble's members, ``predict``-free pipelines),
and keeps ``k`` handling in the one dispatch of :mod:`graphclust` (the solver declares
``estimates_k = "modularity"``: with no ``n_clusters`` the plan asks it for ``k`` before
:meth:`LeidenSolver.solve`, :doc:`/choosing-k`).
"""

from __future__ import annotations

import warnings

import graphclust
import numpy as np
import scipy.sparse as sp

from graphclust_plugins.community._leiden import (
    MERGE_LIMIT,
    TooManyToMerge,
    attach_isolated,
    igraph_of,
    leiden_membership,
    membership_with_k,
    n_communities,
)
from graphclust_plugins.community._split import split_communities

__all__ = ["LeidenSolver", "ResolutionGapWarning"]


class ResolutionGapWarning(graphclust.GraphClustWarning):
    """No resolution of the modularity tried gives exactly the ``n_clusters`` asked; the
    partition with the fewest communities above it was merged down greedily."""


@graphclust.part
class LeidenSolver(graphclust.Solver):
    """Leiden modularity optimisation (leidenalg): finds k, or searches the resolution for k.

    The Leiden algorithm (Traag, Waltman & van Eck, *From Louvain to Leiden: guaranteeing
    well-connected communities*, Scientific Reports 9, 5233, 2019) run by ``leidenalg``
    (``find_partition`` with ``RBConfigurationVertexPartition``, the modularity with a
    resolution ``γ``; at ``γ = 1``, leidenalg's default, Newman–Girvan modularity) on the
    edge weights of a sparse :class:`~graphclust.AffinityGraph`. Nothing of the
    optimisation is written here.

    Rules
    -----
    * **No** ``n_clusters`` (:meth:`estimate_k`): the number of communities of the
      partition at ``resolution``, clipped to ``[k_min, k_max]`` (``k_max`` default 20;
      raise it, e.g. ``GraphClustering(k_max=...)``, for graphs of many communities: a
      clipped count is searched for as a given ``k`` and warned about as the top of the
      range). The partition found is kept for :meth:`solve`, so it runs once.
    * **Given** ``n_clusters = k``: Leiden at ``resolution``; if that partition does not
      have ``k`` communities, the resolution is searched (doubled or halved until the
      count brackets ``k``, then bisected in ``log γ``; at most ``max_search`` runs):
      the number of communities of the modularity optimum grows with ``γ`` (Reichardt &
      Bornholdt 2006; Traag et al. 2019, Sec. 2: ``γ`` is the density a community must
      exceed). When no ``γ`` tried gives ``k`` (the count jumps over it), the partition
      with the fewest communities above ``k`` is merged down to ``k`` by Newman's greedy
      modularity rule (2004, Eq. 4) on its community graph, with a
      :class:`ResolutionGapWarning` (one per fit) saying so; above 3000 communities to
      merge (more components than ``k``: a modularity partition keeps components apart)
      the fit is refused with an :class:`~graphclust.InputError` naming the
      ``graph-spectral`` preset.
    * **Without** ``k``, graph ``auto`` passes ``k_max = ceil(sqrt(nnz))``
      (``graph_auto``): the most communities modularity can resolve.
    * The solution's ``soft`` (:func:`edge_shares`, columns in order of first appearance)
      is the membership lifted by the share of each vertex's edge weight each community
      holds, so ``argmax`` gives the partition and its margin (the confidence) says how
      much of a vertex's weight lies outside its community; ``info`` holds the resolution kept, every ``(γ, count)`` tried,
      the number of merges and the modularity of the partition.
    * Deterministic: every Leiden run is seeded with ``ctx.seed_for("solver.leiden")``
      (the same seed for each ``γ`` tried); leidenalg runs on one thread.
    * Self-loops enter as loops of weight ``A_ii / 2`` (igraph counts a loop twice), so
      the degrees are the row sums of ``A``, as in :func:`graphclust.modularity`.
      Isolated vertices (zero degree), which Leiden leaves alone, join the largest
      community (the modularity does not change; ``attach_isolated``), so
      they never count as communities of their own.
    * Cost: a Leiden run is near-linear in the edges, ``O(nnz)`` memory for the igraph
      copy, built once a fit (from NumPy arrays, no Python list of edges; without an
      edge-weight attribute when every weight is equal, where modularity is the same);
      the ``soft`` of the solution is sparse (CSR, a few entries a row).
    """

    name = "leiden"
    accepts = frozenset({graphclust.GraphKind.AFFINITY})
    needs_features = False
    accepts_sparse = True  # reads nothing of X (the graph only)
    provides = frozenset({graphclust.SolutionField.SOFT})
    estimates_k = "modularity"

    resolution: float = graphclust.param(
        1.0, doc="Resolution γ of the modularity (RBConfiguration quality; 1 = Newman-Girvan "
        "modularity, leidenalg's default); higher γ, more and smaller communities.",
        check=graphclust.real(0.0, low_open=True))
    n_iterations: int = graphclust.param(
        2, doc="Leiden iterations per run (leidenalg's n_iterations; its default 2; -1 = "
        "until an iteration changes nothing).",
        check=graphclust.any_of(graphclust.integer(1), graphclust.one_of(-1)))
    max_search: int = graphclust.param(
        40, doc="Most Leiden runs when searching the resolution for a given k.",
        check=graphclust.integer(1))
    split: bool = graphclust.param(
        False, doc="After each Leiden run, re-optimise every community from singletons "
        "under the whole graph's modularity (a Leiden run on its induced subgraph: CPM with "
        "the vertices' degrees as sizes and resolution γ/2m) and keep a split where it "
        "raises the modularity; escapes partitions that join planted communities on large "
        "graphs at about one more Leiden pass (docs/graphs-auto.rst).",
        check=graphclust.boolean)

    def _runner(self, graph, ctx):
        """``run(γ)``: the Leiden membership at resolution ``γ``; the igraph copy of the
        graph is built at the first run and kept for the others of this graph (one copy
        a fit, however many resolutions are tried)."""
        seed = ctx.seed_for("solver.leiden")
        degrees = graph.degrees
        held = {}

        def run(gamma):
            if "ig" not in held:
                held["ig"] = igraph_of(graph.adjacency)
            ig, weighted = held["ig"]
            membership = leiden_membership(ig, gamma, seed, self.n_iterations, weighted)
            if self.split:
                membership, _ = split_communities(
                    graph.adjacency, membership, degrees, gamma, seed, self.n_iterations)
            return attach_isolated(membership, degrees)

        return run

    def estimate_k(self, graph, X, k_min, k_max, ctx):
        """The number of communities of the Leiden partition at ``resolution``, clipped to
        ``[k_min, k_max]`` (a :class:`graphclust.KSelection` of method ``modularity``)."""
        run = self._runner(graph, ctx)
        membership = run(self.resolution)
        found = n_communities(membership)
        self._found = (graph, ctx.seed_for("solver.leiden"), membership)
        k = min(max(found, k_min), k_max)
        rule = (f"communities of the Leiden partition maximising the modularity at "
                f"resolution {self.resolution:g} (Traag, Waltman & van Eck 2019)")
        if k != found:
            rule += (f"; it has {found}, outside [{k_min}, {k_max}]: {k} is searched for by "
                     "the resolution")
        Q = float(graph.modularity(membership))
        return graphclust.KSelection(
            "modularity", int(k), (int(found),), (Q,), rule, f"solver {self.name!r}",
            int(k_min), int(k_max), structure=found > 1,
            details={"communities": int(found), "modularity": Q,
                     "resolution": float(self.resolution)})

    def solve(self, graph, X, n_clusters, ctx):
        if not isinstance(graph, graphclust.AffinityGraph):  # pragma: no cover - composer
            raise graphclust.InputError(f"solver 'leiden' needs an affinity graph, got "
                                        f"{type(graph).__name__}")
        k = int(n_clusters)
        seed = ctx.seed_for("solver.leiden")
        found = getattr(self, "_found", None)
        self._found = None
        first = None
        if found is not None and found[0] is graph and found[1] == seed:
            first = found[2]
        try:
            membership, search = membership_with_k(self._runner(graph, ctx), graph.adjacency,
                                                   k, self.resolution, self.max_search, first)
        except TooManyToMerge as exc:
            raise graphclust.InputError(
                f"solver 'leiden': no resolution gives {k} communities, and the partition "
                f"nearest above it has {exc.communities} (the graph has "
                f"{graph.n_components()} connected components, and a modularity partition "
                f"keeps them apart); merging more than {MERGE_LIMIT} communities is refused "
                "(c x c memory). Give n_clusters of at least the number of components, or "
                "use the regularised spectral embedding (preset 'graph-spectral')") from None
        if search.merged:
            warnings.warn(
                f"solver 'leiden': no resolution tried gives exactly {k} communities "
                f"((resolution, communities) tried: "
                f"{', '.join(f'({g:.3g}, {c})' for g, c in zip(search.resolutions, search.counts))}"
                f"); the partition with {k + search.merged} communities at resolution "
                f"{search.resolution:.3g} was merged down to {k} by greedy modularity "
                "(Newman 2004)", ResolutionGapWarning, stacklevel=2)
        _, codes = np.unique(membership, return_inverse=True)
        order = _first_seen_order(codes)
        codes = order[codes]
        soft = edge_shares(graph.adjacency, codes)
        return graphclust.Solution(
            soft=soft, info={"resolution": search.resolution, "k_search": search.as_dict(),
                             "modularity": float(graph.modularity(codes)),
                             "communities": int(soft.shape[1])})


#: Weight of the membership in :func:`edge_shares`: above one half, so the vertex's own
#: community is its row's largest entry whatever the shares (the argmax is the partition).
OWN_WEIGHT = 0.51


def edge_shares(A, codes: np.ndarray) -> sp.csr_array:
    """``n x k`` soft assignment ``w·H + (1 − w)·D⁻¹ A H`` with ``w`` = :data:`OWN_WEIGHT`:
    the one-hot membership ``H`` lifted by the share of each vertex's edge weight that
    goes to each community (a vertex of no edge: its membership). Rows sum to one; the
    row's own entry is at least ``w > 1 − w``, the most any other entry can hold.

    Sparse (CSR): a row holds its own community and those its neighbours are in, so the
    entries are at most ``n + nnz(A)`` and usually a few a row (at ``n = 10**6``,
    ``k = 100`` the dense form would take 800 MB)."""
    n = codes.size
    k = int(codes.max()) + 1 if n else 1
    H = sp.csr_array((np.ones(n), (np.arange(n), codes)), shape=(n, k))
    share = sp.csr_array(A) @ H
    degree = np.asarray(share.sum(axis=1)).ravel()
    has = degree > 0
    scale = np.divide(1.0 - OWN_WEIGHT, degree, out=np.zeros(n), where=has)
    own = np.where(has, OWN_WEIGHT, 1.0)  # a vertex of no edge: its membership alone
    soft = sp.diags_array(scale) @ share + sp.diags_array(own) @ H
    soft = sp.csr_array(soft)
    soft.sum_duplicates()
    return soft


def _first_seen_order(codes: np.ndarray) -> np.ndarray:
    """New number of each code so that codes are numbered in order of first appearance."""
    if codes.size == 0:
        return np.zeros(0, dtype=np.int64)
    _, first = np.unique(codes, return_index=True)
    return np.argsort(np.argsort(first)).astype(np.int64)
