"""The benchmark runner: jobs, fresh worker processes, time caps, memory, aggregation.

A *job* is one method (a graphclust preset or a scikit-learn peer) on one data set with one
seed (and, in the search suite, one parameter setting). Jobs run in worker processes
started with ``multiprocessing``'s *spawn* method, so every measurement comes from a process
that did nothing else before: by default one fresh process per (method, data set) — its
seeds run one after the other in it — or per job / per method (``--isolate``).

Per job the worker records

- the metrics ACC, NMI, ARI and purity (the registered ``acc``/``nmi``/``ari``/``purity``
  metric parts; scikit-learn / Hungarian fallbacks when a metric is not registered);
- wall time of the preprocessing and of each stage (``timings_`` of the estimator:
  anchors, graph, solver, rounding) and of the whole ``fit``;
- peak resident memory of the worker process during ``fit`` (``VmHWM`` after resetting
  the high-water mark through ``/proc/self/clear_refs`` right before ``fit``; elsewhere
  ``getrusage(RUSAGE_SELF).ru_maxrss``), its resident size just before ``fit`` (data
  loaded and preprocessed), hence ``fit_extra_mb`` = what the fit itself needed, and the
  peak per stage from a 20 ms resident-size sampler aligned with ``timings_``.

The parent enforces a per-job time cap, once on loading + preprocessing + warm-up and
once more on the timed ``fit``: a job that exceeds it is killed with its
process and reported as ``over cap`` (further seeds of the same job are not started).
A job that raises, or whose process dies, is reported as ``error``; ``run`` then exits
with status 1.
"""

from __future__ import annotations

import gc
import json
import math
import multiprocessing as mp
import os
import sys
import threading
import time
import traceback
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np

from benchmarks import suites

__all__ = ["Job", "execute", "Interrupted", "aggregate", "run_job_inline", "METRICS", "STAGES"]

METRICS = ("acc", "nmi", "ari", "purity")
STAGES = ("preprocess", "anchors", "graph", "solver", "rounding", "fit")
_FIT_STAGES = ("anchors", "graph", "solver", "rounding")


@dataclass
class Job:
    """One method on one data set with one seed (and optional parameter overrides)."""

    method: str
    dataset: str
    seed: int = 0
    kind: str = "preset"  # "preset" or "peer"
    params: dict = field(default_factory=dict)  # set_params names: "anchors__n_anchors"
    time_cap: float = 600.0
    setting: str = ""  # label of a search setting ("default" or the params as text)

    @property
    def key(self) -> tuple:
        return (self.method, self.dataset, json.dumps(self.params, sort_keys=True))


# ---------------------------------------------------------------------------------------
# Memory measurement (inside the worker)
# ---------------------------------------------------------------------------------------
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * _PAGE / 2**20
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class _Sampler(threading.Thread):
    """Samples the resident size every ``interval`` seconds: list of (t, MB)."""

    def __init__(self, interval: float = 0.02):
        super().__init__(daemon=True)
        self.interval = interval
        self.samples: list[tuple[float, float]] = []
        self._stop_evt = threading.Event()

    def run(self):
        while not self._stop_evt.is_set():
            self.samples.append((time.perf_counter(), _rss_mb()))
            self._stop_evt.wait(self.interval)

    def stop(self):
        self._stop_evt.set()
        self.join()
        self.samples.append((time.perf_counter(), _rss_mb()))


def _stage_peaks(samples, t_start, t_end, timings) -> dict[str, float]:
    """Peak sampled RSS within each stage window (stages laid end to end from the end)."""
    out: dict[str, float] = {}
    stages = [(s, timings[s]) for s in _FIT_STAGES if s in timings]
    if not samples or not stages:
        return out
    # the stages run back to back and end just before fit returns; validation comes first
    t = t_end - sum(d for _, d in stages)
    t = max(t, t_start)
    for name, dur in stages:
        window = [mb for (ts, mb) in samples if t - 0.02 <= ts <= t + dur + 0.02]
        if window:
            out[name] = max(window)
        t += dur
    return out


