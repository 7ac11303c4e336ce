"""``predict`` / ``predict_proba`` after ``graph="precomputed"`` (docs/graphs.rst).

New nodes come as rows of their edge weights to the fitted nodes (an ``m x n`` matrix);
each gets the weighted vote of its fitted neighbours. The reference is the rule written
as a loop over the rows and their edges (:func:`vote_reference`).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from graphclust import GraphClustering, InputError
from hypothesis import given, settings
from hypothesis import strategies as st


def planted(n_blocks=3, size=40, p_in=0.4, p_out=0.02, seed=0):
    rng = np.random.default_rng(seed)
    block = np.repeat(np.arange(n_blocks), size)
    P = np.where(block[:, None] == block[None, :], p_in, p_out)
    upper = np.triu(rng.random(P.shape) < P, 1).astype(float)
    return sp.csr_array(upper + upper.T), block


A3, BLOCKS = planted()
N = A3.shape[0]
MODEL = GraphClustering(graph="precomputed", random_state=0).fit(A3)


def vote_reference(labels, B, noise=False):
    """The rule, slowly: for each new node, sum its edge weights per fitted label (label
    -1 does not vote); the largest sum wins, the smallest label on a tie; no vote: the
    largest fitted cluster (smallest label on a tie), or -1 after noise=True."""
    B = np.asarray(B.toarray() if sp.issparse(B) else B, dtype=float)
    k = int(labels.max()) + 1
    sizes = [int(np.sum(labels == c)) for c in range(k)]
    largest = sizes.index(max(sizes))
    out, proba = [], []
    for row in B:
        votes = [0.0] * k
        for j, w in enumerate(row):
            if w != 0 and labels[j] >= 0:
                votes[labels[j]] += w
        total = sum(votes)
        if total == 0:
            out.append(-1 if noise else largest)
            proba.append([s / sum(sizes) for s in sizes])
        else:
            out.append(votes.index(max(votes)))
            proba.append([v / total for v in votes])
    return np.array(out), np.array(proba)


def new_nodes(labels_of_block, m=30, seed=1):
    """``m`` new nodes drawn from the planted model: edges to their block's nodes with
    p_in, to the others with p_out; also their block."""
    rng = np.random.default_rng(seed)
    block = rng.integers(0, 3, m)
    P = np.where(block[:, None] == labels_of_block[None, :], 0.4, 0.02)
    return sp.csr_array((rng.random(P.shape) < P).astype(float)), block


def test_predict_is_offered_on_a_graph_fit():
    assert hasattr(MODEL, "predict") and hasattr(MODEL, "predict_proba")
    assert not hasattr(MODEL, "transform")


def test_new_nodes_of_the_planted_model_get_their_block():
    B, block = new_nodes(BLOCKS)
    # the fitted label of each block (the fit finds the blocks exactly)
    label_of = {b: int(MODEL.labels_[BLOCKS == b][0]) for b in range(3)}
    assert np.array_equal(MODEL.predict(B), [label_of[b] for b in block])


def test_predict_equals_the_slow_vote_on_a_planted_batch():
    B, _ = new_nodes(BLOCKS, m=40, seed=3)
    weights = np.random.default_rng(4).uniform(0.1, 3.0, B.nnz)
    B = sp.csr_array((weights, B.indices, B.indptr), shape=B.shape)
    labels, proba = vote_reference(MODEL.labels_, B)
    assert np.array_equal(MODEL.predict(B), labels)
    np.testing.assert_allclose(MODEL.predict_proba(B), proba, rtol=1e-12, atol=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(0, 2**32 - 1), st.sampled_from(["csr", "dense", "coo"]))
def test_predict_and_proba_equal_the_reference_with_ties_and_empty_rows(m, seed, form):
    rng = np.random.default_rng(seed)
    # few small integer weights: ties between clusters and rows with no edge are common
    B = rng.integers(0, 3, (m, N)) * (rng.random((m, N)) < 4.0 / N)
    given = {"csr": sp.csr_array, "dense": np.asarray, "coo": sp.coo_array}[form](B)
    labels, proba = vote_reference(MODEL.labels_, B)
    got = MODEL.predict(given)
    assert np.array_equal(got, labels)
    P = MODEL.predict_proba(given)
    assert P.shape == (m, MODEL.n_clusters_)
    np.testing.assert_allclose(P, proba, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.array_equal(P.argmax(axis=1), got)  # argmax (first on ties) is predict


def test_a_new_node_with_no_edge_gets_the_largest_cluster_or_noise():
    A, block = planted(n_blocks=3, size=40, seed=2)
    keep = np.r_[np.arange(40), np.arange(40, 70), np.arange(80, 100)]  # sizes 40, 30, 20
    A = A[keep][:, keep]
    model = GraphClustering(graph="precomputed", random_state=0).fit(A)
    largest = int(np.argmax(np.bincount(model.labels_)))
    empty = sp.csr_array((2, A.shape[0]))
    assert model.predict(empty).tolist() == [largest, largest]
    np.testing.assert_allclose(model.predict_proba(empty)[0],
                               np.bincount(model.labels_) / A.shape[0])
    noisy = GraphClustering(graph="precomputed", random_state=0, noise=True).fit(A)
    assert noisy.predict(empty).tolist() == [-1, -1]


def test_noise_labels_do_not_vote():
    model = GraphClustering(graph="precomputed", random_state=0).fit(A3)
    labels = model.labels_.copy()
    labels[:5] = -1  # as a noise=True fit would leave them
    model.labels_ = labels
    B = np.zeros((1, N))
    B[0, :5] = 10.0  # heavy edges to nodes labelled -1 ...
    B[0, 50] = 1.0  # ... and one light edge to a labelled node
    assert model.predict(B).tolist() == [labels[50]]
    assert model.predict(B).tolist() == vote_reference(labels, B)[0].tolist()


def test_string_node_ids_through_the_nodelist():
    nx = pytest.importorskip("networkx")
    G = nx.relabel_nodes(nx.from_scipy_sparse_array(A3), {i: f"n{i:03d}" for i in range(N)})
    model = GraphClustering(graph="precomputed", random_state=0).fit(G)
    H = nx.Graph(G)
    H.add_edges_from([("new", "n000"), ("new", "n001"), ("new", "n002")])
    row = nx.to_scipy_sparse_array(H, nodelist=["new", *model.nodes_])[[0], 1:]
    first = dict(zip(model.nodes_, model.labels_))["n000"]
    assert model.predict(row).tolist() == [first]


@pytest.mark.parametrize("bad, match", [
    (np.ones((2, N - 1)), r"an m x 120 nonnegative matrix.*got shape \(2, 119\)"),
    (np.ones(N), r"got shape \(120,\)"),
    (np.full((1, N), -1.0), "120 edge weight\\(s\\) are negative \\(the first in row 0\\)"),
    (np.full((1, N), np.nan), "120 edge weight\\(s\\) are NaN or infinite"),
    (np.array([["a"] * N]), "the weights must be numbers"),
    (None, "got None"),
])
def test_malformed_new_nodes_are_refused(bad, match):
    with pytest.raises(InputError, match=match):
        MODEL.predict(bad)
    with pytest.raises(InputError, match=match):
        MODEL.predict_proba(bad)


def test_a_graph_object_is_refused_with_how_to_build_the_rows():
    nx = pytest.importorskip("networkx")
    with pytest.raises(InputError, match="to_scipy_sparse_array\\(G, nodelist=model.nodes_\\)"):
        MODEL.predict(nx.path_graph(4))


def test_predict_before_fit_is_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        GraphClustering(graph="precomputed").predict(A3)


# -- noise=True: the fit's rule and predict's are one (numerics.graph_noise) ------------------
def test_noise_fit_flags_the_isolated_nodes_of_a_planted_graph_and_nothing_else():
    """Leiden puts every node where its modularity term is largest, so on a planted
    partition only the nodes of no edge (no evidence of any membership) are noise."""
    A, _ = planted(n_blocks=3, size=40, seed=3)
    n = A.shape[0]
    padded = sp.block_diag([A, sp.csr_array((2, 2))], format="csr")  # two isolated nodes
    model = GraphClustering(graph="precomputed", random_state=0, noise=True).fit(padded)
    assert model.labels_[n:].tolist() == [-1, -1] and model.n_noise_ == 2
    plain = GraphClustering(graph="precomputed", random_state=0).fit(padded)
    np.testing.assert_array_equal(model.labels_[:n], plain.labels_[:n])


def test_noise_predict_flags_a_vote_below_the_configuration_model():
    """Blocks of 60, 20 and 20 nodes (volume shares about .6, .2, .2). A new node with 3
    of its 6 edges into the big block votes for it but sends it less than 6 x .6:
    -1 after ``noise=True``; with 5 of 6 it is kept. Without noise both take the vote."""
    A, block = planted(n_blocks=5, size=20, p_in=0.5, p_out=0.0, seed=5)
    block = np.minimum(block, 2)  # blocks 2, 3, 4 joined by edges: one block of 60
    A = A.tolil()
    for a, b in ((40, 60), (41, 80), (61, 81), (42, 62), (43, 83)):
        A[a, b] = A[b, a] = 1.0
    A = A.tocsr()
    model = GraphClustering(graph="precomputed", random_state=0, noise=True,
                            n_clusters=3).fit(A)
    assert model.n_noise_ == 0
    big = int(model.labels_[50])
    assert (model.labels_[40:] == big).all()
    shares = model._confidence_state.noise_model
    assert 0.55 < shares[big] < 0.65
    B = np.zeros((2, A.shape[0]))
    B[0, [44, 45, 46, 0, 1, 20]] = 1.0  # 3 of 6 into the big block
    B[1, [44, 45, 46, 47, 48, 0]] = 1.0  # 5 of 6
    assert model.predict(B).tolist() == [-1, big]
    plain = GraphClustering(graph="precomputed", random_state=0, n_clusters=3).fit(A)
    assert plain.predict(B).tolist() == [plain.labels_[50]] * 2
