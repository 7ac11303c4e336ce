"""The size rule for data-to-data k-nearest-neighbour search.

An exact kNN graph compares every point with every other: ``n² · d`` multiply-adds.
On the 2-core reference machine that runs at about ``1.9e10`` per second (BLAS or
faiss' flat index), so a 630 000-point, 784-feature ``ncut`` would spend about 4.5
hours before its first eigenvector. The rule:

* ``n² · d <= EXACT_KNN_MAX_WORK`` (``1e13``, about 9 minutes; e.g. all of MNIST,
  70 000 x 784 = 3.8e12): exact search.
* above it, ``method="auto"`` (the default) switches to faiss' approximate HNSW search
  and records that choice (``graph.info["method"]``, the estimator's
  ``resolved_spec_``); without faiss it refuses with an :class:`~graphclust.InputError`
  giving the estimate and the two ways on (install ``faiss-cpu``, or ask for
  ``method="exact"`` explicitly).
* an explicit ``method="exact"`` above it runs, after a warning with the estimate.
"""

from __future__ import annotations

import warnings

from graphclust._errors import GraphClustWarning, InputError

__all__ = ["EXACT_KNN_MAX_WORK", "EXACT_KNN_RATE", "exact_knn_seconds", "resolve_knn_method"]

#: Largest ``n² · d`` searched exactly by ``method="auto"``.
EXACT_KNN_MAX_WORK = 1e13
#: Multiply-adds per second of exact search on the reference machine (for estimates).
EXACT_KNN_RATE = 1.9e10


def exact_knn_seconds(n: int, d: int) -> float:
    """Estimated wall time in seconds of an exact kNN search over ``n`` points in ``d``
    dimensions."""
    return float(n) * float(n) * float(d) / EXACT_KNN_RATE


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} hours"
    if seconds >= 60:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds:.0f} seconds"


def _have_faiss() -> bool:
    try:
        import faiss  # noqa: F401
    except ImportError:
        return False
    return True


def resolve_knn_method(n: int, d: int, method: str, *, sparse: bool = False
                       ) -> tuple[str, str]:
    """The search a kNN graph builder runs, and why.

    Parameters
    ----------
    n, d : int
        Points and features.
    method : {"auto", "exact", "approx"}
    sparse : bool
        The rows are sparse: the approximate search is pynndescent's (a base
        dependency), so faiss is not needed.

    Returns
    -------
    method : {"exact", "approx"}
    rule : str
        One line saying why (stored with the graph).

    Raises
    ------
    InputError
        ``method="auto"`` above the size rule without faiss installed.
    """
    work = float(n) * float(n) * float(d)
    est = _duration(exact_knn_seconds(n, d))
    if method == "approx":
        return "approx", "requested"
    if work <= EXACT_KNN_MAX_WORK:
        return "exact", "requested" if method == "exact" else (
            f"auto: n²·d = {work:.3g} <= {EXACT_KNN_MAX_WORK:.0e}")
    if method == "exact":
        warnings.warn(f"exact kNN search on n={n} points, d={d}: n²·d = {work:.3g} is above "
                      f"{EXACT_KNN_MAX_WORK:.0e} and will take about {est}; method='auto' "
                      "uses faiss' approximate search instead", GraphClustWarning, stacklevel=3)
        return "exact", "requested"
    if sparse:
        return "approx", (f"auto: n²·d = {work:.3g} > {EXACT_KNN_MAX_WORK:.0e} "
                          f"(exact search ≈ {est}): pynndescent on the sparse rows")
    if _have_faiss():
        return "approx", (f"auto: n²·d = {work:.3g} > {EXACT_KNN_MAX_WORK:.0e} "
                          f"(exact search ≈ {est}): faiss HNSW")
    raise InputError(f"an exact kNN graph on n={n} points, d={d} would take about {est} "
                     f"(n²·d = {work:.3g} > {EXACT_KNN_MAX_WORK:.0e}); install faiss-cpu "
                     "(pip install 'graphclust[ann]') for the approximate search, use an "
                     "anchor-graph preset, or set graph.method = 'exact' to run it anyway")
