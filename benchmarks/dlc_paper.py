"""Reproduction of Shao, Li, Ding, Fu — Deep Linear Coding (IJCAI 2015), dlc bundle.

* Accuracy: ``dlc`` (two layers) and ``slc`` presets, mean ± std over seeds, vs Table 2
  (PenDigits, Letter, MNIST) and Table 3 (COIL20, with NMI). Unit-length samples as in
  the paper: a scikit-learn ``Normalizer`` in front of the estimator.
* Variant ``dlc+rownorm`` (not the paper's setting): the same, with the k-means rounding
  on unit-length rows of the codes (``rounding={"normalize_rows": True}``).
* Speed: ``dlc`` on MNIST-70k vs scikit-learn ``SpectralClustering(affinity=
  "nearest_neighbors")`` in the same run (the peer in a child process, capped).
* Memory: ``dlc`` on MNIST-extend (630 000 images) in a fresh child process; peak RSS.

``python -m benchmarks.dlc_paper --data-dir ../shared/data [--quick] [--seeds 5]
[--only acc,speed,memory] [--datasets pendigits,letter,mnist,coil20] [--cap SECONDS]``

``--cap`` bounds the peer's run in ``speed`` and the child's run in ``memory``.
"""

from __future__ import annotations

import argparse
import resource
import time
import warnings

import numpy as np
from sklearn.metrics import normalized_mutual_info_score

import graphclust
from graphclust_plugins.common.metric_acc import clustering_accuracy
from graphclust.data import load_dataset

from benchmarks._capped import OverCap, run_capped

PAPER_ACC = {  # Table 2 (Ours-L1 / Ours-L2) and Table 3 (COIL20), percent
    ("pendigits", "slc"): 79.34, ("pendigits", "dlc"): 80.18,
    ("letter", "slc"): 33.98, ("letter", "dlc"): 35.15,
    ("mnist", "slc"): 65.34, ("mnist", "dlc"): 66.48,
    ("coil20", "slc"): 71.04, ("coil20", "dlc"): 73.61,
}
PAPER_NMI = {("coil20", "slc"): 0.853, ("coil20", "dlc"): 0.884}
PAPER_SECONDS = {  # Table 4 / Table 3 (their machine, Matlab)
    ("pendigits", "slc"): 3.11, ("pendigits", "dlc"): 6.83,
    ("letter", "slc"): 4.64, ("letter", "dlc"): 8.39,
    ("mnist", "slc"): 17.41, ("mnist", "dlc"): 28.62,
    ("coil20", "slc"): 0.31, ("coil20", "dlc"): 0.64,
}


def acc_score(y, labels) -> float:
    """ACC (Hungarian matching): the common bundle's ``clustering_accuracy``."""
    return clustering_accuracy(labels, y)


def _unit_rows(X) -> np.ndarray:
    """float32 copy with unit-length rows (what the paper's preprocessing does)."""
    from sklearn.preprocessing import normalize

    return normalize(np.asarray(X, dtype=np.float32))


def _estimator(preset, c, seed):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import Normalizer

    overrides = {}
    if preset.endswith("+rownorm"):  # variant: unit-length codes before the k-means rounding
        preset = preset[: -len("+rownorm")]
        overrides["rounding"] = {"normalize_rows": True}
    return make_pipeline(Normalizer(), graphclust.GraphClustering(
        preset, n_clusters=c, random_state=seed, **overrides))


def _fit(preset, X, c, seed):
    model = _estimator(preset, c, seed)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X)
    return time.perf_counter() - t, model[-1]


