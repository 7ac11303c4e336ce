"""The command line, through main() in-process."""

import json

import numpy as np
import pytest

from graphclust.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_run_digits_prints_scores(capsys, tmp_path):
    out_file = tmp_path / "sub" / "labels.npy"
    code, out, err = run(capsys, "run", "--preset", "ncut", "--dataset", "digits",
                         "--output", str(out_file), "--n-clusters", "labels")
    assert code == 0
    assert "ACC:" in out and "NMI:" in out and "cluster sizes:" in out
    assert "[graphclust] solver:spectral" in err  # progress on stderr
    labels = np.load(out_file)
    assert labels.shape == (1797,) and labels.max() == 9


def test_run_json_and_set(capsys):
    code, out, _ = run(capsys, "run", "--preset", "ncut", "--dataset", "iris", "--json",
                       "--quiet", "--set", "graph.n_neighbors=8", "--n-clusters", "3")
    result = json.loads(out)
    assert code == 0 and result["n_clusters"] == 3 and result["n_samples"] == 150
    assert set(result["scores"]) >= {"acc", "nmi", "ari", "purity"}
    assert sum(result["cluster_sizes"]) == 150


def test_run_errors_exit_2_and_write_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("GRAPHCLUST_DATA", raising=False)  # the names known without a folder
    out_file = tmp_path / "labels.npy"
    code, _, err = run(capsys, "run", "--preset", "nctu", "--dataset", "digits",
                       "--output", str(out_file))
    assert code == 2 and "did you mean 'ncut'" in err and not out_file.exists()
    code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", "nosuchdata")
    assert code == 2 and "unknown dataset 'nosuchdata'" in err and "digits" in err
    code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", "digits",
                       "--set", "graph.n_neighbours=3", "--output", str(out_file))
    assert code == 2 and "graph.n_neighbours" in err and not out_file.exists()
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2\nnan,3\n4,5\n")
    code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(bad),
                       "--n-clusters", "2")
    assert code == 2 and "NaN" in err


def test_plugins_lists_all_kinds_with_bundles(capsys):
    code, out, _ = run(capsys, "plugins", "--json")
    data = json.loads(out)
    assert code == 0
    kinds = {p["kind"] for p in data["parts"]}
    assert kinds == {"anchors", "graph", "adapter", "solver", "rounding", "metric", "consensus"}
    assert all(p["bundle"] and p["summary"] for p in data["parts"])
    assert any(p["name"] == "ncut" for p in data["presets"])
    code, out, _ = run(capsys, "plugins")
    assert "parts:" in out and "presets:" in out


def test_describe_and_validate_and_fill(capsys, tmp_path):
    code, out, _ = run(capsys, "describe", "kmeans", "--kind", "rounding")
    assert code == 0 and "n_init" in out
    code, out, _ = run(capsys, "describe", "ncut")
    assert code == 0 and "preset ncut" in out
    code, out, _ = run(capsys, "describe", "anchor-level", "--kind", "adapter")
    assert code == 0 and "adapter anchor-level (common)" in out
    assert "accepts: ['anchor']" in out and "produces: affinity" in out
    code, _, err = run(capsys, "describe", "kmeens")
    assert code == 2 and "did you mean 'kmeans'" in err
    good = tmp_path / "good.toml"
    good.write_text('graph = { name = "knn" }\nsolver = { name = "spectral" }\n'
                    'rounding = { name = "kmeans" }\n')
    assert run(capsys, "validate", str(good))[0] == 0
    bad = tmp_path / "bad.toml"
    bad.write_text('graph = { name = "knn", n_neighbors = -1 }\nsolver = { name = "os.system" }\n'
                   'rounding = { name = "kmeans" }\n')
    code, _, err = run(capsys, "validate", str(bad))
    assert code == 2 and "graph.n_neighbors" in err and "registered name only" in err
    code, out, _ = run(capsys, "fill", "ncut", "--json")
    filled = json.loads(out)
    assert code == 0 and "n_neighbors" in filled["graph"] and "n_init" in filled["rounding"]


# -- issue 19: a CLI that round-trips ------------------------------------------------------

import os
import subprocess
import sys
import tomllib

import graphclust as gc

PRESETS = gc.get_registry().presets.names()


