"""ONGR-R with other readings of Eq. 12's "self-tuning bandwidth" (reproduction-gap diagnostic).

The paper builds Z with a Gaussian kernel and a "self-tuning bandwidth [Chen et al. 2011]"
without a formula. ``ongr-anchor`` uses Liu et al. (2010)'s rule (one global σ = mean
distance to the s-th nearest anchor, ``exp(-d²/σ²)``). Chen et al. (2011, parallel
spectral clustering) use the local scaling of Zelnik-Manor & Perona,
``exp(-d²/(2 σ_i σ_j))`` with a per-point scale. Kernels compared here (Z rows are
normalised to one in all of them; weights of the s nearest anchors only):

* ``global``: ``exp(-d²/σ²)``, σ = mean over points of the distance to the s-th anchor
  (the default of ``ongr-anchor``).
* ``global-x2`` / ``global-half``: the same σ times 2 / times 0.5 (scale sensitivity).
* ``local``: ``exp(-d²/(2 σ_i²))``, σ_i = mean distance of x_i to its s nearest anchors.
* ``local-pair``: ``exp(-d²/(2 σ_i σ_j))``, σ_i as in ``local``, σ_j = mean distance
  of anchor j to its s nearest other anchors (Chen et al.'s σ_i σ_j form on the
  bipartite point-anchor graph).
* ``uniform``: 1/s (the bandwidth → ∞ limit).

For each kernel: the paper's protocol on the m × s grid of Section 4.3 (m 100…1200 step
100, s 2…8, λ = 1 — λ barely matters, see ``ongr_paper --grid paper10``), one random
anchor draw per m (seed 0), both positive parts; reports the best of the grid and the
median. Usage::

    python -m benchmarks.ongr_kernels --data-dir ../shared/data --datasets pendigits usps
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

KERNELS = ("global", "global-x2", "global-half", "local", "local-pair", "uniform")


def weights(d2, kernel, anchor_scale=None, idx=None):
    """Row-normalised kernel weights for the sorted squared distances ``d2`` (n × s)."""
    d = np.sqrt(np.maximum(d2, 0))
    if kernel.startswith("global"):
        sigma = float(np.mean(d[:, -1])) or 1.0
        sigma *= {"global": 1.0, "global-x2": 2.0, "global-half": 0.5}[kernel]
        e = -(d2 - d2[:, :1]) / sigma**2
    elif kernel == "local":
        si = d.mean(1, keepdims=True)
        si[si == 0] = 1.0
        e = -(d2 - d2[:, :1]) / (2 * si**2)
    elif kernel == "local-pair":
        si = d.mean(1, keepdims=True)
        si[si == 0] = 1.0
        sj = anchor_scale[idx]
        e = -d2 / (2 * si * sj)
        e -= e.max(1, keepdims=True)
    elif kernel == "uniform":
        e = np.zeros_like(d2)
    else:
        raise ValueError(kernel)
    w = np.exp(e)
    return w / w.sum(1, keepdims=True)


def grid(X, y, kernels=KERNELS, ms=range(100, 1300, 100), ss=range(2, 9), lam=1.0,
         pps=("max", "abs"), seed=0, log=None):
    import scipy.sparse as sp

    import graphclust
    from graphclust.neighbors import nearest_anchors
    from graphclust_plugins.ongr.solver import OngrSolver

    from benchmarks.ongr_paper import _ensure_anchor_selectors, _quiet, scores

    _ensure_anchor_selectors()
    reg = graphclust.get_registry()
    ctx = graphclust.Context(seed=seed)
    n = X.shape[0]
    table = []
    with warnings.catch_warnings():
        _quiet()
        for m in ms:
            anchors = reg.anchors.get("random")(n_anchors=m).select(X, ctx)
            idx, d2 = nearest_anchors(X, anchors.points, min(max(ss), m))
            # anchor scale: mean distance of each anchor to its s nearest other anchors
            aidx, ad2 = nearest_anchors(anchors.points, anchors.points, min(max(ss) + 1, m))
            ad = np.sqrt(np.maximum(ad2[:, 1:], 0))
            for s in ss:
                sj = ad[:, :s].mean(1)
                sj[sj == 0] = 1.0
                for kernel in kernels:
                    w = weights(d2[:, :s], kernel, sj, idx[:, :s])
                    Z = sp.csr_array((w.ravel(), idx[:, :s].ravel(), np.arange(0, n * s + 1, s)),
                                     shape=(n, m))
                    graph = graphclust.AnchorGraph(Z, anchors=anchors)
                    for pp in pps:
                        sol = OngrSolver(lam=lam, positive_part=pp,
                                         track_objective=False).solve(graph, None, 10, ctx)
                        table.append({"kernel": kernel, "m": m, "s": s, "lam": lam,
                                      "positive_part": pp, **scores(y, sol.soft.argmax(1))})
            if log:
                log(f"  m={m} done")
    return table


def summary(table, dataset):
    from benchmarks.ongr_paper import PAPER

    pa, pn = PAPER.get(("ongr-r", dataset), (None, None))
    out = [f"{dataset} (paper ongr-r {pa} / {pn}); best of the m × s grid on one draw per m",
           "", "| kernel | (·)₊ | best m, s | best ACC / NMI | best NMI of grid | median ACC / NMI |",
           "|---|---|---|---|---|---|"]
    for kernel in dict.fromkeys(r["kernel"] for r in table):
        for pp in ("max", "abs"):
            t = [r for r in table if r["kernel"] == kernel and r["positive_part"] == pp]
            if not t:
                continue
            b = max(t, key=lambda r: (r["acc"], r["nmi"]))
            out.append(f"| {kernel} | {pp} | {b['m']}, {b['s']} | {100 * b['acc']:.2f} / "
                       f"{100 * b['nmi']:.2f} | {100 * max(r['nmi'] for r in t):.2f} | "
                       f"{100 * np.median([r['acc'] for r in t]):.2f} / "
                       f"{100 * np.median([r['nmi'] for r in t]):.2f} |")
    return "\n".join(out)


def main(argv=None):
    from benchmarks.ongr_paper import load

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--datasets", nargs="+", default=["pendigits", "usps"])
    ap.add_argument("--kernels", nargs="+", default=list(KERNELS), choices=KERNELS)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    say = lambda *a: print(*a, file=sys.stderr, flush=True)  # noqa: E731
    for ds in args.datasets:
        X, y, _ = load(ds, args.data_dir)
        t = time.perf_counter()
        table = grid(X, y, kernels=args.kernels, seed=args.seed, log=say)
        say(f"{ds}: {len(table)} runs in {time.perf_counter() - t:.0f}s")
        print(summary(table, ds))
        print()


if __name__ == "__main__":
    main()
