"""The chunked execution on a real distributed LocalCluster equals the in-memory one."""

from __future__ import annotations

import graphclust as gc
import numpy as np
import pytest
from graphclust import SpecError

pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install 'graphclust[dask]'")
pytest.importorskip("distributed", reason="needs the [dask] extra: pip install 'graphclust[dask]'")

PRESETS = ["ulge", "anchor-spectral",
           pytest.param("uspec", marks=pytest.mark.slow)]  # uspec: 3 s, slow tier
SMALL = {"anchors": {"n_anchors": 200}}


def _pair(preset, X, Xd, seed=0, **kw):
    mem = gc.GraphClustering(preset, n_clusters=10, random_state=seed, **SMALL, **kw).fit(X)
    chunked = gc.GraphClustering(preset, n_clusters=10, random_state=seed, **SMALL,
                                 **kw).fit(Xd)
    return mem, chunked


@pytest.mark.parametrize("preset", PRESETS)
def test_chunked_labels_equal_in_memory(preset, digits, as_dask, dask_client):
    """Same seed, same labels. The anchors see every row (n < the sample rule's 100 000)
    and the k-means rounding every embedding row (n < 100 000), so the only difference is
    the order of the block sums: embeddings agree to round-off and the labels exactly."""
    import dask.array as da

    X, _ = digits
    Xd = as_dask(X, 300)
    mem, chunked = _pair(preset, X, Xd)
    assert isinstance(chunked.labels_, da.Array)
    assert chunked.labels_.chunks == (Xd.chunks[0],)
    labels = chunked.labels_.compute()
    np.testing.assert_array_equal(labels, mem.labels_)
    np.testing.assert_allclose(chunked.embedding_.compute(), mem.embedding_, atol=1e-9)
    np.testing.assert_array_equal(chunked.anchors_.points, mem.anchors_.points)
    assert chunked.graph_.n == 0 and chunked.graph_.n_anchors == mem.graph_.n_anchors
    assert set(chunked.timings_) >= {"anchors", "graph", "solver", "rounding", "total"}


def test_only_m_sized_results_reach_the_client(digits, as_dask, dask_client):
    """What the fit keeps on the client is m- or k-sized; the labels stay on the workers
    (a persisted dask array) and the embedding is lazy."""
    X, _ = digits
    model = gc.GraphClustering("anchor-spectral", n_clusters=10, random_state=0,
                               **SMALL).fit(as_dask(X, 300))
    sol = model.solution_
    assert sol.embedding.shape[0] == 0 and sol.anchor_embedding.shape[0] == 200
    assert model.result_.graph.Z.shape == (0, 200)
    assert model.pipeline_.rounding.cluster_centers_.shape[0] == 10
    from distributed import futures_of

    futures = futures_of(model.labels_)  # persisted: held by the workers
    assert len(futures) == model.labels_.numblocks[0]
    holders = dask_client.who_has(futures)
    assert len(holders) == len(futures) and all(holders.values())


def test_dataframe_input(digits, dask_client):
    """A dask DataFrame of numeric columns gives the labels of its values."""
    import dask.dataframe as dd
    import pandas as pd

    X, _ = digits
    ddf = dd.from_pandas(pd.DataFrame(X, columns=[f"p{i}" for i in range(64)]),
                         npartitions=5)
    mem = gc.GraphClustering("ulge", n_clusters=10, random_state=1, **SMALL).fit(X)
    chunked = gc.GraphClustering("ulge", n_clusters=10, random_state=1, **SMALL).fit(ddf)
    labels = chunked.labels_
    assert len(labels.chunks[0]) == 5
    np.testing.assert_array_equal(labels.compute(), mem.labels_)


def test_dataframe_with_text_column_is_refused(digits, dask_client):
    import dask.dataframe as dd
    import pandas as pd

    X, _ = digits
    df = pd.DataFrame(X[:100, :3], columns=["a", "b", "c"]).assign(name="x")
    with pytest.raises(gc.InputError, match="numeric columns only; not numeric: name"):
        gc.GraphClustering("ulge", n_clusters=3).fit(dd.from_pandas(df, npartitions=2))


