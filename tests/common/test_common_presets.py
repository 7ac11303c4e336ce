"""Presets ``ncut`` and ``anchor-spectral`` end to end through the estimator."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.metrics import adjusted_rand_score

import graphclust
from graphclust_plugins.common.metric_acc import clustering_accuracy


@pytest.mark.parametrize("preset", ["ncut", "anchor-spectral"])
def test_presets_recover_blobs_and_are_deterministic(blobs, preset):
    X, y = blobs
    kw = {"anchors": {"n_anchors": 40}} if preset == "anchor-spectral" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", graphclust.DisconnectedGraphWarning)  # 3 far blobs
        a = graphclust.GraphClustering(preset, n_clusters=3, random_state=0, **kw).fit(X)
        b = graphclust.GraphClustering(preset, n_clusters=3, random_state=0, **kw).fit(X)
    assert adjusted_rand_score(y, a.labels_) == pytest.approx(1.0)
    np.testing.assert_array_equal(a.labels_, b.labels_)


@pytest.mark.parametrize("preset", ["ncut", "anchor-spectral"])
@pytest.mark.parametrize("k", [1, 3])
def test_presets_tiny_input(rng, preset, k):
    X = rng.standard_normal((30, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", graphclust.GraphClustWarning)
        labels = graphclust.GraphClustering(preset, n_clusters=k, random_state=0).fit_predict(X)
    u = np.unique(labels)
    np.testing.assert_array_equal(u, np.arange(u.size))
    assert u.size <= k


def test_anchor_spectral_predict_matches_training_labels():
    X, y = load_digits(return_X_y=True)
    est = graphclust.GraphClustering("anchor-spectral", n_clusters=10, random_state=0,
                                     anchors={"n_anchors": 300}).fit(X)
    assert clustering_accuracy(est.labels_, y) > 0.75
    # the out-of-sample path (Z rows -> anchor_embedding -> nearest centre) reproduces
    # the training labels on the training points
    assert np.mean(est.predict(X) == est.labels_) > 0.99
