"""Messages of a fit on a precomputed graph speak of its nodes, not of samples or points."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from graphclust import FewerClustersWarning, GraphClustering


def test_fewer_labels_than_asked_counts_nodes():
    rng = np.random.default_rng(0)
    upper = np.triu(rng.random((30, 30)) < 0.3, k=1)
    A = sp.csr_array((upper | upper.T).astype(np.float64))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = GraphClustering("dcd", graph="precomputed", n_clusters=25,
                                random_state=0).fit(A)
    found = np.unique(model.labels_).size
    msgs = [str(w.message) for w in caught if issubclass(w.category, FewerClustersWarning)]
    assert found < 25
    expected = f"preset 'dcd' returned {found} distinct labels for n_clusters=25 (30 nodes)"
    assert msgs == [expected]
