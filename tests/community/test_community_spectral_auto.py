"""The regularised spectral embedding (``spectral`` with ``tau``) against a dense
eigendecomposition, and graph ``auto``'s rules on planted partitions."""

from __future__ import annotations

import math
import warnings

import graphclust
import numpy as np
import pytest
import scipy.sparse as sp
from graphclust import AffinityGraph, Context, GraphClustering
from graphclust_plugins.common.solver_spectral import SpectralEmbedding
from graphclust_plugins.community.graph_auto import (
    SMALL_GRAPH_STARTS,
    graph_auto,
    graph_auto_spec,
    graph_profile,
)
from sklearn.metrics import normalized_mutual_info_score


def planted(n, blocks, p_in, p_out, seed, weighted=False):
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % blocks)
    P = np.where(y[:, None] == y[None, :], p_in, p_out)
    upper = np.triu(rng.random((n, n)) < P, k=1).astype(np.float64)
    if weighted:
        upper *= rng.uniform(0.5, 2.0, upper.shape)
    return sp.csr_array(upper + upper.T), y


def dense_reference(A, tau, q):
    """The ``q`` leading eigenvectors of ``D_τ^{-1/2} A D_τ^{-1/2}`` by dense ``eigh``."""
    A = A.toarray()
    s = 1.0 / np.sqrt(A.sum(axis=1) + tau)
    vals, vecs = np.linalg.eigh(s[:, None] * A * s[None, :])
    order = np.argsort(-vals)[:q]
    return vals[order], vecs[:, order]


@pytest.mark.parametrize("tau", ["mean-degree", 0.5, 7.0])
def test_regularised_embedding_spans_the_dense_eigenvectors(tau):
    A, _ = planted(80, 3, 0.3, 0.05, seed=0, weighted=True)
    A = sp.lil_array(A)
    A[5, :] = 0
    A[:, 5] = 0  # an isolated vertex: a zero row
    A = sp.csr_array(A)
    graph = AffinityGraph(A)
    solver = SpectralEmbedding(tau=tau, drop_trivial=False, normalize_rows=False)
    t = graph.degrees.mean() if tau == "mean-degree" else tau
    assert solver.degree_shift(graph) == pytest.approx(t)
    assert SpectralEmbedding(tau=tau).solve(graph, None, 3, Context(seed=0)).info["tau"] == t
    sol = solver.solve(graph, None, 3, Context(seed=0))
    vals, U = dense_reference(A, t, 3)
    np.testing.assert_allclose(sol.info["eigenvalues"], vals, atol=1e-8)
    E = sol.embedding
    np.testing.assert_allclose(E @ E.T, U @ U.T, atol=1e-8)  # the same subspace
    assert np.all(E[5] == 0)
    assert vals[0] < 1.0  # regularised: the leading eigenvalue is below 1


def test_tau_zero_is_the_normalised_cut_embedding():
    A, _ = planted(60, 3, 0.3, 0.05, seed=1)
    graph = AffinityGraph(A)
    plain = SpectralEmbedding(drop_trivial=False).solve(graph, None, 3, Context(seed=0))
    zero = SpectralEmbedding(tau=0.0, drop_trivial=False).solve(graph, None, 3,
                                                                Context(seed=0))
    np.testing.assert_array_equal(plain.embedding, zero.embedding)


def test_tau_on_an_anchor_graph_is_refused_by_name():
    Z = sp.csr_array(np.eye(6, 2) + np.eye(6, 2, k=-3))
    with pytest.raises(graphclust.InputError, match="tau='mean-degree'.*affinity graph"):
        SpectralEmbedding(tau="mean-degree").solve(graphclust.AnchorGraph(Z), None, 2,
                                                   Context(seed=0))


def test_tau_checked_as_a_parameter():
    problems = SpectralEmbedding(tau=-1.0).check_params()
    assert [p for p, _ in problems] == ["tau"]
    assert SpectralEmbedding(tau="median").check_params()


def test_profile_reads_degrees_without_the_diagonal():
    A = sp.csr_array(np.array([[1.0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0]]))
    p = graph_profile(A, None)
    assert (p.n, p.entries, p.isolated) == (4, 4, 1)
    assert p.mean_degree == 1.0
    assert p.degree_spread == pytest.approx(np.std([1, 2, 1, 0]) / 1.0)


