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
                         "--output", str(out_file))
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


def test_run_errors_exit_2_and_write_nothing(capsys, tmp_path):
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


@pytest.mark.parametrize("preset", PRESETS)
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
                         "--quiet", "--json", "--output", str(labels))
    assert code == 0, err
    result = json.loads(out)
    assert result["n_samples"] == 200 and result["n_clusters"] == 10
    got = np.loadtxt(labels, dtype=np.int64)
    assert got.shape == (200,) and sum(result["cluster_sizes"]) == 200
    # the filled spec runs exactly like the preset it came from
    code, out, err = run(capsys, "run", "--preset", preset, "--dataset", digits200, "--quiet",
                         "--output", str(tmp_path / "preset.npy"))
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
    assert text.count("\n") == 200 and set(text) <= set("0123456789\n")
    assert (tmp_path / "l.npy").read_bytes().startswith(b"\x93NUMPY")
    np.testing.assert_array_equal(np.load(tmp_path / "l.npy"), np.loadtxt(tmp_path / "l.csv"))
    assert (tmp_path / "l.csv").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "l.npy").stat().st_mode & 0o777 == 0o644
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
                         "--set", "rounding.n_init=3")
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
    for _ in range(3):
        proc = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"],
                              capture_output=True, text=True, timeout=120)
        assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr
        assert proc.returncode in (0, 141)
