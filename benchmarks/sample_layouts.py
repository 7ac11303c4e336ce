"""How often rule 7's layout of a sample lands well, per negative-sample rate (issue 27).

Above ``MANIFOLD_SAMPLE`` rows ``auto`` fits the manifold family on a sample: the
sample's fuzzy 15-NN graph (NN-descent, on 64 principal components of rows wider than
128), a 10-d ``umap-layout`` from a PCA start, the ``density`` tree (15 core neighbours, smallest cluster ``S // 20``) cut to ``k``. From
some seeds the layout puts two classes in one lump. This script runs those parts by
hand on each seed's sample — the rows ``auto``'s ``sample`` anchors draw, the graph
seeded with the same seed — and, for each ``--negatives`` value, ``--starts`` layouts
from the seed streams the ``on-sample`` adapter uses (start 0 the seed's own, start
``r`` its ``start{r}`` child). Each layout is scored by ACC on the sample's labels and by
the Newman–Girvan modularity of its partition on the sample's graph (what the adapter
keeps a start by).

Run ``python -m benchmarks.sample_layouts [--dataset mnist-extend@630000] [--sample
100000] [--seeds 0-4] [--negatives 10 20] [--starts 3] [--good .93] [--data-dir DIR]``.
Prints one row per layout and a table per rate: layouts at ACC >= ``--good`` per seed,
and the modularity ranges of those and of the others.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.uspec_stability import _seed_range
from graphclust_plugins.auto.rule_auto import (
    MANIFOLD_CLUSTER_DIVISOR,
    MANIFOLD_EPOCHS,
    MANIFOLD_MIN_SAMPLES,
    MANIFOLD_SAMPLE,
    MANIFOLD_SEARCH_COMPONENTS,
)


def run(dataset, sample, seeds, negatives, starts, k, data_dir=None) -> list[dict]:
    """One row per (seed, negative-sample rate, start): ACC and modularity of the layout's
    partition; the graph is built once per seed."""
    from benchmarks.datasets import load
    from graphclust import Context, get_registry, resolve_part

    X, y = load(dataset, data_dir)
    X = np.asarray(X, dtype=np.float32) / np.float32(max(float(np.max(X)), 1e-12))
    acc = get_registry().metrics.get("acc")()
    # rule 7: the tree's smallest cluster is half an average cluster of the sample
    size = max(15, min(sample, X.shape[0]) // (MANIFOLD_CLUSTER_DIVISOR * k))
    tree = {"name": "density", "min_samples": MANIFOLD_MIN_SAMPLES, "estimate": "leaf",
            "min_cluster_size": size}
    # rule 7's graph: with d > 2 * MANIFOLD_SEARCH_COMPONENTS searched on the leading
    # principal components, the candidates measured on the features (issue 48)
    graph_spec = {"name": "fuzzy-knn", "n_neighbors": 15, "method": "approx"}
    if X.shape[1] > 2 * MANIFOLD_SEARCH_COMPONENTS:
        graph_spec.update(pca_components=MANIFOLD_SEARCH_COMPONENTS, distances="features")
    rows = []
    for seed in seeds:
        idx = resolve_part({"name": "sample", "n_anchors": sample},
                           "anchors").sample_rows(X.shape[0], Context(seed))
        U, yu = X[idx], y[idx]
        graph = resolve_part(graph_spec, "graph").build(U, None, Context(seed))
        for neg in negatives:
            layout = resolve_part({"name": "umap-layout", "n_components": 10, "min_dist": 0.0,
                                   "init": "pca", "n_epochs": MANIFOLD_EPOCHS,
                                   "negative_sample_rate": neg}, "solver")
            for r in range(starts):
                ctx = Context(seed) if r == 0 else Context(seed).child(f"start{r}")
                t0 = time.perf_counter()
                sol = layout.solve(graph, U, k, ctx)
                labels = np.asarray(resolve_part(tree, "rounding").round(sol, k, Context(seed)))
                row = {"seed": seed, "negatives": neg, "start": r,
                       "acc": float(acc.score(labels, yu)),
                       "modularity": float(graph.modularity(labels)),
                       "seconds": time.perf_counter() - t0}
                rows.append(row)
                print(f"seed {seed}  negatives {neg:>3}  start {r}  ACC {row['acc']:.4f}  "
                      f"modularity {row['modularity']:.4f}  {row['seconds']:5.1f} s", flush=True)
    return rows


def summary(rows: list[dict], good: float) -> None:
    print("\n| negatives | good layouts per seed | good: modularity | others: modularity | "
          "median s per layout |")
    print("|---|---|---|---|---|")
    for neg in dict.fromkeys(r["negatives"] for r in rows):
        rs = [r for r in rows if r["negatives"] == neg]
        per_seed = " ".join(
            f"{sum(r['acc'] >= good for r in rs if r['seed'] == s)}/"
            f"{sum(r['seed'] == s for r in rs)}" for s in dict.fromkeys(r["seed"] for r in rs))
        ok = [r["modularity"] for r in rs if r["acc"] >= good]
        bad = [r["modularity"] for r in rs if r["acc"] < good]
        span = (lambda v: f"{min(v):.4f}–{max(v):.4f}" if v else "—")
        print(f"| {neg} | {per_seed} | {span(ok)} | {span(bad)} | "
              f"{np.median([r['seconds'] for r in rs]):.1f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="mnist-extend@630000")
    ap.add_argument("--sample", type=int, default=MANIFOLD_SAMPLE)
    ap.add_argument("--seeds", type=_seed_range, default=tuple(range(5)),
                    help="an inclusive range such as 0-4")
    ap.add_argument("--negatives", type=int, nargs="+", default=[10, 20])
    ap.add_argument("--starts", type=int, default=3)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--good", type=float, default=0.93, help="ACC of a good layout")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    summary(run(args.dataset, args.sample, args.seeds, args.negatives, args.starts, args.k,
                args.data_dir), args.good)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
