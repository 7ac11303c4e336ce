"""Rule 8a's mixture test on the sets it was argued on (issue 44, deliverable 2).

With ``k`` given and at most 16 dense features, ``auto`` takes a Gaussian mixture when
``2k`` Gaussians predict held-out rows no better than ``k`` *and* a kernel density
estimate does not predict them better than the ``k`` Gaussians by more than two
standard errors (docs/auto.rst, rule 8). This prints, for every low-dimensional
clustered set of the generated battery's tune half and the shapes at n = 1 000 and
20 000, the family ``auto`` took, the kernel test's ``z`` when it ran (read from the
fitted summary) and the ARI — the table of docs/auto.rst, rule 8a.

Usage::

    python -m benchmarks.mixture_test [--sets NAME,...] [--json out.json]

The check half is never run here: rules are argued on the tune half only.
"""

from __future__ import annotations

import argparse
import json
import re
import time
import warnings

import numpy as np
from sklearn.metrics import adjusted_rand_score

import graphclust
from benchmarks import generated_sets
from benchmarks.datasets import GENERATED, SHAPES, load

#: Families of the battery with at most 16 features on some sets and true k >= 2.
LOW_DIM_FAMILIES = ("blobs", "aniso", "overlap", "chains", "spirals", "rings", "nested",
                    "density", "outliers")
_Z = re.compile(r"kernel density estimate predicts[^(]*?\(?([+-]\d+\.\d+)")


def default_sets() -> list[str]:
    """The tune half's low-dimensional clustered sets, then the shapes."""
    tune = [i for f in LOW_DIM_FAMILIES for i in generated_sets.half_ids("tune", f)]
    return tune + [f"{s}@{n}" for n in (1000, 20000) for s in SHAPES + GENERATED]


def measure(name: str) -> dict | None:
    """``auto`` with the true ``k`` on one set: family, kernel ``z``, ARI, seconds."""
    X, y = load(name)
    k = int(np.unique(y).size)
    if X.shape[1] > 16 or k < 2:
        return None
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = graphclust.GraphClustering("auto", n_clusters=k, random_state=0).fit(X)
    spec = model.resolved_spec_
    found = _Z.search(spec["summary"])
    return {"set": name, "n": int(X.shape[0]), "d": int(X.shape[1]), "k": k,
            "family": spec["rounding"]["name"], "kernel_z": float(found.group(1)) if found
            else None, "ari": float(adjusted_rand_score(y, model.labels_)),
            "seconds": time.perf_counter() - t}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", help="comma-separated data-set names (default: see above)")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args(argv)
    rows = []
    for name in args.sets.split(",") if args.sets else default_sets():
        row = measure(name)
        if row is None:
            continue
        rows.append(row)
        z = "   –  " if row["kernel_z"] is None else f"{row['kernel_z']:+6.2f}"
        print(f"{name:24s} n={row['n']:6d} d={row['d']:2d} k={row['k']:3d} "
              f"z={z} {row['family']:8s} ARI {row['ari']:.3f} {row['seconds']:.1f}s",
              flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
