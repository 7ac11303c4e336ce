"""Fit on a sample, place the rows: references, determinism, the n <= S identity, predict."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs, make_moons
from sklearn.metrics import adjusted_rand_score

import graphclust
from graphclust import Context
from graphclust.chunks import InMemoryChunks
from graphclust_plugins.manifold._place import match_rows, row_keys
from graphclust_plugins.manifold.anchors_sample import SampleAnchors
from graphclust_plugins.manifold.graph_sample_knn import SampleKNNGraph

pytestmark = pytest.mark.filterwarnings("ignore::graphclust.DisconnectedGraphWarning")


def sampled_spec(S, *, k=15, method="exact", rounding=None, graph_method="exact"):
    return {"anchors": {"name": "sample", "n_anchors": S},
            "graph": {"name": "sample-knn", "n_neighbors": k, "method": method},
            "adapter": {"name": "on-sample",
                        "graph": {"name": "fuzzy-knn", "n_neighbors": 15,
                                  "method": graph_method},
                        "rounding": rounding or {"name": "density"}},
            "solver": {"name": "umap-layout", "n_components": 10, "min_dist": 0.0},
            "rounding": {"name": "argmax"}}


def reference_rows(X, U, k):
    """Dense reference of sample-knn's Z: exact rows for duplicates, else UMAP memberships
    of the k nearest sample rows by brute force, solved for σ by plain bisection."""
    n, m = X.shape[0], U.shape[0]
    D = np.sqrt(((X[:, None, :] - U[None, :, :]) ** 2).sum(-1))
    Z = np.zeros((n, m))
    for i in range(n):
        eq = np.flatnonzero((X[i] == U).all(axis=1))
        if eq.size:
            Z[i, eq[0]] = 1.0
            continue
        nb = np.argsort(D[i], kind="stable")[:k]
        d = D[i, nb]
        rho = d[d > 0].min()
        target = math.log2(k + 1)
        lo, hi = 0.0, 1e6
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            s = np.exp(-np.maximum(d - rho, 0) / mid).sum()
            lo, hi = (lo, mid) if s > target else (mid, hi)
        w = np.exp(-np.maximum(d - rho, 0) / max(mid, 1e-3 * d.mean()))
        Z[i, nb] = w / w.sum()
    return Z


def test_sample_knn_rows_equal_the_dense_reference():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 5))
    anchors = SampleAnchors(n_anchors=40).select(X, Context(seed=1))
    U = anchors.points
    G = SampleKNNGraph(n_neighbors=6, method="exact").build(X, anchors, Context(seed=1))
    ref = reference_rows(X, U, 6)
    # smooth_distances stops once |Σ w − log2(k+1)| < 1e-5
    np.testing.assert_allclose(G.Z.toarray(), ref, atol=2e-5)
    np.testing.assert_allclose(G.Z.sum(axis=1), 1.0)
    # the sample's own rows are exactly themselves
    idx = anchors.state.indices
    np.testing.assert_array_equal(G.Z.toarray()[idx], np.eye(40))


@pytest.mark.parametrize("rows", ["others", "the sample itself"])
def test_match_rows_finds_the_first_equal_row_and_only_equal_rows(rows):
    """Against a brute-force scan; "the sample itself": X equal to U (its shortcut: a row
    whose key no other row shares is its own match), duplicates included."""
    rng = np.random.default_rng(0)
    U = rng.integers(0, 3, size=(50, 3)).astype(np.float64)  # many duplicates
    U[:20] = rng.normal(size=(20, 3))  # and rows of their own
    X = (U.copy() if rows == "the sample itself" else
         np.vstack([U[::-1], rng.integers(0, 4, size=(30, 3)).astype(np.float64) + 0.5]))
    keys = row_keys(U)
    got = match_rows(X, U, keys, np.argsort(keys, kind="stable"))
    for i, x in enumerate(X):
        eq = np.flatnonzero((U == x).all(axis=1))
        assert got[i] == (eq[0] if eq.size else -1)


def test_match_rows_checks_the_rows_behind_an_equal_key():
    """A key match is only a candidate: rows behind one key (one or several candidates)
    are compared, so a key shared by unequal rows never matches."""
    rng = np.random.default_rng(1)
    U = rng.normal(size=(300, 4))
    U[7] = U[3]  # two candidates behind one key
    keys = row_keys(U)
    V = U.copy()
    V[10] += 1.0  # the key of the old row 10 now stands for a different row
    V[3] += 1.0  # of the two candidates, the first no longer equal: the second wins
    got = match_rows(U, V, keys, np.argsort(keys, kind="stable"))
    expect = np.arange(300)
    expect[10] = -1
    expect[3] = 7
    np.testing.assert_array_equal(got, expect)


def test_row_keys_are_fixed_numbers():
    """Keys agree across processes (no salted hash): a fixed row has a fixed key."""
    a = row_keys(np.array([[1.0, 2.0, 3.0]]))
    b = row_keys(np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]))
    assert a[0] == b[0] and b[0] != b[1]
    assert row_keys(np.zeros((0, 3))).shape == (0,)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(5, 60), S=st.integers(1, 30), k=st.integers(1, 6),
       cuts=st.lists(st.integers(1, 59), max_size=4), seed=st.integers(0, 10))
def test_sample_knn_rows_do_not_depend_on_the_blocks(n, S, k, cuts, seed):
    X = np.random.default_rng(seed).normal(size=(n, 3))
    X[n // 2] = X[0]  # a duplicate row
    anchors = SampleAnchors(n_anchors=S).select(X, Context(seed=seed))
    builder = SampleKNNGraph(n_neighbors=k, method="exact")
    G = builder.build(X, anchors, Context(seed=seed))
    bounds = sorted({0, n, *[c for c in cuts if c < n]})
    parts = [builder.transform(X[a:b], G).toarray() for a, b in zip(bounds[:-1], bounds[1:])]
    np.testing.assert_array_equal(np.vstack(parts), G.Z.toarray())
    np.testing.assert_allclose(G.Z.sum(axis=1), 1.0)
    assert np.diff(G.Z.indptr).max() <= min(k, anchors.n_anchors)


def test_sample_rows_hook_gives_the_same_anchors():
    """The chunk hook's contract: select on X[sample_rows(n)] = select on X."""
    X = np.random.default_rng(0).normal(size=(500, 4))
    sel = SampleAnchors(n_anchors=60)
    ctx = Context(seed=7)
    idx = sel.sample_rows(500, ctx)
    assert idx.shape == (60,) and np.all(np.diff(idx) > 0)
    np.testing.assert_array_equal(sel.select(X[idx], ctx).points, sel.select(X, ctx).points)
    assert SampleAnchors(n_anchors=500).sample_rows(500, ctx) is None
    assert SampleAnchors.draws_rows() and not graphclust.get_registry().anchors.get(
        "random").draws_rows()


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_all_rows_sampled_is_the_fit_on_all_rows(seed):
    """n <= S: the sampled pipeline's labels are those of fuzzy-knn → umap-layout →
    density on all rows (the former manifold preset)."""
    X, _ = make_moons(600, noise=0.08, random_state=0)
    old = {"graph": {"name": "fuzzy-knn", "n_neighbors": 15},
           "solver": {"name": "umap-layout", "n_components": 10, "min_dist": 0.0},
           "rounding": {"name": "density"}}
    a = graphclust.GraphClustering(old, n_clusters=2, random_state=seed).fit(X).labels_
    b = graphclust.GraphClustering("manifold", n_clusters=2, random_state=seed).fit(X)
    np.testing.assert_array_equal(a, b.labels_)
    np.testing.assert_array_equal(b.predict(X), b.labels_)


