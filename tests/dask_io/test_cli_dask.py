"""``graphclust run`` with ``--scheduler`` and the chunked file formats, through main()."""

import json
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="the chunked CLI path needs the dask extra")
pd = pytest.importorskip("pandas", reason="the parquet format needs pandas")
pytest.importorskip("pyarrow", reason="the parquet format needs pyarrow")
pytest.importorskip("distributed", reason="--scheduler needs dask.distributed")

from graphclust.cli import chunked_scores, main, parse_scheduler
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score


def run(capsys, *argv):
    code = main(["run", "--quiet", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(n_samples=1200, centers=4, n_features=5, random_state=0)
    return X, y


@pytest.fixture
def parquet_file(tmp_path, blobs):
    X, y = blobs
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    df["label"] = y
    path = tmp_path / "blobs.parquet"
    path.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(len(y)), 3)):
        df.iloc[rows].to_parquet(path / f"part.{i}.parquet")
    return path


@pytest.mark.parametrize("text, expected", [
    ("local:3", ("local", 3)), ("tcp://127.0.0.1:8786", ("tcp", "tcp://127.0.0.1:8786")),
    ("tcp://scheduler-0.cluster.local:8786", ("tcp", "tcp://scheduler-0.cluster.local:8786")),
])
def test_parse_scheduler(text, expected):
    assert parse_scheduler(text) == expected


def test_parse_scheduler_local_is_one_worker_per_core(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 6)
    assert parse_scheduler("local") == ("local", 6)


@pytest.mark.parametrize("bad", ["foo", "local:0", "local:two", "local:", "tcp://host",
                                 "http://h:1", "tcp://:8786", "inproc://x"])
def test_unknown_scheduler_string_is_one_line_error(capsys, tmp_path, bad):
    out = tmp_path / "l.npy"
    code, _, err = run(capsys, "--preset", "ulge", "--dataset", "iris", "--scheduler", bad,
                       "--output", str(out))
    assert code == 2 and not out.exists()
    assert err.count("\n") == 1 and "--scheduler" in err and "tcp://HOST:PORT" in err


def test_unreachable_scheduler_is_one_line_error(capsys, tmp_path):
    out = tmp_path / "l.npy"
    code, _, err = run(capsys, "--preset", "ulge", "--dataset", "iris", "--scheduler",
                       "tcp://127.0.0.1:9", "--connect-timeout", "0.5", "--output", str(out))
    assert code == 2 and not out.exists()
    assert err.count("\n") == 1
    assert err.startswith("error: cannot reach the Dask scheduler at tcp://127.0.0.1:9")