# ---------------------------------------------------------------------------------------
# Estimators and metrics
# ---------------------------------------------------------------------------------------
def make_estimator(job: Job, n_clusters: int):
    """The clusterer of a job: a ``GraphClustering`` preset or a scikit-learn peer."""
    if job.kind == "peer":
        from sklearn.cluster import KMeans, MiniBatchKMeans, SpectralClustering

        if job.method == "sk-kmeans":
            return KMeans(n_clusters=n_clusters, n_init=10, random_state=job.seed)
        if job.method == "sk-minibatch":
            return MiniBatchKMeans(n_clusters=n_clusters, n_init=3, batch_size=2048,
                                   random_state=job.seed)
        if job.method == "sk-spectral":
            return SpectralClustering(n_clusters=n_clusters, affinity="nearest_neighbors",
                                      n_neighbors=10, random_state=job.seed,
                                      assign_labels="kmeans")
        raise ValueError(f"unknown peer {job.method!r}; peers: {', '.join(suites.PEERS)}")
    import graphclust

    est = graphclust.GraphClustering(job.method, n_clusters=n_clusters, random_state=job.seed)
    if job.params:
        est.set_params(**job.params)
    return est


def _acc_fallback(labels, y):
    from scipy.optimize import linear_sum_assignment

    _, li = np.unique(labels, return_inverse=True)
    _, yi = np.unique(y, return_inverse=True)
    C = np.zeros((li.max() + 1, yi.max() + 1))
    np.add.at(C, (li, yi), 1)
    r, c = linear_sum_assignment(-C)
    return C[r, c].sum() / len(y)


def _purity_fallback(labels, y):
    _, li = np.unique(labels, return_inverse=True)
    _, yi = np.unique(y, return_inverse=True)
    C = np.zeros((li.max() + 1, yi.max() + 1))
    np.add.at(C, (li, yi), 1)
    return C.max(axis=1).sum() / len(y)


def score_all(labels, y) -> dict[str, float]:
    """ACC, NMI, ARI and purity of ``labels`` against ``y``."""
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    fallback = {"acc": _acc_fallback, "nmi": normalized_mutual_info_score,
                "ari": adjusted_rand_score, "purity": _purity_fallback}
    try:
        import graphclust

        catalog = graphclust.get_registry().metrics
    except Exception:  # pragma: no cover - core unavailable
        catalog = {}
    out = {}
    for name in METRICS:
        if name in catalog:
            metric = catalog.get(name)()
            try:
                out[name] = float(metric.score(labels, y))
            except TypeError:
                out[name] = float(metric.score(labels, y, None))
        else:
            out[name] = float(fallback[name](labels, y))
    return out


