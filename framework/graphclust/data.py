"""Data loading: ``.npz``, ``.mat``, ``.csv``, LIBSVM, ``.npy`` and scikit-learn's bundled sets.

A ``.npy`` file is memory-mapped read-only here (no Dask needed); :mod:`graphclust.io`
reads it in row chunks for a run on Dask.

The data folder is, in order: the ``data_dir`` argument (``--data-dir`` on the
command line), the ``GRAPHCLUST_DATA`` environment variable, then ``../shared/data``
(relative to the working directory or to this source tree) when it exists.
"""

from __future__ import annotations

import difflib
import os
import re
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from graphclust.environ import read_env
from graphclust._errors import InputError

__all__ = ["find_data_dir", "load_dataset", "load_file", "BUNDLED", "mnist_extend"]

BUNDLED = ("digits", "iris", "wine", "breast_cancer")
_X_KEYS = ("X", "fea", "data", "features")
_Y_KEYS = ("y", "gnd", "labels", "label", "Y", "target")


def find_data_dir(data_dir: str | os.PathLike | None = None) -> Path | None:
    """The data folder to use, or ``None`` when there is none."""
    if data_dir is not None:
        path = Path(data_dir)
        if not path.is_dir():
            raise InputError(f"data folder {str(path)!r} does not exist")
        return path
    path = read_env("GRAPHCLUST_DATA")
    if path is not None:
        return path
    candidates = [Path.cwd() / ".." / "shared" / "data",
                  Path(__file__).resolve().parents[3] / "shared" / "data"]
    for path in candidates:
        if path.is_dir():
            return path.resolve()
    return None


def _labels(y) -> np.ndarray | None:
    if y is None:
        return None
    y = np.asarray(y).ravel()
    _, codes = np.unique(y, return_inverse=True)
    return codes.astype(np.int64)


#: The keys of a ``scipy.sparse.save_npz`` file (besides the format's own arrays).
_SPARSE_NPZ_FORMATS = ("csr", "csc", "coo", "bsr", "dia")


def is_sparse_npz(keys) -> bool:
    """Whether the keys of an ``.npz`` file are those of ``scipy.sparse.save_npz`` (a
    ``format`` naming a sparse layout and a ``shape``), not the ``X``/``y`` arrays of a
    data file."""
    if "format" not in keys or "shape" not in keys:
        return False
    try:
        fmt = np.asarray(keys["format"]).item()
    except (ValueError, TypeError):
        return False
    fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
    return fmt in _SPARSE_NPZ_FORMATS


def _sparse_npz(path, labels) -> sp.csr_array:
    """The matrix of a ``scipy.sparse.save_npz`` file, as CSR (it holds no labels)."""
    if labels not in (None, False):
        raise InputError(f"{path}: --labels {labels!r}: a scipy.sparse .npz file "
                         "(save_npz) holds only the matrix, no labels")
    try:
        X = sp.load_npz(path)
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"{path}: cannot read the scipy.sparse matrix: {exc}") from None
    if X.ndim != 2:
        raise InputError(f"{path}: expected a 2-D sparse matrix, got shape {X.shape}")
    return sp.csr_array(X)


def _pick(mapping, keys, what, path):
    for key in keys:
        if key in mapping:
            return mapping[key]
    if what == "y":
        return None
    raise InputError(f"{path}: no {what} found (looked for keys {', '.join(keys)})")


def _check_features(X: np.ndarray, path) -> None:
    """A file's features must be a 2-D numeric array with at least one column."""
    if X.ndim != 2 or X.shape[1] == 0 or X.dtype.kind not in "biuf":
        raise InputError(f"{path}: expected a 2-D numeric array (n_samples, n_features), "
                         f"got shape {X.shape} and dtype {X.dtype}")


