"""Data larger than memory: ``.npy``, zarr and parquet as Dask arrays, labels streamed back.

One reader and one writer per format; the file's suffix picks it. Everything here needs
the ``dask`` extra (``pip install "graphclust[dask]"``; zarr and pyarrow for those
formats). The in-memory formats (``.npz``, ``.mat``, ``.csv``, LIBSVM) stay in
:mod:`graphclust.data`.

Chunk-size rule
---------------
Rows are split into chunks of ``max(1, chunk_bytes // (d * itemsize))`` rows, all
columns in one chunk (every part works on whole rows), where ``itemsize`` is that of the
float type the rows are computed in (:func:`graphclust.numerics.float_dtype`: 4 for
float32 and integers of at most 16 bits such as uint8 pixels, else 8), with ``chunk_bytes`` =
:data:`CHUNK_BYTES` (64 MiB) unless given. That is half Dask's default
``array.chunk-size`` (128 MiB): a chunk-wise stage holds its input chunk, the chunk's
rows of the anchor graph (``s`` entries a row) and of the embedding (``k`` a row) at
once, and a worker runs one chunk per thread, so a 64 MiB input chunk keeps a worker
with a few GB well inside its limit for any ``d`` while the chunks stay large enough
(hundreds of thousands of rows at ``d = 10``) for the scheduler's per-task cost to vanish.

Labels
------
A zarr group's array ``y`` (or ``labels``, ``gnd``, …) and a parquet column named ``y``,
``label``, ``labels``, ``class`` or ``target`` are returned as the labels, re-coded to
``0..c-1`` chunk by chunk (only the ``c`` class values reach the client). A ``.npy``
file holds only the features.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from graphclust._errors import InputError

__all__ = ["CHUNK_BYTES", "FORMATS", "chunk_rows", "computed_itemsize", "is_large_format",
           "open_array", "read_npy", "read_parquet", "read_zarr", "write_labels"]

#: Bytes of one input chunk (see the module's chunk-size rule).
CHUNK_BYTES = 64 * 2**20
#: Suffixes read as Dask arrays (and written by :func:`write_labels`).
FORMATS = (".npy", ".zarr", ".parquet")
_X_KEYS = ("X", "fea", "data", "features")
_Y_KEYS = ("y", "gnd", "labels", "label", "Y", "target", "class")


def _dask():
    try:
        import dask.array as da
    except ImportError:
        raise InputError('reading .npy/zarr/parquet as chunks needs dask: '
                         'pip install "graphclust[dask]"') from None
    return da


def chunk_rows(n_features: int, itemsize: int, chunk_bytes: int | None = None) -> int:
    """Rows per chunk: ``max(1, chunk_bytes // (n_features * itemsize))``."""
    size = CHUNK_BYTES if chunk_bytes is None else int(chunk_bytes)
    if size < 1:
        raise InputError(f"chunk_bytes must be a positive number of bytes, got {chunk_bytes}")
    return max(1, size // max(1, int(n_features) * int(itemsize)))


def computed_itemsize(dtype) -> int:
    """Bytes per value once the rows are converted to the float type they are computed in."""
    from graphclust.numerics import float_dtype

    return np.dtype(float_dtype(dtype)).itemsize


def is_large_format(path: str | os.PathLike) -> bool:
    """Whether ``path``'s suffix is one of :data:`FORMATS`."""
    return Path(path).suffix.lower() in FORMATS


def _check_2d(X, path):
    if X.ndim != 2 or X.shape[1] == 0 or X.dtype.kind not in "biuf":
        raise InputError(f"{path}: expected a 2-D numeric array (n_samples, n_features), "
                         f"got shape {X.shape} and dtype {X.dtype}")
    return X


def _recode(y):
    """Labels re-coded to ``0..c-1`` block by block; only the class values are gathered."""
    da = _dask()
    classes = np.unique(da.unique(y).compute())
    return y.map_blocks(lambda b: np.searchsorted(classes, b).astype(np.int64),
                        dtype=np.int64)


def _npy_rows(path: str, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of a ``.npy`` file, read through a memory map where the task runs."""
    return np.array(np.load(path, mmap_mode="r", allow_pickle=False)[start:stop])


def read_npy(path: str | os.PathLike, chunk_bytes: int | None = None):
    """``(X, None)``: a ``.npy`` file memory-mapped, then chunked by rows.

    Each chunk is one task that memory-maps the file and copies its rows, so a task
    carries the path, never the data (``da.from_array`` on the memory map would pickle
    the whole array into the graph sent to a distributed scheduler). The workers must
    see the same path (a local cluster, or a shared file system)."""
    import dask

    da = _dask()
    try:
        mm = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None
    _check_2d(mm, path)
    n, d = mm.shape
    rows = chunk_rows(d, computed_itemsize(mm.dtype), chunk_bytes)
    read = dask.delayed(_npy_rows, pure=True)
    where = str(Path(path).resolve())
    blocks = [da.from_delayed(read(where, s, min(s + rows, n)), (min(rows, n - s), d), mm.dtype)
              for s in range(0, n, rows)]
    return da.concatenate(blocks), None


def read_zarr(path: str | os.PathLike, chunk_bytes: int | None = None):
    """``(X, y)`` from a zarr array (``y`` None) or a group holding ``X`` and maybe ``y``.

    The stored chunks are kept when they span all columns; otherwise rows are re-chunked
    by the chunk-size rule."""
    da = _dask()
    try:
        import zarr
    except ImportError:
        raise InputError('reading zarr needs zarr: pip install "graphclust[dask]"') from None
    try:
        node = zarr.open(str(path), mode="r")
    except Exception as exc:  # noqa: BLE001 - zarr raises several types for a non-store
        raise InputError(f"cannot read {path} as zarr: {type(exc).__name__}: {exc}") from None
    y = None
    if isinstance(node, zarr.Group):
        keys = set(node.array_keys())
        xkey = next((k for k in _X_KEYS if k in keys), None)
        if xkey is None:
            raise InputError(f"{path}: no features array in the zarr group "
                             f"(looked for {', '.join(_X_KEYS)})")
        X = da.from_zarr(str(path), component=xkey)
        ykey = next((k for k in _Y_KEYS if k in keys), None)
        y = None if ykey is None else da.from_zarr(str(path), component=ykey).ravel()
    else:
        X = da.from_zarr(str(path))
    _check_2d(X, path)
    if X.numblocks[1] != 1:
        X = X.rechunk((chunk_rows(X.shape[1], computed_itemsize(X.dtype), chunk_bytes),
                       X.shape[1]))
    if y is not None:
        if y.shape[0] != X.shape[0]:
            raise InputError(f"{path}: {y.shape[0]} labels for {X.shape[0]} rows")
        y = _recode(y.rechunk((X.chunks[0],)))
    return X, y


def read_parquet(path: str | os.PathLike, chunk_bytes: int | None = None):
    """``(X, y)``: the numeric columns of a parquet file or folder, one chunk per
    partition (the partition lengths computed in one pass); a label column (see
    the module) is ``y``, chunked like ``X``. ``chunk_bytes`` is unused: the files' row
    groups already bound the chunks."""
    _dask()
    try:
        import dask.dataframe as dd
    except ImportError:
        raise InputError('reading parquet needs dask[dataframe] and pyarrow: '
                         'pip install "graphclust[dask]"') from None
    try:
        df = dd.read_parquet(str(path))
    except Exception as exc:  # noqa: BLE001 - pyarrow/fsspec raise many types
        raise InputError(f"cannot read {path} as parquet: {type(exc).__name__}: {exc}") from None
    label = next((c for c in df.columns if str(c).lower() in _Y_KEYS), None)
    numeric = [c for c in df.columns if c != label and df[c].dtype.kind in "biuf"]
    if not numeric:
        raise InputError(f"{path}: no numeric feature columns (columns: {list(df.columns)})")
    # lengths counted once, per partition (``lengths=True`` can count them on a fused
    # version of the frame, with fewer partitions, and then fails); the label column is
    # cut from the same array as the features (a column of its own loses a chunk in this
    # Dask), then the features are cast back to their own common dtype
    lengths = tuple(int(v) for v in df.map_partitions(len).compute())
    dtype = np.result_type(*(df[c].dtype for c in numeric))
    if label is None:
        return df[numeric].to_dask_array(lengths=lengths), None
    both = df[[*numeric, label]].to_dask_array(lengths=lengths)
    X = both[:, :-1].astype(dtype, copy=False)
    y = _recode(both[:, -1])
    return X, y


_READERS = {".npy": read_npy, ".zarr": read_zarr, ".parquet": read_parquet}


def open_array(path: str | os.PathLike, chunk_bytes: int | None = None):
    """``(X, y)`` as Dask arrays from a ``.npy``, ``.zarr`` or ``.parquet`` path (``y`` may
    be None); :class:`~graphclust.InputError` for a missing path or another suffix."""
    p = Path(path)
    reader = _READERS.get(p.suffix.lower())
    if reader is None:
        raise InputError(f"{path}: unsupported chunked format {p.suffix!r} "
                         f"(use {', '.join(FORMATS)})")
    if not p.exists():
        raise InputError(f"no such data file or folder: {str(p)!r}")
    return reader(p, chunk_bytes)


def _npy(labels, tmp: Path) -> None:
    """Stream blocks into a memory-mapped ``.npy``, one block in the client at a time."""
    labels = labels.persist()  # each block below is then read, not recomputed
    mm = np.lib.format.open_memmap(tmp, mode="w+", dtype=labels.dtype, shape=labels.shape)
    start = 0
    for block in labels.blocks:
        values = np.asarray(block.compute())
        mm[start:start + values.shape[0]] = values
        start += values.shape[0]
    mm.flush()
    del mm


def _zarr(labels, tmp: Path) -> None:
    labels.to_zarr(str(tmp))  # every worker writes its own chunks


def _parquet(labels, tmp: Path) -> None:
    import dask.dataframe as dd

    dd.from_dask_array(labels, columns="label").to_frame().to_parquet(str(tmp), write_index=False)


_WRITERS = {".npy": _npy, ".zarr": _zarr, ".parquet": _parquet}


def write_labels(path: str | os.PathLike, labels) -> Path:
    """Write labels (a Dask or NumPy array) to ``.npy``, ``.zarr`` or ``.parquet`` by the
    suffix, chunk by chunk, never whole in one process for zarr and parquet.

    The result appears only when complete: it is written beside ``path`` under a
    temporary name, then renamed (an existing ``path`` is replaced)."""
    da = _dask()
    out = Path(path)
    writer = _WRITERS.get(out.suffix.lower())
    if writer is None:
        raise InputError(f"{path}: labels are written as {', '.join(FORMATS)} "
                         "(by the file's suffix)")
    if not isinstance(labels, da.Array):
        labels = np.asarray(labels)
        labels = da.from_array(labels, chunks=(chunk_rows(1, labels.dtype.itemsize),))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.")) / out.name
    try:
        writer(labels, tmp)
        if out.is_dir() and not out.is_symlink():
            shutil.rmtree(out)
        elif out.exists() and tmp.is_dir():
            out.unlink()
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp.parent, ignore_errors=True)
    return out
