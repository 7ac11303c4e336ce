"""auto through the estimator and the command line: default, determinism, resolved spec."""

import json
import warnings

import graphclust as gc
import numpy as np
import pytest
from graphclust import GraphClustering, SpecError
from graphclust.cli import main
from graphclust_plugins.auto import _rules_base, _rules_low_dim, _rules_spectral, rule_auto
from sklearn.datasets import make_blobs, make_moons


@pytest.fixture
def blobs():
    # 20 features (> LOW_DIM): rules 2-5 decide, as before auto v2
    X, y = make_blobs(n_samples=240, centers=4, n_features=20, cluster_std=1.0, random_state=3)
    return X, y


@pytest.fixture
def anchored(monkeypatch):
    """Push small data above the exact budget, so auto takes its anchor branch."""
    monkeypatch.setattr(_rules_base, "EXACT_BUDGET", 1e3)
    monkeypatch.setattr(_rules_spectral, "MIN_ANCHORS", 40)


def test_estimator_default_is_auto():
    assert GraphClustering().spec == "auto"
    assert GraphClustering().get_params()["spec"] == "auto"


def test_auto_fits_and_records_its_decision(blobs):
    X, y = blobs
    model = GraphClustering(n_clusters=4, random_state=0).fit(X)
    assert model.profile_.n == 240 and model.profile_.k == 4
    spec = model.resolved_spec_
    assert spec["graph"]["name"] == "knn" and spec["scale"] == "none"
    assert spec["summary"].startswith("auto: rule 2: n = 240 <= 5000")
    assert (model.labels_ >= 0).all() and len(set(model.labels_)) == 4
    assert not hasattr(model, "predict")  # the exact kNN graph places no new points


def test_auto_is_deterministic_for_a_seed(blobs):
    X, _ = blobs
    a = GraphClustering(n_clusters=4, random_state=5).fit_predict(X)
    b = GraphClustering(n_clusters=4, random_state=5).fit_predict(X)
    np.testing.assert_array_equal(a, b)


def test_auto_anchor_branch_is_deterministic_and_predicts(blobs, anchored):
    X, y = blobs
    a = GraphClustering(n_clusters=4, random_state=2).fit(X)
    b = GraphClustering(n_clusters=4, random_state=2).fit(X)
    assert a.resolved_spec_["anchors"]["name"] == "kmeans"
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert hasattr(a, "predict")
    np.testing.assert_array_equal(a.predict(X[:50]), a.labels_[:50])


def test_auto_sampled_anchor_branch_predicts(blobs, anchored, monkeypatch):
    monkeypatch.setattr(_rules_spectral, "SAMPLED_ANCHORS_N", 100)
    X, _ = blobs
    model = GraphClustering(n_clusters=4, random_state=0).fit(X)
    assert model.resolved_spec_["anchors"]["name"] == "hybrid"
    assert model.predict(X[:20]).shape == (20,)


def test_resolved_spec_refits_to_the_same_labels(blobs):
    X, _ = blobs
    model = GraphClustering(n_clusters=4, random_state=1).fit(X)
    assert gc.validate_spec(model.resolved_spec_) == []
    twin = GraphClustering(model.resolved_spec_).fit(X)
    np.testing.assert_array_equal(twin.labels_, model.labels_)


def test_overrides_merge_into_the_decision(blobs):
    X, _ = blobs
    model = GraphClustering(n_clusters=4, random_state=0, graph={"n_neighbors": 7},
                            overrides={"scale": "minmax"}).fit(X)
    assert model.resolved_spec_["graph"]["n_neighbors"] == 7
    assert model.resolved_spec_["graph"]["weight"] == "binary"
    assert model.resolved_spec_["scale"] == "minmax"


def test_units_rule_on_data(blobs):
    X, _ = blobs
    X = X * np.r_[np.ones(X.shape[1] - 5), np.full(5, 1000.0)]  # beyond the 10 % trim
    model = GraphClustering(n_clusters=4, random_state=0).fit(X)
    assert model.resolved_spec_["scale"] == "standard"


def test_auto_finds_moons():
    X, y = make_moons(600, noise=0.06, random_state=0)
    from sklearn.metrics import adjusted_rand_score

    labels = GraphClustering(n_clusters=2, random_state=0).fit_predict(X)
    assert adjusted_rand_score(y, labels) > 0.95


def test_auto_anchor_branch_finds_separated_blobs_of_unequal_size(monkeypatch):
    """Above the exact size, well-separated blobs of sizes 1:2:4:8:16 make the anchor
    graph fall apart into components; the anchor rule keeps every component's direction
    (``drop_trivial = "connected"``) instead of splitting the largest blob. (Rule 8's
    diagnostics, which take the density tree here, are switched off to reach rule 3;
    the density tree finds the blobs too.)"""
    from sklearn.metrics import adjusted_rand_score

    sizes = [200, 400, 800, 1600, 3200]
    centres = [[-6, 6], [6, 6], [0, 0], [-6, -6], [6, -6]]
    X, y = make_blobs(sizes, centers=centres, cluster_std=[0.3, 0.6, 0.9, 1.2, 1.5],
                      random_state=16)
    chosen = GraphClustering(n_clusters=5, random_state=0).fit(X)
    assert adjusted_rand_score(y, chosen.labels_) > 0.99
    monkeypatch.setattr(_rules_low_dim, "low_dim_diagnostics", lambda p, scale: None)
    est = GraphClustering(n_clusters=5, random_state=0).fit(X)
    assert est.resolved_spec_["graph"]["name"] == "gaussian-anchor"
    assert adjusted_rand_score(y, est.labels_) > 0.99


