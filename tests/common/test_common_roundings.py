"""k-means and argmax roundings."""

from __future__ import annotations

import numpy as np
import pytest

import graphclust
from graphclust_plugins.common.rounding_argmax import ArgmaxRounding
from graphclust_plugins.common.rounding_kmeans import KMeansRounding


def test_kmeans_rounding_recovers_blobs_and_assigns(blobs):
    X, y = blobs
    r = KMeansRounding(n_init=3)
    labels = r.round(graphclust.Solution(embedding=X), 3, graphclust.Context(seed=0))
    assert set(labels) == {0, 1, 2}
    from sklearn.metrics import adjusted_rand_score
    assert adjusted_rand_score(y, labels) == pytest.approx(1.0)
    assert r.cluster_centers_.shape == (3, X.shape[1])
    # assign on the training rows reproduces the labels; on perturbed rows too
    np.testing.assert_array_equal(r.assign(graphclust.Solution(embedding=X)), labels)
    Xn = X + 0.01 * np.random.default_rng(1).standard_normal(X.shape)
    np.testing.assert_array_equal(r.assign(graphclust.Solution(embedding=Xn)), labels)


def test_kmeans_rounding_deterministic_and_seed_dependent_stream(rng):
    E = rng.standard_normal((60, 3))
    a = KMeansRounding(n_init=1).round(graphclust.Solution(embedding=E), 4, graphclust.Context(seed=3))
    b = KMeansRounding(n_init=1).round(graphclust.Solution(embedding=E), 4, graphclust.Context(seed=3))
    np.testing.assert_array_equal(a, b)


def test_kmeans_rounding_one_cluster_and_normalize(rng):
    E = rng.standard_normal((30, 2))
    r = KMeansRounding()
    labels = r.round(graphclust.Solution(embedding=E), 1, graphclust.Context())
    assert np.all(labels == 0)
    # row normalisation: points on the same ray share a label; zero row does not crash
    E2 = np.array([[1, 0], [5, 0], [0, 2], [0, 9], [0, 0.0]])
    r2 = KMeansRounding(normalize_rows=True, n_init=2)
    lab = r2.round(graphclust.Solution(embedding=E2), 3, graphclust.Context())
    assert lab[0] == lab[1] and lab[2] == lab[3] and lab[0] != lab[2]
    assert np.allclose(np.linalg.norm(r2.cluster_centers_[[lab[0], lab[2]]], axis=1), 1)


def test_kmeans_rounding_duplicate_rows_gives_consecutive_labels():
    E = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0]]), 10, axis=0)
    with pytest.warns(Warning):
        labels = KMeansRounding(n_init=1).round(graphclust.Solution(embedding=E), 3,
                                                 graphclust.Context())
    u = np.unique(labels)
    np.testing.assert_array_equal(u, np.arange(u.size))


def test_kmeans_rounding_params_checked():
    assert KMeansRounding(n_init=0).check_params()
    assert KMeansRounding(normalize_rows="yes").check_params()
    assert not KMeansRounding().check_params()


def test_argmax_basic_ties_and_assign():
    S = np.array([[0.9, 0.1, 0.0], [0.2, 0.8, 0.0], [0.5, 0.5, 0.0], [0.0, 0.1, 0.9]])
    r = ArgmaxRounding()
    lab = r.round(graphclust.Solution(soft=S), 3, graphclust.Context())
    np.testing.assert_array_equal(lab, [0, 1, 0, 2])
    np.testing.assert_array_equal(r.assign(graphclust.Solution(soft=S[::-1])), lab[::-1])


def test_argmax_empty_cluster_repair_and_zero_rows():
    # column 1 never wins, column 2 has the largest mass: zero rows go there
    S = np.array([[0.6, 0.3, 0.1], [0.0, 0.4, 0.6], [0.0, 0.0, 0.0], [0.1, 0.2, 0.7]])
    r = ArgmaxRounding()
    lab = r.round(graphclust.Solution(soft=S), 3, graphclust.Context())
    # columns {0, 2} kept -> labels {0, 1}; zero row -> column 2 -> label 1
    np.testing.assert_array_equal(lab, [0, 1, 1, 1])
    np.testing.assert_array_equal(r.columns_, [0, 2])
    # new points: argmax restricted to kept columns; a row favouring column 1 goes to
    # the better of columns 0/2; an all-zero row to the fallback label
    new = np.array([[0.2, 0.7, 0.1], [0, 0, 0], [0.0, 0.9, 0.1]])
    np.testing.assert_array_equal(r.assign(graphclust.Solution(soft=new)), [0, 1, 1])


