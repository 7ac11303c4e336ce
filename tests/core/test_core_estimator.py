"""The scikit-learn estimator over the built-in presets."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import graphclust as gc
from graphclust import GraphClustering, InputError, SpecError

PRESETS = gc.get_registry().presets.names()

# Checks that cannot hold for a whole family of presets, with the reason.
_PROBA_IS_NOT_A_CLASSIFIERS = (
    "scikit-learn's sparse-input check calls predict_proba whenever it exists and reads "
    "tags.classifier_tags (None for a clusterer) for the shape it expects (2 or 4 "
    "classes); a clusterer's predict_proba has n_clusters_ columns (docs/confidence.rst). "
    "The sparse fit and predict themselves pass; GaussianMixture never reaches this "
    "line only because it refuses sparse input")
EXPECTED_FAILED: dict[str, str] = {
    "check_estimator_sparse_array": _PROBA_IS_NOT_A_CLASSIFIERS,
    "check_estimator_sparse_matrix": _PROBA_IS_NOT_A_CLASSIFIERS,
}


def _expected_failed(estimator) -> dict[str, str]:
    """The sparse checks fail only where the preset fits sparse input (the others refuse
    it, which the check accepts) and offers ``predict_proba`` (a transductive preset has
    no ``predict``): asked of a small sparse fit, so an xfail cannot pass."""
    X = sp.random(40, 6, density=0.5, format="csr", random_state=0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = clone(estimator).fit(X)
    except (TypeError, ValueError):
        return {}
    return EXPECTED_FAILED if hasattr(fitted, "predict_proba") else {}


def _small_overrides(preset):
    """Keep estimator checks fast: few anchors/restarts where the preset has them."""
    registry = gc.get_registry()
    spec = registry.presets.get(preset)
    if "ensemble" in spec:  # at most 3 members, each with its own small overrides
        return {"ensemble": _small_ensemble(spec["ensemble"])}
    out = {}
    if "anchors" in spec:
        out["anchors"] = {"n_anchors": 16}
    solver_params = [f.name for f in registry.solvers.get(spec["solver"]["name"]).parameters()]
    if "max_iter" in solver_params:
        out["solver"] = {"max_iter": 50}
    return out


def _small_ensemble(section):
    members = []
    for entry in section["members"]:
        entry = {"preset": entry} if isinstance(entry, str) else dict(entry)
        entry["count"] = min(entry.get("count", 1), 3)
        if "preset" in entry:
            for sec, values in _small_overrides(entry["preset"]).items():
                entry[sec] = {**entry.get(sec, {}), **values}
        members.append(entry)
    return {**section, "members": members}


def _k_if_needed(preset: str) -> int | None:
    """None (estimated) where a part of the preset estimates k, else 3: the sample-aware
    presets' placement graph offers no estimate (docs/choosing-k.rst)."""
    from graphclust._kselect import estimating_stage

    pipe = gc.compose(preset)
    return None if not hasattr(pipe, "graph") or estimating_stage(pipe) else 3


@parametrize_with_checks(
    [GraphClustering(p, n_clusters=_k_if_needed(p), random_state=0,
                     overrides=_small_overrides(p) or None) for p in PRESETS],
    expected_failed_checks=_expected_failed,
)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.GraphClustWarning)
        check(estimator)


@pytest.fixture
def blobs4():
    X, y = make_blobs(n_samples=300, centers=4, n_features=6, cluster_std=0.8, random_state=1)
    return X, y


@pytest.mark.parametrize("preset", [  # ncer-anchor's two fits take 2.8 s: the slow tier's
    pytest.param(p, marks=pytest.mark.slow) if p == "ncer-anchor" else p for p in PRESETS])
def test_presets_are_deterministic_under_a_seed(preset, blobs4):
    X, _ = blobs4
    over = _small_overrides(preset)
    a = GraphClustering(preset, n_clusters=4, random_state=7, overrides=over).fit_predict(X)
    b = GraphClustering(preset, n_clusters=4, random_state=7, overrides=over).fit_predict(X)
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= set(range(4))


@pytest.mark.parametrize("preset", [p for p in ("ncut", "anchor-spectral") if p in PRESETS])
def test_common_presets_find_blobs(preset, blobs4):
    X, y = blobs4
    model = GraphClustering(preset, n_clusters=4, random_state=0,
                            overrides=_small_overrides(preset) or None,
                            metrics=[{"name": "acc"}, {"name": "nmi"}]).fit(X, y)
    assert model.scores_["acc"] > 0.95
    assert set(model.timings_) >= {"graph", "solver", "rounding", "total"}
    assert model.embedding_.shape[0] == X.shape[0]


