"""One PCA of the sample rows for the neighbour search and the layout's PCA start."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import graphclust
from graphclust_plugins.manifold import _projections
from graphclust_plugins.manifold._neighbors import project
from graphclust_plugins.manifold._projections import leading_projection, remember_projection


def _rows(n=400, d=30, seed=0):
    rng = np.random.default_rng(seed)
    scales = np.linspace(3.0, 0.1, d)  # distinct variances: components well defined
    return (rng.normal(size=(n, d)) * scales).astype(np.float32)


def _reference_components(X, p):
    """The slow obvious reference: eigenvectors of the sample covariance, leading first,
    each signed as fit_pca signs them (its largest-magnitude entry positive)."""
    A = np.asarray(X, dtype=np.float64)
    vals, vecs = np.linalg.eigh(np.cov(A, rowvar=False))
    comps = vecs[:, np.argsort(-vals)[:p]].T
    i = np.abs(comps).argmax(axis=1)
    return comps * np.sign(comps[np.arange(p), i])[:, None]


def test_leading_components_of_the_remembered_projection_are_the_leading_components():
    X = _rows()
    _, proj = project(X, 12)  # remembers its projection of X
    lead = leading_projection(X, 4)
    np.testing.assert_allclose(lead.components, _reference_components(X, 4), atol=2e-5)
    np.testing.assert_allclose(lead.transform(X), proj.transform(X)[:, :4], rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(lead.mean, X.mean(axis=0, dtype=np.float64), atol=1e-6)


def test_no_remembered_projection_fits_one(monkeypatch):
    X, other = _rows(seed=1), _rows(seed=2)
    project(other, 12)  # remembered for another array: not read for X
    calls = []
    real = _projections.fit_pca
    monkeypatch.setattr(_projections, "fit_pca", lambda A, p: calls.append(p) or real(A, p))
    lead = leading_projection(X, 3)
    assert calls == [3]
    np.testing.assert_allclose(lead.components, _reference_components(X, 3), atol=2e-5)
    remember_projection(X, real(X, 2))  # fewer components than asked: fitted again
    leading_projection(X, 3)
    assert calls == [3, 3]


def test_the_projection_is_released_with_its_rows():
    X = _rows(seed=3)
    project(X, 5)
    assert _projections._LAST
    del X
    gc.collect()
    assert not _projections._LAST


@pytest.mark.parametrize("pca_components", [pytest.param(None, marks=pytest.mark.slow), 8])
def test_the_layout_start_fits_no_second_pca(monkeypatch, pca_components):
    """on-sample hands the solver the rows its graph searched: with the search on 8
    components the PCA start reads them (one PCA a fit), without it the start fits its
    own; the labels are those of a start from a fresh PCA of the rows either way."""
    from graphclust_plugins.manifold import _neighbors

    X = _rows(n=600, d=20, seed=4)
    fits = []
    for module in (_neighbors, _projections):
        real = module.fit_pca
        monkeypatch.setattr(module, "fit_pca",
                            lambda A, p, _r=real, _m=module.__name__: fits.append(p) or _r(A, p))
    graph = {"name": "fuzzy-knn", "n_neighbors": 15, "method": "exact"}
    if pca_components:
        graph["pca_components"] = pca_components
    spec = {"anchors": {"name": "sample", "n_anchors": 600}, "graph": {"name": "sample-knn"},
            "adapter": {"name": "on-sample", "graph": graph},
            "solver": {"name": "umap-layout", "init": "pca", "n_components": 3,
                       "n_epochs": 20},
            "rounding": {"name": "argmax"}}
    model = graphclust.GraphClustering(spec, n_clusters=3, random_state=0).fit(X)
    assert fits == ([pca_components] if pca_components else [3])
    assert np.asarray(model.labels_).shape == (600,)
