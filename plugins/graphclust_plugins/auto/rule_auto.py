"""The ``auto`` rule preset: a concrete spec from the data's profile, as one rule table.

:data:`AUTO_RULES` is the ordered list of ``auto``'s rules; the first that applies
builds the spec, so the order is the precedence: 6 (sparse), 10 (many small clusters
in many dimensions), 7 (manifold family), 11 (the manifold family without k where rule
10's tree finds structure that is not compact),
8 (low-dimensional diagnostics choose the family), 9 (density tree without ``k``),
5 (sampled anchors above 200 000 points or chunked), 4 (principal-component kNN graph),
2 (exact kNN graph), 3 (k-means anchors). The scale step (rule 1 in docs/auto.rst)
applies to every spec. ``graphclust describe auto`` (:data:`DESCRIPTION`), the
registration summary, the rule list of docs/auto.rst and the fitted ``summary`` are
generated from the table; docs/auto.rst argues each rule with its measurements.

Each rule lives in a private module of the bundle: ``_rules_sparse`` (6),
``_rules_small_clusters`` (10),
``_rules_manifold`` (7), ``_rules_curved`` (11), ``_rules_low_dim`` (8), ``_rules_density`` (9),
``_rules_spectral`` (5, 4, 2, 3); the thresholds several share in ``_rules_base``.
"""

from __future__ import annotations

from graphclust import DataProfile, RuleStep, RuleTable
from graphclust_plugins.auto._rules_base import (
    DIAGNOSTIC_MIN_N,
    EIG_TOL,
    EXACT_BUDGET,
    EXACT_MAX_N,
    HIGH_DIM,
    UNIT_SPREAD,
    choose_scale,
    n_neighbors,
)
from graphclust_plugins.auto._rules_curved import CURVED_STRUCTURE_SHARE, RULE_CURVED
from graphclust_plugins.auto._rules_density import (
    DENSITY_MIN_CLUSTER,
    DENSITY_ROWS_NEEDED,
    DENSITY_SAMPLE,
    DENSITY_SIZE_DIVISOR,
    DENSITY_STRUCTURE_RATIO,
    LINE_CORE_SHARE,
    RULE_DENSITY,
    line_core_neighbours,
)
from graphclust_plugins.auto._rules_low_dim import (
    GENIE_SAMPLE,
    GINI_THRESHOLD,
    KERNEL_Z,
    LOW_DIM,
    MIXTURE_GAIN,
    MIXTURE_ROWS_PER_PARAMETER,
    MIXTURE_SAMPLE,
    RULE_LOW_DIM,
    low_dim_diagnostics,
    low_dim_provider,
)
from graphclust_plugins.auto._rules_manifold import (
    MANIFOLD_CLUSTER_DIVISOR,
    MANIFOLD_EPOCHS,
    MANIFOLD_MIN_SAMPLES,
    MANIFOLD_MULTISTART_MAX_N,
    MANIFOLD_MULTISTART_STARTS,
    MANIFOLD_NEGATIVES,
    MANIFOLD_PER_CLUSTER,
    MANIFOLD_SAMPLE,
    MANIFOLD_SAMPLE_DIVISOR,
    MANIFOLD_SAMPLE_MAX,
    MANIFOLD_SAMPLED_NEGATIVES,
    MANIFOLD_SAMPLED_STARTS,
    MANIFOLD_SEARCH_COMPONENTS,
    RULE_MANIFOLD,
    manifold_sample_size,
)
from graphclust_plugins.auto._rules_small_clusters import (
    RULE_SMALL_CLUSTERS,
    SMALL_CLUSTER_COMPONENTS,
    SMALL_CLUSTER_SHARE,
    small_clusters_provider,
)
from graphclust_plugins.auto._rules_sparse import RULE_SPARSE, sparse_rule
from graphclust_plugins.auto._rules_spectral import (
    ANCHORS_PER_CLUSTER,
    HIGH_DIM_NEIGHBORS,
    MAX_ANCHORS,
    MIN_ANCHORS,
    PCA_COMPONENTS,
    RULE_ANCHOR,
    RULE_EXACT,
    RULE_HIGH_DIM,
    RULE_SAMPLED,
    RULE_SECOND_OPINION,
    SAMPLED_ANCHORS_N,
    exact_spec,
    n_anchors,
    sizing_k,
)

__all__ = [
    "ANCHORS_PER_CLUSTER",
    "AUTO_RULES",
    "CURVED_STRUCTURE_SHARE",
    "DENSITY_MIN_CLUSTER",
    "DENSITY_ROWS_NEEDED",
    "DENSITY_SAMPLE",
    "DENSITY_SIZE_DIVISOR",
    "DENSITY_STRUCTURE_RATIO",
    "DESCRIPTION",
    "DIAGNOSTIC_MIN_N",
    "EIG_TOL",
    "EXACT_BUDGET",
    "EXACT_MAX_N",
    "GENIE_SAMPLE",
    "GINI_THRESHOLD",
    "HIGH_DIM",
    "HIGH_DIM_NEIGHBORS",
    "LINE_CORE_SHARE",
    "LOW_DIM",
    "MANIFOLD_CLUSTER_DIVISOR",
    "MANIFOLD_EPOCHS",
    "MANIFOLD_MIN_SAMPLES",
    "MANIFOLD_MULTISTART_MAX_N",
    "MANIFOLD_MULTISTART_STARTS",
    "MANIFOLD_NEGATIVES",
    "MANIFOLD_PER_CLUSTER",
    "MANIFOLD_SAMPLE",
    "MANIFOLD_SAMPLE_DIVISOR",
    "MANIFOLD_SAMPLE_MAX",
    "MANIFOLD_SAMPLED_NEGATIVES",
    "MANIFOLD_SAMPLED_STARTS",
    "MANIFOLD_SEARCH_COMPONENTS",
    "MAX_ANCHORS",
    "MIN_ANCHORS",
    "KERNEL_Z",
    "MIXTURE_GAIN",
    "MIXTURE_ROWS_PER_PARAMETER",
    "MIXTURE_SAMPLE",
    "PCA_COMPONENTS",
    "REGISTRATION_SUMMARY",
    "SAMPLED_ANCHORS_N",
    "SCALE_STEP",
    "SMALL_CLUSTER_COMPONENTS",
    "SMALL_CLUSTER_SHARE",
    "UNIT_SPREAD",
    "auto_row_text",
    "auto_rule",
    "choose_scale",
    "exact_spec",
    "k_estimator",
    "line_core_neighbours",
    "low_dim_diagnostics",
    "manifold_sample_size",
    "n_anchors",
    "n_neighbors",
    "sizing_k",
    "sparse_rule",
]