def test_overrides_and_nested_params():
    est = GraphClustering("ncut", graph={"n_neighbors": 15})
    assert est.get_params()["graph__n_neighbors"] == 15
    est.set_params(graph__n_neighbors=7, solver__n_components=3)
    assert est.graph == {"n_neighbors": 7} and est.solver == {"n_components": 3}
    assert est.overrides is None
    assert clone(est).get_params()["graph__n_neighbors"] == 7
    with pytest.raises(ValueError, match="not a section"):
        est.set_params(bogus__x=1)
    with pytest.raises(ValueError, match="invalid parameter 'bogus'"):
        est.set_params(bogus=1)


def test_set_params_with_a_part_instance_takes_effect(blobs4):
    """A part instance given through set_params replaces the section (it used to be
    silently dropped), survives clone, and its own parameters are reachable."""
    from graphclust_plugins.common.rounding_argmax import ArgmaxRounding

    X, _ = blobs4
    solver = gc.get_registry().solvers.get("spectral")(n_components=3)
    est = GraphClustering("ncut", n_clusters=4, random_state=0).set_params(solver=solver)
    assert est.get_params()["solver__n_components"] == 3
    est.set_params(solver__n_components=4)
    assert est.solver is not solver and est.solver.n_components == 4 and solver.n_components == 3
    est.fit(X)
    assert est.pipeline_.solver.n_components == 4
    twin = clone(est)
    assert isinstance(twin.solver, type(solver)) and twin.solver.n_components == 4
    np.testing.assert_array_equal(twin.fit_predict(X), est.labels_)
    with pytest.raises(SpecError, match="rounding"):  # the composer checks instances too
        GraphClustering("ncut", n_clusters=4, rounding=ArgmaxRounding()).fit(X)


def test_section_given_by_name_replaces_the_part(blobs4):
    X, _ = blobs4
    est = GraphClustering("anchor-spectral", n_clusters=4, random_state=0,
                          anchors="random").fit(X)
    assert est.pipeline_.anchors.name == "random"


def test_check_estimator_passes_every_check():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.GraphClustWarning)
        check_estimator(GraphClustering("anchor-spectral", random_state=0,
                                        anchors={"n_anchors": 16}),
                        expected_failed_checks=EXPECTED_FAILED)


def test_grid_search_over_section_params(blobs4):
    from sklearn.model_selection import GridSearchCV
    from sklearn.metrics import adjusted_rand_score, make_scorer

    X, y = blobs4
    scorer = make_scorer(lambda yt, yp: adjusted_rand_score(yt, yp))

    class FitPredictScorer:
        def __call__(self, est, X, y):
            return adjusted_rand_score(y, est.fit_predict(X))

    search = GridSearchCV(GraphClustering("ncut", n_clusters=4, random_state=0),
                          {"graph__n_neighbors": [5, 10]}, cv=2, scoring=FitPredictScorer())
    search.fit(X, y)
    assert search.best_params_["graph__n_neighbors"] in (5, 10)
    del scorer


def test_inside_sklearn_pipeline(blobs4):
    X, y = blobs4
    pipe = make_pipeline(StandardScaler(), GraphClustering("ncut", n_clusters=4, random_state=0))
    labels = pipe.fit_predict(X)
    assert labels.shape == (300,)


@pytest.mark.parametrize("bad, match", [
    (np.array([[np.nan, 1.0], [1.0, 2.0], [3.0, 4.0]]), "NaN"),
    (np.array([[np.inf, 1.0], [1.0, 2.0], [3.0, 4.0]]), "infinity|inf"),
    (np.zeros((0, 3)), "0 sample|empty"),
    (np.arange(5.0), "2D|2-D"),
])
def test_bad_input_errors(bad, match):
    with pytest.raises(ValueError, match=match):
        GraphClustering("ncut", n_clusters=2).fit(bad)


def test_fewer_samples_than_clusters():
    with pytest.raises(InputError, match="fewer than n_clusters=5"):
        GraphClustering("ncut", n_clusters=5).fit(np.random.default_rng(0).random((4, 2)))


def test_unknown_preset_and_bad_override():
    with pytest.raises(gc.UnknownPartError, match="ncut"):
        GraphClustering("nctu").fit(np.random.default_rng(0).random((20, 2)))
    with pytest.raises(SpecError, match="graph.n_neighbours"):
        GraphClustering("ncut", graph={"n_neighbours": 3}).fit(np.ones((20, 2)))
    with pytest.raises(SpecError, match="n_clusters: must be an integer >= 1"):
        GraphClustering("ncut", n_clusters=0).fit(np.ones((20, 2)))


