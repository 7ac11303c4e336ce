"""Tests of the ``capped`` anchor selector used by the ONGR presets (m = min(1000, n/10))."""

from __future__ import annotations

import numpy as np
import pytest

import graphclust
from graphclust_plugins.ongr.anchors_capped import CappedAnchors


def _registry_has(name):
    return name in graphclust.get_registry().anchors


@pytest.mark.parametrize("n, expected", [(30, 3), (5, 1), (9298, 929), (70000, 1000)])
def test_rule(n, expected):
    assert CappedAnchors().n_anchors_for(n) == expected


@pytest.mark.skipif(not _registry_has("random"), reason="common 'random' anchors not registered")
def test_random_base_count_and_determinism(rng):
    X = rng.normal(size=(500, 3))
    sel = CappedAnchors(base={"name": "random"}, n_anchors=1000, max_fraction=0.1)
    a = sel.select(X, graphclust.Context(seed=3))
    b = sel.select(X, graphclust.Context(seed=3))
    assert a.n_anchors == 50
    np.testing.assert_array_equal(a.points, b.points)
    assert a.info["base"] == "random"


def test_base_without_n_anchors_is_rejected(rng):
    @graphclust.part
    class Fixed(graphclust.AnchorSelector):
        name = "fixed-test"

        def select(self, X, ctx):
            return graphclust.Anchors(X[:2])

    with pytest.raises(graphclust.InputError, match="n_anchors"):
        CappedAnchors(base=Fixed()).select(rng.normal(size=(40, 2)), graphclust.Context())


def test_checks():
    assert CappedAnchors(max_fraction=0.0).check_params()
    assert CappedAnchors(base="kmeans").check_params()
    assert not CappedAnchors().check_params()
