"""Contract-kit checks and end-to-end presets for the dlc bundle."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer

import graphclust
from graphclust.testing import check_part
from graphclust_plugins.dlc.graph_landmark_codes import LandmarkCodes
from graphclust_plugins.dlc.solver_dlc import DLCSolver


def test_landmark_codes_contract():
    check_part(LandmarkCodes)
    check_part(LandmarkCodes, n_neighbors=1, sigma=0.3)


@pytest.mark.parametrize("options", [{}, {"n_layers": 1}, {"embedding": "codes", "n_iter": 2}])
def test_dlc_solver_contract(options):
    check_part(DLCSolver, **options)


@pytest.mark.parametrize("preset", ["slc", "dlc"])
def test_presets_end_to_end_with_normalizer(blobs, preset):
    X, y = blobs
    est = graphclust.GraphClustering(preset, n_clusters=3, random_state=0,
                                     anchors={"n_anchors": 40})
    model = make_pipeline(Normalizer(), est).fit(X)
    labels = model[-1].labels_
    assert labels.shape == (150,) and set(np.unique(labels)) <= {0, 1, 2}
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(y, labels) > 0.9
    assert np.array_equal(model.predict(X[:20]), labels[:20])
    sol = model[-1].solution_
    assert sol.embedding.dtype == np.float32 and sol.objective.size == 5 * {"slc": 1, "dlc": 2}[preset]


def test_bkhk_landmarks_for_the_second_layer_through_a_spec(blobs):
    pytest.importorskip("graphclust_plugins.ulge")
    if "bkhk" not in graphclust.get_registry().anchors:
        pytest.skip("ulge bundle's bkhk not registered")
    X = Normalizer().fit_transform(blobs[0])
    est = graphclust.GraphClustering(
        "dlc", n_clusters=3, random_state=0, anchors={"n_anchors": 32},
        solver={"layer_anchors": {"name": "bkhk", "n_anchors": 16}})
    est.fit(X)
    layers = est.solution_.info["layers"]
    assert layers[0]["n_anchors"] == 32 and layers[1]["n_anchors"] == 16
    assert est.labels_.shape == (150,)
