"""``auto``'s rule 11: without ``k``, more rows than the exact graph takes, in a ``d``
between rule 9's and rule 7's, where rule 10's density tree finds structure that is not
compact: the manifold family (rule 7's pipeline) counts and draws the clusters
(docs/auto.rst, rule 11)."""

from __future__ import annotations

from graphclust import DataProfile, Rule

from graphclust_plugins.auto import _rules_base as base
from graphclust_plugins.auto._rules_manifold import manifold_spec
from graphclust_plugins.auto._rules_small_clusters import SMALL_CLUSTER_SHARE, fits_tree

__all__ = ["CURVED_STRUCTURE_SHARE", "RULE_CURVED"]

#: Rule 11: the share of the sample's rows rule 10's density tree must put into two or
#: more clusters for the data to count as structured — the no-structure test, calibrated
#: on structureless samples: on the tune half's 20 nulls and on 40 further draws
#: (Gaussian, elongated Gaussian, uniform cube and ball, d = 8-100, n = 200-10 000) the
#: share is at most .22 (.15 on the 40 draws); half the rows is more than twice that.
#: PenDigits .79 (docs/auto.rst, rule 11).
CURVED_STRUCTURE_SHARE = 0.5


def _fits(p: DataProfile) -> bool:
    """Rule 10's profile (no ``k``, dense, in memory, ``d >= 8``), ``d`` at most rule
    7's HIGH_DIM (above it rule 7 holds) and more rows than the exact graph of rule 2
    takes (EXACT_MAX_N: below it the exact 10-NN graph follows thin, curved clusters
    and its eigengap counts them)."""
    return fits_tree(p) and p.d <= base.HIGH_DIM and p.n > base.EXACT_MAX_N


def _applies(p: DataProfile, ctx) -> str | None:
    if not _fits(p):
        return None
    diag = ctx["small_clusters"]
    if diag["clusters"] < 2 or not (CURVED_STRUCTURE_SHARE <= diag["share"]
                                    < SMALL_CLUSTER_SHARE):
        return None
    return (f"dense, no k, d = {p.d} <= {base.HIGH_DIM}, n = {p.n} > {base.EXACT_MAX_N}; on "
            f"the {diag['rows']}-row sample rule 10's density tree (min_cluster_size = "
            f"{diag['size']}) puts {diag['share']:.0%} of the rows into {diag['clusters']} "
            f"clusters (>= {CURVED_STRUCTURE_SHARE:.0%}, structureless samples <= 22 %; < "
            f"{SMALL_CLUSTER_SHARE:.0%}, not compact): clusters a k-means anchor graph "
            "averages across, counted and drawn by the manifold family (rule 7's pipeline)")


RULE_CURVED = Rule(
    11, f"dense, no k, 8 <= d <= {base.HIGH_DIM}, n > {base.EXACT_MAX_N}, and rule 10's "
    f"density tree holds {CURVED_STRUCTURE_SHARE:.0%}-{SMALL_CLUSTER_SHARE:.0%} of the "
    "sample's rows in clusters (structure, not compact): UMAP+HDBSCAN, the manifold family",
    _applies, manifold_spec,
    details="the no-structure test of rule 10's tree, calibrated on structureless samples "
            "(their share\nis at most .22): structured data whose clusters the tree does not "
            "hold whole are\ncurved or touching; rule 3's k-means anchors average across "
            "them and its eigengap\nfinds no gap (PenDigits: k = 1). Rule 7's pipeline and "
            "its estimate of k (the leaves\nof the layout's density tree).")
