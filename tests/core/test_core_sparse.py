"""Sparse input kept sparse end to end (issue 29 item 3).

The sparse numerics are checked against dense brute force (and a hypothesis property);
every part declaring ``accepts_sparse`` gives on CSR rows what it gives on the same rows
dense (same seed); a part that needs dense rows gets them within the limit, with a
warning, and is refused above it with the dense size in the message.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import graphclust as gc
from graphclust import GraphClustering
from graphclust._input import check_input
from graphclust.numerics import (fit_pca, fit_scaling, knn, mean_sq_distance, nearest_anchors,
                                 same_partition, sparse_pair_sq, sparse_sq_distances)
from graphclust.numerics.distances import grouped_nearest
from graphclust.numerics.sparse import densify


def corpus(n=240, d=400, k=4, seed=0):
    """Nonnegative sparse rows in ``k`` topics (a small tf-idf-like set) and the labels."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(k), n // k)
    per = min(40, d // k)
    own = rng.permutation(d)[: k * per].reshape(k, per)
    rows, cols, vals = [], [], []
    for i, t in enumerate(y):
        terms = np.unique(np.r_[rng.choice(own[t], 12), rng.integers(0, d, 4)])
        rows += [i] * terms.size
        cols += list(terms)
        vals += list(rng.uniform(0.5, 2.0, terms.size))
    return sp.csr_array(sp.csr_matrix((vals, (rows, cols)), shape=(n, d))), y


def brute_sq(X, U):
    X = np.asarray(X, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    return ((X[:, None, :] - U[None, :, :]) ** 2).sum(-1)


# -- numerics against dense brute force -----------------------------------------------
def test_sparse_distances_match_dense_brute_force():
    X, _ = corpus(60, 50)
    U = np.random.default_rng(1).normal(size=(7, 50))
    ref = brute_sq(X.toarray(), U)
    np.testing.assert_allclose(sparse_sq_distances(X, U), ref, rtol=1e-10, atol=1e-10)
    idx = np.argsort(ref, axis=1)[:, :3]
    np.testing.assert_allclose(sparse_pair_sq(X, U, idx),
                               np.take_along_axis(ref, idx, axis=1), rtol=1e-12, atol=1e-12)
    i_s, v_s = nearest_anchors(X, U, 3)
    i_d, v_d = nearest_anchors(X.toarray(), U, 3)
    assert np.array_equal(i_s, i_d)
    np.testing.assert_allclose(v_s, v_d, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(mean_sq_distance(X, U), ref.mean(), rtol=1e-12)
    owner = np.arange(60) % 3
    cands = [np.array([0, 1, 2, 3]), np.array([2, 3, 4, 5]), np.array([4, 5, 6, 0])]
    gs, gd = grouped_nearest(X, U, owner, cands, 2), grouped_nearest(X.toarray(), U, owner,
                                                                     cands, 2)
    assert np.array_equal(gs[0], gd[0])
    np.testing.assert_allclose(gs[1], gd[1], rtol=1e-10, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 12), st.integers(1, 9), st.integers(1, 6),
       st.floats(0.0, 1.0), st.integers(0, 2**16))
def test_sparse_sq_distances_property(n, d, m, density, seed):
    """Any sparse rows, any dense anchors: the expansion equals the brute-force distances
    (float32 rows as well as float64), and is never negative."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr",
                  data_rvs=lambda k: rng.integers(-3, 4, k).astype(float))
    U = rng.integers(-3, 4, size=(m, d)).astype(float)
    ref = brute_sq(X.toarray(), U)
    out = sparse_sq_distances(X, U)
    assert out.shape == (n, m) and (out >= 0).all()
    np.testing.assert_allclose(out, ref, atol=1e-9)
    np.testing.assert_allclose(sparse_sq_distances(X.astype(np.float32), U.astype(np.float32)),
                               ref, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("metric", ["sqeuclidean", "inner_product"])
def test_sparse_exact_knn_matches_dense(metric):
    X, _ = corpus(150, 300)
    i_s, v_s = knn(X, 6, metric=metric, method="exact", block_size=40)
    dense = X.toarray()
    ref = brute_sq(dense, dense) if metric == "sqeuclidean" else -(dense @ dense.T)
    np.fill_diagonal(ref, np.inf)
    order = np.argsort(ref, axis=1, kind="stable")[:, :6]
    expect = np.take_along_axis(ref, order, axis=1)
    np.testing.assert_allclose(v_s, expect if metric == "sqeuclidean" else -expect,
                               rtol=1e-10, atol=1e-10)
    assert not (i_s == np.arange(150)[:, None]).any()


def test_sparse_pca_is_the_dense_pca():
    X, _ = corpus(120, 200)
    ps, pd = fit_pca(X, 5), fit_pca(X.toarray(), 5)
    np.testing.assert_allclose(ps.components, pd.components, atol=1e-8)
    np.testing.assert_allclose(ps.explained_variance, pd.explained_variance, rtol=1e-8)
    np.testing.assert_allclose(ps.total_variance, pd.total_variance, rtol=1e-10)
    np.testing.assert_allclose(ps.transform(X), pd.transform(X.toarray()), atol=1e-8)


def test_sparse_scaling_keeps_zeros():
    from sklearn.preprocessing import MaxAbsScaler, StandardScaler, normalize

    X = sp.random(50, 8, density=0.3, random_state=2, format="csr") * 5 - \
        sp.random(50, 8, density=0.1, random_state=3, format="csr")
    X = sp.csr_array(X)
    for kind, ref in [("standard", StandardScaler(with_mean=False)), ("minmax", MaxAbsScaler())]:
        s = fit_scaling(X, kind)
        out = s.transform(X)
        assert sp.issparse(out) and out.nnz == X.nnz and not s.offset.any()
        np.testing.assert_allclose(out.toarray(), ref.fit_transform(X).toarray(), rtol=1e-12)
        # dense rows at predict get the same transform
        np.testing.assert_allclose(s.transform(X.toarray()), out.toarray(), rtol=1e-12)
    out = fit_scaling(X, "l2").transform(X)
    assert sp.issparse(out)
    np.testing.assert_allclose(out.toarray(), normalize(X.toarray()), rtol=1e-12)
    with pytest.raises(ValueError, match="would densify"):
        fit_scaling(X, "center")


# -- the input boundary ---------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_check_input_keeps_sparse_rows_sparse(fmt, dtype):
    X, _ = corpus(40, 30)
    given = X.asformat(fmt).astype(dtype)
    out = check_input(given)
    assert isinstance(out, sp.csr_array) and out.has_canonical_format
    assert out.dtype == (np.float32 if dtype == np.float32 else np.float64)
    np.testing.assert_array_equal(out.toarray(), given.toarray().astype(out.dtype))


def test_check_input_finds_nan_in_the_stored_values():
    X, _ = corpus(40, 30)
    X = X.tolil()
    X[17, 3] = np.nan
    with pytest.raises(gc.InputError, match=r"NaN \(first at row 17\)"):
        check_input(sp.csr_array(X))


# -- parts: sparse rows give what dense rows give ---------------------------------------
SPARSE_SPECS = {
    "kmeans anchors, gaussian-anchor": {
        "anchors": {"name": "kmeans", "n_anchors": 30}, "graph": {"name": "gaussian-anchor"},
        "solver": {"name": "spectral"}, "rounding": {"name": "kmeans"}},
    "random anchors, gaussian-anchor, scale standard": {
        "scale": "standard", "anchors": {"name": "random", "n_anchors": 40},
        "graph": {"name": "gaussian-anchor", "n_neighbors": 4},
        "solver": {"name": "spectral"}, "rounding": {"name": "kmeans"}},
    "hybrid, knr-bipartite approx, tcut": {
        "anchors": {"name": "hybrid", "n_anchors": 40, "candidate_factor": 3},
        "graph": {"name": "knr-bipartite", "search": "approx", "candidates": 2},
        "solver": {"name": "tcut"}, "rounding": {"name": "kmeans"}},
    "hybrid, knr-bipartite exact, anchor-level adapter": {
        "anchors": {"name": "hybrid", "n_anchors": 40}, "graph": {"name": "knr-bipartite",
                                                                  "search": "exact"},
        "adapter": {"name": "anchor-level"}, "solver": {"name": "spectral"},
        "rounding": {"name": "kmeans"}},
    "knn exact, l2": {"scale": "l2", "graph": {"name": "knn", "method": "exact"},
                      "solver": {"name": "spectral"}, "rounding": {"name": "kmeans"}},
    "knn on principal components, minmax": {
        "scale": "minmax", "graph": {"name": "knn", "method": "exact", "pca_components": 8},
        "solver": {"name": "spectral"}, "rounding": {"name": "kmeans"}},
}


@pytest.mark.parametrize("name", list(SPARSE_SPECS))
def test_sparse_and_dense_rows_give_the_same_partition(name):
    X, y = corpus()
    spec = SPARSE_SPECS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error", gc.DensifyWarning)  # never densified
        ms = GraphClustering(spec, n_clusters=4, random_state=3).fit(X)
    md = GraphClustering(spec, n_clusters=4, random_state=3).fit(X.toarray())
    assert same_partition(ms.labels_, md.labels_)
    if ms.anchors_ is not None and "scale" not in spec:  # else scaled without centring
        np.testing.assert_allclose(ms.anchors_.points, md.anchors_.points, atol=1e-9)
    if ms.pipeline_.can_predict():  # new sparse rows: as the dense model places them
        ps = ms.predict(X[:50])
        assert np.array_equal(ps, ms.predict(X[:50].toarray()))
        assert same_partition(np.r_[ms.labels_, ps], np.r_[md.labels_,
                                                          md.predict(X[:50].toarray())])


def test_auto_keeps_tfidf_sparse_and_finds_the_topics():
    X, y = corpus(400, 2000, k=4, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gc.DensifyWarning)
        m = GraphClustering("auto", n_clusters=4, random_state=0).fit(X)
    assert m.resolved_spec_["graph"]["name"] == "knn" and m.resolved_spec_["scale"] == "l2"
    assert "sparse" in m.resolved_spec_["summary"]
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(y, m.labels_) > 0.9


# -- densifying: only within the limit, never silently ------------------------------------
def test_a_part_that_needs_dense_rows_is_warned_within_the_limit():
    X, _ = corpus(90, 60, k=3)
    with pytest.warns(gc.DensifyWarning, match=r"densified to .* GiB for anchors 'bkhk'"):
        m = GraphClustering("ulge", n_clusters=3, random_state=0).fit(X)
    ref = GraphClustering("ulge", n_clusters=3, random_state=0).fit(X.toarray())
    assert np.array_equal(m.labels_, ref.labels_)


def test_above_the_limit_the_fit_is_refused_with_the_dense_size(monkeypatch):
    X, _ = corpus(90, 60, k=3)
    monkeypatch.setenv("GRAPHCLUST_DENSIFY_LIMIT", "1000")  # bytes; X is 43 200 dense
    with pytest.raises(gc.InputError) as info:
        GraphClustering("ulge", n_clusters=3, random_state=0).fit(X)
    msg = str(info.value)
    assert "4.02e-05 GiB" in msg and "graph 'adaptive-anchor'" in msg
    assert "keep sparse rows sparse" in msg and "'knr-bipartite'" in msg
    with pytest.raises(gc.InputError, match="9.31e-07 GiB"):
        densify(X, "a test", limit=1000)
    # the sparse-capable pipeline is not affected by the limit
    GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                    anchors={"n_anchors": 20}).fit(X)


def test_scale_center_needs_dense_rows():
    X, _ = corpus(90, 60, k=3)
    with pytest.warns(gc.DensifyWarning, match="scale 'center'"):
        GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                        anchors={"n_anchors": 20}, overrides={"scale": "center"}).fit(X)


# -- files --------------------------------------------------------------------------
def test_sparse_npz_and_libsvm_files(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    from graphclust.data import load_file

    X, y = corpus(60, 80, k=3)
    sp.save_npz(tmp_path / "m.npz", sp.csr_matrix(X))
    got, labels = load_file(tmp_path / "m.npz")
    assert sp.issparse(got) and labels is None and (got != X).nnz == 0
    with pytest.raises(gc.InputError, match="holds only the matrix"):
        load_file(tmp_path / "m.npz", labels="y")
    np.savez(tmp_path / "xy.npz", X=X.toarray(), y=y)  # the X/y layout is told apart
    got, labels = load_file(tmp_path / "xy.npz")
    assert not sp.issparse(got) and np.array_equal(labels, y)
    dump_svmlight_file(X, y, str(tmp_path / "c.svm"))
    notes = []
    got, labels = load_file(tmp_path / "c.svm", note=notes.append)
    assert sp.issparse(got) and np.array_equal(labels, y) and "taken as the labels" in notes[0]
    dump_svmlight_file(X, np.linspace(0, 1, 60), str(tmp_path / "r.libsvm"))
    notes = []
    got, labels = load_file(tmp_path / "r.libsvm", note=notes.append)
    assert labels is None and "not taken" in notes[0]


@pytest.mark.slow  # pynndescent compiles for about a minute on first use
def test_sparse_approximate_knn_finds_the_exact_neighbours():
    X, _ = corpus(600, 500, k=4, seed=2)
    exact_idx, exact_sq = knn(X, 8, method="exact")
    approx_idx, approx_sq = knn(X, 8, method="approx")
    recall = np.mean([len(set(a) & set(b)) / 8 for a, b in zip(exact_idx, approx_idx)])
    assert recall > 0.95
    assert not (approx_idx == np.arange(600)[:, None]).any()
    assert (np.diff(approx_sq, axis=1) >= 0).all()  # sorted, float64 from the stored values
    ref = brute_sq(X.toarray(), X.toarray())
    np.testing.assert_allclose(approx_sq, np.take_along_axis(ref, approx_idx, axis=1),
                               atol=1e-10)
