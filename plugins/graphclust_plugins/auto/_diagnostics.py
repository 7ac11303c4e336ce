"""Cheap label-free diagnostics of a bounded sample, for the ``auto`` rules.

Everything here runs on at most :data:`SAMPLE_ROWS` rows (the rule's caller passes the
evenly spaced sample of the profile), so its cost does not grow with ``n``: an exact
``SAMPLE_ROWS x SAMPLE_ROWS`` neighbour search in row blocks (``O(m² d)`` time,
``O(m · block)`` memory) and a few ``O(m)`` passes.

* :func:`two_nn_dimension` — the TWO-NN intrinsic-dimension estimator of Facco, d'Errico,
  Rodriguez & Laio (Scientific Reports 7, 12140, 2017): for each point the ratio
  ``μ = r₂ / r₁`` of its second to first neighbour distance is Pareto distributed,
  ``f(μ) = d μ^{-(d+1)}`` (their Eq. 2), so the maximum-likelihood dimension is
  ``d̂ = N / Σ log μ_i``.
* :func:`knn_components` — the connected components of the symmetrised ``k``-NN graph
  and the share of points in components of at least ``min_size`` points.
* :func:`normalized_cut` — the normalised cut of a partition of that graph.
* :func:`size_balance` — the smallest over the largest cluster size of a labelling.
* :func:`mixture_gain` — how much better ``2k`` Gaussians than ``k`` Gaussians predict
  held-out rows (mean log-likelihood per row): near zero or negative when the data are
  a mixture of ``k`` ellipsoids, large when the clusters are curved or hollow (a ring,
  a moon, a spiral needs many Gaussians to be described).
* :func:`mixture_parameters` — the free parameters of a full-covariance mixture.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

__all__ = ["KDE_BANDWIDTHS", "SAMPLE_ROWS", "kde_bandwidth", "kernel_excess",
           "knn_components", "knn_graph", "knn_indices", "mixture_gain", "mixture_parameters", "normalized_cut", "size_balance",
           "two_nn_dimension"]

#: The diagnostics' sample: at most this many rows.
SAMPLE_ROWS = 4000
#: Bandwidths the kernel density estimate tries: Scott's rule ``h₀`` times
#: ``2⁰, 2⁻¹, …, 2⁻⁷`` (Scott's rule is optimal for one Gaussian and oversmooths every
#: multimodal density, so the search only goes down from it).
KDE_BANDWIDTHS = tuple(2.0 ** -j for j in range(8))


def knn_indices(S: np.ndarray, k: int, block: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest other rows of every row of ``S`` and their Euclidean distances,
    by exact search in row blocks (ties broken by the lower index: a stable sort)."""
    S = np.asarray(S, dtype=np.float64)
    m = S.shape[0]
    k = int(min(k, m - 1))
    sq = np.einsum("ij,ij->i", S, S)
    idx = np.empty((m, k), dtype=np.int64)
    dist = np.empty((m, k), dtype=np.float64)
    for start in range(0, m, block):
        stop = min(m, start + block)
        d2 = sq[start:stop, None] - 2.0 * (S[start:stop] @ S.T) + sq[None, :]
        np.maximum(d2, 0.0, out=d2)
        d2[np.arange(stop - start), np.arange(start, stop)] = np.inf
        part = np.argpartition(d2, k - 1, axis=1)[:, :k] if k < m - 1 else \
            np.tile(np.arange(m), (stop - start, 1))
        vals = np.take_along_axis(d2, part, axis=1)
        order = _order(vals, part)
        idx[start:stop] = np.take_along_axis(part, order, axis=1)[:, :k]
        dist[start:stop] = np.sqrt(np.take_along_axis(vals, order, axis=1)[:, :k])
    return idx, dist


def _order(vals: np.ndarray, part: np.ndarray) -> np.ndarray:
    """Row-wise order by value, then by index (deterministic ties)."""
    out = np.empty_like(part)
    for i in range(vals.shape[0]):
        out[i] = np.lexsort((part[i], vals[i]))
    return out


