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
    assert kinds == {"anchors", "graph", "solver", "rounding", "metric"}
    assert all(p["bundle"] and p["summary"] for p in data["parts"])
    assert any(p["name"] == "ncut" for p in data["presets"])
    code, out, _ = run(capsys, "plugins")
    assert "parts:" in out and "presets:" in out


def test_describe_and_validate_and_fill(capsys, tmp_path):
    code, out, _ = run(capsys, "describe", "kmeans", "--kind", "rounding")
    assert code == 0 and "n_init" in out
    code, out, _ = run(capsys, "describe", "ncut")
    assert code == 0 and "preset ncut" in out
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
