"""A graph as the input: ``GraphClustering(graph="precomputed").fit(A)`` (:doc:`/graphs`).

scikit-learn's precomputed convention: what ``fit`` receives is the graph itself, an
``n x n`` nonnegative affinity (a scipy sparse matrix, a dense array, a networkx or an
igraph graph), and there is no ``X``. This module holds, in one place each:

* :func:`graph_matrix`: the conversion of what the user hands ``fit`` into a clean,
  symmetric CSR matrix and the node ids of its rows, with the malformed-graph rules
  (refused: not square, no node, no edge, negative, NaN or infinite weights, a type that
  is no graph; handled: a directed graph is symmetrised with a warning, self-loops and
  stored zeros are dropped);
* :func:`check_runs_on_graph`: the refusal, before any work, of every part that reads
  the features, naming the registered parts that can run on a graph (derived from the
  parts' ``needs_features`` and ``accepts`` declarations, never from a list kept here);
* :func:`graph_default_spec`: the spec ``"auto"`` runs on a precomputed graph (the
  registered rule preset ``graph-auto``), and :func:`graph_k_max`, the ``k`` searched;
* :class:`OnGraph`: the executor of such a fit (in memory; it hands the pipeline the
  graph as its precomputed graph stage and no ``X``); a Dask collection of edges or of
  the rows of ``A`` is assembled into the CSR matrix first, block by block
  (:mod:`graphclust._graph_dask`).
"""

from __future__ import annotations

import warnings
from typing import Any

import attrs
import numpy as np
import scipy.sparse as sp

from graphclust._contracts import GraphKind
from graphclust._errors import (
    DirectedGraphWarning,
    IncompatiblePartsError,
    InputError,
    Problem,
    ProblemKind,
)

__all__ = ["GRAPH_RULE_PRESET", "PRECOMPUTED", "GraphProfile", "OnGraph",
           "check_runs_on_graph", "graph_default_spec", "graph_k_max", "graph_matrix",
           "is_precomputed", "parts_on_graph"]

#: The value of the estimator's ``graph`` parameter that makes ``fit`` take the graph.
PRECOMPUTED = "precomputed"
#: Relative size of ``|a_ij - a_ji|`` (to the largest weight) below which a matrix is
#: taken as symmetric up to rounding: symmetrised silently, no warning.
SYMMETRY_RTOL = 1e-10


def is_precomputed(estimator) -> bool:
    """Whether ``estimator`` was asked to fit the graph it is given (``graph="precomputed"``)."""
    value = getattr(estimator, "graph", None)
    return isinstance(value, str) and value == PRECOMPUTED


# -- the graph a user hands fit ---------------------------------------------------------
def _module(obj) -> str:
    return (type(obj).__module__ or "").split(".")[0]


def _from_networkx(G):
    import networkx as nx

    nodes = list(G.nodes())
    try:
        A = nx.to_scipy_sparse_array(G, nodelist=nodes, weight="weight", dtype=np.float64,
                                     format="csr")
    except (TypeError, ValueError) as exc:
        raise InputError(f"the networkx graph's edge weights ('weight') are not numbers: "
                         f"{exc}") from None
    return A, nodes


def _from_igraph(G):
    weighted = "weight" in G.es.attributes()
    try:
        A = G.get_adjacency_sparse(attribute="weight" if weighted else None)
    except (TypeError, ValueError) as exc:
        raise InputError(f"the igraph graph's edge weights ('weight') are not numbers: "
                         f"{exc}") from None
    nodes = list(G.vs["name"]) if "name" in G.vs.attributes() else None
    return sp.csr_array(A, dtype=np.float64), nodes


