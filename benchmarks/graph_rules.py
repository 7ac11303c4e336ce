"""The measurements behind graph ``auto``'s rule 1 (docs/graphs-auto.rst), k given.

Degree-corrected planted partitions (``n = 3000``; each edge stays inside a block with
probability ``1 - mu``; endpoints drawn in proportion to a degree propensity, all equal
or Pareto with shape ``alpha``) at mean degrees on both sides of ``ln n`` (8.0), each
clustered with the true ``k`` by Leiden with the resolution searched (the ``leiden``
preset), the regularised spectral embedding (``graph-spectral``) and the normalised-cut
embedding without regularisation (``ncut``'s solver and rounding). Usage::

    python -m benchmarks.graph_rules [--seeds 2]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import normalized_mutual_info_score

__all__ = ["SETTINGS", "dc_planted", "main"]

#: (blocks k, mean degree, mu, Pareto shape alpha or 0 for equal propensities)
SETTINGS = ((5, 6, 0.3, 0.0), (5, 6, 0.3, 2.0), (20, 4, 0.2, 2.5), (10, 10, 0.4, 2.0),
            (5, 20, 0.4, 2.0))
N = 3000
NCUT = {"graph": {"name": "knn"}, "solver": {"name": "spectral"},
        "rounding": {"name": "kmeans", "n_init": 10, "normalize_rows": True}}
METHODS = {"leiden": "leiden", "graph-spectral": "graph-spectral", "ncut": NCUT}


def dc_planted(n, k, mean_degree, mu, alpha, seed):
    """A degree-corrected planted partition: 0/1 symmetric CSR adjacency and blocks."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    theta = rng.pareto(alpha, n) + 1.0 if alpha else np.ones(n)
    m = n * mean_degree // 2
    p = theta / theta.sum()
    i = rng.choice(n, m, p=p)
    inside = rng.random(m) > mu
    j = rng.choice(n, m, p=p)
    for b in range(k):
        sel = inside & (y[i] == b)
        members = np.flatnonzero(y == b)
        j[sel] = rng.choice(members, sel.sum(), p=theta[members] / theta[members].sum())
    A = sp.coo_array((np.ones(m), (i, j)), shape=(n, n)).tocsr()
    A = (A + A.T).tolil()
    A.setdiag(0)
    A = sp.csr_array(A)
    A.eliminate_zeros()
    A.data[:] = 1.0
    return A, y


def main(argv=None) -> int:
    from graphclust import GraphClustering
    from graphclust_plugins.community.graph_auto import graph_auto

    ap = argparse.ArgumentParser(prog="python -m benchmarks.graph_rules", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=2)
    args = ap.parse_args(argv)
    print(f"| k | mean degree (ln n = {math.log(N):.1f}) | mu | alpha | degree spread | "
          "rule | " + " | ".join(f"{m} NMI" for m in METHODS) + " |")
    print("|" + "---|" * (6 + len(METHODS)))
    X = np.arange(N, dtype=np.float64)[:, None]
    for k, deg, mu, alpha in SETTINGS:
        scores = {m: [] for m in METHODS}
        spread, rule = [], None
        for seed in range(args.seeds):
            A, y = dc_planted(N, k, deg, mu, alpha, seed)
            choice = graph_auto(A, k)
            spread.append(choice.profile.degree_spread)
            rule = choice.rule
            for name, spec in METHODS.items():
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    lab = GraphClustering(spec, graph=A, n_clusters=k,
                                          random_state=seed).fit(X).labels_
                scores[name].append(normalized_mutual_info_score(y, lab))
                print(f"k={k} deg={deg} mu={mu} alpha={alpha} seed={seed} {name}: "
                      f"{scores[name][-1]:.3f} ({time.perf_counter() - t0:.1f} s)",
                      file=sys.stderr, flush=True)
        print(f"| {k} | {deg} | {mu} | {alpha:g} | {np.mean(spread):.2f} | {rule} | "
              + " | ".join(f"{np.mean(v):.3f}" for v in scores.values()) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
