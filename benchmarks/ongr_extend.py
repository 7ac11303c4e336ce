"""ONGR-R on MNIST-extend (630 000 images) under the paper's protocol (Section 4.3).

Han, Xiong, Nie (IJCAI 2017), Table 4: ONGR-R on MNIST-extend ACC 59.26 / NMI 56.39.

Steps (each a sub-command; results are appended as JSON lines to ``--log`` so that an
interrupted run keeps what it measured and a re-run skips settings already done)::

    # 1. the Section 4.1 preprocessing, once, cached as float32 .npy in /tmp
    python -m benchmarks.ongr_extend prepare --data-dir ../shared/data
    # 2. the grid, each setting run once on the random anchors of seed 0, both (.)_+ rules
    python -m benchmarks.ongr_extend search [--m 300 600 900 1200] [--s 2 3 4 5] [--lam 1]
    # 3. given settings (e.g. the selected ones, the defaults) end to end through
    #    GraphClustering.fit on several anchor seeds, with fit time and memory
    python -m benchmarks.ongr_extend rerun --given 1200 3 1 max --seeds 0 1 2
    python -m benchmarks.ongr_extend rerun --defaults --seeds 0
    # more anchor draws of one setting through the solver path (same numbers as a fit)
    python -m benchmarks.ongr_extend search --m 1200 --s 2 --lam 1 --positive-part max --seed 3
    # 4. the tables
    python -m benchmarks.ongr_extend report

Preprocessing (``prepare``)
---------------------------
MNIST (70 000 × 784, uint8) → ``graphclust.data.mnist_extend`` (630 000 rows) → per-feature
min-max scaling to [0, 1] (what ``MinMaxScaler`` does; constant features map to 0) → PCA
keeping 90 % of the variance. The PCA is **exact on all 630 000 rows**: the covariance
matrix (784 × 784) is accumulated in row blocks (float32 products of the centred block,
summed in float64), eigen-decomposed, and the smallest number of leading components whose
explained-variance ratio reaches 0.90 is kept (scikit-learn's rule for
``PCA(n_components=0.9)``). The data are then projected in blocks. The script checks the
kept variance on the projected array itself (sum of the column variances of the output /
total variance of the scaled input) and stores it in the ``.json`` beside the cache.
Peak memory: the uint8 images (0.5 GB) + one float32 block + the output (~0.23 GB).

Search (``search``)
-------------------
Section 4.3: every setting is run once ("given the pre-selected points, ONGR is the only
method that has stable performance"), one random anchor draw per m (seed 0), best setting
reported. Within one m the anchors are drawn once and the s nearest anchors computed once
for the largest s; the graph for a smaller s uses the first s of them and its own
self-tuning bandwidth — exactly what ``ongr-anchor`` builds (same code as
``benchmarks.ongr_paper.search``). The solver is ``ongr`` itself.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

PAPER = (59.26, 56.39)  # Table 4, ONGR-R on MNIST-extend (ACC, NMI) in %
PAPER_SECONDS = 147.41  # Table 3
CACHE = "/tmp/ongr_mnist_extend_pca90"
LOG = "/tmp/ongr_extend_log.jsonl"


def _say(*a):
    print(*a, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- prepare
def prepare(data_dir, cache=CACHE, keep=0.90, block=16384):
    """Build and cache the PCA-90 % MNIST-extend array; return its info dict."""
    from graphclust.data import load_dataset, mnist_extend

    t0 = time.perf_counter()
    X0, y0 = load_dataset("mnist", data_dir)
    X, y = mnist_extend(np.asarray(X0), np.asarray(y0))
    del X0
    n, d = X.shape
    lo = X.min(0).astype(np.float64)
    rng_ = X.max(0).astype(np.float64) - lo
    scale = np.where(rng_ > 0, 1.0 / np.where(rng_ > 0, rng_, 1.0), 0.0)

    def scaled(i):
        return ((X[i:i + block].astype(np.float32) - lo.astype(np.float32))
                * scale.astype(np.float32))

    # pass 1: mean; pass 2: centred Gram in float32 blocks, summed in float64
    mean = np.zeros(d)
    for i in range(0, n, block):
        mean += scaled(i).sum(0, dtype=np.float64)
    mean /= n
    mean32 = mean.astype(np.float32)
    C = np.zeros((d, d))
    for i in range(0, n, block):
        B = scaled(i) - mean32
        C += (B.T @ B).astype(np.float64)
    C /= n - 1
    evals, evecs = np.linalg.eigh(C)
    order = np.argsort(evals)[::-1]
    evals, evecs = np.clip(evals[order], 0, None), evecs[:, order]
    total = float(evals.sum())
    ratio = np.cumsum(evals) / total
    k = int(np.searchsorted(ratio, keep, side="left") + 1)  # smallest k with ratio >= keep
    V = evecs[:, :k].astype(np.float32)
    out = np.empty((n, k), dtype=np.float32)
    for i in range(0, n, block):
        out[i:i + block] = (scaled(i) - mean32) @ V
    kept = float(out.astype(np.float64).var(0, ddof=1).sum() / total)
    info = {"n": int(n), "d_in": int(d), "d_pca": k, "explained_ratio_eig": float(ratio[k - 1]),
            "explained_ratio_measured": kept, "keep": keep,
            "method": "exact PCA: covariance of all rows accumulated in blocks, eigh",
            "seconds": time.perf_counter() - t0}
    np.save(cache + "_X.npy", out)
    np.save(cache + "_y.npy", np.asarray(y))
    with open(cache + ".json", "w") as fh:
        json.dump(info, fh, indent=1)
    return info


def load_cache(cache=CACHE):
    X = np.load(cache + "_X.npy")
    y = np.load(cache + "_y.npy")
    with open(cache + ".json") as fh:
        info = json.load(fh)
    return X, y, info


# --------------------------------------------------------------------------- log
def _read_log(path):
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _append(path, row):
    with open(path, "a") as fh:
        fh.write(json.dumps(row, default=float) + "\n")


def _key(r):
    return (r["kind"], int(r["m"]), int(r["s"]), float(r["lam"]), r["positive_part"],
            int(r["seed"]))


# --------------------------------------------------------------------------- search
def search(X, y, ms, ss, lams, pps=("max", "abs"), seed=0, log=LOG, budget=None):
    """Grid on one random anchor draw; appends one row per setting to ``log``."""
    import graphclust
    from graphclust.neighbors import nearest_anchors
    from graphclust_plugins.ongr.anchor_graph import gaussian_rows_from_distances
    from graphclust_plugins.ongr.solver import OngrSolver

    from benchmarks.ongr_paper import _ensure_anchor_selectors, _quiet, scores

    _ensure_anchor_selectors()
    done = {_key(r) for r in _read_log(log)}
    reg = graphclust.get_registry()
    ctx = graphclust.Context(seed=seed)
    t_start = time.perf_counter()
    with warnings.catch_warnings():
        _quiet()
        for m in ms:
            todo = [(s, lam, pp) for s in ss for lam in lams for pp in pps
                    if ("grid", m, s, float(lam), pp, seed) not in done]
            if not todo:
                continue
            t = time.perf_counter()
            anchors = reg.anchors.get("random")(n_anchors=m).select(X, ctx)
            idx, d2 = nearest_anchors(X, anchors.points, min(max(ss), m))
            t_nn = time.perf_counter() - t
            _say(f"m={m}: anchors + {max(ss)} nearest in {t_nn:.0f}s")
            for s in sorted({s for s, _, _ in todo}):
                Z, sigma = gaussian_rows_from_distances(idx[:, :s], d2[:, :s], m)
                graph = graphclust.AnchorGraph(Z, anchors=anchors, info={"sigma": sigma})
                for s_, lam, pp in todo:
                    if s_ != s:
                        continue
                    if budget is not None and time.perf_counter() - t_start > budget:
                        _say("time budget reached")
                        return
                    t = time.perf_counter()
                    sol = OngrSolver(lam=lam, positive_part=pp,
                                     track_objective=False).solve(graph, None, 10, ctx)
                    labels = sol.soft.argmax(1)
                    row = {"kind": "grid", "m": m, "s": s, "lam": float(lam),
                           "positive_part": pp, "seed": seed, **scores(y, labels),
                           "n_iter": int(sol.n_iter), "solver_seconds": time.perf_counter() - t,
                           "nn_seconds": t_nn}
                    _append(log, row)
                    _say(f"  m={m} s={s} lam={lam:g} {pp}: ACC {100 * row['acc']:.2f} "
                         f"NMI {100 * row['nmi']:.2f} ({row['n_iter']} it, "
                         f"{row['solver_seconds']:.0f}s)")


# --------------------------------------------------------------------------- rerun
def rerun(X, y, settings, seeds, log=LOG):
    """Fit ``ongr-r`` end to end (GraphClustering.fit) per setting and anchor seed.

    ``settings``: dicts ``{m, s, lam, positive_part, kind}``; ``kind`` = "given" or
    "defaults" (the preset as is, plus the positive part). Records ACC/NMI, fit seconds,
    the estimator's stage timings and the peak resident memory above the resident size
    before ``fit`` (``fit_extra_mb``; the input array is already resident).
    """
    from benchmarks.ongr_paper import _overrides, fit_preset, scores

    done = {_key(r) for r in _read_log(log)}
    for st in settings:
        for seed in seeds:
            key = (st["kind"], st["m"], st["s"], float(st["lam"]), st["positive_part"], seed)
            if key in done:
                continue
            if st["kind"] == "defaults":
                ov = {"solver": {"positive_part": st["positive_part"]}}
            else:
                ov = _overrides(st)
            labels, model, sec = fit_preset("ongr-r", X, seed, **ov)
            row = {"kind": st["kind"], "m": int(model.anchors_.n_anchors), "s": st["s"],
                   "lam": float(st["lam"]), "positive_part": st["positive_part"], "seed": seed,
                   **scores(y, labels), "n_iter": int(model.solution_.n_iter),
                   "fit_seconds": sec, "fit_extra_mb": model.fit_extra_mb_,
                   "timings": {k: float(v) for k, v in dict(model.timings_).items()},
                   "n_zero_rows": model.solution_.info.get("n_zero_rows")}
            _append(log, row)
            _say(f"{st['kind']} m={row['m']} s={st['s']} lam={st['lam']:g} {st['positive_part']} "
                 f"seed {seed}: ACC {100 * row['acc']:.2f} NMI {100 * row['nmi']:.2f} "
                 f"fit {sec:.0f}s (+{row['fit_extra_mb'] or float('nan'):.0f} MB)")


# --------------------------------------------------------------------------- report
def report(log=LOG, cache=CACHE):
    """Markdown: preprocessing, best of grid per (.)_+, re-runs, defaults."""
    rows = _read_log(log)
    out = []
    if os.path.exists(cache + ".json"):
        with open(cache + ".json") as fh:
            info = json.load(fh)
        out.append(f"MNIST-extend {info['n']} × {info['d_pca']} after PCA "
                   f"(kept variance {100 * info['explained_ratio_measured']:.2f} %, "
                   f"{info['method']}; {info['seconds']:.0f}s)\n")
    grid = [r for r in rows if r["kind"] == "grid" and r["seed"] == 0]  # the protocol's draw
    out += ["| (·)₊ | settings | best m, s, λ | best of grid ACC / NMI | best NMI of grid | "
            "median ACC / NMI | paper ACC / NMI |", "|---|---|---|---|---|---|---|"]
    best = {}
    for pp in ("max", "abs"):
        g = [r for r in grid if r["positive_part"] == pp]
        if not g:
            continue
        b = max(g, key=lambda r: (r["acc"], r["nmi"]))
        best[pp] = b
        out.append(f"| {pp} | {len(g)} | {b['m']}, {b['s']}, {b['lam']:g} | "
                   f"{100 * b['acc']:.2f} / {100 * b['nmi']:.2f} | "
                   f"{100 * max(r['nmi'] for r in g):.2f} | "
                   f"{100 * np.median([r['acc'] for r in g]):.2f} / "
                   f"{100 * np.median([r['nmi'] for r in g]):.2f} | {PAPER[0]} / {PAPER[1]} |")
    out += ["", "All grid settings (one anchor draw, seed 0):", "",
            "| m | s | λ | (·)₊ | ACC | NMI | iterations | solver s |", "|---|---|---|---|---|---|---|---|"]
    for r in sorted(grid, key=lambda r: (r["positive_part"], r["m"], r["s"], r["lam"])):
        out.append(f"| {r['m']} | {r['s']} | {r['lam']:g} | {r['positive_part']} | "
                   f"{100 * r['acc']:.2f} | {100 * r['nmi']:.2f} | {r['n_iter']} | "
                   f"{r['solver_seconds']:.0f} |")
    fits = [r for r in rows if r["kind"] in ("given", "defaults")]
    if fits:
        out += ["", "End-to-end fits (GraphClustering.fit, ongr-r):", "",
                "| setting | m, s, λ | (·)₊ | seed | ACC | NMI | iterations | fit s | "
                "graph s | solver s | fit extra MB |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in fits:
            tm = r.get("timings", {})
            out.append(f"| {r['kind']} | {r['m']}, {r['s']}, {r['lam']:g} | {r['positive_part']} | "
                       f"{r['seed']} | {100 * r['acc']:.2f} | {100 * r['nmi']:.2f} | {r['n_iter']} | "
                       f"{r['fit_seconds']:.0f} | {tm.get('graph', float('nan')):.0f} | "
                       f"{tm.get('solver', float('nan')):.0f} | {r['fit_extra_mb'] or float('nan'):.0f} |")
        out += ["", "| setting | m, s, λ | (·)₊ | seeds | ACC mean ± std | NMI mean ± std |",
                "|---|---|---|---|---|---|"]
        groups = {}
        for r in fits:
            groups.setdefault((r["kind"], r["m"], r["s"], r["lam"], r["positive_part"]), []).append(r)
        for (kind, m, s, lam, pp), g in groups.items():
            a = np.array([r["acc"] for r in g]) * 100
            nm = np.array([r["nmi"] for r in g]) * 100
            out.append(f"| {kind} | {m}, {s}, {lam:g} | {pp} | {','.join(str(r['seed']) for r in g)} | "
                       f"{a.mean():.2f} ± {a.std():.2f} | {nm.mean():.2f} ± {nm.std():.2f} |")
    # every anchor draw measured for the selected settings and the defaults (grid rows of
    # other seeds come from ``search --seed k``; the solver path equals the fit path)
    sel = {(b["m"], b["s"], b["lam"], pp) for pp, b in best.items()}
    sel |= {(1000, 5, 1.0, pp) for pp in ("max", "abs")}
    draws = {}
    for r in rows:
        k = (r["m"], r["s"], r["lam"], r["positive_part"])
        if k in sel:
            draws.setdefault(k, {})[r["seed"]] = r
    if draws:
        out += ["", "All anchor draws measured per setting:", "",
                "| m, s, λ | (·)₊ | draws (seeds) | ACC mean ± std | ACC min / max | "
                "NMI mean ± std | draws with ACC and NMI within 3 of Table 4 |",
                "|---|---|---|---|---|---|---|"]
        for (m, s, lam, pp), d in sorted(draws.items()):
            a = np.array([r["acc"] for r in d.values()]) * 100
            nm = np.array([r["nmi"] for r in d.values()]) * 100
            ok = int(np.sum((a >= PAPER[0] - 3) & (nm >= PAPER[1] - 3)))
            out.append(f"| {m}, {s}, {lam:g} | {pp} | {len(d)} ({min(d)}–{max(d)}) | "
                       f"{a.mean():.2f} ± {a.std():.2f} | {a.min():.2f} / {a.max():.2f} | "
                       f"{nm.mean():.2f} ± {nm.std():.2f} | {ok} of {len(d)} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--data-dir", default=None)
    for name in ("search", "rerun", "report"):
        q = sub.add_parser(name)
        q.add_argument("--log", default=LOG)
        if name == "search":
            q.add_argument("--m", type=int, nargs="+", default=[300, 600, 900, 1200])
            q.add_argument("--s", type=int, nargs="+", default=[2, 3, 4, 5])
            q.add_argument("--lam", type=float, nargs="+", default=[1.0])
            q.add_argument("--positive-part", nargs="+", default=["max", "abs"])
            q.add_argument("--seed", type=int, default=0)
            q.add_argument("--budget", type=float, default=None, help="seconds")
        if name == "rerun":
            q.add_argument("--given", nargs=4, action="append", default=[],
                           metavar=("M", "S", "LAMBDA", "POSITIVE_PART"))
            q.add_argument("--defaults", action="store_true",
                           help="also the preset defaults (m 1000, s 5, λ 1) with max and abs")
            q.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--cache", default=CACHE)
    args = ap.parse_args(argv)
    if args.cmd == "prepare":
        print(json.dumps(prepare(args.data_dir, cache=args.cache), indent=1))
        return
    if args.cmd == "report":
        print(report(args.log))
        return
    X, y, info = load_cache()
    _say(f"MNIST-extend cache: {X.shape}, {info['explained_ratio_measured']:.4f} variance kept")
    if args.cmd == "search":
        search(X, y, args.m, args.s, args.lam, tuple(args.positive_part), seed=args.seed,
               log=args.log, budget=args.budget)
    else:
        settings = [{"kind": "given", "m": int(m), "s": int(s), "lam": float(lam),
                     "positive_part": pp} for m, s, lam, pp in args.given]
        if args.defaults:
            settings += [{"kind": "defaults", "m": 1000, "s": 5, "lam": 1.0, "positive_part": pp}
                         for pp in ("max", "abs")]
        rerun(X, y, settings, args.seeds, log=args.log)
    print(report(args.log))


if __name__ == "__main__":
    main()
