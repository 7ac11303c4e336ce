"""benchmarks.sample_layouts: the layouts of rule 7's sample, scored per start."""

from __future__ import annotations

import pytest

from benchmarks import sample_layouts


@pytest.mark.slow  # numba compiles the layout; two 60-epoch layouts
def test_rows_per_start_and_the_summary_counts_good_layouts(capsys):
    rows = sample_layouts.run("digits", 1000, (0,), (5,), 2, 10)
    assert [(r["seed"], r["negatives"], r["start"]) for r in rows] == [(0, 5, 0), (0, 5, 1)]
    assert all(0.0 < r["acc"] <= 1.0 and -0.5 <= r["modularity"] <= 1.0 for r in rows)
    assert rows[0]["acc"] != rows[1]["acc"] or rows[0]["modularity"] != rows[1]["modularity"]
    # the same seed stream gives the same layout
    again = sample_layouts.run("digits", 1000, (0,), (5,), 1, 10)
    assert (again[0]["acc"], again[0]["modularity"]) == (rows[0]["acc"], rows[0]["modularity"])
    capsys.readouterr()
    sample_layouts.summary(rows, good=min(r["acc"] for r in rows))
    line = [x for x in capsys.readouterr().out.splitlines() if x.startswith("| 5 |")]
    assert line and "| 2/2 |" in line[0]
