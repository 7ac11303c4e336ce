"""The ``ulge`` bundle: Nie, Zhu, Li — Unsupervised Large Graph Embedding based on
Balanced and Hierarchical K-means (ULGE / OULGE with BKHK anchors).

Parts
-----
anchors ``bkhk``
    Balanced binary hierarchical k-means (Eq. 12–16, Algorithm 1).
graph ``adaptive-anchor``
    Parameter-free anchor graph (Eq. 17–18), exact or BKHK-leaf neighbour search.
solver ``ulge``
    Spectral regression on the anchor graph (Eq. 21–23, Algorithm 2);
    ``orthogonal=True`` gives OULGE (Eq. 24).

Presets ``ulge``, ``oulge`` and ``oulge-mean`` (``presets/ulge.toml``).
"""

from pathlib import Path

from graphclust import hookimpl

PRESETS = Path(__file__).parent / "presets"


@hookimpl
def graphclust_register_components(registry):
    from graphclust_plugins.ulge.anchors_bkhk import BKHK
    from graphclust_plugins.ulge.graph_adaptive_anchor import AdaptiveAnchorGraph
    from graphclust_plugins.ulge.solver_ulge import ULGE

    registry.anchors.add(BKHK)
    registry.graphs.add(AdaptiveAnchorGraph)
    registry.solvers.add(ULGE)
    for path in sorted(PRESETS.glob("*.toml")):
        registry.presets.add_toml(path)
