"""Thread-count-free numerics: the steps whose last bits feed later decisions run on one
BLAS and one OpenMP thread.

A result computed with threads may depend on how many there are: scikit-learn's
``KMeans`` adds per-thread partial sums of the centres in the order the threads take
the GIL (so with two threads it is not even reproducible from run to run), and
OpenBLAS splits a product's inner sums between threads when the inner dimension is
long. Measured on the development machine (OpenBLAS 0.3.30/0.3.31, SkylakeX, one
against two threads): ``dgemm`` and ``sgemm`` of ``5000 x 784`` by ``784 x 50`` differ
(``7e-14``), so do ``Aᵀv`` over 100 000 rows (``2e-12``), ``v·v`` (``3e-11``) and a
dense ``eigh`` of a ``1000 x 1000`` matrix (``3e-15``); products with 10 or 64 columns
and ARPACK on a sparse matrix did not. A difference of ``1e-15`` in U-SPEC's hybrid
representatives changed the labels of the digits (ARI 0.847 between one and two
threads, issue 30): an unconverged k-means on the candidates and the transfer cut
amplify it.

:func:`fixed_threads` is therefore used around every global-small step whose output
feeds later steps (anchor selection, the ``m``-sized eigen-solves, the k-means of a
rounding and of an anchor index): those steps cost little next to the row-local passes,
and on one thread they give the same bits whatever ``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS`` or ``MKL_NUM_THREADS`` say, and whichever Dask scheduler runs
them (Dask's workers start with one thread per library, the local schedulers inherit the
process's). Row-local products (distances to anchors) keep their threads: a last-bit
difference there can only swap two candidates that tie to round-off, and the distances
kept are recomputed from the differences (:mod:`graphclust.numerics.distances`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from threadpoolctl import threadpool_limits

__all__ = ["fixed_threads"]


@contextmanager
def fixed_threads() -> Iterator[None]:
    """Run the block with one BLAS and one OpenMP thread (every library threadpoolctl
    sees), restoring the previous limits afterwards; see the module notes for why."""
    with threadpool_limits(limits=1):
        yield
