"""The ``manifold`` bundle: the EVoC / UMAP+HDBSCAN family.

Parts
-----
graph ``fuzzy-knn``
    UMAP's fuzzy kNN graph (McInnes, Healy, Melville 2018, Sec. 3.1): local
    memberships ``exp(−max(0, d − ρ_i)/σ_i)``, fuzzy union; exact or NNDescent
    neighbours. Maths in :mod:`graphclust_plugins.manifold._fuzzy`.
solver ``umap-layout``
    UMAP layout of any affinity graph (Sec. 3.2), a nonlinear node embedding.
rounding ``density``
    HDBSCAN condensed tree (Campello, Moulavi, Sander 2013) cut to exactly ``k``
    clusters; maths in :mod:`graphclust_plugins.manifold._condensed`.

Preset ``manifold`` (``presets/manifold.toml``).
"""

from pathlib import Path

from graphclust import hookimpl

PRESETS = Path(__file__).parent / "presets"


@hookimpl
def graphclust_register_components(registry):
    from graphclust_plugins.manifold.graph_fuzzy_knn import FuzzyKNNGraph
    from graphclust_plugins.manifold.rounding_density import DensityRounding
    from graphclust_plugins.manifold.solver_umap_layout import UMAPLayout

    registry.graphs.add(FuzzyKNNGraph)
    registry.solvers.add(UMAPLayout)
    registry.roundings.add(DensityRounding)
    for path in sorted(PRESETS.glob("*.toml")):
        registry.presets.add_toml(path)
