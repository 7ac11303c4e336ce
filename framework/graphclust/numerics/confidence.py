"""The framework's noise rule: each cluster of the fit a Gaussian, plus a uniform noise
component; the points more likely noise than their own cluster (:doc:`/confidence`, the
noise rule).

The model is the Gaussian mixture with a noise component of Banfield & Raftery (1993,
*Model-based Gaussian and non-Gaussian clustering*, Biometrics 49; mclust's
``noise``), with the fit's partition given: a point labelled ``c`` is either a draw of
cluster ``c``'s Gaussian ``N(μ_c, Σ_c)`` (weight ``π_c``) or noise, uniform over the
bounding box of the rows (density ``1 / V``, weight ``π_0``). The fit decides which
cluster a point could belong to; the noise model decides only whether it belongs to it
or to none. All of ``π``, ``μ_c`` and ``Σ_c`` are fitted by expectation-maximisation,
the latent variable being the noise indicator: the E-step gives each point the
posterior ``τ_i = π_c f_c(x_i) / (π_c f_c(x_i) + π_0 / V)`` of its cluster, the M-step
the ``τ``-weighted means, covariances and weights (``π_c = Σ_{ℓ_i=c} τ_i / n``,
``π_0 = Σ (1 − τ_i) / n``, ``n`` the rows of clusters with a Gaussian), until the weights move less than ``1 / n``. It starts
from each cluster's robust minimum-covariance-determinant estimate (Rousseeuw 1984;
scikit-learn's :class:`~sklearn.covariance.MinCovDet`: the half of its points with the
smallest scatter) and equal weights. A point is noise when ``τ_i < 1/2`` (the Bayes
rule). Data without stray points drive ``π_0`` towards 0 and flag almost nothing; a
uniform background is flagged where its density exceeds the cluster's.

Why the covariances are refitted: the robust estimate alone is computed from the
cluster's points, and the background the cluster holds inside its ellipse inflates it
(on five blobs of σ = 0.5 plus 20 % background, seeds 0–9, the median determinant
over σ⁴ is 1.16 from the robust start, 0.96 after the EM), so the
Gaussian reaches too far and keeps background near it. The EM weighs every point by
its posterior, and its fixed point is the model's maximum-likelihood estimate
(docs/confidence.rst, measured on seeds 0–9).

A cluster's covariance needs more than ``MIN_ROWS_PER_COLUMN · D`` points (Rousseeuw &
Van Driessen 1999 recommend ``n/p > 5``) and a nonsingular scatter; a cluster without
one takes no part, and its points are never flagged (its spread cannot be told from a
stray point). An M-step whose weighted scatter is singular or rests on no more than
that many points' weight keeps the cluster's previous Gaussian. Cost: ``O(n·D²)`` an
iteration, the MCD on each cluster.
"""

from __future__ import annotations

import warnings

import attrs
import numpy as np

__all__ = ["MIN_ROWS_PER_COLUMN", "ClusterGaussians", "fit_cluster_gaussians",
           "gaussian_outliers"]

#: A cluster's robust covariance is estimated only from more than this many points per
#: column (Rousseeuw & Van Driessen 1999: ``n/p > 5``).
MIN_ROWS_PER_COLUMN = 5
#: Most EM iterations (they stop earlier when the weights move less than 1/n).
MAX_EM_ITER = 200


@attrs.define
class ClusterGaussians:
    """Per cluster: the fitted centre, precision and log-normaliser (``None`` when the
    cluster has no covariance), the noise's log density ``-log V`` and the fitted
    weights (noise first, then the clusters; they sum to one over the clusters with a
    Gaussian)."""

    models: list
    log_noise: float = -np.inf
    weights: np.ndarray = attrs.field(factory=lambda: np.zeros(1))


def fit_cluster_gaussians(X: np.ndarray, labels: np.ndarray, width: int,
                          seed: int = 0) -> ClusterGaussians:
    """The Gaussian of every cluster ``0..width-1`` of ``labels`` (rows of ``X``) and the
    uniform noise over their bounding box, fitted by EM from robust starts."""
    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    n, D = X.shape
    models = [_robust_start(X[labels == c], seed) for c in range(width)]
    span = np.ptp(X, axis=0) if n else np.zeros(D)
    log_noise = -float(np.log(span).sum()) if D and (span > 0).all() else -np.inf
    model = ClusterGaussians(models, log_noise)
    if any(m is not None for m in models) and np.isfinite(log_noise):
        _em(X, labels, model)
    return model


