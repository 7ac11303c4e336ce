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
"""

from __future__ import annotations

from numba.core.cpu_options import ParallelOptions

__all__ = ["PARALLEL"]

#: ``parallel=`` of the manifold kernels: ``prange`` loops only (see the module's docstring).
PARALLEL = ParallelOptions({"prange": True, "comprehension": False, "reduction": False,
                            "inplace_binop": False, "setitem": False, "numpy": False,
                            "stencil": False, "fusion": False})
