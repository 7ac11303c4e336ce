"""confidence_, predict_proba and noise=True (docs/confidence.rst): the framework's
helpers against slow obvious references, the invariants with hypothesis, and the fits."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.datasets import make_blobs

import graphclust as gc
from graphclust import AffinityGraph, AnchorGraph, Memberships, Solution
from graphclust.confidence import agree, graph_agreement, member_agreement
from graphclust.numerics.confidence import fit_cluster_gaussians, gaussian_outliers

SMALL = {"anchors": {"n_anchors": 60}}


# -- agree: probabilities whose strict argmax is the label -------------------------------
@st.composite
def _rows_and_labels(draw):
    n = draw(st.integers(1, 12))
    k = draw(st.integers(1, 6))
    values = st.one_of(st.floats(-1, 5), st.sampled_from([0.0, 0.5, 1.0]),  # ties, zeros
                       st.sampled_from([np.nan, np.inf, -np.inf]))
    P = draw(hnp.arrays(np.float64, (n, k), elements=values))
    labels = draw(hnp.arrays(np.int64, (n,), elements=st.integers(0, k - 1)))
    return P, labels


@settings(max_examples=40, deadline=None)
@given(_rows_and_labels())
def test_agree_gives_probabilities_whose_argmax_is_the_label(case):
    P, labels = case
    out = agree(P, labels)
    assert out.shape == P.shape and np.isfinite(out).all()
    assert (out >= 0).all() and (out <= 1 + 1e-12).all()
    np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(out.argmax(axis=1), labels)


def test_agree_leaves_rows_that_already_agree_unchanged():
    P = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
    np.testing.assert_allclose(agree(P, np.array([0, 2])), P, rtol=0, atol=1e-15)
    # a tie is broken towards the label by the least move
    tied = agree(np.array([[0.5, 0.5]]), np.array([1]))
    assert tied[0, 1] > tied[0, 0] and tied[0, 1] - tied[0, 0] < 1e-8


# -- the fallback: graph neighbours' label share, against W formed densely ---------------
def _dense_share(W, labels):
    out = np.zeros(len(labels))
    for i in range(len(labels)):
        total = W[i].sum()
        out[i] = W[i, labels == labels[i]].sum() / total if total > 0 else 0.0
    return out


def test_anchor_graph_agreement_equals_the_share_on_w_formed_densely():
    rng = np.random.default_rng(0)
    Z = rng.random((40, 7)) * (rng.random((40, 7)) < 0.4)
    Z[np.arange(40), rng.integers(0, 7, 40)] += 0.5  # every row some weight
    Z /= Z.sum(axis=1, keepdims=True)
    labels = rng.integers(0, 3, 40)
    W = Z @ np.diag(1 / Z.sum(axis=0)) @ Z.T
    got = graph_agreement(AnchorGraph(sp.csr_array(Z)), labels, 3)
    np.testing.assert_allclose(got, _dense_share(W, labels), atol=1e-12)


def test_affinity_graph_agreement_equals_the_dense_share():
    rng = np.random.default_rng(1)
    A = rng.random((30, 30)) * (rng.random((30, 30)) < 0.3)
    A = A + A.T
    np.fill_diagonal(A, 0)
    A[0, :] = A[:, 0] = 0  # an isolated point gets 0
    labels = rng.integers(0, 4, 30)
    got = graph_agreement(AffinityGraph(sp.csr_array(A)), labels, 4)
    np.testing.assert_allclose(got, _dense_share(A, labels), atol=1e-12)
    assert got[0] == 0.0


def test_member_agreement_is_the_share_of_members_agreeing():
    """Against a loop: each base cluster belongs to the consensus cluster holding most of
    its points; a point's value is the share of members whose cluster of it belongs to
    its consensus cluster."""
    rng = np.random.default_rng(2)
    members = [rng.integers(0, k, 50) for k in (3, 4, 5)]
    consensus = rng.integers(0, 3, 50)
    got = member_agreement(Memberships.from_labels(members), consensus, 3)
    want = np.zeros(50)
    for m in members:
        owner = {b: np.bincount(consensus[m == b], minlength=3).argmax() for b in np.unique(m)}
        want += np.array([owner[b] == c for b, c in zip(m, consensus)])
    np.testing.assert_allclose(got, want / len(members))


# -- the parts' confidences against references --------------------------------------------
def test_kmeans_margin_and_posterior_against_a_reference():
    from graphclust_plugins.common.rounding_kmeans import KMeansRounding

    E, _ = make_blobs(200, centers=3, random_state=0)
    r = KMeansRounding(n_init=2)
    labels = r.round(Solution(embedding=E), 3, gc.Context(0))
    C = r.cluster_centers_
    d = np.sqrt(((E[:, None, :] - C[None]) ** 2).sum(-1))
    own = d[np.arange(200), labels]
    rival = np.where(np.arange(3)[None] == labels[:, None], np.inf, d).min(axis=1)
    np.testing.assert_allclose(r.confidence(Solution(embedding=E), labels), 1 - own / rival,
                               atol=1e-9)
    var = ((E - C[labels]) ** 2).sum() / E.size
    post = np.exp(-d ** 2 / (2 * var))
    post /= post.sum(axis=1, keepdims=True)
    got = agree(r.probabilities(Solution(embedding=E), labels), labels)
    np.testing.assert_allclose(got, post, atol=1e-9)


def test_argmax_margin_against_a_reference():
    from graphclust_plugins.common.rounding_argmax import ArgmaxRounding

    S = np.array([[3.0, 1.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 0.5], [0.0, 2.0, 0.0]])
    r = ArgmaxRounding()
    labels = r.round(Solution(soft=S), 3, gc.Context(0))
    np.testing.assert_allclose(r.confidence(Solution(soft=S), labels),
                               [2 / 3, 0.0, 0.0, 1.0])


@pytest.mark.slow  # the density tree's first call compiles it (3 s)
def test_density_membership_is_one_at_each_clusters_densest_point():
    from graphclust_plugins.manifold.rounding_density import DensityRounding

    E, _ = make_blobs(400, centers=3, cluster_std=0.5, random_state=0)
    r = DensityRounding()
    labels = r.round(Solution(embedding=E), 3, gc.Context(0))
    c = r.confidence(Solution(embedding=E), labels)
    assert ((c >= 0) & (c <= 1)).all()
    for cluster in range(3):
        assert c[labels == cluster].max() == pytest.approx(1.0)


# -- fits -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def blobs():
    return make_blobs(300, centers=3, cluster_std=1.0, random_state=0)


@pytest.mark.parametrize("preset", ["anchor-spectral", "ncut", "ongr-k", "ncer-anchor"])
def test_confidence_after_every_fit_is_finite_in_unit_interval(preset, blobs):
    X, _ = blobs
    kw = SMALL if preset != "ncut" else {}
    model = gc.GraphClustering(preset, n_clusters=3, random_state=0, **kw).fit(X)
    c = model.confidence_
    assert c.shape == (300,) and np.isfinite(c).all() and (c >= 0).all() and (c <= 1).all()
    assert model.confidence_source_
    assert model.n_noise_ == 0 and (model.labels_ >= 0).all()


@pytest.fixture(scope="module")
def fitted(blobs):
    X, _ = blobs
    return gc.GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                              **SMALL).fit(X)


@settings(max_examples=25, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 20), st.just(2)),
                  elements=st.floats(-15, 15)))
def test_predict_proba_rows_sum_to_one_and_argmax_is_predict(fitted, X_new):
    P = fitted.predict_proba(X_new)
    assert P.shape == (X_new.shape[0], fitted.n_clusters_) and np.isfinite(P).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(P.argmax(axis=1), fitted.predict(X_new))


def test_predict_proba_exists_exactly_where_predict_does(blobs):
    X, _ = blobs
    assert not hasattr(gc.GraphClustering("ncut", n_clusters=3), "predict_proba")
    assert hasattr(gc.GraphClustering("anchor-spectral", n_clusters=3), "predict_proba")


def _blobs_with_background(n_blobs=1000, n_background=250, seed=0):
    X, y = make_blobs(n_blobs, centers=5, cluster_std=0.5, center_box=(-10, 10),
                      random_state=seed)
    rng = np.random.default_rng(seed)
    B = rng.uniform(X.min(0) - 1, X.max(0) + 1, (n_background, 2))
    return np.vstack([X, B]), np.r_[y, -np.ones(n_background, dtype=np.int64)]


def test_noise_flags_background_and_keeps_clean_blobs(blobs):
    """The framework's rule on a spectral fit: the uniform background is flagged, the
    blob points are kept; the same blobs without background flag almost nothing."""
    X, y = _blobs_with_background()
    model = gc.GraphClustering("anchor-spectral", n_clusters=5, random_state=0, noise=True,
                               anchors={"n_anchors": 200}).fit(X)
    flagged, background = model.labels_ < 0, y < 0
    assert model.n_noise_ == flagged.sum()
    assert (flagged & background).sum() / flagged.sum() >= 0.9  # precision
    assert (flagged & background).sum() / background.sum() >= 0.6
    clean = gc.GraphClustering("anchor-spectral", n_clusters=5, random_state=0, noise=True,
                               anchors={"n_anchors": 200}).fit(X[~background])
    assert (clean.labels_ < 0).mean() <= 0.02


def test_cluster_gaussians_flag_nothing_for_small_clusters():
    """Fewer than 5 points per column: no covariance, no flags (documented rule)."""
    X = np.random.default_rng(0).normal(size=(20, 5))
    model = fit_cluster_gaussians(X, np.zeros(20, dtype=np.int64), 1)
    assert model.models == [None]
    assert not gaussian_outliers(X, np.zeros(20, dtype=np.int64), model).any()


def test_noise_parameter_is_checked():
    with pytest.raises(gc.SpecError, match="noise"):
        gc.GraphClustering("anchor-spectral", n_clusters=3, noise="yes").fit(np.eye(4))


def test_sparse_fit_gives_confidence_and_predict_proba(blobs):
    """Sparse rows in and out (scikit-learn's sparse check cannot read a clusterer's
    predict_proba: tests/core/test_core_estimator.py)."""
    X, _ = blobs
    Xs = sp.csr_array(np.abs(X))
    model = gc.GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                               **SMALL).fit(Xs)
    assert np.isfinite(model.confidence_).all()
    P = model.predict_proba(Xs[:50])
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(P.argmax(axis=1), model.predict(Xs[:50]))


def _every_preset():
    return [*gc.get_registry().presets.names(), "auto"]


@pytest.mark.slow  # every preset on digits: about two minutes
@pytest.mark.parametrize("preset", _every_preset())
def test_every_preset_on_digits_is_surer_of_its_correct_labels(preset):
    """The issue's target: confidence_ in [0, 1] and higher on average for correctly
    labelled points (best one-to-one matching of clusters to classes) than for wrong ones."""
    from scipy.optimize import linear_sum_assignment
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    model = gc.GraphClustering(preset, n_clusters=10, random_state=0).fit(X)
    labels, conf = np.asarray(model.labels_), np.asarray(model.confidence_)
    assert np.isfinite(conf).all() and conf.min() >= 0 and conf.max() <= 1
    table = np.zeros((10, 10))
    np.add.at(table, (labels, y), 1)
    rows, cols = linear_sum_assignment(-table)
    ok = cols[np.argsort(rows)][labels] == y
    assert conf[ok].mean() > conf[~ok].mean()


@gc.part
class _HalfSure(gc.Rounding):
    """A third-party rounding giving a confidence of its own (NaN for odd rows)."""

    name = "half-sure"
    needs = gc.SolutionField.EMBEDDING

    def round(self, solution, n_clusters, ctx):
        E = solution.embedding
        return (E[:, 0] > np.median(E[:, 0])).astype(np.int64)

    def confidence(self, solution, labels):
        out = np.full(len(labels), 0.5)
        out[1::2] = np.nan
        return out


def test_a_third_party_rounding_gives_the_confidence(blobs):
    """The protocol is part-level: a rounding outside graphclust implements it and the
    fit uses it (NaN read as 0); a pipeline whose rounding gives none gets the fallback."""
    X, _ = blobs
    model = gc.GraphClustering("ncut", n_clusters=2, random_state=0,
                               rounding=_HalfSure()).fit(X)
    assert model.confidence_source_ == "rounding 'half-sure'"
    np.testing.assert_array_equal(model.confidence_[::2], 0.5)
    np.testing.assert_array_equal(model.confidence_[1::2], 0.0)
    fallback = gc.GraphClustering("ncer", n_clusters=3, random_state=0).fit(X)
    assert fallback.confidence_source_ == "graph neighbours"
    np.testing.assert_allclose(fallback.confidence_, graph_agreement(
        fallback.graph_, fallback.labels_, 3))
