"""ULGE / OULGE (Nie, Zhu, Li): reproduction of Table 5 and the speed claims.

What it measures (raw features, as the paper):

* **ACC** (Hungarian) and NMI of ``ulge`` and ``oulge`` on USPS and MNIST-70k, mean and
  std over seeds, beside Table 5. Per seed the BKHK anchors (m = 1024) and the
  adaptive anchor graph (k = 5) are built once and both solvers run on them (the two
  presets differ only in the solver); each embedding is rounded by k-means with
  ``n_init = 10``.
* **leaf vs exact search** of the anchor graph on the same anchors: time, fraction of
  rows of ``Z`` with the same support, ACC of ``ulge``.
* **speed**: BKHK (m = 1024) vs scikit-learn ``KMeans(n_clusters=1024, n_init=1,
  max_iter=100)`` on MNIST-70k; ``ulge`` end to end vs scikit-learn
  ``SpectralClustering(affinity="nearest_neighbors")`` (in a child process under a time
  cap; if it does not finish, "over cap" and both timed on a subset instead).
* **scaling** (``scaling=True``): ``ulge`` fit time on MNIST-extend prefixes
  (``graphclust.data.mnist_extend``) and the fitted log-log slope.

The machine is shared: compare ratios measured in the same process, not seconds.

``python -m benchmarks.ulge_paper --data-dir ../shared/data [--quick] [--seeds 10]
[--speed] [--scaling 70000,140000,280000]``
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

import graphclust
from graphclust_plugins.common.metric_acc import clustering_accuracy
from graphclust.data import load_dataset

from benchmarks._capped import OverCap, run_capped

__all__ = ["run", "run_speed", "run_scaling", "PAPER_ACC"]

#: Table 5 of the paper (ACC %, mean over 10 runs).
PAPER_ACC = {"usps": {"ulge": 64.5, "oulge": 67.4}, "mnist": {"ulge": 59.3, "oulge": 54.5}}
#: Table 4 (seconds, MATLAB, i5-3470) for reference.
PAPER_SECONDS = {"usps": 4.6, "mnist": 32.3}


def acc_score(y, labels) -> float:
    """ACC (Hungarian matching): the common bundle's ``clustering_accuracy``."""
    return clustering_accuracy(labels, y)


def _nmi(y, labels) -> float:
    from sklearn.metrics import normalized_mutual_info_score

    return float(normalized_mutual_info_score(y, labels))


def _kmeans(emb, k, seed):
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(emb)


def _acc_single_runs(emb, y, k, seed, runs=10, init="k-means++") -> float:
    """The paper's protocol: mean ACC of ``runs`` single k-means runs on one embedding
    (``init="random"``: k random points as the start, like MATLAB ``litekmeans``)."""
    from sklearn.cluster import KMeans

    return float(np.mean([acc_score(y, KMeans(n_clusters=k, n_init=1, init=init,
                                                random_state=1000 * seed + r).fit_predict(emb))
                          for r in range(runs)]))


def _parts(n_anchors=1024, k=5, search="exact"):
    from graphclust_plugins.ulge import BKHK, ULGE, AdaptiveAnchorGraph

    return (BKHK(n_anchors=n_anchors), AdaptiveAnchorGraph(n_neighbors=k, search=search),
            ULGE(alpha=0.01), ULGE(alpha=0.01, orthogonal=True))


