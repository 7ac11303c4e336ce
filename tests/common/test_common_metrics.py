"""Metrics acc / nmi / ari / purity against hand-computed cases and invariants."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from graphclust_plugins.common.metric_acc import Accuracy
from graphclust_plugins.common.metric_ari import ARI
from graphclust_plugins.common.metric_nmi import NMI
from graphclust_plugins.common.metric_purity import Purity


def brute_acc(labels, y):
    """Best one-to-one matching by enumerating every injective map (tiny cases only)."""
    cl = np.unique(labels)
    cs = np.unique(y)
    best = 0
    if len(cl) <= len(cs):
        for perm in itertools.permutations(cs, len(cl)):
            mp = dict(zip(cl, perm))
            best = max(best, sum(mp[a] == b for a, b in zip(labels, y)))
    else:
        for perm in itertools.permutations(cl, len(cs)):
            mp = dict(zip(perm, cs))
            best = max(best, sum(mp.get(a, None) == b for a, b in zip(labels, y)))
    return best / len(y)


def test_acc_hand_case():
    y = [0, 0, 0, 1, 1, 1]
    lab = [1, 1, 0, 0, 0, 0]
    # best map: 1->0 (2 right), 0->1 (3 right) = 5/6
    assert Accuracy().score(np.array(lab), np.array(y)) == pytest.approx(5 / 6)


def test_acc_more_clusters_than_classes():
    y = np.array([0, 0, 1, 1])
    lab = np.array([0, 1, 2, 3])  # only two clusters can be matched
    assert Accuracy().score(lab, y) == pytest.approx(0.5)
    assert Purity().score(lab, y) == pytest.approx(1.0)


def test_acc_fewer_clusters_than_classes_and_arbitrary_ids():
    y = np.array([0, 0, 1, 1, 2, 2])
    lab = np.array([7, 7, 7, 7, -3, -3])
    assert Accuracy().score(lab, y) == pytest.approx(4 / 6)
    assert Purity().score(lab, y) == pytest.approx(4 / 6)


def test_purity_hand_case():
    y = np.array([0, 0, 1, 1, 1, 2])
    lab = np.array([0, 0, 0, 1, 1, 1])
    # cluster 0: {0,0,1} -> 2 ; cluster 1: {1,1,2} -> 2
    assert Purity().score(lab, y) == pytest.approx(4 / 6)


def test_nmi_ari_match_sklearn_and_hand_values():
    y = np.array([0, 0, 1, 1])
    assert NMI().score(np.array([1, 1, 0, 0]), y) == pytest.approx(1.0)
    assert ARI().score(np.array([1, 1, 0, 0]), y) == pytest.approx(1.0)
    # independent split: mutual information 0
    assert NMI().score(np.array([0, 1, 0, 1]), y) == pytest.approx(0.0, abs=1e-12)
    lab = np.array([0, 0, 0, 1])
    assert NMI(average_method="geometric").score(lab, y) == pytest.approx(
        normalized_mutual_info_score(y, lab, average_method="geometric"))
    assert ARI().score(lab, y) == pytest.approx(adjusted_rand_score(y, lab))


def test_metrics_need_truth():
    for m in (Accuracy(), NMI(), ARI(), Purity()):
        with pytest.raises(ValueError):
            m.score(np.array([0, 1]), None)


def test_nmi_param_check():
    assert NMI(average_method="bogus").check_params()
    assert not NMI().check_params()


labelings = st.integers(2, 25).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 4), min_size=n, max_size=n),
                        st.lists(st.integers(0, 4), min_size=n, max_size=n)))


@settings(max_examples=60, deadline=None)
@given(labelings, st.permutations(list(range(5))))
def test_acc_properties(pair, perm):
    lab, y = (np.array(v) for v in pair)
    acc = Accuracy().score(lab, y)
    # invariant under relabelling the clusters
    assert Accuracy().score(np.array(perm)[lab], y) == pytest.approx(acc)
    # perfect labels (any renaming) score 1
    assert Accuracy().score(np.array(perm)[y], y) == pytest.approx(1.0)
    # purity allows many-to-one, so it is at least acc
    assert Purity().score(lab, y) >= acc - 1e-12
    assert 0.0 < acc <= 1.0


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 7).flatmap(
    lambda n: st.tuples(st.lists(st.integers(0, 3), min_size=n, max_size=n),
                        st.lists(st.integers(0, 3), min_size=n, max_size=n))))
def test_acc_matches_brute_force(pair):
    lab, y = (np.array(v) for v in pair)
    assert Accuracy().score(lab, y) == pytest.approx(brute_acc(lab, y))
