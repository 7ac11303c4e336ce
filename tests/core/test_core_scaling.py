"""The ``scale`` preprocessing stage: numerics against scikit-learn's scalers, hypothesis
properties, the spec key and its errors, pipelines, ensembles and the estimator."""

import json

import graphclust as gc
import numpy as np
import pytest
from graphclust import GraphClustering, SpecError
from graphclust.cli import main as cli_main
from graphclust.numerics import SCALE_KINDS, ColumnStats, Scaling, fit_scaling
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.datasets import make_blobs
from sklearn.preprocessing import MinMaxScaler, Normalizer, StandardScaler

from conftest import RowKMeans

DTYPES = (np.float64, np.float32)
TOL = {np.float64: 1e-10, np.float32: 2e-5}


def dense(seed=0, n=120, d=6, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 50, size=d) + rng.uniform(-100, 100, size=d)
    return X.astype(dtype)


def reference(kind, X):
    """scikit-learn's scalers (and a plain mean subtraction for ``center``), in float64."""
    X64 = X.astype(np.float64)
    if kind == "standard":
        return StandardScaler().fit_transform(X64)
    if kind == "minmax":
        return MinMaxScaler().fit_transform(X64)
    if kind == "l2":
        return Normalizer(norm="l2").fit_transform(X64)
    if kind == "center":
        return X64 - X64.mean(axis=0)
    return X64


# -- numerics against scikit-learn -------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", SCALE_KINDS)
def test_kind_matches_sklearn(kind, dtype):
    X = dense(dtype=dtype)
    Xt = fit_scaling(X, kind).transform(X)
    assert Xt.dtype == dtype
    scale = np.abs(reference(kind, X)).max() + 1
    np.testing.assert_allclose(Xt, reference(kind, X), atol=TOL[dtype] * scale * 10,
                               rtol=TOL[dtype] * 10)


@pytest.mark.parametrize("kind", ("standard", "minmax", "center"))
def test_new_rows_use_the_training_statistics(kind):
    X, X_new = dense(0), dense(1, n=17)
    ref = {"standard": StandardScaler, "minmax": MinMaxScaler}.get(kind)
    got = fit_scaling(X, kind).transform(X_new)
    want = ref().fit(X).transform(X_new) if ref else X_new - X.mean(axis=0)
    np.testing.assert_allclose(got, want, atol=1e-10)


def test_minmax_maps_training_data_to_unit_interval():
    Xt = fit_scaling(dense(3), "minmax").transform(dense(3))
    assert Xt.min() == pytest.approx(0, abs=1e-12) and Xt.max() == pytest.approx(1)
    np.testing.assert_allclose(Xt.min(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(Xt.max(axis=0), 1, atol=1e-12)


@pytest.mark.parametrize("kind", ("center", "standard", "minmax"))
def test_constant_column_gets_scale_one(kind):
    X = dense(2)
    X[:, 2] = 7.25
    s = fit_scaling(X, kind)
    assert s.scale[2] == 1.0
    Xt = s.transform(X)
    assert np.all(np.isfinite(Xt)) and np.all(Xt[:, 2] == 0)


def test_single_row_and_zero_rows():
    one = np.array([[1.0, -2.0, 3.0]])
    for kind in SCALE_KINDS:
        out = fit_scaling(one, kind).transform(one)
        assert np.all(np.isfinite(out))
    X = dense(4)
    X[5] = 0
    out = fit_scaling(X, "l2").transform(X)
    assert np.all(out[5] == 0)
    np.testing.assert_allclose(np.linalg.norm(np.delete(out, 5, axis=0), axis=1), 1)


def test_none_is_identity_and_bad_calls_raise():
    X = dense()
    assert fit_scaling(X, "none").transform(X) is not None
    np.testing.assert_array_equal(fit_scaling(X, "none").transform(X), X)
    assert Scaling("none").is_identity
    with pytest.raises(ValueError, match="scale must be one of"):
        fit_scaling(X, "auto")
    with pytest.raises(ValueError, match="fitted on 6 columns"):
        fit_scaling(X, "standard").transform(X[:, :3])
    with pytest.raises(ValueError, match="block_size"):
        fit_scaling(X, "standard", block_size=0)


def test_integer_input_follows_the_dtype_rule():
    X = np.random.default_rng(0).integers(0, 255, size=(50, 4)).astype(np.uint8)
    assert fit_scaling(X, "standard").transform(X).dtype == np.float32
    Xi = X.astype(np.int64)
    assert fit_scaling(Xi, "minmax").transform(Xi).dtype == np.float64


# -- hypothesis properties -----------------------------------------------------------------
finite = st.floats(-1e4, 1e4, allow_nan=False, allow_infinity=False, width=64)
matrices = hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1,
                                                   max_side=30), elements=finite)


