"""The peers: scikit-learn estimators a user would otherwise pick, declared once.

A suite names a peer with :func:`benchmarks.suite.peer`; the runner builds it with
``PEERS[name](n_clusters, seed)`` on the same data, in the same run, as the presets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["PEERS", "make_peer"]


def _kmeans(k: int, seed: int) -> Any:
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=k, n_init=10, random_state=seed)


def _kmeans_1(k: int, seed: int) -> Any:
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=k, n_init=1, random_state=seed)


def _kmeans_1024(k: int, seed: int) -> Any:
    """KMeans(1024, n_init=1, max_iter=100): the peer of BKHK's 1024 anchors (ULGE); its
    labels are not a k-clustering, only its time is compared."""
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=1024, n_init=1, max_iter=100, random_state=seed)


def _minibatch(k: int, seed: int) -> Any:
    from sklearn.cluster import MiniBatchKMeans

    return MiniBatchKMeans(n_clusters=k, n_init=3, batch_size=2048, random_state=seed)


def _spectral(k: int, seed: int, eigen_solver: str | None = None) -> Any:
    from sklearn.cluster import SpectralClustering

    return SpectralClustering(n_clusters=k, affinity="nearest_neighbors", n_neighbors=10,
                              eigen_solver=eigen_solver, random_state=seed,
                              assign_labels="kmeans")


def _spectral_amg(k: int, seed: int) -> Any:
    """SpectralClustering with pyamg's solver (the ``bench`` extra): ARPACK's embedding,
    much faster; the ULGE speed goal is stated against it."""
    return _spectral(k, seed, "amg")


PEERS: dict[str, Callable[[int, int], Any]] = {
    "sk-kmeans": _kmeans,
    "sk-kmeans-1": _kmeans_1,
    "sk-kmeans-1024": _kmeans_1024,
    "sk-minibatch": _minibatch,
    "sk-spectral": _spectral,
    "sk-spectral-amg": _spectral_amg,
}


def make_peer(name: str, n_clusters: int, seed: int) -> Any:
    """The peer ``name`` for ``n_clusters`` clusters and ``seed``."""
    try:
        factory = PEERS[name]
    except KeyError:
        raise LookupError(f"unknown peer {name!r}; peers: {', '.join(PEERS)}") from None
    return factory(n_clusters, seed)
