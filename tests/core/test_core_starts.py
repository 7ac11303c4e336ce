"""A spec's ``starts``: whole runs from the seeds ``ctx.child("start{r}")``, the labels of
highest modularity on their own graph kept — checked against plain fits at those seeds."""

import numpy as np
import pytest
from sklearn.datasets import load_digits

import graphclust
from graphclust import Context

USPEC_LIKE = {"anchors": {"name": "hybrid", "n_anchors": 200, "candidate_factor": 10},
              "graph": {"name": "knr-bipartite", "n_neighbors": 5},
              "solver": {"name": "tcut"},
              "rounding": {"name": "kmeans", "n_init": 3}}
KNN = {"graph": {"name": "knn", "n_neighbors": 10}, "solver": {"name": "spectral"},
       "rounding": {"name": "kmeans", "n_init": 1, "init": "random"}}


@pytest.fixture(scope="module")
def digits():
    X, _ = load_digits(return_X_y=True)
    return X[:900]


@pytest.mark.parametrize("base", [USPEC_LIKE, KNN], ids=["anchor-graph", "affinity-graph"])
@pytest.mark.parametrize("seed", [0, 5])
def test_the_kept_start_is_the_most_modular_plain_fit(digits, base, seed):
    est = graphclust.GraphClustering({**base, "starts": 3}, n_clusters=10,
                                     random_state=seed).fit(digits)
    # start 0 runs at the fit's seed, start r at the child seed "start{r}"
    seeds = [seed] + [Context(seed).seed_for(f"start{r}") for r in (1, 2)]
    plain = [graphclust.GraphClustering(base, n_clusters=10, random_state=s).fit(digits)
             for s in seeds]
    scores = [graphclust.modularity(p.graph_, p.labels_) for p in plain]
    np.testing.assert_allclose(est.result_.start_modularity, scores, rtol=1e-12)
    best = int(np.argmax(scores))
    assert est.result_.start == best
    np.testing.assert_array_equal(est.labels_, plain[best].labels_)
    assert est.resolved_spec_["starts"] == 3
    # the kept start's fitted parts are the estimator's: it places new points as the
    # plain fit at that start's seed does
    if base is USPEC_LIKE:
        np.testing.assert_array_equal(est.predict(digits[::7]), plain[best].predict(digits[::7]))
    # the resolved spec runs again to the same labels
    again = graphclust.GraphClustering(est.resolved_spec_).fit(digits)
    np.testing.assert_array_equal(again.labels_, est.labels_)


def test_one_start_is_the_plain_run(digits):
    a = graphclust.GraphClustering({**USPEC_LIKE, "starts": 1}, n_clusters=10,
                                   random_state=3).fit(digits)
    b = graphclust.GraphClustering(USPEC_LIKE, n_clusters=10, random_state=3).fit(digits)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.result_.start_modularity == () and "starts" not in a.resolved_spec_


def test_k_estimated_per_start(digits):
    est = graphclust.GraphClustering({**KNN, "starts": 2}, random_state=0).fit(digits)
    assert len(est.result_.start_modularity) == 2
    assert est.n_clusters_ == len(np.unique(est.labels_))


@pytest.mark.parametrize("bad", [0, 101, 2.5, True, "3"])
def test_starts_is_bounded_before_any_work(bad):
    with pytest.raises(graphclust.SpecError, match="starts"):
        graphclust.compose({**USPEC_LIKE, "starts": bad})


def test_an_ensemble_takes_starts_per_member(digits):
    with pytest.raises(graphclust.SpecError, match="member its own 'starts'"):
        graphclust.compose({"starts": 2, "ensemble": {"members": ["uspec"],
                                                      "consensus": {"name": "tcut"}}})
    spec = {"ensemble": {"members": [{**USPEC_LIKE, "starts": 2}, {**USPEC_LIKE}],
                         "consensus": {"name": "tcut"}}}
    est = graphclust.GraphClustering(spec, n_clusters=10, random_state=0).fit(digits)
    assert [len(m.start_modularity) for m in est.members_] == [2, 0]


def test_a_cause_every_start_meets_warns_once(digits):
    import warnings

    spec = {**USPEC_LIKE, "anchors": {**USPEC_LIKE["anchors"], "n_anchors": 100},
            "starts": 3}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        graphclust.GraphClustering(spec, n_clusters=3, random_state=0).fit(digits[:60])
    exceeds = [w for w in caught if "exceeds the number of samples" in str(w.message)]
    assert len(exceeds) == 1, [str(w.message) for w in caught]
