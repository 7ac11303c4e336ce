"""``n_clusters`` estimated when not given: the eigengap against dense references, the
rule, the part protocol, the refusal, the warnings and the fitted record."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from sklearn.datasets import make_blobs

import graphclust
from graphclust import GraphClustering, KRangeWarning, NoClusterStructureWarning, SpecError
from graphclust.numerics.eigengap import (RELATIVE_GAP, affinity_spectrum, anchor_block_sums,
                                          anchor_spectrum, choose_by_eigengap,
                                          spectrum_from_anchor_sums)


def _dense_normalised_spectrum(W: np.ndarray) -> np.ndarray:
    """The obvious reference: eigenvalues of D^-1/2 W D^-1/2, descending."""
    d = W.sum(axis=1)
    s = np.where(d > 0, 1 / np.sqrt(np.where(d > 0, d, 1)), 0)
    return np.sort(np.linalg.eigvalsh(s[:, None] * W * s[None, :]))[::-1]


def _random_Z(rng, n, m, s):
    rows = np.repeat(np.arange(n), s)
    cols = np.concatenate([rng.choice(m, s, replace=False) for _ in range(n)])
    vals = rng.random(n * s) + 0.1
    Z = sp.csr_array((vals, (rows, cols)), shape=(n, m))
    return sp.csr_array(Z / Z.sum(axis=1)[:, None])


def test_anchor_spectrum_equals_dense_reference():
    rng = np.random.default_rng(0)
    Z = _random_Z(rng, 120, 25, 3)
    W = graphclust.AnchorGraph(Z).to_dense()
    ref = _dense_normalised_spectrum(W)[:12]
    np.testing.assert_allclose(anchor_spectrum(Z, 12), ref, atol=1e-10)


def test_anchor_spectrum_pads_with_zeros_beyond_m():
    rng = np.random.default_rng(1)
    Z = _random_Z(rng, 50, 6, 2)
    ref = _dense_normalised_spectrum(graphclust.AnchorGraph(Z).to_dense())[:9]
    np.testing.assert_allclose(anchor_spectrum(Z, 9), ref, atol=1e-10)


def test_block_sums_add_up_to_the_whole():
    rng = np.random.default_rng(2)
    Z = _random_Z(rng, 200, 30, 4)
    parts = [anchor_block_sums(Z[a:b]) for a, b in ((0, 70), (70, 71), (71, 200))]
    G = sum(p[0] for p in parts)
    lam = sum(p[1] for p in parts)
    np.testing.assert_allclose(spectrum_from_anchor_sums(G, lam, 10), anchor_spectrum(Z, 10),
                               atol=1e-12)


@pytest.mark.parametrize("n", [300, 700])  # dense path, then Lanczos
def test_affinity_spectrum_equals_dense_reference(n):
    from sklearn.neighbors import kneighbors_graph

    X, _ = make_blobs(n, 3, centers=3, cluster_std=3.0, random_state=0)
    A = kneighbors_graph(X, 8, include_self=False)
    A = sp.csr_array(0.5 * (A + A.T))
    ref = _dense_normalised_spectrum(A.toarray())[:11]
    got = affinity_spectrum(A, 11, np.random.default_rng(0))
    np.testing.assert_allclose(got, ref, atol=1e-7)


def test_rule_on_hand_made_spectra():
    # three clusters: λ = 0, 0, 0, then 0.5, 0.55, ...: k = 3
    lam = np.array([0, 1e-4, 2e-4, 0.5, 0.55, 0.6, 0.62, 0.7])
    c = choose_by_eigengap(1 - lam, 1, 7)
    assert c.k == 3 and c.significant
    # a smooth spectrum (Weyl-like, λ_k ∝ k): no relative gap below the threshold but k = 1
    lam = np.array([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])
    c = choose_by_eigengap(1 - lam, 1, 7)
    assert c.k == 1
    # the biggest absolute gap is not relative enough: ignored
    lam = np.array([0, 0.01, 0.02, 0.5, 0.9, 1.5, 1.6, 1.7])
    c = choose_by_eigengap(1 - lam, 2, 7)
    assert c.best == 5 and c.k == 3
    # nothing significant with k_min = 2: k_min, not significant
    lam = np.array([0, 0.1, 0.2, 0.3, 0.4, 0.5])
    c = choose_by_eigengap(1 - lam, 2, 4)
    assert c.k == 2 and not c.significant
    assert 0.5 < RELATIVE_GAP < 1
    # more zero eigenvalues than k_max: clusters beyond the range, k = k_max
    lam = np.array([0, 0, 0, 0, 0.3, 0.4])
    c = choose_by_eigengap(1 - lam, 1, 2)
    assert c.k == 2 and c.significant


#: The eigengap of the preset's own graph, not auto's k (docs/choosing-k.rst, "Presets
#: without k"): what these tests are about.
PARTS = {"k_from": "parts"}


def _separated_blobs(k, seed, n_per=60, d=4):
    rng = np.random.default_rng(seed)
    centres = np.zeros((k, d))
    centres[:, 0] = 40.0 * np.arange(k)  # far apart along a line, shuffled dims
    centres = centres @ np.linalg.qr(rng.standard_normal((d, d)))[0]
    X = np.vstack([c + rng.standard_normal((n_per, d)) for c in centres])
    return X, np.repeat(np.arange(k), n_per)


@settings(max_examples=12, deadline=None)
@given(k=st.integers(1, 6), seed=st.integers(0, 10_000))
def test_well_separated_blobs_give_their_count(k, seed):
    X, y = _separated_blobs(k, seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = GraphClustering("ncut", random_state=0, k_max=10, overrides=PARTS).fit(X)
    assert model.n_clusters_ == k
    assert model.k_selection_.method == "eigengap" and model.k_selection_.k == k
    no_structure = [w for w in caught if issubclass(w.category, NoClusterStructureWarning)]
    assert bool(no_structure) == (k == 1)
    if k > 1:
        from sklearn.metrics import adjusted_rand_score

        assert adjusted_rand_score(y, model.labels_) > 0.99


@pytest.mark.parametrize("make", ["uniform", "gaussian"])
@pytest.mark.parametrize("spec", ["ncut", "anchor-spectral"])
def test_no_structure_gives_one_cluster_with_a_warning(make, spec):
    rng = np.random.default_rng(0)
    X = rng.random((1500, 3)) if make == "uniform" else rng.standard_normal((1500, 3))
    with pytest.warns(NoClusterStructureWarning, match="no cluster structure"):
        model = GraphClustering(spec, random_state=0, anchors={"n_anchors": 200}
                                if spec == "anchor-spectral" else None).fit(X)
    assert model.n_clusters_ == 1 and model.k_selection_.structure is False
    assert np.all(model.labels_ == 0)


def test_top_of_the_range_warns():
    X, _ = _separated_blobs(5, 0)
    with pytest.warns(KRangeWarning, match="top of the searched range"):
        model = GraphClustering("ncut", random_state=0, k_max=3).fit(X)
    assert model.n_clusters_ == 3 and model.k_selection_.k_max == 3


def test_estimated_fit_equals_a_fit_given_that_k():
    X, _ = make_blobs(800, 5, centers=4, random_state=3)
    est = GraphClustering("anchor-spectral", random_state=7, overrides=PARTS,
                          anchors={"n_anchors": 100}).fit(X)
    given_k = GraphClustering("anchor-spectral", random_state=7, n_clusters=est.n_clusters_,
                              anchors={"n_anchors": 100}).fit(X)
    assert est.n_clusters_ == 4 and given_k.k_selection_.method == "given"
    np.testing.assert_array_equal(est.labels_, given_k.labels_)
    assert est.resolved_spec_["n_clusters"] == 4
    assert set(est.k_selection_.as_dict()) >= {"method", "candidates", "scores", "rule", "k"}
    assert est.k_selection_.candidates == tuple(range(1, 21))
    assert len(est.k_selection_.scores) == 20


def test_spec_k_is_used_as_given():
    X, _ = make_blobs(300, 3, centers=3, random_state=0)
    model = GraphClustering("ncut", random_state=0, overrides={"n_clusters": 5}).fit(X)
    assert model.n_clusters_ == 5 and model.k_selection_.method == "given"


def test_no_part_able_is_refused_naming_the_parts_that_can():
    from graphclust_plugins.common.graph_knn import KNNGraph

    @graphclust.part
    class MuteKNN(KNNGraph):
        """A kNN graph that declares it cannot estimate k."""

        name = "mute-knn"
        estimates_k = None

    X, _ = make_blobs(100, 3, centers=2, random_state=0)
    with pytest.raises(SpecError) as info:
        GraphClustering("ncut", graph=MuteKNN(n_neighbors=10)).fit(X)
    msg = str(info.value)
    assert "no n_clusters given and no part" in msg and "graph 'mute-knn'" in msg
    assert "graph 'knn' (eigengap)" in msg and "rounding 'density' (density-tree)" in msg
    # with k it runs
    assert GraphClustering("ncut", graph=MuteKNN(n_neighbors=10),
                           n_clusters=2).fit(X).n_clusters_ == 2


def test_latest_able_stage_estimates():
    from graphclust._kselect import estimating_stage

    pipe = graphclust.compose({"graph": {"name": "fuzzy-knn"},
                               "solver": {"name": "umap-layout"},
                               "rounding": {"name": "density"}})
    assert estimating_stage(pipe)[0] == "rounding"
    # the sample-aware preset: its placement graph offers no estimate, its adapter's
    # rounding does (the density tree of the sample's layout)
    stage, part = estimating_stage(graphclust.compose("manifold"))
    assert (stage, part.name) == ("adapter", "on-sample")
    pipe = graphclust.compose("ncut")
    assert estimating_stage(pipe)[0] == "graph"
    # a rounding able to estimate after a solver that uses k: the graph estimates
    pipe = graphclust.compose({"graph": {"name": "knn"}, "solver": {"name": "spectral"},
                               "rounding": {"name": "density"}})
    assert estimating_stage(pipe)[0] == "graph"


def test_ensemble_estimates_through_its_consensus():
    X, _ = make_blobs(600, 6, centers=4, random_state=2)
    spec = {"k_from": "parts", "ensemble": {"consensus": {"name": "tcut"},
                         "members": [{"preset": "uspec", "count": 5, "n_clusters": [8, 20],
                                      "anchors": {"n_anchors": 100}}]}}
    model = GraphClustering(spec, random_state=0).fit(X)
    assert model.n_clusters_ == 4
    assert model.k_selection_.part == "consensus 'tcut'"
    assert np.unique(model.labels_).size == 4


def test_a_given_k_never_asks_for_an_estimate():
    """With n_clusters given nothing of the estimation runs: a graph whose estimate_k
    raises gives the labels of the plain preset (the path of a given k is unchanged; the
    labels of 8 presets were compared bit for bit with the code before issue 26)."""
    from graphclust_plugins.common.graph_knn import KNNGraph

    @graphclust.part
    class LoudKNN(KNNGraph):
        """A kNN graph whose estimate fails."""

        name = "loud-knn"

        def estimate_k(self, graph, k_min, k_max, ctx):
            raise AssertionError("estimate_k called with k given")

    X, _ = make_blobs(300, 4, centers=3, random_state=5)
    plain = GraphClustering("ncut", n_clusters=4, random_state=1).fit(X)
    loud = GraphClustering("ncut", n_clusters=4, random_state=1,
                           graph=LoudKNN(**plain.pipeline_.graph.get_params())).fit(X)
    np.testing.assert_array_equal(plain.labels_, loud.labels_)
    assert "k" not in plain.timings_ and plain.k_selection_.method == "given"
