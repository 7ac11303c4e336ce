"""The kNN size rule: exact search below n²·d = 1e13, faiss HNSW (recorded) above, a
refusal with the estimate when faiss is missing, a warning for an explicit exact run."""

from __future__ import annotations

import sys

import pytest
from sklearn.datasets import make_blobs

import graphclust as gc
from graphclust.numerics import knn_size as _knn_size
from graphclust.numerics.knn_size import exact_knn_seconds, resolve_knn_method

X, Y = make_blobs(300, centers=3, n_features=5, random_state=0)


def test_the_630k_ncut_case_switches_to_faiss():
    method, rule = resolve_knn_method(630_000, 784, "auto")
    assert method == "approx" and "faiss HNSW" in rule and "hours" in rule
    assert 4.0 * 3600 < exact_knn_seconds(630_000, 784) < 5.0 * 3600
    assert resolve_knn_method(70_000, 784, "auto")[0] == "exact"  # all of MNIST


def test_without_faiss_auto_refuses_with_the_estimate(monkeypatch):
    monkeypatch.setitem(sys.modules, "faiss", None)  # import faiss -> ImportError
    with pytest.raises(gc.InputError, match=r"about 4\.\d hours.*faiss-cpu.*method = 'exact'"):
        resolve_knn_method(630_000, 784, "auto")


def test_explicit_exact_above_the_rule_warns_but_runs():
    with pytest.warns(gc.GraphClustWarning, match="will take about"):
        assert resolve_knn_method(630_000, 784, "exact") == ("exact", "requested")


def test_fit_above_a_lowered_limit_uses_and_records_approx(monkeypatch):
    monkeypatch.setattr(_knn_size, "EXACT_KNN_MAX_WORK", 1e3)
    model = gc.GraphClustering("ncut", n_clusters=3, random_state=0).fit(X)
    assert model.graph_.info["method"] == "approx"
    assert model.resolved_spec_["graph"]["method"] == "approx"
    # the approximate graph still finds the blobs, like the exact one
    exact = gc.GraphClustering("ncut", n_clusters=3, random_state=0,
                               graph={"method": "exact"}).fit(X)
    assert model.resolved_spec_["graph"]["method"] != exact.resolved_spec_["graph"]["method"]
    from sklearn.metrics import adjusted_rand_score
    assert adjusted_rand_score(exact.labels_, model.labels_) > 0.95


def test_default_small_fit_is_exact():
    model = gc.GraphClustering("ncut", n_clusters=3, random_state=0).fit(X)
    assert model.resolved_spec_["graph"]["method"] == "exact"
    assert model.graph_.info["method_rule"].startswith("auto: n²·d")