def run(data_dir, quick=False, seeds=range(5), datasets=("pendigits", "letter", "mnist", "coil20"),
        presets=("dlc",)) -> list[dict]:
    """ACC / NMI of the presets, one row per (dataset, preset), mean over ``seeds``."""
    seeds = list(seeds)[:1] if quick else list(seeds)
    rows = []
    for name in datasets:
        X, y = load_dataset(name, data_dir)
        if quick and X.shape[0] > 5000:
            idx = np.sort(np.random.default_rng(0).choice(X.shape[0], 5000, replace=False))
            X, y = X[idx], y[idx]
        X = np.asarray(X, dtype=np.float32)
        c = int(np.unique(y).size)
        for preset in presets:
            accs, nmis, secs = [], [], []
            for seed in seeds:
                t, est = _fit(preset, X, c, seed)
                accs.append(acc_score(y, est.labels_))
                nmis.append(normalized_mutual_info_score(y, est.labels_))
                secs.append(t)
            rows.append({
                "dataset": name, "preset": preset, "n": int(X.shape[0]), "d": int(X.shape[1]),
                "params": "m=1000, k=5, λ=σ=1, T=5, unit-length rows",
                "runs": len(seeds), "acc": float(np.mean(accs)), "acc_std": float(np.std(accs)),
                "nmi": float(np.mean(nmis)), "fit_seconds": float(np.mean(secs)),
                "paper_acc": PAPER_ACC.get((name, preset.split("+")[0])),
                "paper_nmi": PAPER_NMI.get((name, preset.split("+")[0])),
                "paper_seconds": PAPER_SECONDS.get((name, preset.split("+")[0])),
            })
    return rows


# -- speed ---------------------------------------------------------------------------
def _spectral_child(X, c, seed, queue):
    from sklearn.cluster import SpectralClustering

    t = time.perf_counter()
    labels = SpectralClustering(n_clusters=c, affinity="nearest_neighbors",
                                random_state=seed).fit_predict(X)
    queue.put((time.perf_counter() - t, labels))


def _spectral_capped(X, c, seed, cap):
    out = run_capped(_spectral_child, (X, c, seed), cap)
    return (None, None) if isinstance(out, OverCap) else out


def run_speed(data_dir, seed=0, cap=600.0, quick=False) -> list[dict]:
    """``dlc`` vs sklearn SpectralClustering(nearest_neighbors) on MNIST-70k, same run."""
    X, y = load_dataset("mnist", data_dir)
    if quick:
        X, y = X[:5000], y[:5000]
    X = _unit_rows(X)  # both methods on the same unit-length data
    c = int(np.unique(y).size)
    t_d, est = _fit("dlc", X, c, seed)
    t_s, lab_s = _spectral_capped(X, c, seed, cap)
    return [{
        "dataset": "mnist" if not quick else "mnist[5000]", "preset": "dlc", "n": int(X.shape[0]),
        "fit_seconds": t_d, "acc": acc_score(y, est.labels_),
        "timings": dict(getattr(est, "timings_", {}) or {}),
        "peer": "sklearn SpectralClustering(affinity='nearest_neighbors')",
        "peer_seconds": t_s, "peer_acc": None if lab_s is None else acc_score(y, lab_s),
        "speedup": None if t_s is None else t_s / t_d,
        "speedup_lower_bound": cap / t_d if t_s is None else None,
        "note": "" if t_s is not None else f"peer over cap ({cap:.0f} s)",
    }]


# -- memory --------------------------------------------------------------------------
def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _extend_child(data_dir, n, seed, queue):
    from graphclust.data import mnist_extend

    X0, y0 = load_dataset("mnist", data_dir)
    base = _peak_rss_mb()
    X, y = mnist_extend(X0, y0, n)
    del X0
    # unit-length rows, float32, in place block by block (no float64 copy of 630k x 784)
    Xf = np.empty(X.shape, dtype=np.float32)
    for s in range(0, X.shape[0], 65536):
        B = X[s:s + 65536].astype(np.float32)
        nrm = np.linalg.norm(B, axis=1, keepdims=True)
        nrm[nrm == 0] = 1.0
        Xf[s:s + 65536] = B / nrm
    del X
    data_mb = _peak_rss_mb()
    est = graphclust.GraphClustering("dlc", n_clusters=10, random_state=seed)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(Xf)
    secs = time.perf_counter() - t
    queue.put({"seconds": secs, "acc": acc_score(y, est.labels_), "peak_rss_mb": _peak_rss_mb(),
               "rss_before_fit_mb": data_mb, "rss_start_mb": base,
               "timings": dict(getattr(est, "timings_", {}) or {})})