def test_argmax_all_zero_gives_single_cluster():
    r = ArgmaxRounding()
    lab = r.round(graphclust.Solution(soft=np.zeros((5, 3))), 3, graphclust.Context())
    np.testing.assert_array_equal(lab, np.zeros(5))


def test_roundings_registered():
    reg = graphclust.get_registry()
    assert reg.roundings.get("kmeans") is KMeansRounding
    assert reg.roundings.get("argmax") is ArgmaxRounding
    assert set(reg.metrics.names()) >= {"acc", "nmi", "ari", "purity"}


def test_kmeans_rounding_keeps_float32_embeddings():
    """A float32 embedding is clustered in float32 (no n x p float64 copy) and gives
    the same partition as its float64 twin on well-separated data."""
    from graphclust.numerics import normalize_rows
    from graphclust_plugins.common.rounding_kmeans import KMeansRounding
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(0)
    E = np.vstack([rng.normal(c, 0.1, size=(40, 3)) for c in (-3.0, 0.0, 3.0)])
    rd = KMeansRounding(normalize_rows=False)
    assert rd._prepare(E.astype(np.float32)).dtype == np.float32
    assert rd._prepare(E).dtype == np.float64
    assert normalize_rows(E.astype(np.float32)).dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(normalize_rows(E.astype(np.float32)), axis=1), 1,
                               rtol=1e-6)
    ctx = graphclust.Context(seed=0)
    l32 = rd.round(graphclust.Solution(embedding=E.astype(np.float32)), 3, ctx)
    l64 = KMeansRounding().round(graphclust.Solution(embedding=E), 3, ctx)
    assert adjusted_rand_score(l32, l64) == 1.0
    assert rd.cluster_centers_.dtype == np.float32


def test_kmeans_rounding_centres_in_place_and_restores():
    """With copy_x=False a writeable embedding is not copied: the fit's peak is below
    embedding + one copy, the embedding comes back (to the last bits), and a read-only
    embedding gives the same labels through a copy."""
    import tracemalloc

    rng = np.random.default_rng(1)
    E = (rng.standard_normal((20000, 32)) + 5.0).astype(np.float32)  # far from the origin
    E0 = E.copy()
    ctx = graphclust.Context(seed=0)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        labels = KMeansRounding(n_init=1, max_iter=5, copy_x=False).round(
            graphclust.Solution(embedding=E), 4, ctx)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    # scikit-learn's copy_x=True path needs >= 2 E (copy + variance temporary)
    assert peak < 1.5 * E.nbytes
    np.testing.assert_allclose(E, E0, rtol=0, atol=1e-5)
    frozen = E0.copy()
    frozen.setflags(write=False)
    again = KMeansRounding(n_init=1, max_iter=5, copy_x=False).round(
        graphclust.Solution(embedding=frozen), 4, ctx)
    # the default copies: the embedding is left bit for bit
    E1 = E0.copy()
    KMeansRounding(n_init=1, max_iter=5).round(graphclust.Solution(embedding=E1), 4, ctx)
    np.testing.assert_array_equal(E1, E0)
    np.testing.assert_array_equal(again, labels)


@pytest.mark.parametrize("copy_x", [True, False])
def test_kmeans_restarts_equal_one_scikit_learn_fit(copy_x):
    """The rounding runs its restarts one by one (to report them) and must still give
    exactly what one KMeans(n_init=10) fit with the same seed gives."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(1)
    E = rng.normal(size=(400, 6)) + np.repeat(rng.normal(scale=3, size=(5, 6)), 80, axis=0)
    ref_E = E.copy()
    ctx = graphclust.Context(seed=7)
    rounding = KMeansRounding(n_init=10, copy_x=copy_x)
    labels = rounding.round(graphclust.Solution(embedding=E), 5, ctx)
    ref = KMeans(5, n_init=10, random_state=ctx.seed_for("rounding.kmeans")).fit(ref_E)
    assert rounding.inertia_ == pytest.approx(ref.inertia_, rel=1e-12)
    assert adjusted_rand_score(labels, ref.labels_) == 1.0
    np.testing.assert_allclose(E, ref_E, rtol=0, atol=1e-12)
