"""The million-node benchmark's planted partition (benchmarks/graph_scale.py), small."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.graph_scale import csr_bytes, planted_partition, table


@pytest.mark.parametrize("mixing", [0.0, 0.2])
def test_planted_partition_has_the_edges_blocks_and_mixing_asked(mixing):
    A, y, info = planted_partition(3000, 10, 15000, mixing, seed=1)
    assert A.shape == (3000, 3000) and (A != A.T).nnz == 0
    assert A.diagonal().max() == 0 and set(np.unique(A.data)) == {1.0}
    assert np.array_equal(np.bincount(y), np.full(10, 300))
    # repeats and self-pairs are dropped: a few of 15 000 pairs at these densities
    assert 14500 <= info["edges"] == A.nnz // 2 <= 15000
    rows = np.repeat(np.arange(3000), np.diff(A.indptr))
    between = np.mean(y[rows] != y[A.indices])
    assert between == pytest.approx(info["between_share"])
    assert between == pytest.approx(mixing, abs=0.02)
    total = A.data.nbytes + A.indices.nbytes + A.indptr.nbytes
    assert info["csr_bytes"] == csr_bytes(A) == total
    B, z, _ = planted_partition(3000, 10, 15000, mixing, seed=1)
    assert (A != B).nnz == 0 and np.array_equal(y, z)


def test_table_checks_every_target():
    info = {"n": 10, "blocks": 2, "edges": 20, "mean_degree": 4.0, "between_share": 0.1,
            "p_in": 0.5, "p_out": 0.1, "csr_bytes": 1000}
    base = {"partition_seconds": 1.0, "cpu_seconds": 1.0, "peak_above_bytes": 1500,
            "clusters": 2}
    leiden = dict(base, method="leiden-rb", seconds=2.0, nmi=1.0, memory_ratio=1.5)
    good = dict(base, method="auto", seconds=1.5, nmi=0.97, memory_ratio=1.5)
    assert table(info, [good, leiden])[1]
    assert not table(info, [dict(good, seconds=2.5), leiden])[1]  # slower than Leiden
    assert not table(info, [dict(good, nmi=0.9), leiden])[1]
    assert not table(info, [dict(good, memory_ratio=2.5), leiden])[1]


def test_table_compares_each_auto_row_with_the_leiden_rows_of_its_iterations():
    info = {"n": 10, "blocks": 2, "edges": 20, "mean_degree": 4.0, "between_share": 0.1,
            "p_in": 0.5, "p_out": 0.1, "csr_bytes": 1000}
    base = {"partition_seconds": 1.0, "cpu_seconds": 1.0, "peak_above_bytes": 1500,
            "clusters": 2, "nmi": 1.0, "memory_ratio": 1.5}
    rows = [dict(base, method="auto it=4", seconds=3.0),
            dict(base, method="leiden-rb it=4", seconds=4.0),
            dict(base, method="leiden-rb it=2", seconds=1.0)]  # faster, but not comparable
    text, ok = table(info, rows)
    assert ok and "auto it=4 / leiden-rb it=4 time: 0.75" in text
    assert "/ leiden-rb it=2" not in text and "| leiden-rb it=2 |" in text
    assert not table(info, rows[:2] + [dict(rows[2], method="leiden-rb it=4")])[1]
