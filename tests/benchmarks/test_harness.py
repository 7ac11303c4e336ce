"""The benchmark harness: suite definitions, cell expansion, runner caps, report."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks import cli, datasets, generated_sets, report, runner
from benchmarks.peers import PEERS
from benchmarks.suite import (
    Cell,
    Suite,
    cells,
    limit,
    load_suites,
    median_of,
    peer,
    preset,
    ratio,
    score,
    slope,
)

SUITES = load_suites()
_SYNTHETIC = {"mnist-extend", "synthetic", "blobs", "digits", "iris", "wine", "breast_cancer",
              "usps_smooth", "mnist_test456", *datasets.GENERATED, *datasets.SHAPES}


def _data_dir() -> Path | None:
    d = os.environ.get("GRAPHCLUST_DATA")
    return Path(d) if d and Path(d).is_dir() else None


# --------------------------------------------------------------------------------------
# Suite definitions
# --------------------------------------------------------------------------------------
def test_every_paper_protocol_has_a_suite():
    assert {"ongr", "ulge", "ncer", "dcd", "dlc", "ncut", "scaling", "smoke"} <= set(SUITES)


@pytest.mark.parametrize("name", sorted(SUITES))
def test_suite_names_existing_presets_peers_recipes_and_datasets(name):
    import graphclust

    suite = SUITES[name]
    presets = set(graphclust.get_registry().preset_names())  # rule presets (auto) too
    data = _data_dir()
    pairs = set()
    for m in suite.methods:
        if m.kind == "spec":
            assert graphclust.validate_spec(dict(m.spec)) == [], m
        else:
            assert (m.preset in presets) if m.kind == "preset" else (m.peer in PEERS), m
        assert m.prep in datasets.RECIPES and m.select in ("all", "best")
        for ds in (m.datasets if m.datasets is not None else suite.datasets):
            fam = datasets.family(ds)
            if fam not in _SYNTHETIC and not generated_sets.is_generated(fam) and data is not None:
                assert list(data.glob(f"{fam}.*")), ds
            pairs.add((m.name, ds))
    for t in suite.targets:
        if t.kind == "slope":
            assert any(n == t.method and datasets.family(d) == t.dataset for n, d in pairs), t
        else:
            assert (t.method, t.dataset) in pairs, t
        if t.kind == "ratio":
            assert (t.versus, t.dataset) in pairs, t
        if t.kind == "median":
            assert t.group and all((g, t.dataset) in pairs for g in t.group), t
    assert len(cells(suite)) > 0


def test_cells_expand_the_grid_and_the_quick_version_is_small():
    suite = Suite("t", datasets=("usps", "pendigits"), seeds=3, methods=(
        preset("ongr-r", grid={"solver__lam": [1, 2, 3], "graph__n_neighbors": [2, 5]},
               select="best"),
        peer("sk-kmeans", datasets=("usps",), seeds=1)))
    cs = cells(suite)
    assert len(cs) == 2 * 6 * 3 + 1
    assert {c.params["solver__lam"] for c in cs if c.kind == "preset"} == {1, 2, 3}
    q = cells(suite.quick())
    assert len(q) == 2 * 4 * 1 + 1
    assert {c.dataset for c in q} == {"usps@600", "pendigits@600"}
    assert all(c.params.get("anchors__n_anchors") == 64 for c in q if c.kind == "preset")
    assert all(c.time_cap <= 60 for c in q)


# --------------------------------------------------------------------------------------
# Data sets
# --------------------------------------------------------------------------------------
@settings(max_examples=20, deadline=None)
@given(st.integers(1, 250_000), st.integers(1, 250_000))
def test_synthetic_sets_are_prefixes_of_larger_ones(a, b):
    small, large = sorted((a, b))
    Xs, ys = datasets.synthetic_blobs(small)
    Xl, yl = datasets.synthetic_blobs(large)
    np.testing.assert_array_equal(Xs, Xl[:small])
    np.testing.assert_array_equal(ys, yl[:small])


def test_subsets_are_fixed_and_labels_consecutive():
    X1, y1 = datasets.load("digits@300")
    X2, _ = datasets.load("digits@300")
    np.testing.assert_array_equal(X1, X2)
    assert X1.shape == (300, 64) and set(np.unique(y1)) == set(range(10))
    assert datasets.quick_name("mnist-extend@630000") == "mnist-extend@6000"


def test_recipes():
    assert [s for s, _ in datasets.preprocessing("minmax-pca", "usps@600")] == ["minmax", "pca"]
    assert datasets.preprocessing("minmax-pca", "pendigits") == []
    X = np.ones((3, 4))
    (_, step), = datasets.preprocessing("raw-pixels", "usps")
    np.testing.assert_array_equal(step.fit_transform(X), 2 * X)
    with pytest.raises(ValueError, match="unknown preprocessing recipe 'nope'"):
        datasets.preprocessing("nope", "usps")


# --------------------------------------------------------------------------------------
# Runner
# --------------------------------------------------------------------------------------
def _cell(method="sk-kmeans", kind="peer", seed=0, ds="blobs@200", cap=60.0, mem=None):
    return Cell(method, ds, seed, kind, method, {}, "raw", cap, mem)


def test_inline_cell_measures_and_scores():
    rec = runner.run_cell_inline(_cell())
    assert rec["status"] == "ok" and rec["n"] == 200 and rec["k"] == 4
    assert rec["acc"] > 0.95 and rec["purity"] >= rec["acc"]  # four separated blobs
    assert rec["time_fit"] > 0 and rec["peak_rss_mb"] > 0 and rec["fit_extra_mb"] >= 0


def test_time_cap_kills_the_cell_and_skips_its_other_seeds():
    cs = [_cell("sk-spectral", seed=s, ds="blobs@3000", cap=0.001) for s in range(2)]
    recs = runner.execute(cs, log=lambda m: None)
    assert [r["status"] for r in recs] == ["over cap", "over cap"]
    assert "time cap" in recs[0]["error"] and "not run" in recs[1]["error"]


def test_memory_cap_kills_the_cell():
    recs = runner.execute([_cell(mem=1.0)], log=lambda m: None)
    assert recs[0]["status"] == "over cap" and "memory cap" in recs[0]["error"]


def test_a_crash_is_an_error_and_the_other_cells_still_run():
    cs = [_cell("no-such-preset", kind="preset"), _cell()]
    seen: list = []
    recs = runner.execute(cs, isolate="none", log=lambda m: None, on_record=seen.append)
    assert recs[0]["status"] == "error" and "no-such-preset" in recs[0]["error"]
    assert recs[1]["status"] == "ok" and len(seen) == 2


@pytest.mark.slow  # 2 s; CI's smoke run goes through the same command line
def test_cli_quick_run_and_report(tmp_path):
    out = tmp_path / "out"
    rc = cli.main(["run", "--quick", "--datasets", "digits", "--methods", "ncut,sk-kmeans",
                   "--out", str(out)])
    data = json.loads((out / "results-smoke.json").read_text())
    assert rc == 0 and {r["method"] for r in data["records"]} == {"ncut", "sk-kmeans"}
    assert {r["dataset"] for r in data["records"]} == {"digits@600"}
    md = tmp_path / "RESULTS.md"
    cli.main(["report", "--out", str(out), "--results", str(md)])
    text = md.read_text()
    assert "python -m benchmarks run --quick" in text and "`ncut`" in text


# --------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------
def _rec(method, dataset, seed=0, status="ok", params=None, **values):
    base = {"method": method, "dataset": dataset, "seed": seed, "kind": "preset",
            "params": params or {}, "prep": "raw", "time_cap": 100.0, "status": status,
            "n": 1000, "d": 10, "k": 10}
    return {**base, **values}


def test_aggregate_means_and_best_of_grid():
    recs = [_rec("a", "x", s, acc=v, nmi=0.5, time_fit=1.0) for s, v in enumerate((0.6, 0.8))]
    recs += [_rec("g", "x", 0, params={"p": p}, acc=a, nmi=n)
             for p, a, n in ((1, 0.7, 0.1), (2, 0.9, 0.2), (3, 0.9, 0.3))]
    suite = Suite("t", datasets=("x",), methods=(preset("ncut", label="a"),
                                                 preset("ncut", label="g", select="best")))
    rows = {r["method"]: r for r in report.aggregate(recs, suite)}
    assert rows["a"]["acc"] == pytest.approx(0.7) and rows["a"]["acc_std"] == pytest.approx(0.1)
    assert rows["g"]["params"] == {"p": 3} and rows["g"]["settings_tried"] == 3


def test_targets_are_evaluated():
    rows = report.aggregate([
        _rec("m", "x", acc=0.78, nmi=0.70, time_fit=2.0, purity=0.86),
        _rec("peer", "x", acc=0.7, time_fit=30.0, purity=0.85),
        _rec("slow", "x", status="over cap"),
        *[_rec("m", f"f@{n}", time_fit=n / 1000, n=n) for n in (1000, 2000, 4000)],
    ])
    ev = report.evaluate
    assert ev(score("s", "m", "x", acc=80.0, nmi=70.0), rows)["status"] == "met"
    miss = ev(score("s", "m", "x", acc=82.0), rows)
    assert miss["status"] == "missed (−4.0)" and miss["ours"] == "78.00"
    assert ev(ratio("r", "m", "x", versus="peer", goal=10), rows)["ours"] == "15.00×"
    pur = ev(ratio("r", "peer", "x", versus="m", goal=1, stat="purity"), rows)
    assert pur["status"] == "met" and pur["ours"] == "0.860 vs 0.850"
    bound = ev(ratio("r", "m", "x", versus="slow", goal=10), rows)
    assert bound["status"] == "met" and bound["ours"].startswith("≥ 50.0×")
    assert ev(limit("l", "m", "x", "time_fit", 1.0), rows)["status"] == "missed"
    s = ev(slope("sl", "m", "f", 1.1), rows)
    assert s["status"] == "met" and "slope 1.00" in s["ours"]
    assert ev(score("s", "nobody", "x", acc=1.0), rows)["status"] == "not run"


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6), st.floats(0.0, 1.0))
def test_median_target_compares_with_the_median_of_the_group(members, ours):
    recs = [_rec(f"m{i}", "x", acc=a) for i, a in enumerate(members)]
    rows = report.aggregate([*recs, _rec("c", "x", acc=ours)])
    group = tuple(f"m{i}" for i in range(len(members)))
    ev = report.evaluate(median_of("t", "c", "x", versus=group), rows)
    ordered, mid = sorted(members), len(members) // 2  # brute-force median
    med = ordered[mid] if len(members) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    if ours >= med:
        assert ev["status"] == "met"
    else:
        assert ev["status"].startswith("missed (−")
    assert ev["target"] == f"≥ median of {len(members)}"


def test_median_target_is_open_while_a_member_has_no_result():
    rows = report.aggregate([_rec("c", "x", acc=0.9), _rec("a", "x", acc=0.5),
                             _rec("b", "x", status="over cap")])
    ev = report.evaluate(median_of("t", "c", "x", versus=("a", "b")), rows)
    assert ev["status"] == "open (no acc of b)" and ev["ours"] == "not run"
    ev = report.evaluate(median_of("t", "c", "x", versus=("a", "nobody")), rows)
    assert ev["status"] == "open (no acc of nobody)"
    ev = report.evaluate(median_of("t", "gone", "x", versus=("a",)), rows)
    assert ev["status"] == "not run"
    ev = report.evaluate(median_of("t", "c", "x", versus=("a",)), rows)
    assert ev == {"label": "t", "target": "≥ median of 1", "ours": "90.00 vs median 50.00",
                  "status": "met"}
    ev = report.evaluate(median_of("t", "a", "x", versus=("c",)), rows)
    assert ev["status"] == "missed (−40.0)"


@settings(max_examples=25, deadline=None)
@given(st.floats(0.2, 3.0), st.floats(1e-3, 1e3))
def test_loglog_slope_recovers_a_power_law(power, scale):
    ns = [1e3, 1e4, 1e5, 1e6]
    assert report.loglog_slope(ns, [scale * n ** power for n in ns]) == pytest.approx(power)
    assert math.isnan(report.loglog_slope([5, 5], [1, 2]))


def test_report_from_a_fake_result_set(tmp_path):
    recs = [_rec("dcd", ds, purity=p, acc=0.7, nmi=0.7, time_fit=t)
            for ds, p, t in (("usps", 0.861, 20.0), ("mnist", 0.793, 157.0))]
    recs += [_rec("ncut-binary", ds, purity=p, acc=0.7, nmi=0.7, time_fit=5.0)
             for ds, p in (("usps", 0.849), ("mnist", 0.758))]
    recs.append(_rec("bkhk-dcd", "mnist", purity=0.779, acc=0.7, nmi=0.7, time_fit=10.0))
    meta = {"suite": "dcd", "command": "python -m benchmarks run --suite dcd",
            "started": "2026-01-01 00:00 UTC", "duration_s": 1.0, "seeds": 1,
            "time_cap": 600.0, "machine": {"cores": 2}}
    (tmp_path / "results-dcd.json").write_text(json.dumps({"meta": meta, "records": recs}))
    md, rst = report.write_report(tmp_path, tmp_path / "RESULTS.md", "python -m benchmarks report")
    text = md.read_text()
    assert "python -m benchmarks run --suite dcd" in text and "**usps**" in text
    assert "| bkhk-dcd vs dcd, MNIST | ≥ 10× | 15.70× | met |" in text
    tables = rst.read_text()
    assert "purity, same binary 10-NN graph, pendigits: DCD ≥ Ncut" in tables
    assert "not run" in tables and tables.count("=====") >= 3
    # the suite's summary record: what benchmarks/RESULTS.md is generated from
    from benchmarks import today

    (record,) = today.load_records(tmp_path, "today-*.json")
    assert record["suite"] == "dcd" and record["history"] == f"{record['title']} (`dcd`)"
    assert record["runs"][0].startswith("`python -m benchmarks run --suite dcd` — 2026-01-01")
    page = today.summary_markdown([record])
    assert "| bkhk-dcd vs dcd, MNIST | ≥ 10× | 15.70× | met |" in page
    assert f"- {record['runs'][0]}" in text  # the same run line as the full report