@settings(max_examples=60, deadline=None)
@given(X=matrices, block=st.integers(1, 40), kind=st.sampled_from(("center", "standard",
                                                                  "minmax")))
def test_blocked_fit_equals_one_shot_fit(X, block, kind):
    a = fit_scaling(X, kind)
    b = fit_scaling(X, kind, block_size=block)
    span = np.abs(X).max() + 1
    np.testing.assert_allclose(a.offset, b.offset, rtol=1e-9, atol=1e-9 * span)
    np.testing.assert_allclose(a.scale, b.scale, rtol=1e-7, atol=1e-7 * span)


@settings(max_examples=60, deadline=None)
@given(X=matrices, block=st.integers(1, 40))
def test_merged_stats_match_numpy(X, block):
    stats = None
    for i in range(0, X.shape[0], block):
        part = ColumnStats.of_block(X[i:i + block])
        stats = part if stats is None else stats.merge(part)
    span = np.abs(X).max() + 1
    assert stats.n == X.shape[0]
    np.testing.assert_allclose(stats.mean, X.mean(axis=0), atol=1e-9 * span)
    np.testing.assert_allclose(stats.std, X.std(axis=0), atol=1e-6 * span)
    np.testing.assert_array_equal(stats.min, X.min(axis=0))
    np.testing.assert_array_equal(stats.max, X.max(axis=0))


@settings(max_examples=60, deadline=None)
@given(X=matrices, kind=st.sampled_from(SCALE_KINDS))
def test_constant_columns_stay_finite(X, kind):
    X = X.copy()
    X[:, 0] = X[0, 0]
    Xt = fit_scaling(X, kind).transform(X)
    assert np.all(np.isfinite(Xt))
    if kind in ("center", "standard", "minmax"):
        assert np.all(Xt[:, 0] == 0)


@settings(max_examples=60, deadline=None)
@given(X=matrices, kind=st.sampled_from(SCALE_KINDS))
def test_refitting_on_scaled_data_changes_nothing(X, kind):
    """Scaling the scaled training data again is the identity (up to rounding) for every
    kind: centred data have mean 0, standardised ones mean 0 and std 1 (or a constant
    column), min-max ones span [0, 1], unit rows keep unit length."""
    once = fit_scaling(X, kind).transform(X)
    twice = fit_scaling(once, kind).transform(once)
    np.testing.assert_allclose(twice, once, atol=1e-6 * (np.abs(once).max() + 1))


# -- the spec key --------------------------------------------------------------------------
def problems(spec):
    return [(p.loc, p.msg) for p in gc.validate_spec(spec)]


def test_spec_default_is_none_and_values_parse():
    assert gc.compose("anchor-spectral").scale == "none"
    for kind in SCALE_KINDS:
        spec = {**gc.get_registry().presets.get("anchor-spectral"), "scale": kind}
        assert gc.compose(spec).scale == kind


@pytest.mark.parametrize("bad, hint", [("standart", "did you mean 'standard'"),
                                        ("auto", "Allowed"), (1, "must be a string")])
def test_bad_scale_is_a_spec_error_with_its_path(bad, hint):
    spec = {**gc.get_registry().presets.get("anchor-spectral"), "scale": bad}
    with pytest.raises(SpecError) as info:
        gc.compose(spec)
    [(loc, msg)] = [(p.loc, p.msg) for p in info.value.problems]
    assert loc == "scale" and hint in msg and "'minmax'" in msg


def test_ensemble_members_may_not_set_scale():
    spec = {"scale": "standard", "ensemble": {
        "members": ["anchor-spectral", {"preset": "anchor-spectral", "scale": "l2"}],
        "consensus": "tcut"}}
    assert [loc for loc, _ in problems(spec)] == ["ensemble.members[1].scale"]
    bad = {"ensemble": {"members": ["anchor-spectral"], "consensus": "tcut"},
           "scale": "minimax"}
    assert [loc for loc, _ in problems(bad)] == ["scale"]


