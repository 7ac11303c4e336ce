"""The UMAP layout on a shared machine (issues 45 and 48): its time with and without
other processes competing for the cores, at each thread count.

The ``umap-layout`` solver moves the rows block by block, one parallel region per block
and epoch; a region ends only when every thread has finished its share, so a thread
the operating system parks for a while stalls all of them. This times the registered
solver (60 epochs, random start, 10 dimensions) on a random 15-neighbour graph of
``n`` rows, each thread count in its own process, alternating, with ``--busy`` processes
spinning beside it, and prints medians and the layout's checksum (equal at every thread
count: the result does not depend on it).

Usage::

    python -m benchmarks.layout_load [--n 70000] [--busy 0 2] [--threads 1 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

__all__ = ["main", "time_layout"]


def time_layout(n: int, seed: int = 0) -> tuple[float, float]:
    """Seconds of one layout of a random symmetric 15-neighbour graph of ``n`` rows
    (after a warm-up on 2 000 rows compiles the kernels), and the layout's checksum."""
    import numpy as np
    import scipy.sparse as sp

    import graphclust

    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), 15)
    G = sp.csr_array((rng.random(n * 15), (rows, rng.integers(0, n, n * 15))), shape=(n, n))
    G = sp.csr_array(G + G.T)
    G.setdiag(0)
    G.eliminate_zeros()
    solver = graphclust.resolve_part({"name": "umap-layout", "init": "random", "n_epochs": 60},
                                     "solver", registry=graphclust.get_registry())
    small = sp.csr_array(G[:2000][:, :2000])
    solver.solve(graphclust.AffinityGraph(small), None, 10, graphclust.Context(seed))
    t = time.perf_counter()
    sol = solver.solve(graphclust.AffinityGraph(G), None, 10, graphclust.Context(seed))
    return time.perf_counter() - t, float(np.abs(sol.embedding).sum())


def _child(n: int, threads: int) -> dict:
    env = {**os.environ, "NUMBA_NUM_THREADS": str(threads)}
    code = ("import json,sys;from benchmarks.layout_load import time_layout;"
            f"s,c=time_layout({n});print(json.dumps([s,c]))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.strip().splitlines()[-1]
    seconds, checksum = json.loads(out)
    return {"seconds": seconds, "checksum": checksum}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=70_000)
    ap.add_argument("--busy", type=int, nargs="+", default=[0, 2],
                    help="competing busy processes (one run of the table per value)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    for busy in args.busy:
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                    for _ in range(busy)]
        try:
            runs: dict[int, list[dict]] = {t: [] for t in args.threads}
            for _ in range(args.repeats):
                for t in args.threads:
                    runs[t].append(_child(args.n, t))
        finally:
            for p in spinners:
                p.kill()
        for t, rs in runs.items():
            secs = [r["seconds"] for r in rs]
            print(f"busy={busy} threads={t}: median {statistics.median(secs):.2f} s "
                  f"{[round(s, 2) for s in secs]} checksum {rs[0]['checksum']:.6g}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
