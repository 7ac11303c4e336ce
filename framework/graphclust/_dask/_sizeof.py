"""Dask's measure of the scipy sparse *arrays* the chunked pipeline keeps on the workers.

``dask.sizeof`` knows scipy's sparse *matrices* (``spmatrix``) but not the sparse arrays
(``sparray``: ``csr_array``, …), which it sizes as a bare Python object (56 bytes). The
rows of ``Z`` that :func:`graphclust._dask._run.fit_chunked` persists are ``csr_array``
blocks, so a distributed worker counted them as nothing: they were never spilled to disk,
and at 100M rows (about 4 GB of ``Z`` a worker) the nanny restarted the workers. Sized
here by their buffers, they are managed memory like any array. Imported by
:mod:`graphclust._dask._run`, so every process that runs its tasks (client and workers)
registers it.
"""

from __future__ import annotations

import scipy.sparse as sp
from dask.sizeof import sizeof

__all__ = ["sizeof_sparse_array"]


@sizeof.register(sp.sparray)
def sizeof_sparse_array(a) -> int:
    """The bytes of a sparse array's buffers (and of anything else it holds)."""
    return int(sum(sizeof(v) for v in vars(a).values())) + 64
