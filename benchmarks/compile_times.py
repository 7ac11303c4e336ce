"""Where a cold start's compilation goes (issue 48, deliverable 4): ``graphclust run
--dataset digits`` in this process with an empty numba cache, every
``numba``-dispatcher compilation timed.

The times are the compiling thread's processor seconds (``time.thread_time``: numba
compiles on the calling thread), so other processes on a shared machine stretch them far
less than wall time. A kernel's time is *exclusive*: what its own compilation took, less
the helpers compiled while typing it (listed on their own lines). Prints the compile
seconds by the library function that triggered them, then by kernel with the number of
``compile`` calls and the signatures compiled. Usage::

    python -m benchmarks.compile_times [--dataset digits] [--signatures]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
import traceback

__all__ = ["main"]


class _Timer:
    """Wraps ``numba.core.dispatcher.Dispatcher.compile`` and keeps what it timed."""

    def __init__(self):
        self.kernels = collections.defaultdict(float)
        self.calls = collections.Counter()
        self.signatures = collections.defaultdict(set)
        self.callers = collections.defaultdict(float)
        self._stack: list[list[float]] = []

    def install(self) -> None:
        from numba.core import dispatcher

        original = dispatcher.Dispatcher.compile
        timer = self

        def timed_compile(disp, sig):
            start = time.thread_time()
            caller = timer._caller() if not timer._stack else None
            timer._stack.append([0.0])
            try:
                return original(disp, sig)
            finally:
                spent = time.thread_time() - start
                inner = timer._stack.pop()[0]
                if timer._stack:
                    timer._stack[-1][0] += spent
                else:
                    timer.callers[caller] += spent
                name = f"{disp.py_func.__module__.rsplit('.', 1)[-1]}.{disp.py_func.__qualname__}"
                timer.kernels[name] += spent - inner
                timer.calls[name] += 1
                timer.signatures[name].add(str(sig))

        dispatcher.Dispatcher.compile = timed_compile

    @staticmethod
    def _caller() -> str:
        frames = [f for f in traceback.extract_stack()
                  if "graphclust" in f.filename and "numba" not in f.filename]
        return " <- ".join(f"{os.path.basename(f.filename)}:{f.name}" for f in frames[-2:][::-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", default="digits")
    ap.add_argument("--signatures", action="store_true", help="list every signature compiled")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="numba-compile-times-") as cache:
        os.environ["NUMBA_CACHE_DIR"] = cache  # read when numba is first imported
        if "numba" in sys.modules:
            raise SystemExit("run in a fresh process: numba is imported already")
        timer = _Timer()
        timer.install()
        from graphclust.cli import main as cli

        wall = time.perf_counter()
        cpu = time.process_time()
        cli(["run", "--dataset", args.dataset, "--quiet"])
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
    total = sum(timer.kernels.values())
    print(f"compile {total:.1f} s of the compiling thread; the run: {cpu:.1f} s of processor "
          f"time, {wall:.1f} s wall")
    for caller, seconds in sorted(timer.callers.items(), key=lambda kv: -kv[1]):
        print(f"  {seconds:6.2f} s  from {caller}")
    print(f"{'seconds':>8}  {'calls':>5}  kernel")
    for name, seconds in sorted(timer.kernels.items(), key=lambda kv: -kv[1]):
        if seconds < 0.05 and not args.signatures:
            continue
        print(f"{seconds:8.2f}  {timer.calls[name]:5d}  {name} "
              f"({len(timer.signatures[name])} signature(s))")
        if args.signatures:
            for sig in sorted(timer.signatures[name]):
                print(f"{'':17}{sig}")


if __name__ == "__main__":
    main()
