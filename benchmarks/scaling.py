"""Scaling suite: large data-set builders and the log-log slope of time and memory against n.

The data sets are built in memory, deterministically, never written to disk:

- :func:`mnist_extend_dataset`: the first ``n`` of the 630 000 MNIST-extend images (ONGR
  paper, Section 4.1: MNIST plus its one-pixel shifts in the 8 directions), built by
  :func:`graphclust.data.mnist_extend` from ``mnist.npz``.
- :func:`synthetic_blobs`: Gaussian blobs generated chunk by chunk with fixed centres and
  a per-chunk seed, so the first ``n`` rows of a larger set equal the smaller set.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["mnist_extend_dataset", "synthetic_blobs", "fit_loglog_slope", "slopes"]

SYNTH_CLUSTERS = 10
SYNTH_DIM = 16
SYNTH_CHUNK = 100_000


def mnist_extend_dataset(data_dir=None, n: int | None = None):
    """``(X, y)``: the first ``n`` rows of MNIST-extend (uint8 pixels, 9 x 70 000 rows)."""
    from graphclust.data import load_dataset, mnist_extend

    X, y = load_dataset("mnist", data_dir)
    return mnist_extend(np.asarray(X), np.asarray(y), n)


def synthetic_blobs(n: int, n_clusters: int = SYNTH_CLUSTERS, n_features: int = SYNTH_DIM,
                    chunk: int = SYNTH_CHUNK, dtype=np.float32):
    """``n`` points of ``n_clusters`` isotropic Gaussian blobs, built in chunks.

    Centres are drawn once (seed 0) uniformly in [-10, 10]^d; chunk ``i`` draws its labels
    and noise from seed ``1 + i``, so the set is identical on every call and a prefix of
    any larger set. Memory: the output plus one chunk.
    """
    centres = np.random.default_rng(0).uniform(-10.0, 10.0, size=(n_clusters, n_features))
    X = np.empty((n, n_features), dtype=dtype)
    y = np.empty(n, dtype=np.int64)
    for i, start in enumerate(range(0, n, chunk)):
        stop = min(n, start + chunk)
        rng = np.random.default_rng(1 + i)
        lab = rng.integers(0, n_clusters, size=chunk)[: stop - start]
        noise = rng.normal(scale=2.5, size=(chunk, n_features))[: stop - start]
        X[start:stop] = centres[lab] + noise
        y[start:stop] = lab
    return X, y


def fit_loglog_slope(n, values) -> float:
    """Least-squares slope of ``log(values)`` against ``log(n)`` (NaN with < 2 usable points).

    A slope of 1 means linear growth, 2 quadratic. Points with a non-positive or
    non-finite value are left out.
    """
    n = np.asarray([math.nan if x is None else x for x in n], dtype=float)
    v = np.asarray([math.nan if x is None else x for x in values], dtype=float)
    ok = np.isfinite(n) & np.isfinite(v) & (n > 0) & (v > 0)
    if np.unique(n[ok]).size < 2:
        return math.nan
    slope, _ = np.polyfit(np.log(n[ok]), np.log(v[ok]), 1)
    return float(slope)


def slopes(rows: list[dict]) -> list[dict]:
    """Per (method, family): log-log slopes of each stage's time and of peak memory vs n.

    ``rows`` are aggregated scaling rows with keys ``method``, ``family``, ``n``,
    ``time_<stage>`` and ``fit_extra_mb``.
    """
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        if r.get("status") == "ok":
            groups.setdefault((r["method"], r["family"]), []).append(r)
    out = []
    for (method, family), rs in sorted(groups.items()):
        rs.sort(key=lambda r: r["n"])
        ns = [r["n"] for r in rs]
        entry = {"method": method, "family": family, "sizes": ns}
        stages = sorted({k[5:] for r in rs for k in r if k.startswith("time_")})
        for st in stages:
            entry[f"slope_time_{st}"] = fit_loglog_slope(ns, [r.get(f"time_{st}") for r in rs])
        entry["slope_memory"] = fit_loglog_slope(ns, [r.get("fit_extra_mb") for r in rs])
        out.append(entry)
    return out
