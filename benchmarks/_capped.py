"""Run a peer in a child process under a wall-time cap (used by the per-bundle scripts).

``run_capped(target, args, cap)`` calls ``target(*args, queue)`` in a forked child and
returns what the child put on the queue, or an :class:`OverCap` with the CPU seconds the
child had used when it was stopped.

The parent reads the queue *while* it waits. Joining the child first and reading
afterwards deadlocks as soon as the result is larger than the pipe buffer (64 KiB, e.g.
70 000 labels): the child cannot exit before its queue is drained, so a finished peer
would be reported as over the cap.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue as _queue
import time

__all__ = ["OverCap", "child_cpu_seconds", "run_capped"]


class OverCap:
    """A capped child that was stopped; ``cpu_seconds`` it had used (None if unknown)."""

    def __init__(self, cpu_seconds):
        self.cpu_seconds = cpu_seconds

    def __repr__(self) -> str:
        return f"OverCap(cpu_seconds={self.cpu_seconds})"


def child_cpu_seconds(pid: int):
    """utime + stime of a live process from /proc (Linux), else None."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def run_capped(target, args, cap: float, start_method: str = "fork"):
    """``target(*args, queue)`` in a child: its queued result, or :class:`OverCap`.

    Raises ``RuntimeError`` when the child exits without a result (it crashed)."""
    ctx = mp.get_context(start_method)
    q = ctx.Queue()
    p = ctx.Process(target=target, args=(*args, q))
    p.start()
    deadline = time.perf_counter() + cap
    try:
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                used = child_cpu_seconds(p.pid)
                p.terminate()
                return OverCap(used)
            try:
                return q.get(timeout=min(left, 1.0))
            except _queue.Empty:
                if not p.is_alive():
                    try:  # the result may have arrived just as the child exited
                        return q.get(timeout=1.0)
                    except _queue.Empty:
                        raise RuntimeError(
                            f"capped child exited with code {p.exitcode} and no result") from None
    finally:
        p.join(10)
        if p.is_alive():  # pragma: no cover - a child that ignores SIGTERM
            p.kill()
            p.join()