def two_nn_dimension(S: np.ndarray, neighbors: tuple[np.ndarray, np.ndarray] | None = None
                     ) -> float:
    """TWO-NN maximum-likelihood intrinsic dimension ``N / Σ log(r₂ / r₁)`` (Facco et al.
    2017, Eq. 2); points whose first neighbour is at distance 0 (duplicates) are left out.
    ``nan`` when fewer than three usable points remain."""
    _, dist = neighbors if neighbors is not None else knn_indices(S, 2)
    r1, r2 = dist[:, 0], dist[:, 1]
    ok = r1 > 0
    if ok.sum() < 3:
        return float("nan")
    logs = np.log(r2[ok] / r1[ok])
    total = float(logs.sum())
    return float("inf") if total <= 0 else float(ok.sum() / total)


def knn_graph(idx: np.ndarray) -> sp.csr_array:
    """The binary symmetrised (``max``) adjacency of a neighbour list."""
    m, k = idx.shape
    rows = np.repeat(np.arange(m), k)
    A = sp.csr_array((np.ones(m * k), (rows, idx.ravel())), shape=(m, m))
    A = A.maximum(A.T)
    A.data[:] = 1.0
    return sp.csr_array(A)


def knn_components(idx: np.ndarray, min_size: int) -> tuple[int, float, np.ndarray]:
    """``(big, covered, labels)``: the number of connected components of the symmetrised
    kNN graph with at least ``min_size`` points, the share of points they hold, and the
    component label of every point."""
    n_comp, labels = connected_components(knn_graph(idx), directed=False)
    sizes = np.bincount(labels, minlength=n_comp)
    big = sizes >= min_size
    return int(big.sum()), float(sizes[big].sum() / max(1, labels.size)), labels


def size_balance(labels: np.ndarray) -> float:
    """Smallest over largest cluster size of ``labels`` (1 = equal sizes)."""
    sizes = np.bincount(np.unique(np.asarray(labels), return_inverse=True)[1])
    return float(sizes.min() / sizes.max())


