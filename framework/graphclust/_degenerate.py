"""Degenerate-but-legal inputs and results: detected, then said out loud.

Three rules, each applied once per fit by :class:`~graphclust.GraphClustering`:

* **Distances that say nothing.** When every column is constant (all rows identical)
  no distance separates two points; they share one label (identical rows always do)
  whatever ``k > 1`` was asked: a :class:`~graphclust.DegenerateDataWarning`. When the spread of the
  data is so small (``max column range < sqrt(tiny) · 1e4``, about ``1.5e-150`` in
  float64 and ``1.1e-15`` in float32) that squared distances underflow, or so large
  (``max range · sqrt(d) > sqrt(max) / 4``) that they overflow, every distance-based
  part computes on zeros or infinities: an :class:`~graphclust.InputError` naming the
  range and the fix (rescale ``X``).
* **More clusters than distinct rows.** When ``n_clusters`` exceeds the number of
  distinct rows, clusters are left empty (identical rows always share a label,
  :mod:`graphclust._identical`): a
  :class:`~graphclust.DegenerateDataWarning` with both counts (counted exactly in
  memory; on Dask from each chunk's distinct rows, at most ``n_clusters`` of them
  shipped per chunk).
* **Fewer clusters than asked.** When the labels hold fewer distinct values than
  ``n_clusters``: a :class:`~graphclust.FewerClustersWarning` with both counts.
* **Disconnected graphs.** Only when the graph has *more* connected components than
  ``n_clusters > 1`` can the components change the result (the leading eigenvectors, or the
  solver's fixed points, then mix component indicators arbitrarily; with at most ``k``
  components each lands in its own cluster(s), which is the natural answer). Then one
  :class:`~graphclust.DisconnectedGraphWarning` gives the count, the sizes and what was
  done (nothing: the graph is used as built).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.sparse.csgraph import connected_components

from graphclust._errors import (DegenerateDataWarning, FewerClustersWarning, InputError)

__all__ = ["check_distances", "check_spread", "distinct_rows", "warn_few_distinct",
           "warn_fewer_labels", "component_sizes", "disconnected_message"]


def _spread_limits(dtype: np.dtype, d: int) -> tuple[float, float]:
    from graphclust.numerics import safe_magnitude_limits

    return safe_magnitude_limits(dtype, d)


def check_distances(X: np.ndarray, n_clusters: int, *, what: str = "X") -> None:
    """Warn or raise when the distances between the rows of ``X`` carry no information
    (:func:`check_spread` of ``X``'s column ranges).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Validated, finite, floating data.
    n_clusters : int
        Nothing is reported for ``n_clusters = 1`` (any data give the one right answer).

    Raises
    ------
    InputError
        When squared distances underflow or overflow in ``X``'s float type.
    """
    if n_clusters <= 1 or X.shape[0] < 2:
        return
    check_spread(np.ptp(X, axis=0), X.shape[0], X.dtype, n_clusters, what=what)


def check_spread(ranges: np.ndarray, n: int, dtype, n_clusters: int, *,
                 what: str = "X") -> None:
    """The decision of :func:`check_distances` from the column ranges (``max − min`` of
    every column), so that the in-memory and the chunked fit (min/max reductions over the
    chunks) take it in one place.

    Parameters
    ----------
    ranges : ndarray of shape (d,)
    n : int
        Number of rows.
    dtype : dtype
        The float type the parts compute in.
    n_clusters : int
    """
    if n < 2:
        return
    ranges = np.asarray(ranges, dtype=np.float64)
    spread = float(ranges.max())
    d = int(ranges.size)
    if spread == 0.0 and n_clusters <= 1:  # one cluster of identical rows: nothing to say
        return
    if spread == 0.0:
        warnings.warn(f"{what}: all {n} rows are identical (every column is constant), so no "
                      f"distance separates two points: they share one label (not the "
                      f"{n_clusters} clusters asked)", DegenerateDataWarning, stacklevel=3)
        return
    low, high = _spread_limits(dtype, d)
    dtype = np.dtype(dtype).name
    if spread < low and n_clusters > 1:  # one cluster needs no distance to separate
        raise InputError(f"{what}: the largest column range is {spread:.3g}, below {low:.3g}: "
                         f"squared distances underflow in {dtype} and every distance-based "
                         "part would see zeros; rescale X (e.g. X / X.std()) before fitting")
    if spread > high:
        raise InputError(f"{what}: the largest column range is {spread:.3g}, above {high:.3g} "
                         f"for d = {d}: squared distances overflow in {dtype}; rescale X "
                         "(e.g. X / X.std()) before fitting")


def distinct_rows(X: np.ndarray, cap: int | None = None) -> np.ndarray:
    """The distinct rows of ``X`` (exact, byte-wise: ``-0.0`` and ``0.0`` differ), sorted;
    at most ``cap + 1`` of them when ``cap`` is given (enough to tell whether there are
    more than ``cap``, and what a chunk ships for that question). With ``cap``, the
    leading ``4 cap + 64`` rows are looked at first and the whole array only when they
    hold at most ``cap`` distinct rows, so typical data cost ``O(cap)`` here."""
    if cap is not None and X.shape[0] > 4 * cap + 64:
        head = distinct_rows(X[:4 * cap + 64], cap)  # usually enough: no full sort
        if head.shape[0] > cap:
            return head
    X = np.ascontiguousarray(X)
    if X.shape[0] == 0:
        return X
    rows = X.view(np.dtype((np.void, X.dtype.itemsize * X.shape[1]))).ravel()
    _, first = np.unique(rows, return_index=True)
    if cap is not None:
        first = first[:cap + 1]
    return X[np.sort(first)]


def count_distinct_sparse(X, cap: int) -> int:
    """The number of distinct rows of a canonical CSR ``X`` (stored indices and values
    compared byte-wise), at most ``cap + 1``: :func:`distinct_rows` for sparse rows,
    leading rows first in the same way, without densifying."""
    n = X.shape[0]
    seen: set[bytes] = set()
    indptr, indices, data = X.indptr, X.indices, X.data
    head = 4 * cap + 64
    for stop in ((min(n, head), n) if n > head else (n,)):
        seen.clear()
        for i in range(stop):
            lo, hi = indptr[i], indptr[i + 1]
            seen.add(indices[lo:hi].tobytes() + b"|" + data[lo:hi].tobytes())
            if len(seen) > cap:
                return cap + 1
    return len(seen)


def warn_few_distinct(n_distinct: int, n: int, n_clusters: int, *, what: str = "X") -> None:
    """Warn when ``n_clusters`` exceeds the number of distinct rows (``n_distinct``, which
    may be capped at ``n_clusters``): identical rows share a label
    (:mod:`graphclust._identical`), so clusters are left empty. All rows identical is
    :func:`check_spread`'s warning, not repeated here."""
    if 1 < n_distinct < n_clusters:
        warnings.warn(f"{what}: n_clusters={n_clusters} exceeds the {n_distinct} distinct rows "
                      f"(of {n}): identical rows share a label, so clusters will be left "
                      "empty; ask for at most as many clusters as distinct rows",
                      DegenerateDataWarning, stacklevel=3)


def warn_fewer_labels(labels: np.ndarray, n_clusters: int, who: str, rows: str = "points"
                      ) -> int:
    """Warn when ``labels`` hold fewer distinct values than ``n_clusters``; return the count
    (``rows``: what the labelled rows are, ``"nodes"`` on a precomputed graph)."""
    found = int(np.unique(labels).size)
    if found < n_clusters:
        warnings.warn(f"{who} returned {found} distinct label{'s' if found != 1 else ''} for "
                      f"n_clusters={n_clusters} ({labels.size} {rows})",
                      FewerClustersWarning, stacklevel=3)
    return found


def component_sizes(graph) -> np.ndarray:
    """Sizes of the connected components over the points, largest first (affinity graphs:
    of ``A``; anchor graphs: of the bipartite point-anchor graph, points only)."""
    import scipy.sparse as sp

    if hasattr(graph, "Z"):
        n, m = graph.Z.shape
        bip = sp.block_array([[None, graph.Z], [graph.Z.T, None]], format="csr")
        labels = connected_components(bip, directed=False)[1][:n]
    else:
        labels = connected_components(graph.adjacency, directed=False)[1]
    _, sizes = np.unique(labels, return_counts=True)
    return np.sort(sizes)[::-1]


def disconnected_message(sizes: np.ndarray, n_clusters: int,
                         given: bool = False) -> str | None:
    """The warning text when the components can change the result, else ``None``
    (``given``: the user's own graph, which only the user can connect)."""
    c = int(sizes.size)
    if c <= n_clusters or n_clusters <= 1:
        return None
    small = int(np.sum(sizes == 1))
    shown = ", ".join(map(str, sizes[:5])) + (", ..." if c > 5 else "")
    unit = "node" if given else "point"  # the user's graph has nodes, data have points
    return (f"the graph has {c} connected components (sizes {shown}; {small} isolated "
            f"{unit}{'s' if small != 1 else ''}), more than n_clusters={n_clusters}: whole "
            "components are grouped arbitrarily. Nothing was done about them (the graph is "
            + ("used as given); asking for at least as many clusters as components, or "
               "edges between them, avoids it" if given else
               "used as built); more neighbours or anchors connect it"))
