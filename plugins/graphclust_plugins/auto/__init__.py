"""The ``auto`` bundle: the default preset, a rule over the data's profile.

Rule presets
------------
``auto``
    Decides the concrete spec from n, d, k, the column scales and diagnostics of a
    bounded sample (choosing among the spectral, manifold, MST and mixture families)
    (:func:`graphclust_plugins.auto.rule_auto.auto_rule`; the rules in words:
    ``graphclust describe auto``, argued in ``docs/auto.rst``).
"""

from graphclust import hookimpl


@hookimpl
def graphclust_register_components(registry):
    from graphclust_plugins.auto.rule_auto import DESCRIPTION, auto_rule

    registry.rules.add("auto", auto_rule,
                       summary="Decided from the data and cheap diagnostics of a sample: "
                               "UMAP+HDBSCAN for dense d > 50 with >= 500 points per "
                               "cluster; for d <= 16 a Gaussian mixture, a density tree or "
                               "Genie when the diagnostics say so, and without k a density "
                               "tree where the rows suffice for d; else exact kNN spectral "
                               "up to 5000 "
                               "points, kNN on 50 principal components for dense d > 50, "
                               "k-means-anchor spectral otherwise; standardised when the "
                               "columns are in different units",
                       description=DESCRIPTION)