def test_missing_distributed_is_a_clear_error(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    code, _, err = run(capsys, "--preset", "ulge", "--dataset", "iris",
                       "--scheduler", "local:1")
    assert code == 2 and 'pip install "graphclust[dask]"' in err


@pytest.mark.parametrize("extra, match", [
    (["--output", "labels.csv"], "a chunked run writes its labels as .npy, .zarr, .parquet"),
    (["--plot", "r.png"], "--plot draws the data in memory"),
])
def test_chunked_run_refuses_in_memory_outputs_before_work(capsys, tmp_path, parquet_file,
                                                           extra, match):
    extra = [e if e.startswith("--") else str(tmp_path / e) for e in extra]
    code, _, err = run(capsys, "--preset", "ulge", "--dataset", str(parquet_file), *extra)
    assert code == 2 and match in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blobs.parquet"]


def test_bad_input_format_is_an_error(capsys, tmp_path):
    bad = tmp_path / "x.npy"
    bad.write_bytes(b"garbage")
    code, _, err = run(capsys, "--preset", "ulge", "--dataset", str(bad), "--n-clusters", "2")
    assert code == 2 and "cannot read" in err and err.count("\n") == 1


def test_npy_input_runs_chunked_and_writes_zarr_and_report(capsys, tmp_path, blobs):
    X, y = blobs
    np.save(tmp_path / "x.npy", X)
    out = tmp_path / "res" / "labels.zarr"
    code, stdout, _ = run(capsys, "--preset", "ulge", "--dataset", str(tmp_path / "x.npy"),
                          "--n-clusters", "4", "--chunk-mb", "0.01", "--output", str(out),
                          "--set", "anchors.n_anchors=64", "--json")
    assert code == 0
    result = json.loads(stdout)
    labels = da.from_zarr(str(out)).compute()
    assert labels.shape == (1200,) and sorted(np.unique(labels)) == [0, 1, 2, 3]
    assert adjusted_rand_score(y, labels) > 0.95
    report = json.loads((tmp_path / "res" / "labels.json").read_text())
    assert report == result and report["cluster_sizes"] == np.bincount(labels).tolist()


def test_in_memory_run_can_write_parquet(capsys, tmp_path):
    out = tmp_path / "labels.parquet"
    code, _, _ = run(capsys, "--preset", "ulge", "--dataset", "iris", "--output", str(out))
    assert code == 0 and pd.read_parquet(out)["label"].shape == (150,)
    assert json.loads((tmp_path / "labels.json").read_text())["n_samples"] == 150


def test_local_cluster_end_to_end_matches_in_memory(capsys, tmp_path, blobs, parquet_file):
    """--scheduler local:2 on a parquet file with labels: the labels land in parquet (one
    part per chunk), the scores are computed against the label column, and the partition
    is the in-memory run's (same preset, same seed)."""
    X, y = blobs
    out = tmp_path / "labels.parquet"
    code, stdout, err = run(capsys, "--preset", "ulge", "--dataset", str(parquet_file),
                            "--scheduler", "local:2", "--seed", "3", "--output", str(out),
                            "--set", "anchors.n_anchors=64", "--json")
    assert code == 0, err
    result = json.loads(stdout)
    assert result["scheduler"] == "local:2" and result["n_chunks"] == 3
    assert result["n_clusters"] == 4 and result["scores"]["ari"] > 0.95
    labels = pd.read_parquet(out)["label"].to_numpy()
    from graphclust import GraphClustering

    mem = GraphClustering("ulge", n_clusters=4, random_state=3,
                          overrides={"anchors": {"n_anchors": 64}}).fit(X).labels_
    assert adjusted_rand_score(mem, labels) == pytest.approx(1.0)
    assert result["scores"]["ari"] == pytest.approx(adjusted_rand_score(y, labels))


@pytest.mark.slow
def test_attach_to_a_running_scheduler(capsys, tmp_path, parquet_file):
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None) as cluster:
        out = tmp_path / "labels.npy"
        code, stdout, err = run(capsys, "--preset", "ulge", "--dataset", str(parquet_file),
                                "--scheduler", cluster.scheduler_address, "--output",
                                str(out), "--json")
        assert code == 0, err
        assert json.loads(stdout)["scores"]["ari"] > 0.95
        assert np.load(out).shape == (1200,)
        # the CLI closed its client, not the cluster
        from distributed import Client

        with Client(cluster) as client:
            assert len(client.scheduler_info()["workers"]) == 1


@given(labels=st.lists(st.integers(0, 4), min_size=2, max_size=60),
       data=st.data(), chunk=st.integers(1, 25))
@settings(max_examples=40, deadline=None)
def test_chunked_scores_equal_the_metric_parts_on_the_labels(labels, data, chunk):
    """Scoring the contingency table's expansion gives what each part gives in memory."""
    from graphclust import get_registry

    registry = get_registry()
    labels = np.array(labels)
    y = np.array(data.draw(st.lists(st.integers(0, 3), min_size=len(labels),
                                    max_size=len(labels))))
    metrics = [registry.metrics.get(m)() for m in ("acc", "nmi", "ari", "purity")]
    scores, skipped = chunked_scores(metrics, da.from_array(labels, chunks=chunk), y)
    assert skipped == []
    for m in metrics:
        assert scores[m.name] == pytest.approx(m.score(labels, y), abs=1e-12)
