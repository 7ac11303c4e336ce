"""Battery statistics: ranks of methods over data sets and wins / losses against peers.

Used by the report for a suite with ``battery=True`` (the ``general`` battery). On each
data set the methods with a row are ranked by a score (ARI by default), 1 the best; tied
scores share the mean of the ranks they span (fractional ranking, as in Demšar, JMLR
2006); a failed cell (over cap, error: no score) ranks below every scored one, tied with
the other failures. A method's mean rank is over the data sets it has a row on.
Wins / losses of a method against a peer count the data sets both have a row on where
its score is higher / lower (a failure scoring below any number, two failures a tie).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["average_ranks", "battery_rows", "finite", "wins_losses"]


def finite(x: Any) -> bool:
    """Whether ``x`` is a finite number (a score; not None, NaN, a bool or a string)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _num(x: Any) -> float:
    """A score, or -inf for a failure (None, NaN, not a number)."""
    return float(x) if finite(x) else -math.inf


def average_ranks(scores: Sequence[Any]) -> np.ndarray:
    """Ranks of ``scores`` (higher is better, rank 1 the best), ties sharing the mean of
    the ranks they span (scipy's ``rankdata``); failures (None, NaN) last. Empty input
    gives an empty array."""
    from scipy.stats import rankdata

    return rankdata([-_num(x) for x in scores], method="average").astype(float)


def wins_losses(ours: Sequence[Any], theirs: Sequence[Any]) -> tuple[int, int, int]:
    """``(wins, losses, ties)`` of paired scores, failures below any number."""
    a = np.array([_num(x) for x in ours], dtype=float)
    b = np.array([_num(x) for x in theirs], dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired scores of different lengths: {a.size} and {b.size}")
    return int(np.sum(a > b)), int(np.sum(a < b)), int(np.sum(a == b))


def battery_rows(rows: list[dict], peers: Sequence[str], metric: str = "ari") -> list[dict]:
    """Per method (rows of :func:`benchmarks.report.aggregate`, one per method and data
    set): data sets run / scored, mean and median ``metric``, mean AMI and ACC over its
    scored data sets, mean rank by ``metric``, and ``{peer: (wins, losses, ties)}``;
    sorted by mean rank."""
    by_ds: dict[str, dict[str, dict]] = {}
    for r in rows:
        by_ds.setdefault(r["dataset"], {})[r["method"]] = r
    ranks: dict[str, list[float]] = {}
    for table in by_ds.values():
        names = list(table)
        for name, rank in zip(names, average_ranks([table[m].get(metric) for m in names])):
            ranks.setdefault(name, []).append(float(rank))
    out = []
    for name, rs in ranks.items():
        mine = {ds: t[name] for ds, t in by_ds.items() if name in t}
        stats = {m: [v for v in (_num(r.get(m)) for r in mine.values()) if v > -math.inf]
                 for m in (metric, "ami", "acc")}
        row: dict[str, Any] = {
            "method": name, "kind": next(iter(mine.values())).get("kind", "preset"),
            "datasets": len(mine), "scored": len(stats[metric]), "mean_rank": float(np.mean(rs)),
            **{f"mean_{m}": float(np.mean(v)) if v else None for m, v in stats.items()},
            f"median_{metric}": float(np.median(stats[metric])) if stats[metric] else None,
            "versus": {}}
        for p in peers:
            if p == name:
                continue
            common = [ds for ds in mine if p in by_ds[ds]]
            row["versus"][p] = wins_losses([mine[d].get(metric) for d in common],
                                           [by_ds[d][p].get(metric) for d in common])
        out.append(row)
    return sorted(out, key=lambda r: (r["mean_rank"], r["method"]))
