"""Adaptive-neighbour anchor graph (Eq. 17–19): weights, stochasticity, search modes."""

import numpy as np
from hypothesis import given, settings, strategies as st

import graphclust
from graphclust_plugins.ulge.graph_adaptive_anchor import AdaptiveAnchorGraph
from graphclust_plugins.ulge.anchors_bkhk import BKHK


def _brute_Z(X, U, k):
    """Slow obvious Eq. (18) with dense distances."""
    D = ((X[:, None, :] - U[None, :, :]) ** 2).sum(-1)
    Z = np.zeros_like(D)
    for i in range(X.shape[0]):
        o = np.argsort(D[i], kind="stable")
        d = D[i, o[: k + 1]]
        den = k * d[k] - d[:k].sum()
        Z[i, o[:k]] = (d[k] - d[:k]) / den if den > 0 else 1.0 / k
    return Z


def _graph(X, m=16, k=5, search="exact", seed=0, **kw):
    ctx = graphclust.Context(seed=seed)
    anchors = BKHK(n_anchors=m).select(X, ctx)
    return AdaptiveAnchorGraph(n_neighbors=k, search=search, **kw).build(X, anchors, ctx)


def test_matches_bruteforce_eq18():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    g = _graph(X, m=16, k=5)
    np.testing.assert_allclose(g.Z.toarray(), _brute_Z(X, g.anchors.points, 5), atol=1e-10)


def test_rows_nonnegative_sum_to_one_and_k_nonzeros():
    X = np.random.default_rng(1).normal(size=(300, 5))
    g = _graph(X, m=32, k=5)
    Z = g.Z
    assert Z.data.min() >= 0
    np.testing.assert_allclose(Z.sum(axis=1), 1.0)
    assert np.all(np.diff(Z.indptr) <= 5) and np.all(np.diff(Z.indptr) >= 1)


def test_W_doubly_stochastic_symmetric_psd():
    X = np.random.default_rng(2).normal(size=(150, 3))
    g = _graph(X, m=16, k=4)
    W = g.to_dense()
    np.testing.assert_allclose(W, W.T, atol=1e-12)
    np.testing.assert_allclose(W.sum(axis=0), 1.0, atol=1e-10)
    np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-10)
    assert W.min() >= 0
    ev = np.linalg.eigvalsh(W)
    assert ev.min() > -1e-10 and abs(ev.max() - 1.0) < 1e-10
    F = np.random.default_rng(0).normal(size=(150, 3))
    np.testing.assert_allclose(g.matvec(F), W @ F, atol=1e-10)


def test_duplicate_points_and_anchors():
    # the weight rules themselves are tested in tests/core/test_core_numerics.py
    # Duplicate data / anchors end to end.
    X = np.repeat(np.eye(3), 10, axis=0)
    g = _graph(X, m=8, k=5)
    np.testing.assert_allclose(g.Z.sum(axis=1), 1.0)
    assert np.all(np.isfinite(g.Z.data))


def test_small_m_and_k_larger_than_m():
    X = np.random.default_rng(3).normal(size=(30, 2))
    g = _graph(X, m=3, k=5)
    assert g.info["n_neighbors"] == 2
    np.testing.assert_allclose(g.Z.sum(axis=1), 1.0)
    g1 = _graph(X, m=1, k=5)
    np.testing.assert_allclose(g1.Z.toarray(), 1.0)


def test_leaf_search_equals_exact_when_candidates_cover_all_anchors():
    X = np.random.default_rng(4).normal(size=(400, 6))
    ctx = graphclust.Context(seed=0)
    anchors = BKHK(n_anchors=32).select(X, ctx)
    ex = AdaptiveAnchorGraph(n_neighbors=5, search="exact").build(X, anchors, ctx)
    lf = AdaptiveAnchorGraph(n_neighbors=5, search="leaf", candidates=10).build(X, anchors, ctx)
    assert 10 * 5 >= 32
    np.testing.assert_allclose(lf.Z.toarray(), ex.Z.toarray(), atol=1e-12)


def test_leaf_search_with_fewer_candidates_is_close_and_valid():
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(c, 0.5, (200, 5)) for c in range(5)])
    ctx = graphclust.Context(seed=0)
    anchors = BKHK(n_anchors=128).select(X, ctx)
    ex = AdaptiveAnchorGraph(n_neighbors=5, search="exact").build(X, anchors, ctx)
    lf = AdaptiveAnchorGraph(n_neighbors=5, search="leaf", candidates=2).build(X, anchors, ctx)
    assert lf.state.leaf_candidates.shape == (128, 10)
    assert ex.state.leaf_candidates is None
    np.testing.assert_allclose(lf.Z.sum(axis=1), 1.0)
    Ze, Zl = ex.Z.toarray(), lf.Z.toarray()
    same_support = np.mean([(set(np.flatnonzero(a)) == set(np.flatnonzero(b)))
                            for a, b in zip(Ze, Zl)])
    assert same_support > 0.5
    assert np.abs(Ze - Zl).sum(axis=1).mean() < 0.5


def test_transform_reproduces_training_rows():
    X = np.random.default_rng(6).normal(size=(250, 4))
    for search in ("exact", "leaf"):
        builder = AdaptiveAnchorGraph(n_neighbors=5, search=search, candidates=10)
        ctx = graphclust.Context(seed=0)
        anchors = BKHK(n_anchors=16).select(X, ctx)
        g = builder.build(X, anchors, ctx)
        Zn = builder.transform(X[:20], g)
        assert Zn.shape == (20, 16)
        np.testing.assert_allclose(Zn.toarray(), g.Z.toarray()[:20], atol=1e-10)
    # leaf search with few candidates: new rows still valid
    builder = AdaptiveAnchorGraph(n_neighbors=3, search="leaf", candidates=2)
    anchors = BKHK(n_anchors=64).select(X, ctx)
    g = builder.build(X, anchors, ctx)
    Zn = builder.transform(X[:30] + 0.01, g)
    np.testing.assert_allclose(Zn.sum(axis=1), 1.0)


def test_float32_input():
    X = np.random.default_rng(7).normal(size=(120, 4)).astype(np.float32)
    g = _graph(X, m=8, k=3)
    np.testing.assert_allclose(g.Z.sum(axis=1), 1.0, rtol=1e-6)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(3, 60), m=st.integers(1, 20), k=st.integers(1, 8), seed=st.integers(0, 9),
       search=st.sampled_from(["exact", "leaf"]))
def test_property_rows_on_simplex(n, m, k, seed, search):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 2)), 1)
    ctx = graphclust.Context(seed=seed)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", graphclust.GraphClustWarning)
        anchors = BKHK(n_anchors=m).select(X, ctx)
    g = AdaptiveAnchorGraph(n_neighbors=k, search=search, candidates=1).build(X, anchors, ctx)
    assert g.Z.data.min() >= 0
    np.testing.assert_allclose(g.Z.sum(axis=1), 1.0, atol=1e-12)
    W = g.to_dense()
    np.testing.assert_allclose(W.sum(axis=0), 1.0, atol=1e-9)
