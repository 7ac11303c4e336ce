"""Hypothesis strategies for the data and file boundary, reusable by plugin authors.

Three families, each a description that a test turns into the real thing:

* :func:`data_files` — a table (columns of ``int``, ``float32``, ``float64``, ``bool``,
  pandas' nullable ``Int64`` and ``str``, with nulls and NaN) written as CSV, TSV,
  ``.npy``, ``.npz``, parquet (row groups of random sizes, empty ones included) or zarr
  (row chunks of random sizes, zero rows included), with or without a header, and the
  ``labels`` argument a reader gets (``None`` for the file's own rule, ``False`` for
  none, or a column name). :meth:`DataFile.write` writes it into a folder.
* :func:`dask_inputs` — a :class:`DaskInput`: values (any of the dtypes above, NaN, inf,
  huge, tiny and offset values) with random row chunks (empty and one-row chunks
  included) as a dask array, DataFrame or Series; :meth:`DaskInput.collection` builds it
  and :meth:`DaskInput.computed` gives the same data in memory (NumPy or pandas).
* :func:`output_plans` — a :class:`OutputPlan`: a scratch tree (an input file, a spec,
  existing files and folders, a read-only folder, symbolic links) and the command-line
  output options of one run (``--output``, ``--plot``), drawn among those paths and new
  ones, duplicates included. :meth:`OutputPlan.build` creates the tree.

The strategies never touch the file system themselves (hypothesis may replay them);
the objects they draw do, when asked, in a folder the test owns::

    from hypothesis import given
    from graphclust.testing.strategies import data_files

    @given(data_files())
    def test_reader(spec):
        with tempfile.TemporaryDirectory() as tmp:
            path = spec.write(tmp)
            ...

Requires ``hypothesis`` (and ``pandas``, ``pyarrow``, ``zarr``, ``dask`` for the formats
and collections that need them; a test that draws them should ``importorskip`` them).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs
import numpy as np

try:
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - a plain install has no hypothesis
    raise ImportError("graphclust.testing.strategies needs hypothesis: "
                      "pip install hypothesis") from exc

__all__ = ["COLUMN_KINDS", "FILE_FORMATS", "Column", "DataFile", "DaskInput", "OutputPlan",
           "columns", "dask_inputs", "data_files", "output_plans", "row_chunks"]

#: Column dtypes drawn by :func:`columns` (``Int64`` is pandas' nullable integer).
COLUMN_KINDS = ("int", "float32", "float64", "bool", "Int64", "str")
#: File formats drawn by :func:`data_files` (the suffixes the command line reads).
FILE_FORMATS = ("csv", "tsv", "npy", "npz", "parquet", "zarr")
#: Names a label column may have, some of them a reader's label names.
_NAMES = ("a", "b", "x", "y", "label", "class", "id", "Target", "1.5", "nan", " ")
_WORDS = ("", "cat", "dog", "NA", "nan", "null", "1", "2.5", "x y", "é")


@attrs.frozen
class Column:
    """One column: a name, a kind (one of :data:`COLUMN_KINDS`) and its values, ``None``
    for a null (NaN in a float column)."""

    name: str
    kind: str
    values: tuple

    def array(self) -> np.ndarray:
        """The values as NumPy holds them: floats with NaN for nulls (``Int64`` too), ints,
        bools, or strings (``""`` for a null)."""
        if self.kind == "str":
            return np.array(["" if v is None else v for v in self.values], dtype=str)
        if self.kind in ("float32", "float64", "Int64"):
            return np.array([np.nan if v is None else v for v in self.values],
                            dtype=np.float32 if self.kind == "float32" else np.float64)
        return np.array(self.values, dtype=np.int64 if self.kind == "int" else bool)

    def series(self):
        """The values as a pandas Series of the column's dtype (nulls as ``<NA>``/NaN)."""
        import pandas as pd

        dtype = {"int": "int64", "float32": "float32", "float64": "float64", "bool": "bool",
                 "Int64": "Int64", "str": "object"}[self.kind]
        return pd.Series(list(self.values), dtype=dtype, name=self.name)

    def text(self, i: int) -> str:
        """Value ``i`` as a CSV field (``""`` for a null)."""
        v = self.values[i]
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return ""
        return repr(float(v)) if self.kind in ("float32", "float64") else str(v)


