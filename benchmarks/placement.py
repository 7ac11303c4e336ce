"""Placing rows among a sample (issue 48): ``sample-knn``'s searches against brute force.

``python -m benchmarks.placement [--sample 60000] [--placed 3000] [--methods descent approx]``
draws a sample of MNIST-70k (pixels/255, seeded), places ``--placed`` other rows with
each method of the ``sample-knn`` part (built on the sample's rows and the placed ones,
so the index is built as in a fit) (``descent`` on 64 principal components, the
candidates measured on the pixels; ``approx``: pynndescent's index of the pixels) and
prints, per method, the CPU seconds of the build (index and placement, all threads) and
the recall of each placed row's exact 15 nearest sample rows on the pixels (the columns
of its row of ``Z``).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.placement",
                                     description=__doc__)
    parser.add_argument("--sample", type=int, default=60_000)
    parser.add_argument("--placed", type=int, default=3_000)
    parser.add_argument("--methods", nargs="+", default=["descent", "approx"])
    parser.add_argument("--components", type=int, default=64)
    args = parser.parse_args(argv)

    from benchmarks.datasets import load
    from graphclust import Anchors, Context
    from graphclust.numerics import nearest_anchors
    from graphclust_plugins.manifold.graph_sample_knn import SampleKNNGraph

    X, _ = load("mnist")
    X = np.asarray(X, dtype=np.float32) / np.float32(255.0)
    order = np.random.default_rng(0).permutation(X.shape[0])
    U = np.ascontiguousarray(X[order[:args.sample]])
    rows = np.ascontiguousarray(X[order[args.sample:args.sample + args.placed]])
    exact, _ = nearest_anchors(rows, U, 15)
    anchors = Anchors(points=U)
    for method in args.methods:
        part = SampleKNNGraph(n_neighbors=15, method=method, pca_components=(
            args.components if method == "descent" else None))
        # the sample's own rows first (each matches itself), so n > S and the index is
        # built as in a fit; the small build compiles the kernels
        part.build(np.vstack([U[:100], rows[:50]]), Anchors(points=U[:100]), Context(seed=0))
        cpu = time.process_time()
        Z = part.build(np.vstack([U, rows]), anchors, Context(seed=0)).Z
        cpu = time.process_time() - cpu
        Z = Z.tocsr()[U.shape[0]:]
        found = [set(Z.indices[Z.indptr[i]:Z.indptr[i + 1]]) for i in range(rows.shape[0])]
        recall = float(np.mean([len(f & set(e)) / 15 for f, e in zip(found, exact)]))
        print(json.dumps({"method": method, "sample": args.sample, "placed": args.placed,
                          "cpu_s_build_and_place": round(cpu, 2), "recall_15": round(recall, 4)}),
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
