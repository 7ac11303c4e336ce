"""graphclust.io: .npy / zarr / parquet read as row-chunked Dask arrays, labels written back.

Real files in ``tmp_path``; every read is compared with the array that was written.
"""

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="graphclust.io needs the dask extra")
zarr = pytest.importorskip("zarr", reason="the zarr format needs zarr")
pd = pytest.importorskip("pandas", reason="the parquet format needs pandas")
pytest.importorskip("pyarrow", reason="the parquet format needs pyarrow")

from graphclust import InputError, io
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.fixture
def X():
    return np.random.default_rng(0).normal(size=(1000, 3))


@given(d=st.integers(1, 5000), itemsize=st.sampled_from([1, 4, 8]),
       chunk=st.integers(1, 2**30))
@settings(max_examples=200, deadline=None)
def test_chunk_rows_is_the_largest_row_count_within_the_bytes(d, itemsize, chunk):
    rows = io.chunk_rows(d, itemsize, chunk)
    assert rows >= 1
    # the rule: as many whole rows as fit, at least one
    assert rows * d * itemsize <= chunk or rows == 1
    assert (rows + 1) * d * itemsize > chunk


def test_chunk_rows_default_and_bad_size():
    assert io.chunk_rows(10, 8) == io.CHUNK_BYTES // 80
    with pytest.raises(InputError, match="chunk_bytes"):
        io.chunk_rows(10, 8, 0)


def test_npy_is_memory_mapped_and_chunked_by_bytes(tmp_path, X):
    np.save(tmp_path / "x.npy", X)
    A, y = io.open_array(tmp_path / "x.npy", chunk_bytes=3 * 8 * 128)
    assert y is None
    assert A.chunks == ((128,) * 7 + (104,), (3,))
    assert np.array_equal(A.compute(), X)


def test_npy_graph_carries_the_path_not_the_data(tmp_path):
    """What a distributed scheduler receives is a few tasks naming the file, not its rows."""
    cloudpickle = pytest.importorskip("cloudpickle")
    big = np.zeros((100_000, 10))
    np.save(tmp_path / "big.npy", big)
    A, _ = io.open_array(tmp_path / "big.npy", chunk_bytes=10 * 8 * 25_000)
    assert A.numblocks == (4, 1)
    assert len(cloudpickle.dumps(dict(A.__dask_graph__()))) < 20_000  # the file: 8 MB
    assert np.array_equal(A.compute(), big)


def test_zarr_array_and_group_with_labels(tmp_path, X):
    zarr.create_array(str(tmp_path / "a.zarr"), data=X, chunks=(250, 3))
    A, y = io.open_array(tmp_path / "a.zarr")
    assert y is None and A.chunks[0] == (250,) * 4 and np.array_equal(A.compute(), X)

    g = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    g.create_array("X", data=X, chunks=(100, 1))  # column chunks: re-chunked by rows
    g.create_array("labels", data=np.repeat([7, 3, 9, 3], 250), chunks=(300,))
    A, y = io.open_array(tmp_path / "g.zarr", chunk_bytes=3 * 8 * 400)
    assert A.chunks == ((400, 400, 200), (3,)) and y.chunks == (A.chunks[0],)
    assert np.array_equal(A.compute(), X)
    assert np.array_equal(y.compute(), np.repeat([1, 0, 2, 0], 250))  # 0..c-1 codes


def test_parquet_numeric_columns_and_label_column(tmp_path, X):
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["name"] = "text"  # not numeric: not a feature
    df["Class"] = np.repeat([5, 2], 500)
    pdir = tmp_path / "p.parquet"
    pdir.mkdir()
    df.iloc[:600].to_parquet(pdir / "part.0.parquet")
    df.iloc[600:].to_parquet(pdir / "part.1.parquet")
    A, y = io.open_array(pdir)
    assert A.shape == (1000, 3) and sum(A.chunks[0]) == 1000 and y.chunks == (A.chunks[0],)
    assert np.allclose(A.compute(), X)
    assert np.array_equal(y.compute(), np.repeat([1, 0], 500))


