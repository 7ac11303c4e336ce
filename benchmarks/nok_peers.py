"""The peers of the no-k mode (issue 26): estimators that find the number of clusters
themselves, run at documented defaults, never told ``k``.

- ``sk-hdbscan``: scikit-learn's ``HDBSCAN()`` at its defaults (``min_cluster_size = 5``,
  ``min_samples`` = ``min_cluster_size``).
- ``evoc``: ``evoc.EVoC(random_state=seed)`` at its defaults (no ``approx_n_clusters``);
  EVoC 0.3.2 raises on 2-d input (recorded ``error``).
- ``umap-hdbscan``: UMAP to 2 components (30 neighbours, ``min_dist = 0``, as the
  battery's peer with ``k``), then scikit-learn's HDBSCAN with
  ``min_cluster_size = max(5, round(n / 100))`` (1 % of n; umap-learn's clustering guide
  uses 500 on MNIST-70k, 0.7 %), ``min_samples`` at its default.

A peer "finds k itself": its ``k`` is the number of distinct labels after noise points
(-1) are made one more cluster of their own, as the metrics see them
(:func:`benchmarks.peers._noise_as_cluster`). ``python -m benchmarks nok --methods
sk-hdbscan,evoc,umap-hdbscan`` runs them through :func:`run_peer_cell`.
"""

from __future__ import annotations

import signal
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks import datasets
from benchmarks.peers import _need, _noise_as_cluster

__all__ = ["NOK_PEERS", "found_k", "run_peer_cell", "umap_hdbscan_size"]


def umap_hdbscan_size(n: int) -> int:
    """The ``min_cluster_size`` of the no-k UMAP+HDBSCAN peer: 1 % of ``n``, at least 5."""
    return max(5, round(n / 100))


def found_k(labels: np.ndarray) -> int:
    """The number of clusters a peer found: distinct labels, noise (-1) as one more."""
    return int(np.unique(_noise_as_cluster(labels)).size)


def _hdbscan(X: np.ndarray, seed: int) -> np.ndarray:
    from sklearn.cluster import HDBSCAN

    return HDBSCAN(copy=True).fit_predict(X)


def _evoc(X: np.ndarray, seed: int) -> np.ndarray:
    evoc = _need("evoc", "evoc")
    return evoc.EVoC(random_state=seed).fit_predict(np.ascontiguousarray(X, dtype=np.float32))


def _umap_hdbscan(X: np.ndarray, seed: int) -> np.ndarray:
    from sklearn.cluster import HDBSCAN

    umap = _need("umap", "umap-learn")
    Z = umap.UMAP(n_components=2, n_neighbors=30, min_dist=0.0, random_state=seed,
                  n_jobs=1).fit_transform(X)
    return HDBSCAN(min_cluster_size=umap_hdbscan_size(X.shape[0]), copy=True).fit_predict(Z)


#: name → ``labels(X, seed)`` (noise as -1) of the no-k peers.
NOK_PEERS: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "sk-hdbscan": _hdbscan, "evoc": _evoc, "umap-hdbscan": _umap_hdbscan}


class _OverCap(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:  # pragma: no cover - timing
    raise _OverCap()


def run_capped(call: Callable[[], Any], cap: float) -> tuple[Any, dict | None, list, float]:
    """``call()`` under a wall-clock cap of ``cap`` seconds (SIGALRM), warnings recorded:
    ``(value, failure, warnings, seconds)`` — ``failure`` is None, or the record fields
    of a cell that went over the cap or raised (the mode goes on)."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(cap))
    t0 = time.perf_counter()
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = call()
    except _OverCap:
        return None, {"status": "over cap"}, caught, time.perf_counter() - t0
    except Exception as exc:  # noqa: BLE001 - recorded, the mode goes on
        return None, {"status": "error", "error": f"{type(exc).__name__}: {str(exc)[:160]}"
                      }, caught, time.perf_counter() - t0
    finally:
        signal.alarm(0)
    return value, None, caught, time.perf_counter() - t0


def run_peer_cell(method: str, name: str, seed: int, data_dir: str | None,
                  cap: float) -> dict:
    """One no-k peer on one data set: a record like :func:`benchmarks.nok.run_cell`'s
    (``k_found`` from :func:`found_k`, ``k_method = "peer"``)."""
    from benchmarks.runner import score_all

    X, y = datasets.load(name, data_dir)
    k_true = int(np.unique(y).size)
    base = {"method": method, "dataset": name, "seed": seed, "k_true": k_true}
    raw, failed, caught, seconds = run_capped(lambda: np.asarray(NOK_PEERS[method](X, seed)),
                                              cap)
    if failed is not None:
        return {**base, **failed}
    labels = _noise_as_cluster(raw)
    return {**base, "status": "ok", "n": int(X.shape[0]), "k_found": found_k(raw),
            "k_method": "peer", "k_part": None, "noise_fraction": float(np.mean(raw < 0)),
            "time_fit": seconds, **score_all(labels, y),
            "warnings": sorted({w.category.__name__ for w in caught})}
