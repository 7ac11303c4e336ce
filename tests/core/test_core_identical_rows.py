"""Identical rows share a label (issue 46, S3 and S4): the grouping against a slow obvious
reference, the vote, and fits whose kNN graph split identical rows before."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs

from graphclust import GraphClustering
from graphclust._identical import identical_rows_share_labels, row_groups

QUICK = settings(max_examples=30, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow])


def reference_groups(X) -> list[set[int]]:
    """Groups of identical rows (as values: 0.0 == -0.0), by comparing every pair."""
    dense = X.toarray() if sp.issparse(X) else np.asarray(X)
    groups: list[list[int]] = []
    for i, row in enumerate(dense):
        for g in groups:
            if np.array_equal(dense[g[0]], row):
                g.append(i)
                break
        else:
            groups.append([i])
    return sorted((set(g) for g in groups), key=min)


def groups_of(ids, n) -> list[set[int]]:
    ids = np.arange(n) if ids is None else ids
    return sorted(({int(i) for i in np.flatnonzero(ids == v)} for v in np.unique(ids)), key=min)


@st.composite
def rows_with_copies(draw):
    """A few distinct rows of small values (zeros and -0.0 among them), repeated."""
    d = draw(st.integers(1, 4))
    base = draw(st.lists(st.lists(st.sampled_from([0.0, -0.0, 1.0, -2.5, 3.0, 1e-300]),
                                  min_size=d, max_size=d), min_size=1, max_size=6))
    picks = draw(st.lists(st.integers(0, len(base) - 1), min_size=2, max_size=30))
    return np.array([base[i] for i in picks], dtype=draw(st.sampled_from([np.float64,
                                                                          np.float32])))


@QUICK
@given(rows_with_copies(), st.booleans())
def test_row_groups_match_the_pairwise_reference(X, sparse):
    data = sp.csr_array(X) if sparse else X
    assert groups_of(row_groups(data), X.shape[0]) == reference_groups(X)


@QUICK
@given(rows_with_copies(), st.data())
def test_vote_gives_each_group_its_majority_label(X, data):
    labels = np.array(data.draw(st.lists(st.integers(0, 3), min_size=X.shape[0],
                                         max_size=X.shape[0])))
    out = identical_rows_share_labels(X, labels)
    for group in reference_groups(X):
        members = sorted(group)
        assert np.unique(out[members]).size == 1
    # the majority: the output is a renumbering of the per-group vote of the input
    vote = np.empty_like(labels)
    for group in reference_groups(X):
        members = sorted(group)
        counts = np.bincount(labels[members])
        vote[members] = int(np.argmax(counts))  # the smaller label on ties
    _, a = np.unique(out, return_inverse=True)
    _, b = np.unique(vote, return_inverse=True)
    assert np.array_equal(a, b)


def test_distinct_rows_keep_their_labels_object():
    X = np.arange(12.0).reshape(6, 2)
    labels = np.array([0, 1, 0, 1, 2, 2])
    assert identical_rows_share_labels(X, labels) is labels


# S3: 498 identical rows and 2 distinct rows, no k
S3 = np.vstack([np.zeros((498, 2)), [[1.0, 1.0], [2.0, 2.0]]])
# S4: sparse, 300 all-zero rows and three blobs of nonnegative rows, no k
_B = np.abs(make_blobs(300, 20, centers=3, random_state=0)[0])
S4 = sp.vstack([sp.csr_array((300, 20)), sp.csr_array(_B)]).tocsr()


@pytest.mark.parametrize("preset", ["ncut", "auto", "anchor-spectral", "dcd"])
def test_s3_identical_rows_share_a_label_without_k(preset):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        labels = GraphClustering(preset, random_state=0).fit(S3).labels_
    assert np.unique(labels[:498]).size == 1


@pytest.mark.parametrize("preset", ["ncut", "auto", "anchor-spectral"])
def test_s4_all_zero_sparse_rows_share_a_label_without_k(preset):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        labels = GraphClustering(preset, random_state=0).fit(S4).labels_
    assert np.unique(labels[:300]).size == 1


@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**16), st.integers(20, 200), st.integers(2, 30), st.booleans(),
       st.booleans())
def test_duplicated_rows_get_equal_labels_in_a_knn_fit(seed, zeros, copies, sparse, given_k):
    """Property (the general invariant): rows duplicated in ``X`` get equal labels, with
    ``k`` given or estimated, dense or sparse: all-zero rows and copies of a data row.
    (ncut's kNN graph on sparse rows gives the zero rows the same few neighbours; on S4
    its embedding split them, which the S4 test above catches.)"""
    rng = np.random.default_rng(seed)
    B = np.abs(make_blobs(150, 20, centers=3, random_state=seed)[0])
    src = int(rng.integers(0, B.shape[0]))
    X = np.vstack([np.zeros((zeros, 20)), B, np.repeat(B[[src]], copies, axis=0)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        labels = GraphClustering("ncut", n_clusters=4 if given_k else None,
                                 random_state=0).fit(sp.csr_array(X) if sparse else X).labels_
    assert np.unique(labels[:zeros]).size == 1
    assert np.all(labels[zeros + B.shape[0]:] == labels[zeros + src])


def test_twins_at_every_offset_are_candidates_and_grouped():
    """Identical rows whose projections are summed at different memory offsets (so BLAS may
    round them differently) are still found: 30 twins of mixed-sign rows in 1 000 columns,
    each copy at another row of another block."""
    from graphclust._identical import BLOCK_ROWS, _candidates

    rng = np.random.default_rng(3)
    X = rng.normal(size=(BLOCK_ROWS + 500, 1000)) * 10.0 ** rng.integers(-3, 4, size=1000)
    src = rng.choice(400, size=30, replace=False)
    dst = BLOCK_ROWS + 400 + np.arange(30) * 3 + 1
    X[dst] = X[src]
    assert set(src) | set(dst) <= set(_candidates(X))
    groups = row_groups(X)
    assert all(groups[s] == groups[t] for s, t in zip(src, dst, strict=True))
    assert len(np.unique(groups)) == X.shape[0] - 30


def test_a_pipelines_starts_find_the_identical_rows_once(monkeypatch):
    """Issue 48: the starts of one fit round the same rows, so their groups are found
    once (``row_groups_once``), and the labels are those found without remembering."""
    import graphclust._identical as identical

    X, _ = make_blobs(200, centers=3, n_features=4, random_state=0)
    X = np.vstack([X, X[:20]])  # twins
    calls = []
    real = identical.row_groups
    monkeypatch.setattr(identical, "row_groups", lambda A: calls.append(1) or real(A))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = GraphClustering("uspec", n_clusters=3, random_state=0,
                                overrides={"starts": 3, "anchors": {"n_anchors": 30}})
        labels = model.fit(X).labels_
    assert len(calls) == 1
    np.testing.assert_array_equal(labels[200:], labels[:20])


def test_remembered_groups_belong_to_their_array():
    """Inside ``row_groups_once`` each array object has its own groups (a different
    array, even of the same shape, is grouped anew); outside nothing is remembered."""
    from graphclust._identical import _groups_of, row_groups_once

    A = np.array([[0.0, 1.0], [0.0, 1.0], [2.0, 3.0]])
    B = np.array([[0.0, 1.0], [2.0, 3.0], [2.0, 3.0]])
    with row_groups_once():
        ga = _groups_of(A)
        assert _groups_of(A) is ga
        gb = _groups_of(B)
    assert groups_of(ga, 3) == reference_groups(A)
    assert groups_of(gb, 3) == reference_groups(B)
    assert _groups_of(A) is not ga
