"""The ``leiden`` solver against leidenalg called directly, k given and estimated, seeds.

The graphs are planted partitions (a stochastic block model drawn with NumPy): blocks of
equal size, ``p_in`` inside, ``p_out`` between.
"""

from __future__ import annotations

import itertools
import warnings

import graphclust
import igraph
import leidenalg
import numpy as np
import pytest
import scipy.sparse as sp
from graphclust import AffinityGraph, Context, GraphClustering
from graphclust_plugins.community._leiden import attach_isolated, membership_with_k, merge_to_k
from graphclust_plugins.community.solver_leiden import LeidenSolver, ResolutionGapWarning
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score


def planted(n=300, blocks=6, p_in=0.12, p_out=0.01, seed=0):
    """A symmetric 0/1 planted-partition adjacency (CSR, no diagonal) and the blocks."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(blocks), n // blocks)
    rng.shuffle(y)
    P = np.where(y[:, None] == y[None, :], p_in, p_out)
    upper = np.triu(rng.random((n, n)) < P, k=1)
    A = (upper | upper.T).astype(np.float64)
    return sp.csr_array(A), y


def direct_leiden(A, resolution, seed, n_iterations=2):
    """leidenalg as a user calls it: the upper triangle as an edge list, weights."""
    upper = sp.triu(sp.coo_array(A), k=1).tocoo()
    g = igraph.Graph(n=A.shape[0], edges=list(zip(upper.row.tolist(), upper.col.tolist())))
    g.es["weight"] = upper.data.tolist()
    part = leidenalg.find_partition(g, leidenalg.RBConfigurationVertexPartition,
                                    weights="weight", resolution_parameter=resolution,
                                    n_iterations=n_iterations, seed=seed)
    return np.asarray(part.membership)


def labels_of(solution):
    soft = solution.soft
    return (soft.toarray() if sp.issparse(soft) else np.asarray(soft)).argmax(axis=1)


def X_for(n):
    """Distinct rows beside a given graph (the graph is what is clustered)."""
    return np.arange(n, dtype=np.float64)[:, None]


@pytest.mark.parametrize("resolution", [0.5, 1.0, 2.0])
def test_partition_equals_leidenalg_called_directly(resolution):
    A, _ = planted(seed=1)
    graph, ctx = AffinityGraph(A), Context(seed=7)
    solver = LeidenSolver(resolution=resolution)
    sel = solver.estimate_k(graph, None, 1, graph.n - 1, ctx)
    got = labels_of(solver.solve(graph, None, sel.k, ctx))
    ref = direct_leiden(A, resolution, ctx.seed_for("solver.leiden"))
    assert adjusted_rand_score(ref, got) == 1.0
    assert sel.k == np.unique(ref).size
    assert sel.details["modularity"] == pytest.approx(graph.modularity(ref))


def test_no_k_estimated_by_modularity_through_the_estimator():
    A, y = planted(seed=2)
    model = GraphClustering("leiden", graph=A, random_state=0).fit(X_for(A.shape[0]))
    assert model.k_selection_.method == "modularity"
    assert model.n_clusters_ == np.unique(model.labels_).size == 6
    assert normalized_mutual_info_score(y, model.labels_) > 0.95


@pytest.mark.parametrize("k", [2, 3, 6, 9, 15])
def test_given_k_is_hit(k):
    A, _ = planted(seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResolutionGapWarning)
        model = GraphClustering("leiden", graph=A, n_clusters=k, random_state=0)
        labels = model.fit(X_for(A.shape[0])).labels_
    assert np.unique(labels).size == k
    assert set(labels.tolist()) == set(range(k))


@pytest.mark.slow  # two resolution searches (~1.5 s); test_given_k_is_hit is the fast sibling
def test_resolution_search_moves_the_resolution_the_right_way():
    A, _ = planted(seed=3)
    graph, ctx = AffinityGraph(A), Context(seed=0)
    few = LeidenSolver().solve(graph, None, 2, ctx).info["k_search"]
    many = LeidenSolver().solve(graph, None, 15, ctx).info["k_search"]
    assert few["resolution"] < 1.0 < many["resolution"]
    assert few["resolutions"][0] == many["resolutions"][0] == 1.0


def test_same_seed_same_labels_and_seed_reaches_leiden():
    A, _ = planted(n=240, blocks=4, p_in=0.08, p_out=0.03, seed=4)  # a noisy graph
    fits = [GraphClustering("leiden", graph=A, random_state=s)
            .fit(X_for(A.shape[0])).labels_ for s in (5, 5)]
    np.testing.assert_array_equal(fits[0], fits[1])
    graph = AffinityGraph(A)
    runs = set()
    for s in range(3):
        solver, ctx = LeidenSolver(), Context(seed=s)
        k = solver.estimate_k(graph, None, 1, 239, ctx).k
        runs.add(tuple(labels_of(solver.solve(graph, None, k, ctx))))
    assert len(runs) > 1  # the seed is what Leiden's randomness follows


def brute_merge(membership, A, k):
    """The obvious reference: try every pair, keep the merge of the highest modularity."""
    graph = AffinityGraph(A)
    lab = np.unique(membership, return_inverse=True)[1]
    while np.unique(lab).size > k:
        best, best_q = None, -np.inf
        for a, b in itertools.combinations(np.unique(lab), 2):
            trial = np.where(lab == b, a, lab)
            q = graph.modularity(trial)
            if q > best_q + 1e-12:
                best, best_q = trial, q
        lab = best
    return lab


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_greedy_merge_equals_brute_force_reference(seed):
    A, _ = planted(n=90, blocks=9, p_in=0.3, p_out=0.02, seed=seed)
    start = direct_leiden(A, 2.0, seed)
    for k in (1, 3, 5):
        got = merge_to_k(start, A, k)
        assert np.unique(got).size == k
        assert adjusted_rand_score(brute_merge(start, A, k), got) == 1.0


def test_unreachable_k_by_resolution_merges_and_warns():
    # two disjoint 4-cliques and two disjoint edges: four components, so no resolution
    # gives fewer than four communities; k = 2 needs merging across components
    blocks = [np.ones((4, 4)), np.ones((4, 4)), np.ones((2, 2)), np.ones((2, 2))]
    A = sp.csr_array(sp.block_diag(blocks) - sp.eye(12))
    graph, ctx = AffinityGraph(A), Context(seed=0)
    with pytest.warns(ResolutionGapWarning, match="merged down to 2"):
        sol = LeidenSolver(max_search=12).solve(graph, None, 2, ctx)
    labels = labels_of(sol)
    assert np.unique(labels).size == 2
    # least modularity lost: each clique stays whole, the two edges join each other
    # or a clique, never a clique split
    assert np.unique(labels[:4]).size == 1 and np.unique(labels[4:8]).size == 1


def test_isolated_vertices_join_the_largest_community_at_no_modularity_cost():
    A, _ = planted(n=120, blocks=3, seed=5)
    A = sp.lil_array(A)
    for v in (0, 50, 119):
        A[v, :] = 0
        A[:, v] = 0
    A = sp.csr_array(A)
    graph = AffinityGraph(A)
    raw = direct_leiden(A, 1.0, Context(seed=3).seed_for("solver.leiden"))
    moved = attach_isolated(raw, graph.degrees)
    assert graph.modularity(moved) == pytest.approx(graph.modularity(raw))
    largest = np.bincount(np.delete(raw, [0, 50, 119])).argmax()
    assert (moved[[0, 50, 119]] == largest).all()
    sel = LeidenSolver().estimate_k(graph, None, 1, 119, Context(seed=3))
    assert sel.k == np.unique(moved).size  # isolated vertices are no communities


def test_k_clipped_to_k_max_is_searched_and_said():
    A, _ = planted(seed=2)
    model = GraphClustering("leiden", graph=A, k_max=3, random_state=0)
    with pytest.warns(graphclust.KRangeWarning):
        model.fit(X_for(A.shape[0]))
    assert model.n_clusters_ == 3 == np.unique(model.labels_).size
    assert "outside [1, 3]" in model.k_selection_.rule


def test_search_stops_on_a_closed_bracket():
    calls = []

    def run(gamma):  # a count that jumps from 2 to 4 at gamma = 1.5
        calls.append(gamma)
        return np.arange(12) % (2 if gamma < 1.5 else 4)

    A = sp.csr_array(np.ones((12, 12)) - np.eye(12))
    membership, log = membership_with_k(run, A, 3, 1.0, 200)
    assert np.unique(membership).size == 3 and log.merged == 1
    assert len(calls) < 20  # stopped when the bracket closed, not at max_steps


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 25), st.integers(1, 8), st.integers(0, 2**31 - 1), st.data())
def test_merge_only_joins_communities_into_exactly_k(n, c, seed, data):
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < 0.3, k=1) * rng.uniform(0.1, 2.0, (n, n))
    A = sp.csr_array(upper + upper.T)
    membership = rng.integers(0, c, n)
    present = np.unique(membership).size
    k = data.draw(st.integers(1, present))
    merged = merge_to_k(membership, A, k)
    assert sorted(np.unique(merged).tolist()) == list(range(k))
    for label in np.unique(membership):  # a community is never split
        assert np.unique(merged[membership == label]).size == 1


def naive_merge(membership, A, k):
    """The greedy rule written plainly: every step recomputes every pair's gain."""
    codes = np.unique(membership, return_inverse=True)[1]
    c = codes.max() + 1
    M = sp.csr_array((np.ones(codes.size), (np.arange(codes.size), codes)), shape=(codes.size, c))
    E = (M.T @ A @ M).toarray()
    E /= max(E.sum(), 1e-300) if E.sum() > 0 else 1.0
    a = E.sum(axis=1)
    groups = [[i] for i in range(c)]
    while len(groups) > k:
        best = None
        for p, q in itertools.combinations(range(len(groups)), 2):
            e = E[np.ix_(groups[p], groups[q])].sum()
            gain = 2 * (e - a[groups[p]].sum() * a[groups[q]].sum())
            if best is None or gain > best[0]:
                best = (gain, p, q)
        _, p, q = best
        groups[p] += groups.pop(q)
    out = np.empty(c, dtype=np.int64)
    for g, members in enumerate(groups):
        out[members] = g
    return out[codes]


@settings(max_examples=30, deadline=None)
@given(st.integers(3, 30), st.integers(2, 10), st.integers(0, 2**31 - 1))
def test_cached_greedy_merge_equals_the_plain_greedy_rule(n, c, seed):
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((n, n)) < 0.3, k=1) * rng.uniform(0.5, 2.0, (n, n))
    A = sp.csr_array(upper + upper.T)  # continuous weights: no ties between pairs
    membership = rng.integers(0, c, n)
    k = max(1, np.unique(membership).size // 2)
    assert adjusted_rand_score(naive_merge(membership, A, k), merge_to_k(membership, A, k)) == 1


def test_more_components_than_can_be_merged_is_refused_by_name(monkeypatch):
    from graphclust_plugins.community import _leiden

    monkeypatch.setattr(_leiden, "MERGE_LIMIT", 3)  # six components, k = 2
    A = sp.csr_array(sp.block_diag([np.ones((3, 3)) - np.eye(3)] * 6))
    with pytest.raises(graphclust.InputError, match="6 connected components.*graph-spectral"):
        LeidenSolver(max_search=4).solve(AffinityGraph(A), None, 2, Context(seed=0))
