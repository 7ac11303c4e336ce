"""The ``manifold`` preset end to end: shapes k-means and U-SPEC cannot separate, and
digits at least as well as k-means (numbers in docs/bundles/manifold.rst)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits, make_circles, make_moons
from sklearn.metrics import adjusted_rand_score

import graphclust

SHAPES = {
    "moons": lambda: make_moons(1500, noise=0.1, random_state=0),
    "circles": lambda: make_circles(1500, noise=0.1, factor=0.5, random_state=0),
}


def test_preset_is_registered():
    spec = graphclust.get_registry().presets.get("manifold")
    assert spec["anchors"] == {"name": "sample", "n_anchors": 100000}
    assert spec["graph"]["name"] == "sample-knn"
    assert spec["adapter"]["graph"]["name"] == "fuzzy-knn"
    assert spec["adapter"]["rounding"]["name"] == "density"
    assert spec["solver"]["name"] == "umap-layout"
    assert spec["rounding"]["name"] == "argmax"


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_nonconvex_shapes(shape):
    X, y = SHAPES[shape]()
    model = graphclust.GraphClustering("manifold", n_clusters=2, random_state=0).fit(X)
    assert adjusted_rand_score(y, model.labels_) > 0.95
    assert model.n_clusters_ == 2 and np.unique(model.labels_).size == 2
    assert model.pipeline_.adapter.rounding_.n_clusters_found_ >= 1
    kmeans = KMeans(2, n_init=10, random_state=0).fit_predict(X)
    assert adjusted_rand_score(y, kmeans) < 0.95
    uspec = graphclust.GraphClustering("uspec", n_clusters=2, random_state=0).fit(X)
    assert adjusted_rand_score(y, uspec.labels_) < 0.95


@pytest.mark.slow
def test_digits_at_least_kmeans():
    X, y = load_digits(return_X_y=True)
    model = graphclust.GraphClustering("manifold", n_clusters=10, random_state=0).fit(X)
    kmeans = KMeans(10, n_init=10, random_state=0).fit_predict(X)
    ours, theirs = adjusted_rand_score(y, model.labels_), adjusted_rand_score(y, kmeans)
    assert ours >= theirs
    assert np.unique(model.labels_).size == 10
