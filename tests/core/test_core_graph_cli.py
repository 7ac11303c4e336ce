"""Graph files: :func:`graphclust.io.read_graph` and ``graphclust run --graph FILE``.

The target of issue 47: ``graphclust run --graph edges.csv`` on a string-keyed edge list
gives one label per node id, equal to the Python call on the same graph.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from graphclust import GraphClustering, InputError
from graphclust.cli import main
from graphclust.io import read_graph, write_node_labels

try:  # the tier test hides the extras by making their import fail
    import pyarrow  # noqa: F401

    HAS_PYARROW = True
except ImportError:
    HAS_PYARROW = False
NO_PYARROW = "parquet needs pyarrow (pip install pyarrow, or the [dask] extra)"


def planted_edges(seed=0, n_blocks=3, size=30):
    """``(edges, block of each name)``: a planted partition with string node ids, each
    undirected edge once, with weights."""
    rng = np.random.default_rng(seed)
    names = [f"user-{chr(97 + i % 26)}{i:03d}" for i in range(n_blocks * size)]
    block = np.repeat(np.arange(n_blocks), size)
    edges = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            if rng.random() < (0.3 if block[i] == block[j] else 0.02):
                edges.append((names[i], names[j], round(float(rng.uniform(0.5, 2.0)), 3)))
    return edges, dict(zip(names, block))


EDGES, BLOCK_OF = planted_edges()


def write_edges(path, edges, sep=",", weight=True):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, delimiter=sep, lineterminator="\n")
        w.writerow(["source", "target", "weight"] if weight else ["source", "target"])
        w.writerows(e if weight else e[:2] for e in edges)


def read_labels(path, sep=","):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh, delimiter=sep))
    assert rows[0] == ["node", "label", "confidence"]
    assert all(0.0 <= float(row[2]) <= 1.0 for row in rows[1:])
    return {node: int(label) for node, label, _ in rows[1:]}


def python_labels(path, **kw):
    A, nodes = read_graph(path)
    model = GraphClustering("auto", random_state=0, graph="precomputed", **kw).fit(A)
    return dict(zip(nodes.tolist(), model.labels_.tolist()))


def run(*argv):
    return main(["run", *argv, "--quiet"])


# -- the target ---------------------------------------------------------------------------
def test_cli_on_a_string_keyed_csv_equals_the_python_call(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_edges("edges.csv", EDGES)
    assert run("--graph", "edges.csv", "--output", "labels.csv") == 0
    got = read_labels("labels.csv")
    assert set(got) == set(BLOCK_OF)  # one label per node id, every node once
    assert got == python_labels("edges.csv")
    # and the same as a networkx graph of the same edges (nodes in the reader's order)
    nx = pytest.importorskip("networkx")
    G = nx.Graph()
    G.add_nodes_from(sorted(BLOCK_OF))
    G.add_weighted_edges_from(EDGES)
    model = GraphClustering(random_state=0, graph="precomputed").fit(G)
    assert dict(zip(model.nodes_, model.labels_.tolist())) == got
    # the blocks are found
    from sklearn.metrics import adjusted_rand_score

    names = sorted(got)
    assert adjusted_rand_score([BLOCK_OF[v] for v in names], [got[v] for v in names]) == 1.0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edges.csv", "labels.csv"]


def test_cli_on_a_tsv_without_weights(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_edges("edges.tsv", EDGES, sep="\t", weight=False)
    assert run("--graph", "edges.tsv", "--output", "labels.tsv", "--n-clusters", "3") == 0
    got = read_labels("labels.tsv", sep="\t")
    assert got == python_labels("edges.tsv", n_clusters=3)
    A, nodes = read_graph("edges.tsv")
    assert set(A.data) == {1.0}


@pytest.mark.skipif(not HAS_PYARROW, reason=NO_PYARROW)
def test_cli_on_parquet_with_integer_ids(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.chdir(tmp_path)
    index = {v: 1000 + i for i, v in enumerate(sorted(BLOCK_OF))}
    pq.write_table(pa.table({"source": [index[a] for a, _, _ in EDGES],
                             "target": [index[b] for _, b, _ in EDGES],
                             "weight": [w for _, _, w in EDGES]}), "edges.parquet")
    assert run("--graph", "edges.parquet", "--output", "labels.parquet") == 0
    table = pq.read_table("labels.parquet").to_pydict()
    got = dict(zip(table["node"], table["label"]))
    assert set(got) == set(index.values())
    assert got == python_labels("edges.parquet")
    report = json.loads((tmp_path / "labels.json").read_text())  # the report beside it
    assert report["n_samples"] == len(index) and report["graph"] == "edges.parquet"
    write_edges("edges.csv", EDGES)  # the same graph keyed by name: the same partition
    by_name = python_labels("edges.csv")
    assert all(got[index[v]] == by_name[v] for v in index)


# -- the reader -----------------------------------------------------------------------------
def test_read_graph_edge_list_rules(tmp_path):
    one = tmp_path / "one.csv"
    write_edges(one, [("a", "b", 2.0), ("b", "c", 1.0)])
    A, nodes = read_graph(one)
    assert nodes.tolist() == ["a", "b", "c"]
    np.testing.assert_array_equal(A.toarray(), [[0, 2, 0], [2, 0, 1], [0, 1, 0]])
    both = tmp_path / "both.csv"  # each edge both ways, equal weights: the same matrix
    write_edges(both, [("a", "b", 2.0), ("b", "a", 2.0), ("b", "c", 1.0), ("c", "b", 1.0)])
    np.testing.assert_array_equal(read_graph(both)[0].toarray(), A.toarray())
    twice = tmp_path / "twice.csv"  # a pair listed twice: weights summed
    write_edges(twice, [("a", "b", 2.0), ("a", "b", 3.0), ("c", "b", 1.0)])
    np.testing.assert_array_equal(read_graph(twice)[0].toarray(),
                                  [[0, 5, 0], [5, 0, 1], [0, 1, 0]])
    ints = tmp_path / "ints.csv"  # integer ids sort as numbers
    write_edges(ints, [("10", "9", 1.0), ("9", "100", 1.0)])
    assert read_graph(ints)[1].tolist() == [9, 10, 100]


def test_read_graph_matrix_market_and_npz(tmp_path):
    rng = np.random.default_rng(0)
    M = sp.random(20, 20, density=0.2, random_state=1, format="csr")
    M = (M + M.T).tocsr()
    scipy.io.mmwrite(str(tmp_path / "g.mtx"), M)
    sp.save_npz(tmp_path / "g.npz", M)
    for name in ("g.mtx", "g.npz"):
        A, nodes = read_graph(tmp_path / name)
        np.testing.assert_allclose(A.toarray(), M.toarray())
        assert nodes.tolist() == list(range(20))
    assert rng is not None


def test_cli_mtx_writes_npy_or_node_keyed_labels(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    A = sp.csr_array(sp.block_diag([np.ones((5, 5)) - np.eye(5)] * 2))
    A = A + sp.csr_array(([1.0, 1.0], ([0, 5], [5, 0])), shape=(10, 10))
    scipy.io.mmwrite("g.mtx", A)
    assert run("--graph", "g.mtx", "--output", "l.npy", "--n-clusters", "2") == 0
    labels = np.load("l.npy")
    ref = GraphClustering(n_clusters=2, random_state=0, graph="precomputed").fit(A).labels_
    np.testing.assert_array_equal(labels, ref)
    assert run("--graph", "g.mtx", "--output", "l.csv", "--n-clusters", "2") == 0
    assert read_labels("l.csv") == {str(i): int(v) for i, v in enumerate(ref)}


@pytest.mark.parametrize("name, text, match", [
    ("nohead.csv", "a,b\n1,2\n", "columns source and target"),
    ("empty.csv", "", "empty file"),
    ("ragged.csv", "source,target,weight\na,b,1\nb,c\n", "line 3: 2 field"),
    ("noid.csv", "source,target\na,\n", "line 2: an empty node id"),
    ("badw.csv", "source,target,weight\na,b,x\n", "line 2: weight 'x' is not a number"),
    ("negw.csv", "source,target,weight\na,b,-1\n", "finite and nonnegative"),
    ("nanw.csv", "source,target,weight\na,b,nan\n", "finite and nonnegative"),
    ("noedge.csv", "source,target\n", "no edge"),
    ("g.mtx", "not matrix market\n", "Matrix Market"),
    ("g.txt", "source,target\na,b\n", "read from .csv"),
])
def test_read_graph_refuses_malformed_files(tmp_path, name, text, match):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(InputError, match=match):
        read_graph(path)


def test_read_graph_refuses_npz_that_is_not_sparse_and_missing_files(tmp_path):
    np.savez(tmp_path / "x.npz", X=np.ones((3, 3)))
    with pytest.raises(InputError, match="save_npz"):
        read_graph(tmp_path / "x.npz")
    with pytest.raises(InputError, match="no such graph file"):
        read_graph(tmp_path / "nosuch.csv")
    sp.save_npz(tmp_path / "rect.npz", sp.csr_array(np.ones((3, 4))))
    with pytest.raises(InputError, match="square"):
        read_graph(tmp_path / "rect.npz")


def test_write_node_labels_is_atomic_and_checks_lengths(tmp_path):
    out = tmp_path / "l.csv"
    with pytest.raises(InputError, match="2 node ids for 3 labels"):
        write_node_labels(out, ["a", "b"], [0, 1, 2])
    assert not out.exists() and list(tmp_path.iterdir()) == []
    write_node_labels(out, ["a", "b"], [1, 0])
    assert out.read_text() == "node,label\na,1\nb,0\n"


# -- the command line's rules -----------------------------------------------------------------
@pytest.mark.parametrize("extra, match", [
    (["--dataset", "iris"], "not allowed with"),
    (["--data-dir", "."], "--data-dir"),
    (["--labels", "y"], "--labels"),
    (["--plot", "p.png"], "--plot"),
    (["--scheduler", "local"], "--scheduler"),
    (["--n-clusters", "labels"], "--n-clusters labels"),
    (["--output", "l.npy"], "node ids as .csv, .tsv, .parquet"),
    (["--output", "edges.csv"], "would overwrite the input --graph"),
    (["--output", "out.csv"], "existing folder"),
    (["--preset", "ulge"], "solver 'ulge' reads the features"),
])
def test_cli_refuses_before_any_work(tmp_path, monkeypatch, capsys, extra, match):
    monkeypatch.chdir(tmp_path)
    write_edges("edges.csv", EDGES)
    (tmp_path / "out.csv").mkdir()
    before = (tmp_path / "edges.csv").read_bytes()
    try:
        code = run("--graph", "edges.csv", *extra)
    except SystemExit as exc:  # argparse
        code = exc.code
    assert code == 2
    assert match in capsys.readouterr().err
    assert (tmp_path / "edges.csv").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edges.csv", "out.csv"]


def test_cli_refuses_a_spec_needing_features_before_reading_the_graph(tmp_path, monkeypatch,
                                                                     capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "garbage.csv").write_text("not,an,edge,list\n")
    assert run("--graph", "garbage.csv", "--preset", "uspec") == 2
    assert "solver 'tcut' needs an anchor graph" in capsys.readouterr().err


def test_cli_json_report(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rows = [(a, b, w) for a, b, w in EDGES] + [("loop", "loop", 1.0), ("loop", "user-a000", 1.0)]
    write_edges("edges.csv", rows)
    assert main(["run", "--graph", "edges.csv", "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_samples"] == len(BLOCK_OF) + 1
    assert out["dropped"]["self_loops"] == 1
    assert out["resolved_spec"]["graph"] == {"name": "precomputed"}


def test_cli_noise_flags_a_node_of_no_edge(tmp_path, monkeypatch, capsys):
    """``--noise``: a node whose only edge is a self-loop (dropped: no edge to any other
    node, no evidence of membership) is -1, as in the Python call with ``noise=True``;
    the planted nodes keep their labels; the labels carry the confidence column."""
    monkeypatch.chdir(tmp_path)
    write_edges("edges.csv", EDGES + [("alone", "alone", 1.0)])
    assert main(["run", "--graph", "edges.csv", "--noise", "--output", "labels.csv",
                 "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    got = read_labels("labels.csv")
    assert got == python_labels("edges.csv", noise=True)
    assert got["alone"] == -1 and report["n_noise"] == 1
    from sklearn.metrics import adjusted_rand_score

    names = sorted(BLOCK_OF)  # the planted blocks, found as without the lone node
    assert adjusted_rand_score([BLOCK_OF[v] for v in names], [got[v] for v in names]) == 1.0
    assert sum(report["cluster_sizes"]) == len(BLOCK_OF)
    assert 0.0 < report["mean_confidence"] <= 1.0
    assert report["confidence_source"]


def test_cli_npy_labels_of_a_matrix_graph_get_a_confidence_array(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    A, _ = read_graph(_edges_file(tmp_path))
    sp.save_npz("graph.npz", sp.csr_matrix(A))
    assert run("--graph", "graph.npz", "--output", "labels.npy") == 0
    model = GraphClustering("auto", random_state=0, graph="precomputed").fit(A)
    np.testing.assert_array_equal(np.load("labels.npy"), model.labels_)
    np.testing.assert_allclose(np.load("labels.confidence.npy"), model.confidence_)


def _edges_file(folder):
    path = folder / "edges-for-matrix.csv"
    write_edges(path, EDGES)
    return path