def test_nested_pipeline_may_not_set_scale():
    from graphclust._spec import parse_spec

    _, found = parse_spec({"solver": {"name": "x"}, "rounding": {"name": "y"},
                           "scale": "l2"}, nested=True)
    assert [p.loc for p in found] == ["scale"]


# -- pipelines and the estimator -----------------------------------------------------------
@pytest.fixture(scope="module")
def offset_blobs():
    X, y = make_blobs(n_samples=300, centers=3, n_features=5, cluster_std=1.0,
                      random_state=0)
    return X * np.array([1, 10, 0.1, 5, 1]) + 1000.0, y


SMALL = {"anchors": {"n_anchors": 60}}


@pytest.mark.parametrize("kind", ("standard", "minmax", "l2", "center"))
def test_predict_on_training_points_equals_fit_labels(offset_blobs, kind):
    X, _ = offset_blobs
    model = GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                            overrides={"scale": kind, **SMALL}).fit(X)
    assert model.scaling_.kind == kind
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    assert model.resolved_spec_["scale"] == kind
    assert "scale" in model.timings_
    # the graph was built on the scaled data, and the anchors live there too
    scaled = model.scaling_.transform(X)
    assert model.anchors_.points.shape[1] == X.shape[1]
    assert np.abs(model.anchors_.points).max() <= np.abs(scaled).max() + 1e-9


def test_scale_none_adds_no_stage_and_matches_default(offset_blobs):
    X, _ = offset_blobs
    a = GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                        overrides=SMALL).fit(X)
    b = GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                        overrides={"scale": "none", **SMALL}).fit(X)
    assert "scale" not in a.timings_ and a.scaling_.is_identity
    assert a.resolved_spec_["scale"] == "none"
    np.testing.assert_array_equal(a.labels_, b.labels_)


def test_standard_equals_prescaled_data(offset_blobs):
    """scale="standard" gives the labels of the same spec on StandardScaler's output."""
    X, _ = offset_blobs
    a = GraphClustering("anchor-spectral", n_clusters=3, random_state=1,
                        overrides={"scale": "standard", **SMALL}).fit(X)
    b = GraphClustering("anchor-spectral", n_clusters=3, random_state=1,
                        overrides=SMALL).fit(StandardScaler().fit_transform(X))
    np.testing.assert_array_equal(a.labels_, b.labels_)
    X_new = X[:25] + 0.3
    np.testing.assert_array_equal(a.predict(X_new),
                                  b.predict(StandardScaler().fit(X).transform(X_new)))


def test_resolved_spec_round_trips(offset_blobs):
    X, _ = offset_blobs
    model = GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                            overrides={"scale": "minmax", **SMALL}).fit(X)
    again = GraphClustering(model.resolved_spec_).fit(X)
    assert again.scaling_.kind == "minmax"
    np.testing.assert_array_equal(again.labels_, model.labels_)


def test_float32_stays_float32(offset_blobs):
    X = offset_blobs[0].astype(np.float32)
    model = GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                            overrides={"scale": "standard", **SMALL}).fit(X)
    assert model.anchors_.points.dtype == np.float32
    np.testing.assert_array_equal(model.predict(X), model.labels_)


def test_progress_reports_a_scale_stage(offset_blobs):
    from graphclust._parts import Context
    from graphclust._progress import Progress

    events = []
    from graphclust._spec import merge_overrides

    base = merge_overrides(gc.get_registry().presets.get("anchor-spectral"), SMALL)
    pipe = gc.compose({**base, "scale": "standard"})
    pipe.run(offset_blobs[0], n_clusters=3, ctx=Context(0, Progress(events.append)))
    assert "scale" in [e.stage for e in events]
    quiet = gc.compose(base)
    events.clear()
    quiet.run(offset_blobs[0], n_clusters=3, ctx=Context(0, Progress(events.append)))
    assert "scale" not in [e.stage for e in events]


