"""Cold start (issue 48, deliverable 4): ``graphclust run --dataset digits`` in a fresh
process with an empty numba cache, then again with the cache it wrote (warm).

Each run is ``python -m graphclust run --dataset digits`` in a subprocess with
``NUMBA_CACHE_DIR`` set to a new temporary folder (numba then writes every ``cache=True``
kernel there instead of next to the installed sources, so an installed cache does not
hide the compile). Prints the wall time of each run, its processor time (all threads;
other processes on a shared machine stretch it far less than the wall time), the CLI's
own stage timings, and the cold minus warm difference (target: within 20 s). Usage::

    python -m benchmarks.cold_start [--dataset digits] [--warm-runs 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

__all__ = ["main", "run_cli"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_cli(dataset: str, cache_dir: str) -> tuple[float, float, str]:
    """Wall and processor seconds of one CLI run with ``NUMBA_CACHE_DIR=cache_dir``, and
    its timings line."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    cpu = _children_cpu()
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "graphclust", "run", "--dataset", dataset],
                          env=env, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - t
    timings = [ln for ln in proc.stdout.splitlines() if ln.startswith("timings:")]
    return seconds, _children_cpu() - cpu, timings[-1] if timings else ""


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="digits")
    ap.add_argument("--warm-runs", type=int, default=2)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="numba-cold-") as cache:
        cold, cold_cpu, cold_t = run_cli(args.dataset, cache)
        print(f"cold (empty NUMBA_CACHE_DIR): {cold:6.1f} s  cpu {cold_cpu:5.1f} s  {cold_t}")
        warm, warm_cpu = [], []
        for _ in range(args.warm_runs):
            s, c, t = run_cli(args.dataset, cache)
            warm.append(s)
            warm_cpu.append(c)
            print(f"warm (its cache):             {s:6.1f} s  cpu {c:5.1f} s  {t}")
    best = min(warm) if warm else float("nan")
    best_cpu = min(warm_cpu) if warm_cpu else float("nan")
    print(f"cold - warm = {cold - best:.1f} s (target <= 20 s); processor time "
          f"{cold_cpu - best_cpu:.1f} s")


if __name__ == "__main__":
    main()
