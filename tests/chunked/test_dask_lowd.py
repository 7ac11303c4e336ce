"""Rule 8's families on Dask: a Gaussian mixture fitted on rows drawn by global row index
(every row labelled by predict) and Genie on such a sample (every row labelled as its
nearest sample row) give the in-memory labels for every chunking; ``auto`` runs them on
chunked input with the in-memory decision."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import graphclust
from graphclust_plugins.auto import _rules_base, _rules_density, _rules_low_dim

pytestmark = pytest.mark.slow  # Dask and fits: each case takes over a second


def features(rounding):
    return _rules_base.features_pipeline(rounding)


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(500, 3, centers=3, cluster_std=1.2, random_state=2)
    return X, y


@pytest.mark.parametrize("rounding", [{"name": "gmm", "n_init": 1, "max_fit": 150},
                                      {"name": "genie", "max_fit": 120}],
                         ids=["gmm", "genie"])
def test_sampled_rounding_on_sync_dask_equals_in_memory_for_two_chunkings(blobs, as_dask,
                                                                          rounding):
    dask = pytest.importorskip("dask", reason="needs the [dask] extra")
    X, _ = blobs
    spec = features(rounding)
    ref = graphclust.GraphClustering(spec, n_clusters=3, random_state=4).fit(X)
    with dask.config.set(scheduler="sync"):
        for rows in (130, 400):
            got = graphclust.GraphClustering(spec, n_clusters=3, random_state=4).fit(
                as_dask(X, rows))
            np.testing.assert_array_equal(np.asarray(got.labels_), ref.labels_)


def _ring_blob_noise(n=900, seed=0):
    """A blob in a ring beside a second blob, 5 % uniform noise (Genie by rule 8b, as in
    tests/auto/test_auto_v2.py)."""
    from scipy.spatial import cKDTree

    rng = np.random.default_rng(seed)
    m = n // 3
    a = rng.uniform(0, 2 * np.pi, m)
    ring = np.c_[5 * np.cos(a), 5 * np.sin(a)] + 0.2 * rng.standard_normal((m, 2))
    X = np.r_[0.5 * rng.standard_normal((m, 2)), ring,
              0.5 * rng.standard_normal((m, 2)) + (12, 0)]
    y = np.repeat(np.arange(3), m)
    lo, hi = X.min(0), X.max(0)
    noise = lo + (hi - lo) * rng.random((n // 20, 2))
    return np.r_[X, noise], np.r_[y, y[cKDTree(X).query(noise)[1]]]


@pytest.mark.parametrize("data,family", [("blobs", "gmm"), ("ring", "density")])
def test_auto_rule_8_on_a_cluster_equals_in_memory_above_its_samples(dask_client, as_dask,
                                                                     monkeypatch, data,
                                                                     family):
    """Samples of 500 / 400 rows (monkeypatched) so that the data are above them."""
    monkeypatch.setattr(_rules_low_dim, "MIXTURE_SAMPLE", 500)
    monkeypatch.setattr(_rules_low_dim, "GENIE_SAMPLE", 400)
    monkeypatch.setattr(_rules_density, "DENSITY_SAMPLE", 400)
    if data == "blobs":
        X, y = make_blobs(3000, 4, centers=4, cluster_std=1.0, random_state=3)
        k = 4
    else:
        (X, y), k = _ring_blob_noise(), 3
    ref = graphclust.GraphClustering(n_clusters=k, random_state=2).fit(X)
    assert ref.resolved_spec_["rounding"]["name"] == family
    assert "fitted on a sample" in ref.resolved_spec_["summary"]
    for rows in (300, 1300):
        got = graphclust.GraphClustering(n_clusters=k, random_state=2).fit(as_dask(X, rows))
        assert got.resolved_spec_["rounding"] == ref.resolved_spec_["rounding"]
        assert "chunked input: fitted on a sample" in got.resolved_spec_["summary"]
        np.testing.assert_array_equal(got.labels_.compute(), ref.labels_)
        np.testing.assert_array_equal(got.predict(as_dask(X[:500], 200)).compute(),
                                      ref.labels_[:500])


def test_auto_rule_9_without_k_on_a_cluster_equals_in_memory(dask_client, as_dask,
                                                             monkeypatch):
    """No k, d = 2: the density tree of a 1000-row sample (monkeypatched, the data above
    it) estimates k and labels; on a LocalCluster the estimate and the labels are the
    in-memory ones for two chunkings (the rounding's estimate on the rows it draws)."""
    monkeypatch.setattr(_rules_density, "DENSITY_SAMPLE", 1000)
    (X, y), k = _ring_blob_noise(2000), 3
    ref = graphclust.GraphClustering(random_state=2).fit(X)
    assert ref.resolved_spec_["rounding"]["name"] == "density"
    assert ref.n_clusters_ == k and ref.k_selection_.method == "density-tree"
    for rows in (300, 1300):
        got = graphclust.GraphClustering(random_state=2).fit(as_dask(X, rows))
        assert got.n_clusters_ == k and got.k_selection_ == ref.k_selection_
        np.testing.assert_array_equal(got.labels_.compute(), ref.labels_)
