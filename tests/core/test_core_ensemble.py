"""Ensemble specs, the Memberships value object and the Ensemble runner.

A test-only consensus (k-means on the dense membership rows) is registered for the
duration of each test, so these tests depend on no bundle's consensus part.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

import graphclust as gc
from graphclust import Context, Memberships, Progress
from graphclust._ensemble import Ensemble, clip_range
from graphclust.cli import main as cli_main

from conftest import RowKMeans


@gc.part
class FirstMember(gc.Consensus):
    """Member 0's labels (tests only; cannot assign new points)."""

    name = "first-member"

    def combine(self, memberships, n_clusters, ctx):
        return memberships.member_labels(0)


@pytest.fixture
def registry():
    reg = gc.get_registry()
    snap = reg.snapshot()
    reg.consensus.add(RowKMeans)
    reg.consensus.add(FirstMember)
    yield reg
    reg.restore(snap)


@pytest.fixture(scope="module")
def data():
    X, y = make_blobs(n_samples=240, centers=3, n_features=4, cluster_std=2.5, random_state=3)
    return X, y


SMALL = {"anchors": {"n_anchors": 40}}


def small_spec(count=3, consensus="rows-kmeans", k_range=(3, 8), extra=()):
    members = [{"preset": "anchor-spectral", "count": count, "n_clusters": list(k_range),
                **SMALL}, *extra]
    return {"n_clusters": 3, "ensemble": {"members": members, "consensus": {"name": consensus}}}


def locs(spec, registry):
    return [p.loc for p in gc.validate_spec(spec, registry)]


# -- validation -------------------------------------------------------------------------
def test_empty_members_is_reported_at_members(registry):
    assert locs({"ensemble": {"members": [], "consensus": "rows-kmeans"}}, registry) == [
        "ensemble.members"]


def test_member_failing_validation_is_reported_with_its_path(registry):
    bad = {"graph": {"name": "knn"}, "solver": {"name": "no-such-solver"},
           "rounding": {"name": "kmeans"}}
    spec = {"ensemble": {"members": ["ncut", {"preset": "ncut"}, bad],
                         "consensus": "rows-kmeans"}}
    with pytest.raises(gc.UnknownPartError) as err:
        gc.compose(spec, registry)
    assert [p.loc for p in err.value.problems] == ["ensemble.members[2].solver.name"]
    assert "no-such-solver" in str(err.value)


def test_member_parameter_problems_keep_the_member_prefix(registry):
    spec = {"ensemble": {"members": [{"preset": "ncut", "graph": {"n_neighbours": 3}},
                                     {"preset": "ncut", "solver": {"name": "spectral",
                                                                   "drop_trivial": 3}}],
                         "consensus": "rows-kmeans"}}
    assert locs(spec, registry) == ["ensemble.members[0].graph.n_neighbours",
                                    "ensemble.members[1].solver.drop_trivial"]


@pytest.mark.parametrize("k", [[5, 2], [0, 3], [3], [2, 3, 4], "3", 0, True, [2.0, 3]])
def test_bad_member_ranges(registry, k):
    spec = {"ensemble": {"members": [{"preset": "ncut", "n_clusters": k}],
                         "consensus": "rows-kmeans"}}
    assert locs(spec, registry) == ["ensemble.members[0].n_clusters"]


def test_unknown_and_missing_consensus(registry):
    with pytest.raises(gc.UnknownPartError) as err:
        gc.compose({"ensemble": {"members": ["ncut"], "consensus": {"name": "rows-kmean"}}},
                   registry)
    assert err.value.problems[0].loc == "ensemble.consensus.name"
    assert "did you mean 'rows-kmeans'" in str(err.value)
    assert locs({"ensemble": {"members": ["ncut"]}}, registry) == ["ensemble.consensus"]


def test_unknown_consensus_parameter(registry):
    spec = {"ensemble": {"members": ["ncut"], "consensus": {"name": "rows-kmeans", "x": 1}}}
    assert locs(spec, registry) == ["ensemble.consensus.x"]


