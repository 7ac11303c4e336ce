"""``auto``'s rule 6: sparse high-dimensional data, never densified (docs/auto.rst)."""

from __future__ import annotations

import math

from graphclust import DataProfile, Rule
from graphclust.numerics.distances import SPARSE_KNN_MIN_WIDTH
from graphclust_plugins.auto import _rules_base as base

__all__ = ["RULE_SPARSE", "sparse_rule"]


def _applies(p: DataProfile) -> bool:
    """Sparse rows (at least ``SPARSE_ZEROS`` zeros, dense or sparse container), in
    memory, more than ``HIGH_DIM`` columns (sparse data with fewer follow the dense
    rules unchanged: all their parts take sparse rows)."""
    return base.sparse_rows(p) and not p.chunked and p.d > base.HIGH_DIM


def _scale(p: DataProfile) -> tuple[str, str]:
    if p.nonnegative:
        return "l2", "nonnegative sparse rows: unit length (cosine geometry)"
    return base.choose_scale(p)


def _width(p: DataProfile) -> int:
    """The width the exact sparse search costs per pair (graphclust.numerics.distances)."""
    return max(SPARSE_KNN_MIN_WIDTH, math.ceil((1.0 - p.zero_fraction) * p.d))


def _exact(p: DataProfile) -> bool:
    return p.n <= base.EXACT_MAX_N and float(p.n) ** 2 * _width(p) <= base.EXACT_BUDGET


def _spec(p: DataProfile) -> dict:
    return {
        "scale": _scale(p)[0],
        "graph": {"name": "knn", "n_neighbors": base.n_neighbors(p), "weight": "gaussian",
                  "symmetrize": "mean", "method": "exact" if _exact(p) else "approx"},
        "solver": {"name": "spectral", "drop_trivial": "connected", "normalize_rows": True,
                   "eig_tol": base.EIG_TOL},
        "rounding": {"name": "kmeans", "n_init": 10, "normalize_rows": True},
    }


def _why(p: DataProfile) -> str:
    search = ("exact search" if _exact(p) else
              f"approximate search (pynndescent; n = {p.n} > {base.EXACT_MAX_N} or "
              f"n²·width = {float(p.n) ** 2 * _width(p):.3g} > {base.EXACT_BUDGET:.0e})")
    return (f"sparse, d = {p.d} > {base.HIGH_DIM}, {100 * (1 - p.zero_fraction):.2g} % "
            f"nonzero: {base.n_neighbors(p)}-NN graph on the sparse rows (never densified, "
            f"{search}), spectral embedding; {_scale(p)[1]}")


def sparse_rule(p: DataProfile) -> tuple[dict, str] | None:
    """Rule 6, sparse high-dimensional data: ``(spec, why)``, or ``None`` when it does
    not apply (dense, chunked, or at most ``HIGH_DIM`` columns)."""
    return (_spec(p), _why(p)) if _applies(p) else None


RULE_SPARSE = Rule(
    6, f"sparse X (>= {base.SPARSE_ZEROS:.0%} zeros, measured: dense or scipy.sparse) in memory "
    f"with d > {base.HIGH_DIM}: 10-NN graph on the sparse rows (l2 "
    "scaling when nonnegative), spectral embedding, k-means",
    lambda p, ctx: _why(p) if _applies(p) else None, lambda p, ctx: _spec(p),
    details=f"never densified (tf-idf, bags of words); the zeros are measured, the container\n"
            "does not decide (dense counts get this rule too). scale \"l2\" when nonnegative "
            "(cosine geometry; else\nthe scale step); exact blocked sparse products up to "
            f"{base.EXACT_MAX_N} points and\nn²·max({SPARSE_KNN_MIN_WIDTH}, nonzeros per row) <= "
            f"{base.EXACT_BUDGET:.0e}, pynndescent above; self-tuning Gaussian, averaged.\n"
            "Sparse X with few columns follows the dense rules (their parts take sparse rows).")
