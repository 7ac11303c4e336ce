"""The ``dcd`` bundle: clustering by low-rank doubly stochastic decomposition.

Yang & Oja, *Clustering by Low-Rank Doubly Stochastic Matrix Decomposition*, ICML 2012.

Parts: solver ``dcd`` (relaxed MM of Algorithm 1 on the nonzeros of a sparse ``A``,
Ncut start plus Dirichlet-prior restarts). The binary symmetric K-NN graph of Section 4.2
is the common ``knn`` builder with ``weight = "binary"``. Presets ``dcd`` (binary 10-NN
graph) and ``bkhk-dcd`` (DCD on the anchor-level graph of BKHK anchors and the ULGE
adaptive-neighbour anchor graph, lifted to the points through ``Z``).
"""

from pathlib import Path

from graphclust import hookimpl

PRESETS = Path(__file__).parent / "presets"


@hookimpl
def graphclust_register_components(registry):
    from graphclust_plugins.dcd.solver_dcd import DCDSolver

    registry.solvers.add(DCDSolver)
    for path in sorted(PRESETS.glob("*.toml")):
        registry.presets.add_toml(path)