def run(data_dir, quick=False, seeds=range(10), datasets=("usps", "mnist"),
        n_anchors=1024, leaf_compare=True, random_init=True, log=None,
        mean_loss=False) -> list[dict]:
    """ACC/NMI of ulge and oulge (and ulge with the leaf search) per dataset and seed.

    Returns one row per (dataset, preset, seed) plus ``leaf`` rows; keys: dataset,
    preset, seed, params, acc, nmi, paper_acc, fit_seconds, timings. ``random_init``
    adds the mean ACC of 10 single random-init k-means runs; ``log`` (a callable) gets
    one line per finished row. ``mean_loss`` adds ``ulge[mean_loss]`` and
    ``oulge[mean_loss]`` rows (ridge on the mean squared loss, α·n; not the paper's text).
    """
    from graphclust_plugins.ulge import AdaptiveAnchorGraph

    rows = []
    seeds = list(seeds)[:2] if quick else list(seeds)
    for name in datasets:
        X, y = load_dataset(name, data_dir)
        if quick:
            idx = np.sort(np.random.default_rng(0).choice(X.shape[0], min(3000, X.shape[0]),
                                                          replace=False))
            X, y = X[idx], y[idx]
        c = int(np.unique(y).size)
        m = min(n_anchors, 256) if quick else n_anchors
        for seed in seeds:
            bk, graph_b, ulge, oulge = _parts(m)
            ctx = graphclust.Context(seed=seed)
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", graphclust.ConvergenceWarning)
                anchors = bk.select(X, ctx)
            t_anchor = time.perf_counter() - t0
            t0 = time.perf_counter()
            graph = graph_b.build(X, anchors, ctx)
            t_graph = time.perf_counter() - t0
            solvers = [("ulge", ulge), ("oulge", oulge)]
            if mean_loss:
                from graphclust_plugins.ulge import ULGE

                solvers += [("ulge[mean_loss]", ULGE(alpha=0.01, mean_loss=True)),
                            ("oulge[mean_loss]", ULGE(alpha=0.01, orthogonal=True,
                                                      mean_loss=True))]
            for preset, solver in solvers:
                t0 = time.perf_counter()
                sol = solver.solve(graph, X, c, ctx)
                t_solve = time.perf_counter() - t0
                t0 = time.perf_counter()
                labels = _kmeans(sol.embedding, c, seed)
                t_round = time.perf_counter() - t0
                rows.append({
                    "dataset": name, "preset": preset, "seed": seed, "n": X.shape[0],
                    "params": {"n_anchors": m, "n_neighbors": 5, "alpha": 0.01,
                               "search": "exact"},
                    "acc": acc_score(y, labels), "nmi": _nmi(y, labels),
                    "acc_single_kmeans_mean": _acc_single_runs(sol.embedding, y, c, seed),
                    "paper_acc": PAPER_ACC.get(name, {}).get(preset.split("[")[0]),
                    "fit_seconds": t_anchor + t_graph + t_solve + t_round,
                    "timings": {"anchors": t_anchor, "graph": t_graph, "solver": t_solve,
                                "rounding": t_round},
                })
                if random_init:
                    rows[-1]["acc_single_random_mean"] = _acc_single_runs(
                        sol.embedding, y, c, seed, init="random")
                if log is not None:
                    r = rows[-1]
                    log(f"{name} {preset} seed {seed}: acc {100 * r['acc']:.1f} "
                        f"10x1 {100 * r['acc_single_kmeans_mean']:.1f} "
                        f"random {100 * r.get('acc_single_random_mean', float('nan')):.1f} "
                        f"fit {r['fit_seconds']:.1f} s")
            if leaf_compare:
                t0 = time.perf_counter()
                leaf = AdaptiveAnchorGraph(n_neighbors=5, search="leaf").build(X, anchors, ctx)
                t_leaf = time.perf_counter() - t0
                same = _same_support(graph.Z, leaf.Z)
                sol = ulge.solve(leaf, X, c, ctx)
                labels = _kmeans(sol.embedding, c, seed)
                rows.append({
                    "dataset": name, "preset": "ulge[leaf]", "seed": seed, "n": X.shape[0],
                    "params": {"n_anchors": m, "n_neighbors": 5, "alpha": 0.01,
                               "search": "leaf", "candidates": 10},
                    "acc": acc_score(y, labels), "nmi": _nmi(y, labels),
                    "paper_acc": PAPER_ACC.get(name, {}).get("ulge"),
                    "fit_seconds": None,
                    "timings": {"graph_exact": t_graph, "graph_leaf": t_leaf,
                                "same_support_rows": same},
                })
    return rows


def _same_support(Z1, Z2) -> float:
    n = Z1.shape[0]
    same = 0
    for i in range(n):
        a = Z1.indices[Z1.indptr[i]:Z1.indptr[i + 1]]
        b = Z2.indices[Z2.indptr[i]:Z2.indptr[i + 1]]
        same += set(a.tolist()) == set(b.tolist())
    return same / n


# -- speed ---------------------------------------------------------------------------
def _spectral_child(X, c, seed, eigen_solver, queue):
    from sklearn.cluster import SpectralClustering

    t, c0 = time.perf_counter(), time.process_time()
    labels = SpectralClustering(n_clusters=c, affinity="nearest_neighbors",
                                eigen_solver=eigen_solver,
                                random_state=seed).fit_predict(X)
    queue.put((time.perf_counter() - t, time.process_time() - c0, labels))


def _spectral_capped(X, c, seed, cap, eigen_solver=None):
    """(wall s, CPU s, labels) of SpectralClustering; over the cap (None, CPU used, None).

    ``eigen_solver`` is scikit-learn's (None = its default, ARPACK); ``"amg"`` needs
    pyamg and computes the same embedding much faster, to learn the peer's ACC on
    data where ARPACK does not finish within the cap."""
    out = run_capped(_spectral_child, (X, c, seed, eigen_solver), cap)
    if isinstance(out, OverCap):
        return None, out.cpu_seconds, None
    return out


