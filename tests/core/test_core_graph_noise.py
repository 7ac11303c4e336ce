"""The noise rule of a graph input (graphclust.numerics.graph_noise) against the rule
written as a loop: node ``i`` labelled ``c`` is noise when it has no edge, or its edge
weight into ``c`` is below ``d_i vol(c) / vol(G)``."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from graphclust.numerics.graph_noise import cluster_volume_shares, graph_outliers
from hypothesis import given, settings
from hypothesis import strategies as st


def loop_reference(W: np.ndarray, labels: np.ndarray) -> list[bool]:
    n = len(labels)
    degree = [sum(W[i]) for i in range(n)]
    total = sum(degree)
    flags = []
    for i in range(n):
        volume = sum(degree[j] for j in range(n) if labels[j] == labels[i])
        own = sum(W[i, j] for j in range(n) if labels[j] == labels[i])
        flags.append(degree[i] == 0 or own < degree[i] * volume / total)
    return flags


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 12))
    k = draw(st.integers(1, 4))
    cells = draw(st.lists(st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.0]),
                          min_size=n * n, max_size=n * n))
    W = np.triu(np.array(cells).reshape(n, n), 1)
    labels = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    return W + W.T, labels, k


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_graph_outliers_equals_the_loop(case):
    W, labels, k = case
    flags, shares = graph_outliers(sp.csr_array(W), labels, k)
    assert flags.tolist() == loop_reference(W, labels)
    total = W.sum()
    if total > 0:
        np.testing.assert_allclose(shares.sum(), 1.0)
        np.testing.assert_allclose(shares, [W[labels == c].sum() / total for c in range(k)])
    else:
        assert flags.all() and not shares.any()


def test_one_cluster_flags_only_isolated_nodes():
    W = np.ones((5, 5)) - np.eye(5)
    W[4] = W[:, 4] = 0.0
    flags, _ = graph_outliers(sp.csr_array(W), np.zeros(5, dtype=int), 1)
    assert flags.tolist() == [False, False, False, False, True]


def test_noise_labelled_nodes_hold_no_cluster_volume():
    W = np.ones((4, 4)) - np.eye(4)
    shares = cluster_volume_shares(sp.csr_array(W), np.array([0, 0, 1, -1]), 2)
    np.testing.assert_allclose(shares, [0.5, 0.25])
