"""The ``uspec`` bundle: Huang, Wang, Wu, Lai, Kwoh — Ultra-Scalable Spectral Clustering
(U-SPEC), IEEE TKDE 2020.

Parts
-----
anchors ``hybrid``
    Hybrid representatives: k-means of 10·p random candidates (Sec. 3.1).
graph ``knr-bipartite``
    Gaussian bipartite graph on the K nearest representatives, found coarse to fine
    (Sec. 3.2); places new points.
solver ``tcut``
    Transfer cut on any bipartite / anchor graph (Sec. 3.3); maths in
    :mod:`graphclust_plugins.uspec._tcut` (``transfer_cut``), shared with U-SENC.
consensus ``tcut``
    U-SENC's consensus: transfer cut of the point × base-cluster graph (Sec. 4.2).

Presets ``uspec`` (``presets/uspec.toml``) and ``usenc`` (``presets/usenc.toml``).
"""

from pathlib import Path

from graphclust import hookimpl

PRESETS = Path(__file__).parent / "presets"


@hookimpl
def graphclust_register_components(registry):
    from graphclust_plugins.uspec.anchors_hybrid import HybridAnchors
    from graphclust_plugins.uspec.consensus_tcut import TcutConsensus
    from graphclust_plugins.uspec.graph_knr_bipartite import KNRBipartiteGraph
    from graphclust_plugins.uspec.solver_tcut import TransferCut

    registry.anchors.add(HybridAnchors)
    registry.graphs.add(KNRBipartiteGraph)
    registry.solvers.add(TransferCut)
    registry.consensus.add(TcutConsensus)
    for path in sorted(PRESETS.glob("*.toml")):
        registry.presets.add_toml(path)
