"""The null test of a second opinion's ``k`` (:doc:`/choosing-k`, "No structure only when
a second test says it too"): an eigengap's ``k >= 2`` is taken only when the data's graph
spectrum at that ``k`` lies far below that of a structureless reference.

Why: the eigengap reads ``k`` off the shape of a spectrum, and in few dimensions one
structureless cloud has a spectrum with a relative gap as large as clusters' (a line's
kNN graph is a path, ``λ_k ∝ (k − 1)²``, so ``λ_2 / λ_3`` is about 1/4; a disc's second
and third modes are nearly equal and well below the fourth). What clusters change is not
the shape but the *level*: ``k`` clusters joined by few edges make ``λ_k`` of the order of
the cut between them, far below the ``λ_k`` of one cloud of the same size and spread,
whose ``k``-th mode varies smoothly across the whole support.

The reference (:func:`gaussian_reference`): ``n`` rows drawn from the Gaussian with the
data's mean and covariance (its principal axes and their spreads), seeded from the run's
seed, graphed and solved by the very same spec (:func:`reference_spectrum`). The
statistic (:func:`null_ratio`): ``ρ = λ_k(data) / λ_k(reference)`` at the eigengap's
``k``, ``λ`` the normalised Laplacian's eigenvalues the selection records
(``details["laplacian_eigenvalues"]``, tiny groups left out), against each of two
references (:data:`REFERENCES`: the Gaussian and a uniform box on the same principal
axes with the same spreads, :func:`uniform_reference`), the larger deciding. Against
the Gaussian alone flat clouds sit low (a uniform disc .63–.72, a uniform rectangle
.56–.63: a flat density's kNN graph has a smaller ``λ_k`` than a peaked one of the same
covariance); the larger of the two ratios is about 1 on structureless data whatever its
shape (measured .95–1.7 on Gaussians, elongated Gaussians, cubes, boxes, balls and t3
clouds in 2–8 dimensions) and near 0 on clusters (a graph of ``k`` components has
``λ_k = 0``; interleaved spirals .009). A reference whose ``λ_k`` is zero (its own
graph fell apart) gives no evidence: ``ρ = inf``. The threshold :data:`NULL_RATIO` is
calibrated on structureless draws that are not the generated battery's
(``python -m benchmarks.k_nulls --kind reference``, docs/choosing-k.rst).

Imports: NumPy, SciPy, the eigengap and threads modules only (the covariance's
factorisation and the references' products on one BLAS thread, as every factorisation of
the package: the same bits on any thread count); the reference's fit is made by the
caller's ``fit_spec(X)`` (the estimator's second plan, ``graphclust._ksecond``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from graphclust.numerics.eigengap import ZERO_EIGENVALUE
from graphclust.numerics.threads import fixed_threads

__all__ = [
    "NULL_RATIO",
    "REFERENCES",
    "gaussian_reference",
    "null_ratio",
    "null_test",
    "reference_spectrum",
    "uniform_reference",
]

#: Largest ``λ_k(data) / λ_k(reference)`` at which an eigengap's ``k >= 2`` is taken
#: as cluster structure (the larger of the references' ratios): one half, midway
#: between the null's 1 and clusters' 0 — every one of the 21 structureless draws in
#: 2-8 dimensions whose eigengap answered ``k >= 2`` (of 227) had a ratio of 1.012 or
#: more, three touching Gaussians in 4-d that the density tree calls one cluster .44
#: (docs/auto.rst, rule 12; ``python -m benchmarks.k_nulls --kind reference``).
NULL_RATIO = 0.5


def _principal_axes(X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(mean, spreads, axes)`` of ``X``: its mean, the standard deviations along its
    principal axes and those axes (columns), from the covariance (float64)."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    X = np.asarray(X, dtype=np.float64)
    mean = X.mean(axis=0)
    C = X - mean
    with fixed_threads():  # numerics.threads: the same bits on any thread count
        cov = (C.T @ C) / max(X.shape[0] - 1, 1)
        spread, axes = np.linalg.eigh(0.5 * (cov + cov.T))
    return mean, np.sqrt(np.clip(spread, 0.0, None)), axes


def gaussian_reference(X: Any, rng: np.random.Generator) -> np.ndarray:
    """``n x d`` rows drawn from the Gaussian with ``X``'s mean and covariance: the
    principal axes of ``X`` with Gaussian margins of the same spreads (float64)."""
    mean, spread, axes = _principal_axes(X)
    G = rng.standard_normal((np.shape(X)[0], len(mean)))
    with fixed_threads():
        return mean + (G * spread) @ axes.T


def uniform_reference(X: Any, rng: np.random.Generator) -> np.ndarray:
    """``n x d`` rows drawn uniformly from the box on ``X``'s principal axes with the
    same mean and covariance (half-widths ``√3`` times the spreads; float64)."""
    mean, spread, axes = _principal_axes(X)
    U = rng.uniform(-1.0, 1.0, (np.shape(X)[0], len(mean)))
    with fixed_threads():
        return mean + (U * (np.sqrt(3.0) * spread)) @ axes.T


#: The structureless references, drawn in this order from one generator: a peaked one
#: and a flat one with the data's mean and covariance.
REFERENCES = (("gaussian", gaussian_reference), ("uniform", uniform_reference))


def null_ratio(data_lambdas, reference_lambdas, k: int) -> float:
    """``λ_k(data) / λ_k(reference)`` (1-based ``k``; the Laplacian's eigenvalues in
    ascending order); ``inf`` when the reference's ``λ_k`` is zero (no evidence)."""
    lam_d = float(np.asarray(data_lambdas, dtype=np.float64)[k - 1])
    lam_r = float(np.asarray(reference_lambdas, dtype=np.float64)[k - 1])
    if lam_r <= ZERO_EIGENVALUE:
        return float("inf")
    return max(lam_d, 0.0) / lam_r