def load_file(path: str | os.PathLike, labels: str | int | bool | None = None,
              note: Callable[[str], None] | None = None
              ) -> tuple[np.ndarray | sp.csr_array, np.ndarray | None]:
    """Load ``(X, y)`` from a ``.npz``, ``.mat``, ``.csv``, LIBSVM (``.svm``/``.libsvm``) or
    ``.npy`` (features only, memory-mapped read-only) file.

    ``y`` is ``None`` when the file has no labels; labels are re-coded to ``0..c-1``.
    ``labels``: ``None`` for the file's own labels (a CSV by the rule of
    :func:`read_table`), ``False`` for none, or the label column (a CSV's name or
    0-based index) or key (``.npz``/``.mat``). ``note`` receives a line saying which
    column was taken as the labels, when one was taken from a CSV header.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no such data file: {str(path)!r}")
    suffix = path.suffix.lower()
    if suffix == ".npy":
        if labels not in (None, False):
            raise InputError(f"{path}: --labels {labels!r}: a .npy file holds only features")
        try:
            X = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read {path}: {exc}") from None
        _check_features(X, path)
        return X, None
    if suffix in (".npz", ".mat"):
        if suffix == ".npz":
            try:
                with np.load(path, allow_pickle=False) as npz:
                    f = dict(npz)
            except (OSError, ValueError) as exc:
                raise InputError(f"cannot read {path}: {exc}") from None
            if is_sparse_npz(f):
                return _sparse_npz(path, labels), None
        else:
            from scipy.io import loadmat

            f = loadmat(path)
        X = _pick(f, _X_KEYS, "X", path)
        if labels is False:
            y = None
        elif labels is None:
            y = _pick(f, _Y_KEYS, "y", path)
            if y is not None:
                y = np.asarray(y).ravel()
                key = next(k for k in _Y_KEYS if k in f)
                lost = (int(np.isnan(y).sum()) if y.dtype.kind in "fc" else
                        _missing(y) if y.dtype.kind in "US" else 0)
                if lost:
                    raise InputError(f"{path}: the labels {key!r} have {lost} missing values "
                                     f"(of {y.size}); give every row a label or pass "
                                     "--no-labels")
        elif str(labels) in f:
            y = _checked_labels(np.asarray(f[str(labels)]).ravel(), f"key {labels!r}", path)
        else:
            raise InputError(f"{path}: --labels {labels!r}: no such key (keys: "
                             f"{', '.join(k for k in f if not k.startswith('__'))})")
        if sp.issparse(X):
            return sp.csr_array(X), _labels(y)
        X = np.asarray(X)
        _check_features(X, path)
        return np.asarray(X, dtype=np.float64 if suffix == ".mat" else None), _labels(y)
    if suffix in (".svm", ".libsvm", ".svmlight"):
        from sklearn.datasets import load_svmlight_file

        if labels not in (None, False):
            raise InputError(f"{path}: --labels names a column of a CSV or parquet file or a "
                             "key of an .npz/.mat file; a LIBSVM file's labels are its first "
                             "field (pass --no-labels to ignore them)")
        try:
            X, y = load_svmlight_file(str(path))
        except (OSError, ValueError) as exc:
            raise InputError(f"{path}: cannot read the LIBSVM file: {exc}") from None
        if X.shape[0] == 0 or X.shape[1] == 0:
            raise InputError(f"{path}: no data rows" if X.shape[0] == 0 else
                             f"{path}: no feature (every row holds a label only)")
        if labels is False:
            return sp.csr_array(X), None
        # the labels field is the format's, but it is taken as class labels only by the
        # rule of a CSV label column (integers, at most half the rows distinct)
        problem = _label_problem(np.asarray(y))
        if problem:
            if note is not None:
                note(f"{path.name}: the LIBSVM label field is not taken as the labels: "
                     f"{problem.split(' (')[0]}")
            return sp.csr_array(X), None
        if note is not None:
            note(f"{path.name}: the LIBSVM label field taken as the labels "
                 f"({np.unique(y).size} classes; --no-labels to ignore it)")
        return sp.csr_array(X), _labels(y)
    if suffix in (".csv", ".txt", ".tsv"):
        return read_table(path, "\t" if suffix == ".tsv" else ",", labels, note)
    raise InputError(f"{path}: unsupported file type {suffix!r} (use .npz, .mat, .csv, .svm, "
                     ".npy)")


#: Header names a CSV label column may have to be taken without ``--labels``.
LABEL_NAMES = ("label", "labels", "y", "target", "class")


def _distinct_limit(n: int) -> int:
    """The most distinct values a label column of ``n`` rows may hold: half the rows
    (at least 2). More is an identifier or a measurement, not a class."""
    return max(2, n // 2)


def _label_problem(values: np.ndarray) -> str | None:
    """Why ``values`` (strings, one a row) are not class labels, or None when they are."""
    n = values.shape[0]
    try:
        numbers = values.astype(np.float64)
    except ValueError:
        numbers = None
    if numbers is not None and not np.all(numbers == np.round(numbers)):
        return "its values are not integers (continuous values are a feature, not a class)"
    distinct = np.unique(values if numbers is None else numbers).size
    if distinct > _distinct_limit(n):
        return (f"it has {distinct} distinct values in {n} rows (class labels have at most "
                f"{_distinct_limit(n)})")
    return None


def _missing_mask(values: np.ndarray) -> np.ndarray:
    low = np.char.lower(np.char.strip(values.astype(str)))
    return np.isin(low, ["", "nan", "na", "n/a", "null", "none"])


def _missing(values: np.ndarray) -> int:
    return int(_missing_mask(values).sum())


def _checked_labels(values: np.ndarray, what: str, path) -> np.ndarray:
    """``values`` as given by ``--labels``; :class:`InputError` when they are missing in
    places or not class labels (see :func:`_label_problem`)."""
    if values.dtype.kind in "fc" and np.isnan(values).any():
        raise InputError(f"{path}: the label {what} has {int(np.isnan(values).sum())} missing "
                         "values; give every row a label or pass --no-labels")
    if values.dtype.kind in "US":
        missing = _missing(values)
        if missing:
            raise InputError(f"{path}: the label {what} has {missing} missing values (of "
                             f"{values.size}); give every row a label or pass --no-labels")
    problem = _label_problem(values.astype(str) if values.dtype.kind in "US" else values)
    if problem:
        raise InputError(f"{path}: the {what} is not a label column: {problem}; "
                         "pass --no-labels to cluster without labels")
    return values


def read_table(path: str | os.PathLike, delimiter: str = ",",
               labels: str | int | bool | None = None,
               note: Callable[[str], None] | None = None):
    """``(X, y)`` from a delimited text file, with or without a header line.

    The header is the first line when any of its fields is not a number. The labels are:

    * with ``labels`` a column name or 0-based index (negative counts from the end): that
      column, refused when a value is missing, when its values are numbers that are not
      integers, or when it has more distinct values than half the rows;
    * with ``labels=False``: none, every column is a feature;
    * otherwise the **last** column, only when the header names it ``label``, ``labels``,
      ``y``, ``target`` or ``class`` (any case) *and* its values are class labels (no
      missing value, integers or words, at most half the rows distinct). A column so
      named that fails the test stays a feature. ``note`` is told either way.

    A file without a header has no labels unless ``labels`` is an index. Feature values
    must be numbers; an empty field is a missing value (NaN), refused later by the fit.
    """
    path = Path(path)
    with open(path, newline="", encoding="utf-8-sig") as fh:  # a byte-order mark is not a name
        first = fh.readline()
    if not first.strip():
        raise InputError(f"{path}: the file is empty" if not first else
                         f"{path}: the first line is empty (expected a header or a row)")
    fields = [h.strip().strip('"').strip() for h in first.rstrip("\r\n").split(delimiter)]
    has_header = any(not _is_number(h) and h.lower() not in ("nan", "") for h in fields)
    d = len(fields)
    col = None
    if labels is not None and labels is not False:
        text = str(labels)
        if has_header and text in fields:
            col = fields.index(text)
        elif re.fullmatch(r"-?[0-9]+", text) and -d <= int(text) < d:
            col = int(text) % d
        else:
            names = f"columns: {', '.join(fields)}" if has_header else f"{d} columns, no header"
            raise InputError(f"{path}: --labels {text!r}: no such column ({names}; a column "
                             "is given by its header name or its 0-based index)")
    elif labels is None and has_header and d > 1 and fields[-1].lower() in LABEL_NAMES:
        col = d - 1
    skip = int(has_header)
    if d == 1:  # NumPy skips blank lines: in one column they are missing values
        with open(path, encoding="utf-8-sig") as fh:
            blank = next((i + 1 for i, line in enumerate(fh)
                          if i >= skip and not line.strip()), None)
        if blank is not None:
            raise InputError(f"{path}: line {blank} is empty: in a one-column table an empty "
                             "line is a missing value (it would be skipped, shifting every "
                             "later row); write NaN there, or remove the line")
    check_separators(path, delimiter, d)
    feats = [i for i in range(d) if i != col]
    if not feats:
        raise InputError(f"{path}: no feature column left besides the labels")

    def number(text: str) -> float:
        text = text.strip().strip('"')
        return float(text) if text else np.nan

    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*([Ee]mpty input file|contained no "
                                    "data).*")
            X = np.loadtxt(path, delimiter=delimiter, skiprows=skip, ndmin=2, usecols=feats,
                           converters=number, encoding="utf-8-sig")
            y = None if col is None else np.loadtxt(
                path, delimiter=delimiter, skiprows=skip, ndmin=1, usecols=[col], dtype=str,
                encoding="utf-8-sig")
    except ValueError as exc:
        msg = str(exc)
        if "column index" in msg:  # a short row: numpy's whole-row message is clearer
            try:
                np.loadtxt(path, delimiter=delimiter, skiprows=skip, ndmin=2, dtype=str,
                           encoding="utf-8-sig")
            except ValueError as whole:
                msg = str(whole)
        msg = msg.split("; use `usecols`")[0]  # the columns are graphclust's to choose
        raise InputError(f"{path}: cannot read the table: {msg}") from None
    if X.shape[0] == 0:
        raise InputError(f"{path}: no data rows" + (" after the header" if skip else ""))
    if y is None:
        return X, None
    y = np.char.strip(np.char.strip(y), '"')
    name = fields[col] if has_header else str(col)
    if labels is None:  # the rule: taken only when the values are class labels
        missing = _missing(y)
        problem = _label_problem(y[~_missing_mask(y)]) if missing < y.size else "no values"
        if missing and not problem:
            _checked_labels(y, f"column {name!r}", path)  # refused, with the count
        if problem:
            if note is not None:
                note(f"{path.name}: column {name!r} is kept as a feature, not taken as the "
                     f"labels: {problem.split(' (')[0]}")
            X = np.loadtxt(path, delimiter=delimiter, skiprows=skip, ndmin=2,
                           converters=number, encoding="utf-8-sig")
            return X, None
    else:
        _checked_labels(y, f"column {name!r}", path)
    if note is not None:
        note(f"{path.name}: column {name!r} taken as the labels ({np.unique(y).size} "
             "classes; --no-labels to cluster every column, --labels COLUMN to choose)")
    return X, _labels(y)


#: Separators a table may have been written with besides the one its suffix names: a
#: number, this separator and a number in one field means the file uses it.
_FOREIGN = {",": ";\t", "\t": ";,"}


def _shown(line: str, limit: int = 80) -> str:
    line = line.rstrip("\r\n")
    return repr(line if len(line) <= limit else line[:limit] + "...")


def check_separators(path: Path, delimiter: str, d: int) -> None:
    """Refuse a table whose separator or decimal mark the reader cannot trust, naming the
    line: a line whose field count differs from the first line's ``d`` (another
    separator, or a decimal comma in a comma-separated file, changes the count), or a
    number, another separator and a number inside one field (``1,5;2,25``: ``;``
    separated, decimal commas). Either would be read as other columns than written,
    silently. One pass over the lines with ``str.count`` (blank lines are skipped, as
    the reader skips them)."""
    foreign = _FOREIGN.get(delimiter, "")
    pattern = re.compile(rf"\d[ ]*[{re.escape(foreign)}][ ]*[-+]?\.?\d")
    what = "comma" if delimiter == "," else "tab"
    with open(path, encoding="utf-8-sig") as fh:
        for no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            mark = pattern.search(line)
            if mark:
                sep = mark.group(0).strip("0123456789.+- ")
                if sep == ",":  # in a tab-separated file: a decimal comma
                    seen = "has a decimal comma"
                else:
                    seen = ({"\t": "looks tab-separated", ";": "looks semicolon-separated"}[sep]
                            + (" with decimal commas" if re.search(r"\d,\d", line) else ""))
                raise InputError(
                    f"{path}: line {no} {seen}: {_shown(line)}; graphclust reads "
                    f"{path.suffix or 'this'} files as {what}-separated with '.' as the "
                    "decimal mark; rewrite the file so (e.g. with pandas: read_csv(path, "
                    "sep=';', decimal=',').to_csv(new, index=False))")
            fields = line.count(delimiter) + 1
            if fields != d:
                raise InputError(
                    f"{path}: line {no} has {fields} field{'s' if fields != 1 else ''} "
                    f"where line 1 has {d}: "
                    f"{_shown(line)}; every line needs line 1's fields, {what}-separated "
                    "with '.' as the decimal mark (a decimal comma, 1,5, adds a field in a "
                    "comma-separated file)")


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def load_dataset(name: str | os.PathLike, data_dir: str | os.PathLike | None = None,
                 labels: str | int | bool | None = None,
                 note: Callable[[str], None] | None = None):
    """Load ``(X, y)`` by bundled name (``"digits"``), data-folder name (``"usps"``) or path.

    ``labels`` and ``note`` are those of :func:`load_file` (a bundled set's labels are its
    targets; ``labels=False`` drops them).

    Raises
    ------
    InputError
        When the name is not found; the message lists what is available and the closest.
    """
    text = str(name)
    if text in BUNDLED:
        import sklearn.datasets as ds

        if labels not in (None, False):
            raise InputError(f"--labels {labels!r}: the bundled data set {text!r} has its "
                             "own labels (pass --no-labels to ignore them)")
        bunch = getattr(ds, f"load_{text}")()
        y = None if labels is False else _labels(bunch.target)
        return np.asarray(bunch.data, dtype=np.float64), y
    path = Path(text)
    if path.suffix and path.is_file():
        return load_file(path, labels, note)
    folder = find_data_dir(data_dir)
    if folder is not None:
        for candidate in (folder / text, *(folder / f"{text}{ext}" for ext in
                                           (".npz", ".mat", ".csv", ".svm", ".libsvm"))):
            if candidate.is_file():
                return load_file(candidate, labels, note)
    if path.suffix and path.is_dir():
        raise InputError(f"{text!r} is a folder, not a data file")
    available = list(BUNDLED)
    if folder is not None:
        available += sorted(p.stem for p in folder.iterdir() if p.is_file()
                            and p.suffix in (".npz", ".mat", ".csv", ".svm", ".libsvm"))
    where = f" in {str(folder)!r}" if folder is not None else " (no data folder found; set --data-dir or GRAPHCLUST_DATA)"
    if path.suffix or os.sep in text:
        what = f"no such data file {text!r}"
        close = difflib.get_close_matches(path.name, [p.name for p in path.parent.iterdir()]
                                          if path.parent.is_dir() else [], n=1, cutoff=0.6)
        hint = f"; did you mean {str(path.parent / close[0])!r}?" if close else ""
        raise InputError(f"{what}{hint}")
    close = difflib.get_close_matches(text, available, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise InputError(f"unknown dataset {text!r}{where}{hint} Available: {', '.join(available)}")


def mnist_extend(X: np.ndarray, y: np.ndarray, n: int | None = None,
                 shape: tuple[int, int] = (28, 28)):
    """MNIST-extend (ONGR paper, Section 4.1): each image plus its one-pixel shifts in the
    8 directions, 9·n images in all, built deterministically.

    Rows are ordered shift by shift (the originals first), so the first ``n`` rows
    (``n`` a multiple of the original size or any prefix) form a deterministic subset.

    Parameters
    ----------
    X : ndarray of shape (n0, 784)
    y : ndarray of shape (n0,)
    n : int, optional
        Keep the first ``n`` rows of the 9·n0 (e.g. 140 000); all by default.
    """
    X = np.asarray(X)
    n0 = X.shape[0]
    total = 9 * n0 if n is None else int(n)
    if not 1 <= total <= 9 * n0:
        raise InputError(f"n must be in [1, {9 * n0}], got {total}")
    imgs = X.reshape(n0, *shape)
    shifts = [(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]
    out_X = np.empty((total, X.shape[1]), dtype=X.dtype)
    out_y = np.empty(total, dtype=np.asarray(y).dtype)
    pos = 0
    for dy, dx in shifts:
        if pos >= total:
            break
        take = min(n0, total - pos)
        shifted = np.zeros_like(imgs[:take])
        ys = slice(max(dy, 0), shape[0] + min(dy, 0))
        yd = slice(max(-dy, 0), shape[0] + min(-dy, 0))
        xs = slice(max(dx, 0), shape[1] + min(dx, 0))
        xd = slice(max(-dx, 0), shape[1] + min(-dx, 0))
        shifted[:, yd, xd] = imgs[:take, ys, xs]
        out_X[pos:pos + take] = shifted.reshape(take, -1)
        out_y[pos:pos + take] = np.asarray(y)[:take]
        pos += take
    return out_X, out_y