def _values(kind: str, n: int, nulls: bool):
    """A strategy for ``n`` values of one kind; ``None`` marks a null where allowed."""
    if kind == "int":
        one = st.integers(-3, 5)
    elif kind == "bool":
        one = st.booleans()
    elif kind == "str":
        one = st.sampled_from(_WORDS)
    elif kind == "Int64":
        one = st.integers(-2, 4)
    else:
        one = st.one_of(st.integers(-3, 5).map(float),
                        st.floats(-1e6, 1e6, allow_nan=False, width=32),
                        st.sampled_from([0.5, 1e9, 1.7e9 + 0.25, 1e-200, np.inf, -np.inf]))
    if nulls and kind in ("float32", "float64", "Int64", "str"):
        one = st.one_of(st.none(), one)
    return st.lists(one, min_size=n, max_size=n).map(tuple)


@st.composite
def columns(draw, n_rows: int, max_columns: int = 4, nulls: bool = True,
            kinds: tuple[str, ...] = COLUMN_KINDS) -> tuple[Column, ...]:
    """0 to ``max_columns`` columns of ``n_rows`` values, distinct names, kinds drawn from
    ``kinds``; nulls/NaN in the nullable kinds when ``nulls``."""
    d = draw(st.integers(0, max_columns))
    names = draw(st.lists(st.sampled_from(_NAMES), min_size=d, max_size=d, unique=True))
    out = []
    for name in names:
        kind = draw(st.sampled_from(kinds))
        out.append(Column(name, kind, draw(_values(kind, n_rows, nulls))))
    return tuple(out)


@st.composite
def row_chunks(draw, n: int, max_chunks: int = 5) -> tuple[int, ...]:
    """A chunking of ``n`` rows: sizes summing to ``n``, empty and one-row chunks
    included (at least one chunk, even for ``n = 0``)."""
    cuts = sorted(draw(st.lists(st.integers(0, n), min_size=0, max_size=max_chunks - 1)))
    edges = [0, *cuts, n]
    return tuple(b - a for a, b in zip(edges, edges[1:]))


