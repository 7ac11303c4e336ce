"""auto's rule 10 (issue 44): compact, well separated clusters of a few points each are
counted and drawn without k by the density tree of the features at min_cluster_size =
ceil(ln n); structureless clouds keep nearly every row out of its clusters and are left
to the other rules (and their k = 1)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from graphclust import GraphClustering, KRangeWarning
from graphclust.numerics import fit_pca
from graphclust_plugins.auto._rules_small_clusters import (
    SMALL_CLUSTER_COMPONENTS,
    SMALL_CLUSTER_SHARE,
    small_cluster_size,
    small_clusters_diagnostic,
)
from sklearn.cluster import HDBSCAN
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score


def _small_blobs(k: int, per: int, d: int, seed: int = 0):
    """``k`` blobs of ``per`` points in ``d`` dimensions, centres as in issue 44's cases
    (``cluster_std = 1``, ``center_box = (-60, 60)``)."""
    return make_blobs(k * per, d, centers=k, cluster_std=1.0, center_box=(-60, 60),
                      random_state=seed)


def test_the_smallest_cluster_is_ln_n_rows_at_least_five():
    assert small_cluster_size(10) == 5
    assert small_cluster_size(1000) == math.ceil(math.log(1000)) == 7
    assert small_cluster_size(4000) == 9


def _structureless(seed: int, d: int) -> list[np.ndarray]:
    """A Gaussian with an uneven covariance spectrum and a uniform cube, 300 rows."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((300, d)) * np.linspace(1.0, 5.0, d),
            rng.uniform(-1, 1, (300, d))]


def test_structureless_clouds_keep_their_rows_out_of_clusters():
    """The rule's share stays far below its threshold on structureless samples."""
    for S in _structureless(0, 10):
        diag = small_clusters_diagnostic(S)
        assert diag["clusters"] < 2 or diag["share"] < SMALL_CLUSTER_SHARE, diag


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("d", [10, 60])
def test_structureless_clouds_on_more_seeds_and_dimensions(seed, d):
    for S in _structureless(seed, d):
        diag = small_clusters_diagnostic(S)
        assert diag["clusters"] < 2 or diag["share"] < SMALL_CLUSTER_SHARE, diag


def test_small_blobs_are_counted_as_hdbscan_counts_them():
    """20 blobs of 8 points in 60-d: 20 clusters holding every row, the count of
    scikit-learn's HDBSCAN on the same components (its min_samples counts the point
    itself, the rule's core distance is over one row fewer)."""
    X, _ = _small_blobs(20, 8, 60)
    diag = small_clusters_diagnostic(X)
    assert diag["clusters"] == 20 and diag["share"] >= SMALL_CLUSTER_SHARE
    size = small_cluster_size(X.shape[0])
    P = fit_pca(X, SMALL_CLUSTER_COMPONENTS).transform(X)
    ref = HDBSCAN(min_cluster_size=size, min_samples=size).fit(P).labels_
    assert len(set(ref) - {-1}) == diag["clusters"]


def test_auto_finds_small_blobs_without_k():
    X, y = _small_blobs(20, 8, 60)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NoClusterStructureWarning, no KRangeWarning
        model = GraphClustering("auto", random_state=0).fit(X)
    assert model.n_clusters_ == 20
    assert adjusted_rand_score(y, model.labels_) == pytest.approx(1.0)
    assert "rule 10:" in model.resolved_spec_["summary"]
    sel = model.k_selection_
    assert sel.method == "density-tree"
    assert sel.k_max == X.shape[0] // small_cluster_size(X.shape[0])  # the tree's resolution


def test_a_given_k_max_still_bounds_the_search():
    X, _ = _small_blobs(20, 8, 60)
    with pytest.warns(KRangeWarning):
        model = GraphClustering("auto", k_max=10, random_state=0).fit(X)
    assert model.n_clusters_ == 10 and model.k_selection_.k_max == 10


def test_with_k_the_rule_does_not_apply():
    X, _ = _small_blobs(20, 8, 60)
    model = GraphClustering("auto", n_clusters=20, random_state=0).fit(X)
    assert "rule 10:" not in model.resolved_spec_["summary"]


@pytest.mark.slow
@pytest.mark.parametrize("k,d,n", [(100, 50, 1000), (25, 20, 2500), (8, 100, 800),
                                   (12, 10, 1200)])
def test_issue_44_cases_without_k(k, d, n):
    """The generated cases of issue 44 that rule 10 takes (100 blobs of 10 points in
    50-d was answered 3, 25 in 20-d 12)."""
    X, y = make_blobs(n, d, centers=k, cluster_std=1.0, center_box=(-60, 60),
                      random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = GraphClustering("auto").fit(X)
    assert model.n_clusters_ == k
    assert adjusted_rand_score(y, model.labels_) > 0.99
