"""The ``ongr`` bundle: Han, Xiong, Nie — Orthogonal and Nonnegative Graph Reconstruction.

Graph ``ongr-anchor`` (Gaussian anchor graph, Eq. 12), solver ``ongr`` (Eq. 7,
Algorithm 1), anchors ``capped`` (m = min(n_anchors, n/10)); presets ``ongr-k`` (k-means anchors) and ``ongr-r`` (random anchors),
both starting the alternation from k-means on the nontrivial leading eigenvectors
(``init = "spectral-kmeans"``, private maths in ``_start``).
"""

from pathlib import Path

from graphclust import hookimpl

PRESETS = Path(__file__).parent / "presets"


@hookimpl
def graphclust_register_components(registry):
    from graphclust_plugins.ongr.anchors_capped import CappedAnchors
    from graphclust_plugins.ongr.graph_ongr_anchor import OngrAnchorGraph
    from graphclust_plugins.ongr.solver_ongr import OngrSolver

    registry.anchors.add(CappedAnchors)
    registry.graphs.add(OngrAnchorGraph)
    registry.solvers.add(OngrSolver)
    for path in sorted(PRESETS.glob("*.toml")):
        registry.presets.add_toml(path)