@attrs.frozen
class DataFile:
    """A data file to write: ``fmt`` (one of :data:`FILE_FORMATS`), its columns, whether a
    text file has a header, the reader's ``labels`` argument, and ``chunks`` (parquet row
    groups or zarr row chunks; sizes summing to the row count, zeros allowed)."""

    fmt: str
    columns: tuple[Column, ...]
    n_rows: int
    header: bool = True
    labels: str | bool | None = None
    chunks: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        return f"data.{self.fmt}"

    def label_column(self) -> Column | None:
        """The column named by ``labels``, if any."""
        return next((c for c in self.columns if c.name == self.labels), None)

    def feature_columns(self) -> tuple[Column, ...]:
        """The columns that are not the named label column."""
        named = self.label_column()
        return tuple(c for c in self.columns if c is not named)

    def matrix(self) -> np.ndarray:
        """The numeric columns stacked as one array (what ``.npy``/``.npz``/zarr hold):
        the common dtype of the columns, strings when a column holds words."""
        cols = self.feature_columns() if self.fmt != "npy" else self.columns
        if not cols:
            return np.zeros((self.n_rows, 0))
        return np.column_stack([c.array() for c in cols])

    def write(self, folder: str | os.PathLike) -> Path:
        """Write the file into ``folder``; returns its path."""
        path = Path(folder) / self.name
        getattr(self, f"_write_{self.fmt}")(path)
        return path

    def _write_csv(self, path: Path, sep: str = ",") -> None:
        lines = [sep.join(c.name for c in self.columns)] if self.header else []
        lines += [sep.join(c.text(i) for c in self.columns) for i in range(self.n_rows)]
        path.write_text("".join(f"{line}\n" for line in lines))

    def _write_tsv(self, path: Path) -> None:
        self._write_csv(path, "\t")

    def _write_npy(self, path: Path) -> None:
        np.save(path, self.matrix(), allow_pickle=False)

    def _write_npz(self, path: Path) -> None:
        arrays = {"X": self.matrix()}
        label = self.label_column()
        if label is not None:
            arrays[label.name.strip() or "y"] = label.array()
        np.savez(path, **arrays)

    def _write_parquet(self, path: Path) -> None:
        import pandas as pd
        import pyarrow as pa
        import pyarrow.parquet as pq

        frame = pd.DataFrame({c.name: c.series() for c in self.columns},
                             index=pd.RangeIndex(self.n_rows))
        table = pa.Table.from_pandas(frame, preserve_index=False)
        with pq.ParquetWriter(path, table.schema) as writer:
            start = 0
            for size in self.chunks or (self.n_rows,):
                writer.write_table(table.slice(start, size))
                start += size

    def _write_zarr(self, path: Path) -> None:
        import zarr

        X = self.matrix()
        rows = max(1, max(self.chunks, default=1))
        group = zarr.open_group(str(path), mode="w")
        if X.dtype.kind == "U":
            X = X.astype(object).astype(str)
        group.create_array("X", data=X, chunks=(rows, max(1, X.shape[1])))
        label = self.label_column()
        if label is not None and label.kind != "str":
            group.create_array(label.name.strip() or "y", data=label.array(),
                               chunks=(rows,))


@st.composite
def data_files(draw, formats: tuple[str, ...] = FILE_FORMATS, max_rows: int = 8,
               max_columns: int = 4) -> DataFile:
    """A :class:`DataFile`: a format, 0 to ``max_rows`` rows of 0 to ``max_columns``
    columns (any kind, nulls included), header or not, and the reader's ``labels``
    argument: ``None`` (the file's own rule), ``False`` (none), an existing column's name
    or a missing one."""
    fmt = draw(st.sampled_from(formats))
    n = draw(st.integers(0, max_rows))
    cols = draw(columns(n, max_columns))
    if fmt in ("npy", "npz", "zarr"):  # one array: the columns share a dtype
        kind = draw(st.sampled_from(COLUMN_KINDS))
        cols = tuple(Column(c.name, kind, draw(_values(kind, n, kind != "int")))
                     for c in cols)
    header = draw(st.booleans()) if fmt in ("csv", "tsv") else True
    names = [c.name for c in cols]
    labels = draw(st.one_of(st.none(), st.just(False), st.sampled_from(names or ["y"]),
                            st.just("missing")))
    if fmt == "npy" and draw(st.booleans()):
        labels = None
    chunks = draw(row_chunks(n)) if fmt in ("parquet", "zarr") else ()
    return DataFile(fmt, cols, n, header, labels, chunks)


@attrs.frozen
class DaskInput:
    """Values in row chunks as a dask ``kind`` (``"array"``, ``"frame"`` or ``"series"``)."""

    values: np.ndarray
    chunks: tuple[int, ...]
    kind: str = "array"
    names: tuple[str, ...] = ()

    def collection(self):
        """The dask collection (an array in ``chunks`` rows, or a DataFrame/Series whose
        partitions have those lengths, empty ones included; built with
        ``dd.from_dask_array``: frames of ``dd.from_delayed`` with an empty part fail
        inside Dask's own array conversion in Dask 2026.8)."""
        import dask.array as da

        if self.kind == "array":
            return da.from_array(self.values, chunks=(self.chunks, *[(max(1, s),) if s else
                                                                     (0,) for s in
                                                                     self.values.shape[1:]]))
        import dask.dataframe as dd

        array = da.from_array(self.values, chunks=(self.chunks, self.values.shape[1]))
        frame = dd.from_dask_array(array, columns=list(self.names))
        return frame[self.names[0]] if self.kind == "series" else frame

    def computed(self):
        """The same data in memory: the NumPy array, or the pandas DataFrame/Series."""
        if self.kind == "array":
            return self.values
        import pandas as pd

        frame = pd.DataFrame(self.values, columns=list(self.names))
        return frame[self.names[0]] if self.kind == "series" else frame