# ---------------------------------------------------------------------------------------
# One job (inside the worker)
# ---------------------------------------------------------------------------------------
def _run_job(job: Job, data_dir, cache: dict, conn=None) -> dict:
    if cache.get("dataset") != job.dataset:
        cache.clear()
        gc.collect()
        t0 = time.perf_counter()
        X, y = suites.load(job.dataset, data_dir)
        cache.update(dataset=job.dataset, X=X, y=y, t_load=time.perf_counter() - t0, pre={})
    X, y = cache["X"], cache["y"]
    k = suites.n_classes(y)
    est = make_estimator(job, k)
    recipe_of = "peer" if job.kind == "peer" else job.method
    pipe = suites.make_pipeline_for(recipe_of, job.dataset, est)
    recipe = suites.preprocess_recipe(recipe_of)
    pre_steps = pipe.steps[:-1]
    if recipe in cache["pre"]:
        Xp, t_pre = cache["pre"][recipe]
    elif pre_steps:
        t0 = time.perf_counter()
        Xp = pipe[:-1].fit_transform(X)
        t_pre = time.perf_counter() - t0
        cache["pre"] = {recipe: (Xp, t_pre)}  # keep one preprocessed copy at a time
    else:
        Xp, t_pre = X, 0.0
    if job.method not in cache.setdefault("warm", set()):
        _warm_up(job, Xp, k)
        cache["warm"].add(job.method)
    if conn is not None:
        conn.send(("fit", None))  # the time cap restarts here: it bounds the fit itself
    gc.collect()
    reset_ok = _reset_peak()
    base = _rss_mb()
    sampler = _Sampler()
    sampler.start()
    caught: list = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t_start = time.perf_counter()
        try:
            est.fit(Xp)
        finally:
            t_end = time.perf_counter()
            sampler.stop()
    peak = _peak_mb() if reset_ok else max(mb for _, mb in sampler.samples)
    labels = np.asarray(est.labels_)
    times = {"preprocess": t_pre, "fit": t_end - t_start}
    timings = dict(getattr(est, "timings_", {}) or {})
    for st in _FIT_STAGES:
        if st in timings:
            times[st] = float(timings[st])
    rec = {
        "status": "ok",
        "n": int(X.shape[0]), "d": int(X.shape[1]), "d_in": int(Xp.shape[1]), "k": k,
        "n_found": int(len(np.unique(labels))),
        **score_all(labels, y),
        **{f"time_{s}": v for s, v in times.items()},
        "time_load": cache["t_load"],
        "base_rss_mb": base, "peak_rss_mb": peak, "fit_extra_mb": max(0.0, peak - base),
        **{f"peak_{s}_mb": v for s, v in
           _stage_peaks(sampler.samples, t_start, t_end, timings).items()},
        "warnings": sorted({f"{w.category.__name__}: {str(w.message)[:120]}" for w in caught})[:5],
    }
    return rec


def _warm_up(job: Job, Xp, k: int) -> None:
    """An untimed fit on a small slice, so that first-call costs (plugin discovery, lazy
    imports, compiled-code loading) are not charged to the timed fit."""
    m = min(Xp.shape[0], max(60, 6 * k))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            make_estimator(job, k).fit(Xp[:m])
    except Exception:  # noqa: BLE001 - the timed fit reports real failures
        pass


def _worker_main(conn, jobs: list[Job], data_dir) -> None:  # pragma: no cover - subprocess
    cache: dict = {}
    for i, job in enumerate(jobs):
        conn.send(("start", i))
        try:
            rec = _run_job(job, data_dir, cache, conn)
        except BaseException as exc:  # noqa: BLE001 - report everything to the parent
            rec = {"status": "error", "error": f"{type(exc).__name__}: {exc}"[:500],
                   "traceback": traceback.format_exc()[-3000:]}
        conn.send(("done", i, rec))
    conn.send(("exit",))
    conn.close()


def run_job_inline(job: Job, data_dir=None) -> dict:
    """Run one job in this process (for tests and debugging); returns the record."""
    rec = _run_job(job, data_dir, {})
    return {**asdict(job), **rec}


# ---------------------------------------------------------------------------------------
# The parent: groups, fresh processes, caps, progress
# ---------------------------------------------------------------------------------------
def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _describe(rec: dict) -> str:
    if rec["status"] == "ok":
        return (f"ok  ACC {rec['acc']:.3f} NMI {rec['nmi']:.3f} purity {rec['purity']:.3f}  "
                f"fit {rec['time_fit']:.2f}s  peak {rec['peak_rss_mb']:.0f} MB "
                f"(+{rec['fit_extra_mb']:.0f})")
    return f"{rec['status'].upper()}  {rec.get('error', '')}"


def _group_key(job: Job, isolate: str):
    if isolate == "job":
        return id(job)
    if isolate == "none":
        return None
    if isolate == "method":
        return (job.kind, job.method)
    return (job.kind, job.method, job.dataset)


