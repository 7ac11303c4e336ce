"""The graph path at scale: a sparse soft assignment gives what its dense form gives.

The ``leiden`` solver hands the ``argmax`` rounding a CSR soft assignment (its dense
``n x k`` form is 800 MB at a million nodes and 100 communities); the rounding reads it
row by row (:mod:`graphclust.numerics.csr_rows`). Every test here takes the dense path
as the reference: the same labels, confidence and probabilities, exactly. Also: a clean
CSR graph is used without a copy, the modularity and the igraph edge list computed row
block by row block equal their one-pass formulas.
"""

from __future__ import annotations

import functools
import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from graphclust import AffinityGraph, GraphClustering, Solution
from graphclust.numerics import csr_rows, row_blocks, sparse_row_argmax, sparse_row_margin
from graphclust_plugins.common.rounding_argmax import ArgmaxRounding
from graphclust_plugins.community import _leiden, solver_leiden
from hypothesis import given, settings
from hypothesis import strategies as st


def planted(n=240, blocks=4, p_in=0.15, p_out=0.01, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(blocks), n // blocks)
    rng.shuffle(y)
    P = np.where(y[:, None] == y[None, :], p_in, p_out)
    upper = np.triu(rng.random((n, n)) < P, k=1)
    return sp.csr_array((upper | upper.T).astype(np.float64)), y


@st.composite
def sparse_soft(draw):
    """A small nonnegative sparse matrix with ties (values in {0, 1, 2, 3}), empty rows
    and stored zeros."""
    n = draw(st.integers(1, 12))
    k = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    dense = rng.integers(0, 4, size=(n, k)).astype(np.float64)
    dense[rng.random((n, k)) < 0.5] = 0.0
    S = sp.csr_array(dense)
    if S.nnz and draw(st.booleans()):  # a stored zero
        S.data[0] = 0.0
        dense = S.toarray()
    return S, dense


@settings(max_examples=60, deadline=None)
@given(sparse_soft())
def test_sparse_row_argmax_is_the_dense_argmax(case):
    S, dense = case
    cols, top = sparse_row_argmax(S)
    assert np.array_equal(cols, dense.argmax(axis=1))
    assert np.array_equal(top, dense.max(axis=1))


@settings(max_examples=60, deadline=None)
@given(sparse_soft(), st.integers(0, 2**31 - 1))
def test_sparse_row_margin_is_the_dense_margin(case, seed):
    S, dense = case
    n, k = dense.shape
    labels = np.random.default_rng(seed).integers(-1, k + 1, n)  # some out of range
    own, rival = sparse_row_margin(S, labels)
    col = np.clip(labels, 0, k - 1)
    ref_own = dense[np.arange(n), col]
    other = dense.copy()
    other[np.arange(n), col] = -np.inf
    ref_rival = np.maximum(other.max(axis=1), 0.0) if k > 1 else np.zeros(n)
    assert np.array_equal(own, ref_own)
    assert np.array_equal(rival, ref_rival)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=30), st.integers(1, 12))
def test_row_blocks_cover_the_rows_within_the_bound(lengths, bound):
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    blocks = row_blocks(indptr, bound)
    assert blocks[0][0] == 0 and blocks[-1][1] == len(lengths)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(blocks))
    for lo, hi in blocks:
        assert hi > lo
        assert indptr[hi] - indptr[lo] <= bound or hi == lo + 1


@settings(max_examples=40, deadline=None)
@given(sparse_soft())
def test_argmax_rounding_reads_a_sparse_soft_as_its_dense_form(case):
    S, dense = case
    sparse_r, dense_r = ArgmaxRounding(), ArgmaxRounding()
    labels = sparse_r.round(Solution(soft=S), S.shape[1], None)
    assert np.array_equal(labels, dense_r.round(Solution(soft=dense), S.shape[1], None))
    assert np.array_equal(sparse_r.columns_, dense_r.columns_)
    conf = sparse_r.confidence(Solution(soft=S), labels)
    assert np.array_equal(conf, dense_r.confidence(Solution(soft=dense), labels))
    assert np.array_equal(sparse_r.assign(Solution(soft=S)),
                          dense_r.assign(Solution(soft=dense)))
    P = sparse_r.probabilities(Solution(soft=S), labels)
    assert sp.issparse(P)
    assert np.array_equal(P.toarray(), dense_r.probabilities(Solution(soft=dense), labels))


def dense_edge_shares(A, codes):
    """The dense formula: w·H + (1 − w)·D⁻¹ A H, a vertex of no edge its membership."""
    n, k = codes.size, int(codes.max()) + 1
    H = np.zeros((n, k))
    H[np.arange(n), codes] = 1.0
    share = A.toarray() @ H
    degree = share.sum(axis=1, keepdims=True)
    share = np.divide(share, degree, out=H.copy(), where=degree > 0)
    return solver_leiden.OWN_WEIGHT * H + (1.0 - solver_leiden.OWN_WEIGHT) * share


def test_edge_shares_is_sparse_and_equals_the_dense_formula():
    A, _ = planted(n=60, seed=3)
    A = A.tolil()
    A[5, :] = 0  # an isolated vertex
    A[:, 5] = 0
    A = sp.csr_array(A)
    codes = np.random.default_rng(0).integers(0, 5, A.shape[0])
    soft = solver_leiden.edge_shares(A, codes)
    assert sp.issparse(soft)
    np.testing.assert_allclose(soft.toarray(), dense_edge_shares(A, codes), rtol=0,
                               atol=1e-15)
    np.testing.assert_allclose(np.asarray(soft.sum(axis=1)).ravel(), 1.0)


