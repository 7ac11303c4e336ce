"""Issue 26's no-structure target: data without clusters must give ``k = 1`` with a
:class:`graphclust.NoClusterStructureWarning`.

A uniform cube ``rng.random((n, d))`` and one Gaussian ``rng.standard_normal((n, d))``,
``rng = np.random.default_rng(seed)`` afresh for each, fitted by a method with no ``k``.

Run ``python -m benchmarks.nok_structure [--methods auto] [--n 10000] [--dims 2 10 50]
[--seed 0]``; one row per fit (the rule ``auto`` chose, ``n_clusters_``, whether the
warning was raised, the estimator's rule in words, wall seconds) and whether the target
holds on every row.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

MAKERS = {
    "uniform": lambda rng, n, d: rng.random((n, d)),
    "gaussian": lambda rng, n, d: rng.standard_normal((n, d)),
}


def fit_one(method: str, make: str, n: int, d: int, seed: int) -> dict:
    """One fit of ``method`` without ``k`` on structureless data."""
    import graphclust

    X = MAKERS[make](np.random.default_rng(seed), n, d)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        model = graphclust.GraphClustering(method, random_state=seed).fit(X)
        seconds = time.perf_counter() - t0
    warned = any(issubclass(w.category, graphclust.NoClusterStructureWarning)
                 for w in caught)
    sel = model.k_selection_
    return {"method": method, "data": make, "n": n, "d": d, "k": int(model.n_clusters_),
            "warned": warned, "estimator": f"{sel.method} ({sel.part})",
            "rule": sel.rule, "seconds": round(seconds, 2)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.nok_structure",
                                     description=__doc__)
    parser.add_argument("--methods", nargs="+", default=["auto"])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--dims", nargs="+", type=int, default=[2, 10, 50])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rows = [fit_one(m, make, args.n, d, args.seed)
            for m in args.methods for d in args.dims for make in MAKERS]
    print("| method | data | n | d | k | warning | estimator | s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['method']} | {r['data']} | {r['n']} | {r['d']} | {r['k']} | "
              f"{'yes' if r['warned'] else 'no'} | {r['estimator']} | {r['seconds']} |")
    met = all(r["k"] == 1 and r["warned"] for r in rows)
    print(f"\nk = 1 with the warning on {sum(r['k'] == 1 and r['warned'] for r in rows)} "
          f"of {len(rows)} fits: {'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
