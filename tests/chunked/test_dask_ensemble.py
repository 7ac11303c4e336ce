"""Ensembles with a consensus run chunk-wise: members as chunked pipelines (the in-memory
``k_j`` and seeds), memberships per chunk, the consensus from Σk-sized sums."""

from __future__ import annotations

import graphclust as gc
import numpy as np
import pytest
from graphclust.numerics import same_partition

pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install 'graphclust[dask]'")
pytest.importorskip("distributed", reason="needs the [dask] extra: pip install 'graphclust[dask]'")

pytestmark = pytest.mark.filterwarnings("ignore::graphclust.GraphClustWarning")

#: usenc with 4 members of 100 anchors: the preset's own member rounding, k_j range and
#: consensus, small enough for the quick tier
SMALL_USENC = {"ensemble": {"members": [{"preset": "uspec", "count": 4, "n_clusters": [20, 60],
                                         "metrics": [], "anchors": {"n_anchors": 100},
                                         "rounding": {"n_init": 1, "max_iter": 5}}],
                            "consensus": {"name": "tcut"}}}


def _pair(spec, X, Xd, seed=0, k=10):
    mem = gc.GraphClustering(spec, n_clusters=k, random_state=seed).fit(X)
    chunked = gc.GraphClustering(spec, n_clusters=k, random_state=seed).fit(Xd)
    return mem, chunked


@pytest.mark.slow  # 4 s: twenty chunked members
def test_usenc_like_chunked_equals_in_memory(digits, as_dask, dask_client):
    """Same seed: every member's labels, the members' k_j and seeds, and the consensus
    labels equal the in-memory run; the memberships reach the caller with zero rows."""
    import dask.array as da

    X, _ = digits
    Xd = as_dask(X, 300)
    mem, chunked = _pair(SMALL_USENC, X, Xd)
    res, ref = chunked.result_, mem.result_
    assert res.member_n_clusters == ref.member_n_clusters
    assert res.member_seeds == ref.member_seeds
    for got, want in zip(res.members, ref.members, strict=True):
        np.testing.assert_array_equal(got.labels.compute(), want.labels)
    for got, want in zip(res.member_classes, ref.member_classes, strict=True):
        np.testing.assert_array_equal(got, want)
    assert isinstance(chunked.labels_, da.Array)
    assert chunked.labels_.chunks == (Xd.chunks[0],)
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)
    assert chunked.memberships_.matrix.shape == (0, mem.memberships_.n_base_clusters)
    np.testing.assert_allclose(chunked.pipeline_.consensus.cluster_embedding_,
                               mem.pipeline_.consensus.cluster_embedding_, atol=1e-9)
    assert chunked.resolved_spec_["ensemble"]["members"][0]["n_clusters"] == ks0(mem)
    # predict on chunks: members' predict + the consensus' assign, per chunk
    np.testing.assert_array_equal(chunked.predict(Xd[:600]).compute(), mem.predict(X[:600]))


def ks0(model):
    return model.result_.member_n_clusters[0]


@pytest.mark.slow  # 5 s
def test_scaled_ensemble_chunked_equals_in_memory(digits, as_dask, dask_client):
    """The ensemble's scale is fitted once over the chunks and handed to every member."""
    X, _ = digits
    spec = {**SMALL_USENC, "scale": "standard"}
    spec["ensemble"] = {**SMALL_USENC["ensemble"],
                        "members": [{**SMALL_USENC["ensemble"]["members"][0], "count": 2}]}
    mem, chunked = _pair(spec, X, as_dask(X, 400), seed=3)
    np.testing.assert_allclose(chunked.scaling_.scale, mem.scaling_.scale, rtol=1e-12)
    # the column statistics are merged in chunk order (last bits differ, docs/dask.rst),
    # and the members' 5-iteration k-means amplify that: the same partition is promised,
    # not the same label ids
    assert same_partition(chunked.labels_.compute(), mem.labels_)


def test_ensemble_with_an_in_memory_only_member_is_refused(digits, dask_client):
    """A member that cannot run chunk-wise is named, once per distinct problem, before
    anything runs."""
    import dask.array as da

    X, _ = digits
    Xd = da.from_array(X, chunks=(300, 64))
    spec = {"ensemble": {"members": [{"preset": "ncut", "count": 3}, {"preset": "uspec"}],
                         "consensus": {"name": "tcut"}}}
    with pytest.raises(gc.SpecError) as err:
        gc.GraphClustering(spec, n_clusters=10).fit(Xd)
    msg = str(err.value)
    assert "graph 'knn' does not run on row chunks" in msg
    assert msg.count("graph 'knn'") == 1


@pytest.mark.parametrize("params", [{}, {"eigen_scaling": True}, {"extra_components": 1}])
def test_tcut_consensus_chunked_contract(params):
    """The contract kit's 'chunked' check (combine_chunked over three row blocks equals
    combine) for the tcut consensus, with its options."""
    from graphclust.testing import check_part
    from graphclust_plugins.uspec.consensus_tcut import TcutConsensus

    check_part(TcutConsensus, **params)


@pytest.mark.slow
def test_usenc_preset_chunked_equals_in_memory(digits, as_dask, dask_client):
    """The usenc preset as it is (20 U-SPEC members of 1000 anchors on 1797 points, k_j in
    [20, 60] clipped for n, members rounded by one 5-iteration k-means): same seed, the
    same consensus partition on the LocalCluster. Not the same label ids, and not every
    member equal: the members' unconverged 5-iteration k-means amplifies the round-off of
    the chunk sums (measured: 7 of 20 members differ, ARI of each still >= 0.9), so the
    consensus k-means sees slightly different coordinates and numbers its clusters
    differently."""
    from graphclust.numerics import same_partition
    from sklearn.metrics import adjusted_rand_score

    X, _ = digits
    mem = gc.GraphClustering("usenc", n_clusters=10, random_state=0).fit(X)
    chunked = gc.GraphClustering("usenc", n_clusters=10, random_state=0).fit(as_dask(X, 300))
    assert chunked.result_.member_n_clusters == mem.result_.member_n_clusters
    assert chunked.result_.member_seeds == mem.result_.member_seeds
    for got, want in zip(chunked.result_.members, mem.result_.members, strict=True):
        assert adjusted_rand_score(got.labels.compute(), want.labels) >= 0.9
    assert same_partition(chunked.labels_.compute(), mem.labels_)
