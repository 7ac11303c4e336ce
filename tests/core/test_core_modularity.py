"""Newman–Girvan modularity of a partition, both graph kinds, against the dense formula."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import graphclust
from graphclust import AffinityGraph, AnchorGraph, modularity


def dense_modularity(W: np.ndarray, labels: np.ndarray) -> float:
    """``1/2m Σ_ij (W_ij − d_i d_j / 2m) δ(c_i, c_j)``, the textbook double sum."""
    d = W.sum(axis=1)
    two_m = d.sum()
    q = 0.0
    for i in range(W.shape[0]):
        for j in range(W.shape[0]):
            if labels[i] == labels[j]:
                q += W[i, j] - d[i] * d[j] / two_m
    return q / two_m


def random_affinity(rng, n, density=0.3):
    A = sp.random(n, n, density=density, random_state=rng, format="csr")
    A = A + A.T
    A.setdiag(rng.random(n) * (rng.random(n) < 0.3))  # a few self loops
    return AffinityGraph(A)


def random_anchor(rng, n, m):
    Z = rng.random((n, m)) * (rng.random((n, m)) < 0.5)
    Z[np.arange(n), rng.integers(0, m - 1, n)] += 0.1  # every point has an anchor
    Z[:, -1] = 0.0  # an anchor no point chose: it adds nothing to W
    Z /= Z.sum(axis=1, keepdims=True)
    return AnchorGraph(sp.csr_array(Z))


@pytest.mark.parametrize("kind", ["affinity", "anchor"])
@pytest.mark.parametrize("seed", range(4))
def test_matches_the_dense_double_sum(kind, seed):
    rng = np.random.default_rng(seed)
    n = 23
    g = random_affinity(rng, n) if kind == "affinity" else random_anchor(rng, n, 6)
    labels = rng.integers(-1, 4, n)  # -1 is one more cluster
    assert modularity(g, labels) == pytest.approx(dense_modularity(g.to_dense(), labels),
                                                  rel=1e-10, abs=1e-12)


def test_two_cliques_joined_by_one_edge():
    # the worked case: two triangles and a bridge, m = 7 edges
    A = np.zeros((6, 6))
    for i, j in [(0, 1), (0, 2), (1, 2), (3, 4), (3, 5), (4, 5), (2, 3)]:
        A[i, j] = A[j, i] = 1.0
    g = AffinityGraph(A)
    # inside: 6 of 7 edges; each side has degree sum 7 of 14: Q = 6/7 - 2 * (1/2)^2
    assert modularity(g, np.array([0, 0, 0, 1, 1, 1])) == pytest.approx(6 / 7 - 0.5)
    assert modularity(g, np.array([0, 0, 0, 1, 1, 1])) > modularity(g, np.array([0, 0, 1, 1, 0, 1]))


def test_degenerate_cases():
    assert modularity(AffinityGraph(sp.csr_array((4, 4))), np.array([0, 1, 0, 1])) == 0.0
    g = random_affinity(np.random.default_rng(0), 10)
    assert modularity(g, np.zeros(10, dtype=int)) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="one entry per point"):
        modularity(g, np.zeros(9, dtype=int))


def test_anchor_graph_is_not_formed_densely(monkeypatch):
    g = random_anchor(np.random.default_rng(1), 30, 5)
    monkeypatch.setattr(AnchorGraph, "to_dense", lambda self: pytest.fail("W formed"))
    assert -0.5 <= modularity(g, np.arange(30) % 3) <= 1.0


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 14), seed=st.integers(0, 2**16), k=st.integers(1, 5),
       kind=st.sampled_from(["affinity", "anchor"]))
def test_bounded_and_invariant_to_renaming(n, seed, k, kind):
    rng = np.random.default_rng(seed)
    g = random_affinity(rng, n, 0.5) if kind == "affinity" else random_anchor(rng, n, 4)
    labels = rng.integers(0, k, n)
    q = modularity(g, labels)
    assert -0.5 - 1e-12 <= q <= 1.0
    perm = rng.permutation(k) + 7  # other names, same partition
    assert modularity(g, perm[labels]) == pytest.approx(q, abs=1e-12)
    assert graphclust.modularity(g, labels) == g.modularity(labels)
