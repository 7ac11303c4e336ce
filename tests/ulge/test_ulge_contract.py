"""The core's contract kit over the ulge parts, and the presets end to end."""

import numpy as np
import pytest

import graphclust
from graphclust.testing import check_part
from graphclust_plugins.ulge.anchors_bkhk import BKHK
from graphclust_plugins.ulge.graph_adaptive_anchor import AdaptiveAnchorGraph
from graphclust_plugins.ulge.solver_ulge import ULGE


@pytest.mark.parametrize("cls,params", [
    (BKHK, {"n_anchors": 7}),
    (AdaptiveAnchorGraph, {}), (AdaptiveAnchorGraph, {"search": "leaf", "candidates": 1}),
    (ULGE, {}), (ULGE, {"orthogonal": True, "drop_trivial": True}),
])
def test_contract(cls, params):
    check_part(cls, **params)


def test_registered_and_presets():
    reg = graphclust.get_registry()
    assert reg.anchors.get("bkhk") is BKHK
    assert reg.graphs.get("adaptive-anchor") is AdaptiveAnchorGraph
    assert reg.solvers.get("ulge") is ULGE
    assert reg.presets.get("oulge")["solver"]["orthogonal"] is True
    assert reg.presets.get("oulge").get("solver").get("mean_loss", False) is False
    assert reg.presets.get("oulge-mean")["solver"]["mean_loss"] is True


@pytest.mark.filterwarnings("ignore::graphclust.DisconnectedGraphWarning")
@pytest.mark.parametrize("preset", ["ulge", "oulge", "oulge-mean"])
def test_presets_fit_transform_predict(preset, blobs):
    from sklearn.metrics import adjusted_rand_score

    X, y = blobs
    est = graphclust.GraphClustering(preset, n_clusters=3, random_state=0,
                                     anchors={"n_anchors": 32})
    est.fit(X)
    assert adjusted_rand_score(y, est.labels_) > 0.95
    emb = est.transform(X)
    np.testing.assert_allclose(emb, est.solution_.embedding, atol=1e-8)
    np.testing.assert_array_equal(est.predict(X), est.labels_)
    est2 = graphclust.GraphClustering(preset, n_clusters=3, random_state=0,
                                      anchors={"n_anchors": 32}).fit(X)
    np.testing.assert_array_equal(est.labels_, est2.labels_)


