"""The ``leiden`` solver's ``split`` pass: each community re-optimised under the whole
graph's modularity, a split kept only where the modularity rises.

References: the modularity of :func:`graphclust.modularity` (computed over the whole
graph, nothing of the split's own bookkeeping), and the brute force over every
two-way split of a small community.
"""

from __future__ import annotations

import itertools

import graphclust
import numpy as np
import pytest
import scipy.sparse as sp
from graphclust import GraphClustering
from graphclust_plugins.community._split import split_communities, split_quality
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score


def planted(sizes, p_in, p_out, seed):
    """A symmetric 0/1 planted-partition adjacency (CSR, no diagonal) and the blocks."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(sizes)), sizes)
    P = np.where(y[:, None] == y[None, :], p_in, p_out)
    upper = np.triu(rng.random((y.size, y.size)) < P, k=1)
    return sp.csr_array((upper | upper.T).astype(np.float64)), y


def degrees_of(A):
    return np.asarray(A.sum(axis=1)).ravel()


def test_a_community_joining_two_blocks_is_split_into_the_blocks():
    A, y = planted([40, 40], 0.3, 0.01, seed=0)
    joined = np.zeros(y.size, dtype=np.int64)
    out, splits = split_communities(A, joined, degrees_of(A), 1.0, seed=0, n_iterations=2)
    assert splits == 1
    assert adjusted_rand_score(y, out) == 1.0
    assert _modularity(A, out, 1.0) > _modularity(A, joined, 1.0)


def test_the_planted_partition_is_left_as_it_is():
    A, y = planted([30, 30, 30], 0.4, 0.02, seed=1)
    out, splits = split_communities(A, y, degrees_of(A), 1.0, seed=0, n_iterations=2)
    assert splits == 0
    np.testing.assert_array_equal(out, y)


@pytest.mark.parametrize("seed", range(4))
def test_split_quality_is_the_whole_graphs_modularity_change(seed):
    """``q(P) − q({C})`` over ``2m`` equals the change of the whole graph's modularity
    when ``C`` is split into ``P`` (the other communities fixed), at any resolution."""
    rng = np.random.default_rng(seed)
    A, _ = planted([15, 15, 10], 0.3, 0.05, seed=seed)
    A = sp.csr_array(A.multiply(rng.uniform(0.5, 2.0, size=A.shape)))
    A = sp.csr_array((A + A.T) / 2)
    deg = degrees_of(A)
    base = rng.integers(0, 3, size=A.shape[0])
    members = np.flatnonzero(base == 0)
    parts = rng.integers(0, 3, size=members.size)
    after = base.copy()
    after[members] = 10 + parts
    sub = A[members][:, members]
    for gamma in (0.5, 1.0, 2.0):
        q = (split_quality(sub, parts, deg[members], gamma, deg.sum())
             - split_quality(sub, np.zeros(members.size, int), deg[members], gamma, deg.sum()))
        change = _modularity(A, after, gamma) - _modularity(A, base, gamma)
        assert q / deg.sum() == pytest.approx(change, abs=1e-12)


def _modularity(A, labels, gamma):
    """The slow obvious modularity at resolution γ: ``1/2m Σ_ij (A_ij − γ k_i k_j / 2m)
    δ(c_i, c_j)``, dense."""
    D = A.toarray()
    k = D.sum(axis=1)
    two_m = k.sum()
    if two_m == 0:  # no edge: every partition has modularity 0
        return 0.0
    same = labels[:, None] == labels[None, :]
    return float(((D - gamma * np.outer(k, k) / two_m) * same).sum() / two_m)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(4, 30), p=st.floats(0.05, 0.6), c=st.integers(1, 4),
       seed=st.integers(0, 2**16), gamma=st.sampled_from([0.5, 1.0, 2.0]))
def test_split_never_lowers_the_modularity(n, p, c, seed, gamma):
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < p, k=1)
    W = upper * rng.uniform(0.1, 3.0, size=(n, n))
    A = sp.csr_array(W + W.T)
    labels = rng.integers(0, c, size=n)
    out, splits = split_communities(A, labels, degrees_of(A), gamma, seed=seed % 97,
                                    n_iterations=2)
    before, after = _modularity(A, labels, gamma), _modularity(A, out, gamma)
    assert after >= before - 1e-12
    # every new community lies inside one old community: the pass only splits
    for new in np.unique(out):
        assert np.unique(labels[out == new]).size == 1
    assert (splits == 0) == (np.unique(out).size == np.unique(labels).size)


def test_a_kept_split_is_no_worse_than_the_best_two_way_split_by_brute_force():
    """On a community of 12 vertices (two blocks of 6), the split the pass keeps has at
    least the modularity of the best of all 2**11 two-way splits."""
    A, y = planted([6, 6], 0.9, 0.1, seed=3)
    deg = degrees_of(A)
    joined = np.zeros(12, dtype=np.int64)
    out, _ = split_communities(A, joined, deg, 1.0, seed=0, n_iterations=-1)
    best = max(_modularity(A, np.array((0,) + bits), 1.0)
               for bits in itertools.product((0, 1), repeat=11))
    assert _modularity(A, out, 1.0) >= best - 1e-12


def test_the_solver_option_reaches_the_fit_and_is_deterministic():
    A, y = planted([40, 40, 40], 0.3, 0.01, seed=4)
    spec = {"graph": {"name": "knn"}, "solver": {"name": "leiden", "split": True},
            "rounding": {"name": "argmax"}}
    a = GraphClustering(spec, graph="precomputed", random_state=0).fit(A)
    b = GraphClustering(spec, graph="precomputed", random_state=0).fit(A)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert adjusted_rand_score(y, a.labels_) == 1.0


def test_split_must_be_a_boolean():
    with pytest.raises(graphclust.SpecError, match="split"):
        GraphClustering({"graph": {"name": "knn"},
                         "solver": {"name": "leiden", "split": "yes"},
                         "rounding": {"name": "argmax"}}, graph="precomputed"
                        ).fit(sp.eye(4, format="csr"))
