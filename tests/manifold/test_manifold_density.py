"""``density``: the HDBSCAN condensed tree cut to exactly k clusters."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import graphclust
from graphclust_plugins.manifold._condensed import CondensedTree, label_points, select_k
from graphclust_plugins.manifold.rounding_density import DensityRounding

hdbscan = pytest.importorskip("hdbscan")


def solution(E):
    return graphclust.Solution(embedding=E)


@pytest.fixture(scope="module")
def nested():
    """Five blobs, two pairs of them close: trees with structure at several levels."""
    centres = [[0, 0], [3, 0], [20, 0], [23, 0], [10, 30]]
    E, y = make_blobs(600, centers=centres, cluster_std=0.6, random_state=0)
    return E, y


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6, 8])
def test_exactly_k_clusters(nested, k):
    E, _ = nested
    r = DensityRounding()
    labels = r.round(solution(E), k, graphclust.Context())
    assert labels.dtype == np.int64 and labels.min() == 0
    assert np.unique(labels).size == k and labels.max() == k - 1


def test_levels_follow_the_tree(nested):
    """k = 3 joins the close pairs, k = 5 is the five blobs."""
    from sklearn.metrics import adjusted_rand_score

    E, y = nested
    pairs = np.array([0, 0, 1, 1, 2])[y]
    r = DensityRounding()
    assert adjusted_rand_score(pairs, r.round(solution(E), 3, graphclust.Context())) > 0.99
    assert adjusted_rand_score(y, r.round(solution(E), 5, graphclust.Context())) > 0.95


def test_found_count_is_hdbscans_own_selection(nested):
    """n_clusters_found_ is excess of mass's count, and cutting at that k gives the
    same clusters as hdbscan's labels_ (on the points it does not call noise)."""
    from sklearn.metrics import adjusted_rand_score

    E, _ = nested
    r = DensityRounding(min_cluster_size=20)
    model = hdbscan.HDBSCAN(min_cluster_size=20, min_samples=20,
                            approx_min_span_tree=False).fit(E)
    found = int(model.labels_.max()) + 1
    labels = r.round(solution(E), 2, graphclust.Context())
    assert r.n_clusters_found_ == found >= 2
    labels = DensityRounding(min_cluster_size=20, noise=True).round(
        solution(E), found, graphclust.Context())
    kept = model.labels_ >= 0
    assert adjusted_rand_score(model.labels_[kept], labels[kept]) == 1.0


def test_select_k_maximises_stability(nested):
    """The knapsack equals brute force over all admissible selections of each size."""
    E, _ = nested
    raw = hdbscan.HDBSCAN(min_cluster_size=10, approx_min_span_tree=False).fit(E)
    tree = CondensedTree(raw.condensed_tree_.to_numpy(), E.shape[0])

    def selections(c):  # every admissible selection under c, as lists
        out = [[c]]
        kids = tree.children[c]
        if kids:
            combos = [[]]
            for kid in kids:
                combos = [a + b for a in combos for b in selections(kid)]
            out += combos
        return out

    everything = [s for s in selections(0) if s != [0]]
    assert tree.max_clusters <= 40
    for k in range(2, tree.max_clusters + 1):
        best = max(tree.stability[s].sum() for s in everything if len(s) == k)
        got = select_k(tree, k)
        assert len(got) == k
        assert tree.stability[got].sum() == pytest.approx(best)
        labels = label_points(tree, got)
        assert set(np.unique(labels[labels >= 0])) == set(range(k))


def test_noise_is_voted_or_kept():
    rng = np.random.default_rng(0)
    E = np.vstack([rng.normal(size=(200, 2)) * 0.3, rng.normal(size=(200, 2)) * 0.3 + 6,
                   rng.uniform(-3, 9, size=(40, 2))])
    kept = DensityRounding(noise=True)
    lab = kept.round(solution(E), 2, graphclust.Context())
    assert (lab == -1).sum() == kept.n_noise_ > 0
    assert set(np.unique(lab)) == {-1, 0, 1}
    voted = DensityRounding().round(solution(E), 2, graphclust.Context())
    assert voted.min() == 0 and np.array_equal(voted[lab >= 0], lab[lab >= 0])


def test_too_coarse_tree_is_refined_then_warns():
    E, _ = make_blobs(200, centers=12, cluster_std=0.05, random_state=0)
    r = DensityRounding(min_cluster_size=60)
    labels = r.round(solution(E), 10, graphclust.Context())
    assert np.unique(labels).size == 10 and r.min_cluster_size_ < 60
    dup = np.repeat(np.eye(3), 10, axis=0)  # three distinct rows cannot make 5 clusters
    with pytest.warns(graphclust.FewerClustersWarning):
        labels = DensityRounding().round(solution(dup), 5, graphclust.Context())
    assert np.unique(labels).size < 5


def test_trivial_sizes():
    ctx = graphclust.Context()
    assert DensityRounding().round(solution(np.zeros((2, 3))), 2, ctx).tolist() == [0, 1]
    assert DensityRounding().round(solution(np.zeros((5, 3))), 1, ctx).tolist() == [0] * 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        labels = DensityRounding().round(solution(np.arange(12.0)[:, None]), 12, ctx)
    assert sorted(labels) == list(range(12))


def test_duplicate_rows():
    """Points at distance 0 leave the tree at λ = ∞: counted at the densest level."""
    rng = np.random.default_rng(0)
    E = np.vstack([np.repeat(rng.normal(size=(20, 2)), 10, axis=0),
                   np.repeat(rng.normal(size=(20, 2)) + 8, 10, axis=0)])
    r = DensityRounding()
    labels = r.round(solution(E), 2, graphclust.Context())
    assert np.bincount(labels).tolist() == [200, 200]
    assert np.all(np.isfinite(r.stability_)) and np.all(r.stability_ > 0)