@pytest.mark.parametrize("suffix", [".npy", ".zarr", ".parquet"])
def test_labels_round_trip_and_replace(tmp_path, suffix):
    """A file is replaced; a folder (a zarr or parquet result) never is (issue 30)."""
    labels = da.from_array(np.arange(1000) % 7, chunks=300)
    out = tmp_path / f"labels{suffix}"
    if suffix == ".npy":
        io.write_labels(out, labels + 1)
        assert io.write_labels(out, labels) == out  # an existing file is replaced
    else:
        out.mkdir()
        (out / "keep.txt").write_text("mine")
        with pytest.raises(InputError, match="an existing folder; labels never replace"):
            io.write_labels(out, labels)
        assert [p.name for p in out.iterdir()] == ["keep.txt"]
        (out / "keep.txt").unlink()
        out.rmdir()
        assert io.write_labels(out, labels) == out
    if suffix == ".npy":
        back = np.load(out)
    elif suffix == ".zarr":
        back = da.from_zarr(str(out)).compute()
    else:
        back = pd.read_parquet(out)["label"].to_numpy()
    assert np.array_equal(back, np.arange(1000) % 7)
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]  # no temporary left


def test_parquet_labels_written_one_part_per_chunk(tmp_path):
    io.write_labels(tmp_path / "l.parquet", da.from_array(np.zeros(1000, int), chunks=250))
    assert len(list((tmp_path / "l.parquet").glob("*.parquet"))) == 4


def test_numpy_labels_are_accepted(tmp_path):
    io.write_labels(tmp_path / "l.zarr", np.array([2, 0, 1]))
    assert da.from_zarr(str(tmp_path / "l.zarr")).compute().tolist() == [2, 0, 1]


def test_failed_write_leaves_nothing(tmp_path, monkeypatch):
    def broken(labels, tmp):
        tmp.write_bytes(b"half")
        raise RuntimeError("disk full")

    monkeypatch.setitem(io._WRITERS, ".zarr", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        io.write_labels(tmp_path / "l.zarr", np.zeros(3, int))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name, content, match", [
    ("x.csv", None, "unsupported chunked format '.csv'"),
    ("missing.npy", None, "no such data file"),
    ("bad.npy", b"not a numpy file", "cannot read"),
    ("vec.npy", np.arange(5.0), "expected a 2-D numeric array"),
    ("str.npy", np.array([["a"]]), "expected a 2-D numeric array"),
    ("bad.zarr", b"", "cannot read .* as zarr"),
])
def test_bad_inputs_are_input_errors(tmp_path, name, content, match):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content) if name != "bad.zarr" else path.mkdir()
    elif content is not None:
        np.save(path, content)
    with pytest.raises(InputError, match=match):
        io.open_array(path)


def test_parquet_without_numeric_columns(tmp_path):
    pd.DataFrame({"s": ["a", "b"], "label": [0, 1]}).to_parquet(tmp_path / "t.parquet")
    with pytest.raises(InputError, match="no numeric feature columns"):
        io.open_array(tmp_path / "t.parquet")


def test_unknown_output_suffix(tmp_path):
    with pytest.raises(InputError, match="labels are written as"):
        io.write_labels(tmp_path / "l.h5", np.zeros(3, int))


def test_parquet_float32_features_keep_their_dtype(tmp_path, X):
    df = pd.DataFrame(X.astype(np.float32), columns=["a", "b", "c"])
    df["y"] = np.arange(1000) % 2
    df.to_parquet(tmp_path / "f.parquet")
    A, y = io.open_array(tmp_path / "f.parquet")
    assert A.dtype == np.float32 and np.array_equal(A.compute(), X.astype(np.float32))
    assert y.dtype == np.int64 and np.array_equal(y.compute(), np.arange(1000) % 2)


def test_uint8_rows_are_chunked_by_their_float32_size(tmp_path):
    np.save(tmp_path / "px.npy", np.zeros((100, 16), np.uint8))
    A, _ = io.open_array(tmp_path / "px.npy", chunk_bytes=16 * 4 * 30)
    assert A.chunks[0] == (30, 30, 30, 10)  # 30 rows of 16 float32 values, not 120 bytes


def test_zarr_labels_with_nan_are_refused(tmp_path, X):
    """A NaN label used to become a class of its own."""
    root = zarr.open_group(str(tmp_path / "g.zarr"), mode="w")
    root["X"] = X
    y = (np.arange(1000) % 3).astype(float)
    y[[1, 2]] = np.nan
    root["y"] = y
    with pytest.raises(InputError, match="the labels 'y' have 2 missing values"):
        io.open_array(tmp_path / "g.zarr")
    A, none = io.open_array(tmp_path / "g.zarr", labels=False)
    assert A.shape == (1000, 3) and none is None