def graph_matrix(G) -> tuple[sp.csr_array, list | None, dict[str, int]]:
    """``(A, nodes, counts)``: the graph ``G`` as a clean symmetric CSR matrix.

    Parameters
    ----------
    G : sparse matrix, ndarray, networkx graph or igraph graph
        An ``n x n`` nonnegative affinity. A networkx graph is read with its edges'
        ``weight`` attribute (1 without one) in the order of ``G.nodes()``; an igraph
        graph with its ``weight`` edge attribute, its nodes named by ``name`` when set.

    Returns
    -------
    A : csr_array of shape (n, n), float64 (float32 kept)
        Symmetric, no stored zero, no diagonal entry.
    nodes : list or None
        The node id of each row (networkx / igraph graphs), ``None`` for a matrix (the
        row index is the id).
    counts : dict
        ``self_loops`` and ``zeros`` dropped, ``asymmetric`` node pairs (``a_ij != a_ji``)
        found before symmetrising.

    Notes
    -----
    The malformed-graph rules (:doc:`/graphs`). Refused with
    :class:`~graphclust.InputError`: a value that is no matrix or graph, not 2-D or not
    square, no node, non-numeric, NaN or infinite or negative weights, no
    edge left. Handled: a directed (asymmetric) graph becomes ``(A + Aᵀ) / 2`` with a
    :class:`~graphclust.DirectedGraphWarning` (entries that differ only by rounding,
    relative :data:`SYMMETRY_RTOL`, are averaged silently); self-loops are dropped (no
    part reads a node's affinity to itself, and in a normalised cut they only inflate
    the node's degree); stored zeros are dropped (they are no edge). Nothing is
    densified: every step is ``O(nnz)`` on a sparse input. A CSR matrix these rules
    leave unchanged (float, canonical, positive finite weights, no diagonal entry,
    exactly symmetric) is used as it is, not copied: the fitted graph shares its arrays
    (nothing writes into them).
    """
    nodes = None
    kind = _module(G)
    if kind == "networkx":
        A, nodes = _from_networkx(G)
    elif kind == "igraph":
        A, nodes = _from_igraph(G)
    elif sp.issparse(G):
        A = G
    elif isinstance(G, (np.ndarray, list, tuple)) or hasattr(G, "__array__"):
        A = np.asarray(G)  # a dense matrix, nested lists, a pandas adjacency frame
    elif G is None:
        raise InputError('graph="precomputed": fit(A) needs the graph A (an n x n sparse '
                         "matrix, array, networkx or igraph graph), got None")
    else:
        raise InputError(f'graph="precomputed": fit(A) takes an n x n scipy sparse matrix, '
                         f"a NumPy array, a networkx or an igraph graph; got "
                         f"{type(G).__name__}")
    shape = np.shape(A)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InputError(f'graph="precomputed": the graph must be a square n x n matrix, got '
                         f"shape {shape} (an n x m anchor matrix Z is given as graph=Z "
                         "beside the features: fit(X))")
    if shape[0] == 0:
        raise InputError('graph="precomputed": the graph is empty (0 nodes)')
    if A.dtype.kind not in "biuf":
        raise InputError(f'graph="precomputed": the weights must be numbers, got dtype '
                         f"{A.dtype}")
    if _clean_already(A):
        return sp.csr_array(A), nodes, {"self_loops": 0, "zeros": 0, "asymmetric": 0}
    dtype = np.float32 if A.dtype == np.float32 else np.float64
    A = sp.coo_array(A, dtype=dtype)
    A.sum_duplicates()
    return _clean(A, nodes)


def _clean_already(A) -> bool:
    """Whether ``A`` is a CSR matrix the rules leave as it is, so that it is used without
    a copy: float32/64, canonical (sorted, no duplicate), every stored weight finite and
    positive, no diagonal entry, and exactly symmetric (its transpose has the same index
    arrays and weights). The check costs one transposed copy (``A`` in CSC order), freed
    on return; anything else takes the general path of :func:`_clean`, which copies."""
    if not (sp.issparse(A) and A.format == "csr" and A.dtype in (np.float32, np.float64)):
        return False
    if A.nnz == 0 or not A.has_canonical_format:
        return False
    if not (np.all(np.isfinite(A.data)) and A.data.min() > 0):
        return False
    if np.any(A.diagonal() != 0):
        return False
    At = A.T.tocsr()
    return bool(np.array_equal(At.indptr, A.indptr) and np.array_equal(At.indices, A.indices)
                and np.array_equal(At.data, A.data))


