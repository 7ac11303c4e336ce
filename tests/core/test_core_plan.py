"""One fit path: the plan checks, resolves and records the same way in memory and chunked,
for pipelines and ensembles (graphclust._plan, graphclust._executors)."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from sklearn.datasets import make_blobs

import graphclust as gc
from graphclust import GraphClustering
from graphclust._plan import FitParameters, make_plan
from graphclust._plugins import get_registry

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

pytestmark = pytest.mark.filterwarnings("ignore:anchors .*exceeds the number of samples")

BAD = {"n_clusters": 0, "random_state": "seed", "verbose": "loud", "n_jobs": 0,
       "overrides": ["scale"], "k_max": 0, "noise": "yes"}


@pytest.fixture(scope="module")
def blobs():
    X, _ = make_blobs(400, n_features=4, centers=3, random_state=0)
    return X


@pytest.fixture
def sync():
    with dask.config.set(scheduler="sync"):
        yield


@pytest.fixture
def ensemble_rule():
    """A rule preset that decides an ensemble, registered for one test."""
    registry = get_registry()
    saved = registry.snapshot()
    spec = {"summary": "two anchor members agree by tcut",
            "ensemble": {"members": ["anchor-spectral", "uspec"], "consensus": "tcut"}}
    registry.rules.add("test-ensemble-rule", lambda profile: dict(spec))
    yield "test-ensemble-rule"
    registry.restore(saved)


def test_every_estimator_parameter_is_declared_and_checked():
    names = {f.name for f in attrs.fields(FitParameters)}
    assert names == set(BAD)
    assert names <= set(GraphClustering().get_params(deep=False))
    for field in attrs.fields(FitParameters):  # declared as parts declare theirs
        assert field.metadata["doc"] and field.metadata["check"] is not None


@pytest.mark.parametrize("chunked", [False, True], ids=["in-memory", "chunked"])
def test_invalid_parameters_are_one_error_on_every_path(blobs, chunked, sync):
    X = da.from_array(blobs, chunks=100) if chunked else blobs
    with pytest.raises(gc.SpecError) as info:
        GraphClustering("uspec", **BAD).fit(X)
    assert sorted(p.loc for p in info.value.problems) == sorted(BAD)


@pytest.mark.parametrize("chunked", [False, True], ids=["in-memory", "chunked"])
def test_n_jobs_zero_is_refused_on_every_path(blobs, chunked, sync):
    X = da.from_array(blobs, chunks=100) if chunked else blobs
    with pytest.raises(gc.SpecError, match="n_jobs: must be None or a nonzero integer"):
        GraphClustering("uspec", n_clusters=3, n_jobs=0).fit(X)


def _exploding(X):
    def boom(block):
        raise RuntimeError("the data were read")

    return da.from_array(X, chunks=100).map_blocks(boom, dtype=X.dtype)


def test_a_spec_that_cannot_run_chunked_is_refused_before_the_data_are_read(blobs, sync):
    with pytest.raises(gc.SpecError, match="cannot run chunk-wise"):
        GraphClustering("ncut", n_clusters=3).fit(_exploding(blobs))


@pytest.mark.parametrize("chunked", [False, True], ids=["in-memory", "chunked"])
def test_a_rule_summary_reaches_resolved_spec_for_an_ensemble(blobs, chunked, sync,
                                                              ensemble_rule):
    X = da.from_array(blobs, chunks=100) if chunked else blobs
    model = GraphClustering(ensemble_rule, n_clusters=3, random_state=0).fit(X)
    assert model.resolved_spec_["summary"] == "two anchor members agree by tcut"
    assert [m["solver"]["name"] for m in model.resolved_spec_["ensemble"]["members"]] == \
        ["spectral", "tcut"]
    assert model.profile_ is not None and model.profile_.n == blobs.shape[0]


@pytest.mark.parametrize("chunked", [False, True], ids=["in-memory", "chunked"])
def test_fitted_attributes_are_recorded_alike(blobs, chunked, sync):
    X = da.from_array(blobs, chunks=100) if chunked else blobs
    model = GraphClustering("uspec", n_clusters=3, random_state=0)
    model.set_params(spec={"ensemble": {"members": ["uspec", "uspec"], "consensus": "tcut"}})
    model.fit(X)
    assert model.members_ and model.embedding_ is None and model.n_clusters_ == 3
    model.set_params(spec="uspec").fit(X)  # a pipeline refit leaves no ensemble behind
    assert not hasattr(model, "members_") and not hasattr(model, "memberships_")
    assert model.embedding_.shape == (blobs.shape[0], 3)
    assert model.resolved_spec_["seed"] == 0 and model.n_features_in_ == 4
    assert model.profile_ is None


def test_the_plan_is_made_once_and_holds_the_run(blobs):
    model = GraphClustering("uspec", n_clusters=3, random_state=7, overrides={"seed": 3})
    plan = make_plan(model, blobs)
    assert (plan.n_clusters, plan.seed, plan.ctx.seed) == (3, 7, 7)
    assert plan.X.dtype == np.float64 and plan.who == "preset 'uspec'"
    assert not plan.executor.chunked and plan.summary is None
    seeded = make_plan(GraphClustering("uspec", overrides={"seed": 3}), blobs)
    # the spec's seed; no k anywhere: estimated (None) within [1, k_max], by auto (uspec's
    # own estimator would be the eigengap): the plan says so and has run nothing
    assert seeded.seed == 3 and seeded.n_clusters is None and seeded.k_range == (1, 20)
    assert seeded.auto_k == (None,) and seeded.selection is None and seeded.timings == {}
    capped = make_plan(GraphClustering("uspec", k_max=7), blobs)
    assert capped.k_range == (1, 7) and capped.auto_k == (7,)
    own = make_plan(GraphClustering("uspec", overrides={"k_from": "parts"}), blobs)
    assert own.auto_k is None and own.n_clusters is None


def test_seeds_are_used_as_given_in_numpys_range():
    """``2**31 + s`` used to run exactly as ``s`` (a 31-bit mask, issue 30): seeds in
    [0, 2**32) are now used unchanged (those below 2**31 keep their labels), others are
    refused, from the estimator as from the spec."""
    import warnings

    from sklearn.datasets import make_blobs

    X, _ = make_blobs(200, 3, centers=3, random_state=0)

    def anchors(seed):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = gc.GraphClustering("anchor-spectral", n_clusters=3, random_state=seed,
                                       anchors={"name": "random", "n_anchors": 30}).fit(X)
        return model.anchors_.points

    for s in (0, 5, 2**31 - 1):
        assert not np.array_equal(anchors(s), anchors(2**31 + s))
    np.testing.assert_array_equal(anchors(2**32 - 1), anchors(2**32 - 1))
    for bad in (-1, 2**32, 2**64):
        with pytest.raises(gc.SpecError, match=r"random_state: must be an integer in \[0, "
                                                r"2\*\*32\)"):
            gc.GraphClustering("ncut", n_clusters=3, random_state=bad).fit(X)
    spec = {"graph": {"name": "knn"}, "solver": {"name": "spectral"},
            "rounding": {"name": "kmeans"}, "seed": 2**32}
    assert [p.loc for p in gc.validate_spec(spec)] == ["seed"]