_SPECIAL = (0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 1e-300, 1e200, 1e9, 1.7e9, 5e-324)


@st.composite
def dask_inputs(draw, max_rows: int = 10, max_columns: int = 3,
                kinds: tuple[str, ...] = ("array", "frame", "series")) -> DaskInput:
    """A :class:`DaskInput`: 0 to ``max_rows`` rows of 0 to ``max_columns`` columns of one
    dtype (float64, float32, int, bool, complex, or 1-D/3-D arrays), values ordinary or
    special (NaN, inf, tiny, huge, a large offset), repeated rows, random row chunks with
    empty and one-row chunks."""
    kind = draw(st.sampled_from(kinds))
    n = draw(st.integers(0, max_rows))
    d = 1 if kind == "series" else draw(st.integers(0 if kind == "array" else 1,
                                                    max_columns))
    dtype = draw(st.sampled_from(["float64", "float32", "int64", "bool", "complex128"]
                                 if kind == "array" else ["float64", "float32", "int64"]))
    distinct = draw(st.integers(1, max(1, n)))
    pool = draw(st.lists(st.lists(st.one_of(st.floats(-10, 10, allow_nan=False),
                                            st.sampled_from(_SPECIAL)),
                                  min_size=d, max_size=d), min_size=distinct,
                         max_size=distinct))
    rows = draw(st.lists(st.integers(0, distinct - 1), min_size=n, max_size=n))
    with np.errstate(all="ignore"):
        values = np.array([pool[i] for i in rows], dtype=np.float64).reshape(n, d)
        offset = draw(st.sampled_from([0.0, 0.0, 1e9]))
        values = values + offset
        if dtype != "float64":
            values = (np.nan_to_num(values) if dtype in ("int64", "bool") else values)
            values = values.astype(dtype)
    if kind == "array" and draw(st.integers(0, 9)) == 0:  # 1-D or 3-D
        values = values.reshape(-1) if draw(st.booleans()) else values[..., None]
    names = tuple(draw(st.lists(st.sampled_from(_NAMES[:6]), min_size=d, max_size=d,
                                unique=True))) if kind != "array" else ()
    return DaskInput(values, draw(row_chunks(values.shape[0])), kind, names)


