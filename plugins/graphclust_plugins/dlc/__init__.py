"""The ``dlc`` bundle: Deep Linear Coding for fast graph clustering.

Shao, Li, Ding, Fu. *Deep Linear Coding for Fast Graph Clustering.* IJCAI 2015.

Parts: graph ``landmark-codes`` (Gaussian kNN landmark codes, Algorithm 1 step 2) and
solver ``dlc`` (SLC/DLC layers, Eq. 3–7, Algorithms 1–2). Presets ``slc`` (one layer)
and ``dlc`` (two layers).
"""

from pathlib import Path

from graphclust import hookimpl

PRESETS = Path(__file__).parent / "presets"


@hookimpl
def graphclust_register_components(registry):
    from graphclust_plugins.dlc.graph_landmark_codes import LandmarkCodes
    from graphclust_plugins.dlc.solver_dlc import DLCSolver

    registry.graphs.add(LandmarkCodes)
    registry.solvers.add(DLCSolver)
    for path in sorted(PRESETS.glob("*.toml")):
        registry.presets.add_toml(path)
