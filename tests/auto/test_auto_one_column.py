"""auto without k on one column (issue 46, S2): uniform values are one cluster, separated
groups their count. Rule 9's density tree takes its core distance over rows^(4/5)/2 rows
on a line (:func:`graphclust_plugins.auto.rule_auto.line_core_neighbours`)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from graphclust import GraphClustering, NoClusterStructureWarning
from graphclust_plugins.auto.rule_auto import line_core_neighbours


def test_core_neighbours_follow_rows_to_the_four_fifths():
    assert line_core_neighbours(1000) == int(np.ceil(0.5 * 1000 ** 0.8)) == 126
    assert line_core_neighbours(20_000) == int(np.ceil(0.5 * 20_000 ** 0.8))


@pytest.mark.parametrize("k_max", [20, 50])
@pytest.mark.parametrize("make", [
    lambda r: r.uniform(size=(1000, 1)),
    lambda r: r.normal(size=(1000, 1)),
    lambda r: r.standard_t(3, size=(1000, 1)),
], ids=["uniform", "gaussian", "t3"])
def test_structureless_column_is_one_cluster_with_the_warning(make, k_max):
    X = make(np.random.default_rng(0))
    with pytest.warns(NoClusterStructureWarning):
        model = GraphClustering("auto", random_state=0, k_max=k_max).fit(X)
    assert model.n_clusters_ == 1 and np.unique(model.labels_).size == 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_separated_groups_on_a_column_give_their_count(seed):
    r = np.random.default_rng(seed)
    X = np.r_[r.normal(size=(500, 1)), r.normal(size=(333, 1)) * 0.5 + 5,
              r.normal(size=(167, 1)) * 0.3 + 8]
    y = np.repeat([0, 1, 2], [500, 333, 167])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = GraphClustering("auto", random_state=0).fit(X)
    assert model.n_clusters_ == 3
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(y, model.labels_) > 0.9
