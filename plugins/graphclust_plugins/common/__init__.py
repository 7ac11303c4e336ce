"""The ``common`` bundle: shared baseline parts.

Anchors ``random``, ``kmeans``; graphs ``knn``, ``gaussian-anchor``; adapter
``anchor-level``; solver ``spectral``; roundings ``kmeans``, ``argmax``, ``gmm``; metrics ``acc``,
``nmi``, ``ari``, ``purity``; presets ``ncut`` and ``anchor-spectral``.
"""

from pathlib import Path

from graphclust import hookimpl

PRESETS = Path(__file__).parent / "presets"


@hookimpl
def graphclust_register_components(registry):
    from graphclust_plugins.common.adapter_anchor_level import AnchorLevelAdapter
    from graphclust_plugins.common.anchors_kmeans import KMeansAnchors
    from graphclust_plugins.common.anchors_random import RandomAnchors
    from graphclust_plugins.common.graph_gaussian_anchor import GaussianAnchorGraph
    from graphclust_plugins.common.graph_knn import KNNGraph
    from graphclust_plugins.common.metric_acc import Accuracy
    from graphclust_plugins.common.metric_ari import ARI
    from graphclust_plugins.common.metric_nmi import NMI
    from graphclust_plugins.common.metric_purity import Purity
    from graphclust_plugins.common.rounding_argmax import ArgmaxRounding
    from graphclust_plugins.common.rounding_gmm import GMMRounding
    from graphclust_plugins.common.rounding_kmeans import KMeansRounding
    from graphclust_plugins.common.solver_spectral import SpectralEmbedding

    registry.anchors.add(RandomAnchors)
    registry.anchors.add(KMeansAnchors)
    registry.graphs.add(KNNGraph)
    registry.graphs.add(GaussianAnchorGraph)
    registry.adapters.add(AnchorLevelAdapter)
    registry.solvers.add(SpectralEmbedding)
    registry.roundings.add(KMeansRounding)
    registry.roundings.add(ArgmaxRounding)
    registry.roundings.add(GMMRounding)
    for cls in (Accuracy, NMI, ARI, Purity):
        registry.metrics.add(cls)
    for path in sorted(PRESETS.glob("*.toml")):
        registry.presets.add_toml(path)
