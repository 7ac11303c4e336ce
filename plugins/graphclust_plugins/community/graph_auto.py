"""The choice among the community parts for a graph given as the input, from its properties.

:func:`graph_auto` profiles a sparse (or dense) symmetric nonnegative adjacency — its
vertex count, stored entries, mean degree and degree spread, nothing else (never labels,
never a table of data sets) — and walks :data:`GRAPH_AUTO_RULES` in order; the first rule
that applies builds the spec. The rules are argued, with the measurements behind them, in
``docs/graphs-auto.rst``; :func:`describe` prints them.

The specs carry a ``graph`` section (a binary 10-NN graph) only because a spec requires
one: with a graph given (``GraphClustering(spec, graph=A)``) the builder never runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs
import numpy as np
import scipy.sparse as sp

__all__ = [
    "GRAPH_AUTO_RULES",
    "SMALL_GRAPH_ENTRIES",
    "SMALL_GRAPH_STARTS",
    "GraphAutoChoice",
    "GraphProfile",
    "GraphRule",
    "describe",
    "graph_auto",
    "graph_auto_rule",
    "graph_auto_spec",
    "graph_k_max",
    "graph_profile",
    "profile_of_data_profile",
]

#: At most this many stored entries (``2 x`` edges) is a small graph: Leiden iterates to a
#: stable partition and runs from :data:`SMALL_GRAPH_STARTS` seeds (rule 2, no k).
SMALL_GRAPH_ENTRIES = 1_000_000
#: Independent Leiden starts on a small graph; the most modular is kept.
SMALL_GRAPH_STARTS = 5

#: The section a spec needs besides what runs on a given graph (never built then).
_UNUSED_GRAPH = {"name": "knn", "n_neighbors": 10, "weight": "binary"}


@attrs.frozen
class GraphProfile:
    """What the rules may read of a graph.

    Attributes
    ----------
    n : int
        Vertices.
    entries : int
        Stored nonzero entries of the adjacency off the diagonal (``2 x`` the edges).
    mean_degree : float
        Mean number of neighbours, ``entries / n``.
    degree_spread : float
        Coefficient of variation (standard deviation / mean) of the neighbour counts;
        0 for a regular graph, about ``1/sqrt(mean_degree)`` for an Erdős–Rényi graph.
    isolated : int
        Vertices with no neighbour.
    k : int or None
        Clusters asked for (``None``: estimated).
    """

    n: int
    entries: int
    mean_degree: float
    degree_spread: float
    isolated: int
    k: int | None

    @property
    def log_n(self) -> float:
        """``ln n``: the mean degree above which a random graph is connected
        (Erdős–Rényi 1959) and its (unregularised) Laplacian concentrates (Le, Levina &
        Vershynin 2017)."""
        return math.log(max(self.n, 2))

    def as_dict(self) -> dict:
        return attrs.asdict(self)


def graph_profile(A, n_clusters: int | None = None) -> GraphProfile:
    """The :class:`GraphProfile` of an adjacency ``A`` (``O(nnz)``; nothing ``n x n``
    for a sparse ``A``). The diagonal (self-loops) is not counted."""
    A = sp.csr_array(A)
    n = int(A.shape[0])
    counts = np.diff(A.indptr).astype(np.float64)
    diag = A.diagonal()
    counts -= (diag != 0)
    mean = float(counts.mean()) if n else 0.0
    spread = float(counts.std() / mean) if mean > 0 else 0.0
    return GraphProfile(n, int(counts.sum()), mean, spread, int((counts == 0).sum()),
                        None if n_clusters is None else int(n_clusters))


@attrs.frozen
class GraphRule:
    """One rule: ``applies(profile)`` gives the reason (or ``None``), ``build(profile)``
    the spec."""

    number: int
    statement: str
    applies: Callable[[GraphProfile], str | None]
    build: Callable[[GraphProfile], dict]


@attrs.frozen
class GraphAutoChoice:
    """What :func:`graph_auto` chose: the spec, the rule and why, and the ``k_max`` the
    fit should search when no ``k`` is given."""

    spec: dict
    rule: int
    reason: str
    k_max: int
    profile: GraphProfile


def _small(p: GraphProfile) -> bool:
    """A small graph with no ``k`` given: iterate Leiden until stable, several starts.
    With ``k`` given the resolution search already runs Leiden up to about a dozen
    times, so one start of leidenalg's default two iterations per run."""
    return p.entries <= SMALL_GRAPH_ENTRIES and p.k is None


def _leiden(p: GraphProfile) -> dict:
    small = _small(p)
    spec = {"graph": dict(_UNUSED_GRAPH),
            "solver": {"name": "leiden", "resolution": 1.0,
                       "n_iterations": -1 if small else 2, "split": True},
            "rounding": {"name": "argmax"}}
    if small:
        spec["starts"] = SMALL_GRAPH_STARTS
    return spec


def _spectral(p: GraphProfile) -> dict:
    return {"graph": dict(_UNUSED_GRAPH),
            "solver": {"name": "spectral", "tau": "mean-degree", "drop_trivial": False,
                       "normalize_rows": True},
            "rounding": {"name": "kmeans", "n_init": 10, "normalize_rows": True}}


def _sparse_with_k(p: GraphProfile) -> str | None:
    if p.k is not None and p.mean_degree < p.log_n:
        return (f"k = {p.k} given and mean degree {p.mean_degree:.3g} < ln n = "
                f"{p.log_n:.3g}: a sparse graph, regularised spectral embedding")
    return None


