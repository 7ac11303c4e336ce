"""Cold start (issue 48, deliverable 4): ``graphclust run --dataset digits`` in a fresh
process with an empty numba cache, then again with the cache it wrote (warm).

Each run is ``python -m graphclust run --dataset digits`` in a subprocess with
``NUMBA_CACHE_DIR`` set to a new temporary folder (numba then writes every ``cache=True``
kernel there instead of next to the installed sources, so an installed cache does not
hide the compile). Prints the wall time of each run, the CLI's own stage timings, and
the cold minus warm difference (target: within 20 s). Usage::

    python -m benchmarks.cold_start [--dataset digits] [--warm-runs 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

__all__ = ["main", "run_cli"]


def run_cli(dataset: str, cache_dir: str) -> tuple[float, str]:
    """Wall seconds of one CLI run with ``NUMBA_CACHE_DIR=cache_dir``, and its timings line."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "graphclust", "run", "--dataset", dataset],
                          env=env, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - t
    timings = [ln for ln in proc.stdout.splitlines() if ln.startswith("timings:")]
    return seconds, timings[-1] if timings else ""


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="digits")
    ap.add_argument("--warm-runs", type=int, default=2)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        cold, cold_t = run_cli(args.dataset, cache)
        print(f"cold (empty NUMBA_CACHE_DIR): {cold:6.1f} s  {cold_t}")
        warm = []
        for _ in range(args.warm_runs):
            s, t = run_cli(args.dataset, cache)
            warm.append(s)
            print(f"warm (its cache):             {s:6.1f} s  {t}")
    best = min(warm) if warm else float("nan")
    print(f"cold - warm = {cold - best:.1f} s (target <= 20 s)")


if __name__ == "__main__":
    main()
