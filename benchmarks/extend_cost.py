"""The cost and accuracy of rule 7's layout above the sample (issue 48): ``auto``'s spec
for MNIST-extend (n > MANIFOLD_SAMPLE, d = 784, k = 10) with only the layout's negative
samples per edge sample and its starts (and the sample size) changed.

Run ``python -m benchmarks.extend_cost NEG,STARTS[,S] ... [--n 630000] [--seed 0]``: one
process loads the data and warms up once, then fits each setting in turn and prints one
JSON line per fit — wall and CPU seconds of this process, the load, the stages' seconds,
ACC/NMI/ARI.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from graphclust_plugins.auto.rule_auto import (
    MANIFOLD_EPOCHS,
    MANIFOLD_SAMPLE,
)

from benchmarks.sampled import PeakRSS, scores, warm_up


def spec(negatives: int, starts: int, sample: int = MANIFOLD_SAMPLE, k: int = 10) -> dict:
    """Rule 7's spec above the sample for wide rows, the layout's knobs given (the
    levers of :func:`benchmarks.extend_quality.spec` at the rule's epochs and 15
    placement neighbours)."""
    from benchmarks.extend_quality import spec as levers

    return levers(sample, negatives, starts, MANIFOLD_EPOCHS, 15, k)


def main(argv=None) -> int:
    import graphclust

    from benchmarks.datasets import load

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("settings", nargs="+", help="NEG,STARTS or NEG,STARTS,SAMPLE")
    ap.add_argument("--n", type=int, default=630_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    X, y = load(f"mnist-extend@{args.n}")
    X = np.ascontiguousarray(np.asarray(X, dtype=np.float32) / np.float32(255.0))
    warm_up()
    for setting in args.settings:
        negatives, starts, *rest = (int(v) for v in setting.split(","))
        sample = rest[0] if rest else MANIFOLD_SAMPLE
        with PeakRSS() as mem:
            t0 = time.perf_counter()
            model = graphclust.GraphClustering(spec(negatives, starts, sample), n_clusters=10,
                                               random_state=args.seed).fit(X)
            seconds = time.perf_counter() - t0
        print(json.dumps({"negatives": negatives, "starts": starts, "sample": sample,
                          "seed": args.seed, "wall_s": round(seconds, 1),
                          "cpu_s": round(mem.cpu, 1), "load1": round(os.getloadavg()[0], 1),
                          "timings": {k: round(v, 1) for k, v in model.timings_.items()},
                          **scores(y, model.labels_)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
