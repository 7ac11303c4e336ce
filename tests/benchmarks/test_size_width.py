"""benchmarks.size_width: the cells, the table, the slopes and the summary record of the
size and width measurement (issue 48, deliverable 7)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks import size_width, today


def _cell(method, n, d, seconds, axis="size", ari=1.0):
    return {"axis": axis, "status": "ok", "method": method, "n": n, "d": d,
            "fit_s": seconds, "cpu_s": seconds, "peak_above_data_mb": 1.0, "ari": ari,
            "rule": ""}


def test_clusters_shape_dtype_and_seeds():
    X, y = size_width.clusters(300, 40, seed=0)
    assert X.shape == (300, 40) and X.dtype == np.float32
    assert set(np.unique(y)) <= set(range(size_width.K))
    X2, _ = size_width.clusters(300, 40, seed=0)
    X3, _ = size_width.clusters(300, 40, seed=1)
    assert np.array_equal(X, X2) and not np.array_equal(X, X3)
    # fewer columns than the clusters' dimension: the projection keeps all of them
    assert size_width.clusters(50, 8)[0].shape == (50, 8)


def test_slopes_recover_power_laws_and_skip_failed_cells():
    cells = [_cell("a", n, 64, 2e-5 * n ** 1.5) for n in (1e4, 1e5, 1e6)]
    cells += [_cell("b", n, 64, 3e-4 * n) for n in (1e4, 1e5)]
    cells.append({"axis": "size", "status": "over cap (9 s)", "method": "b", "n": 1e6,
                  "d": 64})
    cells.append(_cell("c", 1e4, 64, 1.0))
    s = size_width.slopes(cells, "n")
    assert s["a"] == pytest.approx(1.5) and s["b"] == pytest.approx(1.0)
    assert math.isnan(s["c"])  # one finished size: no slope
    for c in cells:
        if c["status"] == "ok":
            c["cpu_s"] = c["fit_s"] * c["n"] ** 0.5
    cpu = size_width.slopes(cells, "n", "cpu_s")
    assert cpu["a"] == pytest.approx(2.0) and cpu["b"] == pytest.approx(1.5)


def test_table_rows_ratios_per_cell_and_missing_peers():
    cells = [_cell("auto", 10_000, 16, 6.0, "width"), _cell("evoc", 10_000, 16, 3.0, "width"),
             _cell("kmeans", 10_000, 16, 2.0, "width"),
             _cell("auto", 10_000, 128, 8.0, "width"),
             {"axis": "width", "status": "over cap (9 s)", "method": "evoc", "n": 10_000,
              "d": 128}]
    cells[0]["cpu_s"] = 4.5  # auto's CPU seconds below its wall seconds
    rows = size_width.table_rows(cells)
    assert rows[0] == ["10 000", "16", "6.0 s (4.5 CPU s), ARI 1.000",
                       "3.0 s (3.0 CPU s), ARI 1.000", "2.0 s (2.0 CPU s), ARI 1.000",
                       "2.00 (1.50)", "3.00 (2.25)"]
    assert rows[1][3] == "over cap (9 s)" and rows[1][4] == "—"
    assert rows[1][5:] == ["—", "—"]


def test_summary_record_is_one_today_accepts(tmp_path):
    cells = [_cell(m, n, 64, t * n / 1e4) for m, t in (("auto", 3.0), ("kmeans", 1.0))
             for n in (10_000, 100_000)]
    record = size_width.summary_record({"run": "`x` — now", "cells": cells})
    assert [t["caption"] for t in record["tables"]] == [
        "Fit time against n (size axis)", "Log-log slope of fit time against n"]
    assert record["tables"][1]["rows"] == [["auto", "1.00", "1.00"], ["kmeans", "1.00", "1.00"]]
    path = tmp_path / "size-width.json"
    import json

    path.write_text(json.dumps(record))
    (loaded,) = today.load_records(tmp_path)  # the page's own checks pass
    assert "Time against size and width" in today.summary_markdown([loaded])


def test_worker_times_a_real_fit():
    got = size_width.cell_worker("kmeans", 2_000, 16)
    assert got["method"] == "kmeans" and got["n"] == 2_000 and got["d"] == 16
    assert got["fit_s"] > 0 and 0.0 <= got["ari"] <= 1.0