@attrs.frozen
class OutputPlan:
    """A scratch tree and the output options of one ``graphclust run``.

    Paths may climb out of the tree (``../x.npy``, up to three levels): build the tree
    three folders deep in a scratch folder of the test's and snapshot that folder.

    The tree holds ``data.npy`` (the input), ``spec.json`` (the spec), ``old.npy`` and
    ``old.json`` (files of the user), ``dir/`` (a folder with a file inside), ``ro/`` (a
    read-only folder) and ``link.npy`` (a symbolic link to the input). ``output`` and
    ``plot`` are paths relative to the tree's root (``None``: option not given), drawn
    among those paths, new names, names inside a file or a missing folder, and each
    other."""

    output: str | None
    plot: str | None

    #: files and folders of the tree (relative path → contents; ``None`` for a folder)
    TREE = {"data.npy": "X", "spec.json": "spec", "old.npy": "labels", "old.json": "mine",
            "dir": None, "dir/inside.txt": "keep", "ro": None}
    SPEC = ('{"anchors": {"name": "random", "n_anchors": 4}, "graph": {"name": '
            '"gaussian-anchor", "n_neighbors": 2}, "solver": {"name": "tcut"}, '
            '"rounding": {"name": "kmeans", "n_init": 1}}')

    def build(self, root: str | os.PathLike, X: np.ndarray) -> Path:
        """Create the tree under ``root`` with ``X`` as the input; returns ``root``."""
        root = Path(root)
        for rel, content in self.TREE.items():
            path = root / rel
            if content is None:
                path.mkdir()
            elif content == "X":
                np.save(path, X)
            elif content == "spec":
                path.write_text(self.SPEC)
            elif content == "labels":
                np.save(path, np.arange(len(X)))
            else:
                path.write_text(content)
        (root / "link.npy").symlink_to(root / "data.npy")
        (root / "ro").chmod(0o555)
        return root

    def argv(self) -> list[str]:
        """The output options on the command line."""
        out: list[str] = []
        if self.output is not None:
            out += ["--output", self.output]
        if self.plot is not None:
            out += ["--plot", self.plot]
        return out


_OUTPUT_NAMES = ("data.npy", "spec.json", "old.npy", "old.json", "dir", "dir/new.npy",
                 "dir/inside.txt", "ro/l.npy", "link.npy", "data.npy/l.npy", "new/sub/l.npy",
                 "l.npy", "l.csv", "l.txt", "l.zarr", "l.parquet", "spec.zarr", "old.zarr",
                 "p.png", "p.svg", "./l.npy", "dir/../l.npy", "l", "data")


#: path components and suffixes :func:`output_plans` composes paths from
_PARTS = ("data.npy", "spec.json", "old.npy", "old.json", "dir", "ro", "link.npy", "new",
          "..", ".", "sub", "x")
_SUFFIXES = ("", ".npy", ".csv", ".txt", ".zarr", ".parquet", ".png", ".json", ".NPY")


def _paths(names: tuple[str, ...]):
    """A path: one of ``names``, or 1 to 3 components of the tree and new ones joined,
    the last given a suffix (``dir/../old.npy.png``, ``new/sub/x.zarr``...)."""
    composed = st.builds(lambda parts, suffix: "/".join(parts) + suffix,
                         st.lists(st.sampled_from(_PARTS), min_size=1, max_size=3),
                         st.sampled_from(_SUFFIXES))
    return st.one_of(st.sampled_from(names), composed)


@st.composite
def output_plans(draw, names: tuple[str, ...] = _OUTPUT_NAMES) -> OutputPlan:
    """An :class:`OutputPlan`: ``--output`` and ``--plot`` each absent, one of ``names``
    (paths of the tree, new names, impossible ones), a path composed of the tree's names
    and new ones, or, for ``--plot``, the same as ``--output``."""
    output = draw(st.one_of(st.none(), _paths(names)))
    plot = draw(st.one_of(st.none(), st.none(), _paths(names), st.just(output)))
    return OutputPlan(output, plot)


def file_digests(root: str | os.PathLike) -> dict[str, Any]:
    """``{relative path: sha256 of the contents, "<dir>" or "-> target"}`` for everything
    under ``root`` (links not followed): what a run must not change."""
    import hashlib

    root = Path(root)
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = f"-> {os.readlink(path)}"
            elif path.is_dir():
                out[rel] = "<dir>"
            else:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


__all__ += ["file_digests"]


# -- computational extremes: widths, LIBSVM indices, environment values, scales ---------

#: Widths :func:`wide_sparse` draws among (besides small ones): a text vocabulary, a
#: million hashed features, and column counts whose dense rows no memory holds.
EXTREME_WIDTHS = (50_000, 10**6, 2**31 - 1, 10**12)