def _scale(p: DataProfile, ctx) -> tuple[dict, str]:
    scale, why = choose_scale(p)
    return {"scale": scale}, why


#: The scale step (rule 1 of docs/auto.rst), part of every spec; rule 6 sets its own.
SCALE_STEP = RuleStep(
    "scale", f"\"standard\" when the column ranges differ by more than {UNIT_SPREAD:g}x "
    "(trimmed ratio of the largest to the smallest non-constant range: columns in "
    "different units), else \"none\" (one unit: pixels, counts, coordinates)", _scale)

#: ``auto``'s rules in precedence order (the first that applies builds the spec).
AUTO_RULES = RuleTable(
    "auto",
    [RULE_SPARSE, RULE_SMALL_CLUSTERS, RULE_MANIFOLD, RULE_CURVED, RULE_LOW_DIM, RULE_DENSITY,
     RULE_SAMPLED, RULE_HIGH_DIM, RULE_EXACT, RULE_ANCHOR],
    steps=[SCALE_STEP],
    diagnostics={"low_dim": low_dim_provider, "small_clusters": small_clusters_provider},
    second_opinion=RULE_SECOND_OPINION)


def auto_rule(p: DataProfile) -> dict:
    """The concrete spec ``auto`` runs on data of profile ``p``: :data:`AUTO_RULES`
    applied to it (its ``summary`` names the rule that built it and why)."""
    return AUTO_RULES(p)


#: How each family of ``auto`` estimates ``k`` when none is given (docs/choosing-k.rst):
#: the part of its pipeline that declares ``estimates_k``.
K_ESTIMATORS = {
    "spectral": "eigengap (graph builder: normalised spectrum of the graph)",
    "manifold": "density-tree (adapter 'on-sample': its rounding 'density', HDBSCAN's "
                "excess of mass in the tree of the sample's layout)",
    "density": "density-tree (rounding 'density': HDBSCAN's excess of mass in the tree "
               "of the scaled features, rule 9, or of their principal components at "
               "ceil(ln n) rows, rule 10; k up to the tree's resolution)",
    "genie": "eigengap (graph builder), unless its rounding declares estimates_k",
    "mixture": "eigengap (graph builder), unless its rounding declares estimates_k",
}


def k_estimator(family: str) -> str:
    """Which estimator of ``k`` a family of ``auto`` uses (see :data:`K_ESTIMATORS`)."""
    return K_ESTIMATORS.get(family, "eigengap (graph builder)")


_HEADER = """\
auto decides the pipeline from the data's profile (n, d, k, sparsity, column scales)
and cheap diagnostics of a bounded sample, never from labels or per-data-set values."""

_FOOTER = """\
Also:
- Dask input (chunked): the rules as in memory on the same profile (its rows gathered by
  global row index); the manifold family and rule 8's families run on a sample there
  too, the spectral recipes become rule 5's (it runs chunk-wise).
- no k given: k is estimated at fit by the pipeline's part that declares it (the
  eigengap of the graph's normalised spectrum for the spectral recipes, the density
  tree for the manifold family and rules 9 and 10), and what depends on k (the anchor
  count) is sized for k_max instead. Without a k_max given, rules 9 and 10 search k
  up to their tree's resolution (rows // min_cluster_size), the others up to 20.
- No choice depends on the installed extras (no faiss in any branch).
- The chosen spec is in the fitted estimator's resolved_spec_ (its summary names the
  rule and why) and printed by 'graphclust fill auto --dataset X'.
- predict/transform are available when the chosen pipeline places new points (the
  anchor pipelines do; the exact kNN graph does not).
- Each rule is argued, with its measurements, in docs/auto.rst."""

#: What ``graphclust describe auto`` prints: generated from :data:`AUTO_RULES`.
DESCRIPTION = AUTO_RULES.describe(_HEADER, _FOOTER)

#: The one-line summary ``auto`` is registered with (preset listings).
REGISTRATION_SUMMARY = f"Decided from the data and cheap diagnostics of a sample by " \
    f"{AUTO_RULES.paragraph()}"


def auto_row_text() -> str:
    """One paragraph describing ``auto``'s rule table in precedence order, for the
    README's presets row (generated from :data:`AUTO_RULES` and :data:`K_ESTIMATORS`, so
    it cannot drift)."""
    estimators = "; ".join(f"{family}: {how.split(' ')[0]}"
                           for family, how in K_ESTIMATORS.items())
    return (f"The default: a rule preset decided at fit from the data's profile (n, d, k, "
            f"sparsity, column scales) and cheap diagnostics of a bounded sample, by "
            f"{AUTO_RULES.paragraph()}. Without k, k is estimated by the chosen "
            f"pipeline's own part ({estimators}). The fitted resolved_spec_ names the rule "
            "that applied and why (docs/auto.rst).")
