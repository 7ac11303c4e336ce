"""The ``gmm`` rounding (the mixture family): against scikit-learn's GaussianMixture,
on overlapping anisotropic Gaussians, determinism, ``assign``, degenerate inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score
from sklearn.mixture import GaussianMixture

import graphclust
from graphclust_plugins.common.rounding_gmm import GMMRounding


def _aniso(n=900, seed=0):
    rng = np.random.default_rng(seed)
    sizes = [n // 3] * 3
    covs = [np.array([[6.0, 2.9], [2.9, 1.5]]), np.array([[1.5, -1.2], [-1.2, 1.2]]),
            np.array([[0.3, 0.0], [0.0, 0.3]])]
    centres = [(0.0, 0.0), (2.5, 1.0), (0.5, 3.0)]
    X = np.vstack([rng.multivariate_normal(c, S, m) for c, S, m in zip(centres, covs, sizes)])
    return X, np.repeat(np.arange(3), sizes)


def _round(E, k, seed=0, **params):
    r = GMMRounding(**params)
    return r, r.round(graphclust.Solution(embedding=E), k, graphclust.Context(seed=seed))


def test_gmm_rounding_is_scikit_learns_mixture_with_the_part_seed():
    X, _ = _aniso()
    r, labels = _round(X, 3, seed=4)
    ref = GaussianMixture(3, covariance_type="full", n_init=3, max_iter=200, reg_covar=1e-6,
                          random_state=graphclust.Context(seed=4).seed_for("rounding.gmm"))
    assert adjusted_rand_score(ref.fit(X).predict(X), labels) == pytest.approx(1.0)


def test_gmm_beats_kmeans_on_overlapping_anisotropic_gaussians():
    X, y = _aniso()
    _, labels = _round(X, 3)
    km = KMeans(3, n_init=10, random_state=0).fit_predict(X)
    assert adjusted_rand_score(y, labels) > adjusted_rand_score(y, km) + 0.1


def test_gmm_rounding_deterministic_and_assign_reproduces_labels():
    X, _ = _aniso(300, seed=2)
    r, a = _round(X, 3, seed=7)
    _, b = _round(X, 3, seed=7)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(r.assign(graphclust.Solution(embedding=X)), a)


def test_gmm_rounding_drops_an_empty_component_and_assign_stays_in_range():
    # two distinct rows repeated: at most two components can hold a point
    E = np.repeat(np.array([[0.0, 0.0], [10.0, 10.0]]), 20, axis=0)
    r, labels = _round(E, 3, reg_covar=1e-3)
    assert set(labels.tolist()) <= {0, 1, 2} and labels.max() + 1 == np.unique(labels).size
    new = r.assign(graphclust.Solution(embedding=np.array([[0.1, 0.0], [9.0, 9.5]])))
    assert set(new.tolist()) <= set(labels.tolist())


def test_gmm_rounding_refuses_assign_before_round_and_a_wrong_width():
    r = GMMRounding()
    with pytest.raises(RuntimeError, match="round"):
        r.assign(graphclust.Solution(embedding=np.zeros((2, 2))))
    r, _ = _round(_aniso(90)[0], 2)
    with pytest.raises(ValueError, match="3 columns"):
        r.assign(graphclust.Solution(embedding=np.zeros((2, 3))))


@settings(max_examples=15, deadline=None)
@given(n=st.integers(5, 40), k=st.integers(1, 6), seed=st.integers(0, 3))
def test_gmm_rounding_labels_are_consecutive_for_any_input(n, k, seed):
    E = np.random.default_rng(seed).standard_normal((n, 2))
    _, labels = _round(E, k, reg_covar=1e-3, n_init=1)
    assert labels.shape == (n,) and labels.min() == 0
    assert np.unique(labels).size == labels.max() + 1 <= min(n, k)


def test_gmm_preset_like_spec_runs_through_the_estimator():
    X, y = _aniso()
    est = graphclust.GraphClustering({"graph": {"name": "gaussian-anchor", "n_neighbors": 1},
                                      "anchors": {"name": "random", "n_anchors": 1},
                                      "solver": {"name": "features"},
                                      "rounding": {"name": "gmm"}},
                                     n_clusters=3, random_state=0).fit(X)
    assert adjusted_rand_score(y, est.labels_) > 0.6
    np.testing.assert_array_equal(est.predict(X), est.labels_)


def test_max_fit_fits_on_rows_drawn_by_global_index_and_labels_every_row_by_predict():
    from threadpoolctl import threadpool_limits

    X, _ = _aniso(900, seed=3)
    ctx = graphclust.Context(seed=2)
    r, labels = _round(X, 3, seed=2, max_fit=300)
    idx = np.sort(ctx.rng("rounding.gmm.sample").choice(900, 300, replace=False))
    np.testing.assert_array_equal(r.sample_rows(900, 3, ctx), idx)
    assert r.sample_rows(300, 3, ctx) is None and GMMRounding().sample_rows(900, 3, ctx) is None
    ref = GaussianMixture(3, covariance_type="full", n_init=3, max_iter=200, reg_covar=1e-6,
                          random_state=ctx.seed_for("rounding.gmm"))
    with threadpool_limits(limits=1):
        ref.fit(X[idx])
        kept = np.unique(ref.predict(X[idx]))
        expected = ref.predict_proba(X)[:, kept].argmax(axis=1)
    np.testing.assert_array_equal(labels, expected)
    # the chunk hook's contract: round on the drawn rows, then assign every row
    on_sample, _ = _round(X[idx], 3, seed=2, max_fit=300)
    np.testing.assert_array_equal(on_sample.assign(graphclust.Solution(embedding=X)), labels)