def _leiden_reason(p: GraphProfile) -> str:
    if p.k is None:
        size = ("small graph: iterated to a stable partition, the most modular of "
                f"{SMALL_GRAPH_STARTS} starts" if _small(p)
                else "large graph: one run of leidenalg's default two iterations")
        return (f"no k given: Leiden finds it by modularity ({size}; every community then "
                "split where a Leiden run inside it raises the modularity)")
    return (f"k = {p.k} given and mean degree {p.mean_degree:.3g} >= ln n = {p.log_n:.3g}: "
            "Leiden, the resolution searched for k (one start, two iterations a run, "
            "every community split where that raises the modularity)")


#: ``graph auto``'s rules in precedence order (docs/graphs-auto.rst argues each).
GRAPH_AUTO_RULES: tuple[GraphRule, ...] = (
    GraphRule(1, "k given and mean degree below ln n (sparse): regularised spectral "
              "embedding (tau = mean degree, Qin & Rohe 2013), rows normalised, k-means",
              _sparse_with_k, _spectral),
    GraphRule(2, "otherwise (no k, or k given on a graph of mean degree at least ln n): "
              "Leiden modularity (leidenalg); with k the resolution is searched for it; no k "
              f"and at most {SMALL_GRAPH_ENTRIES:,} stored entries: iterated until stable, "
              f"the most modular of {SMALL_GRAPH_STARTS} starts; after each run every "
              "community is split where a Leiden run inside it, under the whole graph's "
              "null model, raises the modularity",
              _leiden_reason, _leiden),
)


def graph_k_max(p: GraphProfile) -> int:
    """``k_max`` for a graph: ``ceil(sqrt(entries))`` (at least 2, at most ``n``).

    Modularity cannot resolve a community with fewer than about ``sqrt(2L)`` internal
    edges, ``L`` the graph's edges (Fortunato & Barthélemy 2007), so a modularity
    partition has at most about ``2L / sqrt(2L) = sqrt(2L) = sqrt(entries)`` communities;
    the default ``k_max`` of feature data (20) would clip graphs of many small
    communities.
    """
    return int(min(max(p.n, 1), max(2, math.ceil(math.sqrt(max(p.entries, 1))))))


def graph_auto(A, n_clusters: int | None = None) -> GraphAutoChoice:
    """Choose the community parts for the graph ``A`` from its properties only.

    Parameters
    ----------
    A : scipy.sparse matrix or ndarray of shape (n, n)
        Symmetric nonnegative adjacency.
    n_clusters : int or None
        Clusters asked for; ``None``: the chosen parts estimate them.

    Returns
    -------
    GraphAutoChoice
        The spec (a dict for :class:`graphclust.GraphClustering`), the rule that built it
        and why, the ``k_max`` to search (:func:`graph_k_max`) and the profile.
    """
    p = graph_profile(A, n_clusters)
    for rule in GRAPH_AUTO_RULES:
        reason = rule.applies(p)
        if reason:
            return GraphAutoChoice(rule.build(p), rule.number, reason, graph_k_max(p), p)
    raise AssertionError("the last rule always applies")  # pragma: no cover


def profile_of_data_profile(profile) -> GraphProfile:
    """The :class:`GraphProfile` of a square adjacency profiled as data
    (:func:`graphclust.profile_data` of ``A``, ``n = d``): the entries from its exact
    sparse ``zero_fraction`` (the diagonal counted: at most one entry a row), the degree
    spread and isolated vertices unknown (0; no rule reads them)."""
    if profile.n != profile.d:
        from graphclust import InputError

        raise InputError(f"graph auto needs a square adjacency (n x n), got data of shape "
                         f"({profile.n}, {profile.d}): pass the graph as the input "
                         "(graph='precomputed'), or use the preset 'auto' for features")
    entries = round((1.0 - profile.zero_fraction) * profile.n * profile.d)
    mean = entries / profile.n if profile.n else 0.0
    return GraphProfile(int(profile.n), entries, float(mean), 0.0, 0, profile.k)


def graph_auto_rule(profile) -> dict:
    """``graph auto`` as the rule of the registered rule preset ``graph-auto``: the spec
    for a graph, with a ``summary`` naming the rule.

    ``profile`` is what the framework hands a rule preset: on a precomputed graph
    (``GraphClustering("auto", graph="precomputed")``) the graph's own profile, which holds
    the cleaned ``matrix`` and the ``k`` asked; given features instead, their
    :class:`graphclust.DataProfile` — refused unless square (an adjacency profiled as
    data, :func:`profile_of_data_profile`).
    """
    matrix = getattr(profile, "matrix", None)
    p = (graph_profile(matrix, profile.k) if matrix is not None
         else profile_of_data_profile(profile))
    for rule in GRAPH_AUTO_RULES:
        reason = rule.applies(p)
        if reason:
            return {**rule.build(p), "summary": f"graph auto rule {rule.number}: {reason}"}
    raise AssertionError("the last rule always applies")  # pragma: no cover


def graph_auto_spec(A, n_clusters: int | None = None) -> dict:
    """The spec :func:`graph_auto` chooses for ``A`` (see there)."""
    return graph_auto(A, n_clusters).spec


def describe() -> str:
    """The rules in words, one a line, in precedence order."""
    return "\n".join(f"{r.number}. {r.statement}" for r in GRAPH_AUTO_RULES)
