"""``auto``'s rule 10: compact, well separated clusters (as small as a few points each, as
many as the rows allow, in any number of dimensions) counted and drawn without ``k`` by
the density tree of the features (on their leading principal components in many
dimensions) at the resolution of the smallest group that counts as a cluster
(docs/auto.rst, rule 10)."""

from __future__ import annotations

import math

import graphclust
import numpy as np
from graphclust import DataProfile, Rule
from graphclust.numerics import fit_pca

from graphclust_plugins.auto import _rules_base as base
from graphclust_plugins.auto._diagnostics import SAMPLE_ROWS
from graphclust_plugins.auto._rules_density import DENSITY_ROWS_NEEDED, DENSITY_SAMPLE

__all__ = [
    "RULE_SMALL_CLUSTERS",
    "SMALL_CLUSTER_COMPONENTS",
    "SMALL_CLUSTER_FLOOR",
    "SMALL_CLUSTER_SHARE",
    "fits_tree",
    "small_cluster_size",
    "small_clusters_diagnostic",
    "small_clusters_provider",
    "small_clusters_spec",
]

#: Rule 10: the principal components the tree is built on (rule 4's count): they keep
#: the directions the cluster centres span and drop most of the within-cluster noise,
#: which in ``d`` dimensions adds ``2 d σ²`` to every squared distance.
SMALL_CLUSTER_COMPONENTS = 50
#: Rule 10: the smallest cluster is never below this many rows (the density tree's
#: floor of rule 9, ``DENSITY_MIN_CLUSTER``).
SMALL_CLUSTER_FLOOR = 5
#: Rule 10: the share of the sample's rows excess of mass must put into clusters (not
#: noise) for the tree to count and draw the clusters. Measured on the tune half of the
#: generated battery and the real sets (docs/auto.rst, rule 10): well separated blobs of
#: 5-3 600 points in 60-1 000 dimensions 1.00; structureless Gaussians and uniform
#: clouds at most .04 (or a single cluster); digits .60, COIL20 .85 (a manifold: the
#: clusters are curved, not compact, and the manifold family of rule 7 draws them).
SMALL_CLUSTER_SHARE = 0.95


def small_cluster_size(rows: int) -> int:
    """The tree's smallest cluster on ``rows`` rows: ``⌈ln rows⌉``, the smallest group
    the eigengap counts as a cluster (:func:`graphclust.numerics.eigengap.group_floor`),
    at least :data:`SMALL_CLUSTER_FLOOR`."""
    return int(max(SMALL_CLUSTER_FLOOR, math.ceil(math.log(max(int(rows), 2)))))


def fits_tree(p: DataProfile) -> bool:
    """No ``k``, dense rows in memory, the profile's sample to look at, and a ``d`` in
    which rule 9 never holds: a density estimate there needs more rows than rule 9's
    tree is ever built on (:data:`DENSITY_ROWS_NEEDED` above :data:`DENSITY_SAMPLE`:
    ``d >= 8``). In fewer dimensions a set too small for rule 9 stays with the spectral
    rules (rule 10 merged two touching iris species there)."""
    need = DENSITY_ROWS_NEEDED.get(int(p.d), float("inf"))
    return (base.asked_k(p) is None and need > DENSITY_SAMPLE and not base.sparse_rows(p)
            and not p.sparse and not p.chunked and p.sample is not None)


def small_clusters_diagnostic(S: np.ndarray) -> dict:
    """Excess of mass of the density tree of ``S``'s leading principal components at
    :func:`small_cluster_size` (core distance over one row fewer, so that a group of
    exactly that many rows has its core inside it): the clusters it selects and the
    share of rows they hold (the others are HDBSCAN's noise)."""
    S = np.asarray(S, dtype=np.float64)
    rows, d = S.shape
    size = small_cluster_size(rows)
    if rows <= size:
        return {"rows": rows, "size": size, "clusters": 1, "share": 0.0}
    if d > SMALL_CLUSTER_COMPONENTS and rows > SMALL_CLUSTER_COMPONENTS:
        S = fit_pca(S, SMALL_CLUSTER_COMPONENTS).transform(S)
    part = graphclust.resolve_part(
        {"name": "density", "min_cluster_size": size, "min_samples": size - 1,
         "estimate": "eom", "noise": True}, "rounding", registry=graphclust.get_registry())
    solution = graphclust.Solution(embedding=S)
    found = int(part.estimate_k(solution, 1, rows, graphclust.Context(0))
                .details["excess_of_mass_clusters"])
    if found < 2:
        return {"rows": rows, "size": size, "clusters": found, "share": 0.0}
    labels = part.round(solution, found, graphclust.Context(0))
    return {"rows": rows, "size": size, "clusters": found,
            "share": float(np.mean(np.asarray(labels) >= 0))}


