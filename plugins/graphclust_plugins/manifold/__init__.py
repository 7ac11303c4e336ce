"""The ``manifold`` bundle: the EVoC / UMAP+HDBSCAN family.

Parts
-----
graph ``fuzzy-knn``
    UMAP's fuzzy kNN graph (McInnes, Healy, Melville 2018, Sec. 3.1): local
    memberships ``exp(−max(0, d − ρ_i)/σ_i)``, fuzzy union; exact or NN-descent
    neighbours (:mod:`graphclust_plugins.manifold._nndescent`, its forest in
    :mod:`graphclust_plugins.manifold._rptrees`). Maths in
    :mod:`graphclust_plugins.manifold._fuzzy`.
solver ``umap-layout``
    UMAP layout of any affinity graph (Sec. 3.2), a nonlinear node embedding.
rounding ``density``
    HDBSCAN condensed tree (Campello, Moulavi, Sander 2013) cut to exactly ``k``
    clusters; maths in :mod:`graphclust_plugins.manifold._condensed`.
anchors ``sample``
    A seeded uniform sample of ``S`` rows drawn by global row index (all rows when
    ``n <= S``); the chunked execution gathers exactly those rows.
graph ``sample-knn``
    Every row's UMAP memberships to its nearest sample rows (a row that is a sample row
    is that row); exact or a pynndescent index, one query a row.
adapter ``on-sample``
    The global step (a graph of the sample, the solver, a rounding) fitted on the
    sample, carried to every row through ``Z``: the fit-on-a-sample design that makes
    the family scale, predict and run on Dask.

Preset ``manifold`` (``presets/manifold.toml``): fitted on a sample of at most
``S = 100 000`` rows, every other row placed row-locally.
"""

from pathlib import Path

from graphclust import hookimpl

PRESETS = Path(__file__).parent / "presets"


@hookimpl
def graphclust_register_components(registry):
    from graphclust_plugins.manifold.adapter_on_sample import OnSampleAdapter
    from graphclust_plugins.manifold.anchors_sample import SampleAnchors
    from graphclust_plugins.manifold.graph_fuzzy_knn import FuzzyKNNGraph
    from graphclust_plugins.manifold.graph_sample_knn import SampleKNNGraph
    from graphclust_plugins.manifold.rounding_density import DensityRounding
    from graphclust_plugins.manifold.solver_umap_layout import UMAPLayout

    registry.anchors.add(SampleAnchors)
    registry.graphs.add(FuzzyKNNGraph)
    registry.graphs.add(SampleKNNGraph)
    registry.adapters.add(OnSampleAdapter)
    registry.solvers.add(UMAPLayout)
    registry.roundings.add(DensityRounding)
    for path in sorted(PRESETS.glob("*.toml")):
        registry.presets.add_toml(path)
