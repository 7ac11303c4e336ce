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


def test_npy_input_runs_in_memory_and_writes_zarr_and_report(capsys, tmp_path, blobs):
    """A .npy file without --scheduler is read in memory (memory-mapped); a zarr output is
    still written chunk by chunk with its JSON report beside it."""
    X, y = blobs
    np.save(tmp_path / "x.npy", X)
    out = tmp_path / "res" / "labels.zarr"
    code, stdout, err = run(capsys, "--preset", "ulge", "--dataset", str(tmp_path / "x.npy"),
                            "--n-clusters", "4", "--output", str(out),
                            "--set", "anchors.n_anchors=64", "--json")
    assert code == 0, err
    assert "scheduler" not in json.loads(stdout)
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


@pytest.mark.slow
def test_local_cluster_end_to_end_matches_in_memory(capsys, tmp_path, blobs, parquet_file):
    """--scheduler local:2 on a parquet file with labels: the labels land in parquet (one
    part per chunk), the scores are computed against the label column, and the partition
    is the in-memory run's (same preset, same seed)."""
    X, y = blobs
    out = tmp_path / "labels.parquet"
    code, stdout, err = run(capsys, "--preset", "ulge", "--dataset", str(parquet_file),
                            "--scheduler", "local:2", "--seed", "3", "--output", str(out),
                            "--set", "anchors.n_anchors=64", "--json", "--n-clusters", "labels")
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
                                str(out), "--json", "--n-clusters", "labels")
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


# -- issue 30: outputs never replace an input, a spec, a folder or a foreign file ----------

def test_zarr_input_store_is_never_the_output(capsys, tmp_path, blobs):
    X, _ = blobs
    store = tmp_path / "X.zarr"
    da.to_zarr(da.from_array(X, chunks=(400, 5)), str(store))
    code, _, err = run(capsys, "--preset", "ulge", "--dataset", str(store), "--n-clusters", "4",
                       "--output", str(store))
    assert code == 2 and "would overwrite the input --dataset" in err
    assert np.allclose(da.from_zarr(str(store)).compute(), X)
    code, _, err = run(capsys, "--preset", "ulge", "--dataset", str(store), "--n-clusters", "4",
                       "--output", str(store / "inside.npy"))
    assert code == 2 and "would overwrite the input --dataset" in err


def test_report_never_overwrites_the_spec_or_a_foreign_file(capsys, tmp_path):
    spec = tmp_path / "run.json"
    spec.write_text(json.dumps({"graph": {"name": "knn"}, "solver": {"name": "spectral"},
                                "rounding": {"name": "kmeans"}}))
    before = spec.read_text()
    code, _, err = run(capsys, "--spec", str(spec), "--dataset", "iris",
                       "--output", str(tmp_path / "run.zarr"))
    assert code == 2 and "the JSON report" in err and "would overwrite the input --spec" in err
    assert spec.read_text() == before and not (tmp_path / "run.zarr").exists()
    mine = tmp_path / "notes.json"
    mine.write_text('{"mine": 1}')
    code, _, err = run(capsys, "--preset", "ncut", "--dataset", "iris",
                       "--output", str(tmp_path / "notes.parquet"))
    assert code == 2 and "exists and is not the report of an earlier run" in err
    assert mine.read_text() == '{"mine": 1}'
    # the report of an earlier run is replaced (a re-run to a new name works)
    code, _, err = run(capsys, "--preset", "ncut", "--dataset", "iris",
                       "--output", str(tmp_path / "a.parquet"))
    assert code == 0, err
    (tmp_path / "b.json").write_text((tmp_path / "a.json").read_text())
    code, _, err = run(capsys, "--preset", "ncut", "--dataset", "iris",
                       "--output", str(tmp_path / "b.parquet"))
    assert code == 0, err
    # an existing zarr/parquet result is a folder: never replaced
    code, _, err = run(capsys, "--preset", "ncut", "--dataset", "iris",
                       "--output", str(tmp_path / "a.parquet"))
    assert code == 2 and "is an existing folder" in err


def test_failed_chunked_write_leaves_no_temporary(capsys, tmp_path, monkeypatch):
    from graphclust import io

    def full(labels, tmp):
        tmp.mkdir()
        raise OSError(28, "No space left on device")

    monkeypatch.setitem(io._WRITERS, ".zarr", full)
    code, _, err = run(capsys, "--preset", "ncut", "--dataset", "iris",
                       "--output", str(tmp_path / "l.zarr"))
    assert code == 2 and "cannot write the labels" in err and "No space left" in err
    assert list(tmp_path.iterdir()) == []


# -- parquet label columns: nulls refused with their count, nullable integers read ----------

def _frame(n=120):
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    df["d"] = pd.array(np.arange(n) % 5, dtype="Int64")
    df["label"] = np.arange(n) % 2
    return df


def test_parquet_nullable_int64_features_and_label_nulls(capsys, tmp_path):
    from graphclust import io

    df = _frame()
    df.to_parquet(tmp_path / "ok.parquet")
    notes = []
    X, y = io.open_array(tmp_path / "ok.parquet", note=notes.append)
    assert X.shape == (120, 4) and X.dtype == np.float64
    assert np.array_equal(X[:, 3].compute(), np.arange(120) % 5)
    assert np.array_equal(y.compute(), np.arange(120) % 2)
    assert "column 'label' taken as the labels" in notes[0]
    bad = df.assign(label=df["label"].astype(float))
    bad.loc[[3, 7], "label"] = np.nan
    bad.to_parquet(tmp_path / "nulls.parquet")
    with pytest.raises(Exception, match="column 'label' holds the labels but 2 of its 120 "
                                        "values are missing"):
        io.open_array(tmp_path / "nulls.parquet")
    words = df.assign(label=pd.array(["x", None] * 60, dtype="string"))
    words.to_parquet(tmp_path / "words.parquet")
    with pytest.raises(Exception, match="60 of its 120 values are missing"):
        io.open_array(tmp_path / "words.parquet")
    X, y = io.open_array(tmp_path / "nulls.parquet", labels=False)
    assert X.shape == (120, 5) and y is None
    nullfeat = df.copy()
    nullfeat.loc[5, "d"] = pd.NA
    nullfeat.to_parquet(tmp_path / "nullfeat.parquet")
    code, _, err = run(capsys, "--preset", "ulge", "--dataset", str(tmp_path / "nullfeat.parquet"))
    assert code == 2 and "NaN" in err and "Traceback" not in err
    code, out, err = run(capsys, "--preset", "ulge", "--dataset", str(tmp_path / "ok.parquet"),
                         "--json", "--set", "anchors.n_anchors=16")
    assert code == 0, err
    assert json.loads(out)["n_clusters_from"] == "estimated"


def test_parquet_continuous_y_column_is_a_feature(tmp_path):
    from graphclust import io

    df = pd.DataFrame({"x": np.linspace(0, 1, 50), "y": np.linspace(2, 3, 50) + 0.01})
    df.to_parquet(tmp_path / "xy.parquet")
    notes = []
    X, y = io.open_array(tmp_path / "xy.parquet", note=notes.append)
    assert X.shape == (50, 2) and y is None and "kept as a feature" in notes[0]
    with pytest.raises(Exception, match="not a label column: its values are not integers"):
        io.open_array(tmp_path / "xy.parquet", labels="y")
