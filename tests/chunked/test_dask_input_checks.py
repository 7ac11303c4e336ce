"""The chunked fit checks its input as the in-memory fit does (issue 30): the same
decisions from the same summaries (column ranges, distinct rows), the same dtype rule,
scikit-learn's feature-name rule for dask DataFrames, and empty or one-row chunks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import graphclust as gc

pytest.importorskip("dask.array", reason="needs the [dask] extra: pip install 'graphclust[dask]'")
pytest.importorskip("distributed", reason="needs the [dask] extra: pip install 'graphclust[dask]'")

SMALL = {"anchors": {"n_anchors": 60}}


@pytest.fixture(scope="module")
def blobs():
    X, _ = make_blobs(900, 4, centers=4, random_state=0)
    return X


def _model(preset="uspec", k=4, **kw):
    return gc.GraphClustering(preset, n_clusters=k, random_state=0, **{**SMALL, **kw})


@pytest.mark.parametrize("factor", [1e200, pytest.param(1e-300, marks=pytest.mark.slow)])
def test_extreme_scales_are_fitted_on_dask_as_in_memory(blobs, dask_client, factor):
    """Data scaled where squared distances under- or overflow are fitted in the same
    power-of-two units on both paths (issue 46 C4): the labels of the unscaled data."""
    import dask.array as da

    from graphclust.numerics import same_partition

    ref = _model().fit(blobs).labels_
    chunked = _model().fit(da.from_array(blobs * factor, chunks=(200, 4)))
    assert same_partition(np.asarray(chunked.labels_.compute()), ref)


def test_complex_input_is_refused(blobs, dask_client):
    import dask.array as da

    Xc = blobs + 1j
    for X in (Xc, da.from_array(Xc, chunks=(300, 4))):
        with pytest.raises(gc.InputError, match="complex dtype complex128"):
            _model().fit(X)
    with pytest.raises(gc.InputError, match="complex"):
        gc.check_input(Xc)


def test_dask_series_is_refused(blobs, dask_client):
    import dask.dataframe as dd
    import pandas as pd

    s = dd.from_pandas(pd.Series(blobs[:, 0]), npartitions=3)
    with pytest.raises(gc.InputError, match="a dask Series is 1-D; use series.to_frame"):
        _model().fit(s)


@pytest.mark.slow  # 3 s
def test_reordered_dataframe_columns_are_refused_at_predict(blobs, dask_client):
    import dask.dataframe as dd
    import pandas as pd

    df = dd.from_pandas(pd.DataFrame(blobs, columns=list("abcd")), npartitions=3)
    model = _model().fit(df)
    assert list(model.feature_names_in_) == list("abcd")
    with pytest.raises(gc.InputError, match="feature names should match"):
        model.predict(df[list("dcba")])
    np.testing.assert_array_equal(model.predict(df).compute(), model.labels_.compute())
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        model.predict(df.to_dask_array(lengths=True))
    # an array fit after a DataFrame fit forgets the names
    import dask.array as da

    assert not hasattr(_model().fit(da.from_array(blobs, chunks=300)), "feature_names_in_")


@pytest.mark.parametrize("chunked", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_more_clusters_than_distinct_rows_warns_with_both_counts(blobs, dask_client, chunked):
    import dask.array as da

    X = np.repeat(blobs[:3], 100, axis=0)
    if chunked:
        X = da.from_array(X, chunks=(70, 4))
    with pytest.warns(gc.DegenerateDataWarning, match="n_clusters=5 exceeds the 3 distinct "
                                                       "rows \\(of 300\\)"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", gc.FewerClustersWarning)
            _model(k=5, anchors={"n_anchors": 3}).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", gc.DegenerateDataWarning)
        warnings.simplefilter("ignore", gc.GraphClustWarning)
        _model(k=3, anchors={"n_anchors": 3}).fit(X)


CHUNKINGS = [(450, 0, 1, 449), (1, 0, 899, 0)]


def _fit_labels(preset, X, rows):
    import dask.array as da

    Xd = da.from_array(X, chunks=(rows, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gc.GraphClustering(preset, n_clusters=4, random_state=0).fit(Xd)
        labels = model.labels_
        pred = model.predict(Xd)
    assert labels.chunks == (rows,) and pred.chunks == (rows,)
    got = labels.compute()
    assert got.shape == (X.shape[0],)
    np.testing.assert_array_equal(pred.compute(), got)
    return got


@pytest.mark.parametrize("preset", ["anchor-spectral",  # uspec 6 s, ongr-k 4 s: slow tier
                                    *(pytest.param(p, marks=pytest.mark.slow)
                                      for p in ("uspec", "ongr-k", "ulge", "bkhk-dcd",
                                                "usenc"))])
def test_empty_and_one_row_chunks(blobs, dask_client, preset):
    """One label per input row in the input's chunking (empty chunks included), the
    labels of the same chunking without its empty chunks; predict the same."""
    for rows in CHUNKINGS:
        np.testing.assert_array_equal(_fit_labels(preset, blobs, rows),
                                      _fit_labels(preset, blobs, tuple(r for r in rows if r)))


@pytest.mark.slow  # two chunked auto fits, 3-5 s
@pytest.mark.parametrize("factor", [1e200, 1e-300])
def test_extreme_scales_with_a_rule_preset_are_rescaled_once(blobs, dask_client, factor):
    """auto reads rows for its profile before the fit: those rows and the fit use one
    power-of-two unit (not applied twice), and predict of scaled rows agrees."""
    import dask.array as da

    from graphclust.numerics import same_partition

    ref = gc.GraphClustering(n_clusters=4, random_state=0).fit(
        da.from_array(blobs, chunks=(300, 4)))
    model = gc.GraphClustering(n_clusters=4, random_state=0).fit(
        da.from_array(blobs * factor, chunks=(300, 4)))
    got = np.asarray(model.labels_.compute())
    assert same_partition(got, np.asarray(ref.labels_.compute()))
    assert 0.5 <= np.abs(blobs * factor * model._unit).max() < 1.0
    new = np.asarray(model.predict(da.from_array(blobs[:60] * factor, chunks=30)).compute())
    assert np.array_equal(new, got[:60])
