"""An ensemble exposes its members' labels and scores, and the benchmarks compare a
consensus with its actual members (the same run), printed side by side."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs

import graphclust as gc
from benchmarks import report, runner
from benchmarks.suite import median_of

pytestmark = pytest.mark.filterwarnings("ignore::graphclust.GraphClustWarning")

_SPEC = {"ensemble": {"members": [
    {"preset": "uspec", "anchors": {"n_anchors": 40}, "metrics": []},
    {"preset": "uspec", "anchors": {"n_anchors": 30}, "n_clusters": 6, "metrics": []}],
    "consensus": {"name": "tcut"}}, "metrics": [{"name": "acc"}, {"name": "nmi"}]}


@pytest.fixture(scope="module")
def fitted():
    X, y = make_blobs(n_samples=400, centers=4, n_features=5, cluster_std=2.0, random_state=1)
    return X, y, gc.GraphClustering(_SPEC, n_clusters=4, random_state=0).fit(X, y)


def test_result_exposes_member_labels_names_and_scores(fitted):
    X, y, model = fitted
    res = model.result_
    assert res.member_names == ["members[0] uspec", "members[1] uspec"]
    assert [np.unique(lab).size for lab in res.member_labels] == [4, 6]
    for lab, member, scores in zip(res.member_labels, res.members, res.member_scores,
                                   strict=True):
        np.testing.assert_array_equal(lab, member.labels)
        # the ensemble's metrics, scored on the member's own labels
        assert scores == {"acc": gc.resolve_part({"name": "acc"}, "metric").score(lab, y),
                          "nmi": gc.resolve_part({"name": "nmi"}, "metric").score(lab, y)}
    # without y: no scores, still one (empty) entry per member
    plain = gc.GraphClustering(_SPEC, n_clusters=4, random_state=0).fit(X)
    assert plain.result_.member_scores == [{}, {}]
    np.testing.assert_array_equal(plain.labels_, model.labels_)


def test_runner_records_the_actual_members(fitted):
    X, y, model = fitted
    recs = runner.member_records(model, y)
    assert [(r["name"], r["k"]) for r in recs] == [("uspec", 4), ("uspec", 6)]
    for rec, lab in zip(recs, model.result_.member_labels, strict=True):
        assert {m: rec[m] for m in runner.METRICS} == runner.score_all(lab, y)
    single = gc.GraphClustering("uspec", n_clusters=4, random_state=0)
    single.set_params(anchors__n_anchors=40).fit(X)
    assert runner.member_records(single, y) == []


def _rec(seed, acc, members):
    return {"method": "ens", "dataset": "x", "seed": seed, "kind": "spec", "params": {},
            "prep": "raw", "time_cap": 100.0, "status": "ok", "n": 100, "d": 3, "k": 3,
            "acc": acc, "nmi": acc,
            "members": [{"name": f"m{j}", "k": 3, "acc": a, "nmi": a}
                        for j, a in enumerate(members)]}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.lists(st.floats(0, 1), min_size=3,
                                                    max_size=3)), min_size=1, max_size=3))
def test_median_target_uses_the_runs_own_members(runs):
    recs = [_rec(s, acc, members) for s, (acc, members) in enumerate(runs)]
    # a separate "member" row run alone would say otherwise: it must be ignored
    alone = [{**_rec(0, 1.0, []), "method": f"m{j}", "members": []} for j in range(3)]
    rows = report.aggregate(recs + alone)
    ev = report.evaluate(median_of("t", "ens", "x", versus=("m0", "m1", "m2")), rows)
    med = np.mean([sorted(m)[1] for _, m in runs])  # brute force: per-seed median, mean
    ours = np.mean([a for a, _ in runs])
    assert ev["target"] == "≥ median of its 3 members (same runs)"
    if ours - med > 1e-9:
        assert ev["status"] == "met"
    elif ours - med < -1e-9:
        assert ev["status"].startswith("missed")
    row = next(r for r in rows if r["method"] == "ens")
    for j, member in enumerate(row["members"]):
        assert member["name"] == f"m{j}"
        assert member["acc"] == pytest.approx(np.mean([m[j] for _, m in runs]))


def test_suite_markdown_prints_members_beside_the_consensus():
    rows = report.aggregate([_rec(0, 0.8, [0.5, 0.7, 0.9]), _rec(1, 0.6, [0.4, 0.6, 0.8])])
    text = report.suite_markdown(None, "t", [], rows)
    assert "Members of `ens` on x in the same runs (2 seed(s)" in text
    lines = {line.split(" | ")[0].strip("| "): line for line in text.splitlines()
             if line.startswith("| ")}
    assert "| 65.0 |" in lines["m1"] and "| 65.0 |" in lines["median member"]
    assert "| 70.0 |" in lines["**consensus** `ens`"]
