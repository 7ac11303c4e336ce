"""Graphs from files, and labels keyed by node id (public through :mod:`graphclust.io`).

:func:`read_graph` reads an edge list (``.csv``, ``.tsv``, ``.parquet``: columns
``source``, ``target`` and an optional ``weight``), a Matrix Market file (``.mtx``) or a
scipy sparse ``.npz`` (``scipy.sparse.save_npz``) into a CSR matrix and the node id of
each row; :func:`write_node_labels` writes labels beside their node ids. Neither needs
Dask; parquet needs pyarrow. The rules are those of :doc:`/graphs`.
"""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from graphclust._atomic import atomic_file
from graphclust._errors import InputError

__all__ = ["GRAPH_FORMATS", "EDGE_LIST_FORMATS", "LABEL_FORMATS", "read_graph",
           "write_node_labels", "write_node_layers"]

#: Suffixes :func:`read_graph` reads.
GRAPH_FORMATS = (".csv", ".tsv", ".parquet", ".mtx", ".npz")
#: The edge-list formats among them (node ids of any kind; the others: row indices).
EDGE_LIST_FORMATS = (".csv", ".tsv", ".parquet")
#: Suffixes :func:`write_node_labels` writes (a ``node`` and a ``label`` column).
LABEL_FORMATS = (".csv", ".tsv", ".parquet")
_INT = re.compile(r"^[+-]?[0-9]+$")


def _suffix(path) -> str:
    return Path(path).suffix.lower()


def read_graph(path: str | os.PathLike) -> tuple[sp.csr_array, np.ndarray]:
    """``(A, nodes)``: the graph in the file ``path`` and the node id of each row.

    Parameters
    ----------
    path : str or path
        By its suffix: an edge list ``.csv`` (comma-separated) or ``.tsv``
        (tab-separated) with a header row naming the columns ``source`` and ``target``
        (and optionally ``weight``; other columns are ignored), or a ``.parquet`` file
        with those columns (needs pyarrow); a Matrix Market ``.mtx``
        (``scipy.io.mmread``); a scipy sparse ``.npz`` (``scipy.sparse.save_npz``).

    Returns
    -------
    A : csr_array of shape (n, n)
        For an edge list, symmetric: each row is one undirected edge, weight 1 without
        a ``weight`` column; a pair listed more than once has its weights summed, except
        that a file listing every edge in both directions with equal weights (the entries
        of a symmetric matrix) is read as that matrix. For ``.mtx`` and ``.npz``, the
        matrix as stored (a directed one is symmetrised by the fit, with a warning).
    nodes : ndarray of shape (n,)
        Edge lists: the distinct node ids, sorted (integers when every id in a text file
        is an integer, else strings; a parquet column keeps its type). ``.mtx`` /
        ``.npz``: ``0..n-1``.

    Raises
    ------
    InputError
        A missing file, another suffix, a file that does not parse, missing columns,
        an empty id, a weight that is not a finite nonnegative number (with its line).
    """
    p = Path(path)
    suffix = _suffix(p)
    if suffix not in GRAPH_FORMATS:
        raise InputError(f"{path}: a graph is read from {', '.join(GRAPH_FORMATS)} (by the "
                         f"file's suffix), not {suffix or 'a file without suffix'!r}")
    if not p.is_file():
        raise InputError(f"no such graph file: {str(p)!r}")
    if suffix == ".mtx":
        return _matrix(p, _read_mtx(p))
    if suffix == ".npz":
        return _matrix(p, _read_npz(p))
    if suffix == ".parquet":
        source, target, weight = _read_parquet_edges(p)
    else:
        source, target, weight = _read_text_edges(p, "\t" if suffix == ".tsv" else ",")
    return edges_to_graph(source, target, weight, where=str(p))


def _matrix(path: Path, M) -> tuple[sp.csr_array, np.ndarray]:
    shape = np.shape(M)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InputError(f"{path}: a graph is a square n x n matrix, got shape {shape}")
    return sp.csr_array(M), np.arange(shape[0])


