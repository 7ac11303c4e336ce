"""Hostile data files (issue 30): every format the command line reads × header × labels
× dtypes × nulls × empty parts, drawn by :func:`graphclust.testing.strategies.data_files`.

Property: the command line's reader (:func:`graphclust.cli._load_input`, in memory or as
chunks exactly as ``graphclust run`` picks) either returns a 2-D numeric array with one
row per written row and labels as declared (none with ``--no-labels``, the named column
with ``--labels``, codes ``0..c-1`` of every row otherwise), or raises graphclust's own
error with a message; never a foreign exception (``KeyError``, a pyarrow error...), and
the file is never modified. The quick tier draws a few dozen files; ``--run-slow`` 10 000.
"""

from __future__ import annotations

import argparse
import tempfile
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from graphclust import InputError, SpecError
from graphclust.cli import _load_input
from graphclust.data import _is_number  # the reader's own header test
from graphclust.testing.strategies import DataFile, data_files, file_digests

pytest.importorskip("dask.dataframe", reason="needs the [dask] extra")
pytest.importorskip("pyarrow", reason="needs the [dask] extra")
pytest.importorskip("zarr", reason="needs the [dask] extra")

QUICK = settings(max_examples=40, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SLOW = settings(max_examples=10_000, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _read(spec: DataFile, path) -> tuple[np.ndarray, np.ndarray | None]:
    """What ``graphclust run --dataset PATH [--labels L | --no-labels]`` reads, computed
    on the synchronous scheduler (chunked for zarr and parquet, as the command line)."""
    import dask

    args = argparse.Namespace(dataset=str(path), data_dir=None, chunk_mb=None,
                              labels=None if spec.labels in (None, False) else spec.labels,
                              no_labels=spec.labels is False)
    chunked = spec.fmt in ("zarr", "parquet")
    with dask.config.set(scheduler="sync"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        X, y = _load_input(args, chunked, note=lambda line: None)
        X = np.asarray(X.compute() if hasattr(X, "compute") else X)
        y = None if y is None else np.asarray(y.compute() if hasattr(y, "compute") else y)
    return X, y


def expected_rows(spec: DataFile) -> int:
    """Rows the reader must return: a text file's first line is its header exactly when
    one of its fields is not a number (nor empty, nor "nan"), as documented in
    :func:`graphclust.data.read_table`; otherwise every written row."""
    if spec.fmt not in ("csv", "tsv") or not spec.columns:
        return spec.n_rows
    first = ([c.name for c in spec.columns] if spec.header
             else [c.text(0) for c in spec.columns] if spec.n_rows else [])
    is_header = any(not _is_number(f.strip()) and f.strip().lower() not in ("nan", "")
                    for f in first)
    return spec.n_rows + int(spec.header) - int(is_header)


def check_file(spec: DataFile) -> str:
    """Write ``spec``, read it as the command line does, check the outcome; returns
    ``"read"`` or the error's class name."""
    with tempfile.TemporaryDirectory() as tmp:
        path = spec.write(tmp)
        before = file_digests(tmp)
        try:
            X, y = _read(spec, path)
        except (InputError, SpecError) as exc:
            assert str(exc).strip(), spec
            outcome = type(exc).__name__
        else:
            outcome = "read"
            assert X.ndim == 2 and X.shape[1] >= 1 and X.dtype.kind in "biuf", (spec, X)
            assert X.shape[0] == expected_rows(spec), (spec, X.shape)  # 0: refused by fit
            if spec.labels is False or spec.fmt == "npy":
                assert y is None, spec
            if spec.labels not in (None, False):
                assert spec.label_column() is not None, spec  # a missing column is refused
                assert y is not None, spec
            if y is not None:
                assert y.shape == (X.shape[0],) and y.dtype.kind in "iu", (spec, y)
                assert np.array_equal(np.unique(y), np.arange(np.unique(y).size)), (spec, y)
        assert file_digests(tmp) == before, f"the reader changed the input: {spec}"
    return outcome


@QUICK
@given(data_files())
def test_reading_any_file_gives_data_or_graphclust_error(spec):
    check_file(spec)


@pytest.mark.slow
@SLOW
@given(data_files())
def test_reading_any_file_gives_data_or_graphclust_error_slow(spec):
    check_file(spec)