def test_auto_small_high_dimensional_takes_the_principal_component_graph():
    """Dense d > 50 at small n: rule 4 with an exact search on the 50 components, the
    same labels for the same seed, and the digits separated (ARI well above k-means')."""
    from sklearn.datasets import load_digits
    from sklearn.metrics import adjusted_rand_score

    X, y = load_digits(return_X_y=True)
    X, y = X[:600], y[:600]
    first = GraphClustering(n_clusters=10, random_state=0).fit(X)
    graph = first.resolved_spec_["graph"]
    assert graph["pca_components"] == rule_auto.PCA_COMPONENTS and graph["method"] == "exact"
    again = GraphClustering(n_clusters=10, random_state=0).fit(X)
    np.testing.assert_array_equal(first.labels_, again.labels_)
    assert adjusted_rand_score(y, first.labels_) > 0.75


def test_auto_without_data_says_it_needs_data():
    with pytest.raises(SpecError, match="rule over the data"):
        gc.compose("auto")
    assert gc.validate_spec("auto") == []


def test_auto_nan_is_reported_as_bad_input(blobs):
    X, _ = blobs
    X = X.copy()
    X[3, 2] = np.nan
    with pytest.raises(gc.InputError):
        GraphClustering(n_clusters=4).fit(X)


def test_rule_preset_names_clash_with_presets():
    reg = gc.Registry()
    reg.presets.add("x", {"graph": {"name": "knn"}})
    with pytest.raises(ValueError, match="collision"):
        reg.rules.add("x", lambda p: {})
    reg.rules.add("y", lambda p: {})
    with pytest.raises(ValueError, match="collision"):
        reg.presets.add("y", {})


def test_check_estimator_passes_with_the_default_spec():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gc.GraphClustWarning)
        check_estimator(GraphClustering(random_state=0))


# -- command line -------------------------------------------------------------------------
def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_fill_auto_for_a_dataset_round_trips(capsys, tmp_path):
    code, out, err = run(capsys, "fill", "auto", "--dataset", "wine")
    assert code == 0 and "n_clusters" not in out, err
    assert out.startswith("# auto for wine: n = 178, d = 13, k = estimated at fit")
    code, out, err = run(capsys, "fill", "auto", "--dataset", "wine", "--n-clusters", "3")
    assert code == 0, err
    assert out.startswith("# auto for wine: n = 178, d = 13, k = 3")
    path = tmp_path / "wine.toml"
    path.write_text(out)
    code, vout, _ = run(capsys, "validate", str(path))
    assert code == 0 and "valid" in vout
    from sklearn.datasets import load_wine

    X, _ = load_wine(return_X_y=True)
    a = GraphClustering(str(path), random_state=0).fit_predict(X)
    b = GraphClustering(n_clusters=3, random_state=0).fit_predict(X)
    np.testing.assert_array_equal(a, b)


def test_fill_auto_json_and_n_clusters(capsys):
    code, out, _ = run(capsys, "fill", "auto", "--dataset", "iris", "--n-clusters", "5",
                       "--json")
    spec = json.loads(out)
    assert code == 0 and spec["n_clusters"] == 5 and spec["scale"] == "none"


def test_fill_auto_needs_a_dataset(capsys):
    code, _, err = run(capsys, "fill", "auto")
    assert code == 2 and "--dataset" in err
    code, _, err = run(capsys, "fill", "ncut", "--dataset", "iris")
    assert code == 2 and "rule presets" in err


def test_describe_auto_prints_the_rules(capsys):
    code, out, _ = run(capsys, "describe", "auto")
    assert code == 0 and "rule preset auto" in out and "n²·d <=" in out
    code, out, _ = run(capsys, "describe", "auto", "--json")
    assert json.loads(out)["rule_preset"] == "auto"


def test_run_defaults_to_auto(capsys):
    code, out, err = run(capsys, "run", "--dataset", "iris", "--quiet", "--json")
    assert code == 0, err
    result = json.loads(out)
    # no k: iris (150 rows in 4-d, fewer than rule 9's density estimate needs) is
    # estimated by the eigengap of its kNN graph; the JSON carries the estimate
    assert result["spec"] == "auto" and result["n_clusters"] == 3
    assert result["k_selection"]["method"] == "eigengap"
    assert result["k_selection"]["k"] == result["n_clusters"]
    assert result["resolved_spec"]["summary"].startswith("auto:")


def test_plugins_lists_auto(capsys):
    code, out, _ = run(capsys, "plugins")
    assert code == 0 and "auto (rule)" in out


def test_auto_on_dask_input_runs_chunkwise(blobs):
    da = pytest.importorskip("dask.array", reason="dask is not installed")
    X, y = blobs
    from sklearn.metrics import adjusted_rand_score

    model = GraphClustering(n_clusters=4, random_state=0).fit(da.from_array(X, chunks=80))
    assert model.profile_.chunked and model.profile_.n == X.shape[0]
    assert model.resolved_spec_["anchors"]["name"] == "hybrid"
    assert adjusted_rand_score(y, np.asarray(model.labels_.compute())) > 0.9


def test_auto_scores_the_default_metrics_like_a_preset():
    """A rule preset's decision carries the metrics a spec without ``metrics`` gets
    (graphclust._composer.DEFAULT_METRICS, the presets' acc and nmi)."""
    from graphclust._composer import DEFAULT_METRICS
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    model = GraphClustering("auto", n_clusters=10, random_state=0).fit(X, y)
    assert set(model.scores_) == set(DEFAULT_METRICS)
    assert model.scores_["acc"] > 0.5
    assert [m["name"] for m in model.resolved_spec_["metrics"]] == list(DEFAULT_METRICS)
    assert GraphClustering("auto", n_clusters=10, random_state=0).fit(X).scores_ == {}