def mixture_parameters(k: int, d: int) -> int:
    """Free parameters of a ``k``-component full-covariance Gaussian mixture in ``d``
    dimensions: ``k`` means, ``k`` symmetric covariances and ``k − 1`` weights."""
    return int(k * d + k * d * (d + 1) // 2 + k - 1)


def _mixture_rows(train: np.ndarray, test: np.ndarray, c: int, seed: int,
                  n_init: int) -> np.ndarray:
    """Per-row held-out log-likelihood of a ``c``-component full-covariance mixture
    fitted by EM (scikit-learn, ``n_init`` k-means starts, seeded, one thread)."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import GaussianMixture
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        gmm = GaussianMixture(int(min(c, train.shape[0])), covariance_type="full",
                              n_init=n_init, reg_covar=1e-6, random_state=seed).fit(train)
        return gmm.score_samples(test)


def kde_bandwidth(train: np.ndarray) -> float:
    """The Gaussian kernel's bandwidth by likelihood cross-validation (Habbema, Hermans &
    van den Broek 1974; Duin 1976) on the rows of ``train`` alone: fitted on its even
    rows, scored on its odd ones, over Scott's rule ``h₀ = σ̄ n^{-1/(d+4)}`` (σ̄ the root
    mean column variance) times :data:`KDE_BANDWIDTHS`; the largest of equal scores."""
    from sklearn.neighbors import KernelDensity

    n, d = train.shape
    h0 = float(np.sqrt(np.mean(train.var(axis=0)))) * n ** (-1.0 / (d + 4))
    if not h0 > 0:
        return 1.0
    fit, held = train[0::2], train[1::2]
    scores = [KernelDensity(bandwidth=h0 * f).fit(fit).score(held) for f in KDE_BANDWIDTHS]
    return h0 * KDE_BANDWIDTHS[int(np.argmax(scores))]


def kernel_excess(S: np.ndarray, k: int, seed: int = 0, n_init: int = 3) -> float:
    """How many standard errors better a Gaussian kernel density estimate than a
    ``k``-component full-covariance Gaussian mixture predicts held-out rows.

    Both are fitted on the even rows of ``S`` (the kernel's bandwidth by
    :func:`kde_bandwidth`, within those rows) and scored on the odd rows, where ``z`` is
    the mean of the per-row log-likelihood differences (kernel minus mixture) over its
    standard error. A kernel estimate assumes no shape and converges to any density; when
    the data are a mixture of ``k`` Gaussians the mixture is the right parametric model
    and the kernel's smoothing bias makes it score no better (``z <= 0`` on every Gaussian
    set of the tune half, docs/auto.rst, rule 8). Curved, hollow or chained clusters are
    described by the kernel and not by ``k`` Gaussians: ``z`` from 3 to 31 on the rings and
    spirals whose ``2k``-over-``k`` gain alone passed the mixture test. ``nan`` when the
    test half has fewer than two rows."""
    from sklearn.neighbors import KernelDensity

    S = np.asarray(S, dtype=np.float64)
    train, test = S[0::2], S[1::2]
    if test.shape[0] < 2:
        return float("nan")
    kde = KernelDensity(bandwidth=kde_bandwidth(train)).fit(train).score_samples(test)
    diff = kde - _mixture_rows(train, test, k, seed, n_init)
    se = float(diff.std(ddof=1)) / np.sqrt(diff.size)
    mean = float(diff.mean())
    if not se > 0:
        return 0.0 if mean == 0 else float(np.sign(mean) * np.inf)
    return mean / se


def mixture_gain(S: np.ndarray, k: int, seed: int = 0, n_init: int = 3) -> float:
    """Mean held-out log-likelihood per row of a ``2k``-component minus a ``k``-component
    full-covariance Gaussian mixture: both fitted by EM (scikit-learn, ``n_init`` k-means
    starts, seeded, one thread) on the even rows of ``S``, scored on the odd rows.

    A likelihood-ratio view of "is this a mixture of ``k`` Gaussians": if it is, ``k``
    more components only fit noise and do not help on new rows (gain ≤ 0, up to the
    sampling error of the ``2k`` model's extra ``mixture_parameters(k, d)``
    parameters); if the clusters are curved, hollow or chained, each is described
    better by several Gaussians and the gain is large (0.1 to 0.5 nats on the 2-d
    shapes of the benchmark battery, docs/auto.rst)."""
    S = np.asarray(S, dtype=np.float64)
    train, test = S[0::2], S[1::2]
    scores = [float(_mixture_rows(train, test, c, seed, n_init).mean()) for c in (k, 2 * k)]
    return scores[1] - scores[0]


def normalized_cut(A: sp.csr_array, labels: np.ndarray) -> float:
    """Normalised cut ``Σ_c cut(c, V∖c) / vol(c)`` of a partition of the graph ``A``
    (Shi & Malik 2000, Eq. 2 generalised to ``k`` parts; von Luxburg 2007, Sec. 5): the
    objective that spectral clustering relaxes. A part of zero volume adds nothing."""
    A = sp.coo_array(A)
    labels = np.unique(np.asarray(labels), return_inverse=True)[1].ravel()
    k = int(labels.max()) + 1 if labels.size else 0
    deg = np.bincount(A.row, weights=A.data, minlength=A.shape[0])
    vol = np.bincount(labels, weights=deg, minlength=k)
    crossing = labels[A.row] != labels[A.col]
    cut = np.bincount(labels[A.row[crossing]], weights=A.data[crossing], minlength=k)
    ok = vol > 0
    return float((cut[ok] / vol[ok]).sum())