def execute(jobs: list[Job], data_dir=None, isolate: str = "dataset", skip=None,
            log=_log, startup_timeout: float = 300.0, threads: int | None = None,
            on_record=None) -> list[dict]:
    """Run ``jobs`` in fresh spawned worker processes; one record per job, in job order.

    ``isolate``: ``"job"`` (a process per job), ``"dataset"`` (per method and data set),
    ``"method"``, or ``"none"`` (one process for all; tests). ``skip(job, records_so_far) -> reason | None`` can skip a job
    (e.g. larger sizes after a smaller one went over the cap). ``threads`` limits the
    workers' BLAS/OpenMP threads (None: the libraries' defaults). ``on_record(rec)`` is
    called as each job finishes. On ``KeyboardInterrupt`` the running worker is killed
    and :class:`Interrupted` carries the records finished so far.
    """
    ctx = mp.get_context("spawn")
    groups: dict = {}
    for i, job in enumerate(jobs):
        groups.setdefault(_group_key(job, isolate), []).append(i)
    records: list[dict | None] = [None] * len(jobs)
    total = len(jobs)
    counter = [0]

    def finish(i: int, rec: dict) -> None:
        records[i] = {**asdict(jobs[i]), **rec}
        if on_record is not None:
            on_record(records[i])
        counter[0] += 1
        j = jobs[i]
        extra = f" {j.setting}" if j.setting else ""
        log(f"[{counter[0]:>3}/{total}] {j.method} · {j.dataset} · seed {j.seed}{extra}: "
            f"{_describe(records[i])}")

    try:
        _execute_groups(groups, jobs, records, data_dir, finish, log, startup_timeout,
                        threads, ctx, skip)
    except KeyboardInterrupt:
        raise Interrupted([r for r in records if r is not None]) from None
    return [r for r in records if r is not None]


class Interrupted(Exception):
    """The run was interrupted; ``records`` holds the jobs that finished."""

    def __init__(self, records):
        super().__init__(f"interrupted after {len(records)} jobs")
        self.records = records


def _execute_groups(groups, jobs, records, data_dir, finish, log, startup_timeout, threads,
                    ctx, skip) -> None:
    for idxs in groups.values():
        pending = list(idxs)
        while pending:
            if skip is not None:
                keep = []
                for i in pending:
                    reason = skip(jobs[i], [r for r in records if r is not None])
                    if reason:
                        finish(i, {"status": "skipped", "error": reason})
                    else:
                        keep.append(i)
                pending = keep
                if not pending:
                    break
            pending = _run_group(ctx, jobs, pending, data_dir, finish, log, startup_timeout,
                                 threads)


_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def _start_worker(ctx, target, args, threads: int | None):
    """Start a spawned worker; with ``threads``, its BLAS/OpenMP pools are limited to that
    many threads (environment set before the child imports numpy)."""
    saved = {v: os.environ.get(v) for v in _THREAD_VARS}
    if threads:
        for v in _THREAD_VARS:
            os.environ[v] = str(threads)
    try:
        proc = ctx.Process(target=target, args=args, daemon=True)
        proc.start()
    finally:
        for v, old in saved.items():
            if old is None:
                os.environ.pop(v, None)
            else:
                os.environ[v] = old
    return proc