def test_genie_preset_below_S_is_genie_on_all_rows():
    X, _ = make_moons(800, noise=0.05, random_state=1)
    old = {"scale": "standard", "anchors": {"name": "random", "n_anchors": 1},
           "graph": {"name": "gaussian-anchor", "n_neighbors": 1},
           "solver": {"name": "features"}, "rounding": {"name": "genie"}}
    a = graphclust.GraphClustering(old, n_clusters=2, random_state=0).fit(X).labels_
    b = graphclust.GraphClustering("genie", n_clusters=2, random_state=0).fit(X).labels_
    np.testing.assert_array_equal(a, b)


def test_sampled_fit_places_rows_and_predicts():
    X, y = make_blobs(4000, 6, centers=4, cluster_std=0.8, random_state=2)
    model = graphclust.GraphClustering(sampled_spec(800), n_clusters=4, random_state=0).fit(X)
    assert adjusted_rand_score(y, model.labels_) > 0.99
    assert model.pipeline_.adapter.sample_labels_.shape == (800,)
    # predict on the training rows is the fit's labels (placement is row-local)
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    Xn, yn = make_blobs(500, 6, centers=4, cluster_std=0.8, random_state=2)
    assert adjusted_rand_score(yn, model.predict(Xn)) > 0.99
    E = model.transform(X[:50])
    assert E.shape == (50, 10) and np.all(np.isfinite(E))


