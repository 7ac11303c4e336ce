"""Deep, comparable copies of what parts take and return (no-mutation and determinism)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import scipy.sparse as sp

from graphclust import AffinityGraph, Anchors, AnchorGraph
from graphclust import Memberships
from graphclust import Adapted
from graphclust import Solution

__all__ = ["snapshot", "differs"]


def snapshot(obj: Any) -> Any:
    """A deep, comparable copy of arrays, sparse matrices, graphs, anchors and solutions.

    Other objects are deep-copied as they are (compared with ``==`` by :func:`differs`).
    """
    if obj is None or isinstance(obj, (bool, int, float, str, np.generic)):
        return obj
    if isinstance(obj, np.ndarray):
        return obj.copy()
    if sp.issparse(obj):
        return ("sparse", obj.shape, np.asarray(obj.toarray()).copy())
    if isinstance(obj, Anchors):
        return ("anchors", snapshot(obj.points), snapshot(obj.assignment))
    if isinstance(obj, AffinityGraph):
        return ("affinity", snapshot(obj.adjacency))
    if isinstance(obj, AnchorGraph):
        return ("anchor", snapshot(obj.Z), snapshot(obj.anchors))
    if isinstance(obj, Solution):
        return ("solution", snapshot(obj.embedding), snapshot(obj.soft),
                snapshot(obj.anchor_embedding), snapshot(obj.anchor_soft))
    if isinstance(obj, Memberships):
        return ("memberships", snapshot(obj.matrix), tuple(obj.sizes))
    if isinstance(obj, Adapted):
        return ("adapted", snapshot(obj.graph), snapshot(obj.X), obj.n_clusters)
    if isinstance(obj, (list, tuple)):
        return tuple(snapshot(o) for o in obj)
    return copy.deepcopy(obj)


def differs(a: Any, b: Any, *, exact: bool = True) -> str | None:
    """Where two snapshots differ, ``None`` when equal.

    Parameters
    ----------
    a, b : snapshots (see :func:`snapshot`)
    exact : bool, default=True
        ``False`` compares floats with ``rtol=1e-7, atol=1e-10`` (two runs of the same
        computation may differ in the last bits through BLAS threading).
    """
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a_arr, b_arr = np.asarray(a), np.asarray(b)
        if a_arr.shape != b_arr.shape:
            return f"shape {a_arr.shape} vs {b_arr.shape}"
        if a_arr.dtype.kind in "fc" and not exact:
            ok = np.allclose(a_arr, b_arr, rtol=1e-7, atol=1e-10, equal_nan=True)
        else:
            ok = np.array_equal(a_arr, b_arr, equal_nan=a_arr.dtype.kind in "fc")
        if ok:
            return None
        if a_arr.dtype.kind in "fciub" and b_arr.dtype.kind in "fciub":
            diff = np.abs(a_arr.astype(np.float64) - b_arr.astype(np.float64)).ravel()
            diff = diff[~np.isnan(diff)]
            worst = f"{diff.max():.3g}" if diff.size else "nan"
            return f"values differ (max abs difference {worst})"
        return "values differ"
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) != len(b):
            return "structure differs"
        for i, (x, y) in enumerate(zip(a, b)):
            d = differs(x, y, exact=exact)
            if d:
                return f"[{i}] {d}"
        return None
    if isinstance(a, float) and isinstance(b, float):
        if exact:
            return None if (a == b or (a != a and b != b)) else f"{a!r} vs {b!r}"
        return None if np.isclose(a, b, rtol=1e-7, atol=1e-10) else f"{a!r} vs {b!r}"
    try:
        return None if a == b else f"{a!r} vs {b!r}"
    except Exception:  # noqa: BLE001 - objects without a boolean ==
        return None
