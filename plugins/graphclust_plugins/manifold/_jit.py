"""The numba options the manifold kernels compile with, chosen for a short first compile.

A user's first fit compiles every kernel its route calls (numba caches them for later
runs), so what a kernel asks of the compiler is paid once per install, on the clock of
that first fit (issue 48, deliverable 4; ``python -m benchmarks.cold_start``):

* :data:`PARALLEL` turns only explicit ``numba.prange`` loops into parallel regions. With
  ``parallel=True`` numba also rewrites every array expression and allocation
  (``np.zeros``, ``np.full``, ``.sum()``) into a parallel region of its own, each compiled
  as a separate function — compile time for work a loop of a few microseconds does, and
  no change of result (the kernels' reductions are integer counts, or loops written out).
* Small helpers are ``forceinline=True`` (LLVM inlines the compiled helper into its
  callers), not ``inline="always"`` (numba copies the helper's IR into every caller, where
  it goes through the parallel passes again with each): NN-descent's kernels compiled in
  22 s of processor time with the helpers inlined by numba, 17 s without, and run as
  fast. The layout's two one-line helpers stay inlined by numba: called, its epoch ran
  3 % slower.
* ``numba.prange(0, n)`` rather than ``numba.prange(n)``: numba types the index of
  ``prange(n)`` as unsigned inside the parallel region and as signed before it, so every
  helper taking the index (or a value computed from it) was compiled twice; the index of
  ``prange(0, n)`` is signed in both.

And one runtime option: the threads of numba's OpenMP layer (GNU libgomp here) wait
passively between parallel regions (:data:`WAIT_POLICY`, set as ``OMP_WAIT_POLICY``
unless the user set it, before the first kernel starts the layer). libgomp's default
spins a waiting thread for up to ``GOMP_SPINCOUNT`` (300 000) iterations before it
sleeps, which suits a thread per dedicated core; the family's kernels hand off in many
short regions (the layout one per block, 8 an epoch, 480 a 60-epoch layout; NN-descent
about 20 a round), and on a shared machine a spinning thread takes the core from the
very thread it waits for. Measured on MNIST-70k (``auto``, 2 threads, a 2-core machine
at load 13; benchmarks/HISTORY.md, 2026-11-28): the layout alone 8.7 -> 6.7 processor
seconds (19.4 -> 15.7 s wall; one thread: 6.6 s, 13.8 s wall), the whole fit 16.5 ->
13.5 processor seconds (35.4 -> 29.4 s wall), the same labels (the kernels' results do
not depend on threads, let alone on how they wait). A passive wait costs a wake-up (a
futex call, microseconds) per region instead.
"""

from __future__ import annotations

import os

from numba.core.cpu_options import ParallelOptions

__all__ = ["PARALLEL", "WAIT_POLICY"]

#: ``OMP_WAIT_POLICY`` of numba's OpenMP threads unless the environment sets one (module
#: notes); read by libgomp when numba first starts its threads, so it is set on import,
#: before any kernel of the family runs.
WAIT_POLICY = "PASSIVE"
os.environ.setdefault("OMP_WAIT_POLICY", WAIT_POLICY)

#: ``parallel=`` of the manifold kernels: ``prange`` loops only (see the module's docstring).
PARALLEL = ParallelOptions({"prange": True, "comprehension": False, "reduction": False,
                            "inplace_binop": False, "setitem": False, "numpy": False,
                            "stencil": False, "fusion": False})