def test_rules_follow_the_mean_degree_against_log_n():
    sparse, _ = planted(400, 4, 0.025, 0.004, seed=2)  # mean degree ~ 3 < ln 400 ~ 6
    dense, _ = planted(400, 4, 0.2, 0.02, seed=2)  # mean degree ~ 26
    assert graph_profile(sparse).mean_degree < math.log(400) < graph_profile(dense).mean_degree
    assert graph_auto(sparse, 4).spec["solver"] == {
        "name": "spectral", "tau": "mean-degree", "drop_trivial": False,
        "normalize_rows": True}
    for A, k in ((dense, 4), (sparse, None), (dense, None)):
        choice = graph_auto(A, k)
        assert choice.spec["solver"]["name"] == "leiden"
        # 400 vertices: a small graph, several starts when k is estimated
        assert choice.spec.get("starts", 1) == (SMALL_GRAPH_STARTS if k is None else 1)
        assert choice.k_max == math.ceil(math.sqrt(graph_profile(A).entries))
    for A, k in ((dense, 4), (sparse, 4), (dense, None)):
        graphclust.compose(graph_auto_spec(A, k))  # every spec composes


def direct_leiden_nmi(A, y, seed):
    import igraph
    import leidenalg

    upper = sp.triu(A, k=1).tocoo()
    g = igraph.Graph(n=A.shape[0], edges=list(zip(upper.row.tolist(), upper.col.tolist())))
    part = leidenalg.find_partition(g, leidenalg.ModularityVertexPartition, seed=seed)
    return normalized_mutual_info_score(y, part.membership)


def test_leiden_preset_matches_leiden_on_a_planted_partition_without_k():
    A, y = planted(400, 8, 0.2, 0.03, seed=3)  # mean degree ~ 19, mixing ~ 0.4
    model = GraphClustering("leiden", graph=A, k_max=400, random_state=0)
    ours = normalized_mutual_info_score(y, model.fit(np.arange(400.0)[:, None]).labels_)
    assert abs(ours - direct_leiden_nmi(A, y, 0)) <= 0.02
    assert ours > 0.8


@pytest.mark.slow  # five iterated Leiden starts (~2.5 s); the leiden preset's is the fast one
def test_graph_auto_matches_leiden_on_a_planted_partition_without_k():
    A, y = planted(400, 8, 0.2, 0.03, seed=3)  # mean degree ~ 19, mixing ~ 0.4
    choice = graph_auto(A, None)
    X = np.arange(400.0)[:, None]
    model = GraphClustering(choice.spec, graph=A, k_max=choice.k_max, random_state=0).fit(X)
    ours = normalized_mutual_info_score(y, model.labels_)
    assert ours >= direct_leiden_nmi(A, y, 0) - 0.02
    assert ours > 0.8


@pytest.mark.parametrize(("p_in", "p_out", "solver"), [(0.056, 0.0016, "spectral"),
                                                       (0.2, 0.02, "leiden")])
def test_graph_auto_hits_a_given_k(p_in, p_out, solver):
    A, y = planted(400, 5, p_in, p_out, seed=4)  # mean degree ~ 5 and ~ 22
    X = np.arange(400.0)[:, None]
    spec = graph_auto_spec(A, 5)
    assert spec["solver"]["name"] == solver
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", graphclust.DisconnectedGraphWarning)
        labels = GraphClustering(spec, graph=A, n_clusters=5, random_state=0).fit(X).labels_
    assert np.unique(labels).size == 5
    assert normalized_mutual_info_score(y, labels) > 0.8


@pytest.mark.parametrize("k", [None, 4])
def test_rule_over_the_data_profile_of_the_adjacency_chooses_as_graph_auto(k):
    from graphclust_plugins.community.graph_auto import graph_auto_rule

    for A in (planted(400, 4, 0.025, 0.004, seed=2)[0], planted(400, 4, 0.2, 0.02, seed=2)[0]):
        spec = graph_auto_rule(graphclust.profile_data(A, k))
        assert spec.pop("summary").startswith(f"graph auto rule {graph_auto(A, k).rule}: ")
        assert spec == graph_auto_spec(A, k)
    with pytest.raises(graphclust.InputError, match="square adjacency"):
        graph_auto_rule(graphclust.profile_data(np.ones((10, 3)), k))
