"""``graphclust run --dataset X.npy``: in memory when it fits, chunked when it does not, and
the container never changes the labels (issue 27, item 3)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from sklearn.datasets import load_digits

pytest.importorskip("dask.array", reason="the chunked CLI path needs the dask extra")

from graphclust import io
from graphclust.cli import main


def _run(capsys, *argv):
    code = main(["run", "--quiet", "--json", *argv])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out), out.err


@pytest.fixture(scope="module")
def digits_files(tmp_path_factory):
    X = load_digits().data
    folder = tmp_path_factory.mktemp("containers")
    np.save(folder / "X.npy", X)
    np.savetxt(folder / "X.csv", X, delimiter=",", fmt="%d")
    return folder, X


@pytest.mark.parametrize("preset", ["auto", pytest.param("uspec", marks=pytest.mark.slow)])
def test_npy_and_csv_give_identical_labels(capsys, digits_files, tmp_path, preset):
    """The same rows as ``.npy`` and as ``.csv`` run the same method in memory and give the
    same labels, element for element."""
    folder, X = digits_files
    labels = {}
    for name in ("X.npy", "X.csv"):
        out = tmp_path / f"{name}.labels.npy"
        result, _ = _run(capsys, "--preset", preset, "--dataset", str(folder / name),
                         "--no-labels", "--n-clusters", "10", "--output", str(out))
        assert "n_chunks" not in result  # read in memory, both
        labels[name] = np.load(out)
    assert labels["X.npy"].shape == (X.shape[0],)
    np.testing.assert_array_equal(labels["X.npy"], labels["X.csv"])


def test_npy_over_the_memory_limit_runs_chunked_with_the_same_labels(
        capsys, digits_files, tmp_path, monkeypatch):
    """A ``.npy`` above the limit is read in chunks on Dask's local threads, says so, and
    its labels are those of the in-memory run (every row is seen by the samples below
    100 000 rows)."""
    folder, X = digits_files
    mem_out, chunk_out = tmp_path / "mem.npy", tmp_path / "chunk.npy"
    _run(capsys, "--preset", "uspec", "--dataset", str(folder / "X.npy"), "--no-labels",
         "--n-clusters", "10", "--output", str(mem_out))
    monkeypatch.setattr(io, "npy_memory_limit", lambda: (200_000, "a test limit"))
    result, err = _run(capsys, "--preset", "uspec", "--dataset", str(folder / "X.npy"),
                       "--no-labels", "--n-clusters", "10", "--chunk-mb", "0.25",
                       "--output", str(chunk_out))
    need = X.size * 8
    assert f"{need / 2**20:.0f} MB of features exceed the in-memory limit" in err
    assert "a test limit" in err and "read in chunks on Dask" in err
    assert result["n_chunks"] == -(-X.shape[0] // (int(0.25 * 2**20) // (64 * 8)))
    np.testing.assert_array_equal(np.load(chunk_out), np.load(mem_out))


def test_memory_limit_rule(monkeypatch, tmp_path):
    """A quarter of the available memory with psutil; 2 GiB without it."""
    psutil = pytest.importorskip("psutil")

    class Mem:
        available = 8 * 2**30

    monkeypatch.setattr(psutil, "virtual_memory", lambda: Mem())
    limit, how = io.npy_memory_limit()
    assert limit == 2 * 2**30 and "quarter of the 8.0 GiB" in how
    monkeypatch.setitem(sys.modules, "psutil", None)  # import psutil now fails
    assert io.npy_memory_limit() == (io.NPY_MEMORY_FALLBACK, "2 GiB (psutil is not installed)")
    path = tmp_path / "A.npy"
    np.save(path, np.zeros((10, 3), dtype=np.float32))  # computed in float32: 120 bytes
    monkeypatch.setattr(io, "npy_memory_limit", lambda: (120, "x"))
    assert io.npy_fits_in_memory(path) == (True, "")
    monkeypatch.setattr(io, "npy_memory_limit", lambda: (119, "x"))
    fits, why = io.npy_fits_in_memory(path)
    assert not fits and "exceed the in-memory limit" in why


def test_help_says_how_npy_is_read(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "quarter of the available memory" in text and "2 GiB without it" in text
