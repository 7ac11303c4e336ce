"""The manifold parts pass the contract-test kit (also run by tests/contract over every
registered part once the bundle's entry point is installed)."""

from __future__ import annotations

from graphclust.testing import parametrize_with_checks
from graphclust_plugins.manifold.graph_fuzzy_knn import FuzzyKNNGraph
from graphclust_plugins.manifold.rounding_density import DensityRounding
from graphclust_plugins.manifold.solver_umap_layout import UMAPLayout


@parametrize_with_checks([FuzzyKNNGraph, (FuzzyKNNGraph, {"metric": "cosine"}),
                          (UMAPLayout, {"n_epochs": 50}), (UMAPLayout, {"init": "random"}),
                          DensityRounding, (DensityRounding, {"min_cluster_size": 5})])
def test_contract(check):
    check()