def test_given_anchors_are_scaled_with_the_data(offset_blobs):
    X, _ = offset_blobs
    given = X[::10]
    model = GraphClustering("anchor-spectral", n_clusters=3, random_state=0, anchors=given,
                            overrides={"scale": "standard"}).fit(X)
    np.testing.assert_allclose(model.anchors_.points, model.scaling_.transform(given))


# -- ensembles -----------------------------------------------------------------------------
@pytest.fixture
def registry():
    reg = gc.get_registry()
    snap = reg.snapshot()
    reg.consensus.add(RowKMeans)
    yield reg
    reg.restore(snap)


def ensemble_spec(scale):
    return {"n_clusters": 3, "scale": scale, "ensemble": {
        "members": [{"preset": "anchor-spectral", "count": 2, "n_clusters": 3, **SMALL}],
        "consensus": "rows-kmeans"}}


def test_ensemble_scales_once_and_predicts(registry, offset_blobs):
    X, _ = offset_blobs
    model = GraphClustering(ensemble_spec("standard"), random_state=0).fit(X)
    assert model.scaling_.kind == "standard" and "scale" in model.timings_
    assert model.resolved_spec_["scale"] == "standard"
    assert all("scale" not in m for m in model.resolved_spec_["ensemble"]["members"])
    # members saw the scaled data: their anchors live in the standardised space
    scaled = model.scaling_.transform(X)
    for res in model.members_:
        assert res.scaling.is_identity
        assert np.abs(res.anchors.points).max() <= np.abs(scaled).max() + 1e-9
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    plain = GraphClustering(ensemble_spec("none"), random_state=0).fit(scaled)
    np.testing.assert_array_equal(plain.labels_, model.labels_)


def test_ensemble_member_preset_with_scale_is_reported(registry):
    reg = registry
    reg.presets.add("scaled-anchor-spectral",
                    {**reg.presets.get("anchor-spectral"), "scale": "l2"})
    spec = {"ensemble": {"members": ["scaled-anchor-spectral"], "consensus": "tcut"}}
    found = [p for p in gc.validate_spec(spec, reg)]
    assert [p.loc for p in found] == ["ensemble.members[0].scale"]
    assert "'l2'" in found[0].msg


# -- the command line ----------------------------------------------------------------------
def test_fill_writes_scale(capsys, tmp_path):
    assert cli_main(["fill", "anchor-spectral", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["scale"] == "none"
    path = tmp_path / "s.json"
    spec = {**gc.get_registry().presets.get("anchor-spectral"), "scale": "minmax"}
    path.write_text(json.dumps(spec))
    assert cli_main(["fill", str(path)]) == 0
    assert 'scale = "minmax"' in capsys.readouterr().out


def test_scaling_rescues_data_whose_ranges_underflow():
    """Without a scale stage, tiny ranges beside a column of ones are an InputError
    (squared distances underflow; data merely scaled are fitted in power-of-two units,
    issue 46 C4); with scale="standard" the parts see unit ranges and the fit works."""
    X, _ = make_blobs(n_samples=120, centers=3, n_features=3, random_state=0)
    X = np.hstack([X, np.ones((120, 1))])
    tiny = X * np.array([1e-170, 1e-170, 1e-170, 1.0])
    with pytest.raises(gc.InputError, match="underflow"):
        GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                        overrides=SMALL).fit(tiny)
    a = GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                        overrides={"scale": "standard", **SMALL}).fit(tiny)
    b = GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                        overrides={"scale": "standard", **SMALL}).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)


@pytest.mark.parametrize("factor", (1e-170, 1e170))
def test_standard_handles_extreme_ranges(factor):
    X = dense(5)
    got = fit_scaling(X * factor, "standard", block_size=7).transform(X * factor)
    np.testing.assert_allclose(got, StandardScaler().fit_transform(X), atol=1e-9)


def test_cli_run_with_set_scale(capsys):
    code = cli_main(["run", "--preset", "anchor-spectral", "--dataset", "iris", "--json",
                     "--quiet", "--set", "scale=minmax", "--set", "anchors.n_anchors=50",
                     "--n-clusters", "3"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["resolved_spec"]["scale"] == "minmax"
    code = cli_main(["run", "--preset", "anchor-spectral", "--dataset", "iris", "--quiet",
                     "--set", "scale=minmix"])
    assert code != 0 and "did you mean 'minmax'" in capsys.readouterr().err
