"""Data loading: ``.npz``, ``.mat``, ``.csv``, LIBSVM and scikit-learn's bundled sets.

The data folder is, in order: the ``data_dir`` argument (``--data-dir`` on the
command line), the ``GRAPHCLUST_DATA`` environment variable, then ``../shared/data``
(relative to the working directory or to this source tree) when it exists.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

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
    env = os.environ.get("GRAPHCLUST_DATA")
    if env:
        path = Path(env)
        if not path.is_dir():
            raise InputError(f"GRAPHCLUST_DATA={env!r} is not a folder")
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


def _pick(mapping, keys, what, path):
    for key in keys:
        if key in mapping:
            return mapping[key]
    if what == "y":
        return None
    raise InputError(f"{path}: no {what} found (looked for keys {', '.join(keys)})")


def load_file(path: str | os.PathLike) -> tuple[np.ndarray | sp.csr_array, np.ndarray | None]:
    """Load ``(X, y)`` from a ``.npz``, ``.mat``, ``.csv`` or LIBSVM (``.svm``/``.libsvm``) file.

    ``y`` is ``None`` when the file has no labels; labels are re-coded to ``0..c-1``.
    A CSV's last column is taken as the label when it is named ``y``/``label``/``class``.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no such data file: {str(path)!r}")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        with np.load(path, allow_pickle=False) as f:
            X = _pick(f, _X_KEYS, "X", path)
            y = _pick(f, _Y_KEYS, "y", path)
            return np.asarray(X), _labels(y)
    if suffix == ".mat":
        from scipy.io import loadmat

        f = loadmat(path)
        X = _pick(f, _X_KEYS, "X", path)
        y = _pick(f, _Y_KEYS, "y", path)
        return (sp.csr_array(X) if sp.issparse(X) else np.asarray(X, dtype=np.float64)), _labels(y)
    if suffix in (".svm", ".libsvm", ".svmlight"):
        from sklearn.datasets import load_svmlight_file

        X, y = load_svmlight_file(str(path))
        return sp.csr_array(X), _labels(y)
    if suffix in (".csv", ".txt", ".tsv"):
        delim = "\t" if suffix == ".tsv" else ","
        with open(path) as fh:
            header = fh.readline().strip().split(delim)
        has_header = any(not _is_number(h) for h in header)
        data = np.loadtxt(path, delimiter=delim, skiprows=int(has_header), ndmin=2)
        if has_header and header[-1].strip().lower() in ("y", "label", "labels", "class", "target"):
            return data[:, :-1], _labels(data[:, -1])
        return data, None
    raise InputError(f"{path}: unsupported file type {suffix!r} (use .npz, .mat, .csv, .svm)")


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def load_dataset(name: str | os.PathLike, data_dir: str | os.PathLike | None = None):
    """Load ``(X, y)`` by bundled name (``"digits"``), data-folder name (``"usps"``) or path.

    Raises
    ------
    InputError
        When the name is not found; the message lists what is available.
    """
    text = str(name)
    if text in BUNDLED:
        import sklearn.datasets as ds

        bunch = getattr(ds, f"load_{text}")()
        return np.asarray(bunch.data, dtype=np.float64), _labels(bunch.target)
    path = Path(text)
    if path.suffix and path.is_file():
        return load_file(path)
    folder = find_data_dir(data_dir)
    if folder is not None:
        for candidate in (folder / text, *(folder / f"{text}{ext}" for ext in
                                           (".npz", ".mat", ".csv", ".svm", ".libsvm"))):
            if candidate.is_file():
                return load_file(candidate)
    available = list(BUNDLED)
    if folder is not None:
        available += sorted(p.stem for p in folder.iterdir() if p.is_file()
                            and p.suffix in (".npz", ".mat", ".csv", ".svm", ".libsvm"))
    where = f" in {str(folder)!r}" if folder is not None else " (no data folder found; set --data-dir or GRAPHCLUST_DATA)"
    raise InputError(f"unknown dataset {text!r}{where}. Available: {', '.join(available)}")


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
