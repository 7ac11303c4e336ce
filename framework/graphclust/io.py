"""Data larger than memory: ``.npy``, zarr and parquet as Dask arrays, labels streamed back.

One reader and one writer per format; the file's suffix picks it. Everything here needs
the ``dask`` extra (``pip install "graphclust[dask]"``; zarr and pyarrow for those
formats). The in-memory formats (``.npz``, ``.mat``, ``.csv``, LIBSVM) stay in
:mod:`graphclust.data`.

Graphs (no Dask needed): :func:`read_graph` reads an edge list (``.csv``, ``.tsv``,
``.parquet``), a Matrix Market ``.mtx`` or a scipy sparse ``.npz`` into a CSR matrix and
its node ids, and :func:`write_node_labels` writes labels keyed by node id
(:doc:`/graphs`).

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
from graphclust._graphio import GRAPH_FORMATS, read_graph, write_node_labels

__all__ = ["CHUNK_BYTES", "COLUMN_FORMATS", "FORMATS", "GRAPH_FORMATS", "chunk_rows",
           "computed_itemsize", "confidence_path", "is_large_format", "open_array",
           "read_graph", "read_npy", "read_parquet", "read_zarr", "write_labels",
           "write_node_labels"]

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


#: A ``.npy`` file is read in memory when its features, in the float type they are
#: computed in, take at most this share of the memory available now (psutil) ...
NPY_MEMORY_SHARE = 0.25
#: ... or, when psutil is not installed, at most this many bytes.
NPY_MEMORY_FALLBACK = 2 * 2**30


def npy_memory_limit() -> tuple[int, str]:
    """``(bytes, how)``: the largest ``.npy`` input read in memory, and how the limit was
    decided. A quarter of the available memory (``psutil.virtual_memory().available``):
    an in-memory fit holds the features, a scaled copy and its ``n``-sized work (rows of
    the graph, the embedding), a few times the features; without psutil a fixed 2 GiB."""
    try:
        import psutil
    except ImportError:
        return NPY_MEMORY_FALLBACK, "2 GiB (psutil is not installed)"
    avail = int(psutil.virtual_memory().available)
    return int(NPY_MEMORY_SHARE * avail), (f"a quarter of the {avail / 2**30:.1f} GiB of "
                                           "memory available")


def npy_fits_in_memory(path: str | os.PathLike) -> tuple[bool, str]:
    """Whether the ``.npy`` file at ``path`` is read in memory (:func:`npy_memory_limit`),
    and a sentence saying why not (empty when it fits). A file that cannot be read as an
    array fits (the in-memory reader then names what is wrong)."""
    try:
        mm = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError):
        return True, ""
    need = int(np.prod(mm.shape, dtype=np.int64)) * computed_itemsize(mm.dtype) \
        if mm.dtype.kind in "biuf" else 0
    limit, how = npy_memory_limit()
    if need <= limit:
        return True, ""
    return False, (f"{path}: {need / 2**20:.0f} MB of features exceed the in-memory limit "
                   f"of {limit / 2**20:.0f} MB ({how}); read in chunks on Dask")


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


def read_zarr(path: str | os.PathLike, chunk_bytes: int | None = None,
              labels: str | bool | None = None, note=None):
    """``(X, y)`` from a zarr array (``y`` None) or a group holding ``X`` and maybe ``y``
    (the array ``labels`` when given, none with ``labels=False``).

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
        if labels is False:
            ykey = None
        elif labels is not None:
            ykey = str(labels)
            if ykey not in keys:
                raise InputError(f"{path}: --labels {ykey!r}: no such array in the zarr group "
                                 f"(arrays: {', '.join(sorted(keys))})")
        else:
            ykey = next((k for k in _Y_KEYS if k in keys), None)
            if ykey is not None and note is not None:
                note(f"{Path(path).name}: array {ykey!r} taken as the labels (--no-labels "
                     "to ignore it)")
        y = None if ykey is None else da.from_zarr(str(path), component=ykey).ravel()
    else:
        if labels not in (None, False):
            raise InputError(f"{path}: --labels {labels!r}: a zarr array holds only features "
                             "(labels need a group with arrays X and y)")
        X = da.from_zarr(str(path))
    _check_2d(X, path)
    if X.numblocks[1] != 1:
        X = X.rechunk((chunk_rows(X.shape[1], computed_itemsize(X.dtype), chunk_bytes),
                       X.shape[1]))
    if y is not None:
        if y.shape[0] != X.shape[0]:
            raise InputError(f"{path}: {y.shape[0]} labels for {X.shape[0]} rows")
        if y.dtype.kind in "fc":
            lost = int(da.isnan(y).sum().compute())
            if lost:
                raise InputError(f"{path}: the labels {ykey!r} have {lost} missing values (NaN, "
                                 f"of {y.shape[0]}); give every row a label or pass --no-labels")
        y = _recode(y.rechunk((X.chunks[0],)))
    return X, y


