"""The column ``scale`` kinds run chunk-wise: statistics summed over chunks equal the
in-memory fit, and a scaled spec's chunked labels equal its in-memory labels."""

from __future__ import annotations

import graphclust as gc
import numpy as np
import pytest
from graphclust.chunks import InMemoryChunks
from graphclust.numerics.scaling import (
    ColumnStats,
    fit_scaling,
    scaling_from_stats,
    unitless_block_stats,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

KINDS = ["center", "standard", "minmax"]
SMALL = {"anchors": {"n_anchors": 200}}


def _column_stats(block):
    return ColumnStats.of_block(block.X)


def _unitless_stats(block, offset, unit):
    return unitless_block_stats(block.X, offset, unit)


def _reference(X, kind):
    """The obvious dense formulas (constant columns: offset = value, scale = 1)."""
    X = X.astype(np.float64)
    lo, hi = X.min(0), X.max(0)
    const = lo == hi
    if kind == "center":
        offset, scale = X.mean(0), np.ones(X.shape[1])
    elif kind == "standard":
        offset, scale = X.mean(0), X.std(0)
    else:
        offset, scale = lo, hi - lo
    return np.where(const, lo, offset), np.where(const, 1.0, scale)


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 40), st.integers(1, 4)),
              # the dense reference's squared deviations underflow below ~1e-154
              elements=st.floats(-1e3, 1e3).filter(lambda v: v == 0 or abs(v) >= 1e-100)),
       st.integers(1, 50), st.sampled_from(KINDS))
def test_stats_summed_over_any_cut_equal_in_memory(X, rows, kind):
    """Chunk sums of ColumnStats (any block size, including blocks of no rows) give the
    in-memory scaling and the dense reference."""
    chunks = InMemoryChunks(X, block_rows=rows)
    stats = chunks.sum(_column_stats)
    stats = stats + ColumnStats.empty(X.shape[1])  # the neutral element
    # a column whose range is outside [1e-100, 1e100] takes the second pass over the
    # blocks, as the chunked run gives it (hypothesis finds subnormal ranges)
    got = scaling_from_stats(kind, stats, lambda offset, unit: chunks.sum(
        _unitless_stats, offset, unit))
    want = fit_scaling(X, kind)
    ref_offset, ref_scale = _reference(X, kind)
    np.testing.assert_allclose(got.offset, want.offset, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(got.scale, want.scale, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got.offset, ref_offset, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(got.scale, np.where(ref_scale > 0, ref_scale, 1.0),
                               rtol=1e-7, atol=1e-9)


def test_extreme_column_second_pass_over_chunks(as_dask):
    """A column with a range of 1e150 takes the second, unitless sum over chunks and
    standardises like the in-memory fit (no overflow)."""
    from graphclust._dask._run import fit_scaling_chunked

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    X[:, 1] *= 1e150
    X[:, 2] *= 1e-120
    got = fit_scaling_chunked("standard", as_dask(X, 70))
    want = fit_scaling(X, "standard")
    np.testing.assert_allclose(got.offset, want.offset, rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(got.scale, want.scale, rtol=1e-9)
    assert np.all(np.isfinite(got.transform(X)))


@pytest.mark.parametrize("kind", KINDS)
def test_scaled_spec_chunked_equals_in_memory(kind, digits, as_dask, dask_client):
    """ulge with a column scale: same seed, same labels on the LocalCluster; the fitted
    scaling agrees to round-off and predict on chunks applies it."""
    X, _ = digits
    X = X + np.arange(64) * 3.0  # shifted columns, so centring changes something
    Xd = as_dask(X, 300)
    kw = dict(n_clusters=10, random_state=0, overrides={"scale": kind}, **SMALL)
    mem = gc.GraphClustering("ulge", **kw).fit(X)
    chunked = gc.GraphClustering("ulge", **kw).fit(Xd)
    np.testing.assert_allclose(chunked.scaling_.offset, mem.scaling_.offset, rtol=1e-12)
    np.testing.assert_allclose(chunked.scaling_.scale, mem.scaling_.scale, rtol=1e-12)
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)
    assert "scale" in chunked.timings_
    np.testing.assert_array_equal(chunked.predict(Xd[:400]).compute(), mem.predict(X[:400]))


def test_given_anchors_are_scaled_like_in_memory(digits, as_dask, dask_client):
    """User-given anchors are in raw units: the chunked fit scales them as in memory."""
    X, _ = digits
    pts = X[::18][:80]
    kw = dict(n_clusters=10, random_state=0, anchors=pts, overrides={"scale": "minmax"})
    mem = gc.GraphClustering("anchor-spectral", **kw).fit(X)
    chunked = gc.GraphClustering("anchor-spectral", **kw).fit(as_dask(X, 300))
    np.testing.assert_allclose(chunked.anchors_.points, mem.anchors_.points)
    np.testing.assert_array_equal(chunked.labels_.compute(), mem.labels_)