def _clean(A: sp.coo_array, nodes) -> tuple[sp.csr_array, list | None, dict[str, int]]:
    bad = ~np.isfinite(A.data)
    if bad.any():
        raise InputError(f'graph="precomputed": {int(bad.sum())} edge weight(s) are NaN or '
                         "infinite; weights must be finite")
    negative = A.data < 0
    if negative.any():
        i = int(np.flatnonzero(negative)[0])
        raise InputError(f'graph="precomputed": {int(negative.sum())} edge weight(s) are '
                         f"negative (e.g. {A.data[i]:g} at ({A.row[i]}, {A.col[i]})); an "
                         "affinity must be nonnegative (turn distances or signed similarities "
                         "into affinities first, e.g. exp(-d**2 / s**2))")
    loops = A.row == A.col
    zeros = A.data == 0
    counts = {"self_loops": int((loops & ~zeros).sum()), "zeros": int(zeros.sum())}
    keep = ~(loops | zeros)
    n = A.shape[0]
    A = sp.csr_array((A.data[keep], (A.row[keep], A.col[keep])), shape=(n, n))
    if A.nnz == 0:
        raise InputError(f'graph="precomputed": the graph has {n} node(s) and no edge (after '
                         "dropping self-loops and zero weights): there is nothing to cluster")
    At = A.T.tocsr()
    diff = (A - At).tocsr()
    diff.eliminate_zeros()
    top = float(A.data.max())
    # diff is antisymmetric: each node pair with a_ij != a_ji is stored twice
    asym = int(np.count_nonzero(np.abs(diff.data) > SYMMETRY_RTOL * top)) // 2
    counts["asymmetric"] = asym
    if asym:
        warnings.warn(f"the precomputed graph is directed: {asym} node pair(s) have "
                      "a_ij != a_ji; it is clustered as the undirected graph "
                      "(A + A.T) / 2 (symmetrise it yourself to choose another rule)",
                      DirectedGraphWarning, stacklevel=7)  # the caller of fit
    S = ((A + At) * 0.5).tocsr()
    S.sort_indices()
    return S, nodes, counts


# -- which parts can run on a graph -----------------------------------------------------
def parts_on_graph(registry=None) -> dict[str, list[str]]:
    """The registered parts that can run on a precomputed graph, by kind: solvers that
    accept an affinity graph and do not declare ``needs_features``, and roundings that do
    not (anchor selectors, graph builders and adapters all read ``X`` or an anchor graph)."""
    from graphclust._plugins import get_registry

    registry = registry or get_registry()
    solvers = [r.name for r in registry.parts("solver").records()
               if GraphKind.AFFINITY in r.cls.accepts and not r.cls.needs_features]
    roundings = [r.name for r in registry.parts("rounding").records()
                 if not r.cls.needs_features]
    return {"solver": sorted(solvers), "rounding": sorted(roundings)}


def _what_runs(registry) -> str:
    can = parts_on_graph(registry)
    return (f"on a precomputed graph run the solvers {', '.join(can['solver'])} and the "
            f"roundings {', '.join(can['rounding'])} (no anchors, graph builder, adapter or "
            "scale: they read X)")


def _part_class(section: str, value: Any, registry):
    """The part class a spec section names (None when the composer will report it)."""
    from graphclust._parts import Part

    if isinstance(value, Part):
        return type(value)
    name = value.get("name") if isinstance(value, dict) else value
    if not isinstance(name, str) or name not in registry.parts(section).names():
        return None
    return registry.parts(section).get(name)


def check_runs_on_graph(spec: dict, registry=None) -> None:
    """Refuse, before any work, a spec that cannot run on a precomputed graph.

    Raises :class:`~graphclust.IncompatiblePartsError` listing every section whose part
    reads the features (``needs_features``), a solver that does not accept an affinity
    graph, a ``scale`` other than ``"none"`` and an ensemble spec, each problem naming
    the registered parts that can run on a graph (:func:`parts_on_graph`)."""
    from graphclust._plugins import get_registry

    registry = registry or get_registry()
    problems: list[Problem] = []

    def refuse(loc: str, what: str) -> None:
        problems.append(Problem(loc, f"{what}; {_what_runs(registry)}",
                                ProblemKind.INCOMPATIBLE))

    if "ensemble" in spec:
        refuse("ensemble", "an ensemble spec cannot take a precomputed graph yet (each member "
               "builds its own graph from X)")
    if spec.get("scale", "none") not in ("none", None):
        refuse("scale", f"scale {spec['scale']!r} rescales the columns of X, and a fit on a "
               "precomputed graph has no X")
    for section in ("anchors", "adapter", "solver", "rounding"):
        value = spec.get(section)
        if value is None:
            continue
        cls = _part_class(section, value, registry)
        if cls is None:
            continue
        if cls.needs_features:
            refuse(section, f"{section} {cls.name!r} reads the features X, and a fit on a "
                   "precomputed graph has none")
        elif section == "solver" and GraphKind.AFFINITY not in cls.accepts:
            refuse(section, f"solver {cls.name!r} needs an anchor graph, and a precomputed "
                   "graph is an n x n affinity")
    if problems:
        raise IncompatiblePartsError(problems, title="parts that need features on a graph")


# -- the default spec -------------------------------------------------------------------
#: The rule preset ``"auto"`` runs on a precomputed graph (the ``community`` bundle's).
GRAPH_RULE_PRESET = "graph-auto"