def test_chunked_protocol_rows_equal_the_in_memory_rows():
    """lift_rows over InMemoryChunks blocks gives the in-memory lifted rows."""
    X, _ = make_blobs(900, 5, centers=3, random_state=0)
    pipe = graphclust.compose(sampled_spec(200, k=5, rounding={"name": "genie"}))
    res = pipe.run(X, n_clusters=3, ctx=Context(seed=0))
    for block in InMemoryChunks(X, res.graph.Z, block_rows=250).blocks():
        rows = pipe.adapter.lift_rows(res.solution, block)
        stop = block.start + block.X.shape[0]
        np.testing.assert_allclose(rows.soft, res.solution.soft[block.start:stop])
        np.testing.assert_allclose(rows.embedding, res.solution.embedding[block.start:stop])


@settings(max_examples=30, deadline=None)
@given(b=st.integers(1, 40), m=st.integers(2, 60), s=st.integers(1, 40),
       seed=st.integers(0, 100), ties=st.booleans())
def test_smallest_per_row_equals_a_stable_sort(b, m, s, seed, ties):
    """The repeated-argmin selection (s <= 32) and argpartition (above) both return the
    s smallest of every row, best first; with ties the argmin path takes the lowest
    columns, exactly as a stable sort."""
    from graphclust.numerics import smallest_per_row

    rng = np.random.default_rng(seed)
    A = rng.integers(0, 4, size=(b, m)).astype(np.float64) if ties else rng.random((b, m))
    s = min(s, m - 1)
    idx, vals = smallest_per_row(A, s)
    ref = np.argsort(A, axis=1, kind="stable")[:, :s]
    np.testing.assert_array_equal(vals, np.take_along_axis(A, ref, axis=1))
    if s <= 32:
        np.testing.assert_array_equal(idx, ref)
    idx_l, vals_l = smallest_per_row(A, s, largest=True)
    np.testing.assert_array_equal(vals_l, -np.sort(-A, axis=1)[:, :s])


def test_on_sample_rounding_is_checked_against_the_solver_before_work():
    """A nested rounding that cannot read the solver's solution is refused by the
    composer, naming both, not halfway through a fit."""
    spec = sampled_spec(50)
    spec["solver"] = {"name": "dcd"}  # a soft assignment only; density needs an embedding
    with pytest.raises(graphclust.SpecError, match="rounding 'density' needs a solution"):
        graphclust.compose(spec)
    spec = sampled_spec(50)
    spec["adapter"]["graph"] = {"name": "gaussian-anchor"}
    with pytest.raises(graphclust.SpecError, match="affinity graph from the rows alone"):
        graphclust.compose(spec)


def _svd_scores(U, X, p):
    """Scores of the rows of X on the p leading principal axes of U (plain SVD of the
    centred U: the obvious reference of fit_pca; signs do not change distances)."""
    mu = U.mean(axis=0)
    _, _, vt = np.linalg.svd(U - mu, full_matrices=False)
    return (X - mu) @ vt[:p].T