@pytest.mark.parametrize("spec, expected", [
    ({"ensemble": {"members": ["ncut"], "consensus": "rows-kmeans"}, "graph": {"name": "knn"}},
     ["graph"]),
    ({"ensemble": {"members": [{"preset": "ncut", "seed": 3}], "consensus": "rows-kmeans"}},
     ["ensemble.members[0].seed"]),
    ({"ensemble": {"members": [{"ensemble": {}}], "consensus": "rows-kmeans"}},
     ["ensemble.members[0].ensemble"]),
    ({"ensemble": {"members": ["no-preset"], "consensus": "rows-kmeans"}},
     ["ensemble.members[0]"]),
    ({"ensemble": {"members": [{"preset": "ncut", "count": 0}], "consensus": "rows-kmeans"}},
     ["ensemble.members[0].count"]),
    ({"ensemble": {"members": [3], "consensus": "rows-kmeans"}}, ["ensemble.members[0]"]),
    ({"ensemble": {"members": "ncut", "consensus": "rows-kmeans"}}, ["ensemble.members"]),
    ({"ensemble": {"members": ["ncut"], "consensus": "rows-kmeans", "n_job": 2}},
     ["ensemble.n_job"]),
    ({"ensemble": {"members": ["my.module:Thing"], "consensus": "rows-kmeans"}},
     ["ensemble.members[0]"]),
])
def test_structural_problems(registry, spec, expected):
    assert locs(spec, registry) == expected


def test_toml_json_and_dict_compose_alike(registry):
    toml = """
n_clusters = 3
[ensemble]
members = ["ncut", { preset = "anchor-spectral", count = 2, n_clusters = [3, 5] }]
consensus = { name = "rows-kmeans" }
"""
    as_dict = {"n_clusters": 3, "ensemble": {
        "members": ["ncut", {"preset": "anchor-spectral", "count": 2, "n_clusters": [3, 5]}],
        "consensus": {"name": "rows-kmeans"}}}
    for source in (toml, json.dumps(as_dict), as_dict):
        ens = gc.compose(source, registry)
        assert isinstance(ens, Ensemble)
        assert [m.n_clusters for m in ens.members] == [None, (3, 5), (3, 5)]
        assert ens.members[1].pipeline is not ens.members[2].pipeline
        assert ens.consensus.name == "rows-kmeans" and ens.n_clusters == 3


# -- memberships ------------------------------------------------------------------------
def dense_reference(labels, sizes):
    blocks = []
    for lab, k in zip(labels, sizes):
        block = np.zeros((len(lab), k))
        for i, c in enumerate(lab):
            if c >= 0:
                block[i, c] = 1.0
        blocks.append(block)
    return np.hstack(blocks)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_memberships_match_one_hot_blocks(data):
    n = data.draw(st.integers(1, 30))
    m = data.draw(st.integers(1, 4))
    sizes = [data.draw(st.integers(1, 6)) for _ in range(m)]
    labels = [np.array(data.draw(st.lists(st.integers(-1, k - 1), min_size=n, max_size=n)))
              for k in sizes]
    mem = Memberships.from_labels(labels, sizes)
    assert sp.issparse(mem.matrix) and mem.matrix.shape == (n, sum(sizes))
    np.testing.assert_array_equal(mem.matrix.toarray(), dense_reference(labels, sizes))
    np.testing.assert_array_equal(mem.offsets, np.concatenate([[0], np.cumsum(sizes)]))
    for i, lab in enumerate(labels):
        np.testing.assert_array_equal(mem.member_labels(i), lab)
    assert (mem.matrix.sum(axis=1) <= m).all()


def test_memberships_reject_inconsistent_input():
    with pytest.raises(ValueError, match="same points"):
        Memberships.from_labels([np.zeros(3, int), np.zeros(4, int)])
    with pytest.raises(ValueError, match="out of range"):
        Memberships.from_labels([np.array([0, 3])], [2])
    with pytest.raises(ValueError, match="sum to"):
        Memberships(sp.csr_array((3, 4)), (2, 1))


@settings(max_examples=60, deadline=None)
@given(lo=st.integers(1, 80), width=st.integers(0, 80), n=st.integers(1, 5000),
       k=st.integers(1, 50))
def test_clip_range_stays_within_data_and_range(lo, width, n, k):
    hi = lo + width
    a, b = clip_range(lo, hi, n, k)
    assert 1 <= a <= b <= min(hi, n)
    assert b == min(hi, max(math.isqrt(n), k), n) or b == 1
    if hi <= min(math.isqrt(n), n):
        assert (a, b) == (lo, hi)  # large data: the range as given


# -- running ----------------------------------------------------------------------------
def test_same_seed_same_labels_and_member_seeds_differ(registry, data):
    X, y = data
    spec = small_spec(count=4)
    a = gc.GraphClustering(spec, random_state=5).fit(X)
    b = gc.GraphClustering(spec, random_state=5).fit(X)
    c = gc.GraphClustering(spec, random_state=6).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    seeds = a.result_.member_seeds
    assert len(set(seeds)) == 4
    assert a.result_.member_seeds == b.result_.member_seeds
    assert set(seeds).isdisjoint(c.result_.member_seeds)
    for r_a, r_b in zip(a.members_, b.members_):
        np.testing.assert_array_equal(r_a.labels, r_b.labels)
    # the members really differ (own anchors, own k)
    assert len({tuple(r.labels) for r in a.members_}) > 1
    lo, hi = clip_range(3, 8, X.shape[0], 3)
    assert all(lo <= k <= hi for k in a.result_.member_n_clusters)
    assert adjusted_rand_score(y, a.labels_) > 0.7  # overlapping blobs: a sanity bound


