"""Layers of a fit on a graph: ``layers_`` / ``cluster_layers_`` after
``graph="precomputed"`` and ``graphclust run --graph FILE --layers`` (every layer keyed by
node id, beside the labels)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from graphclust import GraphClustering
from graphclust.cli import main
from graphclust.io import read_graph
from sklearn.metrics import adjusted_rand_score

try:  # the tier test hides the extras by making their import fail
    import pyarrow  # noqa: F401

    HAS_PYARROW = True
except ImportError:
    HAS_PYARROW = False


def nested_planted(seed=0, size=30):
    """Six blocks in two groups of three (dense in a block, sparser in a group, rare
    between groups): ``(A, block, group)``."""
    rng = np.random.default_rng(seed)
    block = np.repeat(np.arange(6), size)
    group = block // 3
    P = np.where(block[:, None] == block[None, :], 0.5,
                 np.where(group[:, None] == group[None, :], 0.08, 0.005))
    upper = np.triu(rng.random(P.shape) < P, 1).astype(float)
    return sp.csr_array(upper + upper.T), block, group


A6, BLOCK, GROUP = nested_planted()
NAMES = np.array([f"v-{i:03d}{'xyz'[i % 3]}" for i in range(A6.shape[0])])


def _nested(fine, coarse) -> bool:
    return all(np.unique(coarse[fine == g]).size == 1 for g in np.unique(fine))


@pytest.mark.parametrize("spec, k", [("auto", None), ("graph-spectral", 6), ("dcd", 6)])
def test_graph_layers_are_nested_and_the_coarse_layer_is_the_groups(spec, k):
    model = GraphClustering(spec, n_clusters=k, graph="precomputed", random_state=0).fit(A6)
    assert model.n_clusters_ == 6 and adjusted_rand_score(BLOCK, model.labels_) == 1.0
    layers = model.cluster_layers_
    assert [np.unique(lab).size for lab in layers] == list(range(1, 7))
    for fine, coarse in zip(layers[1:], layers[:-1]):
        assert _nested(fine, coarse)
    assert adjusted_rand_score(GROUP, model.partition_at(2)) == 1.0
    assert adjusted_rand_score(model.labels_, layers[-1]) == 1.0


def write_edge_csv(path, A, names, sep=","):
    upper = sp.triu(A, 1).tocoo()
    with open(path, "w", newline="") as fh:
        out = csv.writer(fh, delimiter=sep, lineterminator="\n")
        out.writerow(["source", "target"])
        out.writerows(zip(names[upper.row], names[upper.col]))


def read_table(path, sep=","):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh, delimiter=sep))
    return rows[0], rows[1:]


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def edges_csv(tmp_path):
    path = tmp_path / "edges.csv"
    write_edge_csv(path, A6, NAMES)
    return path


@pytest.mark.parametrize("suffix, sep", [(".csv", ","), (".tsv", "\t")])
def test_cli_graph_layers_are_keyed_by_node_id_and_equal_the_python_layers(
        capsys, tmp_path, edges_csv, suffix, sep):
    out = tmp_path / f"labels{suffix}"
    code, stdout, _ = run(capsys, "run", "--graph", str(edges_csv), "--layers", "--output",
                          str(out), "--json", "--quiet")
    assert code == 0
    report = json.loads(stdout)
    where = tmp_path / f"labels.layers{suffix}"
    assert report["layers_output"] == str(where)
    ks = [row["k"] for row in report["layers"]["layers"]]
    head, rows = read_table(where, sep)
    assert head == ["node", *(f"k={k}" for k in ks)]
    label_head, label_rows = read_table(out, sep)
    assert [r[0] for r in rows] == [r[0] for r in label_rows]  # the same ids, in order
    assert sorted(r[0] for r in rows) == sorted(NAMES.tolist())  # string ids kept
    A, nodes = read_graph(edges_csv)
    model = GraphClustering(graph="precomputed", random_state=0).fit(A)
    expected = model.layers_.layers()
    assert ks == [k for k, _, _ in expected]
    assert [r[0] for r in rows] == nodes.tolist()
    table = np.array([[int(v) for v in r[1:]] for r in rows])
    assert np.array_equal(table, np.column_stack([lab for _, _, lab in expected]))
    by_name = dict(zip(nodes.tolist(), table[:, ks.index(2)]))
    assert adjusted_rand_score(GROUP, [by_name[v] for v in NAMES]) == 1.0
    chosen = table[:, ks.index(report["n_clusters"])]
    labels = np.array([int(r[1]) for r in label_rows])
    assert adjusted_rand_score(labels, chosen) == 1.0


@pytest.mark.skipif(not HAS_PYARROW, reason="parquet needs pyarrow (the [dask] extra)")
def test_cli_graph_layers_as_parquet(capsys, tmp_path, edges_csv):
    import pyarrow.parquet as pq

    code, _, _ = run(capsys, "run", "--graph", str(edges_csv), "--layers", "--output",
                     str(tmp_path / "l.parquet"), "--quiet")
    assert code == 0
    table = pq.read_table(tmp_path / "l.layers.parquet").to_pydict()
    labels = pq.read_table(tmp_path / "l.parquet").to_pydict()
    assert table["node"] == labels["node"] and list(table)[1:] == [f"k={k}" for k in range(1, 7)]


def test_cli_layers_of_a_matrix_market_graph_as_npy(capsys, tmp_path):
    graph = tmp_path / "g.mtx"
    scipy.io.mmwrite(str(graph), sp.coo_matrix(A6))
    code, _, _ = run(capsys, "run", "--graph", str(graph), "--n-clusters", "6", "--layers",
                     "--output", str(tmp_path / "l.npy"), "--quiet")
    assert code == 0
    table = np.load(tmp_path / "l.layers.npy")
    assert table.shape == (A6.shape[0], 6) and table.dtype == np.int64
    assert adjusted_rand_score(np.load(tmp_path / "l.npy"), table[:, -1]) == 1.0


def test_cli_graph_layers_file_that_is_a_folder_is_refused_before_any_work(capsys, tmp_path,
                                                                          edges_csv):
    (tmp_path / "l.layers.csv").mkdir()
    code, _, err = run(capsys, "run", "--graph", str(edges_csv), "--layers",
                       "--output", str(tmp_path / "l.csv"))
    assert code == 2 and "is an existing folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edges.csv", "l.layers.csv"]


def test_cli_graph_layers_file_that_is_the_graph_is_refused(capsys, tmp_path):
    graph = tmp_path / "g.layers.csv"
    write_edge_csv(graph, A6, NAMES)
    before = graph.read_bytes()
    code, _, err = run(capsys, "run", "--graph", str(graph), "--layers",
                       "--output", str(tmp_path / "g.csv"))
    assert code == 2 and "would overwrite the input --graph" in err
    assert graph.read_bytes() == before and not (tmp_path / "g.csv").exists()


def test_cli_graph_layers_without_output_are_in_the_json_only(capsys, tmp_path, edges_csv):
    code, stdout, _ = run(capsys, "run", "--graph", str(edges_csv), "--layers", "--json",
                          "--quiet")
    assert code == 0
    report = json.loads(stdout)
    assert [row["k"] for row in report["layers"]["layers"]] == list(range(1, 7))
    assert "layers_output" not in report
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edges.csv"]
