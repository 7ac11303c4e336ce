"""Time against size and width (issue 48, deliverable 7): ``auto`` beside EVoC and
``KMeans(k, n_init=1)`` on generated data, n from 10 000 to 1 000 000 and d from 16 to
10 000, with the log-log slopes of fit time against n and against d.

The data (:func:`clusters`): ``k = 10`` Gaussian clusters in ``INNER`` = 16 dimensions
(centres N(0, 4²), unit spread) through a fixed random projection to ``d`` columns plus
unit noise, float32 — the generator of :mod:`benchmarks.wide` (``gaussian_wide``),
well separated on purpose: the table is about cost, and the ARI column shows that every
method still answers the question. Two axes:

* size: ``n`` in :data:`SIZES` at ``d`` = :data:`SIZE_WIDTH` (64, an embedding's width:
  ``auto`` takes the manifold family there, the route EVoC is compared with);
* width: ``d`` in :data:`WIDTHS` at ``n`` = :data:`WIDTH_ROWS`.

Each cell (method, n, d) runs in a fresh process: the data are generated, the method
fits once on :data:`WARM_UP_ROWS` rows of the same generator (another seed; numba's
compilation and lazy imports are not timed), the high-water mark of resident memory is
reset, and the timed fit runs; a cell over ``--cap`` seconds is recorded as over cap.
The methods of one cell run one after another, so they see the same machine load; the
ratios ``auto / EVoC`` and ``auto / KMeans`` are per cell (of wall seconds). Each cell
also gives the fit's CPU seconds (all its threads): on a shared machine the wall time of
a threaded fit can be several times its CPU time, and the CPU time is the steadier
figure. The slopes are least-squares
fits of log time against log n (or log d) over the cells that finished.

Usage::

    python -m benchmarks.size_width [--axis size,width] [--sizes 10000,...]
        [--widths 16,...] [--methods auto,evoc,kmeans] [--cap 900]
        [--out FILE.json] [--record]

``--record`` writes ``benchmarks/records/size-width.json``, the summary record that
``python -m benchmarks today`` puts into ``benchmarks/RESULTS.md``. Only public names of
graphclust are used.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

__all__ = ["SIZES", "WIDTHS", "cell_worker", "clusters", "main", "slopes",
           "summary_record", "table_rows"]

#: Rows on the size axis and its width.
SIZES = (10_000, 31_623, 100_000, 316_228, 1_000_000)
SIZE_WIDTH = 64
#: Columns on the width axis and its rows.
WIDTHS = (16, 128, 1_024, 10_000)
WIDTH_ROWS = 10_000
#: Clusters and the dimension they live in before the projection.
K, INNER = 10, 16
#: Rows of the untimed warm-up fit: 500 a cluster, so ``auto`` warms up on the rule of
#: the timed fit (fewer rows take a cheaper rule and compile nothing of the manifold one).
WARM_UP_ROWS = 5_000
METHODS = ("auto", "evoc", "kmeans")
HISTORY_HEADING = ("2026-11-28 time against size and width: the whole table (issue 48, "
                   "deliverable 7)")


def clusters(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``K`` Gaussian clusters in ``INNER`` dimensions projected to ``d`` (float32) and
    their labels; the centres and the projection depend on ``d`` only, the rows on
    ``seed``."""
    from benchmarks.wide import gaussian_wide

    inner = min(INNER, d)
    X, y = gaussian_wide(n=n, d=d, k=K, inner=inner, seed=seed)
    return X, y


def _fit(method: str, X: np.ndarray):
    """One fit of ``method`` on ``X``; returns the labels and ``auto``'s rule."""
    if method == "auto":
        import graphclust

        model = graphclust.GraphClustering(n_clusters=K, random_state=0).fit(X)
        return model.labels_, model.resolved_spec_.get("summary", "").split(":")[1].strip()
    if method == "evoc":
        from benchmarks.peers import EvocLabels

        return EvocLabels(K, 0).fit(X).labels_, ""
    if method == "kmeans":
        from sklearn.cluster import KMeans

        return KMeans(K, n_init=1, random_state=0).fit(X).labels_, ""
    raise LookupError(f"unknown method {method!r}; methods: {', '.join(METHODS)}")


def cell_worker(method: str, n: int, d: int) -> dict:
    """One timed fit in this process (``--worker``), after a warm-up fit."""
    import warnings

    from sklearn.metrics import adjusted_rand_score

    from benchmarks.runner import peak_mb, reset_peak, rss_mb

    X, y = clusters(n, d, seed=0)
    warm, _ = clusters(min(WARM_UP_ROWS, n), d, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _fit(method, warm)
        reset = reset_peak()
        before = rss_mb() or 0.0
        start, cpu = time.perf_counter(), time.process_time()
        labels, rule = _fit(method, X)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = peak_mb() - before if reset else float("nan")
    return {"method": method, "n": n, "d": d, "fit_s": seconds, "cpu_s": cpu,
            "peak_above_data_mb": peak, "ari": float(adjusted_rand_score(y, labels)),
            "rule": rule}


def _run_cell(method: str, n: int, d: int, cap: float) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.size_width", "--worker", method,
           "--n", str(n), "--d", str(d)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=cap, check=False)
    except subprocess.TimeoutExpired:
        return {"method": method, "n": n, "d": d, "status": f"over cap ({cap:g} s)"}
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"method": method, "n": n, "d": d, "status": f"error: {tail}"}
    return {"status": "ok", **json.loads(done.stdout.strip().splitlines()[-1])}