def _ulge_fit(X, c, seed, m=1024, search="exact"):
    """Wall seconds, CPU seconds and labels of ``ulge`` end to end (anchors → k-means)."""
    bk, gb, ulge, _ = _parts(m, search=search)
    ctx = graphclust.Context(seed=seed)
    t, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", graphclust.ConvergenceWarning)
        anchors = bk.select(X, ctx)
    graph = gb.build(X, anchors, ctx)
    labels = _kmeans(ulge.solve(graph, X, c, ctx).embedding, c, seed)
    return time.perf_counter() - t, time.process_time() - c0, labels


def _kmeans_child(X, seed, queue):
    from sklearn.cluster import KMeans

    t, c0 = time.perf_counter(), time.process_time()
    km = KMeans(n_clusters=1024, n_init=1, max_iter=100, random_state=seed).fit(X)
    queue.put((time.perf_counter() - t, time.process_time() - c0, int(km.n_iter_)))


def run_speed(data_dir, seed=0, cap=600.0, subset=10000, kmeans=True,
              spectral=True, kmeans_subset=20000, eigen_solver=None) -> list[dict]:
    """BKHK vs sklearn KMeans(1024) and ulge vs sklearn SpectralClustering on MNIST-70k."""
    from graphclust_plugins.ulge import BKHK

    X, y = load_dataset("mnist", data_dir)
    c = int(np.unique(y).size)
    rows = []
    if kmeans:
        for n_sub in ([None, kmeans_subset] if kmeans_subset else [None]):
            Xk = X if n_sub is None else X[np.sort(np.random.default_rng(seed).choice(
                X.shape[0], n_sub, replace=False))]
            t, c0 = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", graphclust.ConvergenceWarning)
                BKHK(n_anchors=1024).select(Xk, graphclust.Context(seed=seed))
            t_bkhk, c_bkhk = time.perf_counter() - t, time.process_time() - c0
            km = run_capped(_kmeans_child, (Xk.astype(np.float32), seed), cap)
            km_used = km.cpu_seconds if isinstance(km, OverCap) else None
            km = None if isinstance(km, OverCap) else km
            rows.append({
                "dataset": "mnist" if n_sub is None else f"mnist[{n_sub}]", "n": Xk.shape[0],
                "preset": "bkhk(m=1024)", "fit_seconds": t_bkhk, "cpu_seconds": c_bkhk,
                "peer": "sklearn KMeans(1024, n_init=1, max_iter=100)",
                "peer_seconds": None if km is None else km[0],
                "peer_cpu_seconds": None if km is None else km[1],
                "peer_n_iter": None if km is None else km[2],
                "speedup": None if km is None else km[0] / t_bkhk,
                "cpu_speedup": None if km is None else km[1] / c_bkhk,
                "note": "" if km is not None else
                f"peer over cap ({cap:.0f} s wall, {km_used} CPU s used)"})
    if spectral:
        for n_sub in ([None, subset] if subset else [None]):
            Xs, ys = (X, y) if n_sub is None else (lambda i: (X[i], y[i]))(np.sort(
                np.random.default_rng(seed).choice(X.shape[0], n_sub, replace=False)))
            t_u, c_u, lab_u = _ulge_fit(Xs, c, seed)
            t_s, c_s, lab_s = _spectral_capped(Xs, c, seed, cap, eigen_solver)
            rows.append({
                "dataset": "mnist" if n_sub is None else f"mnist[{n_sub}]", "preset": "ulge",
                "n": Xs.shape[0], "fit_seconds": t_u, "cpu_seconds": c_u,
                "acc": acc_score(ys, lab_u),
                "peer": "sklearn SpectralClustering(nearest_neighbors"
                        + (f", eigen_solver={eigen_solver!r})" if eigen_solver else ")"),
                "peer_seconds": t_s, "peer_cpu_seconds": c_s,
                "peer_acc": None if lab_s is None else acc_score(ys, lab_s),
                "speedup": None if t_s is None else t_s / t_u,
                "cpu_speedup": None if c_s is None else c_s / c_u,
                "note": "" if t_s is not None else
                f"peer over cap ({cap:.0f} s wall; cpu_speedup is a lower bound)"})
            if t_s is not None:
                break  # the full set finished: no subset needed
    return rows


