"""The framework's noise rule: the clusters' robust Gaussians plus a uniform noise
component, the points more likely noise than cluster (:doc:`/confidence`, the noise rule).

The model is the Gaussian mixture with a noise component of Banfield & Raftery (1993,
*Model-based Gaussian and non-Gaussian clustering*, Biometrics 49; mclust's
``noise``): each cluster ``c`` of the fit is a Gaussian whose centre and scatter are its
robust minimum-covariance-determinant estimates (Rousseeuw 1984; scikit-learn's
:class:`~sklearn.covariance.MinCovDet`: the half of its points with the smallest
scatter determine them, so stray points given to the cluster do not inflate it), and the
noise is uniform over the bounding box of the rows (density ``1 / V``, ``V`` the box's
volume). Only the weights are fitted, by expectation-maximisation from equal weights
(``π_0`` of the noise, ``π_c`` of the clusters, until they move less than
``1 / n``); a point is noise when its posterior of the noise component exceeds one half
(the Bayes rule). Data without stray points drive ``π_0`` towards 0 and flag almost
nothing; a uniform background is flagged where its density exceeds the clusters'.

A cluster's covariance needs more than ``MIN_ROWS_PER_COLUMN · D`` points (Rousseeuw &
Van Driessen 1999 recommend ``n/p > 5``) and a nonsingular scatter; a cluster without
one takes no part, and its points are never flagged (its spread cannot be told from a
stray point). Cost: ``O(n·k·D²)`` for the densities, the MCD on each cluster.
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
#: Most EM iterations of the weights (they stop earlier when they move less than 1/n).
MAX_EM_ITER = 200


@attrs.define
class ClusterGaussians:
    """Per cluster: robust centre, precision and log-normaliser (``None`` when the
    cluster has no covariance), the noise's log density ``-log V`` and the fitted
    weights (noise first)."""

    models: list
    log_noise: float = -np.inf
    weights: np.ndarray = attrs.field(factory=lambda: np.zeros(1))


def fit_cluster_gaussians(X: np.ndarray, labels: np.ndarray, width: int,
                          seed: int = 0) -> ClusterGaussians:
    """The robust Gaussian of every cluster ``0..width-1`` of ``labels`` (rows of
    ``X``) and the uniform noise over their bounding box; weights by EM."""
    from sklearn.covariance import MinCovDet

    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    n, D = X.shape
    models = []
    for c in range(width):
        rows = X[labels == c]
        if rows.shape[0] <= MIN_ROWS_PER_COLUMN * D or D == 0:
            models.append(None)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mcd = MinCovDet(random_state=seed).fit(rows)
        vals, vecs = np.linalg.eigh(mcd.covariance_)
        if vals.min() <= np.finfo(np.float64).eps * max(vals.max(), 0.0) * D:
            models.append(None)  # singular scatter: no density
            continue
        prec = (vecs / vals) @ vecs.T
        models.append((mcd.location_, prec, -0.5 * (D * np.log(2 * np.pi) + np.log(vals).sum())))
    span = np.ptp(X, axis=0) if n else np.zeros(D)
    log_noise = -float(np.log(span).sum()) if D and (span > 0).all() else -np.inf
    model = ClusterGaussians(models, log_noise)
    if any(m is not None for m in models) and np.isfinite(log_noise):
        model.weights = _em_weights(_log_densities(X, model), n)
    return model


def _log_densities(X: np.ndarray, model: ClusterGaussians, block: int = 65536) -> np.ndarray:
    """``n x (1 + k)``: the noise's log density, then each cluster's (``-inf`` without a
    model)."""
    k = len(model.models)
    out = np.full((X.shape[0], k + 1), -np.inf)
    out[:, 0] = model.log_noise
    for c, m in enumerate(model.models):
        if m is None:
            continue
        loc, prec, norm = m
        for lo in range(0, X.shape[0], block):
            diff = X[lo:lo + block] - loc
            out[lo:lo + block, c + 1] = norm - 0.5 * np.einsum("ij,jk,ik->i", diff, prec, diff)
    return out


def _em_weights(logd: np.ndarray, n: int) -> np.ndarray:
    w = np.full(logd.shape[1], 1.0 / logd.shape[1])
    for _ in range(MAX_EM_ITER):
        post = _posterior(logd, w)
        new = post.mean(axis=0)
        done = np.abs(new - w).max() < 1.0 / max(n, 1)
        w = new
        if done:
            break
    return w


def _posterior(logd: np.ndarray, w: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        a = logd + np.log(w)[None, :]
    top = a.max(axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(a - top)
    s = e.sum(axis=1, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)


def gaussian_outliers(X: np.ndarray, labels: np.ndarray, model: ClusterGaussians) -> np.ndarray:
    """Rows whose posterior of the noise component exceeds one half; rows of a cluster
    without a model are never flagged."""
    X = np.asarray(X, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    if model.weights.size < 2 or not np.isfinite(model.log_noise):
        return np.zeros(labels.size, dtype=bool)
    post = _posterior(_log_densities(X, model), model.weights)
    has = np.array([m is not None for m in model.models] or [False])
    ok = (labels >= 0) & (labels < has.size)
    ok[ok] = has[labels[ok]]
    return ok & (post[:, 0] > 0.5)