def graph_default_spec(profile: GraphProfile, registry=None) -> dict:
    """The spec ``"auto"`` (any rule preset) runs on a precomputed graph.

    The rule preset :data:`GRAPH_RULE_PRESET` decides it from the graph's properties
    (size, density; docs/graphs-auto.rst): it is a built-in bundle's, registered like
    any other, so the core names it and never imports it. Where it is not registered
    (a registry built without the built-in bundles), the fixed fallback below runs: the
    normalised cut (Shi & Malik 2000; Ng, Jordan & Weiss 2001) — the ``k`` leading
    eigenvectors of ``D^{-1/2} A D^{-1/2}`` without the trivial one, rows normalised —
    then k-means (10 starts), ``k`` by the eigengap when not given. Its eigenpairs are
    solved to ARPACK's relative tolerance ``1e-5``: they only feed k-means, and on a
    200 000-node planted partition (10 blocks, 3.6 M stored entries) that cut the solve
    from 250 s to 47 s with the same labels (tests/core/test_core_graph_input.py).
    """
    from graphclust._plugins import get_registry

    rules = (registry or get_registry()).rules
    if GRAPH_RULE_PRESET in rules:
        return rules.get(GRAPH_RULE_PRESET).resolve(profile)
    return {
        "summary": "a precomputed graph: normalised-cut spectral embedding, k-means rounding "
                   "(k by the eigengap when not given)",
        "solver": {"name": "spectral", "drop_trivial": True, "normalize_rows": True,
                   "eig_tol": 1e-5},
        "rounding": {"name": "kmeans", "n_init": 10, "normalize_rows": True},
    }


def graph_k_max(A) -> int:
    """``k_max`` searched on a graph when the user gives none: ``ceil(sqrt(entries))``,
    at least :data:`~graphclust.DEFAULT_K_MAX`, at most ``n``.

    Modularity cannot resolve a community with fewer than about ``sqrt(2L)`` internal
    edges, ``L`` the graph's edges (Fortunato & Barthélemy 2007), so a graph holds at
    most about ``2L / sqrt(2L) = sqrt(entries)`` resolvable communities; the default of
    feature data (20) would clip a graph of many small communities.
    """
    from graphclust._kselect import DEFAULT_K_MAX

    n = int(A.shape[0])
    return int(min(max(n, 1), max(DEFAULT_K_MAX, int(np.ceil(np.sqrt(max(A.nnz, 1)))))))


@attrs.frozen(eq=False)
class GraphProfile:
    """What ``"auto"`` decides from on a precomputed graph: the cleaned matrix and the
    ``n_clusters`` asked (``None``: estimated) within ``k_max``."""

    matrix: Any
    k: int | None
    k_max: int


# -- the executor -----------------------------------------------------------------------
class OnGraph:
    """A fit on a precomputed graph: the pipeline gets the graph as its graph stage's
    output and no ``X``; in memory only."""

    chunked = False

    def take(self, estimator, G, profile_k):
        """``(A, profile)``: the cleaned graph (:func:`graph_matrix`); the estimator
        records the node ids (``nodes_``) and ``n_features_in_ = n`` (scikit-learn's
        precomputed convention)."""
        dask_nodes = None
        if hasattr(G, "__dask_graph__"):  # a Dask collection: assembled block by block
            from graphclust._graph_dask import dask_graph

            G, dask_nodes = dask_graph(G)
        A, nodes, counts = graph_matrix(G)
        if dask_nodes is not None:
            nodes = dask_nodes
        self.counts = counts
        estimator.nodes_ = nodes
        estimator.n_features_in_ = int(A.shape[0])
        estimator._column_map, estimator._unit = None, 1.0
        estimator.__dict__.pop("feature_names_in_", None)
        profile = None if profile_k is None else GraphProfile(A, *profile_k)
        return A, profile

    def fit(self, plan):
        from graphclust._degenerate import warn_fewer_labels
        from graphclust._fitwarnings import one_warning_per_cause

        pipe = plan.pipeline
        pipe.graph.matrix = plan.X
        with one_warning_per_cause():
            result = pipe.run(None, plan.y, n_clusters=plan.n_clusters, ctx=plan.ctx,
                              k_range=plan.k_range)
            warn_fewer_labels(result.labels, result.n_clusters or plan.n_clusters, plan.who,
                              "nodes")
        result.graph.info.update({f"dropped_{k}" if k != "asymmetric" else k: v
                                  for k, v in self.counts.items()})
        return result

    def embedding(self, plan, result):
        sol = result.solution
        return sol.embedding if sol.embedding is not None else sol.soft

    def held(self, value, what: str):
        return value
