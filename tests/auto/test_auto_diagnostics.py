"""The diagnostics of ``auto`` v2 against slow obvious references (brute force over all
pairs, breadth-first search, loops over edges)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from graphclust_plugins.auto import _diagnostics as D


def _brute_knn(S, k):
    d = np.sqrt(((S[:, None, :] - S[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    idx = np.array([np.lexsort((np.arange(len(S)), row))[:k] for row in d])
    return idx, np.take_along_axis(d, idx, axis=1)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(4, 60), d=st.integers(1, 4), k=st.integers(1, 6), seed=st.integers(0, 99))
def test_knn_indices_match_brute_force(n, d, k, seed):
    S = np.random.default_rng(seed).standard_normal((n, d))
    k = min(k, n - 1)
    idx, dist = D.knn_indices(S, k, block=7)
    ridx, rdist = _brute_knn(S, k)
    np.testing.assert_allclose(dist, rdist, rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(idx, ridx)


def test_knn_indices_break_ties_by_the_lower_index():
    S = np.array([[0.0], [1.0], [-1.0], [2.0], [-2.0]])
    idx, _ = D.knn_indices(S, 2)
    assert idx[0].tolist() == [1, 2]


def _slow_two_nn(S):
    d = np.sqrt(((S[:, None, :] - S[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    logs = []
    for row in d:
        r = np.sort(row)
        if r[0] > 0:
            logs.append(np.log(r[1] / r[0]))
    return len(logs) / sum(logs)


@pytest.mark.parametrize("dim", [1, 2, 5])
def test_two_nn_dimension_matches_the_slow_formula_and_recovers_a_cube(dim):
    rng = np.random.default_rng(dim)
    S = rng.random((1500, dim))
    # embedded in 8 dimensions by a random rotation: the intrinsic dimension stays dim
    Q, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    E = np.c_[S, np.zeros((1500, 8 - dim))] @ Q
    est = D.two_nn_dimension(E)
    assert est == pytest.approx(_slow_two_nn(E), rel=1e-6)
    assert abs(est - dim) < 0.15 * dim + 0.1


def test_two_nn_dimension_ignores_duplicates_and_needs_three_points():
    S = np.r_[np.random.default_rng(0).random((200, 2)), np.zeros((5, 2))]
    assert np.isfinite(D.two_nn_dimension(S))
    assert np.isnan(D.two_nn_dimension(np.zeros((6, 2))))


def _bfs_components(A):
    n = A.shape[0]
    lab = -np.ones(n, dtype=int)
    c = 0
    for s in range(n):
        if lab[s] >= 0:
            continue
        stack = [s]
        lab[s] = c
        while stack:
            u = stack.pop()
            for v in np.flatnonzero(A[u]):
                if lab[v] < 0:
                    lab[v] = c
                    stack.append(v)
        c += 1
    return lab


@settings(max_examples=20, deadline=None)
@given(n=st.integers(6, 50), seed=st.integers(0, 50), k=st.integers(1, 4),
       min_size=st.integers(1, 10))
def test_knn_components_match_breadth_first_search(n, seed, k, min_size):
    rng = np.random.default_rng(seed)
    S = np.r_[rng.standard_normal((n // 2, 2)), rng.standard_normal((n - n // 2, 2)) + 20]
    idx, _ = D.knn_indices(S, min(k, n - 1))
    dense = np.zeros((n, n), dtype=bool)
    for i, row in enumerate(idx):
        dense[i, row] = dense[row, i] = True
    lab = _bfs_components(dense)
    sizes = np.bincount(lab)
    big, covered, labels = D.knn_components(idx, min_size)
    assert big == int((sizes >= min_size).sum())
    assert covered == pytest.approx(sizes[sizes >= min_size].sum() / n)
    # the same partition as the breadth-first search
    assert len(set(zip(lab.tolist(), labels.tolist()))) == sizes.size


def _slow_ncut(A, labels):
    A = A.toarray()
    total = 0.0
    for c in np.unique(labels):
        inside = labels == c
        vol = A[inside].sum()
        if vol > 0:
            total += A[np.ix_(inside, ~inside)].sum() / vol
    return total


@settings(max_examples=25, deadline=None)
@given(n=st.integers(3, 30), k=st.integers(1, 5), seed=st.integers(0, 99))
def test_normalized_cut_matches_the_slow_sum(n, k, seed):
    rng = np.random.default_rng(seed)
    W = sp.random(n, n, density=0.3, random_state=seed, format="csr")
    W = sp.csr_array(W + W.T)
    labels = rng.integers(0, k, n)
    assert D.normalized_cut(W, labels) == pytest.approx(_slow_ncut(W, labels), abs=1e-12)


def test_size_balance_and_mixture_parameters():
    assert D.size_balance(np.array([0, 0, 0, 1])) == pytest.approx(1 / 3)
    assert D.size_balance(np.array([5, 5, 7, 7])) == 1.0
    # k means, k symmetric d x d covariances, k - 1 weights
    assert D.mixture_parameters(3, 2) == 3 * 2 + 3 * 3 + 2
    assert D.mixture_parameters(1, 4) == 4 + 10


def test_mixture_gain_is_small_on_a_gaussian_mixture_and_large_on_rings():
    rng = np.random.default_rng(0)
    covs = [np.array([[3.0, 1.2], [1.2, 1.0]]), np.array([[0.5, 0.0], [0.0, 2.0]])]
    G = np.r_[rng.multivariate_normal((0, 0), covs[0], 800),
              rng.multivariate_normal((4, 1), covs[1], 800)]
    a = rng.uniform(0, 2 * np.pi, 1600)
    r = np.where(np.arange(1600) < 800, 1.0, 3.0) + 0.05 * rng.standard_normal(1600)
    R = np.c_[r * np.cos(a), r * np.sin(a)]
    assert D.mixture_gain(G, 2) < 0.05 < D.mixture_gain(R, 2)
    assert D.mixture_gain(G, 2) == D.mixture_gain(G, 2)  # deterministic for the seed


def _reference_kde_rows(train, test, h):
    """The Gaussian kernel estimate's log-density at every test row, by a loop over the
    test rows (log of the mean kernel value, with the normaliser (2π h²)^{-d/2})."""
    d = train.shape[1]
    out = np.empty(test.shape[0])
    for i, x in enumerate(test):
        q = -((train - x) ** 2).sum(1) / (2 * h * h)
        m = q.max()
        out[i] = m + np.log(np.exp(q - m).mean()) - 0.5 * d * np.log(2 * np.pi * h * h)
    return out


def test_kde_bandwidth_is_the_best_held_in_likelihood_on_the_grid():
    S = np.random.default_rng(3).standard_normal((300, 2)) * (1.0, 4.0)
    h = D.kde_bandwidth(S)
    fit, held = S[0::2], S[1::2]
    h0 = np.sqrt(np.mean(S.var(axis=0))) * len(S) ** (-1 / 6)
    grid = [h0 * f for f in D.KDE_BANDWIDTHS]
    scores = [_reference_kde_rows(fit, held, g).sum() for g in grid]
    assert h == pytest.approx(grid[int(np.argmax(scores))])


def test_kernel_excess_matches_a_hand_computed_paired_z():
    from sklearn.mixture import GaussianMixture

    rng = np.random.default_rng(4)
    S = np.r_[rng.standard_normal((150, 2)), rng.standard_normal((150, 2)) + 5]
    train, test = S[0::2], S[1::2]
    kde = _reference_kde_rows(train, test, D.kde_bandwidth(train))
    gmm = GaussianMixture(2, covariance_type="full", n_init=3, reg_covar=1e-6,
                          random_state=0).fit(train).score_samples(test)
    diff = kde - gmm
    z = diff.mean() / (diff.std(ddof=1) / np.sqrt(diff.size))
    assert D.kernel_excess(S, 2) == pytest.approx(z, rel=1e-6)


def test_kernel_excess_accepts_gaussians_and_rejects_rings_whose_gain_is_small():
    rng = np.random.default_rng(0)
    covs = [np.array([[3.0, 1.2], [1.2, 1.0]]), np.array([[0.5, 0.0], [0.0, 2.0]])]
    G = np.r_[rng.multivariate_normal((0, 0), covs[0], 800),
              rng.multivariate_normal((4, 1), covs[1], 800)]
    assert D.kernel_excess(G, 2) <= 0
    # four concentric rings: 8 Gaussians hardly beat 4 (the gain test passes) ...
    a = rng.uniform(0, 2 * np.pi, 1600)
    r = 1.0 + np.arange(1600) % 4 + 0.08 * rng.standard_normal(1600)
    R = np.c_[r * np.cos(a), r * np.sin(a)]
    assert D.mixture_gain(R, 4) < 0.05
    # ... but a kernel estimate describes them far better than 4 Gaussians
    assert D.kernel_excess(R, 4) > 5
