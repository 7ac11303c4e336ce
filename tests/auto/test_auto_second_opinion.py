"""auto's rule 12: "no structure" only when a second test says it too.

When the rule that decided answers ``k = 1``, the spec's ``second_opinion`` (rule 2's
exact 10-NN graph, its eigengap) is fitted; with ``k >= 2`` its fit is the fit
(graphclust._ksecond, docs/auto.rst rule 12).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

import graphclust as gc
from graphclust import DataProfile, NoClusterStructureWarning, SpecError
from graphclust._ksecond import fit_with_second_opinion
from graphclust_plugins.auto.rule_auto import auto_rule, exact_spec


def _fit(spec, X, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = gc.GraphClustering(spec, random_state=0, **kw).fit(X)
    return model, [w.category for w in caught]


@pytest.mark.slow  # about 1 s on an idle machine, the density tree's first fit compiles
def test_three_blobs_the_tree_calls_one_cluster_get_k_3_from_the_second_opinion():
    X, y = make_blobs(300, 4, centers=3, cluster_std=2.0, random_state=0)
    model, warned = _fit("auto", X)
    sel = model.k_selection_
    first = sel.details["first"]
    assert (first["k"], first["method"], first["structure"]) == (1, "density-tree", False)
    assert first["candidates"] and first["rule"]  # the first selection is kept whole
    assert model.n_clusters_ == 3 and sel.method == "eigengap" and sel.structure
    assert "second opinion" in sel.rule and "rule 12" in sel.details["second_opinion"]
    assert "rule 9" in model.resolved_spec_["summary"]
    assert "rule 12" in model.resolved_spec_["summary"]
    assert NoClusterStructureWarning not in warned
    assert adjusted_rand_score(y, model.labels_) > 0.9
    assert "k" in model.timings_  # the first fit's seconds
    # the fit is the second spec's own fit on the same data and seed
    second = auto_rule(model.profile_)["second_opinion"]
    direct, _ = _fit(second, X)
    assert np.array_equal(direct.labels_, model.labels_)


@pytest.mark.slow
@pytest.mark.parametrize("d", [1, 2, 4])
def test_a_gaussian_stays_one_cluster_with_one_warning(d):
    """In 4-d the second opinion runs and agrees; in 1 and 2 dimensions it is not asked
    (a single cloud's kNN graph has cheap cuts there: rule 12's d >= 4)."""
    X = np.random.default_rng(0).normal(size=(400, d))
    model, warned = _fit("auto", X)
    assert model.n_clusters_ == 1 and not model.k_selection_.structure
    assert warned.count(NoClusterStructureWarning) == 1
    if d >= 4:
        heard = model.k_selection_.details["second_opinion"]
        assert heard["k"] == 1 and "rule 12" in heard["spec"]
    else:
        assert "second_opinion" not in model.k_selection_.details
        assert "second_opinion" not in auto_rule(model.profile_)
    assert np.all(model.labels_ == 0)


def test_with_k_given_no_second_opinion_is_built_or_fitted(monkeypatch):
    X = make_blobs(300, 2, centers=3, random_state=0)[0]
    assert "second_opinion" not in auto_rule(DataProfile(n=300, d=2, k=3))
    import graphclust._ksecond as ksecond

    def refuse(*args, **kwargs):
        raise AssertionError("the second opinion ran with k given")

    monkeypatch.setattr(ksecond, "_second_plan", refuse)
    model, _ = _fit("auto", X, n_clusters=1)
    assert model.n_clusters_ == 1 and model.k_selection_.method == "given"


@pytest.mark.parametrize("profile,has", [
    (DataProfile(n=300, d=4, k=None), True),  # rule 9 decides: the exact graph re-asks
    (DataProfile(n=300, d=3, k=None), False),  # d < 4: a single cloud has cheap cuts
    (DataProfile(n=1000, d=20, k=None), False),  # rule 2 decides: the same estimate twice
    (DataProfile(n=6000, d=20, k=None), False),  # above rule 2's n: not bounded by it
    (DataProfile(n=1000, d=2, k=None, chunked=True), False),
    (DataProfile(n=1000, d=500, k=None, sparse=True, zero_fraction=0.99), False),
])
def test_the_table_adds_the_second_opinion_only_where_rule_2_is_bounded(profile, has):
    spec = auto_rule(profile)
    assert ("second_opinion" in spec) is has
    if has:
        second = spec["second_opinion"]
        assert second["graph"] == exact_spec(profile)["graph"]
        assert second["k_from"] == "parts" and second["scale"] == spec["scale"]
        assert second["summary"].startswith("auto: rule 12: ")


def test_a_spec_that_is_not_a_pipeline_is_refused_before_any_work(monkeypatch):
    import graphclust._ksecond as ksecond

    monkeypatch.setattr(ksecond, "fit_with_second_opinion",
                        lambda *a: pytest.fail("work started"))
    X = make_blobs(60, 2, centers=2, random_state=0)[0]
    base = {"graph": {"name": "knn"}, "solver": {"name": "spectral"},
            "rounding": {"name": "kmeans"}}
    bad = [({"graph": {"name": "knn"}}, "second_opinion.solver"),
           ({**base, "n_clusters": 2}, "second_opinion.n_clusters"),
           ({**base, "second_opinion": base}, "second_opinion.second_opinion"),
           ("knn", "second_opinion"),
           ({**base, "graph": {"name": "no-such-graph"}}, "second_opinion.graph")]
    for second, where in bad:
        with pytest.raises(SpecError, match=where.replace(".", r"\.")):
            gc.GraphClustering({**base, "second_opinion": second}).fit(X)


def test_a_users_spec_gets_its_second_opinion_too():
    """The key is the framework's, not auto's: a spec whose eigengap may only answer 1
    (``k_max = 1``) on three separated blobs is re-asked by its second opinion, which
    finds them; without it the fit stays at one cluster."""
    X, y = make_blobs(90, 2, centers=[(0, 0), (20, 0), (0, 20)], random_state=0)
    pipe = {"graph": {"name": "knn", "n_neighbors": 5}, "solver": {"name": "spectral"},
            "rounding": {"name": "kmeans"}, "k_from": "parts"}
    model, warned = _fit({**pipe, "k_max": 1, "second_opinion": pipe}, X)
    assert model.n_clusters_ == 3 and model.k_selection_.details["first"]["k"] == 1
    assert adjusted_rand_score(y, model.labels_) == 1.0
    assert NoClusterStructureWarning not in warned
    plain, _ = _fit({**pipe, "k_max": 1}, X)  # (k_max = 1: nothing to warn about)
    assert plain.n_clusters_ == 1 and not plain.k_selection_.structure


def test_the_runner_leaves_a_plan_without_second_opinion_alone():
    X = make_blobs(60, 2, centers=2, random_state=0)[0]
    est = gc.GraphClustering("ncut", n_clusters=2, random_state=0)
    from graphclust._plan import make_plan

    plan = make_plan(est, X)
    assert plan.second_opinion is None
    same, result = fit_with_second_opinion(est, plan)
    assert same is plan and result.labels.shape == (60,)
