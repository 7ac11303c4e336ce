"""The runner: cells in fresh, capped worker processes, measured the same way.

Each cell (:class:`benchmarks.suite.Cell`) is one method on one data set with one
parameter setting and one seed. Cells run in worker processes started with
``multiprocessing``'s *spawn*: one per method and data set by default (its seeds and
settings run one after the other in it), or per cell / per method. A worker records per
cell ACC, NMI, ARI and purity (the registered metric parts) and AMI (scikit-learn), the
wall time of the preprocessing, of each stage (``timings_``: anchors, graph, solver,
rounding) and of the whole ``fit``, and the peak resident memory of its process during ``fit``
(``VmHWM`` after resetting the high-water mark) beside its size just before ``fit``.

The parent caps each cell: the time cap applies to loading + preprocessing and again
to the fit; the memory cap to the worker's resident size, read from ``/proc`` at every
poll. A cell past a cap is killed with its process and reported ``over cap`` (its
other seeds with the same setting are not started); a cell that raises, or whose
process dies, is reported ``error``. Results travel over a pipe that the parent drains
while it waits, so large results never deadlock.
"""

from __future__ import annotations

import gc
import json
import multiprocessing as mp
import os
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import asdict
from typing import Any
from unittest.mock import patch

import numpy as np

from benchmarks import datasets
from benchmarks.peers import make_peer
from benchmarks.suite import Cell

__all__ = ["METRICS", "STAGES", "Interrupted", "execute", "peak_mb", "reset_peak", "rss_mb",
           "run_cell_inline"]

METRICS = ("acc", "nmi", "ari", "purity", "ami")
FIT_STAGES = ("anchors", "graph", "solver", "rounding")
STAGES = ("preprocess", *FIT_STAGES, "fit")
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
#: Seconds a worker may take to start and load its data set.
_STARTUP_S = 300.0
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def rss_mb(pid: int | str = "self") -> float | None:
    """Resident size of a process in MB (Linux ``/proc``), None when unreadable."""
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * _PAGE / 2**20
    except (OSError, ValueError, IndexError):
        return None