def reference_spectrum(R: np.ndarray, fit_spec: Callable[[np.ndarray], Any]
                       ) -> list[float] | None:
    """The Laplacian eigenvalues the spec's eigengap records on the reference rows ``R``
    (``fit_spec(R)`` returns that fit's ``KSelection``); ``None`` when it records none."""
    selection = fit_spec(R)
    values = (selection.details or {}).get("laplacian_eigenvalues") if selection else None
    return None if values is None else [float(v) for v in values]


def null_test(selection: Any, X: Any, seed_rng: np.random.Generator,
              fit_spec: Callable[[np.ndarray], Any]) -> dict | None:
    """The null test of ``selection`` (an eigengap's, ``k >= 2``) on ``X``: the ratio
    against each of :data:`REFERENCES` (drawn from ``seed_rng`` in turn), the largest
    of them as ``ratio`` (the data must lie far below every structureless reference),
    ``threshold``, ``accepted``, the data's ``λ_k`` and the smallest reference ``λ_k``;
    ``None`` when the selection records no spectrum (another method: nothing to test)."""
    data = (selection.details or {}).get("laplacian_eigenvalues")
    if data is None or selection.k < 2:
        return None
    k = int(selection.k)
    refs = {}
    for name, draw in REFERENCES:
        ref = reference_spectrum(draw(X, seed_rng), fit_spec)
        if ref is None or len(ref) < k:
            return None
        refs[name] = ref
    ratios = {name: null_ratio(data, ref, k) for name, ref in refs.items()}
    ratio = max(ratios.values())
    return {"ratio": ratio, "threshold": NULL_RATIO, "accepted": bool(ratio <= NULL_RATIO),
            "lambda_k": float(data[k - 1]),
            "reference_lambda_k": min(float(ref[k - 1]) for ref in refs.values()),
            "ratios": ratios, "reference": "the same spec on a Gaussian and a uniform box "
            "with the data's mean and covariance"}
