"""Chunked anchor pipelines on a Dask LocalCluster (issue 17): time, quality and memory
against n, beside dask-ml. Usage in ``benchmarks/README.md`` ("On Dask").

Data: a mixture of 10-D Gaussians and 2-D shapes (two moons, two circles, each pair on a
random plane of the 10-D space, noise in every direction), made chunk by chunk
(:func:`synthetic`), never whole in one process. Per size and method, on freshly
restarted workers: ARI and ACC (contingency table summed over chunks), time per stage,
peak RSS of every worker (psutil via ``client.run`` every 0.5 s), worker restarts. Records
are appended to ``OUT/dask-scaling.jsonl``; ``OUT/dask-scaling.png`` plots time against n
(log-log) with the slopes. MNIST chunked against in memory: :func:`equivalence`
(``python -m benchmarks.dask_equivalence``).
"""

from __future__ import annotations

import argparse
import json
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator

from benchmarks.report import loglog_slope
from benchmarks.runner import Sampler, rss_mb

N_GAUSS, D, SPREAD = 6, 10, 10.0
K = N_GAUSS + 4  # six Gaussians, two moons, two circles


def _layout(seed: int):
    """Cluster centres and the planes of the shapes, from the data seed alone."""
    rng = np.random.default_rng([seed, 0])
    centres = rng.uniform(-SPREAD, SPREAD, size=(N_GAUSS, D))
    planes = [np.linalg.qr(rng.normal(size=(D, 2)))[0] for _ in range(2)]
    offsets = rng.uniform(-SPREAD, SPREAD, size=(2, D))
    return centres, planes, offsets