def reset_peak() -> bool:
    """Reset this process's high-water mark of resident memory (Linux >= 4.0); whether
    it could."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_mb() -> float:
    """``VmHWM`` in MB (called only where :func:`reset_peak` could write to ``/proc``)."""
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) / 1024 for line in fh if line.startswith("VmHWM:"))


class Sampler(threading.Thread):
    """A thread calling ``sample()`` every ``every`` seconds, from entering the ``with``
    block to leaving it (the fit's memory here, the Dask workers' in ``dask_scaling``)."""

    def __init__(self, sample: Callable[[], Any], every: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.sample, self.every, self._halt = sample, every, threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            self.sample()
            self._halt.wait(self.every)

    def __enter__(self) -> Sampler:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._halt.set()
        self.join()


def _stage_peaks(samples: list, t_end: float, timings: dict) -> dict[str, float]:
    """Peak sampled size within each stage window (the stages end where ``fit`` ends)."""
    out: dict[str, float] = {}
    stages = [(s, timings[s]) for s in FIT_STAGES if s in timings]
    t = t_end - sum(d for _, d in stages)
    for name, dur in stages:
        window = [mb for ts, mb in samples if t - 0.02 <= ts <= t + dur + 0.02]
        if window:
            out[f"peak_{name}_mb"] = max(window)
        t += dur
    return out


def make_estimator(cell: Cell, n_clusters: int) -> Any:
    """The clusterer of a cell: a ``GraphClustering`` preset or spec, or a peer."""
    if cell.kind == "peer":
        return make_peer(cell.target, n_clusters, cell.seed)
    import graphclust

    what = json.loads(cell.target) if cell.kind == "spec" else cell.target
    est = graphclust.GraphClustering(what, n_clusters=n_clusters, random_state=cell.seed)
    if cell.params:
        est.set_params(**cell.params)
    return est


def score_all(labels: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """ACC, NMI, ARI and purity of ``labels`` against ``y`` (the registered metrics), and
    AMI (scikit-learn's ``adjusted_mutual_info_score``, arithmetic normalisation)."""
    from graphclust import resolve_part
    from sklearn.metrics import adjusted_mutual_info_score

    out = {m: float(resolve_part({"name": m}, "metric").score(labels, y)) for m in METRICS
           if m != "ami"}
    out["ami"] = float(adjusted_mutual_info_score(y, labels))
    return out


def member_records(est: Any, y: np.ndarray) -> list[dict]:
    """For an ensemble fit, each member's name, ``k`` and scores (:func:`score_all`) in
    this very run, so that its consensus is compared with its actual members; ``[]``
    for anything else."""
    result = getattr(est, "result_", None)
    names = getattr(result, "member_names", None)
    if not names:
        return []
    return [{"name": name.partition(" ")[2] or name, "k": int(k),
             **score_all(np.asarray(labels), y)}
            for name, k, labels in zip(names, result.member_n_clusters,
                                       result.member_labels, strict=True)]


def _warm_up(cell: Cell, X: np.ndarray, k: int) -> None:
    """An untimed fit on a small slice, so that plugin discovery and lazy imports are not
    charged to the timed fit."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make_estimator(cell, k).fit(X[: min(X.shape[0], max(60, 6 * k))])
    except Exception:  # noqa: BLE001, S110 - the timed fit reports real failures
        pass


def _run_cell(cell: Cell, data_dir: str | None, cache: dict, send: Callable) -> dict:
    if cache.get("dataset") != cell.dataset:
        cache.clear()
        gc.collect()
        t0 = time.perf_counter()
        X, y = datasets.load(cell.dataset, data_dir)
        cache.update(dataset=cell.dataset, X=X, y=y, t_load=time.perf_counter() - t0,
                     pre={}, warm=set())
    X, y = cache["X"], cache["y"]
    k = int(np.unique(y).size)
    steps = datasets.preprocessing(cell.prep, cell.dataset)
    if cell.prep not in cache["pre"]:
        t0 = time.perf_counter()
        Xp = X
        for _, step in steps:
            Xp = step.fit_transform(Xp)
        cache["pre"] = {cell.prep: (np.asarray(Xp), time.perf_counter() - t0)}
    Xp, t_pre = cache["pre"][cell.prep]
    if cell.method not in cache["warm"]:
        _warm_up(cell, Xp, k)
        cache["warm"].add(cell.method)
    est = make_estimator(cell, k)
    send(("fit", None))  # the time cap restarts here: it bounds the fit itself
    gc.collect()
    reset_ok = reset_peak()
    base = rss_mb() or 0.0
    samples: list[tuple[float, float]] = []  # (time, MB) every 20 ms, for the stage peaks
    with Sampler(lambda: samples.append((time.perf_counter(), rss_mb() or 0.0))), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t_start = time.perf_counter()
        try:
            est.fit(Xp)
        finally:
            t_end = time.perf_counter()
    peak = peak_mb() if reset_ok else max([mb for _, mb in samples] or [base])
    labels = np.asarray(est.labels_)
    timings = {s: float(v) for s, v in (getattr(est, "timings_", None) or {}).items()
               if s in FIT_STAGES}
    return {
        "status": "ok", "n": int(X.shape[0]), "d": int(X.shape[1]), "d_in": int(Xp.shape[1]),
        "k": k, "n_found": int(np.unique(labels).size), **score_all(labels, y),
        **({"k_found": int(est.n_clusters_)} if hasattr(est, "n_clusters_") else {}),
        "time_load": cache["t_load"], "time_preprocess": t_pre, "time_fit": t_end - t_start,
        **{f"time_{s}": v for s, v in timings.items()},
        "base_rss_mb": base, "peak_rss_mb": peak, "fit_extra_mb": max(0.0, peak - base),
        **_stage_peaks(samples, t_end, timings),
        **({"members": members} if (members := member_records(est, y)) else {}),
        "warnings": sorted({f"{w.category.__name__}: {str(w.message)[:120]}"
                            for w in caught})[:5],
        "warning_classes": sorted({w.category.__name__ for w in caught}),
    }


def _worker_main(conn: Any, cells: list[Cell], data_dir: str | None) -> None:  # pragma: no cover
    cache: dict = {}
    for i, cell in enumerate(cells):
        conn.send(("start", i))
        try:
            rec = _run_cell(cell, data_dir, cache, conn.send)
        except BaseException as exc:  # noqa: BLE001 - report everything to the parent
            rec = {"status": "error", "error": f"{type(exc).__name__}: {exc}"[:500],
                   "traceback": traceback.format_exc()[-3000:]}
        conn.send(("done", i, rec))
    conn.send(("exit",))
    conn.close()


def run_cell_inline(cell: Cell, data_dir: str | None = None) -> dict:
    """One cell in this process, uncapped (tests, debugging): its record."""
    return {**asdict(cell), **_run_cell(cell, data_dir, {}, lambda msg: None)}


class Interrupted(Exception):
    """The run was interrupted; ``records`` holds the cells that finished."""

    def __init__(self, records: list[dict]) -> None:
        super().__init__(f"interrupted after {len(records)} cells")
        self.records = records


class _WorkerDied(Exception):
    pass


def _describe(rec: dict) -> str:
    if rec["status"] == "ok":
        members = "".join(f"\n      member {m['name']} (k={m['k']}): ACC {m['acc']:.3f} "
                          f"NMI {m['nmi']:.3f}" for m in rec.get("members", ()))
        return (f"ok  ACC {rec['acc']:.3f} NMI {rec['nmi']:.3f} purity {rec['purity']:.3f}  "
                f"fit {rec['time_fit']:.2f}s  peak {rec['peak_rss_mb']:.0f} MB{members}")
    return f"{rec['status'].upper()}  {rec.get('error', '')}"


def _group_key(cell: Cell, isolate: str, i: int) -> Any:
    return {"job": i, "none": None, "method": (cell.kind, cell.method)}.get(
        isolate, (cell.kind, cell.method, cell.dataset))


def execute(cells: list[Cell], data_dir: str | None = None, isolate: str = "dataset",
            skip: Callable[[Cell, list[dict]], str | None] | None = None,
            threads: int | None = 1, on_record: Callable[[dict], None] | None = None,
            log: Callable[[str], None] | None = None) -> list[dict]:
    """Run ``cells`` in spawned workers; one record per cell, in cell order.

    ``isolate``: ``"dataset"`` (a process per method and data set), ``"job"``,
    ``"method"`` or ``"none"``. ``skip(cell, records) -> reason | None`` skips a cell
    (e.g. larger sizes after a failure). ``threads`` limits each worker's BLAS/OpenMP
    threads (None: library defaults). ``on_record`` sees each record as it finishes.
    On ``KeyboardInterrupt`` raises :class:`Interrupted` with the finished records.
    """
    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    ctx = mp.get_context("spawn")
    groups: dict = {}
    for i, cell in enumerate(cells):
        groups.setdefault(_group_key(cell, isolate, i), []).append(i)
    records: list[dict | None] = [None] * len(cells)
    done_count = [0]

    def finish(i: int, rec: dict) -> None:
        records[i] = {**asdict(cells[i]), **rec}
        if on_record is not None:
            on_record(records[i])
        done_count[0] += 1
        c = cells[i]
        setting = f" {dict(c.params)}" if c.params else ""
        log(f"[{done_count[0]:>3}/{len(cells)}] {c.method} · {c.dataset} · seed {c.seed}"
            f"{setting}: {_describe(records[i])}")

    try:
        for idxs in groups.values():
            pending = list(idxs)
            while pending:
                if skip is not None:
                    so_far = [r for r in records if r is not None]
                    reasons = {i: skip(cells[i], so_far) for i in pending}
                    for i, why in reasons.items():
                        if why:
                            finish(i, {"status": "skipped", "error": why})
                    pending = [i for i in pending if not reasons[i]]
                if pending:
                    pending = _run_group(ctx, cells, pending, data_dir, finish, threads)
    except KeyboardInterrupt:
        raise Interrupted([r for r in records if r is not None]) from None
    return [r for r in records if r is not None]


def _run_group(ctx: Any, cells: list[Cell], pending: list[int], data_dir: str | None,
               finish: Callable, threads: int | None) -> list[int]:
    """Run ``pending`` cells in one worker (its BLAS / OpenMP threads limited to
    ``threads``); the cells still to run after a kill."""
    parent, child = ctx.Pipe(duplex=False)
    with patch.dict(os.environ, {v: str(threads) for v in _THREAD_VARS} if threads else {}):
        proc = ctx.Process(target=_worker_main, args=(child, [cells[i] for i in pending],
                                                      data_dir), daemon=True)
        proc.start()  # the worker inherits the environment, this process keeps its own
    child.close()
    done: set[int] = set()
    current: int | None = None
    started = time.perf_counter()

    def stop_cell(pos: int, status: str, why: str) -> list[int]:
        proc.kill()
        finish(pending[pos], {"status": status, "error": why})
        done.add(pos)
        left = []
        for p, j in enumerate(pending):
            if p in done:
                continue
            if cells[j].key == cells[pending[pos]].key:
                finish(j, {"status": status, "error": f"not run: seed {cells[pending[pos]].seed}"
                                                      f" went {status}"})
                done.add(p)
            else:
                left.append(j)
        return left

    try:
        while True:
            cap = _STARTUP_S if current is None else cells[pending[current]].time_cap
            wait = cap - (time.perf_counter() - started)
            if wait <= 0:
                if current is None:
                    proc.kill()
                    for p, i in enumerate(pending):
                        if p not in done:
                            finish(i, {"status": "error", "error": "worker did not start"})
                    return []
                return stop_cell(current, "over cap", f"over the {cap:g} s time cap")
            mem_cap = None if current is None else cells[pending[current]].mem_cap_mb
            if mem_cap is not None and (rss_mb(proc.pid) or 0.0) > mem_cap:
                return stop_cell(current, "over cap", f"over the {mem_cap:g} MB memory cap")
            if parent.poll(min(wait, 0.5)):
                try:
                    msg = parent.recv()
                except EOFError:
                    raise _WorkerDied from None
                if msg[0] == "start":
                    current, started = msg[1], time.perf_counter()
                elif msg[0] == "fit":
                    started = time.perf_counter()
                elif msg[0] == "done":
                    finish(pending[msg[1]], msg[2])
                    done.add(msg[1])
                    current, started = None, time.perf_counter()
                elif msg[0] == "exit":
                    return []
            elif not proc.is_alive() and not parent.poll(0):
                raise _WorkerDied
    except _WorkerDied:
        proc.join(5)
        if current is not None and current not in done:
            finish(pending[current], {"status": "error",
                                      "error": f"worker process died (exit code {proc.exitcode})"})
            done.add(current)
        return [i for p, i in enumerate(pending) if p not in done]
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(10)
        parent.close()