@pytest.fixture(scope="module")
def digits200(tmp_path_factory):
    """The first 200 rows of scikit-learn's digits as an .npz file (X, y)."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    path = tmp_path_factory.mktemp("data") / "digits200.npz"
    np.savez(path, X=X[:200], y=y[:200])
    return str(path)


@pytest.mark.parametrize("preset", [  # ncer-anchor's run takes 3.5 s: the slow tier's
    pytest.param(p, marks=pytest.mark.slow) if p == "ncer-anchor" else p for p in PRESETS])
def test_fill_validate_run_round_trip(preset, digits200, tmp_path, capsys):
    code, out, err = run(capsys, "fill", preset)
    assert code == 0, err
    filled = tmp_path / f"{preset}.toml"
    filled.write_text(out)
    spec = tomllib.loads(out)  # TOML, every part written out
    assert {"graph", "solver", "rounding"} <= set(spec) or "ensemble" in spec
    code, out, err = run(capsys, "validate", str(filled))
    assert code == 0 and out.strip().endswith(": valid"), err
    labels = tmp_path / "labels.csv"
    code, out, err = run(capsys, "run", "--spec", str(filled), "--dataset", digits200,
                         "--quiet", "--json", "--output", str(labels), "--n-clusters", "labels")
    assert code == 0, err
    result = json.loads(out)
    assert result["n_samples"] == 200 and result["n_clusters"] == 10
    got = np.loadtxt(labels, dtype=np.int64, delimiter=",", skiprows=1, usecols=0)
    assert got.shape == (200,) and sum(result["cluster_sizes"]) == 200
    assert labels.read_text().startswith("label,confidence\n")
    # the filled spec runs exactly like the preset it came from
    code, out, err = run(capsys, "run", "--preset", preset, "--dataset", digits200, "--quiet",
                         "--output", str(tmp_path / "preset.npy"), "--n-clusters", "labels")
    assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / "preset.npy"), got)


def test_fill_writes_nested_parts_as_tables(capsys):
    code, out, _ = run(capsys, "fill", "ongr-k")
    spec = tomllib.loads(out)
    assert code == 0 and spec["anchors"]["base"]["name"] == "kmeans"
    assert isinstance(spec["anchors"]["base"]["n_init"], int)


def test_output_csv_is_text_npy_is_binary_and_modes_follow_umask(digits200, tmp_path, capsys):
    old = os.umask(0o022)
    try:
        for name in ("l.csv", "l.npy"):
            code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", digits200,
                               "--quiet", "--output", str(tmp_path / name))
            assert code == 0, err
        os.umask(0o027)
        code, _, _ = run(capsys, "run", "--preset", "ncut", "--dataset", digits200, "--quiet",
                         "--output", str(tmp_path / "g.csv"))
    finally:
        os.umask(old)
    text = (tmp_path / "l.csv").read_text()
    head, *rows = text.splitlines()
    assert head == "label,confidence" and len(rows) == 200  # the confidence column
    table = np.loadtxt(tmp_path / "l.csv", delimiter=",", skiprows=1)
    assert (tmp_path / "l.npy").read_bytes().startswith(b"\x93NUMPY")
    np.testing.assert_array_equal(np.load(tmp_path / "l.npy"), table[:, 0])
    # .npy has no columns: the confidence is a second array beside it, the same values
    np.testing.assert_allclose(np.load(tmp_path / "l.confidence.npy"), table[:, 1], atol=1e-8)
    assert (tmp_path / "l.csv").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "l.npy").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "l.confidence.npy").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "g.csv").stat().st_mode & 0o777 == 0o640
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp left


def test_version_matches_the_package(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"graphclust {gc.__version__}"


def test_json_echoes_the_spec_after_set(digits200, capsys):
    code, out, err = run(capsys, "run", "--preset", "ncut", "--dataset", digits200, "--json",
                         "--quiet", "--set", "graph.n_neighbors=7",
                         "--set", "rounding.n_init=3", "--n-clusters", "labels")
    assert code == 0, err
    spec = json.loads(out)["resolved_spec"]
    assert spec["graph"]["n_neighbors"] == 7 and spec["rounding"]["n_init"] == 3
    assert spec["graph"]["name"] == "knn" and spec["n_clusters"] == 10


@pytest.mark.parametrize("name", PRESETS + sorted({r.name for r in
                                                   gc.get_registry().all_parts()}))
def test_describe_every_preset_and_part(name, capsys):
    code, out, err = run(capsys, "describe", name)
    assert code == 0, err
    code, out, err = run(capsys, "describe", name, "--json")
    data = json.loads(out)
    items = data if isinstance(data, list) else [data]
    if name in PRESETS:
        assert any(i.get("preset") == name for i in items)  # also when a part shares it
    else:
        assert any(i.get("name") == name for i in items)


def test_set_errors_name_the_key(capsys):
    code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", "iris",
                       "--set", "graph=3", "--set", "graph.k=1")
    assert code == 2 and "--set graph.k: conflicts with --set graph=3" in err
    assert "Traceback" not in err and err.count("\n") == 2


def test_broken_pipe_is_quiet():
    """`graphclust describe ncut | head -c 1`: the reader goes away, no traceback."""
    cmd = (f"{sys.executable} -c 'import sys; from graphclust.cli import main; "
           f"sys.exit(main([\"plugins\"] * 1))' | head -c 1 > /dev/null")
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr
    assert proc.returncode in (0, 141)


# -- issue 30: the command line never destroys a file it did not create ------------------

@pytest.fixture
def blobs_npy(tmp_path):
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(120, centers=3, n_features=3, random_state=0)
    path = tmp_path / "X.npy"
    np.save(path, X)
    return path


def test_output_equal_to_the_dataset_is_refused_before_work(capsys, tmp_path, blobs_npy):
    before = blobs_npy.read_bytes()
    for out in (blobs_npy, tmp_path / "." / "X.npy"):
        code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(blobs_npy),
                           "--n-clusters", "3", "--output", str(out))
        assert code == 2 and "would overwrite the input --dataset" in err
        assert "[graphclust]" not in err  # no work started
    csv = tmp_path / "d.csv"
    np.savetxt(csv, np.load(blobs_npy), delimiter=",")
    code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(csv),
                       "--n-clusters", "3", "--output", str(csv))
    assert code == 2 and "would overwrite the input" in err
    assert blobs_npy.read_bytes() == before and csv.read_text().count("\n") == 120


def test_output_that_is_an_existing_folder_is_refused(capsys, tmp_path, blobs_npy):
    keep = tmp_path / "keep.npy"
    keep.mkdir()
    (keep / "mine.txt").write_text("precious")
    code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(blobs_npy),
                       "--n-clusters", "3", "--output", str(keep))
    assert code == 2 and "is an existing folder; graphclust never replaces a folder" in err
    assert (keep / "mine.txt").read_text() == "precious"


def test_two_outputs_of_one_run_must_differ(capsys, tmp_path, blobs_npy):
    pytest.importorskip("matplotlib")
    out = tmp_path / "r.png"
    code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(blobs_npy),
                       "--n-clusters", "3", "--output", str(out), "--plot", str(out))
    assert code == 2 and "two outputs of one run must have different names" in err
    assert not out.exists()


def test_an_output_inside_another_is_refused_before_any_work(capsys, tmp_path, blobs_npy):
    """--output sub and --plot sub/p.png: the labels would be written as the file 'sub' and
    then the picture could not be (found by the slow fuzz run): refused, nothing written."""
    pytest.importorskip("matplotlib")
    out, plot = tmp_path / "sub", tmp_path / "sub" / "p.png"
    code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(blobs_npy),
                       "--n-clusters", "3", "--output", str(out), "--plot", str(plot))
    assert code == 2 and "would lie inside" in err and "choose output names" in err
    assert not out.exists() and not plot.exists()


def test_unwritable_outputs_are_refused_before_work(capsys, tmp_path, blobs_npy):
    afile = tmp_path / "afile"
    afile.write_text("x")
    code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(blobs_npy),
                       "--n-clusters", "3", "--output", str(afile / "sub" / "l.npy"))
    assert code == 2 and "is not a folder" in err and "[graphclust]" not in err
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        try:
            code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(blobs_npy),
                               "--n-clusters", "3", "--output", str(ro / "l.npy"))
            assert code == 2 and "is not writable" in err and "[graphclust]" not in err
        finally:
            ro.chmod(0o755)


def test_a_failed_write_is_one_error_and_leaves_no_temporary(capsys, tmp_path, blobs_npy,
                                                             monkeypatch):
    import errno

    real = os.fdopen

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("graphclust.cli.os.fdopen", lambda fd, mode: Full(real(fd, mode)))
    out = tmp_path / "out" / "l.csv"
    code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(blobs_npy),
                       "--n-clusters", "3", "--quiet", "--output", str(out))
    assert code == 2 and "Traceback" not in err
    assert f"cannot write the labels '{out}': No space left on device" in err
    assert list(out.parent.iterdir()) == []


@pytest.mark.parametrize("option, value", [
    ("--connect-timeout", "-1"), ("--connect-timeout", "0"), ("--connect-timeout", "nan"),
    ("--chunk-mb", "nan"), ("--chunk-mb", "inf"), ("--chunk-mb", "-2"), ("--chunk-mb", "x"),
])
def test_numeric_options_are_checked_by_argparse(capsys, option, value):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--dataset", "iris", option, value])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and f"argument {option}: expected a positive number" in err


@pytest.mark.parametrize("option", ["--preset", "--spec", "--output", "--plot", "--labels",
                                    "--data-dir"])
def test_empty_strings_are_not_silently_the_default(capsys, option):
    """`--spec ""` used to run auto and `--output ""` to write nothing, silently."""
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--dataset", "iris", option, ""])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and f"argument {option}: expected a value" in err


def test_empty_scheduler_and_chunk_mb_in_memory_are_refused(capsys):
    code, _, err = run(capsys, "run", "--dataset", "iris", "--scheduler", "")
    assert code == 2 and "--scheduler '': expected local" in err
    code, _, err = run(capsys, "run", "--dataset", "iris", "--chunk-mb", "1")
    assert code == 2 and "--chunk-mb sets the row chunks of a chunked run" in err


# -- issue 29: labels are never guessed silently; .npy on the base install; k said ------------

def _moons_csv(path, header="x,y"):
    from sklearn.datasets import make_moons

    X, y = make_moons(200, noise=0.05, random_state=0)
    np.savetxt(path, X, delimiter=",", header=header, comments="")
    return X, y


def test_csv_header_x_y_keeps_both_columns_as_features(capsys, tmp_path):
    _moons_csv(tmp_path / "moons.csv")
    code, out, err = run(capsys, "run", "--preset", "ncut", "--dataset",
                         str(tmp_path / "moons.csv"), "--n-clusters", "2", "--json", "--quiet")
    result = json.loads(out)
    assert code == 0 and result["n_features"] == 2 and result["scores"] == {}
    assert "column 'y' is kept as a feature, not taken as the labels" in err
    code, _, err = run(capsys, "run", "--dataset", str(tmp_path / "moons.csv"), "--labels", "y")
    assert code == 2 and "not a label column: its values are not integers" in err
    assert "--no-labels" in err


def test_csv_label_column_taken_is_said_and_can_be_chosen_or_dropped(capsys, tmp_path):
    X, y = _moons_csv(tmp_path / "m.csv")
    path = tmp_path / "lab.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", header="a,b,class", comments="")
    code, out, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(path), "--json",
                         "--quiet", "--n-clusters", "labels")
    result = json.loads(out)
    assert code == 0 and result["n_features"] == 2 and result["n_clusters"] == 2
    assert result["n_clusters_from"] == "the labels" and "acc" in result["scores"]
    assert "column 'class' taken as the labels (2 classes" in err
    assert any("taken as the labels" in n for n in result["notes"])
    code, out, _ = run(capsys, "run", "--preset", "ncut", "--dataset", str(path), "--json",
                       "--quiet", "--no-labels", "--n-clusters", "2")
    assert code == 0 and json.loads(out)["n_features"] == 3
    code, out, _ = run(capsys, "run", "--preset", "ncut", "--dataset", str(path), "--json",
                       "--quiet", "--labels", "2")
    assert code == 0 and json.loads(out)["scores"]["acc"] > 0
    code, _, err = run(capsys, "run", "--dataset", str(path), "--labels", "nosuch")
    assert code == 2 and "--labels 'nosuch': no such column (columns: a, b, class" in err
    code, _, err = run(capsys, "run", "--dataset", str(path), "--labels", "a")
    assert code == 2 and "not a label column" in err  # continuous
    ids = tmp_path / "ids.csv"
    ids.write_text("a,id\n" + "".join(f"{i * 0.5},{i}\n" for i in range(20)))
    code, _, err = run(capsys, "run", "--dataset", str(ids), "--labels", "id")
    assert code == 2 and "20 distinct values in 20 rows" in err and "--no-labels" in err


def test_csv_missing_labels_empty_and_header_only_files(capsys, tmp_path):
    cases = {
        "miss.csv": ("a,b,label\n1,2,0\n3,4,\n5,6,1\n7,8,1\n",
                     "the label column 'label' has 1 missing values (of 4)"),
        "empty.csv": ("", "the file is empty"),
        "head.csv": ("a,b\n", "no data rows after the header"),
        "words.csv": ("a,b\n1,cat\n", "cannot read the table: could not convert string"),
    }
    for name, (text, message) in cases.items():
        (tmp_path / name).write_text(text)
        code, _, err = run(capsys, "run", "--dataset", str(tmp_path / name), "--n-clusters", "2")
        assert code == 2 and message in err and "Traceback" not in err, (name, err)
    (tmp_path / "w.csv").write_text("a,b,label\n1,2,cat\n3,4,dog\n5,6,cat\n7,8,dog\n")
    code, out, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(tmp_path / "w.csv"),
                         "--json", "--quiet", "--set", "graph.n_neighbors=2")
    assert code == 0 and json.loads(out)["n_clusters"] == 2  # word labels are classes


@pytest.mark.parametrize("name, text, line, said", [
    # issue 46 S5: ';' separated with decimal commas was read as one column of integers
    ("semi.csv", "x;y\n1,5;2,25\n3,0;4,75\n0,5;1,25\n", 2,
     "looks semicolon-separated with decimal commas"),
    ("semi_noheader.csv", "1,5;2,25\n3,0;4,75\n", 1,
     "looks semicolon-separated with decimal commas"),
    ("semi_dots.csv", "1.5;2.25\n3.0;4.75\n", 1, "looks semicolon-separated"),
    ("decimal.tsv", "1.5\t2.25\n3,0\t4.75\n", 2, "has a decimal comma"),
    ("long.csv", "a,b\n1.5,2.5\n3,5,4.75\n", 3, "has 3 fields where line 1 has 2"),
])
def test_csv_separator_or_decimal_mark_not_trusted_is_refused_with_its_line(
        capsys, tmp_path, name, text, line, said):
    path = tmp_path / name
    path.write_text(text)
    before = path.read_bytes()
    code, out, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(path),
                         "--n-clusters", "2")
    shown = text.splitlines()[line - 1]
    assert code == 2 and out == "" and "Traceback" not in err, err
    assert f"line {line} {said}" in err and repr(shown) in err, err
    assert path.read_bytes() == before


def test_csv_with_same_fields_on_every_line_still_reads(capsys, tmp_path):
    path = tmp_path / "ok.csv"
    path.write_text("x,y\n1.5,2.25\n\n3.0,4.75\n0.5,1.25\n3.5,4.5\n")  # a blank line skipped
    code, out, _ = run(capsys, "run", "--preset", "ncut", "--dataset", str(path), "--json",
                       "--quiet", "--n-clusters", "2", "--set", "graph.n_neighbors=2")
    assert code == 0 and json.loads(out)["n_samples"] == 4


def test_npy_runs_in_memory_without_dask(tmp_path, blobs_npy):
    """`graphclust run --dataset X.npy` on the base install (dask not importable)."""
    code = ("import sys; sys.modules['dask'] = None; sys.modules['dask.array'] = None\n"
            "from graphclust.cli import main\n"
            f"sys.exit(main(['run', '--preset', 'ncut', '--dataset', {str(blobs_npy)!r},"
            f" '--n-clusters', '3', '--quiet', '--output', {str(tmp_path / 'l.npy')!r}]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=os.environ.copy(), check=False)
    assert proc.returncode == 0, proc.stderr
    assert np.load(tmp_path / "l.npy").shape == (120,)


def test_run_help_says_npy_is_read_in_memory(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert ".npy is read in memory (memory-mapped) when its features fit" in text
    assert "in chunks on the cluster with --scheduler" in text


def test_estimated_k_is_said(capsys, blobs_npy):
    code, out, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(blobs_npy),
                         "--json", "--quiet")
    result = json.loads(out)
    assert code == 0 and result["n_clusters"] == 3 and result["n_clusters_from"] == "estimated"
    # ncut's estimator would be its graph's eigengap: it takes auto's k, and says so
    # (docs/choosing-k.rst, "Presets without k")
    assert "k = 3 (estimated: " in err and "of auto (" in err and "for preset 'ncut'" in err
    sel = result["k_selection"]
    assert sel["k"] == 3 and sel["candidates"][:3] == [1, 2, 3] and "rule" in sel
    assert sel["details"]["k_from"] == "auto" and sel["details"]["auto"].startswith("auto:")
    assert len(sel["scores"]) == len(sel["candidates"])
    code, out, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(blobs_npy),
                         "--quiet")
    assert code == 0 and "k = 3 (estimated: " in err
    assert (out + err).count("k = ") == 1  # said once: the note, not again in the report
    code, out, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(blobs_npy),
                         "--json", "--quiet", "--n-clusters", "3")
    result = json.loads(out)
    assert result["n_clusters_from"] == "--n-clusters" and "k = " not in err
    assert result["k_selection"]["method"] == "given"
    code, out, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(blobs_npy),
                         "--json", "--quiet", "--k-max", "2")
    assert code == 0 and json.loads(out)["n_clusters"] == 2
    code, out, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(blobs_npy),
                         "--n-clusters", "labels")
    assert code == 2 and "has no labels" in err
    code, out, err = run(capsys, "fill", "auto", "--dataset", str(blobs_npy))
    assert code == 0 and "k = estimated at fit" in out and "n_clusters" not in out


def test_presets_command_and_dataset_did_you_mean(capsys, monkeypatch):
    monkeypatch.delenv("GRAPHCLUST_DATA", raising=False)  # the names known without a folder
    code, out, _ = run(capsys, "presets")
    assert code == 0 and "ncut" in out and "auto (rule)" in out
    code, out, _ = run(capsys, "presets", "--json")
    data = json.loads(out)
    assert {p["name"] for p in data} >= {"ncut", "auto"} and all(p["summary"] for p in data)
    assert next(p for p in data if p["name"] == "auto")["rule"] is True
    code, _, err = run(capsys, "run", "--dataset", "digitz")
    assert code == 2 and "unknown dataset 'digitz'" in err and "did you mean 'digits'?" in err


def test_headerless_csv_with_a_byte_order_mark_and_npz_labels_with_nan(capsys, tmp_path):
    """Found by the sweep: a BOM made the first row a header (one row lost, silently); a
    NaN in an .npz's y became a class of its own."""
    X = np.arange(40.0).reshape(20, 2) % 7
    path = tmp_path / "bom.csv"
    path.write_text("".join(f"{a},{b}\n" for a, b in X), encoding="utf-8-sig")
    code, out, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(path), "--json",
                         "--quiet", "--n-clusters", "2")
    assert code == 0 and json.loads(out)["n_samples"] == 20, err
    y = np.arange(20) % 2.0
    y[4] = np.nan
    np.savez(tmp_path / "nany.npz", X=X, y=y)
    code, _, err = run(capsys, "run", "--dataset", str(tmp_path / "nany.npz"))
    assert code == 2 and "the labels 'y' have 1 missing values (of 20)" in err
    code, out, _ = run(capsys, "run", "--preset", "ncut", "--dataset",
                       str(tmp_path / "nany.npz"), "--no-labels", "--n-clusters", "2",
                       "--json", "--quiet")
    assert code == 0 and json.loads(out)["scores"] == {}