def _chunk(seed: int, index: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of chunk ``index`` and their labels, from their own seed ``[seed, 1, index]``."""
    from sklearn.datasets import make_circles, make_moons

    centres, planes, offsets = _layout(seed)
    rng = np.random.default_rng([seed, 1, index])
    y = rng.integers(0, K, size=rows)
    X = np.empty((rows, D))
    g = y < N_GAUSS
    X[g] = centres[y[g]] + rng.normal(size=(int(g.sum()), D))
    for s, make in enumerate((make_moons, make_circles)):
        sel = (y == N_GAUSS + 2 * s) | (y == N_GAUSS + 2 * s + 1)
        kw = {"noise": 0.05} if s == 0 else {"noise": 0.05, "factor": 0.5}
        P, py = make(n_samples=(int((y[sel] == N_GAUSS + 2 * s).sum()),
                                int((y[sel] == N_GAUSS + 2 * s + 1).sum())),
                     shuffle=False, random_state=int(rng.integers(2**31)), **kw)
        X[sel] = 3.0 * P @ planes[s].T + offsets[s] + 0.05 * rng.normal(size=(len(P), D))
        y[sel] = N_GAUSS + 2 * s + py
    return X, y


def synthetic(n: int, seed: int = 0):
    """``(X, y)`` dask arrays of ``n`` rows, chunked by the I/O module's byte rule."""
    import dask
    import dask.array as da
    from graphclust.io import chunk_rows

    rows = chunk_rows(D, 8)
    sizes = [min(rows, n - s) for s in range(0, n, rows)]
    parts = [dask.delayed(_chunk, pure=True, nout=2)(seed, i, r) for i, r in enumerate(sizes)]
    X = da.concatenate([da.from_delayed(p[0], (r, D), np.float64) for p, r in zip(parts, sizes)])
    y = da.concatenate([da.from_delayed(p[1], (r,), np.int64) for p, r in zip(parts, sizes)])
    return X, y


class WorkerMemory(Sampler):
    """Peak RSS per worker, sampled on the workers, and the workers that appeared
    (a worker the nanny restarts comes back under a new address)."""

    def __init__(self, client, every: float = 0.5):
        super().__init__(self._poll, every)
        self.client, self.peak = client, {}
        self.initial = set(client.scheduler_info()["workers"])
        self.seen = set(self.initial)

    def _poll(self) -> None:
        try:
            for addr, mb in self.client.run(rss_mb).items():
                self.peak[addr] = max(self.peak.get(addr, 0.0), mb or 0.0)
                self.seen.add(addr)
        except Exception:  # noqa: BLE001, S110 - a worker going away mid-call
            pass

    def summary(self) -> dict:
        return {"peak_worker_mb": {a: round(v) for a, v in sorted(self.peak.items())},
                "max_peak_worker_mb": round(max(self.peak.values(), default=0)),
                "worker_restarts": len(self.seen - self.initial)}


class _KMeansPredict(BaseEstimator):
    """dask-ml's ``KMeans`` whose ``labels_`` are its ``predict`` on the embedding: with
    dask 2026.8 and dask-ml 2025.1 the ``labels_`` of ``KMeans.fit`` cannot be computed
    (``FutureCancelledError: lost dependencies``); ``predict`` (one task per chunk) can."""

    def __init__(self, n_clusters: int, random_state: int):
        self.n_clusters, self.random_state = n_clusters, random_state

    def fit(self, U):
        from dask_ml.cluster import KMeans

        self.km_ = KMeans(n_clusters=self.n_clusters, random_state=self.random_state).fit(U)
        self.labels_ = self.km_.predict(U).persist()
        return self


def run_method(client, method: str, X, y, seed: int = 0, fresh: bool = True) -> dict:
    """One fit on freshly restarted workers (``fresh``; each peak is the case's own): a graphclust
    preset, or ``dask-ml`` (Nyström spectral, 100 components, RBF width
    ``gamma = 1 / (d var(X))``, scikit-learn's ``"scale"`` rule)."""
    from graphclust import GraphClustering, get_registry
    from graphclust.cli import chunked_scores

    metrics = [get_registry().metrics.get(m)() for m in ("ari", "acc")]
    for _ in range(20 if fresh else 0):  # the previous case's results go asynchronously
        try:
            client.restart(timeout=600)  # a loaded machine starts workers slowly
            break
        except AssertionError:  # the scheduler still holds tasks
            time.sleep(1.0)
    rec = {"method": method, "n": int(X.shape[0]), "chunks": int(X.numblocks[0])}
    with WorkerMemory(client) as mem:
        t0 = time.perf_counter()
        try:
            if method == "dask-ml":
                from dask_ml.cluster import SpectralClustering

                gamma = 1.0 / (D * float(X.var().compute()))
                model = SpectralClustering(n_clusters=K, gamma=gamma, random_state=seed,
                                           n_components=100, persist_embedding=True,
                                           assign_labels=_KMeansPredict(K, seed))
                labels, rec["timings"] = model.fit(X).labels_, {}
            else:
                model = GraphClustering(method, n_clusters=K, random_state=seed).fit(X)
                labels, rec["timings"] = model.labels_, dict(model.timings_)
            rec["time"] = time.perf_counter() - t0
            rec.update(chunked_scores(metrics, labels, y)[0], status="ok")
        except Exception as exc:  # noqa: BLE001 - reported, the next case still runs
            rec.update(status="error", error=f"{type(exc).__name__}: {exc}",
                       time=time.perf_counter() - t0)
    rec.update(mem.summary())
    return rec


def _points(records: list[dict], method: str) -> list[tuple[int, float]]:
    return sorted((r["n"], r["time"]) for r in records
                  if r["method"] == method and r["status"] == "ok")


def slopes(records: list[dict]) -> dict[str, float]:
    """Log-log slope of time against n per method with two sizes or more
    (:func:`benchmarks.report.loglog_slope`)."""
    out = {}
    for m in sorted({r["method"] for r in records}):
        pts = _points(records, m)
        s = loglog_slope([n for n, _ in pts], [t for _, t in pts])
        if np.isfinite(s):
            out[m] = s
    return out


def plot(records: list[dict], path: Path) -> Path:
    from benchmarks.plots import _plt, save

    fig, ax = _plt().subplots(figsize=(6, 4.5))
    for m, s in slopes(records).items():
        ax.loglog(*zip(*_points(records, m)), "o-", label=f"{m} (slope {s:.2f})")
    ax.set(xlabel="n (points)", ylabel="fit time (s)", title="Chunked fit time vs n")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    save(fig, path, dpi=100)
    return path


@contextmanager
def _client(workers: int, memory_limit: str):
    """A client of a ``LocalCluster`` of ``workers`` one-thread worker processes."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None,
                      memory_limit=memory_limit) as cluster, Client(cluster) as client:
        yield client


def _parser(prog: str, doc: str) -> argparse.ArgumentParser:
    """The options of both scripts: the cluster's workers and their memory, the seed."""
    ap = argparse.ArgumentParser(prog=prog, description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="3GB", help="per worker")
    ap.add_argument("--seed", type=int, default=0)
    return ap


def main(argv: list[str] | None = None) -> int:
    ap = _parser("python -m benchmarks.dask_scaling", __doc__)
    ap.add_argument("--out", required=True, help="folder of dask-scaling.jsonl (appended)")
    ap.add_argument("--sizes", default="1e6,5e6,2e7")
    ap.add_argument("--methods", default="uspec,anchor-spectral,dask-ml",
                    help="graphclust presets and/or dask-ml")
    ap.add_argument("--peer-max", type=float, default=5e6, help="largest n for dask-ml")
    ap.add_argument("--figure", help="also write the plot here (e.g. "
                    "benchmarks/figures/dask-scaling-auto.png)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with _client(args.workers, args.memory_limit) as client, \
            open(out / "dask-scaling.jsonl", "a") as stream:
        started = False  # the cluster's first case has fresh workers already
        for n in (int(float(s)) for s in args.sizes.split(",")):
            X, y = synthetic(n, args.seed)
            for m in args.methods.split(","):
                if m != "dask-ml" or n <= args.peer_max:
                    rec = run_method(client, m, X, y, args.seed, fresh=started)
                    started = True
                    rec.update(workers=args.workers, memory_limit=args.memory_limit)
                    stream.write(json.dumps(rec) + "\n")
                    stream.flush()
                    print(json.dumps(rec), flush=True)
    records = [json.loads(line) for line in (out / "dask-scaling.jsonl").read_text().splitlines()]
    summary = {"slopes": slopes(records)}  # over every run in the folder
    if summary["slopes"]:
        summary["plot"] = str(plot(records, out / "dask-scaling.png"))
        if args.figure:
            summary["figure"] = str(plot(records, Path(args.figure)))
    print(json.dumps(summary))
    return 0


def equivalence(argv: list[str] | None = None) -> int:
    """Chunked (Dask) against in-memory labels of the anchor presets, same seed, same run.

    For each preset: one in-memory fit and one fit of the same array as a ``--chunks``-chunk
    dask array on the cluster started here. Reports ACC of both against the truth, the
    fraction of equal labels and the ARI between the two labellings, both wall times (one
    run each, indicative only; the ratio is the comparable number) and the stage times.
    Up to 100 000 rows (MNIST-70k) the anchor and rounding samples of the chunked run are
    every row (:mod:`graphclust.chunks`), so the only remaining difference is the order of
    the block sums. MNIST pixels are scaled to ``[0, 1]`` (``/255``), as the issue asks.
    """
    import dask.array as da
    from graphclust import GraphClustering
    from sklearn.metrics import adjusted_rand_score

    from benchmarks.datasets import load
    from benchmarks.runner import score_all

    ap = _parser("python -m benchmarks.dask_equivalence", equivalence.__doc__)
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--dataset", default="mnist")
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--presets", default="ulge,anchor-spectral,uspec,bkhk-dcd,ongr-k")
    ap.add_argument("--out", help="JSON file of the rows")
    args = ap.parse_args(argv)
    X, y = load(args.dataset, args.data_dir)
    if args.dataset.startswith("mnist"):
        X = X / np.float32(255.0)
    n, k = X.shape[0], int(np.unique(y).size)
    out = []
    with _client(args.workers, args.memory_limit):
        Xd = da.from_array(X, chunks=(-(-n // args.chunks), X.shape[1])).persist()
        for name in args.presets.split(","):
            row = {"preset": name, "dataset": args.dataset, "n": n, "chunks": args.chunks,
                   "workers": args.workers}
            labels = []
            for kind, data in (("memory", X), ("chunked", Xd)):
                t0 = time.perf_counter()
                model = GraphClustering(name, n_clusters=k, random_state=args.seed).fit(data)
                labels.append(np.asarray(model.labels_))  # computes the chunked labels
                row[f"seconds_{kind}"] = round(time.perf_counter() - t0, 2)
                row.update({f"acc_{kind}": score_all(labels[-1], y)["acc"],
                            f"{kind}_stages": {s: round(v, 2) for s, v in model.timings_.items()}})
            row.update(anchor_sample=int(model.anchors_.info.get("sample_size", n)),
                       equal_labels=float(np.mean(labels[0] == labels[1])),
                       ari_between=float(adjusted_rand_score(*labels)))
            out.append(row)
            print(json.dumps(row), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
