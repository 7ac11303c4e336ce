"""``graphclust run --layers``: every layer of the fit beside the labels (issue 45)."""

import json

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from graphclust.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def groups_npy(tmp_path):
    """Three groups of two blobs: a hierarchy with a clear 3- and 6-layer."""
    centres = np.array([[0, 0], [4, 0], [40, 0], [44, 0], [0, 40], [4, 40]], dtype=float)
    X, _ = make_blobs(240, centers=centres, cluster_std=0.5, random_state=0)
    path = tmp_path / "X.npy"
    np.save(path, X)
    return path


def _nested(fine: np.ndarray, coarse: np.ndarray) -> bool:
    return all(np.unique(coarse[fine == g]).size == 1 for g in np.unique(fine))


def test_layers_csv_holds_every_layer_nested_with_the_labels_as_the_chosen(capsys, tmp_path,
                                                                          groups_npy):
    out = tmp_path / "l.csv"
    code, stdout, _ = run(capsys, "run", "--preset", "ncut", "--dataset", str(groups_npy),
                          "--n-clusters", "6", "--layers", "--output", str(out), "--json")
    assert code == 0
    report = json.loads(stdout)
    layers_file = tmp_path / "l.layers.csv"
    assert report["layers_output"] == str(layers_file)
    ks = [row["k"] for row in report["layers"]["layers"]]
    assert ks == list(range(ks[0], 7)) and ks[0] == 1
    assert [row["k"] for row in report["layers"]["layers"] if row["chosen"]] == [6]
    lines = layers_file.read_text().splitlines()
    assert lines[0] == ",".join(f"k={k}" for k in ks)
    table = np.array([list(map(int, line.split(","))) for line in lines[1:]])
    assert table.shape == (240, len(ks))
    for j in range(1, table.shape[1]):  # each layer refines the one before it
        assert np.unique(table[:, j]).size == ks[j] and _nested(table[:, j], table[:, j - 1])
    labels = np.loadtxt(out, delimiter=",", skiprows=1)[:, 0].astype(int)
    fitted = table[:, -1]  # the chosen layer is the fit's partition (numbered apart)
    assert _nested(labels, fitted) and _nested(fitted, labels)


def test_layers_npy_is_an_n_by_layers_array(capsys, tmp_path, groups_npy):
    out = tmp_path / "l.npy"
    code, _, _ = run(capsys, "run", "--preset", "ncut", "--dataset", str(groups_npy),
                     "--n-clusters", "3", "--layers", "--output", str(out), "--quiet")
    assert code == 0
    table = np.load(tmp_path / "l.layers.npy")
    assert table.shape == (240, 3) and table.dtype == np.int64
    assert np.array_equal(np.unique(table[:, 0]), [0])


@pytest.mark.parametrize("output", ["l.parquet", "l.zarr"])
def test_layers_beside_a_chunk_by_chunk_format_is_refused_before_any_work(capsys, tmp_path,
                                                                        groups_npy, output):
    code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(groups_npy),
                       "--n-clusters", "3", "--layers", "--output", str(tmp_path / output))
    assert code == 2 and "--layers writes every layer beside --output as" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["X.npy"]


def test_layers_file_that_is_a_folder_is_refused_before_any_work(capsys, tmp_path, groups_npy):
    (tmp_path / "l.layers.csv").mkdir()
    code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(groups_npy),
                       "--n-clusters", "3", "--layers", "--output", str(tmp_path / "l.csv"))
    assert code == 2 and "is an existing folder" in err
    assert not (tmp_path / "l.csv").exists()


def test_layers_file_that_is_the_input_is_refused(capsys, tmp_path, groups_npy):
    target = tmp_path / "X.layers.npy"
    np.save(target, np.zeros(3))
    before = target.read_bytes()
    code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(target),
                       "--n-clusters", "1", "--layers", "--output", str(tmp_path / "X.npy"))
    assert code == 2 and "would overwrite the input" in err
    assert target.read_bytes() == before
