"""The ``genie`` bundle: minimum-spanning-tree clustering (Genie).

Rounding ``genie`` (Genie on a solution's embedding, on anchors above a size bound);
solver ``features`` (the scaled features handed on as the embedding); graph
``one-anchor`` (the distance-free graph such a pipeline carries); preset ``genie``.
"""

from pathlib import Path

from graphclust import hookimpl

PRESETS = Path(__file__).parent / "presets"


@hookimpl
def graphclust_register_components(registry):
    from graphclust_plugins.genie.graph_one_anchor import OneAnchorGraph
    from graphclust_plugins.genie.rounding_genie import GenieRounding
    from graphclust_plugins.genie.solver_features import FeaturesSolver

    registry.graphs.add(OneAnchorGraph)
    registry.solvers.add(FeaturesSolver)
    registry.roundings.add(GenieRounding)
    for path in sorted(PRESETS.glob("*.toml")):
        registry.presets.add_toml(path)