def test_sample_knn_on_principal_components_equals_the_dense_reference():
    """pca_components: the placement searches and weighs on the sample's leading principal
    components (the projected rows through the dense reference)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(150, 12)) * np.linspace(3.0, 0.1, 12)
    anchors = SampleAnchors(n_anchors=50).select(X, Context(seed=2))
    U = anchors.points
    G = SampleKNNGraph(n_neighbors=6, method="exact", pca_components=4).build(
        X, anchors, Context(seed=2))
    assert G.info["searched_dims"] == 4
    ref = reference_rows(_svd_scores(U, X, 4), _svd_scores(U, U, 4), 6)
    np.testing.assert_allclose(G.Z.toarray(), ref, atol=2e-5)
    np.testing.assert_array_equal(G.Z.toarray()[anchors.state.indices], np.eye(50))


def test_sample_knn_rows_do_not_depend_on_the_placement_block(monkeypatch):
    """Rows are placed PLACE_BLOCK at a time; the rows of Z do not depend on the block."""
    import graphclust_plugins.manifold.graph_sample_knn as gsk

    rng = np.random.default_rng(5)
    X = rng.normal(size=(90, 6))
    anchors = SampleAnchors(n_anchors=30).select(X, Context(seed=0))
    part = SampleKNNGraph(n_neighbors=5, method="exact", pca_components=3)
    whole = part.build(X, anchors, Context(seed=0)).Z
    monkeypatch.setattr(gsk, "PLACE_BLOCK", 7)
    small = part.build(X, anchors, Context(seed=0)).Z
    assert (whole != small).nnz == 0


@pytest.mark.slow
def test_one_nndescent_index_serves_the_placement_and_the_sample_graph(monkeypatch):
    """With n > S and approx search, sample-knn's index of the sample is the one the
    sample's fuzzy graph reads (one NNDescent build per fit, not two); its graph is
    near the exact one in the same projected space; the labels repeat for a seed."""
    import graphclust_plugins.manifold._neighbors as nb
    from graphclust_plugins.manifold.graph_fuzzy_knn import FuzzyKNNGraph

    X, y = make_blobs(3000, n_features=20, centers=4, random_state=0)
    built = []
    real = nb._nndescent

    def counting(*args, **kw):
        built.append(args[0].shape)
        return real(*args, **kw)

    monkeypatch.setattr(nb, "_nndescent", counting)
    spec = sampled_spec(1000, method="approx", graph_method="approx")
    for part in ("graph",):
        spec[part]["pca_components"] = 8
    spec["adapter"]["graph"]["pca_components"] = 8
    first = graphclust.GraphClustering(spec, n_clusters=4, random_state=0).fit(X)
    assert built == [(1000, 8)]
    again = graphclust.GraphClustering(spec, n_clusters=4, random_state=0).fit(X)
    np.testing.assert_array_equal(first.labels_, again.labels_)
    assert adjusted_rand_score(y, first.labels_) > 0.95
    # the shared graph against the exact fuzzy graph of the same projected sample
    anchors = SampleAnchors(n_anchors=1000).select(X, Context(seed=0))
    G = SampleKNNGraph(method="approx", pca_components=8).build(X, anchors, Context(seed=0))
    U = G.anchors.points
    shared = FuzzyKNNGraph(method="approx", pca_components=8).build(U, None, Context(seed=0))
    assert shared.info["shared_index"] and shared.info["searched_dims"] == 8
    alone = FuzzyKNNGraph(method="approx", pca_components=8).build(U.copy(), None,
                                                                   Context(seed=0))
    assert not alone.info["shared_index"]  # another array: its own index
    exact = FuzzyKNNGraph(method="exact", pca_components=8).build(U, None, Context(seed=0))
    a, e = shared.adjacency, exact.adjacency
    assert (a.multiply(e) > 0).sum() / (e > 0).sum() > 0.95


@pytest.mark.slow  # NNDescent.prepare() compiles its search (about 25 s in a fresh env)
def test_shared_index_is_released_with_its_sample_rows():
    """The index kept for the sample's fuzzy graph does not outlive the sample rows."""
    import gc

    from graphclust_plugins.manifold import _neighbors as nb

    U = np.random.default_rng(0).random((300, 4), dtype=np.float32)
    built = nb.sample_index(U, 6, "euclidean", None, seed=0)
    assert nb.shared_index(U, 6, "euclidean", None) is built
    assert nb.shared_index(U.copy(), 6, "euclidean", None) is None
    del U
    gc.collect()
    assert nb._LAST == []