def _run_group(ctx, jobs, pending, data_dir, finish, log, startup_timeout,
               threads=None) -> list[int]:
    """Run ``pending`` jobs in one worker; returns the jobs still to run (after a kill)."""
    parent, child = ctx.Pipe(duplex=False)
    proc = _start_worker(ctx, _worker_main, (child, [jobs[i] for i in pending], data_dir),
                         threads)
    child.close()
    done: set[int] = set()
    current, started = None, time.perf_counter()
    launched = time.perf_counter()
    leftover: list[int] = []
    try:
        while True:
            now = time.perf_counter()
            if current is None:
                wait = startup_timeout - (now - launched)
            else:
                wait = jobs[pending[current]].time_cap - (now - started)
            if wait <= 0:
                if current is None:
                    proc.kill()
                    for pos, i in enumerate(pending):
                        if pos not in done:
                            finish(i, {"status": "error", "error": "worker did not start"})
                    return []
                i = pending[current]
                proc.kill()
                cap = jobs[i].time_cap
                finish(i, {"status": "over cap", "error": f"over the {cap:g} s time cap"})
                done.add(current)
                for pos, j in enumerate(pending):
                    if pos in done:
                        continue
                    if jobs[j].key == jobs[i].key:
                        finish(j, {"status": "over cap",
                                   "error": f"not run: seed {jobs[i].seed} went over the cap"})
                        done.add(pos)
                    else:
                        leftover.append(j)
                return leftover
            if parent.poll(min(wait, 1.0)):
                try:
                    msg = parent.recv()
                except EOFError:
                    msg = None
                if msg is None:
                    raise _WorkerDied
                if msg[0] == "start":
                    current, started = msg[1], time.perf_counter()
                elif msg[0] == "fit":
                    started = time.perf_counter()
                elif msg[0] == "done":
                    finish(pending[msg[1]], msg[2])
                    done.add(msg[1])
                    current = None
                    launched = time.perf_counter()
                elif msg[0] == "exit":
                    return []
            elif not proc.is_alive() and not parent.poll(0):
                raise _WorkerDied
    except _WorkerDied:
        proc.join(5)
        code = proc.exitcode
        if current is not None and current not in done:
            finish(pending[current], {"status": "error",
                                      "error": f"worker process died (exit code {code})"})
            done.add(current)
        return [i for pos, i in enumerate(pending) if pos not in done]
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(10)
        parent.close()


class _WorkerDied(Exception):
    pass


# ---------------------------------------------------------------------------------------
# Aggregation
# ---------------------------------------------------------------------------------------
def _mean_std(values):
    v = [x for x in values if x is not None and isinstance(x, (int, float)) and math.isfinite(x)]
    if not v:
        return None, None
    return float(np.mean(v)), float(np.std(v))


def aggregate(records: list[dict]) -> list[dict]:
    """Mean ± std over seeds per (method, data set, params)."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        key = (r["method"], r["dataset"], json.dumps(r.get("params", {}), sort_keys=True))
        groups.setdefault(key, []).append(r)
    rows = []
    for (method, dataset, params), rs in groups.items():
        ok = [r for r in rs if r["status"] == "ok"]
        first = ok[0] if ok else rs[0]
        statuses = sorted({r["status"] for r in rs})
        row = {
            "method": method, "kind": first.get("kind", "preset"), "dataset": dataset,
            "params": json.loads(params), "setting": first.get("setting", ""),
            "family": dataset.split("@")[0],
            "recipe": "+".join(name for name, _ in suites.make_preprocessing(
                "peer" if first.get("kind") == "peer" else method, dataset)) or "none",
            "n": first.get("n"), "d": first.get("d"), "k": first.get("k"),
            "runs": len(rs), "ok": len(ok),
            "status": "ok" if len(ok) == len(rs) else ("partial" if ok else statuses[0]),
            "error": next((r.get("error") for r in rs if r["status"] != "ok"), ""),
        }
        if row["n"] is None and "@" in dataset:
            try:
                row["n"] = int(float(dataset.split("@")[1]))
            except ValueError:
                pass
        for m in METRICS:
            row[m], row[f"{m}_std"] = _mean_std([r.get(m) for r in ok])
        for s in STAGES:
            row[f"time_{s}"], row[f"time_{s}_std"] = _mean_std([r.get(f"time_{s}") for r in ok])
        for key in ("peak_rss_mb", "fit_extra_mb", "base_rss_mb",
                    *(f"peak_{s}_mb" for s in _FIT_STAGES)):
            vals = [r.get(key) for r in ok if r.get(key) is not None]
            row[key] = float(max(vals)) if vals else None
        paper = suites.paper_number(method, dataset)
        row["paper"] = paper
        rows.append(row)
    return rows
