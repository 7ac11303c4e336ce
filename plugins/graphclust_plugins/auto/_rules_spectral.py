"""``auto``'s spectral rules: 5 (sampled anchors), 4 (principal-component kNN graph),
2 (exact kNN graph) and 3 (k-means anchors), argued in docs/auto.rst."""

from __future__ import annotations

from graphclust import DataProfile, Rule
from graphclust.numerics.null_reference import NULL_RATIO

from graphclust_plugins.auto import _rules_base as base

__all__ = ["ANCHORS_PER_CLUSTER", "HIGH_DIM_NEIGHBORS", "MAX_ANCHORS", "MIN_ANCHORS",
           "PCA_COMPONENTS", "SAMPLED_ANCHORS_N", "RULE_ANCHOR", "RULE_EXACT",
           "RULE_HIGH_DIM", "RULE_SAMPLED", "RULE_SECOND_OPINION", "SECOND_OPINION_MIN_D",
           "exact_spec", "n_anchors", "sizing_k"]

#: Above this many points the anchors come from a sample (U-SPEC's hybrid
#: representatives: k-means of 10·m random candidates) and each point's nearest ones
#: from the coarse-to-fine approximate search, so no step costs n·m·d per iteration.
SAMPLED_ANCHORS_N = 200_000
#: Principal components of rule 4's graph search.
PCA_COMPONENTS = 50
#: Its neighbours per point.
HIGH_DIM_NEIGHBORS = 7
#: Representatives: at least this many, ...
MIN_ANCHORS = 1000
#: ... and this many per cluster, ...
ANCHORS_PER_CLUSTER = 50
#: ... but never more than this many, nor more than a tenth of the points.
MAX_ANCHORS = 4000

#: Fewest columns for rule 12 (the second opinion). In two dimensions and more its
#: eigengap's ``k >= 2`` is taken only when it passes the null test
#: (:mod:`graphclust.numerics.null_reference`: ``λ_k`` at most ``NULL_RATIO`` of that of
#: a Gaussian and of a uniform box with the data's mean and covariance): without it one
#: cloud's kNN graph in 2-3 dimensions has cuts as cheap as clusters' (10 of 24 draws
#: in d <= 3 answered k >= 2), with it none of the calibration draws in 2-8 dimensions
#: does (docs/auto.rst). One column is left out: a binary kNN graph of a column is a
#: band whose spectrum ignores the density (a valley looks like a plateau), so the test
#: sees only gaps wider than ten spacings, which a structureless column of a few
#: thousand rows has by chance (its graph falls apart: ratio 0).
SECOND_OPINION_MIN_D = 2

_SPECTRAL = {"name": "spectral", "drop_trivial": "connected", "normalize_rows": True}
_KMEANS = {"name": "kmeans", "n_init": 10, "normalize_rows": True}


def sizing_k(p: DataProfile) -> int:
    """The ``k`` that sizes what depends on it (``n_anchors``): the asked ``k``, else
    ``k_max`` when ``k`` is estimated at fit, so the anchors can resolve every ``k``
    searched (docs/choosing-k.rst)."""
    return int(p.k if p.k is not None else p.k_max)


