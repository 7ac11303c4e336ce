"""The peers: estimators a user would otherwise pick, declared once.

Beside scikit-learn's, the ``general`` battery uses genieclust's Genie, umap-learn's
UMAP (with KMeans, or with HDBSCAN) and EVoC (the ``evoc`` package); all through the
``bench`` extra, never a library dependency (a missing one raises an ImportError naming
the extra).

A suite names a peer with :func:`benchmarks.suite.peer`; the runner builds it with
``PEERS[name](n_clusters, seed)`` on the same data, in the same run, as the presets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["HDBSCAN_SIZES", "PEERS", "EvocLabels", "GmmLabels", "HdbscanK", "UmapHdbscan",
           "UmapKMeans", "make_peer"]

#: ``min_cluster_size`` values tried by the ``hdbscan`` peer (fractions of n, at least 5).
HDBSCAN_SIZES = (0.005, 0.01, 0.02, 0.05, 0.1)


def _need(module: str, package: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"the {package} peer needs {package}: install the bench extra, "
                          f'pip install -e ".[bench]"') from exc


def _sklearn(estimator: str, **params: Any) -> Callable[[int, int], Any]:
    """A factory of ``sklearn.cluster.<estimator>(n_clusters=k, random_state=seed,
    **params)`` (``params`` may fix ``n_clusters``)."""

    def make(k: int, seed: int) -> Any:
        import sklearn.cluster

        return getattr(sklearn.cluster, estimator)(**{"n_clusters": k, "random_state": seed,
                                                      **params})

    return make


class _LabelsPeer:
    """A peer that is not a scikit-learn clusterer: built from ``(n_clusters, seed)`` like
    the others, its ``fit`` sets ``labels_``."""

    def __init__(self, n_clusters: int, random_state: int = 0) -> None:
        self.n_clusters, self.random_state = n_clusters, random_state


class GmmLabels(_LabelsPeer):
    """``GaussianMixture(k, full covariances)`` with ``labels_`` set by ``fit`` (the most
    probable component of each point), as the runner reads them. ``reg_covar = 1e-4``
    instead of 1e-6: pixel data has constant pixels, singular full covariances."""

    def fit(self, X: np.ndarray) -> GmmLabels:
        from sklearn.mixture import GaussianMixture

        gmm = GaussianMixture(n_components=self.n_clusters, covariance_type="full",
                              reg_covar=1e-4, random_state=self.random_state)
        self.labels_ = gmm.fit_predict(X)
        return self


class HdbscanK(_LabelsPeer):
    """scikit-learn's HDBSCAN told ``k`` only through ``min_cluster_size``: each value of
    :data:`HDBSCAN_SIZES` (× n, at least 5) is fitted and the labelling whose number of
    clusters is closest to ``k`` kept (the smaller size on a tie); no true label is used.
    Noise points (-1) form one more cluster of their own, as the metrics see them."""

    def fit(self, X: np.ndarray) -> HdbscanK:
        self.labels_, self.min_cluster_size_ = _hdbscan_k(X, self.n_clusters)
        return self


def _hdbscan_k(X: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """The :class:`HdbscanK` search: labels (noise as one more cluster) and the size kept."""
    from sklearn.cluster import HDBSCAN

    sizes = sorted({max(5, int(f * X.shape[0])) for f in HDBSCAN_SIZES})
    fits = [(HDBSCAN(min_cluster_size=s, copy=True).fit_predict(X), s) for s in sizes]
    # min keeps the first, so the smaller size, of the labellings as close to k
    labels, size = min(fits, key=lambda fit: abs(len(set(fit[0].tolist()) - {-1}) - k))
    return _noise_as_cluster(labels), size


def _noise_as_cluster(labels: np.ndarray) -> np.ndarray:
    """Noise points (-1) as one more cluster of their own, as the metrics see them."""
    labels = np.asarray(labels)
    return np.where(labels < 0, labels.max() + 1, labels)


class EvocLabels(_LabelsPeer):
    """EVoC (Embedding Vector Oriented Clustering, the ``evoc`` package) with its defaults
    and ``approx_n_clusters = k``: a kNN graph, a node embedding and density clustering
    over layers; it finds the number of clusters itself (``k`` is a hint), and noise
    points form one more cluster, as the metrics see them. EVoC 0.3.2 is made for
    embedding vectors: on 2-d data its label-propagation start asks PCA for 4
    components and raises (the cell is recorded as an error)."""

    def fit(self, X: np.ndarray) -> EvocLabels:
        evoc = _need("evoc", "evoc")
        model = evoc.EVoC(approx_n_clusters=self.n_clusters, random_state=self.random_state)
        labels = model.fit_predict(np.ascontiguousarray(X, dtype=np.float32))
        self.noise_fraction_ = float(np.mean(np.asarray(labels) < 0))
        self.labels_ = _noise_as_cluster(labels)
        return self


class UmapHdbscan(_LabelsPeer):
    """UMAP to 2 components (30 neighbours, ``min_dist = 0``), then HDBSCAN told ``k``
    only through ``min_cluster_size`` as :class:`HdbscanK` (noise as one more cluster)."""

    def fit(self, X: np.ndarray) -> UmapHdbscan:
        umap = _need("umap", "umap-learn")
        Z = umap.UMAP(n_components=2, n_neighbors=30, min_dist=0.0,
                      random_state=self.random_state, n_jobs=1).fit_transform(X)
        self.labels_, self.min_cluster_size_ = _hdbscan_k(Z, self.n_clusters)
        return self


def _genie(k: int, seed: int) -> Any:
    """genieclust's Genie, its default Gini threshold G = 0.3 (deterministic)."""
    return _need("genieclust", "genieclust").Genie(n_clusters=k, gini_threshold=0.3)