@attrs.frozen
class WideSparse:
    """A sparse matrix of ``shape`` with few stored values at ``(rows[i], cols[i])``
    (duplicates summed): :meth:`matrix` builds it as CSR with 64-bit indices, in memory
    ``O(nnz + n)`` whatever the width."""

    shape: tuple[int, int]
    rows: tuple[int, ...]
    cols: tuple[int, ...]
    values: tuple[float, ...]

    def matrix(self):
        import scipy.sparse as sp

        return sp.csr_array(
            (np.asarray(self.values, dtype=np.float64),
             (np.asarray(self.rows, dtype=np.int64), np.asarray(self.cols, dtype=np.int64))),
            shape=self.shape)


@st.composite
def wide_sparse(draw, max_rows: int = 30, max_nnz: int = 60,
                widths: tuple[int, ...] = EXTREME_WIDTHS) -> WideSparse:
    """A :class:`WideSparse`: 1 to ``max_rows`` rows, a width from ``1`` up to one of
    ``widths`` (``10**12`` columns included), up to ``max_nnz`` stored values of any
    finite size at random positions (the last column among them, rows without any)."""
    n = draw(st.integers(1, max_rows))
    d = draw(st.one_of(st.integers(1, 64), st.sampled_from(widths)))
    nnz = draw(st.integers(0, max_nnz))
    rows = draw(st.lists(st.integers(0, n - 1), min_size=nnz, max_size=nnz))
    cols = draw(st.lists(st.one_of(st.integers(0, d - 1), st.just(d - 1)),
                         min_size=nnz, max_size=nnz))
    values = draw(st.lists(st.floats(-1e6, 1e6, allow_nan=False).filter(bool),
                           min_size=nnz, max_size=nnz))
    return WideSparse((n, d), tuple(rows), tuple(cols), tuple(values))


@attrs.frozen
class LibsvmLine:
    """One LIBSVM line: a label and ``(index, value)`` pairs, indices 1-based and
    ascending; :meth:`text` is the line, :attr:`max_index` the width it implies."""

    label: int
    pairs: tuple[tuple[int, float], ...]

    @property
    def max_index(self) -> int:
        return max((i for i, _ in self.pairs), default=0)

    def text(self) -> str:
        return " ".join([str(self.label)] + [f"{i}:{v!r}" for i, v in self.pairs])


@st.composite
def libsvm_lines(draw, max_pairs: int = 4, max_index: int = 2**40) -> LibsvmLine:
    """A :class:`LibsvmLine` whose indices reach from 1 up to ``max_index`` (``2**40`` by
    default: widths no dense row of which fits in memory), with no pair at all too."""
    top = draw(st.one_of(st.integers(1, 100), st.integers(1, max_index),
                         st.sampled_from([2_000_000_000, 2**31, 2**32 + 1, max_index])))
    idx = draw(st.lists(st.integers(1, top), max_size=max_pairs, unique=True))
    if idx and draw(st.booleans()):
        idx[-1] = top
    idx = sorted(set(idx))
    vals = draw(st.lists(st.floats(-1e3, 1e3, allow_nan=False).filter(bool),
                         min_size=len(idx), max_size=len(idx)))
    return LibsvmLine(draw(st.integers(-3, 3)), tuple(zip(idx, vals)))


_FLAGS = ("1", "true", "yes", "on", "0", "false", "no", "off")
_BAD_TEXT = ("abc", "1,5", "0x10", "--", "é", "none", "null", "[]")


def _cases(words):
    """Each of ``words`` in lower, upper or title case, with surrounding blanks or not."""
    return st.builds(lambda w, f, pad: pad + f(w) + pad, st.sampled_from(words),
                     st.sampled_from([str.lower, str.upper, str.title]),
                     st.sampled_from(["", " "]))