def _label_name(path, columns, labels):
    """The column ``--labels`` names (a name, else a 0-based index)."""
    names = [str(c) for c in columns]
    text = str(labels)
    if text in names:
        return columns[names.index(text)]
    if text.lstrip("-").isdigit() and -len(names) <= int(text) < len(names):
        return columns[int(text)]
    raise InputError(f"{path}: --labels {text!r}: no such column (columns: {', '.join(names)})")


def _parquet_labels_problem(col, n: int) -> str | None:
    """Why a label column is not class labels (missing values, non-integer numbers, more
    distinct values than half the rows), or None; one pass, then one for the classes."""
    import dask

    nulls, fractional = dask.compute(
        col.isna().sum(),
        (col.astype("float64") % 1 > 0).any() if col.dtype.kind == "f" else False)  # NaN: no
    if bool(fractional):
        return "its values are not integers (continuous values are a feature, not a class)"
    if int(nulls):
        raise InputError(f"column {str(col.name)!r} holds the labels but {int(nulls)} of its "
                         f"{n} values are missing (null); give every row a label, or pass "
                         "--no-labels to cluster without them")
    distinct = int(col.nunique().compute())
    if distinct > max(2, n // 2):
        return (f"it has {distinct} distinct values in {n} rows (class labels have at most "
                f"{max(2, n // 2)})")
    return None


def read_parquet(path: str | os.PathLike, chunk_bytes: int | None = None,
                 labels: str | int | bool | None = None, note=None):
    """``(X, y)``: the numeric columns of a parquet file or folder, one chunk per
    partition (the partition lengths computed in one pass); a label column is ``y``,
    chunked like ``X``. ``chunk_bytes`` is unused: the files' row groups already bound
    the chunks.

    The label column is ``labels`` (a name or 0-based index; refused when it has nulls,
    non-integer numbers or more distinct values than half the rows), none with
    ``labels=False``, else a column named ``y``, ``label``, ``labels``, ``class`` or
    ``target`` when its values are class labels by the same test (a column so named that
    fails it stays a feature; ``note`` is told either way). Nullable integer columns
    (pandas' ``Int64``) are features as float64, their nulls NaN (refused by the fit)."""
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
    columns = list(df.columns)
    explicit = labels is not None and labels is not False
    if explicit:
        label = _label_name(path, columns, labels)
    elif labels is None:
        label = next((c for c in columns if str(c).lower() in _Y_KEYS), None)
    else:
        label = None
    # lengths counted once, per partition (``lengths=True`` can count them on a fused
    # version of the frame, with fewer partitions, and then fails)
    lengths = tuple(int(v) for v in df.map_partitions(len).compute())
    n = sum(lengths)
    if label is not None:
        if df[label].dtype.kind not in "biuf":  # words: only the missing ones are refused
            nulls = int(df[label].isna().sum().compute())
            if nulls:
                raise InputError(f"{path}: column {str(label)!r} holds the labels but {nulls} "
                                 f"of its {n} values are missing (null); give every row a "
                                 "label, or pass --no-labels to cluster without them")
            problem = None
        else:
            try:
                problem = _parquet_labels_problem(df[label], n)
            except InputError as exc:
                raise InputError(f"{path}: {exc}") from None
        if problem and explicit:
            raise InputError(f"{path}: column {str(label)!r} is not a label column: {problem}; "
                             "pass --no-labels to cluster without labels")
        if problem:
            if note is not None:
                note(f"{Path(path).name}: column {str(label)!r} is kept as a feature, not "
                     f"taken as the labels: {problem.split(' (')[0]}")
            label = None
        elif note is not None:
            note(f"{Path(path).name}: column {str(label)!r} taken as the labels "
                 "(--no-labels to cluster every column, --labels COLUMN to choose)")
    numeric = [c for c in columns if c != label and df[c].dtype.kind in "biuf"]
    if not numeric:
        raise InputError(f"{path}: no numeric feature columns (columns: {columns})")
    nullable = [c for c in numeric if not isinstance(df[c].dtype, np.dtype)]
    if nullable:  # pandas' extension dtypes (Int64, Float64, boolean): NA becomes NaN
        df = df.assign(**{str(c): df[c].astype("float64") for c in nullable})
    dtype = np.result_type(*(df[c].dtype for c in numeric))
    mixed = [c for c in numeric if df[c].dtype != dtype]
    if mixed:  # e.g. int and bool columns: pandas' values would be an object array
        df = df.assign(**{str(c): df[c].astype(dtype) for c in mixed})
    if label is None:
        return df[numeric].to_dask_array(lengths=lengths), None
    # the label column is cut from the same array as the features (a column of its own
    # loses a chunk in this Dask), then the features are cast back to their common dtype
    if not isinstance(df[label].dtype, np.dtype) and df[label].dtype.kind in "biuf":
        df = df.assign(**{str(label): df[label].astype("int64")})
    both = df[[*numeric, label]].to_dask_array(lengths=lengths)
    X = both[:, :-1].astype(dtype, copy=False)
    y = _recode(both[:, -1])
    return X, y


_READERS = {".npy": read_npy, ".zarr": read_zarr, ".parquet": read_parquet}


def open_array(path: str | os.PathLike, chunk_bytes: int | None = None,
               labels: str | int | bool | None = None, note=None):
    """``(X, y)`` as Dask arrays from a ``.npy``, ``.zarr`` or ``.parquet`` path (``y`` may
    be None); :class:`~graphclust.InputError` for a missing path or another suffix.
    ``labels`` and ``note`` as for :func:`read_parquet` (a ``.npy`` file has no labels)."""
    p = Path(path)
    reader = _READERS.get(p.suffix.lower())
    if reader is None:
        raise InputError(f"{path}: unsupported chunked format {p.suffix!r} "
                         f"(use {', '.join(FORMATS)})")
    if not p.exists():
        raise InputError(f"no such data file or folder: {str(p)!r}")
    if reader is read_npy:
        if labels not in (None, False):
            raise InputError(f"{path}: --labels {labels!r}: a .npy file holds only features")
        return reader(p, chunk_bytes)
    return reader(p, chunk_bytes, labels, note)


def _npy(labels, tmp: Path) -> None:
    """Stream blocks into a ``.npy`` file, one block in the client at a time (plain writes,
    not a memory map: a full disk is an ``OSError``, not a bus error)."""
    labels = labels.persist()  # each block below is then read, not recomputed
    dtype = np.dtype(labels.dtype)
    header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
              "shape": tuple(int(v) for v in labels.shape)}
    with open(tmp, "wb") as fh:
        np.lib.format.write_array_header_1_0(fh, header)
        fh.writelines(np.ascontiguousarray(block.compute(), dtype=dtype).tobytes()
                      for block in labels.blocks)