def test_member_k_defaults_and_fixed_values(registry, data):
    X, _ = data
    spec = {"n_clusters": 3, "ensemble": {"members": [
        {"preset": "anchor-spectral", **SMALL},
        {"preset": "anchor-spectral", "n_clusters": 5, **SMALL}], "consensus": "rows-kmeans"}}
    model = gc.GraphClustering(spec, random_state=0).fit(X)
    assert model.result_.member_n_clusters == [3, 5]
    assert model.memberships_.sizes == (3, 5)
    assert model.memberships_.matrix.shape == (X.shape[0], 8)


def test_n_jobs_two_gives_the_same_labels(registry, data):
    X, _ = data
    spec = small_spec(count=3)
    one = gc.GraphClustering(spec, random_state=1, n_jobs=1).fit(X)
    two = gc.GraphClustering(spec, random_state=1, n_jobs=2).fit(X)
    np.testing.assert_array_equal(one.labels_, two.labels_)
    assert one.result_.member_seeds == two.result_.member_seeds
    # members fitted in worker processes come back fitted: predict works the same
    X_new = X[::7] + 0.1
    np.testing.assert_array_equal(two.predict(X_new), one.predict(X_new))


@pytest.mark.parametrize("jobs", [0, 1.5, "2", True])
def test_bad_n_jobs(registry, data, jobs):
    with pytest.raises(gc.SpecError, match="n_jobs"):
        gc.GraphClustering(small_spec(count=1), n_jobs=jobs).fit(data[0])


def test_predict_on_training_points_is_consistent(registry, data):
    X, _ = data
    model = gc.GraphClustering(small_spec(count=3), random_state=2).fit(X)
    assert hasattr(model, "predict") and not hasattr(model, "transform")
    pred = model.predict(X)
    assert np.mean(pred == model.labels_) >= 0.99
    # rows built from the members' predictions match the training memberships
    rows = model.pipeline_.memberships_of(X, model.result_)
    agree = (rows.matrix != model.memberships_.matrix).sum() / rows.matrix.nnz
    assert agree <= 0.02


def test_predict_unavailable_with_a_reason(registry, data):
    X, _ = data
    no_assign = gc.GraphClustering(small_spec(count=2, consensus="first-member"),
                                   random_state=0).fit(X)
    assert not hasattr(no_assign, "predict")
    with pytest.raises(AttributeError) as err:  # scikit-learn's message, ours as the cause
        no_assign.predict(X)
    assert "consensus 'first-member' cannot label new points" in str(err.value.__cause__)
    no_member = gc.GraphClustering(small_spec(count=1, extra=["ncut"]), random_state=0).fit(X)
    with pytest.raises(AttributeError) as err:
        no_member.predict(X)
    assert "members[1] ncut cannot label new points" in str(err.value.__cause__)


def test_first_member_consensus_returns_that_member(registry, data):
    X, _ = data
    model = gc.GraphClustering(small_spec(count=2, consensus="first-member"),
                               random_state=0).fit(X)
    first = model.members_[0].labels
    assert adjusted_rand_score(first, model.labels_) == 1.0


def test_one_progress_stage_over_the_members(registry, data):
    """One bar for the members (a step each, in order) and one for the consensus."""
    X, _ = data
    events = []
    ens = gc.compose(small_spec(count=3, extra=[{"preset": "ncut"}]), registry)
    ens.run(X, n_clusters=3, ctx=Context(0, Progress(events.append)))
    opened = [(e.stage, e.kind) for e in events if e.kind in ("open", "close")]
    assert opened == [("members", "open"), ("members", "close"),
                      ("consensus", "open"), ("consensus", "close")]
    steps = [(e.step, e.total) for e in events if e.stage == "members" and e.kind == "step"]
    assert steps == [(j, 4) for j in range(1, 5)]
    assert gc.GraphClustering(small_spec(), random_state=0).fit(X).labels_ is not None


