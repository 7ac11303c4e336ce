"""Every resource a spec asks for is bounded before work starts (issue 30): ensemble
member counts (a SpecError at the path, from ``validate`` as from ``fit``), and the
sizes the parts clamp to the data (anchors, neighbours, candidates, row blocks)."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import graphclust as gc
from graphclust import GraphClustering, SpecError
MAX_MEMBER_COUNT = MAX_MEMBERS = 1000  # graphclust._spec


def _ensemble(members):
    return {"ensemble": {"members": members, "consensus": "tcut"}}


@pytest.mark.parametrize("members, path, words", [
    ([{"preset": "uspec", "count": 10**9}], "ensemble.members[0].count",
     f"at most {MAX_MEMBER_COUNT}"),
    ([{"preset": "uspec", "count": 600}, {"preset": "ulge", "count": 600}],
     "ensemble.members", f"1200 members, more than {MAX_MEMBERS}"),
    ([{}], "ensemble.members[0]", "names no pipeline"),
    ([{"count": 2, "n_clusters": 3}], "ensemble.members[0]", "names no pipeline"),
])
def test_unbounded_or_empty_members_are_spec_errors_before_any_work(members, path, words):
    problems = gc.validate_spec(_ensemble(members))
    assert [p.loc for p in problems] == [path] and words in problems[0].msg
    X = np.random.default_rng(0).normal(size=(40, 2))
    t0 = time.perf_counter()
    with pytest.raises(SpecError, match=words.replace("[", "\\[")):
        GraphClustering(_ensemble(members), n_clusters=2).fit(X)
    assert time.perf_counter() - t0 < 5


def test_a_member_with_parts_and_no_preset_is_valid():
    member = {"graph": {"name": "knn"}, "solver": {"name": "spectral"},
              "rounding": {"name": "kmeans"}}
    assert gc.validate_spec(_ensemble([member])) == []


@pytest.mark.parametrize("preset, overrides", [
    ("ncut", {"graph": {"n_neighbors": 10**9}}),
    ("uspec", {"anchors": {"n_anchors": 10**9, "candidate_factor": 10**9}}),
    pytest.param("uspec", {"graph": {"n_neighbors": 10**9, "candidates": 10**9}},
                 marks=pytest.mark.slow),  # every representative a candidate: 7 s
    ("ulge", {"graph": {"candidates": 10**9}}),
    ("ongr-k", {"graph": {"block_size": 10**12, "n_neighbors": 10**9}}),
    ("bkhk-dcd", {"anchors": {"n_anchors": 10**9}}),
])
def test_sizes_beyond_the_data_are_clamped(preset, overrides):
    X, _ = make_blobs(300, 3, centers=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = GraphClustering(preset, n_clusters=3, random_state=0, overrides=overrides).fit(X)
    assert model.labels_.shape == (300,)


@pytest.mark.parametrize("value", [float("inf"), float("-inf")])
@pytest.mark.parametrize("part,kind,param", [("ongr", "solver", "lam"),
                                             ("gmm", "rounding", "reg_covar"),
                                             ("density", "rounding", "structure_ratio")])
def test_infinite_numbers_are_spec_errors(part, kind, param, value):
    """No numeric parameter means anything at infinity: ONGR with ``lam = inf`` made
    its polar step's SVD fail to converge (found by the slow spec fuzz), so every
    ``real`` check refuses ±inf before any work, naming the parameter."""
    import graphclust

    with pytest.raises(graphclust.SpecError, match=f"{param}: must be a finite"):
        graphclust.resolve_part({"name": part, param: value}, kind)
