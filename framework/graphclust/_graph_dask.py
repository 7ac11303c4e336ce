"""A Dask collection as the graph of ``GraphClustering(graph="precomputed").fit(G)``.

Two kinds are read (:doc:`/graphs`), block by block on whatever scheduler is active:

* a **dask DataFrame of edges** with columns ``source``, ``target`` and an optional
  ``weight`` (other columns ignored): node ids of any sortable kind, by the edge-list rule
  of :func:`graphclust.io.read_graph` (each row one undirected edge, repeats summed, a
  list giving every edge both ways with equal weights read as a symmetric matrix). Each
  partition sends the client its distinct ids, then its edges as node indices (the
  sorted ids are handed to the partitions once): the client holds the ids and the
  edges, never a dense matrix.
* a **dask array of the rows of A** (``n x n``, any chunking, dense or scipy-sparse
  chunks): each chunk sends its nonzero entries, offset to its place.

The client assembles one CSR matrix from the blocks (``O(nnz)`` memory) and the fit runs
in memory on it, as for a scipy matrix: the malformed-graph rules of
:func:`graphclust._ongraph.graph_matrix` apply to it unchanged. Anything else (a dask
Series or Bag, an edge frame without those columns, an array of unknown chunk sizes, not
square, not numeric) is refused before any block is computed.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from graphclust._errors import InputError
from graphclust._graphio import indexed_edges_to_graph

__all__ = ["EDGE_COLUMNS", "dask_graph"]

#: The columns a dask DataFrame of edges must have (``weight`` is optional).
EDGE_COLUMNS = ("source", "target")

_WHAT = ('graph="precomputed" takes a Dask collection as a dask DataFrame of edges '
         "(columns source, target and optionally weight) or a dask array of the rows of "
         "the n x n matrix A")


def dask_graph(G) -> tuple[sp.sparray, np.ndarray | None]:
    """``(A, nodes)``: the graph of the Dask collection ``G`` as a sparse matrix, and the
    node id of each row (``None`` for an array: the row index is the id). See the
    module notes; raises :class:`~graphclust.InputError` for what cannot be read."""
    import dask.array as da

    try:
        import dask.dataframe as dd
    except ImportError:  # pragma: no cover - dask without its dataframe extra
        dd = None
    if isinstance(G, da.Array):
        return _from_row_blocks(G), None
    if dd is not None and isinstance(G, dd.DataFrame):
        return _from_edge_frame(G)
    raise InputError(f"{_WHAT}; got a {type(G).__module__}.{type(G).__name__}")


# -- a dask DataFrame of edges ----------------------------------------------------------
def _numeric_ids(dtype) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype))


def _partition_ids(part, numeric: bool, i: int) -> np.ndarray:
    out = []
    for col in EDGE_COLUMNS:
        if bool(part[col].isna().any()):
            raise InputError(f"the edge DataFrame, partition {i}: column {col!r} holds a "
                             "null node id")
        values = part[col].to_numpy()
        out.append(values if numeric else values.astype(str))
    return np.unique(np.concatenate(out))


def _partition_edges(part, nodes: np.ndarray, numeric: bool, weighted: bool, i: int):
    ends = []
    for col in EDGE_COLUMNS:
        values = part[col].to_numpy()
        ends.append(np.searchsorted(nodes, values if numeric else values.astype(str)))
    if weighted:
        try:
            w = part["weight"].to_numpy(dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"the edge DataFrame, partition {i}: column 'weight' must hold "
                             f"numbers, got {part['weight'].dtype}") from None
        bad = ~np.isfinite(w) | (w < 0)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise InputError(f"the edge DataFrame, partition {i}, row {j}: weight "
                             f"{float(w[j])!r}; weights must be finite and nonnegative")
    else:
        w = np.ones(len(part))
    return ends[0].astype(np.int64), ends[1].astype(np.int64), w


def _from_edge_frame(G) -> tuple[sp.csr_array, np.ndarray]:
    import dask

    columns = list(G.columns)
    missing = [c for c in EDGE_COLUMNS if c not in columns]
    if missing:
        raise InputError(f"{_WHAT}: the DataFrame has no column {', '.join(map(repr, missing))} "
                         f"(its columns: {', '.join(map(str, columns))})")
    weighted = "weight" in columns
    numeric = all(_numeric_ids(G.dtypes[c]) for c in EDGE_COLUMNS)
    parts = G[list(EDGE_COLUMNS) + (["weight"] if weighted else [])].to_delayed()
    ids = dask.compute(*[dask.delayed(_partition_ids)(p, numeric, i)
                         for i, p in enumerate(parts)])
    nodes = np.unique(np.concatenate(ids)) if ids else np.empty(0)
    if nodes.size == 0:
        raise InputError("the edge DataFrame has no edge (an edge list needs one row per "
                         "edge)")
    shared = dask.delayed(nodes)  # one key, handed to every partition
    blocks = dask.compute(*[dask.delayed(_partition_edges)(p, shared, numeric, weighted, i)
                            for i, p in enumerate(parts)])
    rows = np.concatenate([b[0] for b in blocks])
    cols = np.concatenate([b[1] for b in blocks])
    weights = np.concatenate([b[2] for b in blocks])
    del blocks
    return indexed_edges_to_graph(rows, cols, weights, int(nodes.size)), nodes


# -- a dask array of the rows of A ------------------------------------------------------
def _block_entries(block, r0: int, c0: int):
    """The stored (sparse chunk) or nonzero (dense chunk; NaN counts) entries of one
    chunk, at their place in ``A``."""
    if sp.issparse(block):
        coo = sp.coo_array(block)
        r, c, v = coo.row, coo.col, coo.data
    else:
        block = np.asarray(block)
        r, c = np.nonzero(block)
        v = block[r, c]
    return r.astype(np.int64) + r0, c.astype(np.int64) + c0, v


def _from_row_blocks(G) -> sp.coo_array:
    import dask

    if G.ndim != 2:
        raise InputError(f"{_WHAT}: the dask array is {G.ndim}-D, not an n x n matrix")
    if any(np.isnan(s) for s in G.shape):
        raise InputError(f"{_WHAT}: the dask array's chunk sizes are unknown (shape "
                         f"{G.shape}); call A.compute_chunk_sizes() first")
    if G.shape[0] != G.shape[1]:
        raise InputError(f'graph="precomputed": the graph must be a square n x n matrix, got '
                         f"a dask array of shape {G.shape}")
    if G.dtype.kind not in "biuf":
        raise InputError(f'graph="precomputed": the weights must be numbers, got dtype '
                         f"{G.dtype}")
    n = int(G.shape[0])
    if n == 0:
        raise InputError('graph="precomputed": the graph is empty (0 nodes)')
    r_off = np.concatenate([[0], np.cumsum(G.chunks[0])]).astype(int)
    c_off = np.concatenate([[0], np.cumsum(G.chunks[1])]).astype(int)
    chunks = G.to_delayed()
    tasks = [dask.delayed(_block_entries)(chunks[i, j], int(r_off[i]), int(c_off[j]))
             for i in range(chunks.shape[0]) for j in range(chunks.shape[1])]
    found = dask.compute(*tasks)
    rows = np.concatenate([f[0] for f in found])
    cols = np.concatenate([f[1] for f in found])
    dtype = np.float32 if G.dtype == np.float32 else np.float64
    vals = np.concatenate([f[2] for f in found]).astype(dtype, copy=False)
    return sp.coo_array((vals, (rows, cols)), shape=(n, n))
