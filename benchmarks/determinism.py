"""``python -m benchmarks.determinism [SPEC ...]``: does a seed fix the labels?

Prints, for each spec on the 1797 scikit-learn digits (seed 0, k = 10), the ARI and
exact equality of

* the in-memory fit in a fresh interpreter with ``OMP_NUM_THREADS``,
  ``OPENBLAS_NUM_THREADS`` and ``MKL_NUM_THREADS`` = 2 against = 1;
* chunked fits (Dask) on the synchronous, threaded and processes schedulers and on a
  ``LocalCluster`` of two one-thread worker processes, for row chunks of 300, 512 and
  700, against the in-memory fit.

Default specs: ``uspec anchor-spectral``. Costs a few minutes per spec on two cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

_FIT = """
import json, sys
import numpy as np
from sklearn.datasets import load_digits
import graphclust
X = load_digits().data
print(json.dumps(np.asarray(graphclust.GraphClustering(sys.argv[1], n_clusters=10,
      random_state=0).fit(X).labels_).tolist()))
"""

CUTS = (300, 512, 700)


def _threads_fit(spec: str, threads: int) -> np.ndarray:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    out = subprocess.run([sys.executable, "-c", _FIT, spec], capture_output=True, text=True,
                         env=env, check=True)
    return np.asarray(json.loads(out.stdout.strip().splitlines()[-1]))


def _row(what: str, a: np.ndarray, b: np.ndarray) -> None:
    from sklearn.metrics import adjusted_rand_score

    same = "identical" if np.array_equal(a, b) else "DIFFERENT"
    print(f"  {what:<34} ARI {adjusted_rand_score(a, b):.4f}  {same}", flush=True)


def main(specs: list[str]) -> int:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    import dask
    import dask.array as da
    import graphclust
    from distributed import Client, LocalCluster
    from sklearn.datasets import load_digits

    X = load_digits().data

    def fit(spec, data):
        labels = graphclust.GraphClustering(spec, n_clusters=10, random_state=0).fit(data).labels_
        return np.asarray(labels.compute() if hasattr(labels, "compute") else labels)

    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        for spec in specs:
            print(spec, flush=True)
            _row("1 thread vs 2 threads (in memory)", _threads_fit(spec, 1),
                 _threads_fit(spec, 2))
            memory = fit(spec, X)
            for scheduler in ("sync", "threads", "processes"):
                extra = {"pool": pool} if scheduler == "processes" else {}
                with dask.config.set(scheduler=scheduler, **extra):
                    for rows in CUTS:
                        _row(f"{scheduler}, {rows}-row chunks vs memory", memory,
                             fit(spec, da.from_array(X, chunks=(rows, -1))))
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                              dashboard_address=":0") as cluster, Client(cluster):
                for rows in CUTS:
                    _row(f"distributed, {rows}-row chunks vs memory", memory,
                         fit(spec, da.from_array(X, chunks=(rows, -1))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:] or ["uspec", "anchor-spectral"]))
