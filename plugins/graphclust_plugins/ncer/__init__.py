"""The ``ncer`` bundle: spectral clustering by ellipsoid (Mizutani 2015).

Parts
-----
graph ``poly-knn``
    Polynomial-kernel p-nearest-neighbour graph (Eq. 1, Section 2).
solver ``ncer-embedding``
    Algorithm 1 steps 1–3 with the first eigenvector τD^{1/2}e (Proposition 1, Remark 2).
solvers ``er``, ``mer``
    Steps 1–2 of ER / MER for separable NMF (Algorithm 3, Section 4.3).
rounding ``ellipsoid``
    Algorithm 2 steps 2–4: origin-centred MVEE, SPA on its active points, NNLS.

Functions :func:`er` (the whole of Algorithm 3) and :func:`ellipsoid_round` are
importable for use outside a pipeline.
"""

from pathlib import Path

from graphclust import hookimpl
from graphclust_plugins.ncer.rounding_ellipsoid import EllipsoidRounding, assign_by_nnls, ellipsoid_round
from graphclust_plugins.ncer.solver_ncer_embedding import NcerEmbedding
from graphclust_plugins.ncer.graph_poly_knn import PolyKnnGraph
from graphclust_plugins.ncer.solver_er import ErEmbedding, MerEmbedding, er, er_embedding

__all__ = ["PolyKnnGraph", "NcerEmbedding", "EllipsoidRounding", "ErEmbedding", "MerEmbedding",
           "er", "er_embedding", "ellipsoid_round", "assign_by_nnls"]

PRESETS = Path(__file__).parent / "presets"


@hookimpl
def graphclust_register_components(registry):
    registry.graphs.add(PolyKnnGraph)
    registry.solvers.add(NcerEmbedding)
    registry.solvers.add(ErEmbedding)
    registry.solvers.add(MerEmbedding)
    registry.roundings.add(EllipsoidRounding)
    for path in sorted(PRESETS.glob("*.toml")):
        registry.presets.add_toml(path)
