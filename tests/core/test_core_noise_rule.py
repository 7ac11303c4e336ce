"""The framework's noise rule (graphclust.numerics.confidence): the labelled Gaussian
mixture with a uniform noise component fitted by EM, against a slow obvious reference
(point by point, scipy's densities), and its estimates on data drawn from the model."""

from __future__ import annotations

import numpy as np
import pytest
from graphclust.numerics.confidence import (
    MAX_EM_ITER,
    _robust_start,
    fit_cluster_gaussians,
    gaussian_outliers,
)
from scipy.stats import multivariate_normal


def _draw(n_per=400, n_noise=300, seed=0):
    """Three 2-d Gaussians (unit-free covariances, one elongated) and a uniform background
    over a box; labels: the nearest centre (as a clustering would give)."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [8.0, 0.0], [4.0, 7.0]])
    covs = [np.eye(2) * 0.5, np.array([[1.0, 0.6], [0.6, 0.8]]), np.eye(2) * 0.3]
    X = np.vstack([rng.multivariate_normal(c, s, n_per) for c, s in zip(centres, covs)]
                  + [rng.uniform([-4, -4], [12, 11], (n_noise, 2))])
    truth = np.r_[np.repeat([0, 1, 2], n_per), -np.ones(n_noise, dtype=np.int64)]
    labels = ((X[:, None, :] - centres[None]) ** 2).sum(-1).argmin(axis=1)
    return X, labels, truth, centres, covs


def _reference_em(X, labels, k, seed):
    """The EM of the module docstring written out with scipy's densities and explicit
    sums of outer products."""
    starts = [_robust_start(X[labels == c], seed) for c in range(k)]
    params = [(m[0], np.linalg.inv(m[1])) for m in starts]
    V = np.prod(X.max(0) - X.min(0))
    n = len(X)
    w = np.full(k + 1, 1.0 / (k + 1))
    for _ in range(MAX_EM_ITER):
        tau = np.empty(n)
        for c in range(k):
            rows = labels == c
            f = np.atleast_1d(multivariate_normal(params[c][0], params[c][1]).pdf(X[rows]))
            tau[rows] = w[1 + c] * f / (w[1 + c] * f + w[0] / V)
        new = np.r_[n - tau.sum(), [tau[labels == c].sum() for c in range(k)]] / n
        params = []
        for c in range(k):
            t, rows = tau[labels == c], X[labels == c]
            loc = sum(ti * x for ti, x in zip(t, rows)) / t.sum()
            cov = sum(ti * np.outer(x - loc, x - loc) for ti, x in zip(t, rows)) / t.sum()
            params.append((loc, cov))
        done = np.abs(new - w).max() < 1.0 / n
        w = new
        if done:
            break
    return w, params, tau < 0.5


@pytest.mark.slow  # three robust starts and the reference: about 3 s
def test_em_equals_the_reference():
    X, labels, *_ = _draw(n_per=150, n_noise=100)
    model = fit_cluster_gaussians(X, labels, 3, seed=0)
    w, params, flags = _reference_em(X, labels, 3, seed=0)
    np.testing.assert_allclose(model.weights, w, atol=1e-9)
    for m, (loc, cov) in zip(model.models, params):
        np.testing.assert_allclose(m[0], loc, atol=1e-9)
        np.testing.assert_allclose(np.linalg.inv(m[1]), cov, atol=1e-9)
    np.testing.assert_array_equal(gaussian_outliers(X, labels, model), flags)


def test_em_equals_the_reference_on_a_small_draw():
    """The quick sibling: a small draw, so the reference runs in a fraction of a second."""
    X, labels, *_ = _draw(n_per=40, n_noise=20, seed=3)
    model = fit_cluster_gaussians(X, labels, 3, seed=0)
    w, params, flags = _reference_em(X, labels, 3, seed=0)
    np.testing.assert_allclose(model.weights, w, atol=1e-9)
    for m, (loc, _) in zip(model.models, params):
        np.testing.assert_allclose(m[0], loc, atol=1e-9)
    np.testing.assert_array_equal(gaussian_outliers(X, labels, model), flags)


@pytest.mark.slow  # three robust starts on 1 800 rows: about 5 s
def test_em_recovers_the_models_parameters():
    """On data drawn from the model the fitted noise weight, centres and covariances are
    near the true ones (the robust start alone is inflated by the background inside
    each ellipse), and nothing is flagged without background."""
    X, labels, truth, centres, covs = _draw(n_per=1500, n_noise=900, seed=1)
    model = fit_cluster_gaussians(X, labels, 3, seed=0)
    assert model.weights[0] == pytest.approx(900 / len(X), abs=0.03)
    for m, c, s in zip(model.models, centres, covs):
        np.testing.assert_allclose(m[0], c, atol=0.1)
        np.testing.assert_allclose(np.linalg.inv(m[1]), s, atol=0.12)
    flags = gaussian_outliers(X, labels, model)
    back = truth < 0
    assert (flags & back).sum() / flags.sum() >= 0.9
    clean = ~back
    model = fit_cluster_gaussians(X[clean], labels[clean], 3, seed=0)
    assert gaussian_outliers(X[clean], labels[clean], model).mean() <= 0.01