def test_precomputed_affinity_graph(blobs4):
    X, y = blobs4
    ref = GraphClustering("ncut", n_clusters=4, random_state=0).fit(X)
    A = ref.graph_.adjacency
    model = GraphClustering("ncut", n_clusters=4, random_state=0, graph=A).fit(X)
    np.testing.assert_array_equal(model.labels_, ref.labels_)
    with pytest.raises(InputError, match="rows"):
        GraphClustering("ncut", n_clusters=4, graph=A).fit(X[:10])


@pytest.mark.skipif("anchor-spectral" not in PRESETS, reason="common bundle not registered")
def test_user_given_anchors_and_predict(blobs4):
    X, y = blobs4
    anchors = X[::10]
    model = GraphClustering("anchor-spectral", n_clusters=4, random_state=0,
                            anchors=anchors).fit(X)
    np.testing.assert_array_equal(model.anchors_.points, anchors)
    # predicting the training points reproduces their labels (row-local placement)
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    Xn, _ = make_blobs(n_samples=50, centers=4, n_features=6, cluster_std=0.8, random_state=1)
    assert model.predict(Xn).shape == (50,)
    assert model.transform(Xn).shape[0] == 50


def test_predict_only_for_anchor_pipelines():
    assert not hasattr(GraphClustering("ncut"), "predict")


def test_pickle_round_trip(blobs4):
    X, _ = blobs4
    model = GraphClustering("ncut", n_clusters=4, random_state=0).fit(X)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.labels_, model.labels_)


def test_sparse_input(blobs4):
    X, _ = blobs4
    Xs = sp.csr_matrix(X)
    a = GraphClustering("ncut", n_clusters=4, random_state=0).fit_predict(Xs)
    b = GraphClustering("ncut", n_clusters=4, random_state=0).fit_predict(X)
    np.testing.assert_array_equal(a, b)


def test_verbose_progress_goes_to_stderr(blobs4, capsys):
    X, _ = blobs4
    GraphClustering("ncut", n_clusters=4, random_state=0, verbose=True).fit(X)
    err = capsys.readouterr().err
    assert "[graphclust] graph:knn" in err and "[graphclust] solver:spectral" in err
    GraphClustering("ncut", n_clusters=4, random_state=0).fit(X)
    assert capsys.readouterr().err == ""


def test_disconnected_graph_warns_once_only_when_it_matters(recwarn):
    X = np.vstack([np.zeros((10, 2)) + np.arange(10)[:, None] * 1e-3 + 100.0 * i
                   for i in range(3)])
    with pytest.warns(gc.DisconnectedGraphWarning,
                      match="3 connected components .*sizes 10, 10, 10.*n_clusters=2"):
        GraphClustering("ncut", n_clusters=2, random_state=0, graph={"n_neighbors": 3}).fit(X)
    recwarn.clear()
    # as many components as clusters: each blob is a cluster, nothing to say
    GraphClustering("ncut", n_clusters=3, random_state=0, graph={"n_neighbors": 3}).fit(X)
    assert not [w for w in recwarn if issubclass(w.category, gc.DisconnectedGraphWarning)]


def test_small_integer_input_is_computed_in_float32_without_loss(monkeypatch):
    """uint8/int16 data (pixels, counts) are exact in float32, so the estimator keeps
    them in float32 (half the memory of float64); wider integers become float64."""
    from graphclust import check_input, float_dtype

    rng = np.random.default_rng(0)
    X8 = rng.integers(0, 256, size=(120, 6)).astype(np.uint8)
    assert check_input(X8).dtype == np.float32
    np.testing.assert_array_equal(check_input(X8), X8)
    assert check_input(X8.astype(np.int16)).dtype == np.float32
    assert check_input(X8.astype(np.int64)).dtype == np.float64
    assert check_input(X8.astype(np.float64)).dtype == np.float64
    assert float_dtype(np.bool_) == np.float32 and float_dtype(np.uint32) == np.float64
    seen = {}
    import graphclust._executors as executors

    def spy(estimator, X, *, reset):
        out = validate_rows(estimator, X, reset=reset)
        seen["dtype"] = out.dtype
        return out

    validate_rows = executors.validate_rows
    monkeypatch.setattr(executors, "validate_rows", spy)
    est = GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                          anchors={"n_anchors": 20}).fit(X8)
    assert seen["dtype"] == np.float32 and est.labels_.shape == (120,)
    GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                    anchors={"n_anchors": 20}).fit(X8.astype(np.int32))
    assert seen["dtype"] == np.float64
