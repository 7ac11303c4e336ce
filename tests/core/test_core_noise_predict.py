"""predict and predict_proba after noise=True (docs/confidence.rst, "New points"): new
points the fitted noise rule calls noise are labelled -1, by the rule that flagged the
training points; checked against a slow obvious reference and, with hypothesis, the
invariants tying predict, predict_proba and the fit together."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.stats import multivariate_normal
from sklearn.datasets import make_blobs

import graphclust as gc

KW = {"anchors": {"n_anchors": 200}}


def _blobs_with_background(seed=0):
    X, y = make_blobs(1000, centers=5, cluster_std=0.5, center_box=(-10, 10),
                      random_state=seed)
    B = np.random.default_rng(seed).uniform(X.min(0) - 1, X.max(0) + 1, (250, 2))
    return np.vstack([X, B]), np.r_[y, -np.ones(250, dtype=np.int64)]


@pytest.fixture(scope="module")
def pair():
    """The same fit with and without noise (same seed, so the same clusters)."""
    X, _ = _blobs_with_background()
    noisy = gc.GraphClustering("anchor-spectral", n_clusters=5, random_state=0, noise=True,
                               **KW).fit(X)
    plain = gc.GraphClustering("anchor-spectral", n_clusters=5, random_state=0, **KW).fit(X)
    return X, noisy, plain


def _reference_flags(model, X, labels):
    """The posterior of the point's own cluster against the uniform noise below one half,
    point by point, from the fitted parameters with scipy's Gaussian density (the
    clusters without a Gaussian never flag their points)."""
    g = model._confidence_state.noise_model
    out = np.zeros(len(X), dtype=bool)
    for i, (x, label) in enumerate(zip(X, labels)):
        m = g.models[label]
        if m is None:
            continue
        cluster = g.weights[1 + label] * multivariate_normal(m[0], np.linalg.inv(m[1])).pdf(x)
        noise = g.weights[0] * np.exp(g.log_noise)
        out[i] = cluster / (cluster + noise) < 0.5
    return out


_new_points = hnp.arrays(np.float64, st.tuples(st.integers(1, 15), st.just(2)),
                         elements=st.floats(-14, 14))


@settings(max_examples=25, deadline=None)
@given(_new_points)
def test_predict_after_noise_flags_what_the_fitted_rule_flags(pair, X_new):
    """predict = the clusters' predict, -1 where the fitted posterior of the point's
    cluster against the uniform noise is below one half (slow reference); predict_proba's rows sum to
    one and their argmax is predict's label wherever that is not -1."""
    _, noisy, plain = pair
    base = plain.predict(X_new)
    labels = noisy.predict(X_new)
    np.testing.assert_array_equal(labels, np.where(_reference_flags(noisy, X_new, base),
                                                   -1, base))
    P = noisy.predict_proba(X_new)
    assert P.shape == (len(X_new), 5) and np.isfinite(P).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    kept = labels >= 0
    np.testing.assert_array_equal(P.argmax(axis=1)[kept], labels[kept])
    np.testing.assert_array_equal(P.argmax(axis=1), base)


def test_predict_on_training_rows_flags_as_the_fit_did(pair):
    """The rule is row-local: a training row that predict gives its training cluster is
    flagged by predict exactly when the fit flagged it."""
    X, noisy, plain = pair
    assert noisy.n_noise_ > 0
    same = plain.predict(X) == plain.labels_
    assert same.mean() > 0.95
    np.testing.assert_array_equal((noisy.predict(X) < 0)[same], (noisy.labels_ < 0)[same])


def test_predict_without_noise_labels_every_point(pair):
    X, _, plain = pair
    assert (plain.predict(X) >= 0).all()


@gc.part
class _EdgeOutliers(gc.Rounding):
    """A third-party rounding flagging its own outliers: the sign of the first embedding
    coordinate; rows whose direction lies within the fitted rows' 10 % quantile of
    ``|e_0| / ||e||`` of the boundary flagged (scale-free, so placed rows compare)."""

    name = "edge-outliers-test"
    needs = gc.SolutionField.EMBEDDING

    @staticmethod
    def _cosine(solution):
        E = np.asarray(solution.embedding)
        return E[:, 0] / np.maximum(np.linalg.norm(E, axis=1), 1e-300)

    def round(self, solution, n_clusters, ctx):
        self.threshold_ = float(np.quantile(np.abs(self._cosine(solution)), 0.1))
        return self.assign(solution)

    def assign(self, solution):
        return (np.asarray(solution.embedding)[:, 0] > 0).astype(np.int64)

    def confidence(self, solution, labels):
        return np.full(len(labels), 0.5)

    def outliers(self, solution, labels):
        return np.abs(self._cosine(solution)) < self.threshold_


def test_predict_after_noise_applies_the_parts_own_outliers():
    """A part that flags outliers flags new points through the same hook, on their
    extended solution rows (reference: transform, then the part's rule by hand)."""
    X, _ = make_blobs(400, centers=2, cluster_std=2.0, random_state=1)
    model = gc.GraphClustering("anchor-spectral", n_clusters=2, random_state=0, noise=True,
                               rounding=_EdgeOutliers(), anchors={"n_anchors": 60}).fit(X)
    assert model._confidence_state.noise_rule == "rounding 'edge-outliers-test'"
    X_new = np.random.default_rng(3).uniform(X.min(0), X.max(0), (300, 2))
    part = model.pipeline_.rounding
    E = model.transform(X_new)
    cosine = E[:, 0] / np.linalg.norm(E, axis=1)
    expected = np.where(np.abs(cosine) < part.threshold_, -1, (E[:, 0] > 0).astype(np.int64))
    labels = model.predict(X_new)
    assert (labels < 0).any() and (labels >= 0).any()
    np.testing.assert_array_equal(labels, expected)
