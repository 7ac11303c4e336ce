"""The ``ongr-k`` / ``ongr-r`` presets end to end through the estimator."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import graphclust

pytestmark = pytest.mark.skipif(
    not {"random", "kmeans"} <= set(graphclust.get_registry().anchors.names()),
    reason="common 'random'/'kmeans' anchors not registered")


def _fit(preset, X, k, seed=0, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", graphclust.ConvergenceWarning)
        warnings.simplefilter("ignore", graphclust.GraphClustWarning)
        return graphclust.GraphClustering(preset, n_clusters=k, random_state=seed, **kw).fit(X)


@pytest.mark.parametrize("preset", ["ongr-k", "ongr-r"])
def test_preset_end_to_end(preset):
    from sklearn.datasets import load_digits
    from sklearn.metrics import normalized_mutual_info_score

    X, y = load_digits(return_X_y=True)
    model = _fit(preset, X, 10)
    assert model.anchors_.n_anchors == 179  # min(1000, n/10)
    assert normalized_mutual_info_score(y, model.labels_) > 0.7
    again = _fit(preset, X, 10)
    np.testing.assert_array_equal(model.labels_, again.labels_)
    # predict through the anchor graph agrees with the fitted labels on training points
    assert np.mean(model.predict(X[:300]) == model.labels_[:300]) > 0.9


@pytest.mark.parametrize("k", [1, 3])
def test_preset_tiny(k, rng):
    X = rng.normal(size=(30, 2))
    model = _fit("ongr-r", X, k)
    assert set(np.unique(model.labels_)) <= set(range(k))
