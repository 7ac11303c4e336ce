"""Layers of a chunked fit: not available yet, and said so with what to do."""

from __future__ import annotations

import pytest
from sklearn.datasets import make_blobs

import graphclust as gc

pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install 'graphclust[dask]'")
pytest.importorskip("distributed", reason="needs the [dask] extra: pip install 'graphclust[dask]'")


def test_chunked_layers_refuse_naming_what_to_do(as_dask, dask_client):
    X, _ = make_blobs(600, 4, centers=3, random_state=1)
    model = gc.GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                               anchors={"n_anchors": 60}).fit(as_dask(X, 200))
    with pytest.raises(gc.InputError, match="chunked fit.*refit in memory"):
        model.layers_
    with pytest.raises(gc.InputError, match="chunked fit"):
        model.partition_at(2)