def _zarr(labels, tmp: Path) -> None:
    labels.to_zarr(str(tmp))  # every worker writes its own chunks


def _parquet(labels, tmp: Path, confidence=None) -> None:
    import dask.array as da
    import dask.dataframe as dd

    if confidence is None:
        frame = dd.from_dask_array(labels, columns="label").to_frame()
    else:  # a second column, the fit's confidence_ (docs/confidence.rst)
        confidence = da.asarray(confidence).rechunk((labels.chunks[0],))
        both = da.stack([labels.astype(np.float64), confidence.astype(np.float64)], axis=1)
        frame = dd.from_dask_array(both, columns=["label", "confidence"])
        frame = frame.astype({"label": "int64"})
    frame.to_parquet(str(tmp), write_index=False)


_WRITERS = {".npy": _npy, ".zarr": _zarr, ".parquet": _parquet}
#: Label formats with columns: the confidence is a column there, a second array elsewhere.
COLUMN_FORMATS = (".parquet", ".csv")


def confidence_path(path: str | os.PathLike) -> Path | None:
    """Where the confidence of labels written to ``path`` goes when the format has no
    columns (``labels.npy`` → ``labels.confidence.npy``; the same for ``.zarr`` and
    ``.txt``); ``None`` for a format with columns (:data:`COLUMN_FORMATS`)."""
    out = Path(path)
    if out.suffix.lower() in COLUMN_FORMATS or out.name in ("", ".."):
        return None  # a format with columns; or no file name ('.', '/': refused as folders)
    return out.with_name(f"{out.stem}.confidence{out.suffix}")


def _never_a_folder(out: Path) -> None:
    if out.is_dir():
        raise InputError(f"{out}: an existing folder; labels never replace a folder "
                         "(remove it or choose another name)")


def write_labels(path: str | os.PathLike, labels, confidence=None) -> Path:
    """Write labels (a Dask or NumPy array) to ``.npy``, ``.zarr`` or ``.parquet`` by the
    suffix, chunk by chunk, never whole in one process for zarr and parquet. With
    ``confidence`` (one value a label), a ``.parquet`` output gets a second column
    ``confidence``; the other formats have no columns (the caller writes it as a second
    array, :func:`confidence_path`).

    The result appears only when complete: it is written beside ``path`` under a
    temporary name, then renamed; an existing file ``path`` is replaced, an existing
    folder never is (:class:`~graphclust.InputError`, before anything is written)."""
    da = _dask()
    out = Path(path)
    writer = _WRITERS.get(out.suffix.lower())
    if writer is None:
        raise InputError(f"{path}: labels are written as {', '.join(FORMATS)} "
                         "(by the file's suffix)")
    if not isinstance(labels, da.Array):
        labels = np.asarray(labels)
        labels = da.from_array(labels, chunks=(chunk_rows(1, labels.dtype.itemsize),))
    _never_a_folder(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.")) / out.name
    try:
        if writer is _parquet:
            writer(labels, tmp, confidence)
        else:
            writer(labels, tmp)
        _never_a_folder(out)  # one made meanwhile is still never replaced
        if (out.exists() or out.is_symlink()) and tmp.is_dir():
            out.unlink()
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp.parent, ignore_errors=True)
    return out
