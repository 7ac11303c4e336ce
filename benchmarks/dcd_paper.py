"""DCD (Yang & Oja, ICML 2012): reproduction of the purity claims, and DCD at scale.

What it measures (raw features — the paper used scattering features, so absolute
purities sit below its Table 2):

* USPS, PenDigits, MNIST-70k: ``dcd`` vs ``ncut`` **on the same binary symmetric 10-NN
  graph** (built once, handed to both as a precomputed graph). The paper's central
  claim: DCD purity > Ncut purity on every data set. ``fit_seconds`` of ``dcd`` counts
  the graph build plus the solver (what fitting the preset from ``X`` costs).
* MNIST-70k: ``bkhk-dcd`` (BKHK anchors + adaptive-neighbour anchor graph, DCD on the
  m x m anchor-level graph, lifted through Z), fitted from ``X``; speed-up vs ``dcd``.
* MNIST-extend (630 000 points, ``graphclust.data.mnist_extend``): ``bkhk-dcd`` in a
  fresh child process, with its peak memory beyond the input (``ru_maxrss`` after fit
  minus after loading).
* Peer: scikit-learn ``KMeans(n_init=10)`` timed in the same process (ratios, not
  absolute seconds, are comparable on a shared machine).

``python -m benchmarks.dcd_paper --data-dir ../shared/data [--quick] [--extend]``
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time
import warnings

import numpy as np

import graphclust
from graphclust.data import load_dataset

__all__ = ["run", "PAPER_PURITY"]

#: Table 2 of the paper (purity; scattering features).
PAPER_PURITY = {"usps": {"ncut": 0.74, "dcd": 0.81},
                "pendigits": {"ncut": 0.80, "dcd": 0.89},
                "mnist": {"ncut": 0.77, "dcd": 0.97}}

DATASETS = ("usps", "pendigits", "mnist")


def _scores(labels, y):
    from graphclust import resolve_part

    return {m: float(resolve_part({"name": m}, "metric").score(labels, y))
            for m in ("purity", "acc", "nmi")}


def _subsample(X, y, n, seed):
    if n is None or X.shape[0] <= n:
        return X, y
    idx = np.sort(np.random.default_rng(seed).choice(X.shape[0], n, replace=False))
    return X[idx], y[idx]


def _kmeans_peer(X, k, seed):
    from sklearn.cluster import KMeans

    t = time.perf_counter()
    labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(X)
    return labels, time.perf_counter() - t


def _fit(spec, X, k, seed, **overrides):
    t = time.perf_counter()
    c = time.process_time()
    est = graphclust.GraphClustering(spec, n_clusters=k, random_state=seed, **overrides).fit(X)
    est.cpu_seconds_ = time.process_time() - c  # less noisy than wall time on a shared machine
    return est, time.perf_counter() - t


def _row(dataset, preset, n, params, labels, y, seconds, **extra):
    row = {"dataset": dataset, "preset": preset, "n": int(n), "params": params,
           **_scores(labels, y), "fit_seconds": round(float(seconds), 2)}
    row.update(extra)
    return row


def run(data_dir, quick: bool = False, seeds=(0,), datasets=DATASETS, extend: bool = False,
        knn_method: str = "exact") -> list[dict]:
    """Run the DCD reproduction; returns one row per (data set, preset, seed).

    ``quick`` subsamples every data set to 2000 points and caps DCD at 100 iterations per
    run (a smoke test, not a reproduction). ``extend`` adds ``bkhk-dcd`` on MNIST-extend
    (630 000 points; several minutes). No files are written.
    """
    from graphclust_plugins.common.graph_knn import KNNGraph

    rows: list[dict] = []
    solver_over = {"max_iter": 100} if quick else {}
    for name in datasets:
        X, y = load_dataset(name, data_dir)
        X = np.asarray(X, dtype=np.float32)
        k = int(np.unique(y).size)
        for seed in seeds:
            Xs, ys = _subsample(X, y, 2000 if quick else None, seed)
            n = Xs.shape[0]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", graphclust.GraphClustWarning)
                t = time.perf_counter()
                graph = KNNGraph(n_neighbors=10, weight="binary", method=knn_method).build(
                    Xs, None, graphclust.Context(seed))
                t_graph = time.perf_counter() - t
                A = graph.adjacency
                km_labels, t_km = _kmeans_peer(Xs, k, seed)
                ncut, t_ncut = _fit("ncut", Xs, k, seed, graph=A)
                dcd, t_dcd = _fit("dcd", Xs, k, seed, graph=A, solver=dict(solver_over))
            info = dcd.solution_.info
            common = {"graph_seconds": round(t_graph, 2), "kmeans_seconds": round(t_km, 2),
                      "graph_nnz": int(A.nnz)}
            rows.append(_row(name, "kmeans (sklearn peer)", n, "n_init=10", km_labels, ys,
                             t_km, seed=seed))
            rows.append(_row(name, "ncut", n, f"binary 10-NN ({knn_method})", ncut.labels_, ys,
                             t_graph + t_ncut, seed=seed, solver_seconds=round(t_ncut, 2),
                             **common))
            rows.append(_row(name, "dcd", n, f"binary 10-NN ({knn_method})", dcd.labels_, ys,
                             t_graph + t_dcd, seed=seed, solver_seconds=round(t_dcd, 2),
                             selected=info.get("selected"), kl=info.get("kl"),
                             solver_cpu_seconds=round(dcd.cpu_seconds_, 2),
                             iterations=int(dcd.solution_.n_iter), **common))
            if name == "mnist" or quick:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", graphclust.GraphClustWarning)
                    over = {"solver": dict(solver_over)}
                    if quick:
                        over["anchors"] = {"n_anchors": 256}
                    bk, t_bk = _fit("bkhk-dcd", Xs, k, seed, **over)
                rows.append(_row(name, "bkhk-dcd", n, "m=256" if quick else "m=1024",
                                 bk.labels_, ys, t_bk, seed=seed,
                                 speedup_vs_dcd=round((t_graph + t_dcd) / t_bk, 1),
                                 cpu_seconds=round(bk.cpu_seconds_, 2),
                                 kmeans_seconds=round(t_km, 2),
                                 timings={k_: round(v, 2) for k_, v in bk.timings_.items()},
                                 selected=bk.solution_.info.get("selected")))
    if extend:
        for seed in seeds:
            rows.append(_extend_in_child(str(data_dir), seed, quick))
    return rows


def _extend_job(data_dir, seed, quick, queue):
    import resource

    from graphclust.data import mnist_extend

    X, y = load_dataset("mnist", data_dir)
    X, y = mnist_extend(X, y, n=70000 * 2 if quick else None)
    X = np.asarray(X, dtype=np.float32)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", graphclust.GraphClustWarning)
        t = time.perf_counter()
        est = graphclust.GraphClustering("bkhk-dcd", n_clusters=10, random_state=seed).fit(X)
        secs = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    row = _row("mnist-extend", "bkhk-dcd", X.shape[0], "m=1024", est.labels_, y, secs,
               seed=seed, input_mb=round(X.nbytes / 2**20, 1),
               peak_beyond_input_mb=round((peak - base) / 1024, 1),
               timings={k: round(v, 2) for k, v in est.timings_.items()})
    queue.put(row)


def _extend_in_child(data_dir, seed, quick):
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_extend_job, args=(data_dir, seed, quick, queue))
    proc.start()
    row = queue.get()
    proc.join()
    return row


def markdown(rows: list[dict]) -> str:
    head = ("| data set | n | method | purity | paper purity | ACC | NMI | fit s | notes |\n"
            "|---|---|---|---|---|---|---|---|---|")
    out = [head]
    for r in rows:
        paper = PAPER_PURITY.get(r["dataset"], {}).get(r["preset"], "")
        notes = []
        for key in ("graph_seconds", "speedup_vs_dcd", "selected", "peak_beyond_input_mb",
                    "kmeans_seconds"):
            if key in r:
                notes.append(f"{key}={r[key]}")
        out.append(f"| {r['dataset']} | {r['n']} | {r['preset']} | {r['purity']:.3f} | {paper} | "
                   f"{r['acc']:.3f} | {r['nmi']:.3f} | {r['fit_seconds']} | {', '.join(notes)} |")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default="../shared/data")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--extend", action="store_true", help="also bkhk-dcd on MNIST-extend 630k")
    p.add_argument("--datasets", default=",".join(DATASETS))
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--knn-method", default="exact", choices=["exact", "approx"])
    a = p.parse_args(argv)
    datasets = tuple(d for d in a.datasets.split(",") if d)
    rows = run(a.data_dir, quick=a.quick, seeds=tuple(range(a.seeds)), datasets=datasets,
               extend=a.extend, knn_method=a.knn_method)
    print(markdown(rows))


if __name__ == "__main__":
    main()