class UmapKMeans(_LabelsPeer):
    """UMAP to 10 components (umap-learn defaults otherwise), then ``KMeans(n_init=10)``."""

    def fit(self, X: np.ndarray) -> UmapKMeans:
        from sklearn.cluster import KMeans

        umap = _need("umap", "umap-learn")
        Z = umap.UMAP(n_components=10, random_state=self.random_state,
                      n_jobs=1).fit_transform(X)
        self.labels_ = KMeans(self.n_clusters, n_init=10,
                              random_state=self.random_state).fit_predict(Z)
        return self


_SPECTRAL = {"affinity": "nearest_neighbors", "n_neighbors": 10, "assign_labels": "kmeans"}

PEERS: dict[str, Callable[[int, int], Any]] = {
    "sk-kmeans": _sklearn("KMeans", n_init=10),
    "sk-kmeans-1": _sklearn("KMeans", n_init=1),
    # the peer of BKHK's 1024 anchors (ULGE): not a k-clustering, only its time is compared
    "sk-kmeans-1024": _sklearn("KMeans", n_clusters=1024, n_init=1, max_iter=100),
    "sk-minibatch": _sklearn("MiniBatchKMeans", n_init=3, batch_size=2048),
    "sk-spectral": _sklearn("SpectralClustering", **_SPECTRAL),
    # pyamg's solver (the ``bench`` extra): much faster; ULGE's speed goal is against it
    "sk-spectral-amg": _sklearn("SpectralClustering", eigen_solver="amg", **_SPECTRAL),
    "sk-gmm": GmmLabels,
    "sk-hdbscan": HdbscanK,
    "genie": _genie,
    "umap-kmeans": UmapKMeans,
    "umap-hdbscan": UmapHdbscan,
    "evoc": EvocLabels,
}


def make_peer(name: str, n_clusters: int, seed: int) -> Any:
    """The peer ``name`` for ``n_clusters`` clusters and ``seed``."""
    try:
        factory = PEERS[name]
    except KeyError:
        raise LookupError(f"unknown peer {name!r}; peers: {', '.join(PEERS)}") from None
    return factory(n_clusters, seed)
