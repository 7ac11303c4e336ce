"""The ``tcut`` consensus part (U-SENC) and the ``usenc`` preset."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

import graphclust as gc
from graphclust import Context, Memberships
from graphclust._ensemble import Ensemble, clip_range
from graphclust_plugins.uspec.consensus_tcut import TcutConsensus


def noisy_members(n, k_true, sizes, flip, seed):
    """Members that each see a planted partition through their own k_i and some noise."""
    rng = np.random.default_rng(seed)
    truth = np.arange(n) % k_true
    labels = []
    for k in sizes:  # k a multiple of k_true: each true cluster split into k / k_true
        split = k // k_true
        lab = truth * split + rng.integers(0, split, n)
        noisy = rng.random(n) < flip
        lab[noisy] = rng.integers(0, k, noisy.sum())
        labels.append(lab)
    return truth, Memberships.from_labels(labels, sizes)


def dense_reference(B, k, scaled):
    """Point coordinates from the full (n + p) bipartite Ncut problem, solved densely.

    The k smallest generalised eigenvectors f = (u, v) of (D - W) f = γ D f, each scaled
    so that vᵀ D_Y v = 1; the coordinates are u (``scaled``) or u (1 - γ).
    """
    Bd = B.toarray()
    n, p = Bd.shape
    W = np.block([[np.zeros((n, n)), Bd], [Bd.T, np.zeros((p, p))]])
    D = np.diag(W.sum(axis=1))
    gamma, F = sla.eigh(D - W, D, subset_by_index=[0, k - 1])
    U, V = F[:n], F[n:]
    dy = Bd.sum(axis=0)
    U = U / np.sqrt((V * V * dy[:, None]).sum(axis=0))[None, :]
    return gamma, (U if scaled else U * (1.0 - gamma)[None, :])


def align_signs(ref, ours):
    signs = np.sign((ref * ours).sum(axis=0))
    return ref * signs[None, :]


@pytest.mark.parametrize("scaled", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tcut_consensus_matches_dense_reference(seed, scaled):
    truth, mem = noisy_members(n=60, k_true=3, sizes=(3, 6, 6, 9), flip=0.2, seed=seed)
    k = 3
    part = TcutConsensus(eigen_scaling=scaled)
    labels = part.combine(mem, k, Context(seed=7))
    gamma, ref = dense_reference(mem.matrix, k, scaled)
    assert np.all(np.diff(gamma) > 1e-6), "the check needs distinct eigenvalues"
    np.testing.assert_allclose(1.0 - np.sqrt(1.0 - part.eigenvalues_), gamma, atol=1e-9)
    ours = part._coordinates(mem.matrix)
    np.testing.assert_allclose(ours, align_signs(ref, ours), atol=1e-8)
    # the rounding sees the same rows, so it makes the same labels
    from graphclust_plugins.common.rounding_kmeans import KMeansRounding

    ref_labels = KMeansRounding(n_init=3, max_iter=100, normalize_rows=True).round(
        gc.Solution(embedding=align_signs(ref, ours)), k, Context(seed=7))
    np.testing.assert_array_equal(labels, ref_labels)
    assert adjusted_rand_score(truth, labels) > 0.8  # noisy members: a sanity bound


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_identical_members_give_their_partition(data):
    k = data.draw(st.integers(1, 5))
    n = data.draw(st.integers(k, 40))
    m = data.draw(st.integers(1, 4))
    extra = data.draw(st.lists(st.integers(0, k - 1), min_size=n - k, max_size=n - k))
    labels = np.array(list(range(k)) + extra)
    labels = labels[np.random.default_rng(n).permutation(n)]
    mem = Memberships.from_labels([labels] * m, [k] * m)
    out = TcutConsensus().combine(mem, k, Context(seed=0))
    assert out.shape == (n,)
    assert adjusted_rand_score(labels, out) == 1.0 or k == 1
    assert set(out.tolist()) == set(range(k))


def test_assign_returns_training_labels_and_tolerates_unplaced_members():
    truth, mem = noisy_members(n=90, k_true=3, sizes=(3, 6, 3), flip=0.1, seed=4)
    part = TcutConsensus()
    labels = part.combine(mem, 3, Context(seed=1))
    np.testing.assert_array_equal(part.assign(mem), labels)
    # one member could not place the points: its block is empty, the others decide
    rows = [mem.member_labels(i) for i in range(mem.n_members)]
    rows[2] = np.full(mem.n_samples, -1)
    partial = Memberships.from_labels(rows, mem.sizes)
    assert np.mean(part.assign(partial) == labels) >= 0.85
    nobody = Memberships.from_labels([np.full(2, -1)] * 3, mem.sizes)
    assert part.assign(nobody).shape == (2,)


def test_extra_components_is_n_components_beyond_k():
    _, mem = noisy_members(n=60, k_true=3, sizes=(3, 6, 6, 9), flip=0.2, seed=5)
    extra = TcutConsensus(extra_components=2)
    fixed = TcutConsensus(n_components=5)
    np.testing.assert_array_equal(extra.combine(mem, 3, Context(seed=2)),
                                  fixed.combine(mem, 3, Context(seed=2)))
    assert extra.cluster_embedding_.shape[1] == 5
    assert TcutConsensus().combine(mem, 3, Context(seed=2)) is not None
    assert [p.loc for p in gc.validate_spec({"ensemble": {
        "members": ["uspec"], "consensus": {"name": "tcut", "extra_components": -1}}})] == [
        "ensemble.consensus.extra_components"]


def test_assign_errors():
    _, mem = noisy_members(n=30, k_true=2, sizes=(2, 4), flip=0.0, seed=0)
    part = TcutConsensus()
    with pytest.raises(RuntimeError, match="call combine"):
        part.assign(mem)
    part.combine(mem, 2, Context(seed=0))
    other = Memberships.from_labels([np.zeros(4, int)], [2])
    with pytest.raises(ValueError, match="base clusters"):
        part.assign(other)


def test_tcut_is_registered_as_a_consensus():
    registry = gc.get_registry()
    assert registry.consensus.get("tcut") is TcutConsensus
    assert TcutConsensus.can_assign()
    assert [p.loc for p in gc.validate_spec({"ensemble": {
        "members": ["uspec"], "consensus": {"name": "tcut", "n_init": 0}}})] == [
        "ensemble.consensus.n_init"]


def test_usenc_preset_shape():
    ens = gc.compose("usenc")
    assert isinstance(ens, Ensemble) and len(ens.members) == 20
    assert all(m.n_clusters == (20, 60) for m in ens.members)
    assert all(m.pipeline.solver.name == "tcut" and m.pipeline.anchors.name == "hybrid"
               for m in ens.members)
    assert ens.consensus.name == "tcut"
    assert len({id(m.pipeline) for m in ens.members}) == 20
    # members round as USENC.m does (one k-means run, at most 5 iterations), the
    # consensus as its Tcut (3 restarts, at most 100 iterations)
    assert all((m.pipeline.rounding.n_init, m.pipeline.rounding.max_iter) == (1, 5)
               and m.pipeline.rounding.init == "random" and m.pipeline.rounding.normalize_rows
               for m in ens.members)
    assert (ens.consensus.n_init, ens.consensus.max_iter) == (3, 100)
    # each member is one draw, not the uspec preset's three starts
    assert all(m.pipeline.starts == 1 for m in ens.members)


def test_usenc_end_to_end_small_data():
    X, y = make_blobs(n_samples=300, centers=4, n_features=6, cluster_std=1.5, random_state=0)
    model = gc.GraphClustering("usenc", n_clusters=4, random_state=0).fit(X, y)
    lo, hi = clip_range(20, 60, 300, 4)
    assert hi == math.isqrt(300)
    assert all(lo <= k <= hi for k in model.result_.member_n_clusters)
    assert len(set(model.result_.member_seeds)) == 20
    assert model.scores_["acc"] > 0.95
    assert np.mean(model.predict(X) == model.labels_) > 0.98
