"""Dask sizes the sparse arrays the chunked pipeline keeps on the workers by their buffers
(a distributed worker spills what it can measure; a ``csr_array`` measured 56 bytes)."""

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("dask")


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_arrays_are_sized_by_their_buffers(fmt):
    from dask.sizeof import sizeof

    import graphclust._dask._run  # noqa: F401 - registers the measure

    a = sp.random_array((20_000, 300), density=0.01, format=fmt, random_state=0,
                        dtype=np.float64)
    buffers = sum(v.nbytes for v in vars(a).values() if isinstance(v, np.ndarray))
    if fmt == "coo":
        buffers = a.data.nbytes + sum(c.nbytes for c in a.coords)
    assert buffers <= sizeof(a) <= buffers + 4096