def _env_strategies(valid: bool) -> dict:
    """Per variable, a strategy of valid or of invalid values (text as a shell sets it)."""
    byte_valid = st.one_of(st.integers(0, 2**63 - 1).map(str),
                           st.builds(lambda m, e: f"{m}e{e}", st.integers(0, 9),
                                     st.integers(0, 18)))
    byte_invalid = st.one_of(
        st.sampled_from(("inf", "-inf", "Infinity", "nan", "NaN", "1e400", "-1", "-1e3",
                         "1.5", "2.5e-1") + _BAD_TEXT),
        st.integers(-2**70, -1).map(str), st.integers(2**63, 2**80).map(str),
        st.integers(309, 10_000).map(lambda e: f"1e{e}"))
    name = st.text("abcdefghijklmnopqrstuvwxyz0123456789_-.", min_size=1, max_size=12)
    names_valid = st.lists(name, min_size=1, max_size=4).map(",".join)
    names_invalid = st.one_of(
        st.sampled_from((",", " , ", "dlc;ncer", "dlc ncer", "a=b", "x/y", "é")),
        st.builds(lambda a, sep, b: a + sep + b, name, st.sampled_from(";:/= |"), name))
    if valid:
        return {"GRAPHCLUST_DENSIFY_LIMIT": byte_valid,
                "GRAPHCLUST_STRICT_PLUGINS": _cases(_FLAGS),
                "GRAPHCLUST_DISABLE_PLUGINS": names_valid,
                "GRAPHCLUST_PROGRESS": _cases(("auto", "bar", "lines")),
                "GRAPHCLUST_DATA": st.just(".")}
    return {"GRAPHCLUST_DENSIFY_LIMIT": byte_invalid,
            "GRAPHCLUST_STRICT_PLUGINS": st.one_of(st.sampled_from(("2", "-1", "y", "enable",
                                                                     "truee") + _BAD_TEXT)),
            "GRAPHCLUST_DISABLE_PLUGINS": names_invalid,
            "GRAPHCLUST_PROGRESS": st.one_of(st.sampled_from(("bars", "line", "tqdm", "0")
                                                             + _BAD_TEXT)),
            "GRAPHCLUST_DATA": name.map(lambda s: f"/nonexistent-graphclust-{s}/data")}


#: The environment variables :func:`env_values` draws values for.
ENV_NAMES = ("GRAPHCLUST_DENSIFY_LIMIT", "GRAPHCLUST_STRICT_PLUGINS",
             "GRAPHCLUST_DISABLE_PLUGINS", "GRAPHCLUST_PROGRESS", "GRAPHCLUST_DATA")


def env_values(name: str, valid: bool = True):
    """Text values of the environment variable ``name`` (one of :data:`ENV_NAMES`), valid
    or invalid as ``valid`` says, written independently of graphclust's parser: byte
    counts up to ``2**63 - 1`` as integers and in ``1e9`` notation against ``inf``,
    ``nan``, ``1e400``, ``2**63``, negatives and fractions; flags in any case against
    near misses; plugin name lists against other separators; progress modes; and, for
    ``GRAPHCLUST_DATA``, ``.`` against folders that do not exist."""
    return _env_strategies(valid)[name]


def scale_exponents(low: int = -300, high: int = 300):
    """Powers of ten ``e`` in ``[low, high]`` to scale data by ``10**e`` (the whole
    float64 range but its edges: ``1e-300 .. 1e300``), the ends always included."""
    return st.one_of(st.sampled_from([low, high]), st.integers(low, high))


def scales(low: int = -300, high: int = 300):
    """Positive factors ``m · 10**e`` (``1 <= m < 10``, ``e`` from
    :func:`scale_exponents`) that multiply a data set from ``1e-300`` up to ``1e300``."""
    return st.builds(lambda m, e: float(f"{m!r}e{e}"), st.floats(1.0, 9.5),
                     scale_exponents(low, high))


__all__ += ["EXTREME_WIDTHS", "ENV_NAMES", "WideSparse", "LibsvmLine", "wide_sparse",
            "libsvm_lines", "env_values", "scale_exponents", "scales"]