def run_scaling(data_dir, sizes=(70000, 140000, 280000, 630000), seed=0,
                search="exact") -> list[dict]:
    """``ulge`` fit time on MNIST-extend prefixes and the fitted log-log slope."""
    from graphclust.data import mnist_extend

    X0, y0 = load_dataset("mnist", data_dir)
    rows = []
    for n in sizes:
        X, y = mnist_extend(X0, y0, n=n)
        t, _, labels = _ulge_fit(X, 10, seed, search=search)
        rows.append({"dataset": f"mnist-extend[{n}]", "preset": f"ulge[{search}]", "n": n,
                     "fit_seconds": t, "acc": acc_score(y, labels)})
        del X
    if len(rows) >= 2:
        slope = np.polyfit(np.log([r["n"] for r in rows]),
                           np.log([r["fit_seconds"] for r in rows]), 1)[0]
        for r in rows:
            r["loglog_slope"] = float(slope)
    return rows


def _table(rows) -> str:
    out = ["| dataset | preset | n | seeds | ACC % (mean ± std) | ACC % 10×1 k-means++ "
           "| ACC % 10×1 random-init k-means | paper ACC % | NMI | fit s |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["dataset"], r["preset"]), []).append(r)
    for (ds, preset), rs in groups.items():
        accs = np.array([r["acc"] for r in rs]) * 100
        nmis = np.array([r["nmi"] for r in rs])
        fits = [r["fit_seconds"] for r in rs if r["fit_seconds"] is not None]
        extra = ""
        if preset.endswith("[leaf]"):
            extra = (f" (same support {np.mean([r['timings']['same_support_rows'] for r in rs]):.3f};"
                     f" graph exact {np.mean([r['timings']['graph_exact'] for r in rs]):.1f} s"
                     f" vs leaf {np.mean([r['timings']['graph_leaf'] for r in rs]):.1f} s)")
        single = [r["acc_single_kmeans_mean"] for r in rs if "acc_single_kmeans_mean" in r]
        single_txt = (f"{100 * np.mean(single):.1f} ± {100 * np.std(single):.1f}"
                      if single else "–")
        rand = [r["acc_single_random_mean"] for r in rs if "acc_single_random_mean" in r]
        rand_txt = f"{100 * np.mean(rand):.1f} ± {100 * np.std(rand):.1f}" if rand else "–"
        out.append(f"| {ds} | {preset}{extra} | {rs[0]['n']} | {len(rs)} | "
                   f"{accs.mean():.1f} ± {accs.std():.1f} | {single_txt} | {rand_txt} | "
                   f"{rs[0]['paper_acc']} | "
                   f"{nmis.mean():.3f} | {np.mean(fits) if fits else float('nan'):.1f} |")
    return "\n".join(out)


def _main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--datasets", default="usps,mnist")
    ap.add_argument("--no-acc", action="store_true")
    ap.add_argument("--no-leaf", action="store_true", help="skip the leaf-search rows")
    ap.add_argument("--mean-loss", action="store_true",
                    help="also run ulge/oulge with mean_loss=True (α·n)")
    ap.add_argument("--no-random-init", action="store_true",
                    help="skip the random-init single k-means protocol")
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("--speed-parts", default="kmeans,spectral")
    ap.add_argument("--cap", type=float, default=600.0)
    ap.add_argument("--scaling", default="")
    ap.add_argument("--search", default="exact")
    ap.add_argument("--peer-eigen-solver", default=None, choices=["arpack", "lobpcg", "amg"],
                    help="eigen_solver of the SpectralClustering peer (default: scikit-learn's, "
                         "ARPACK); 'amg' needs pyamg")
    a = ap.parse_args()
    from graphclust.data import find_data_dir

    data_dir = a.data_dir or find_data_dir()
    if not a.no_acc:
        rows = run(data_dir, quick=a.quick, seeds=range(a.seeds),
                   datasets=tuple(a.datasets.split(",")), leaf_compare=not a.no_leaf,
                   random_init=not a.no_random_init, mean_loss=a.mean_loss,
                   log=lambda line: print(line, file=sys.stderr, flush=True))
        print(_table(rows), flush=True)
    if a.speed:
        parts = a.speed_parts.split(",")
        for r in run_speed(data_dir, cap=a.cap, kmeans="kmeans" in parts,
                           spectral="spectral" in parts, eigen_solver=a.peer_eigen_solver):
            print(r, flush=True)
    if a.scaling:
        for r in run_scaling(data_dir, sizes=[int(s) for s in a.scaling.split(",")],
                             search=a.search):
            print(r, flush=True)


if __name__ == "__main__":
    _main()
