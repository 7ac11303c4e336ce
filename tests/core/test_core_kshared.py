"""Presets without k take auto's estimate where theirs would be an eigengap
(graphclust._kshared, docs/choosing-k.rst "Presets without k")."""

from __future__ import annotations

import warnings

import graphclust as gc
import numpy as np
import pytest
from graphclust import SpecError
from sklearn.datasets import make_blobs


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
    from graphclust import _kshared

    def boom(*a, **k):
        raise AssertionError("auto was fitted although n_clusters was given")

    monkeypatch.setattr(_kshared, "k_from_auto", boom)
    model = _fit("ncut", blobs[0], n_clusters=3)
    assert model.n_clusters_ == 3 and model.k_selection_.method == "given"


def test_parts_that_estimate_otherwise_are_not_redirected(blobs, monkeypatch):
    from graphclust import _kshared

    def boom(*a, **k):
        raise AssertionError("auto was fitted for a part that estimates itself")

    monkeypatch.setattr(_kshared, "k_from_auto", boom)
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
    from graphclust import _kshared

    monkeypatch.setattr(_kshared, "k_from_auto", lambda *a, **k: pytest.fail("work ran"))
    with pytest.raises(SpecError, match="k_from"):
        gc.GraphClustering("ncut", overrides={"k_from": value}).fit(blobs[0])


def test_autos_estimate_is_the_fits_first_stage(blobs):
    model = _fit("ncut", blobs[0])
    stages = [s for s in model.timings_ if s != "total"]
    assert stages[0] == "k" and stages.count("k") == 1
    assert model.timings_["total"] == pytest.approx(sum(model.timings_[s] for s in stages))


def test_where_auto_finds_no_structure_the_eigengap_decides():
    """Three 2-d blobs auto's rule 9 tree calls one cluster: ncut's own eigengap finds
    them, with no warning of auto's; one Gaussian: both say one cluster, warned once."""
    from graphclust import NoClusterStructureWarning

    X = make_blobs(600, 2, centers=3, random_state=0)[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        auto = gc.GraphClustering("auto", random_state=0).fit(X)
        model = gc.GraphClustering("ncut", random_state=0).fit(X)
    assert auto.n_clusters_ == 1  # the case this rule is for (if auto improves, drop it)
    assert model.n_clusters_ == 3 and model.k_selection_.method == "eigengap"
    assert "k_from" not in model.k_selection_.details
    assert sum(issubclass(w.category, NoClusterStructureWarning) for w in caught) == 1
    gauss = np.random.default_rng(0).normal(size=(600, 2))
    with pytest.warns(NoClusterStructureWarning) as record:
        one = gc.GraphClustering("ncut", random_state=0).fit(gauss)
    assert one.n_clusters_ == 1
    assert sum(issubclass(w.category, NoClusterStructureWarning) for w in record) == 1
