"""auto's rule 11 (issue 44): without k, in 8-50 dimensions above the exact graph's rows,
structure that rule 10's density tree finds but does not hold whole (a share of rows in
clusters between the structureless samples' and rule 10's) goes to the manifold family
instead of rule 3's anchor eigengap; structureless samples stay far below its share."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from graphclust import GraphClustering, NoClusterStructureWarning, profile_data
from graphclust_plugins.auto import _rules_small_clusters
from graphclust_plugins.auto._rules_curved import CURVED_STRUCTURE_SHARE
from graphclust_plugins.auto._rules_small_clusters import (
    SMALL_CLUSTER_SHARE,
    small_clusters_diagnostic,
)
from graphclust_plugins.auto.rule_auto import AUTO_RULES
from sklearn.metrics import adjusted_rand_score


def _decide_with_share(monkeypatch, n: int, d: int, share: float, clusters: int = 10):
    """The rule the table picks for an ``n x d`` Gaussian when rule 10's tree reports
    ``clusters`` clusters holding ``share`` of the rows (the diagnostic replaced)."""
    calls = []

    def diag(S):
        calls.append(S.shape)
        return {"rows": S.shape[0], "size": 9, "clusters": clusters, "share": share}

    monkeypatch.setattr(_rules_small_clusters, "small_clusters_diagnostic", diag)
    X = np.random.default_rng(0).standard_normal((n, d))
    rule, reason, _ = AUTO_RULES.decide(profile_data(X, None))
    return rule.number, reason, calls


@pytest.mark.parametrize("n,d,share,clusters,number", [
    (6000, 16, 0.79, 14, 11),   # structure, not compact: the manifold family
    (6000, 16, 0.50, 3, 11),    # the share's lower bound belongs to the rule
    (6000, 16, 0.49, 3, 3),     # below it: structureless as far as the test goes
    (6000, 16, 0.97, 10, 10),   # compact: rule 10's own tree
    (6000, 16, 0.79, 1, 3),     # one cluster is no structure
    (4000, 16, 0.79, 14, 2),    # the exact graph's rows: rule 2
    (6000, 60, 0.79, 14, 7),    # d > 50: rule 7 itself
])
def test_the_share_band_sends_curved_structure_to_the_manifold_family(
        monkeypatch, n, d, share, clusters, number):
    got, reason, calls = _decide_with_share(monkeypatch, n, d, share, clusters)
    assert got == number, reason
    assert len(calls) == 1  # the diagnostic is computed once, for rules 10 and 11
    if number == 11:
        assert f"{share:.0%}" in reason and "manifold family" in reason


def test_the_band_is_between_the_nulls_and_rule_10():
    assert 0.22 < CURVED_STRUCTURE_SHARE < SMALL_CLUSTER_SHARE


@pytest.mark.parametrize("kind", ["gauss", "elongated", "cube", "ball"])
def test_structureless_samples_stay_below_the_share(kind):
    """Fresh structureless draws (not the battery's) at 300 rows in 12 dimensions keep
    the tree's share below rule 11's bound (the calibration of docs/auto.rst, rule 11)."""
    rng = np.random.default_rng(2026)
    S = rng.standard_normal((300, 12))
    if kind == "elongated":
        S *= np.linspace(1.0, 5.0, 12)
    elif kind == "cube":
        S = rng.uniform(-1, 1, (300, 12))
    elif kind == "ball":
        S = S / np.linalg.norm(S, axis=1, keepdims=True) * rng.uniform(0, 1, (300, 1)) ** (1 / 12)
    diag = small_clusters_diagnostic(S)
    assert diag["clusters"] < 2 or diag["share"] < CURVED_STRUCTURE_SHARE, diag


def _blobs_with_outliers(n: int, d: int, k: int, frac: float, seed: int):
    """``k`` unit Gaussians, centres 18 / sqrt(2) apart on average, and ``frac · n``
    uniform rows over their box enlarged by 10 %, each labelled by its nearest centre."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((k, d)) * 18 / np.sqrt(2 * d)
    y = rng.integers(0, k, n)
    X = centres[y] + rng.standard_normal((n, d))
    lo, hi = X.min(0), X.max(0)
    out = rng.uniform(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo), (int(frac * n), d))
    y_out = np.argmin(((out[:, None] - centres[None]) ** 2).sum(-1), axis=1)
    return np.vstack([X, out]), np.concatenate([y, y_out])


@pytest.mark.slow
def test_blobs_in_uniform_noise_take_rule_11_and_keep_their_clusters():
    """8 blobs in 20-d with 8 % uniform outliers (7 560 rows): the tree leaves the
    outliers out (share below rule 10's), rule 11 answers without the no-structure
    warning and keeps the blobs (ARI >= .9; docs/auto.rst, rule 11: .979)."""
    X, y = _blobs_with_outliers(7000, 20, 8, 0.08, seed=7)
    assert AUTO_RULES.decide(profile_data(X, None))[0].number == 11
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoClusterStructureWarning)
        model = GraphClustering("auto", random_state=0).fit(X)
    assert abs(model.n_clusters_ - 8) <= 1
    assert adjusted_rand_score(y, model.labels_) >= 0.9