def test_noise_json_mean_confidence_and_a_confidence_beside_txt(tmp_path, capsys):
    """--noise labels the background -1 (n_noise in --json), --json holds the mean of
    confidence_, a .txt output gets its confidence as a second text file beside it."""
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(1000, centers=5, cluster_std=0.5, center_box=(-10, 10), random_state=0)
    B = np.random.default_rng(0).uniform(X.min(0) - 1, X.max(0) + 1, (250, 2))
    data = tmp_path / "d.npy"
    np.save(data, np.vstack([X, B]))
    out = tmp_path / "l.txt"
    code, text, err = run(capsys, "run", "--preset", "anchor-spectral", "--dataset", str(data),
                          "--n-clusters", "5", "--set", "anchors.n_anchors=200", "--quiet",
                          "--json", "--noise", "--output", str(out))
    assert code == 0, err
    result = json.loads(text)
    labels = np.loadtxt(out, dtype=np.int64)
    conf = np.loadtxt(tmp_path / "l.confidence.txt")
    assert result["n_noise"] == int((labels < 0).sum()) > 100
    assert labels[1000:].tolist().count(-1) > 0.6 * 250  # mostly the background
    assert result["mean_confidence"] == pytest.approx(conf.mean(), abs=1e-6)
    assert result["confidence_source"] == "rounding 'kmeans'"
    assert sum(result["cluster_sizes"]) == int((labels >= 0).sum())


def test_confidence_beside_output_is_checked_before_work(tmp_path, capsys):
    """The second array is an output like the others: never over an input, checked
    before any work (nothing written)."""
    from sklearn.datasets import load_digits

    data = tmp_path / "l.confidence.npy"
    np.save(data, load_digits().data[:200])
    code, _, err = run(capsys, "run", "--preset", "ncut", "--dataset", str(data), "--quiet",
                       "--output", str(tmp_path / "l.npy"))
    assert code == 2 and "would overwrite the input" in err
    assert not (tmp_path / "l.npy").exists()
