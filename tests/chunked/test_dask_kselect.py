"""``n_clusters`` estimated on Dask input: the same estimate as in memory (the spectrum
from m-sized chunk sums), on a LocalCluster."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import graphclust as gc

pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install 'graphclust[dask]'")
pytest.importorskip("distributed", reason="needs the [dask] extra: pip install 'graphclust[dask]'")

SMALL = {"anchors": {"n_anchors": 150}}


@pytest.fixture(scope="module")
def blobs():
    X, _ = make_blobs(1500, 6, centers=5, random_state=4)
    return X


@pytest.mark.parametrize("preset", ["anchor-spectral",
                                    pytest.param("uspec", marks=pytest.mark.slow)])
def test_chunked_estimate_equals_in_memory(preset, blobs, as_dask, dask_client):
    own = {"k_from": "parts"}  # the preset's own eigengap (auto's k: the test below)
    mem = gc.GraphClustering(preset, random_state=0, overrides=own, **SMALL).fit(blobs)
    chunked = gc.GraphClustering(preset, random_state=0, overrides=own,
                                 **SMALL).fit(as_dask(blobs, 400))
    assert mem.n_clusters_ == chunked.n_clusters_ == 5
    a, b = mem.k_selection_, chunked.k_selection_
    assert a.method == b.method == "eigengap" and a.candidates == b.candidates
    np.testing.assert_allclose(a.details["laplacian_eigenvalues"],
                               b.details["laplacian_eigenvalues"], atol=1e-9)
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(mem.labels_, np.asarray(chunked.labels_.compute())) == 1.0


def test_chunked_preset_takes_autos_chunked_k(blobs, as_dask, dask_client):
    """Without k an eigengap preset on Dask takes the k of auto on the same dask array
    (auto's chunked route), recorded as auto's."""
    X = as_dask(blobs, 400)
    auto = gc.GraphClustering("auto", random_state=0).fit(X)
    model = gc.GraphClustering("anchor-spectral", random_state=0, **SMALL).fit(X)
    assert model.n_clusters_ == auto.n_clusters_ == 5
    assert model.k_selection_.details["auto"] == auto.resolved_spec_["summary"]
    assert model.k_selection_.part.startswith("auto (")


def test_chunked_no_structure_warns(as_dask, dask_client):
    X = np.random.default_rng(0).random((1200, 3))
    with pytest.warns(gc.NoClusterStructureWarning):
        model = gc.GraphClustering("anchor-spectral", random_state=0, **SMALL).fit(
            as_dask(X, 300))
    assert model.n_clusters_ == 1


@pytest.mark.slow
def test_chunked_ensemble_estimate_equals_in_memory(blobs, as_dask, dask_client):
    members = [{"preset": "uspec", "count": 3, "n_clusters": [8, 15],
                "anchors": {"n_anchors": 100}}]
    spec = {"k_from": "parts", "ensemble": {"consensus": {"name": "tcut"}, "members": members}}
    mem = gc.GraphClustering(spec, random_state=0).fit(blobs)
    chunked = gc.GraphClustering(spec, random_state=0).fit(as_dask(blobs, 400))
    assert mem.n_clusters_ == chunked.n_clusters_ == 5
    assert chunked.k_selection_.part == "consensus 'tcut'"