def _read_mtx(path: Path):
    import scipy.io

    try:
        return scipy.io.mmread(str(path))
    except Exception as exc:  # noqa: BLE001 - the reader raises several types
        raise InputError(f"cannot read {path} as Matrix Market: {type(exc).__name__}: "
                         f"{exc}") from None


def _read_npz(path: Path):
    try:
        return sp.load_npz(str(path))
    except Exception as exc:  # noqa: BLE001 - np.load / the format check raise several types
        raise InputError(f"cannot read {path} as a scipy sparse .npz (written by "
                         f"scipy.sparse.save_npz): {type(exc).__name__}: {exc}") from None


def _columns(path, names: list[str]) -> tuple[int, int, int | None]:
    """Indices of the ``source``, ``target`` and (optional) ``weight`` columns."""
    lowered = [str(n).strip().lower() for n in names]
    missing = [c for c in ("source", "target") if c not in lowered]
    if missing:
        raise InputError(f"{path}: an edge list needs a header with the columns source and "
                         f"target (and optionally weight); found {', '.join(map(str, names))}")
    return (lowered.index("source"), lowered.index("target"),
            lowered.index("weight") if "weight" in lowered else None)


def _read_text_edges(path: Path, delimiter: str):
    with open(path, newline="", encoding="utf-8") as fh:
        rows = csv.reader(fh, delimiter=delimiter)
        header = next(rows, None)
        if not header:
            raise InputError(f"{path}: empty file (an edge list needs a header row "
                             "source,target[,weight] and one row per edge)")
        s, t, w = _columns(path, header)
        need = max(i for i in (s, t, w) if i is not None) + 1
        source, target, weight = [], [], []
        for line, row in enumerate(rows, start=2):
            if not row:
                continue  # a blank line is no edge
            if len(row) < need:
                raise InputError(f"{path}, line {line}: {len(row)} field(s), the header "
                                 f"names {len(header)}")
            a, b = row[s].strip(), row[t].strip()
            if not a or not b:
                raise InputError(f"{path}, line {line}: an empty node id")
            source.append(a)
            target.append(b)
            if w is not None:
                weight.append(_weight(path, line, row[w]))
    ids = source + target
    if ids and all(_INT.match(v) for v in ids):
        source, target = [int(v) for v in source], [int(v) for v in target]
    return source, target, (np.asarray(weight, dtype=np.float64) if w is not None else None)


