"""The same data, the same answer (issue 48): ``auto`` decides from what the data are
(the measured fraction of zeros), not from the container, so a counts matrix passed
dense and as CSR gets the same spec and the same labels."""

import numpy as np
import pytest
import scipy.sparse as sp

import graphclust
from graphclust import profile_data
from graphclust_plugins.auto._rules_base import SPARSE_ZEROS


def topic_counts(n=240, d=600, topics=3, length=12, seed=0):
    """Bag-of-words counts: each document ``length`` draws from its topic's terms
    (Dirichlet-distributed, a few hundred terms each) mixed with a background."""
    rng = np.random.default_rng(seed)
    words = rng.dirichlet(np.full(d, 0.05), size=topics)
    background = rng.dirichlet(np.ones(d))
    y = np.arange(n) % topics
    X = np.stack([rng.multinomial(length, 0.8 * words[t] + 0.2 * background) for t in y])
    return X.astype(np.int64), y


def blobs_in_wide_space(n=240, d=300, k=3, seed=0):
    """Dense-valued rows (no zeros): three clusters through a random projection."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    Z = rng.normal(size=(k, 10))[y] * 4 + rng.normal(size=(n, 10))
    return Z @ rng.normal(size=(10, d)) + rng.normal(size=(n, d)), y


def test_the_profile_reads_the_zeros_of_both_containers_alike():
    X, _ = topic_counts()
    dense, csr = profile_data(X, 3), profile_data(sp.csr_array(X), 3)
    assert dense.zero_fraction == csr.zero_fraction == pytest.approx(np.mean(X == 0))
    assert dense.zero_fraction >= SPARSE_ZEROS
    assert dense.nonnegative and csr.nonnegative
    for name in ("range_spread", "std_spread", "offset"):  # equal up to round-off
        assert getattr(dense, name) == pytest.approx(getattr(csr, name), rel=1e-12)
    # an explicitly stored zero is a zero
    S = sp.csr_array(X).astype(np.float64)
    S.data[::7] = 0.0
    assert profile_data(S, 3).zero_fraction == profile_data(S.toarray(), 3).zero_fraction


@pytest.mark.parametrize("make, rule", [(topic_counts, 6), (blobs_in_wide_space, 4)])
def test_dense_and_csr_get_the_same_spec_and_labels(make, rule):
    X, y = make()
    fits = [graphclust.GraphClustering(n_clusters=3, random_state=0).fit(A)
            for A in (X, sp.csr_array(X))]
    dense, csr = (f.resolved_spec_ for f in fits)
    assert dense == csr
    assert f"rule {rule}:" in dense["summary"]
    np.testing.assert_array_equal(fits[0].labels_, fits[1].labels_)
    # and they find the clusters (the data are separable)
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(y, fits[0].labels_) > 0.9
