"""Presets without k take auto's estimate where theirs would be an eigengap
(graphclust._kshared, docs/choosing-k.rst "Presets without k")."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import graphclust as gc
from graphclust import SpecError


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(400, centers=4, n_features=5, cluster_std=0.6, random_state=3)
    return X, y


def _fit(spec, X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gc.GraphClustering(spec, random_state=0, **kw).fit(X)


def test_an_eigengap_preset_takes_autos_k_and_selection(blobs):
    X, _ = blobs
    auto = _fit("auto", X)
    model = _fit("ncut", X)
    sel, ref = model.k_selection_, auto.k_selection_
    assert model.n_clusters_ == auto.n_clusters_ == 4
    assert len(np.unique(model.labels_)) == 4
    # auto's record, said to be auto's, with the rule that decided
    assert (sel.method, sel.k, sel.candidates, sel.scores) == (ref.method, ref.k,
                                                               ref.candidates, ref.scores)
    assert sel.part.startswith("auto (") and "preset 'ncut'" in sel.part
    assert sel.details["k_from"] == "auto"
    assert sel.details["auto"] == auto.resolved_spec_["summary"]
    assert sel.estimated


def test_k_from_parts_keeps_the_pipelines_own_eigengap(blobs):
    X, _ = blobs
    model = _fit("ncut", X, overrides={"k_from": "parts"})
    assert model.k_selection_.method == "eigengap"
    assert model.k_selection_.part == "graph 'knn'"
    assert "k_from" not in model.k_selection_.details


def test_a_given_k_is_used_and_no_auto_fit_runs(blobs, monkeypatch):
    from graphclust import _plan

    def boom(*a, **k):
        raise AssertionError("auto was fitted although n_clusters was given")

    monkeypatch.setattr(_plan, "k_from_auto", boom)
    model = _fit("ncut", blobs[0], n_clusters=3)
    assert model.n_clusters_ == 3 and model.k_selection_.method == "given"


def test_parts_that_estimate_otherwise_are_not_redirected(blobs, monkeypatch):
    from graphclust import _plan

    def boom(*a, **k):
        raise AssertionError("auto was fitted for a part that estimates itself")

    monkeypatch.setattr(_plan, "k_from_auto", boom)
    spec = {"anchors": {"name": "sample", "n_anchors": 1}, "graph": {"name": "one-anchor"},
            "solver": {"name": "features"},
            "rounding": {"name": "density", "min_cluster_size": 20}}
    model = _fit(spec, blobs[0])
    assert model.k_selection_.method == "density-tree"


def test_the_user_k_max_reaches_autos_search(blobs):
    model = _fit("ncut", blobs[0], k_max=3)
    assert model.k_selection_.k_max <= 3 and model.n_clusters_ <= 3
    # the spec's k_max too, and the estimator's wins over it
    model = _fit("ncut", blobs[0], overrides={"k_max": 2})
    assert model.k_selection_.k_max == 2 and model.n_clusters_ == 2
    model = _fit("ncut", blobs[0], overrides={"k_max": 2}, k_max=6)
    assert model.k_selection_.k_max == 6 and model.n_clusters_ == 4


@pytest.mark.parametrize("value", ["x", 1, None, ["auto"]])
def test_a_bad_k_from_is_refused_before_any_work(blobs, value, monkeypatch):
    from graphclust import _plan

    monkeypatch.setattr(_plan, "k_from_auto", lambda *a, **k: pytest.fail("work ran"))
    with pytest.raises(SpecError, match="k_from"):
        gc.GraphClustering("ncut", overrides={"k_from": value}).fit(blobs[0])