def _weight(path, line, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{path}, line {line}: weight {text!r} is not a number") from None
    if not np.isfinite(value) or value < 0:
        raise InputError(f"{path}, line {line}: weight {text!r}; weights must be finite and "
                         "nonnegative")
    return value


def _read_parquet_edges(path: Path):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(f"{path}: reading parquet needs pyarrow: pip install pyarrow "
                         '(or "graphclust[dask]")') from None
    try:
        table = pq.read_table(str(path))
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several types
        raise InputError(f"cannot read {path} as parquet: {type(exc).__name__}: {exc}") from None
    names = list(table.column_names)
    s, t, w = _columns(path, names)
    source = table.column(s).to_numpy(zero_copy_only=False)
    target = table.column(t).to_numpy(zero_copy_only=False)
    for col, values in ((names[s], source), (names[t], target)):
        if values.dtype.kind not in "iuOU" or (values.dtype.kind == "O" and any(
                v is None for v in values)):
            raise InputError(f"{path}: column {col!r} must hold node ids (integers or "
                             f"strings, no nulls), got {table.column(col).type}")
    weight = None
    if w is not None:
        weight = table.column(w).to_numpy(zero_copy_only=False)
        if weight.dtype.kind not in "biuf":
            raise InputError(f"{path}: column {names[w]!r} must hold numbers, got "
                             f"{table.column(w).type}")
        weight = weight.astype(np.float64)
        bad = ~np.isfinite(weight) | (weight < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"{path}, row {i}: weight {weight[i]!r}; weights must be finite "
                             "and nonnegative")
    return source, target, weight


def edges_to_graph(source, target, weight=None, *, where: str = "the edge list"
                   ) -> tuple[sp.csr_array, np.ndarray]:
    """``(A, nodes)`` from edge endpoints (any hashable, sortable ids) and optional weights,
    by the edge-list rule of :func:`read_graph`. ``O(E log E)``; nothing ``n x n``."""
    src, dst = np.asarray(source), np.asarray(target)
    if src.dtype.kind in "OU" or dst.dtype.kind in "OU":
        src, dst = src.astype(str), dst.astype(str)
    if src.size == 0:
        raise InputError(f"{where}: no edge (an edge list needs one row per edge)")
    nodes, index = np.unique(np.concatenate([src, dst]), return_inverse=True)
    n, m = nodes.size, src.size
    w = np.ones(m) if weight is None else np.asarray(weight, dtype=np.float64)
    return indexed_edges_to_graph(index[:m], index[m:], w, n), nodes


def indexed_edges_to_graph(rows, cols, weights, n: int) -> sp.csr_array:
    """The ``n x n`` matrix of edges given by node index, by the edge-list rule of
    :func:`read_graph`: each edge undirected, repeats summed, unless every edge is
    listed both ways with equal weights (then the entries of a symmetric matrix)."""
    B = sp.coo_array((weights, (rows, cols)), shape=(n, n)).tocsr()
    B.sum_duplicates()
    Bt = B.T.tocsr()
    both_ways = B.nnz == Bt.nnz and (B != Bt).nnz == 0
    return B if both_ways else (B + Bt).tocsr()


def write_node_layers(path: str | os.PathLike, nodes, layers) -> Path:
    """Write every layer (``layers``: ``(k, stability, labels)`` coarse to fine) beside the
    ``nodes``, atomically, as :func:`write_node_labels` writes the labels: a column
    ``node``, then one column ``k=K`` a layer, one row a node (``.csv``, ``.tsv``,
    ``.parquet``)."""
    columns = {f"k={k}": np.asarray(labels, dtype=np.int64) for k, _, labels in layers}
    return _write_node_table(path, nodes, columns)


def write_node_labels(path: str | os.PathLike, nodes, labels, confidence=None) -> Path:
    """Write ``labels`` beside their ``nodes`` (columns ``node`` and ``label``, and
    ``confidence`` when given) to ``.csv``, ``.tsv`` or ``.parquet`` (pyarrow) by the
    suffix, atomically: under a temporary name in the same folder, then renamed (never
    half-written)."""
    columns = {"label": np.asarray(labels, dtype=np.int64)}
    if confidence is not None:
        columns["confidence"] = np.asarray(confidence, dtype=np.float64)
    return _write_node_table(path, nodes, columns)


def _write_node_table(path, nodes, columns: dict[str, np.ndarray]) -> Path:
    """A ``node`` column and ``columns`` (one array a column, one row a node),
    under a temporary name in the same folder, then renamed."""
    out = Path(path)
    suffix = _suffix(out)
    if suffix not in LABEL_FORMATS:
        raise InputError(f"{path}: labels keyed by node id are written as "
                         f"{', '.join(LABEL_FORMATS)} (by the file's suffix)")
    nodes = np.asarray(nodes)
    for values in columns.values():
        if nodes.shape != values.shape:
            raise InputError(f"{len(nodes)} node ids for {len(values)} labels")
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(out) as tmp:
        if suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.table({"node": nodes.tolist() if nodes.dtype.kind in "OU"
                                     else nodes, **columns}), tmp)
        else:
            sep = "\t" if suffix == ".tsv" else ","
            with open(tmp, "w", newline="", encoding="utf-8") as fh:
                writer = csv.writer(fh, delimiter=sep, lineterminator="\n")
                writer.writerow(["node", *columns])
                writer.writerows(zip(nodes.tolist(), *(v.tolist() for v in columns.values())))
    return out