@pytest.mark.parametrize("preset", ["anchor-spectral",
                                    pytest.param("uspec", marks=pytest.mark.slow)])
def test_predict_and_transform_on_dask_input(preset, digits, as_dask, dask_client):
    """predict/transform on a dask array: one task per block, equal to the in-memory
    predict of the same model and, for the training points, to its labels."""
    X, _ = digits
    model = gc.GraphClustering(preset, n_clusters=10, random_state=0, **SMALL).fit(X)
    Xd = as_dask(X, 400)
    pred = model.predict(Xd)
    assert pred.chunks == (Xd.chunks[0],)
    np.testing.assert_array_equal(pred.compute(), model.predict(X))
    np.testing.assert_allclose(model.transform(Xd).compute(), model.transform(X), atol=1e-12)
    chunked = gc.GraphClustering(preset, n_clusters=10, random_state=0, **SMALL).fit(Xd)
    np.testing.assert_array_equal(chunked.predict(X), chunked.labels_.compute())


def test_refused_before_anything_runs(digits, dask_client):
    """A spec with a part that cannot run on chunks fails at once, naming the part and
    the chunk-wise alternatives, before any chunk is computed (the array below raises
    when computed)."""
    import dask.array as da

    X, _ = digits

    def explode(block):
        raise AssertionError("a chunk was computed")

    Xd = da.from_array(X, chunks=(300, 64)).map_blocks(explode, dtype=float)
    with pytest.raises(SpecError) as err:
        gc.GraphClustering("ncut", n_clusters=10).fit(Xd)
    msg = str(err.value)
    assert "graph 'knn' does not run on row chunks" in msg
    assert "gaussian-anchor" in msg and "knr-bipartite" in msg and "adaptive-anchor" in msg
    with pytest.raises(SpecError, match="solver 'dlc' does not run on row chunks"):
        gc.GraphClustering("dlc", n_clusters=10).fit(Xd)


def test_bad_chunked_input(dask_client):
    import dask.array as da

    X = np.random.default_rng(0).normal(size=(200, 4))
    X[137, 2] = np.nan
    with pytest.raises(gc.InputError, match="NaN or infinity \\(first at row 137\\)"):
        gc.GraphClustering("ulge", n_clusters=3).fit(da.from_array(X, chunks=50))
    with pytest.raises(gc.InputError, match="fewer than n_clusters=500"):
        gc.GraphClustering("ulge", n_clusters=500).fit(da.from_array(X[:100], chunks=50))
    X[137, 2] = 0.0
    model = gc.GraphClustering("anchor-spectral", n_clusters=3, random_state=0,
                               anchors={"n_anchors": 20}).fit(X[:100])
    with pytest.raises(gc.InputError, match="X has 3 features"):
        model.predict(da.from_array(X[:, :3], chunks=50))


def test_chunk_progress(digits, as_dask, dask_client, monkeypatch):
    """verbose: each stage reports one step per finished chunk through the progress
    protocol (issue 19's 'Dask chunks'), and every stage opens and closes once."""
    X, _ = digits
    events = []
    model = gc.GraphClustering("anchor-spectral", n_clusters=10, random_state=0,
                               verbose=True, **SMALL)
    import graphclust._plan as plan
    from graphclust._progress import Progress

    monkeypatch.setattr(plan, "_reporter", lambda verbose: Progress(events.append))
    model.fit(as_dask(X, 300))
    for stage in ("anchors", "graph", "solver", "rounding"):
        kinds = [e.kind for e in events if e.stage == stage]
        assert kinds.count("open") == 1 and kinds.count("close") == 1, stage
    for stage in ("graph", "solver", "rounding"):
        starts = [e for e in events if e.stage == stage and e.kind == "start"]
        steps = [e for e in events if e.stage == stage and e.kind == "step"]
        assert starts and all(e.total == 6 for e in starts), stage
        assert sorted({e.step for e in steps}) == list(range(1, 7)), stage