def small_clusters_provider(p: DataProfile, ctx) -> dict | None:
    """The rule table's ``small_clusters`` diagnostic (computed when rule 10 asks):
    :func:`small_clusters_diagnostic` of the profile's sample, scaled as the scale
    step says."""
    return small_clusters_diagnostic(base.scaled_sample(p, ctx["scale"][0]["scale"]))


def _tree_rows(p: DataProfile) -> int:
    """Rows rule 10's tree is built on: all up to the diagnostics' SAMPLE_ROWS (the
    rows the rule decided on), a sample of that many above (every other row then takes
    its nearest sample row's label): the tree's cost is bounded whatever ``n``."""
    return int(min(p.n, SAMPLE_ROWS))


def small_clusters_spec(p: DataProfile, ctx=None) -> dict:
    """Rule 10's pipeline: the ``density`` rounding (excess of mass at
    :func:`small_cluster_size` of the rows it is built on, at most SAMPLE_ROWS) of the
    features on their SMALL_CLUSTER_COMPONENTS leading principal components; ``k_max``
    is the tree's own resolution, ``rows // size`` clusters of ``size`` rows (the tree's
    cost does not depend on it). The rule's share test has said there is structure (a
    structureless cloud leaves most rows out of clusters), so the tree's own test of the
    root's stability against its selection's is off (``structure_ratio = 0``): it is not
    calibrated on structureless samples, and it called seven touching Gaussians of 40
    points one cluster."""
    rows = _tree_rows(p)
    size = small_cluster_size(rows)
    spec = base.features_pipeline({"name": "density", "estimate": "eom",
                                   "min_cluster_size": size, "min_samples": size - 1,
                                   "structure_ratio": 0.0, "max_fit": SAMPLE_ROWS})
    spec["solver"] = {"name": "features", "components": SMALL_CLUSTER_COMPONENTS}
    spec["k_max"] = int(max(2, rows // size))
    return spec


def _applies(p: DataProfile, ctx) -> str | None:
    if not fits_tree(p):
        return None
    diag = ctx["small_clusters"]
    if diag["clusters"] < 2 or diag["share"] < SMALL_CLUSTER_SHARE:
        return None
    rows = _tree_rows(p)
    size = small_cluster_size(rows)
    where = base.fitted_on(p, SAMPLE_ROWS, "every other row labelled as its nearest "
                           "sample row")
    space = (f"the {SMALL_CLUSTER_COMPONENTS} leading principal components"
             if p.d > SMALL_CLUSTER_COMPONENTS else "the features")
    return (f"dense, no k, d = {p.d} (rule 9 never holds); on the {diag['rows']}-row sample "
            f"the density tree of {space} (min_cluster_size = ⌈ln rows⌉ = {diag['size']}) puts "
            f"{diag['share']:.0%} of the rows into {diag['clusters']} clusters "
            f"(>= {SMALL_CLUSTER_SHARE:.0%}): small, well separated clusters, counted and "
            f"drawn by excess of mass in that tree (min_cluster_size = {size}, k <= "
            f"{max(2, rows // size)}; {where})")


RULE_SMALL_CLUSTERS = Rule(
    10, "dense, no k, d >= 8 (rule 9 never holds), and the density tree of the sample (on its "
    f"{SMALL_CLUSTER_COMPONENTS} leading principal components when d > "
    f"{SMALL_CLUSTER_COMPONENTS}) at min_cluster_size = ⌈ln rows⌉ holds >= "
    f"{SMALL_CLUSTER_SHARE:.0%} of the rows in clusters: that tree counts and draws them",
    _applies, small_clusters_spec,
    details=f"HDBSCAN's excess of mass (on the {SMALL_CLUSTER_COMPONENTS} leading principal "
            "components when d is larger), min_cluster_size = ⌈ln n⌉ (at least\n"
            f"{SMALL_CLUSTER_FLOOR}; the eigengap's smallest group), core distance over one "
            f"row fewer; k searched up to\nrows // min_cluster_size (the tree's resolution); "
            f"on at most {SAMPLE_ROWS} rows, the others placed by\ntheir nearest. "
            "Clusters of a few points each: a 15-neighbour layout (rule 7) or\n"
            "graph (rules 2-4) merges them, and 20 clusters cap the spectral range; a "
            "structureless\ncloud puts nearly every row into noise.")