def slopes(cells: list[dict], axis: str, stat: str = "fit_s") -> dict[str, float]:
    """Per method, the least-squares slope of log ``stat`` (the fit's wall seconds, or
    ``"cpu_s"``) against log ``axis`` (``"n"`` or ``"d"``) over its finished cells; NaN
    with fewer than two."""
    from benchmarks.report import loglog_slope

    out = {}
    for method in dict.fromkeys(c["method"] for c in cells):
        mine = [c for c in cells if c["method"] == method and c["status"] == "ok"]
        out[method] = loglog_slope([c[axis] for c in mine], [c[stat] for c in mine])
    return out


def table_rows(cells: list[dict]) -> list[list[str]]:
    """One row per (n, d): each method's seconds and ARI, then auto / EVoC and
    auto / KMeans, of wall seconds and (in parentheses) of CPU seconds."""
    rows = []
    for n, d in dict.fromkeys((c["n"], c["d"]) for c in cells):
        at = {c["method"]: c for c in cells if c["n"] == n and c["d"] == d}
        row = [f"{n:,}".replace(",", " "), f"{d:,}".replace(",", " ")]
        for m in METHODS:
            c = at.get(m)
            row.append("—" if c is None else c["status"] if c["status"] != "ok"
                       else f"{c['fit_s']:.1f} s ({c['cpu_s']:.1f} CPU s), ARI {c['ari']:.3f}")
        for peer in ("evoc", "kmeans"):
            a, b = at.get("auto"), at.get(peer)
            ok = a and b and a["status"] == b["status"] == "ok"
            row.append(f"{a['fit_s'] / b['fit_s']:.2f} ({a['cpu_s'] / b['cpu_s']:.2f})"
                       if ok else "—")
        rows.append(row)
    return rows


HEADER = ["n", "d", "auto", "EVoC", "KMeans(10, n_init=1)", "auto / EVoC (CPU)",
          "auto / KMeans (CPU)"]


def summary_record(result: dict) -> dict:
    """The summary record of a run (``benchmarks/records/size-width.json``)."""
    tables = []
    for axis, label in (("size", "n"), ("width", "d")):
        cells = [c for c in result["cells"] if c["axis"] == axis]
        if not cells:
            continue
        wall, cpu = slopes(cells, label), slopes(cells, label, "cpu_s")
        tables.append({"caption": f"Fit time against {label} ({axis} axis)", "header": HEADER,
                       "rows": table_rows(cells)})
        tables.append({"caption": f"Log-log slope of fit time against {label}",
                       "header": ["method", "slope (wall)", "slope (CPU)"],
                       "rows": [[m, f"{v:.2f}", f"{cpu[m]:.2f}"] for m, v in wall.items()]})
    return {"suite": "size-width", "order": 900,
            "title": "Time against size and width: auto, EVoC, KMeans (issue 48)",
            "history": HISTORY_HEADING, "runs": [result["run"]], "tables": tables}


def _axes(args) -> list[tuple[str, int, int]]:
    out = []
    if "size" in args.axis:
        out += [("size", int(n), SIZE_WIDTH) for n in args.sizes.split(",")]
    if "width" in args.axis:
        out += [("width", WIDTH_ROWS, int(d)) for d in args.widths.split(",")]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.size_width",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--axis", default="size,width")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--widths", default=",".join(map(str, WIDTHS)))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--cap", type=float, default=900.0, help="seconds a cell may take")
    ap.add_argument("--out", default=None, help="write the JSON result here")
    ap.add_argument("--record", action="store_true",
                    help="write benchmarks/records/size-width.json")
    ap.add_argument("--worker", choices=METHODS, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--d", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(cell_worker(args.worker, args.n, args.d)))
        return 0
    unknown = set(args.methods.split(",")) - set(METHODS)
    if unknown:
        ap.error(f"unknown methods {sorted(unknown)}; methods: {', '.join(METHODS)}")
    started, cells = datetime.now(UTC), []
    result = {"run": "", "cells": cells}
    for axis, n, d in _axes(args):
        for method in args.methods.split(","):
            cells.append({"axis": axis, **_run_cell(method, n, d, args.cap)})
            print(json.dumps(cells[-1]), flush=True)
            result = {"run": _run_line(argv, started), "cells": cells}
            if args.out:  # after every cell: an interrupted run keeps what it measured
                Path(args.out).write_text(json.dumps(result, indent=2) + "\n",
                                          encoding="utf-8")
    for t in summary_record(result)["tables"]:
        print(f"\n{t['caption']}:\n" + "\n".join(" | ".join(r) for r in [t["header"]]
                                                  + t["rows"]))
    if args.record:
        from benchmarks.today import RECORDS

        path = RECORDS / "size-width.json"
        path.write_text(json.dumps(summary_record(result), indent=2, ensure_ascii=False)
                        + "\n", encoding="utf-8")
        print(f"wrote {path}")
    return 0


def _run_line(argv, started) -> str:
    """The run as summary records name it: command, start, length, machine (the harness's
    :func:`benchmarks.report.machine_info`, its load at the time of the call)."""
    from benchmarks.report import machine_info

    info = machine_info()
    load = ", ".join(f"{x:.1f}" for x in info["load_avg"])
    minutes = (datetime.now(UTC) - started).total_seconds() / 60
    cmd = " ".join(["python -m benchmarks.size_width", *(argv or sys.argv[1:])])
    return (f"`{cmd}` — {started:%Y-%m-%d %H:%M} UTC, {minutes:.0f} min; "
            f"{info['cores']} cores, load {load}; graphclust {info['graphclust']} @ "
            f"{info['git_commit'] or 'unknown'}")


if __name__ == "__main__":
    raise SystemExit(main())
