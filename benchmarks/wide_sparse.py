"""Memory of a fit on wide sparse data and on a LIBSVM file of a huge index (issue 46
C1, C2), through public APIs only.

Each case runs in a fresh process (``/usr/bin/time``-like: the child's peak resident
size from ``resource.getrusage``), so no case inherits another's memory:

* ``uspec`` with ``n_clusters=4`` on ``scipy.sparse.random(2000, d, density=2e-5)`` for
  every ``d`` of ``--widths`` (the issue's reproducer; the matrix is drawn with a NumPy
  ``Generator``: SciPy's legacy ``random_state=0`` draws a permutation of all ``n·d``
  positions, 15 GB at ``d = 10**6`` before graphclust runs);
* ``graphclust run --dataset FILE`` on a LIBSVM file of one line ``1 2000000000:1.0``.

Prints one row per case: the peak RSS of the whole process (MB), the fit's wall time
and the cluster sizes or the error. Usage::

    python -m benchmarks.wide_sparse [--widths 50000,1000000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

_FIT = """
import json, resource, sys, time
import numpy as np, scipy.sparse as sp
import graphclust
d = int(sys.argv[1])
X = sp.random(2000, d, density=2e-5, format="csr", random_state=np.random.default_rng(0))
t = time.perf_counter()
try:
    labels = graphclust.GraphClustering("uspec", n_clusters=4, random_state=0).fit(X).labels_
    out = "sizes " + " ".join(map(str, np.bincount(labels)))
except graphclust.InputError as exc:
    out = f"InputError: {exc}"
print(json.dumps({"case": f"uspec, 2000 x {d}, {X.nnz} nonzeros", "result": out,
                  "seconds": time.perf_counter() - t,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

_CLI = """
import contextlib, io, json, resource, sys, time
from graphclust.cli import main
t = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(["run", "--dataset", sys.argv[1]])
print(json.dumps({"case": "graphclust run, LIBSVM line 1 2000000000:1.0",
                  "result": f"exit {code}", "seconds": time.perf_counter() - t,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _child(code: str, arg: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, arg], capture_output=True, text=True,
                          check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"case": arg, "result": f"died (status {proc.returncode})", "seconds": 0.0,
                "peak_mb": float("nan")}
    return json.loads(lines[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--widths", default="50000,1000000")
    args = ap.parse_args(argv)
    rows = [_child(_FIT, w) for w in args.widths.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "one.svm"
        path.write_text("1 2000000000:1.0\n")
        rows.append(_child(_CLI, str(path)))
    print(f"{'case':<48} {'peak RSS MB':>11} {'seconds':>8}  result")
    for r in rows:
        print(f"{r['case']:<48} {r['peak_mb']:>11.0f} {r['seconds']:>8.1f}  {r['result']}")


if __name__ == "__main__":
    main()
