"""The ``community`` bundle: clustering a graph the user already has.

Parts: solver ``leiden`` (Leiden modularity optimisation through ``leidenalg`` on igraph;
finds ``k`` itself, or searches the resolution for a given ``k``), rounded by the common
``argmax``. The regularised spectral embedding for sparse graphs (Qin & Rohe 2013) is the
common ``spectral`` solver with ``tau = "mean-degree"``. Presets ``leiden`` and
``graph-spectral``; the choice among them from a graph's properties is
:func:`graphclust_plugins.community.graph_auto.graph_auto_spec` (docs/graphs-auto.rst).
"""

from pathlib import Path

from graphclust import hookimpl

PRESETS = Path(__file__).parent / "presets"


@hookimpl
def graphclust_register_components(registry):
    from graphclust_plugins.community.solver_leiden import LeidenSolver

    from graphclust_plugins.community.graph_auto import describe, graph_auto_rule

    registry.solvers.add(LeidenSolver)
    registry.rules.add("graph-auto", graph_auto_rule, description=describe(),
                       summary="a graph given as the input (graph='precomputed'): Leiden "
                               "modularity, or a regularised spectral embedding for a sparse "
                               "graph with k given; what 'auto' runs on a graph")
    for path in sorted(PRESETS.glob("*.toml")):
        registry.presets.add_toml(path)
