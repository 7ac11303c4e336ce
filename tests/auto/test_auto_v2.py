"""auto v2: the family rules that read the profile's sample (rule 8) and the summary."""

from __future__ import annotations

import attrs
import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

import graphclust as gc
from graphclust import GraphClustering, profile_data
from graphclust_plugins.auto import _rules_low_dim, rule_auto
from graphclust_plugins.auto.rule_auto import LOW_DIM, MIXTURE_GAIN, auto_rule


def _aniso(n=900, seed=0):
    rng = np.random.default_rng(seed)
    covs = [np.array([[6.0, 2.9], [2.9, 1.5]]), np.array([[1.5, -1.2], [-1.2, 1.2]]),
            np.array([[0.3, 0.0], [0.0, 0.3]])]
    X = np.vstack([rng.multivariate_normal(c, S, n // 3)
                   for c, S in zip([(0.0, 0.0), (2.5, 1.0), (0.5, 3.0)], covs)])
    return X, np.repeat(np.arange(3), n // 3)


def _ring_blob_noise(n=900, seed=0):
    """A blob in a ring beside a second blob, 5 % uniform noise: not a mixture of three
    Gaussians, and noise points bridge the spectral graph."""
    rng = np.random.default_rng(seed)
    m = n // 3
    a = rng.uniform(0, 2 * np.pi, m)
    ring = np.c_[5 * np.cos(a), 5 * np.sin(a)] + 0.2 * rng.standard_normal((m, 2))
    X = np.r_[0.5 * rng.standard_normal((m, 2)), ring, 0.5 * rng.standard_normal((m, 2)) + (12, 0)]
    y = np.repeat(np.arange(3), m)
    lo, hi = X.min(0), X.max(0)
    noise = lo + (hi - lo) * rng.random((n // 20, 2))
    from scipy.spatial import cKDTree
    return np.r_[X, noise], np.r_[y, y[cKDTree(X).query(noise)[1]]]


def test_profile_keeps_a_bounded_read_only_sample_outside_equality_and_as_dict():
    X = np.random.default_rng(0).standard_normal((9000, 3))
    p = profile_data(X, 3)
    assert p.sample.shape == (4000, 3) and not p.sample.flags.writeable
    np.testing.assert_array_equal(p.sample[0], X[0])
    np.testing.assert_array_equal(p.sample[-1], X[-1])
    assert "sample" not in p.as_dict() and p == attrs.evolve(p, sample=None)
    wide = profile_data(np.zeros((5000, 2000)), 2)
    assert wide.sample.shape == (2000, 2000)  # at most 4e6 values
    import scipy.sparse as sp
    assert profile_data(sp.random(50, 5, density=0.3, format="csr"), 2).sample is None


def test_overlapping_anisotropic_gaussians_take_the_mixture_family():
    X, y = _aniso()
    model = GraphClustering(n_clusters=3, random_state=0).fit(X)
    spec = model.resolved_spec_
    assert spec["rounding"]["name"] == "gmm" and spec["solver"]["name"] == "features"
    assert f"<= {MIXTURE_GAIN:g} nats" in spec["summary"]
    km = GraphClustering(rule_auto.exact_spec(model.profile_), n_clusters=3, random_state=0).fit(X)
    assert adjusted_rand_score(y, model.labels_) > adjusted_rand_score(y, km.labels_) + 0.05
    np.testing.assert_array_equal(model.predict(X[:40]), model.labels_[:40])


def test_shapes_with_noise_take_the_lowest_normalised_cut():
    """Ring, blobs and 5 % noise: the density tree's partition cuts the sample's graph
    least (noise points leave its clusters, where they bridge the spectral cut)."""
    X, y = _ring_blob_noise()
    model = GraphClustering(n_clusters=3, random_state=0).fit(X)
    spec = model.resolved_spec_
    assert spec["rounding"]["name"] == "density", spec["summary"]
    summary = spec["summary"]
    assert "> 0.05" in summary and "normalised cuts" in summary and "is the lowest" in summary
    assert adjusted_rand_score(y, model.labels_) > 0.9


def test_genie_when_it_cuts_least(monkeypatch):
    X, y = _ring_blob_noise()
    p = profile_data(X, 3)
    real = rule_auto.low_dim_diagnostics(p, "none")
    monkeypatch.setattr(_rules_low_dim, "low_dim_diagnostics",
                        lambda p, s: {**real, "ncut_density": 1.0})
    model = GraphClustering(n_clusters=3, random_state=0).fit(X)
    assert model.resolved_spec_["rounding"]["name"] == "genie"
    assert "< spectral's" in model.resolved_spec_["summary"]
    assert adjusted_rand_score(y, model.labels_) > 0.9


def test_the_summary_states_the_diagnostics_that_decided():
    X, _ = _ring_blob_noise()
    p = profile_data(X, 3)
    diag = rule_auto.low_dim_diagnostics(p, "none")
    summary = auto_rule(p)["summary"]
    assert f"{diag['mixture_gain']:.3f} > {MIXTURE_GAIN:g}" in summary
    for key in ("ncut_genie", "ncut_spectral", "ncut_density"):
        assert f"{diag[key]:.4f}" in summary
    assert diag["ncut_density"] < min(diag["ncut_genie"], diag["ncut_spectral"])
    assert diag["mixture_gain"] > MIXTURE_GAIN


def test_when_spectral_cuts_better_the_spectral_rules_decide_and_say_why(monkeypatch):
    X, _ = _ring_blob_noise()
    p = profile_data(X, 3)
    real = rule_auto.low_dim_diagnostics(p, "none")
    monkeypatch.setattr(_rules_low_dim, "low_dim_diagnostics",
                        lambda p, s: {**real, "ncut_genie": real["ncut_spectral"] + 1.0,
                                      "ncut_density": real["ncut_spectral"] + 1.0})
    spec = auto_rule(p)
    assert spec["graph"]["name"] == "knn" and spec["rounding"]["name"] == "kmeans"
    assert ">= spectral's" in spec["summary"] and "exact 10-NN spectral" in spec["summary"]


def test_diagnostics_do_not_apply_without_sample_high_d_sparse_or_k():
    X, _ = _aniso(300)
    p = profile_data(X, 3)
    assert rule_auto.low_dim_diagnostics(attrs.evolve(p, sample=None), "none") is None
    assert rule_auto.low_dim_diagnostics(attrs.evolve(p, d=LOW_DIM + 1), "none") is None
    assert rule_auto.low_dim_diagnostics(attrs.evolve(p, k=1), "none") is None
    assert rule_auto.low_dim_diagnostics(attrs.evolve(p, k=None), "none") is None
    nan = np.array(p.sample)
    nan[5, 0] = np.nan  # a chunked input is profiled before the fit's value checks
    assert rule_auto.low_dim_diagnostics(attrs.evolve(p, sample=nan), "none") is None
    # too few points per mixture parameter: no mixture test, straight to Genie vs spectral
    small = rule_auto.low_dim_diagnostics(attrs.evolve(p, n=30, sample=p.sample[:60]), "none")
    assert small is None or (not small["mixture"] and np.isnan(small["mixture_gain"]))


def test_the_choice_is_the_same_for_every_seed_and_the_fit_deterministic():
    X, _ = _ring_blob_noise(600)
    a = GraphClustering(n_clusters=3, random_state=1).fit(X)
    b = GraphClustering(n_clusters=3, random_state=1).fit(X)
    c = GraphClustering(n_clusters=3, random_state=2).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert a.resolved_spec_["summary"] == c.resolved_spec_["summary"]
    assert gc.validate_spec(a.resolved_spec_) == []


@pytest.mark.slow
def test_auto_labels_do_not_depend_on_faiss_being_installed(monkeypatch):
    """Rule 4 above 4 096 points (where the exact search would use faiss' flat index when
    installed): the same labels with faiss importable and with it blocked."""
    pytest.importorskip("faiss")
    import sys

    from sklearn.datasets import make_blobs

    X, _ = make_blobs(n_samples=4200, centers=12, n_features=60, cluster_std=4.0,
                      random_state=0)
    with_faiss = GraphClustering(n_clusters=12, random_state=0).fit(X)
    assert with_faiss.resolved_spec_["graph"]["method"] == "exact"
    monkeypatch.setitem(sys.modules, "faiss", None)  # import faiss now raises ImportError
    without = GraphClustering(n_clusters=12, random_state=0).fit(X)
    assert without.resolved_spec_ == with_faiss.resolved_spec_
    np.testing.assert_array_equal(without.labels_, with_faiss.labels_)


@pytest.mark.parametrize("n,chunked", [(10**7, False), (50_000, True), (10**8, True)])
@pytest.mark.parametrize("family", ["mixture", "genie", "density", "spectral"])
def test_rule_8_holds_at_every_size_and_on_chunked_input(monkeypatch, n, chunked, family):
    """Above SAMPLED_ANCHORS_N and on Dask the same diagnostics decide; the mixture,
    Genie and the density tree are fitted on their samples (all rows up to them), the
    spectral fallback is rule 5, and the summary says which."""
    X, _ = _aniso(300)
    p = attrs.evolve(profile_data(X, 3), n=n, chunked=chunked)
    diag = {"rows": 300, "two_nn_dimension": 2.0, "mixture_parameters": 35,
            "mixture_fits_size": True, "mixture_gain": -0.1 if family == "mixture" else 0.5,
            "kernel_z": -1.0 if family == "mixture" else float("nan"),
            "mixture": family == "mixture", "ncut_genie": 0.1 if family == "genie" else 0.3,
            "ncut_spectral": 0.2, "ncut_density": 0.05 if family == "density" else 0.4}
    monkeypatch.setattr(_rules_low_dim, "low_dim_diagnostics", lambda p, s: diag)
    spec = auto_rule(p)
    assert ("chunked input" in spec["summary"]) == chunked
    if family == "spectral":
        assert spec["anchors"]["name"] == "hybrid" and spec["solver"]["name"] == "tcut"
        assert ">= spectral's" in spec["summary"]
        return
    size = {"mixture": rule_auto.MIXTURE_SAMPLE, "genie": rule_auto.GENIE_SAMPLE,
            "density": rule_auto.DENSITY_SAMPLE}[family]
    assert spec["solver"]["name"] == "features"
    assert spec["rounding"]["name"] == {"mixture": "gmm", "genie": "genie",
                                        "density": "density"}[family]
    assert spec["rounding"]["max_fit"] == size
    assert (f"fitted on a sample of {size} rows" in spec["summary"]) == (n > size)
    small = auto_rule(attrs.evolve(p, n=size))
    assert small["rounding"] == spec["rounding"] and "fitted on all rows" in small["summary"]


def _two_moons_and_blob(n=900, seed=0):
    from sklearn.datasets import make_moons

    X, y = make_moons(2 * n // 3, noise=0.06, random_state=seed)
    rng = np.random.default_rng(seed)
    blob = 0.15 * rng.standard_normal((n // 3, 2)) + (4.0, 0.0)
    return np.r_[X, blob], np.r_[y, np.full(n // 3, 2)]


def test_rule_9_without_k_counts_chained_shapes_by_the_density_tree():
    """No k, d = 2: two moons and a blob, where the kNN graph's spectrum has no gap at 3
    (the eigengap rule of the spectral recipes answers otherwise): the density tree of
    the features finds 3 and its labels are the shapes."""
    X, y = _two_moons_and_blob()
    m = GraphClustering(random_state=0).fit(X)
    assert m.resolved_spec_["rounding"]["name"] == "density"
    assert "a density estimate needs" in m.resolved_spec_["summary"]
    assert m.n_clusters_ == 3 and m.k_selection_.method == "density-tree"
    assert adjusted_rand_score(y, m.labels_) > 0.95
    given = GraphClustering(n_clusters=3, random_state=0).fit(X)  # rule 8 with k
    assert given.resolved_spec_["rounding"]["name"] != "density"


@pytest.mark.parametrize("n,chunked", [(2_000_000, False), (500, True)])
def test_rule_9_holds_at_every_size_and_on_chunked_input(n, chunked):
    X, _ = _two_moons_and_blob(300)
    p = attrs.evolve(profile_data(X, None), n=n, chunked=chunked)
    spec = auto_rule(p)
    rows = min(n, rule_auto.DENSITY_SAMPLE)
    assert spec["solver"]["name"] == "features" and spec["rounding"] == {
        "name": "density", "estimate": "eom", "max_fit": rule_auto.DENSITY_SAMPLE,
        "structure_ratio": rule_auto.DENSITY_STRUCTURE_RATIO,
        "min_cluster_size": max(rule_auto.DENSITY_MIN_CLUSTER,
                                rows // rule_auto.DENSITY_SIZE_DIVISOR)}
    assert ("chunked input" in spec["summary"]) == chunked
    assert ("fitted on a sample" in spec["summary"]) == (n > rule_auto.DENSITY_SAMPLE)
    # not with k, sparse input, fewer rows than a density estimate needs in d dimensions
    # (Silverman's table: 223 in 4-d, 10 700 in 7-d; beyond 10 dimensions never)
    for q in (attrs.evolve(p, k=3), attrs.evolve(p, sparse=True),
              attrs.evolve(p, n=rule_auto.DIAGNOSTIC_MIN_N - 1),
              attrs.evolve(p, d=4, n=222), attrs.evolve(p, d=8), attrs.evolve(p, d=11)):
        assert "rule 9:" not in auto_rule(q)["summary"]  # (d >= 8: rule 10 may look)
    for q in (attrs.evolve(p, d=4, n=223), attrs.evolve(p, d=7, n=10_700)):
        assert auto_rule(q)["rounding"]["name"] == "density"
        rows = min(q.n, rule_auto.DENSITY_SAMPLE)  # the tree's range: rows // its size
        assert auto_rule(q)["k_max"] == rows // max(rule_auto.DENSITY_MIN_CLUSTER,
                                                    rows // rule_auto.DENSITY_SIZE_DIVISOR)


@pytest.mark.parametrize("make", ["uniform", "gaussian"])
def test_rule_9_finds_no_structure_in_structureless_data(make):
    rng = np.random.default_rng(4)
    X = rng.random((3000, 2)) if make == "uniform" else rng.standard_normal((3000, 2))
    with pytest.warns(gc.NoClusterStructureWarning):
        m = GraphClustering(random_state=0).fit(X)
    assert m.resolved_spec_["rounding"]["name"] == "density"
    assert m.n_clusters_ == 1 and np.all(m.labels_ == 0)
    d = m.k_selection_.details
    assert d["selection_stability"] <= rule_auto.DENSITY_STRUCTURE_RATIO * d["root_stability"]


def test_rings_that_pass_the_gain_test_are_not_taken_for_a_mixture():
    """Four concentric rings: 2k Gaussians gain little over k (each ring needs many), so
    the gain test alone took the mixture (ARI near 0); the kernel estimate rejects it."""
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 2 * np.pi, 1600)
    y = np.arange(1600) % 4
    r = 1.0 + y + 0.08 * rng.standard_normal(1600)
    X = np.c_[r * np.cos(a), r * np.sin(a)]
    diag = rule_auto.low_dim_diagnostics(profile_data(X, 4), "none")
    assert diag["mixture_gain"] <= MIXTURE_GAIN and diag["kernel_z"] > rule_auto.KERNEL_Z
    assert not diag["mixture"]
    model = GraphClustering(n_clusters=4, random_state=0).fit(X)
    assert model.resolved_spec_["rounding"]["name"] != "gmm"
    assert "not Gaussian" in model.resolved_spec_["summary"]
    assert adjusted_rand_score(y, model.labels_) > 0.95