def run_memory(data_dir, n=630000, seed=0, cap=1800.0) -> list[dict]:
    """``dlc`` on MNIST-extend (``n`` images) in a fresh process; peak resident memory."""
    try:
        out = run_capped(_extend_child, (str(data_dir), n, seed), cap, start_method="spawn")
    except RuntimeError as exc:
        return [{"dataset": f"mnist-extend[{n}]", "preset": "dlc", "note": f"child failed ({exc})"}]
    if isinstance(out, OverCap):
        return [{"dataset": f"mnist-extend[{n}]", "preset": "dlc", "note": f"over cap {cap:.0f} s"}]
    return [{"dataset": f"mnist-extend[{n}]", "preset": "dlc", "n": n, "fit_seconds": out["seconds"],
             "acc": out["acc"], "peak_rss_mb": out["peak_rss_mb"],
             "rss_before_fit_mb": out["rss_before_fit_mb"], "timings": out["timings"],
             "target": "peak < 8192 MB"}]


# -- report --------------------------------------------------------------------------
def _fmt(v, spec=".2f"):
    return "–" if v is None else format(v, spec)


def _table(rows) -> str:
    lines = []
    acc = [r for r in rows if "paper_acc" in r]
    if acc:
        lines += ["| dataset | preset | n | runs | ACC % (ours) | ACC % (paper) | NMI (ours) | "
                  "NMI (paper) | fit s (ours, 2 busy cores) | s (paper) |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in acc:
            lines.append(
                f"| {r['dataset']} | {r['preset']} | {r['n']} | {r['runs']} | "
                f"{100 * r['acc']:.2f} ± {100 * r['acc_std']:.2f} | {_fmt(r['paper_acc'])} | "
                f"{r['nmi']:.3f} | {_fmt(r['paper_nmi'], '.3f')} | {r['fit_seconds']:.1f} | "
                f"{_fmt(r['paper_seconds'])} |")
    for r in rows:
        if "peer" in r:
            lines += ["", f"Speed on {r['dataset']} (n={r['n']}): dlc {r['fit_seconds']:.1f} s "
                      f"(ACC {100 * r['acc']:.2f}%), {r['peer']} "
                      f"{_fmt(r['peer_seconds'], '.1f')} s (ACC "
                      f"{_fmt(None if r['peer_acc'] is None else 100 * r['peer_acc'])}%), speed-up "
                      f"{_fmt(r['speedup'], '.1f')}× {r['note']}"
                      + (f" (≥ {r['speedup_lower_bound']:.1f}×)" if r.get("speedup_lower_bound") else "")]
        if "peak_rss_mb" in r or r.get("dataset", "").startswith("mnist-extend"):
            if "peak_rss_mb" in r:
                lines += ["", f"Memory on {r['dataset']}: peak RSS {r['peak_rss_mb']:.0f} MB "
                          f"(data loaded and normalised: {r['rss_before_fit_mb']:.0f} MB), "
                          f"fit {r['fit_seconds']:.0f} s, ACC {100 * r['acc']:.2f}% (target: peak < 8192 MB)"]
            else:
                lines += ["", f"Memory on {r['dataset']}: {r['note']}"]
    return "\n".join(lines)


def _main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--only", default="acc,speed")
    ap.add_argument("--datasets", default="pendigits,letter,mnist,coil20")
    ap.add_argument("--presets", default="dlc")
    ap.add_argument("--cap", type=float, default=600.0)
    ap.add_argument("--extend-n", type=int, default=630000)
    args = ap.parse_args()
    only = set(args.only.split(","))
    rows = []
    if "acc" in only:
        rows += run(args.data_dir, quick=args.quick, seeds=range(args.seeds),
                    datasets=tuple(args.datasets.split(",")), presets=tuple(args.presets.split(",")))
    if "speed" in only:
        rows += run_speed(args.data_dir, cap=args.cap, quick=args.quick)
    if "memory" in only:
        rows += run_memory(args.data_dir, n=args.extend_n, cap=args.cap)
    print(_table(rows))


if __name__ == "__main__":
    _main()