def n_anchors(p: DataProfile) -> int:
    """Representatives of the anchor pipeline:
    ``clip(max(MIN_ANCHORS, ANCHORS_PER_CLUSTER · k), ..., min(MAX_ANCHORS, n / 10))``,
    ``k`` from :func:`sizing_k`."""
    k = sizing_k(p)
    m = max(MIN_ANCHORS, ANCHORS_PER_CLUSTER * k)
    return int(max(min(m, MAX_ANCHORS, p.n // 10), min(p.n, 2 * k)))


def exact_spec(p: DataProfile) -> dict:
    """Rule 2's pipeline: binary mean-symmetrised exact kNN graph, Ncut, k-means."""
    return {
        "graph": {"name": "knn", "n_neighbors": base.n_neighbors(p), "weight": "binary",
                  "symmetrize": "mean", "method": "exact"},
        "solver": dict(_SPECTRAL),
        "rounding": dict(_KMEANS),
    }


def _anchor_spec(p: DataProfile, ctx=None) -> dict:
    return {
        "anchors": {"name": "kmeans", "n_anchors": n_anchors(p), "max_iter": 10, "n_init": 1},
        "graph": {"name": "gaussian-anchor", "n_neighbors": 5},
        "solver": dict(_SPECTRAL),
        "rounding": dict(_KMEANS),
    }


def _high_dim_spec(p: DataProfile, ctx=None) -> dict:
    return {
        "graph": {"name": "knn", "n_neighbors": int(max(1, min(HIGH_DIM_NEIGHBORS, p.n - 1))),
                  "weight": "gaussian",
                  "symmetrize": "mean",
                  # exact: rule 4 applies while n² · PCA_COMPONENTS is within the budget, and
                  # the approximate search of 'knn' is faiss, an extra (auto must not change
                  # with what else is installed)
                  "method": "exact",
                  "pca_components": PCA_COMPONENTS},
        "solver": {**_SPECTRAL, "eig_tol": base.EIG_TOL},
        "rounding": dict(_KMEANS),
    }


def _sampled_spec(p: DataProfile, ctx=None) -> dict:
    return {
        "anchors": {"name": "hybrid", "n_anchors": n_anchors(p), "candidate_factor": 10},
        "graph": {"name": "knr-bipartite", "n_neighbors": 5, "search": "approx",
                  "candidates": 10},
        "solver": {"name": "tcut"},
        # the uspec preset's rounding (issue 27): best of 10 k-means++ runs
        "rounding": {"name": "kmeans", "n_init": 10, "max_iter": 100, "normalize_rows": True,
                     "init": "k-means++"},
    }


def _sampled_applies(p: DataProfile, ctx) -> str | None:
    """Rule 5: above the in-memory sizes, or chunked input (U-SPEC's recipe runs
    chunk-wise; rule 8's spectral fallback there)."""
    if not (p.n > SAMPLED_ANCHORS_N or p.chunked):
        return None
    return (("chunked input" if p.chunked else f"n = {p.n} > {SAMPLED_ANCHORS_N}") + ": "
            f"{n_anchors(p)} hybrid representatives, approximate "
            "K-nearest-representative graph, transfer cut")


def _high_dim_applies(p: DataProfile, ctx) -> str | None:
    """Rule 4: dense rows (fewer than ``SPARSE_ZEROS`` zeros, whatever the container),
    ``d > HIGH_DIM``, while the exact search on the principal components
    is within the budget."""
    if not (p.d > base.HIGH_DIM and not base.sparse_rows(p)
            and float(p.n) ** 2 * min(p.d, PCA_COMPONENTS) <= base.EXACT_BUDGET):
        return None
    return (f"d = {p.d} > {base.HIGH_DIM}, dense, n = {p.n} <= {SAMPLED_ANCHORS_N}: "
            f"{_high_dim_spec(p)['graph']['n_neighbors']}-NN graph on {PCA_COMPONENTS} "
            "principal components, spectral embedding")


def _exact_applies(p: DataProfile, ctx) -> str | None:
    if not (p.exact_work <= base.EXACT_BUDGET and p.n <= base.EXACT_MAX_N):
        return None
    return (f"n = {p.n} <= {base.EXACT_MAX_N} and n²·d = {p.exact_work:.3g} <= "
            f"{base.EXACT_BUDGET:.0e}: exact {base.n_neighbors(p)}-NN spectral")


def _exact_limits_exceeded(p: DataProfile) -> str:
    """The limits of the exact branch that ``p`` exceeds, as true statements (one or
    both: n above its cap, the n²·d work above its budget)."""
    held = []
    if p.n > base.EXACT_MAX_N:
        held.append(f"n = {p.n} > {base.EXACT_MAX_N}")
    if p.exact_work > base.EXACT_BUDGET:
        held.append(f"n²·d = {p.exact_work:.3g} > {base.EXACT_BUDGET:.0e}")
    return " and ".join(held)


def _second_opinion_applies(p: DataProfile, ctx) -> str | None:
    """Rule 12: no ``k`` given, rows in memory and dense, ``d >= SECOND_OPINION_MIN_D``,
    and rule 2's exact graph within its limits (its cost, twice — the data and the null
    test's reference — bounds the second opinion's)."""
    if (p.k is not None or p.chunked or base.sparse_rows(p) or p.d < SECOND_OPINION_MIN_D
            or _exact_applies(p, ctx) is None):
        return None
    return (f"no k given, d = {p.d} >= {SECOND_OPINION_MIN_D}, n = {p.n} <= "
            f"{base.EXACT_MAX_N} and n²·d = {p.exact_work:.3g} <= "
            f"{base.EXACT_BUDGET:.0e}: the eigengap of rule 2's exact "
            f"{base.n_neighbors(p)}-NN graph, its k >= 2 tested against structureless "
            "references")


def _anchor_applies(p: DataProfile, ctx) -> str:
    """Rule 3 applies to every profile the rules before it leave."""
    return (f"{_exact_limits_exceeded(p)}: {n_anchors(p)} k-means anchors, "
            "5-nearest-anchor Gaussian graph, spectral embedding")


RULE_SAMPLED = Rule(
    5, f"n > {SAMPLED_ANCHORS_N} or chunked input: U-SPEC's hybrid representatives, "
    "approximate K-nearest-representative graph, transfer cut, k-means",
    _sampled_applies, _sampled_spec,
    details="m representatives (as rule 3) are k-means of 10·m random candidates, each\n"
            "point's 5 nearest found coarse to fine: no step costs n·m·d per iteration;\n"
            "the spectral recipe that runs chunk-wise on Dask.")
RULE_HIGH_DIM = Rule(
    4, f"dense d > {base.HIGH_DIM}, n²·{PCA_COMPONENTS} <= {base.EXACT_BUDGET:.0e}: "
    f"exact {HIGH_DIM_NEIGHBORS}-NN graph on {PCA_COMPONENTS} principal components, "
    "spectral embedding, k-means",
    _high_dim_applies, _high_dim_spec,
    details=f"self-tuning Gaussian weights, averaged; ARPACK tolerance {base.EIG_TOL:g}. In\n"
            "many dimensions anchors average points far apart on the data's manifold;\n"
            "neighbours in the leading components stay on it.")
RULE_EXACT = Rule(
    2, f"n <= {base.EXACT_MAX_N} and n²·d <= {base.EXACT_BUDGET:.0e}: exact binary 10-NN "
    "graph, Ncut embedding, k-means",
    _exact_applies, lambda p, ctx: exact_spec(p),
    details="symmetrised by averaging; the trivial eigenvector dropped when the graph is\n"
            "connected, kept when it has several components; rows normalised, k-means with\n"
            "10 restarts. Follows thin manifolds; above 5000 points a 10-NN graph is too\n"
            "local (long clusters are cut across).")
RULE_ANCHOR = Rule(
    3, "otherwise: k-means anchors, 5-nearest-anchor Gaussian graph, spectral embedding, "
    "k-means",
    _anchor_applies, _anchor_spec,
    details=f"m = clip(max({MIN_ANCHORS}, {ANCHORS_PER_CLUSTER}·k), upper "
            f"min({MAX_ANCHORS}, n/10)) anchors (10 Lloyd iterations),\neach point linked "
            "to its 5 nearest by Gaussian weights; the spectral embedding through the\n"
            "m x m Gram matrix (the trivial vector dropped only when the anchors form one\n"
            "component). Row-local; memory O(n·(d + s + k)).")
RULE_SECOND_OPINION = Rule(
    12, f"no k given, dense rows in memory, d >= {SECOND_OPINION_MIN_D}, n <= "
    f"{base.EXACT_MAX_N} and n²·d <= "
    f"{base.EXACT_BUDGET:.0e}: rule 2's pipeline, its k from the eigengap of the exact "
    "10-NN graph, k >= 2 only when its λ_k is at most "
    f"{NULL_RATIO:g} of a Gaussian's and a uniform box's with the data's covariance",
    _second_opinion_applies, lambda p, ctx: {**exact_spec(p), "k_from": "parts"},
    details="fitted only when the rule that decided finds no cluster structure (k = 1), and\n"
            "not when that rule is rule 2 itself; when it finds k >= 2 its fit is the fit\n"
            "(k_selection_ says so and keeps the first selection). A density tree and a\n"
            "graph's spectrum read different evidence (dense cores against sparse cuts):\n"
            "structureless data give neither, so both must say 'no structure'. The null\n"
            "test: the same pipeline on n rows of a Gaussian and of a uniform box with the\n"
            "data's mean and covariance (seeded); clusters joined by few edges make λ_k\n"
            "far below both, one cloud, peaked or flat, does not (the larger ratio .9 or\n"
            "more on structureless draws). Not in one column: a column's kNN graph sees\n"
            "gaps, not density.")
