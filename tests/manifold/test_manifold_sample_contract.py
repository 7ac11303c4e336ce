"""The fit-on-a-sample parts pass the contract-test kit, chunk-wise declarations included."""

from __future__ import annotations

import pytest

from graphclust.testing import parametrize_with_checks
from graphclust_plugins.manifold.adapter_on_sample import OnSampleAdapter
from graphclust_plugins.manifold.anchors_sample import SampleAnchors
from graphclust_plugins.manifold.graph_sample_knn import SampleKNNGraph

FAST = {"graph": {"name": "fuzzy-knn", "n_neighbors": 5, "method": "exact"},
        "rounding": {"name": "genie"}}

pytestmark = pytest.mark.filterwarnings("ignore::graphclust.FewerClustersWarning")


@parametrize_with_checks([(SampleAnchors, {"n_anchors": 20}), SampleAnchors,
                          (SampleKNNGraph, {"n_neighbors": 3}),
                          (SampleKNNGraph, {"n_neighbors": 4, "metric": "cosine"}),
                          (OnSampleAdapter, FAST),
                          (OnSampleAdapter, {**FAST, "rounding": {"name": "density"}})])
def test_contract(check):
    check()
