"""A spec's ``k_max`` key (issue 44): the largest ``k`` searched when the estimator gives
none — how a rule preset states the range its estimator resolves (``auto``'s density
trees); the estimator's ``k_max`` wins; a bad value is refused by name before any work."""

from __future__ import annotations

import pytest
from graphclust import GraphClustering, KRangeWarning, SpecError
from sklearn.datasets import make_blobs

# the graph's own eigengap estimates (k_from = "parts"; auto's k: tests/core/test_core_kshared.py)
SPEC = {"graph": {"name": "knn", "n_neighbors": 10, "method": "exact"},
        "solver": {"name": "spectral"}, "rounding": {"name": "kmeans", "n_init": 3},
        "k_from": "parts"}


@pytest.fixture(scope="module")
def blobs():
    return make_blobs(150, 3, centers=3, cluster_std=0.5, random_state=0)[0]


def test_the_spec_k_max_bounds_the_search(blobs):
    with pytest.warns(KRangeWarning):
        model = GraphClustering({**SPEC, "k_max": 2}, random_state=0).fit(blobs)
    assert model.n_clusters_ == 2 and model.k_selection_.k_max == 2


def test_the_estimator_k_max_wins(blobs):
    model = GraphClustering({**SPEC, "k_max": 2}, k_max=6, random_state=0).fit(blobs)
    assert model.n_clusters_ == 3 and model.k_selection_.k_max == 6


def test_without_either_the_default(blobs):
    model = GraphClustering(SPEC, random_state=0).fit(blobs)
    assert model.n_clusters_ == 3 and model.k_selection_.k_max == 20


@pytest.mark.parametrize("bad", [0, 2.5, True, "ten"])
def test_a_bad_k_max_is_refused_by_name(blobs, bad):
    with pytest.raises(SpecError, match="k_max"):
        GraphClustering({**SPEC, "k_max": bad}).fit(blobs)
