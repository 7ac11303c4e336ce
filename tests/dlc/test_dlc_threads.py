"""Labels must not depend on the thread count (issue 18): the k-means anchor centres
(scikit-learn sums them in per-OpenMP-thread buffers) and the d×d layer algebra feed
discrete choices, so both run in a thread-count-free way."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits
from threadpoolctl import threadpool_limits

import graphclust as gc
from graphclust_plugins.common.anchors_kmeans import KMeansAnchors

X = load_digits().data[:1200]


def _under(limits, fn):
    with threadpool_limits(limits=limits), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def test_kmeans_anchors_are_bitwise_equal_for_1_and_2_threads():
    a = _under(1, lambda: KMeansAnchors(n_anchors=150).select(X, gc.Context(3)).points)
    b = _under(2, lambda: KMeansAnchors(n_anchors=150).select(X, gc.Context(3)).points)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("preset", ["dlc", "slc"])
def test_dlc_embedding_and_labels_do_not_depend_on_threads(preset):
    def fit():
        return gc.GraphClustering(preset, n_clusters=10, random_state=0,
                                  anchors={"n_anchors": 150}).fit(X)

    one, two = _under(1, fit), _under(2, fit)
    np.testing.assert_array_equal(one.anchors_.points, two.anchors_.points)
    np.testing.assert_array_equal(one.embedding_, two.embedding_)
    np.testing.assert_array_equal(one.labels_, two.labels_)