def test_a_fit_with_the_sparse_soft_equals_one_with_its_dense_form(monkeypatch):
    """Labels and confidence of the whole fit: the sparse soft (the default) against the
    same solution densified (the reference)."""
    A, _ = planted(n=120, seed=1, p_out=0.04)
    sparse_fit = GraphClustering("leiden", graph="precomputed", random_state=0).fit(A)
    assert sp.issparse(sparse_fit.solution_.soft)
    dense_of = solver_leiden.edge_shares
    monkeypatch.setattr(solver_leiden, "edge_shares",
                        lambda A, codes: dense_of(A, codes).toarray())
    dense_fit = GraphClustering("leiden", graph="precomputed", random_state=0).fit(A)
    assert isinstance(dense_fit.solution_.soft, np.ndarray)
    assert np.array_equal(sparse_fit.labels_, dense_fit.labels_)
    assert np.array_equal(sparse_fit.confidence_, dense_fit.confidence_)
    assert 0.0 < sparse_fit.confidence_.min() < 1.0  # the margins are not all alike
    assert np.array_equal(sparse_fit.layers_.partition_at(2), dense_fit.layers_.partition_at(2))


def test_a_clean_csr_graph_is_used_without_a_copy():
    A, _ = planted(seed=2)
    model = GraphClustering("leiden", graph="precomputed", random_state=0).fit(A)
    assert np.shares_memory(model.graph_.adjacency.data, A.data)
    assert np.shares_memory(model.graph_.adjacency.indices, A.indices)
    # the same graph through the general path (a COO input is converted and checked)
    general = GraphClustering("leiden", graph="precomputed", random_state=0).fit(
        sp.coo_array(A))
    assert not np.shares_memory(general.graph_.adjacency.data, A.data)
    assert np.array_equal(general.labels_, model.labels_)
    assert (general.graph_.adjacency != model.graph_.adjacency).nnz == 0


@pytest.mark.parametrize("change", ["asymmetric", "diagonal", "zero", "unsorted"])
def test_a_csr_graph_the_rules_change_is_copied(change):
    A, _ = planted(n=60, seed=4)
    B = A.copy()
    if change == "asymmetric":
        B = sp.csr_array(sp.triu(B))
    elif change == "diagonal":
        B = sp.csr_array(B + sp.eye_array(60))
    elif change == "zero":
        B.data[0] = 0.0
    else:  # reversed column order within each row
        for i in range(60):
            lo, hi = B.indptr[i], B.indptr[i + 1]
            B.indices[lo:hi] = B.indices[lo:hi][::-1].copy()
            B.data[lo:hi] = B.data[lo:hi][::-1].copy()
        B.has_sorted_indices = False
    before = (B.data.copy(), B.indices.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = GraphClustering("leiden", graph="precomputed", random_state=0).fit(B)
    G = model.graph_.adjacency
    assert not np.shares_memory(G.data, B.data)
    assert G.has_canonical_format and G.diagonal().max() == 0
    assert (G != G.T).nnz == 0 and G.data.min() > 0
    assert np.array_equal(B.data, before[0]) and np.array_equal(B.indices, before[1])


def test_blockwise_modularity_equals_the_one_pass_formula(monkeypatch):
    A, y = planted(seed=5)
    graph = AffinityGraph(A)
    labels = np.random.default_rng(1).integers(0, 5, A.shape[0])
    labels[:40] = y[:40]
    one_pass = graph.modularity(labels)  # one block: 3 000 entries < 2**22
    monkeypatch.setattr(csr_rows, "row_blocks",
                        functools.partial(csr_rows.row_blocks, max_entries=37))
    assert graph.modularity(labels) == pytest.approx(one_pass, abs=1e-12)
    C = A.tocoo()
    m2 = A.sum()
    same = labels[C.row] == labels[C.col]
    deg = np.asarray(A.sum(axis=1)).ravel()
    ref = C.data[same].sum() / m2 - sum(deg[labels == c].sum() ** 2
                                        for c in np.unique(labels)) / m2 ** 2
    assert one_pass == pytest.approx(ref, abs=1e-12)


def test_igraph_edges_blockwise_equal_the_upper_triangle(monkeypatch):
    A, _ = planted(n=48, seed=6)
    A = sp.csr_array(A + sp.diags_array(np.arange(48) % 3 * 1.0))  # some loops
    A.data *= np.random.default_rng(0).uniform(1, 2, A.nnz)
    A = sp.csr_array((A + A.T) / 2)
    monkeypatch.setattr(_leiden, "row_blocks", functools.partial(row_blocks, max_entries=11))
    edges, weights = _leiden._upper_entries(A)
    U = sp.triu(A).tocoo()
    order = np.lexsort((U.col, U.row))
    assert np.array_equal(edges, np.column_stack([U.row, U.col])[order])
    ref = U.data[order] * np.where(U.row[order] == U.col[order], 0.5, 1.0)
    assert np.array_equal(weights, ref)
    graph, weighted = _leiden.igraph_of(A)
    assert weighted and graph.ecount() == len(edges)
    binary, weighted = _leiden.igraph_of(planted(n=48, seed=6)[0])
    assert not weighted and "weight" not in binary.es.attributes()
