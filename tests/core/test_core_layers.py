"""Layers: nested partitions of one fit (issue 45, deliverable 4).

The merge-sequence numerics are checked against slow obvious references (a cut by
relabelling whole label arrays; Ward's rule recomputed from the member points at every
step; scipy's Ward linkage on single points), the nesting and the layer counts as
hypothesis invariants, and the estimator's layers on data with a known two-level
structure: three groups of three Gaussian blobs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score

import graphclust
from graphclust import GraphClustering, InputError, Layers
from graphclust.numerics.hierarchy import cut, persistence, ward_merges


def _reference_cut(atoms, merges, n_atoms, k):
    """Apply merges by relabelling the whole group array (no union-find)."""
    group = np.arange(n_atoms)
    for a, b in merges[:n_atoms - k]:
        ga, gb = group[a], group[b]
        group[group == max(ga, gb)] = min(ga, gb)
    out = np.where(atoms >= 0, group[np.maximum(atoms, 0)], -1)
    _, first = np.unique(out[out >= 0], return_index=True)
    order = {g: i for i, g in enumerate(out[out >= 0][np.sort(first)])}
    return np.array([order[g] if g >= 0 else -1 for g in out])


@st.composite
def forests(draw):
    m = draw(st.integers(1, 12))
    n_merges = draw(st.integers(0, m - 1))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    group = list(range(m))
    merges = []
    for _ in range(n_merges):  # join two distinct groups
        roots = sorted(set(group))
        a, b = rng.choice(roots, 2, replace=False)
        merges.append((int(rng.choice([i for i in range(m) if group[i] == a])),
                       int(rng.choice([i for i in range(m) if group[i] == b]))))
        group = [a if g == b else g for g in group]
    n = draw(st.integers(m, 3 * m + 5))
    atoms = np.r_[np.arange(m), rng.integers(-1, m, n - m)]
    rng.shuffle(atoms)
    return atoms, np.array(merges, dtype=np.int64).reshape(-1, 2), m


@settings(max_examples=80, deadline=None)
@given(forests())
def test_cut_matches_reference_and_layers_nest(case):
    atoms, merges, m = case
    layers = Layers(atoms, merges, np.arange(1.0, merges.shape[0] + 1), m)
    prev = None
    for k in layers.ks:  # coarse to fine
        labels = layers.partition_at(k)
        assert np.array_equal(labels, _reference_cut(atoms, merges, m, k))
        assert np.array_equal(labels < 0, atoms < 0)
        assert len(np.unique(labels[labels >= 0])) == len(np.unique(
            _reference_cut(np.arange(m), merges, m, k)[np.unique(atoms[atoms >= 0])]))
        if prev is not None:  # every finer group lies in one coarser group
            pairs = np.unique(np.c_[labels[labels >= 0], prev[labels >= 0]], axis=0)
            assert np.unique(pairs[:, 0]).size == pairs.shape[0]
        prev = labels
    score = layers.stability
    assert all(0.0 <= s <= 1.0 for s in score.values())


def _reference_ward(points_of):
    """Ward by brute force: every step recomputes the rise of the within-group sum of
    squares of every pair from the member points."""
    groups = [np.asarray(p, dtype=float) for p in points_of]
    ids = list(range(len(groups)))
    heights = []
    merges = []

    def sse(P):
        return float(((P - P.mean(axis=0)) ** 2).sum())

    while len(groups) > 1:
        best = None
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                rise = sse(np.vstack([groups[i], groups[j]])) - sse(groups[i]) - sse(groups[j])
                if best is None or rise < best[0] - 1e-12:
                    best = (rise, i, j)
        rise, i, j = best
        merges.append((min(ids[i], ids[j]), max(ids[i], ids[j])))
        heights.append(np.sqrt(2 * rise))
        groups[i] = np.vstack([groups[i], groups[j]])
        ids[i] = min(ids[i], ids[j])
        del groups[j], ids[j]
    return np.array(merges), np.array(heights)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 7), st.integers(0, 10**6))
def test_ward_merges_match_the_brute_force_reference(m, seed):
    rng = np.random.default_rng(seed)
    points_of = [rng.normal(size=(int(rng.integers(1, 5)), 3)) * 5 for _ in range(m)]
    centroids = np.array([p.mean(axis=0) for p in points_of])
    sizes = np.array([len(p) for p in points_of])
    merges, heights = ward_merges(centroids, sizes)
    ref_merges, ref_heights = _reference_ward(points_of)
    np.testing.assert_allclose(heights, ref_heights, rtol=1e-8, atol=1e-9)
    for k in range(1, m + 1):  # the same partitions (merge pairs may name other atoms)
        a = cut(np.arange(m), merges, m, k)
        b = cut(np.arange(m), ref_merges, m, k)
        assert np.array_equal(a, b)


def test_ward_heights_equal_scipys_on_single_points():
    from scipy.cluster.hierarchy import linkage

    X = np.random.default_rng(3).normal(size=(12, 4))
    _, heights = ward_merges(X, np.ones(12))
    np.testing.assert_allclose(heights, linkage(X, method="ward")[:, 2], rtol=1e-10)


def test_persistence_is_the_relative_gap_between_merges():
    # 4 atoms; merges at 1, 2, 10: k = 3 forms at 1 and breaks at 2 -> .5;
    # k = 2 forms at 2 and breaks at 10 -> .8; the ends score 0
    np.testing.assert_allclose(persistence([1.0, 2.0, 10.0], 4), [0.0, 0.8, 0.5, 0.0])


def test_bad_hierarchies_are_refused():
    with pytest.raises(InputError, match="forest"):
        Layers(np.arange(3), [[0, 1], [1, 0]], [1.0, 2.0], 3)
    with pytest.raises(InputError, match="heights"):
        Layers(np.arange(3), [[0, 1]], [1.0, 2.0], 3)
    layers = Layers(np.arange(3), [[0, 1]], [1.0], 3)
    with pytest.raises(InputError, match=r"k must be in \[2, 3\]"):
        layers.partition_at(1)


def three_groups_of_three_blobs(n_per=60, seed=0):
    """Three well separated groups (40 apart) of three blobs (6 apart, unit spread)."""
    rng = np.random.default_rng(seed)
    groups = np.array([[0, 0], [40, 0], [20, 35]], float)
    offsets = np.array([[0, 0], [6, 0], [3, 5]], float)
    X = np.vstack([groups[g] + offsets[b] + rng.normal(size=(n_per, 2))
                   for g in range(3) for b in range(3)])
    blob = np.repeat(np.arange(9), n_per)
    return X, blob // 3, blob


def _nested(fine, coarse):
    pairs = np.unique(np.c_[fine, coarse], axis=0)
    return np.unique(pairs[:, 0]).size == pairs.shape[0]


#: The pipeline ``auto`` builds for these blobs (its rule 9: the density tree of the
#: features), spelt out so the quick tier does not pay ``auto``'s diagnostics.
DENSITY_OF_FEATURES = {"anchors": {"name": "sample"}, "graph": {"name": "one-anchor"},
                       "solver": {"name": "features"},
                       "rounding": {"name": "density", "min_cluster_size": 5,
                                    "structure_ratio": 0.25}}


@pytest.mark.parametrize("spec", [
    DENSITY_OF_FEATURES,
    pytest.param("auto", marks=pytest.mark.slow),  # ~3 s: auto's diagnostics
])
def test_density_layers_hold_the_groups_and_the_blobs(spec):
    X, group, blob = three_groups_of_three_blobs()
    model = GraphClustering(spec, random_state=0).fit(X)
    layers = model.layers_
    assert "density tree" in layers.source
    assert layers.chosen == model.n_clusters_
    assert adjusted_rand_score(model.partition_at(model.n_clusters_), model.labels_) == 1.0
    assert adjusted_rand_score(group, model.partition_at(3)) >= 0.95
    assert adjusted_rand_score(blob, model.partition_at(9)) >= 0.95
    found = model.cluster_layers_
    assert [len(np.unique(p)) for p in found] == list(range(layers.k_min, len(found) + 1))
    for coarse, fine in zip(found, found[1:]):
        assert _nested(fine, coarse)
    score = layers.stability  # the two levels stand out
    assert score[3] > 0.5 and score[9] > max(score[k] for k in (4, 5, 6, 7, 8))


def test_the_merge_tree_over_clusters_for_a_spectral_fit():
    X, group, blob = three_groups_of_three_blobs(n_per=40)
    model = GraphClustering("ncut", n_clusters=9, random_state=0).fit(X)
    layers = model.layers_
    assert "Ward" in layers.source and layers.ks == list(range(1, 10))
    assert adjusted_rand_score(model.partition_at(9), model.labels_) == 1.0
    found = model.cluster_layers_
    for coarse, fine in zip(found, found[1:]):
        assert _nested(fine, coarse)
    with pytest.raises(InputError, match=r"k must be in \[1, 9\]"):
        model.partition_at(10)


def test_layers_are_recomputed_after_a_refit():
    X, _, _ = three_groups_of_three_blobs(n_per=30)
    model = GraphClustering("ncut", n_clusters=3, random_state=0).fit(X)
    first = model.layers_
    assert model.layers_ is first  # kept
    model.set_params(n_clusters=4).fit(X)
    assert model.layers_ is not first and model.layers_.n_atoms == 4


def test_layers_is_public():
    assert graphclust.Layers is Layers


def test_genie_layers_are_its_cuts_at_every_k():
    """Genie's merge sequence: each layer is Genie's own partition with that k."""
    X, group, blob = three_groups_of_three_blobs(n_per=40)
    model = GraphClustering("genie", n_clusters=3, random_state=0).fit(X)
    layers = model.layers_
    assert "Genie" in layers.source and layers.k_min == 1
    assert adjusted_rand_score(model.partition_at(3), model.labels_) == 1.0
    for k in (2, 9):
        refit = GraphClustering("genie", n_clusters=k, random_state=0).fit(X)
        assert adjusted_rand_score(model.partition_at(k), refit.labels_) == 1.0
    assert adjusted_rand_score(blob, model.partition_at(9)) >= 0.95


def test_on_sample_layers_carry_the_sample_tree_to_every_row():
    """The manifold family fits its tree on a sample and places the other rows: every
    row gets an atom inside its own cluster, so the layers nest and labels_ is one."""
    X, group, blob = three_groups_of_three_blobs(n_per=40)
    spec = {"anchors": {"name": "sample", "n_anchors": 200},
            "graph": {"name": "sample-knn", "n_neighbors": 3},
            "adapter": {"name": "on-sample",
                        "graph": {"name": "fuzzy-knn", "n_neighbors": 8, "method": "exact"},
                        "rounding": {"name": "density", "min_cluster_size": 5}},
            "solver": {"name": "features"}, "rounding": {"name": "argmax"}}
    model = GraphClustering(spec, n_clusters=3, random_state=0).fit(X)
    layers = model.layers_
    assert "sample rows" in layers.source and layers.n_atoms >= 3
    assert (layers.atoms >= 0).all()
    assert adjusted_rand_score(model.partition_at(3), model.labels_) == 1.0
    found = layers.layers()
    for (_, _, coarse), (_, _, fine) in zip(found, found[1:]):
        assert _nested(fine, coarse)
    parent = layers.parent_of(layers.n_atoms, 3)  # each atom's group at k = 3
    fine = model.partition_at(layers.n_atoms)
    assert np.array_equal(parent[fine], model.partition_at(3))


def test_ensemble_layers_merge_the_consensus_clusters():
    X, group, _ = three_groups_of_three_blobs(n_per=30)
    spec = {"ensemble": {"members": [{"preset": "ncut", "n_clusters": 9},
                                     {"preset": "ncut", "n_clusters": 6}],
                         "consensus": {"name": "tcut"}}}
    model = GraphClustering(spec, n_clusters=6, random_state=0).fit(X)
    layers = model.layers_
    assert "membership rows" in layers.source and layers.ks == list(range(1, 7))
    assert adjusted_rand_score(model.partition_at(6), model.labels_) == 1.0
    found = model.cluster_layers_
    for coarse, fine in zip(found, found[1:]):
        assert _nested(fine, coarse)


def test_the_finest_layer_scores_from_where_its_atoms_exist():
    # merges at 2, 3, 10 over 4 atoms: with the atoms all there by height 1 the finest
    # layer lasts from 1 to 2 (.5); without a base it scores 0; a base above the first
    # merge means the atoms never all coexist: 0
    np.testing.assert_allclose(persistence([2.0, 3.0, 10.0], 4)[3], 0.0)
    np.testing.assert_allclose(persistence([2.0, 3.0, 10.0], 4, base=1.0)[3], 0.5)
    np.testing.assert_allclose(persistence([2.0, 3.0, 10.0], 4, base=2.5)[3], 0.0)
