"""graphclust-nystrom: Nyström spectral clustering (Fowlkes et al. 2004) for graphclust.

Registers the graph builder ``nystrom-landmarks``, the solver ``nystrom`` and the
preset ``nystrom`` through the ``graphclust`` entry-point group.
"""

from __future__ import annotations

from pathlib import Path

from graphclust import hookimpl

PRESETS = Path(__file__).parent / "presets"


@hookimpl
def graphclust_register_components(registry):
    """Register the parts and presets of this package."""
    from graphclust_nystrom.graph_nystrom_landmarks import NystromLandmarkGraph
    from graphclust_nystrom.solver_nystrom import NystromSolver

    registry.graphs.add(NystromLandmarkGraph)
    registry.solvers.add(NystromSolver)
    for path in sorted(PRESETS.glob("*.toml")):
        registry.presets.add_toml(path)