def test_member_warnings_are_reported_once_with_counts(registry):
    # three well-separated groups and two clusters: every member's kNN graph has more
    # components than clusters, the case the disconnected-graph warning is about
    X = np.vstack([np.zeros((30, 2)), 100 + np.zeros((30, 2)), -100 + np.zeros((30, 2))])
    X += np.random.default_rng(0).normal(scale=0.01, size=X.shape)
    spec = {"n_clusters": 2, "ensemble": {"members": [{"preset": "ncut", "count": 3}],
                                          "consensus": "rows-kmeans"}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.GraphClustering(spec, random_state=0).fit(X)
    disc = [w for w in caught if issubclass(w.category, gc.DisconnectedGraphWarning)]
    assert len(disc) == 1 and "in 3 of 3 ensemble members" in str(disc[0].message)


def test_member_asking_for_more_clusters_than_points(registry):
    X = np.random.default_rng(0).normal(size=(20, 2))
    spec = {"ensemble": {"members": [{"preset": "ncut", "n_clusters": 25}],
                         "consensus": "rows-kmeans"}}
    with pytest.raises(gc.InputError, match="asks for 25 clusters of 20 samples"):
        gc.GraphClustering(spec, n_clusters=2).fit(X)


def test_ensemble_metrics_and_estimator_attributes(registry, data):
    X, y = data
    spec = {**small_spec(count=2), "metrics": ["acc", "nmi"]}
    model = gc.GraphClustering(spec, random_state=0).fit(X, y)
    assert set(model.scores_) == {"acc", "nmi"}
    assert model.graph_ is None and model.solution_ is None
    assert len(model.members_) == 2 and set(model.timings_) >= {"members", "consensus"}
    assert "Ensemble([anchor-spectral x2], consensus='rows-kmeans')" == repr(model.pipeline_)


# -- command line -----------------------------------------------------------------------
def test_cli_validate_fill_and_run(registry, tmp_path, capsys):
    good = tmp_path / "ens.toml"
    good.write_text('n_clusters = 3\n[ensemble]\nmembers = [{ preset = "anchor-spectral", '
                    'count = 2, n_clusters = [3, 5], anchors = { n_anchors = 30 } }]\n'
                    'consensus = { name = "rows-kmeans" }\n')
    assert cli_main(["validate", str(good)]) == 0
    assert cli_main(["fill", "--json", str(good)]) == 0
    filled = json.loads(capsys.readouterr().out.split("valid\n", 1)[1])
    member = filled["ensemble"]["members"][0]
    assert member["anchors"]["n_anchors"] == 30 and member["count"] == 2
    assert member["rounding"]["name"] == "kmeans" and "n_init" in member["rounding"]
    refill = tmp_path / "filled.json"
    refill.write_text(json.dumps(filled))
    assert cli_main(["validate", str(refill)]) == 0
    out = tmp_path / "labels.npy"
    assert cli_main(["run", "--spec", str(good), "--dataset", "iris", "--quiet", "--json",
                     "--output", str(out)]) == 0
    result = json.loads(capsys.readouterr().out.split("valid\n")[-1])
    assert len(result["members"]) == 2 and np.load(out).shape == (150,)
    bad = tmp_path / "bad.toml"
    bad.write_text('[ensemble]\nmembers = []\nconsensus = "rows-kmeans"\n')
    assert cli_main(["validate", str(bad)]) == 2
    assert "ensemble.members" in capsys.readouterr().err


def test_every_preset_and_ensemble_member_scores_the_default_metrics():
    """A preset without ``metrics`` (ongr-k), an ensemble without ``metrics`` and its
    members are scored with the default metrics when y is given; members' scores are the
    ensemble's metrics on their own labels, whatever their preset declares."""
    from graphclust._composer import DEFAULT_METRICS

    X, y = make_blobs(n_samples=300, centers=3, n_features=4, random_state=0)
    single = gc.GraphClustering("ongr-k", n_clusters=3, random_state=0).fit(X, y)
    assert set(single.scores_) == set(DEFAULT_METRICS)
    spec = {"ensemble": {"members": [{"preset": "ongr-k", "count": 2},
                                     {"preset": "anchor-spectral",
                                      "anchors": {"n_anchors": 50}}],
                         "consensus": {"name": "tcut"}}}
    model = gc.GraphClustering(spec, n_clusters=3, random_state=0).fit(X, y)
    assert set(model.scores_) == set(DEFAULT_METRICS)
    assert [set(r.scores) for r in model.members_] == [set(DEFAULT_METRICS)] * 3
    assert [r.scores for r in model.members_] == model.result_.member_scores
    spec["metrics"] = []  # an explicit empty list scores nothing
    quiet = gc.GraphClustering(spec, n_clusters=3, random_state=0).fit(X, y)
    assert quiet.scores_ == {} and all(r.scores == {} for r in quiet.members_)
