"""Degenerate-but-legal inputs give a warning or an InputError, never a silent answer;
warnings come once per fit and cause."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs

import graphclust as gc
from graphclust import GraphClustering, InputError
from graphclust._degenerate import check_distances, component_sizes, disconnected_message
from graphclust._fitwarnings import one_warning_per_cause
from graphclust.numerics import same_partition

BLOBS, _ = make_blobs(90, centers=3, n_features=4, random_state=0)


def _caught(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return rec


def _of(rec, category):
    return [w for w in rec if issubclass(w.category, category)]


@pytest.mark.parametrize("preset", ["ncut", "anchor-spectral", "dcd"])
def test_identical_rows_warn(preset):
    X = np.tile(BLOBS[:1], (40, 1))
    rec = _caught(lambda: GraphClustering(preset, n_clusters=3, random_state=0).fit(X))
    msgs = [str(w.message) for w in _of(rec, gc.DegenerateDataWarning)]
    assert len(msgs) == 1 and "all 40 rows are identical" in msgs[0]
    # one cluster asked for: the one right answer, nothing to say
    rec = _caught(lambda: GraphClustering(preset, n_clusters=1, random_state=0).fit(X))
    assert not _of(rec, gc.DegenerateDataWarning)


@pytest.mark.parametrize("scale", [1e-300, 1e200])
def test_extreme_scales_are_fitted_in_safe_units(scale):
    """Data merely scaled are fitted in exact power-of-two units (issue 46 C4): the labels
    of the unscaled data."""
    ref = GraphClustering("ncut", n_clusters=3, random_state=0).fit(BLOBS).labels_
    got = GraphClustering("ncut", n_clusters=3, random_state=0).fit(BLOBS * scale).labels_
    assert same_partition(got, ref)


def test_a_spread_lost_under_its_offset_is_still_an_input_error():
    """Rescaling cannot help when the spread underflows next to the size of the values
    (differences of 1e-160 beside a constant column of ones): refused, as before."""
    X = np.hstack([BLOBS * 1e-160, np.ones((BLOBS.shape[0], 1))])
    with pytest.raises(InputError, match="largest column range.*underflow.*rescale X"):
        GraphClustering("ncut", n_clusters=3, random_state=0).fit(X)


def test_float32_limits_follow_the_dtype():
    X = (BLOBS * 1e-18).astype(np.float32)  # fine in float64, underflows in float32
    check_distances(X.astype(np.float64), 3)
    with pytest.raises(InputError, match="float32"):
        check_distances(X, 3)


@settings(max_examples=60, deadline=None)
@given(st.floats(-30, 30), st.integers(2, 6))
def test_ordinary_scales_are_silent(log_scale, k):
    """Any scale 1e-30..1e30 of ordinary data: no warning, no error (reference: the
    squared distances computed directly are finite and positive)."""
    X = BLOBS * 10.0 ** log_scale
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    assert np.isfinite(d2).all() and (d2[~np.eye(len(X), dtype=bool)] > 0).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_distances(X, k)


def test_fewer_labels_than_clusters_warns_with_the_count():
    """DCD on 3 points asked for 2 clusters converges to one (the reported case)."""
    model = GraphClustering("dcd", n_clusters=2, random_state=0)
    rec = _caught(lambda: model.fit(BLOBS[:3]))
    msgs = [str(w.message) for w in _of(rec, gc.FewerClustersWarning)]
    assert np.unique(model.labels_).size == 1
    assert msgs == ["preset 'dcd' returned 1 distinct label for n_clusters=2 (3 points)"]


def test_ellipsoid_rounding_with_one_anchor_is_a_result():
    """One anchor: a rank-1 embedding, so at most one representative; the rounding
    returns what it can and the fit says how many clusters it found."""
    X = np.abs(BLOBS[:30])
    rec = _caught(lambda: GraphClustering("ncer-anchor", n_clusters=3, random_state=0,
                                          anchors={"n_anchors": 1}).fit(X))
    few = _of(rec, gc.FewerClustersWarning)
    assert len(few) == 1 and "for n_clusters=3" in str(few[0].message)


def test_component_sizes_against_brute_force():
    rng = np.random.default_rng(1)
    A = (rng.random((25, 25)) < 0.06).astype(float)
    A = np.maximum(A, A.T)
    np.fill_diagonal(A, 0)
    # brute force: grow each component by repeated neighbourhood expansion
    seen, sizes = set(), []
    for s in range(25):
        if s in seen:
            continue
        comp, frontier = {s}, {s}
        while frontier:
            frontier = {j for i in frontier for j in np.flatnonzero(A[i])} - comp
            comp |= frontier
        seen |= comp
        sizes.append(len(comp))
    got = component_sizes(gc.AffinityGraph(A))
    assert got.tolist() == sorted(sizes, reverse=True)
    msg = disconnected_message(got, 2)
    assert (msg is None) == (len(sizes) <= 2)
    assert disconnected_message(got, 1) is None


def test_one_warning_per_cause():
    def work():
        for i in range(5):
            warnings.warn(f"solver 'x' stopped at {i} (residual {i / 7:.2e})",
                          gc.ConvergenceWarning)
        warnings.warn("rounding 'y' stopped (residual 1e-3)", gc.ConvergenceWarning)
        warnings.warn("not ours", UserWarning)
        warnings.warn("not ours", UserWarning)

    def wrapped():
        with one_warning_per_cause():
            work()

    rec = _caught(wrapped)
    conv = [str(w.message) for w in _of(rec, gc.ConvergenceWarning)]
    assert conv == ["solver 'x' stopped at 0 (residual 0.00e+00) (5 times in this fit)",
                    "rounding 'y' stopped (residual 1e-3)"]
    assert len(_of(rec, UserWarning)) - len(conv) == 2  # others pass through untouched


def test_user_filters_still_apply_after_collection():
    with warnings.catch_warnings():
        warnings.simplefilter("error", gc.ConvergenceWarning)
        with pytest.raises(gc.ConvergenceWarning):
            with one_warning_per_cause():
                warnings.warn("solver 'x' stopped", gc.ConvergenceWarning)


def test_a_fit_with_restarts_warns_once():
    """DCD runs one MM per Dirichlet prior; ONGR alternates; both capped at 2 iterations."""
    for preset, part in [("dcd", "dcd"), ("ongr-k", "ongr")]:
        rec = _caught(lambda: GraphClustering(preset, n_clusters=3, random_state=0,
                                              solver={"max_iter": 2, "tol": 0.0}).fit(BLOBS))
        conv = [str(w.message) for w in _of(rec, gc.ConvergenceWarning)]
        assert len([m for m in conv if f"solver '{part}'" in m]) == 1, conv


def test_the_disconnected_warning_counts_nodes_of_a_given_graph_and_points_of_data():
    sizes = np.array([5, 1, 1])
    assert "2 isolated points" in disconnected_message(sizes, 2)
    given = disconnected_message(sizes, 2, given=True)
    assert "2 isolated nodes" in given and "points" not in given
    assert "1 isolated node)" in disconnected_message(np.array([5, 4, 1]), 2, given=True)