def _robust_start(rows: np.ndarray, seed: int):
    """``(location, precision, log-normaliser)`` of the rows' MCD estimate, or ``None``."""
    from sklearn.covariance import MinCovDet

    D = rows.shape[1]
    if rows.shape[0] <= MIN_ROWS_PER_COLUMN * D or D == 0:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mcd = MinCovDet(random_state=seed).fit(rows)
    return _gaussian(mcd.location_, mcd.covariance_)


def _gaussian(loc: np.ndarray, cov: np.ndarray):
    """``(loc, precision, log-normaliser)``; ``None`` for a singular ``cov``."""
    D = loc.size
    vals, vecs = np.linalg.eigh((cov + cov.T) / 2)
    if not np.isfinite(vals).all() or vals.min() <= np.finfo(np.float64).eps * max(
            vals.max(), 0.0) * D:
        return None
    prec = (vecs / vals) @ vecs.T
    return loc, prec, -0.5 * (D * np.log(2 * np.pi) + np.log(vals).sum())


def _own_log_density(X: np.ndarray, labels: np.ndarray, model: ClusterGaussians,
                     block: int = 65536) -> np.ndarray:
    """Each row's log density under its own cluster's Gaussian (``-inf`` without one)."""
    out = np.full(X.shape[0], -np.inf)
    for c, m in enumerate(model.models):
        if m is None:
            continue
        rows = np.flatnonzero(labels == c)
        loc, prec, norm = m
        for lo in range(0, rows.size, block):
            diff = X[rows[lo:lo + block]] - loc
            out[rows[lo:lo + block]] = norm - 0.5 * np.einsum("ij,jk,ik->i", diff, prec, diff)
    return out


def _cluster_posterior(logf: np.ndarray, labels: np.ndarray, model: ClusterGaussians,
                       weights: np.ndarray) -> np.ndarray:
    """``τ_i``: the posterior of row ``i``'s own cluster against the noise (0 where the
    cluster has no Gaussian or no weight)."""
    with np.errstate(divide="ignore"):
        log_w = np.log(weights)
    a1 = log_w[1:][labels] + logf
    a0 = log_w[0] + model.log_noise
    with np.errstate(over="ignore", invalid="ignore"):
        tau = 1.0 / (1.0 + np.exp(np.clip(a0 - a1, -700.0, 700.0)))
    return np.where(np.isfinite(a1), tau, 0.0)


def _em(X: np.ndarray, labels: np.ndarray, model: ClusterGaussians) -> None:
    """Weights, centres and scatters by EM (module docstring), in place."""
    D = X.shape[1]
    k = len(model.models)
    has = np.array([m is not None for m in model.models])
    modelled = has[np.clip(labels, 0, k - 1)] & (labels >= 0) & (labels < k)
    n_mod = max(int(modelled.sum()), 1)  # the rows the mixture describes
    w = np.where(np.r_[True, has], 1.0, 0.0)
    w /= w.sum()
    for _ in range(MAX_EM_ITER):
        tau = np.where(modelled, _cluster_posterior(
            _own_log_density(X, labels, model), np.clip(labels, 0, k - 1), model, w), 0.0)
        new = np.r_[n_mod - tau.sum(),
                    np.bincount(labels[modelled], weights=tau[modelled], minlength=k)] / n_mod
        for c in np.flatnonzero(has):
            rows = labels == c
            t = tau[rows]
            if t.sum() <= MIN_ROWS_PER_COLUMN * D:
                continue  # too little weight for a scatter: the previous Gaussian stays
            loc = t @ X[rows] / t.sum()
            diff = X[rows] - loc
            fitted = _gaussian(loc, (diff * t[:, None]).T @ diff / t.sum())
            if fitted is not None:
                model.models[c] = fitted
        done = np.abs(new - w).max() < 1.0 / n_mod
        w = new
        if done:
            break
    model.weights = w


def gaussian_outliers(X: np.ndarray, labels: np.ndarray, model: ClusterGaussians) -> np.ndarray:
    """Rows whose posterior of their own cluster against the noise is below one half;
    rows of a cluster without a Gaussian are never flagged."""
    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    k = len(model.models)
    if model.weights.size < 2 or not np.isfinite(model.log_noise) or k == 0:
        return np.zeros(labels.size, dtype=bool)
    ok = (labels >= 0) & (labels < k)
    has = np.array([m is not None for m in model.models])
    ok[ok] = has[labels[ok]]
    safe = np.where(ok, labels, 0)
    tau = _cluster_posterior(_own_log_density(X, np.where(ok, labels, -1), model), safe,
                             model, model.weights)
    return ok & (tau < 0.5)
