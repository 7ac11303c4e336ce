"""The benchmark harness: quick run end to end on synthetic data, caps, crashes, tables,
slopes, search ranking, data-set builders."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from benchmarks import runner, runner_cli, runner_report, scaling, suites


def _first_preset(*names):
    import graphclust

    reg = graphclust.get_registry().presets
    return next((n for n in names if n in reg), None)


# ---------------------------------------------------------------------------------------
# End to end
# ---------------------------------------------------------------------------------------
def test_quick_run_on_synthetic_data_writes_results_and_report(tmp_path):
    preset = _first_preset("ncut", "ongr-r", "ulge", "ncer", "dcd")
    out = tmp_path / "out"
    argv = ["run", "--quick", "--datasets", "blobs@160", "--out", str(out),
            "--peers", "sk-kmeans,sk-minibatch", "--isolate", "none"]
    argv += ["--presets", preset] if preset else ["--no-peers", "--presets", "none"]
    if preset is None:
        pytest.skip("no preset registered yet")
    rc = runner_cli.main(argv)
    res = json.loads((out / "results-quick.json").read_text())
    recs = res["records"]
    assert {r["method"] for r in recs} == {preset, "sk-kmeans", "sk-minibatch"}
    errors = [r for r in recs if r["status"] == "error"]
    assert rc == (1 if errors else 0)
    for r in recs:
        if r["status"] != "ok":
            continue
        assert r["n"] == 160 and r["k"] == 4
        for m in runner.METRICS:
            assert -1.0 <= r[m] <= 1.0
        assert r["time_fit"] > 0 and r["peak_rss_mb"] >= r["base_rss_mb"] * 0.5
        assert r["fit_extra_mb"] >= 0
    km = next(r for r in recs if r["method"] == "sk-kmeans")
    # four well-separated blobs: k-means recovers them
    assert km["status"] == "ok" and km["acc"] > 0.95
    import csv

    with open(out / "results-quick.csv", newline="") as fh:
        assert len(list(csv.DictReader(fh))) == len(recs)
    md = (out / "results-quick.md").read_text()
    assert "blobs@160" in md and "`sk-kmeans`" in md
    assert res["meta"]["figures"] and all((out / f).is_file()
                                          for f in res["meta"]["figures"].values())
    target = tmp_path / "RESULTS.md"
    runner_cli.main(["report", "--out", str(out), "--results", str(target)])
    text = target.read_text()
    assert "python -m benchmarks run --quick" in text
    assert "python -m benchmarks report" in text
    assert f"{res['meta']['machine']['cores']} cores" in text
    assert (tmp_path / "figures").is_dir()


def test_time_cap_kills_the_job_and_skips_its_other_seeds():
    jobs = [runner.Job("sk-spectral", "blobs@300", s, kind="peer", time_cap=0.001)
            for s in range(2)]
    recs = runner.execute(jobs, log=lambda m: None)
    assert [r["status"] for r in recs] == ["over cap", "over cap"]
    assert "not run" in recs[1]["error"]


def test_a_crash_is_an_error_and_the_other_jobs_still_run():
    jobs = [runner.Job("no-such-preset", "blobs@100", 0),
            runner.Job("sk-kmeans", "blobs@100", 0, kind="peer")]
    seen = []
    recs = runner.execute(jobs, isolate="none", log=lambda m: None, on_record=seen.append)
    assert recs[0]["status"] == "error" and "no-such-preset" in recs[0]["error"]
    assert recs[1]["status"] == "ok"
    assert [r["method"] for r in seen] == ["no-such-preset", "sk-kmeans"]


# ---------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------
def test_number_formatting():
    assert runner_report.fmt_pct(0.80594) == "80.6"
    assert runner_report.fmt_pct(None) == "—"
    assert runner_report.fmt_mean_std(0.5, 0.0123) == "50.0 ± 1.2"
    assert runner_report.fmt_mean_std(0.5, 0.0) == "50.0"
    assert runner_report.fmt_mean_std(float("nan"), 0.1) == "—"
    assert runner_report.fmt_diff(0.78, 0.8059) == "−2.6"
    assert runner_report.fmt_diff(0.81, 0.80) == "+1.0"
    assert runner_report.fmt_diff(None, 0.8) == "—"


def _row(method, kind="preset", **kw):
    row = {"method": method, "kind": kind, "dataset": "usps", "params": {}, "n": 9298, "d": 256,
           "k": 10, "runs": 3, "ok": 3, "status": "ok", "error": "", "recipe": "raw",
           "family": "usps", "paper": suites.paper_number(method, "usps")}
    for m in runner.METRICS:
        row[m], row[f"{m}_std"] = 0.5, 0.01
    row.update(kw)
    return row


def test_dataset_table_ratios_and_paper_column():
    rows = [_row("ongr-k", acc=0.79, time_fit=2.0),
            _row("sk-kmeans", "peer", time_fit=4.0),
            _row("sk-spectral", "peer", status="over cap", ok=0, time_fit=None)]
    md = runner_report.dataset_table(rows, "usps")
    line = next(l for l in md.splitlines() if l.startswith("| `ongr-k`"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1] == "79.0 ± 1.0"
    assert cells[6] == "0.50×"  # 2 s against KMeans' 4 s
    assert cells[7] == "SC over cap"
    assert "ACC 80.6 (−1.6)" in cells[-1] and "NMI 82.8" in cells[-1]
    sc = next(l for l in md.splitlines() if l.startswith("| `sk-spectral`"))
    assert "over cap" in sc
    assert "(n = 9298, d = 256, k = 10)" in md


def test_paper_table_lists_every_reported_metric():
    md = runner_report.paper_table([_row("ongr-k", acc=0.70, nmi=0.80)])
    lines = [l for l in md.splitlines() if l.startswith("| `ongr-k`")]
    assert len(lines) == 2  # ACC and NMI reported by the paper, no purity
    assert "| ACC | 80.6 | 70.0 ± 1.0 | −10.6 |" in lines[0]


# ---------------------------------------------------------------------------------------
# Slopes
# ---------------------------------------------------------------------------------------
def test_loglog_slope_recovers_the_exponent():
    n = np.array([7e4, 1.4e5, 2.8e5, 6.3e5])
    assert scaling.fit_loglog_slope(n, 3e-4 * n) == pytest.approx(1.0)
    assert scaling.fit_loglog_slope(n, 1e-9 * n**2) == pytest.approx(2.0)
    rng = np.random.default_rng(0)
    noisy = 1e-5 * n**1.3 * np.exp(rng.normal(scale=0.02, size=n.size))
    assert scaling.fit_loglog_slope(n, noisy) == pytest.approx(1.3, abs=0.1)
    assert math.isnan(scaling.fit_loglog_slope([1e5], [3.0]))
    assert scaling.fit_loglog_slope([1e5, 2e5, 4e5], [1.0, None, 16.0]) == pytest.approx(2.0)


def test_slopes_per_method_and_family():
    rows = []
    for n in (1000, 2000, 4000):
        rows.append({"method": "a", "family": "synthetic", "n": n, "status": "ok",
                     "time_fit": n / 100, "time_graph": (n / 1000) ** 2, "fit_extra_mb": n})
    rows.append({"method": "a", "family": "synthetic", "n": 8000, "status": "over cap"})
    (s,) = scaling.slopes(rows)
    assert s["sizes"] == [1000, 2000, 4000]
    assert s["slope_time_fit"] == pytest.approx(1.0)
    assert s["slope_time_graph"] == pytest.approx(2.0)
    assert s["slope_memory"] == pytest.approx(1.0)
    md = runner_report.scaling_table(rows, [s])
    assert "1.00" in md and "2.00" in md and "over cap" in md


# ---------------------------------------------------------------------------------------
# Search
# ---------------------------------------------------------------------------------------
def test_search_picks_the_best_grid_setting_not_the_default():
    rows = [_row("ongr-k", params={}, acc=0.95),
            _row("ongr-k", params={"solver__lam": 0.01}, acc=0.7),
            _row("ongr-k", params={"solver__lam": 1.0}, acc=0.8),
            _row("ongr-k", params={"solver__lam": 100.0}, acc=None, status="over cap")]
    best = runner_cli.pick_best(rows, "acc")
    assert best["params"] == {"solver__lam": 1.0}
    assert runner_cli.pick_best(rows, "nmi")["params"] in ({"solver__lam": 0.01},
                                                            {"solver__lam": 1.0})
    search = {"preset": "ongr-k", "dataset": "usps", "grid": {"solver__lam": [0.01, 1, 100]},
              "metric": "acc", "seeds": 1, "rows": rows, "default": rows[0], "best": best}
    md = runner_report.search_table(search)
    assert "solver__lam=1.0 **best**" in md
    assert md.index("default") < md.index("solver__lam=1.0 **best**")  # ranked by ACC


def test_search_suite_builds_default_plus_grid_jobs():
    jobs = runner_cli.build_jobs("search", preset="ongr-k", dataset="usps", seeds=2,
                                 grid={"anchors__n_anchors": [100, 200], "solver__lam": [1.0]},
                                 time_cap=10, spectral_cap=10)
    assert len(jobs) == 6
    assert [j.params for j in jobs[::2]] == [{}, {"anchors__n_anchors": 100, "solver__lam": 1.0},
                                             {"anchors__n_anchors": 200, "solver__lam": 1.0}]


@pytest.mark.slow
def test_search_runs_and_records_the_best(tmp_path):
    preset = _first_preset("ongr-r", "ncut", "ncer")
    if preset is None:
        pytest.skip("no preset registered yet")
    key = {"ongr-r": "graph__n_neighbors", "ncut": "graph__n_neighbors",
           "ncer": "graph__n_neighbors"}[preset]
    rc = runner_cli.main(["run", "--suite", "search", "--preset", preset, "--dataset",
                          "blobs@120", "--grid", json.dumps({key: [3, 6]}), "--out",
                          str(tmp_path), "--time-cap", "60", "--isolate", "none"])
    res = json.loads((tmp_path / f"results-search-{preset}-blobs@120.json").read_text())
    rows = res["search"]["rows"]
    assert len(rows) == 3
    if rc == 0:
        best = res["search"]["best"]
        assert best["acc"] == max(r["acc"] for r in rows if r["params"])


# ---------------------------------------------------------------------------------------
# Data sets and preprocessing
# ---------------------------------------------------------------------------------------
def test_synthetic_blobs_deterministic_prefix():
    X1, y1 = scaling.synthetic_blobs(2500, chunk=1000)
    X2, y2 = scaling.synthetic_blobs(4000, chunk=1000)
    np.testing.assert_array_equal(X1, X2[:2500])
    np.testing.assert_array_equal(y1, y2[:2500])
    assert X1.dtype == np.float32 and set(np.unique(y2)) == set(range(10))


def test_subset_is_deterministic_and_labels_consecutive():
    X1, y1 = suites.load("blobs@300")
    X2, y2 = suites.load("blobs@300")
    np.testing.assert_array_equal(X1, X2)
    assert set(np.unique(y1)) == {0, 1, 2, 3}


def test_preprocessing_recipes():
    names = lambda m, d: [n for n, _ in suites.make_preprocessing(m, d)]  # noqa: E731
    assert names("ongr-k", "usps") == ["minmax", "pca"]
    assert names("ongr-k", "usps@600") == ["minmax", "pca"]
    assert names("ongr-k", "pendigits") == []  # ONGR Sec. 4.1 scales the image sets only
    assert suites.make_preprocessing("ongr-r", "mnist-extend@70000")[1][1].n_components == 0.90
    assert suites.make_preprocessing("ongr-r", "usps")[1][1].n_components == 0.95
    assert names("dlc", "mnist") == ["normalize"]
    assert names("ncer", "usps") == ["usps_0_2"] and names("ncer", "coil20") == []
    X = np.array([[0.25, 1.0]])
    np.testing.assert_allclose(suites.make_preprocessing("ncer", "usps")[0][1].fit_transform(X),
                               2 * X)
    assert names("ulge", "usps") == [] and names("peer", "usps") == []
    pipe = suites.make_pipeline_for("dlc", "mnist", "EST")
    assert pipe.steps[-1] == ("cluster", "EST")


@pytest.mark.data
def test_mnist_extend_builder_and_mnist456(data_dir):
    X, y = suites.load("mnist-extend@75000", data_dir)
    assert X.shape == (75000, 784) and y.shape == (75000,)
    np.testing.assert_array_equal(y[70000:], y[:5000])
    # row 70000 is image 0 shifted down by one pixel (the first of the 8 shifts)
    img0, sh = X[0].reshape(28, 28), X[70000].reshape(28, 28)
    np.testing.assert_array_equal(sh[1:], img0[:27])
    assert not sh[0].any()
    X456, y456 = suites.load("mnist_test456", data_dir)
    assert X456.shape[0] == 2832 and set(np.unique(y456)) == {0, 1, 2}


@pytest.mark.data
def test_loader_keeps_exact_float32_for_pixels(data_dir):
    """uint8 pixels and float32 files load as float32 (what graphclust computes them
    in), wider types as float64; presets and peers get the same array."""
    X, _ = suites.load("mnist_test456", data_dir)
    assert X.dtype == np.float32 and X.max() == 255.0
    assert suites.load("usps@300", data_dir)[0].dtype == np.float32
    assert suites.load("blobs@300")[0].dtype == np.float64


def _big_result(n, queue):
    import numpy as np

    queue.put(np.arange(n))  # far larger than a pipe buffer


def _sleeper(queue):
    import time

    time.sleep(30)


def _crash(queue):
    raise SystemExit(3)


def test_run_capped_returns_large_results_and_stops_at_the_cap():
    """A finished child with a result larger than the pipe buffer is not reported as
    over the cap (joining before reading would deadlock); a slow one is stopped."""
    import time

    from benchmarks._capped import OverCap, run_capped

    out = run_capped(_big_result, (200_000,), cap=60)
    assert out.shape == (200_000,) and out[-1] == 199_999
    t = time.perf_counter()
    over = run_capped(_sleeper, (), cap=1.0)
    assert isinstance(over, OverCap) and time.perf_counter() - t < 15
    with pytest.raises(RuntimeError, match="exited with code 3"):
        run_capped(_crash, (), cap=30)
