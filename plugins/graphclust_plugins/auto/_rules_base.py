"""What several ``auto`` rules share: the exact-search limits, the unit test of the
scaling step, and small helpers over the profile (private to the ``auto`` bundle).

Rule modules read these thresholds as attributes of this module (``base.EXACT_BUDGET``),
so each is defined once and a test that moves one moves it for every rule.
"""

from __future__ import annotations

import numpy as np

from graphclust import DataProfile
from graphclust.numerics import SPARSE_ROWS_ZEROS

__all__ = ["DIAGNOSTIC_MIN_N", "EIG_TOL", "EXACT_BUDGET", "EXACT_MAX_N", "HIGH_DIM",
           "SPARSE_ZEROS", "UNIT_SPREAD", "asked_k", "choose_scale", "features_pipeline",
           "fitted_on", "n_neighbors", "per_cluster", "scaled_sample", "sparse_rows"]

#: Largest ``n² · d`` for which ``auto`` runs an exact kNN graph (≈ 10 s of search at
#: the 1.9e10 multiply-adds per second of ``graphclust.numerics.knn_size``).
EXACT_BUDGET = 2e11
#: Largest ``n`` for which ``auto`` runs an exact kNN graph: above it a 10-NN graph is
#: too local (its scale shrinks with n) and elongated clusters are cut across.
EXACT_MAX_N = 5000
#: ``range_spread`` from which the columns count as measured in different units.
UNIT_SPREAD = 10.0
#: Dense data with more features than this (and more than EXACT_MAX_N points) get the
#: kNN graph on their leading principal components.
HIGH_DIM = 50
#: ARPACK tolerance of its spectral solve: the eigenvectors only feed k-means; 1e-3 was
#: measured to change labels, 1e-5 not (docs/auto.rst).
EIG_TOL = 1e-5
#: Fewest points (and sample rows) for the diagnostics of rule 8 and the tree of rule 9.
DIAGNOSTIC_MIN_N = 50
#: Rows count as sparse (rule 6, not rules 7 and 4) when at least this fraction of their
#: entries are zero, whether they arrive dense or as a scipy.sparse matrix
#: (graphclust.numerics.SPARSE_ROWS_ZEROS: where a CSR product costs no more than BLAS;
#: MNIST's pixels, 19 % nonzero, stay dense; term counts, about 1 %, are sparse).
SPARSE_ZEROS = SPARSE_ROWS_ZEROS


def sparse_rows(p: DataProfile) -> bool:
    """The rows are sparse (:data:`SPARSE_ZEROS`), measured on the data, not the
    container: the same counts dense or as CSR get the same rules."""
    return p.zero_fraction >= SPARSE_ZEROS


def choose_scale(p: DataProfile) -> tuple[str, str]:
    """The ``scale`` stage for profile ``p`` and the reason in words."""
    if p.range_spread > UNIT_SPREAD:
        return "standard", (f"column ranges differ {p.range_spread:.3g}x (> {UNIT_SPREAD:g}): "
                            "standardised")
    return "none", f"column ranges within {UNIT_SPREAD:g}x ({p.range_spread:.3g}x): unscaled"


def n_neighbors(p: DataProfile) -> int:
    """Neighbours of the exact kNN graph: 10, clamped to ``n - 1``."""
    return int(max(1, min(10, p.n - 1)))


def asked_k(p: DataProfile) -> int | None:
    """The number of clusters asked for, or None when it is to be estimated."""
    k = getattr(p, "k", None)
    return None if k is None else int(k)


def per_cluster(p: DataProfile) -> float:
    """Points per asked cluster (``inf`` when k is not given)."""
    k = asked_k(p)
    return float("inf") if not k else p.n / k


def features_pipeline(rounding: dict) -> dict:
    """A pipeline whose rounding works on the (scaled) features themselves: the
    ``features`` solver over a one-anchor graph (``O(n)``, no distance computed, and
    ``predict`` works). The anchor is one row drawn by global index, so on Dask the
    anchor stage reads one chunk and the graph pass computes no distance."""
    return {"anchors": {"name": "sample", "n_anchors": 1},
            "graph": {"name": "one-anchor"},
            "solver": {"name": "features"}, "rounding": rounding}


def fitted_on(p: DataProfile, size: int, placed: str) -> str:
    """Where a family fitted on at most ``size`` rows is fitted, in words."""
    where = "chunked input: " if p.chunked else ""
    if p.n <= size:
        return f"{where}fitted on all rows"
    return f"{where}fitted on a sample of {size} rows, {placed}"


def scaled_sample(p: DataProfile, scale: str) -> np.ndarray:
    """The profile's sample as float64, standardised with its own column statistics when
    the scale step standardises the data (constant columns left at 0): the rows the
    sample-reading rules (8 and 10) look at, scaled as the fit will be."""
    S = np.array(p.sample, dtype=np.float64)
    if scale == "standard":
        sd = S.std(axis=0)
        S = (S - S.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    return S
