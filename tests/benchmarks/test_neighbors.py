"""benchmarks.neighbors: graphclust's NN-descent and pynndescent scored side by side."""

from __future__ import annotations

import pytest

from benchmarks import neighbors


@pytest.mark.slow  # numba compiles both searches
def test_rows_scores_and_summary(capsys):
    rows = neighbors.run("digits", 10, (4,), 1, 300)
    names = {(r["search"], r["threads"]) for r in rows}
    assert ("pynndescent", 1) in names and any(n.startswith("graphclust") for n, _ in names)
    for r in rows:
        assert 0.9 <= r["recall"] <= 1.0, r  # 1 797 rows: both searches are near exact
        assert 0.0 < r["labels"] <= 1.0 and r["seconds"] > 0
    ours = [r for r in rows if r["search"].startswith("graphclust")]
    assert all(r.get("same_as_one_thread", True) for r in ours)
    capsys.readouterr()
    neighbors.summary(rows)
    table = capsys.readouterr().out
    assert "| pynndescent | 1 |" in table and "| 1.00 |" in table
