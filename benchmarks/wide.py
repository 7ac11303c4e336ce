"""Wide data, side by side (issue 48, deliverables 1 and 2): ``auto`` on dense and on
CSR copies of the same data, EVoC and KMeans(k, n_init=1), in one process.

Two generated sets (no text corpus is in the data folder, so the term counts are
generated too):

* ``gaussian``: 3 000 x 8 000, 8 Gaussian clusters in 40 dimensions (centres N(0, 4²),
  unit spread) through a random projection to 8 000 plus unit noise, float32;
* ``topics``: 2 000 documents x 10 000 terms of multinomial counts, 5 topics (term
  distributions Dirichlet(0.05), mixed 0.8/0.2 with a background), 150 words a document.

Every method fits once to warm up (imports, JIT), then ``--repeats`` times; the median
wall time is reported with the ARI against the generating labels, the ratios of
``auto`` (dense) to EVoC and to KMeans, and whether the dense and CSR fits of ``auto``
agree (same spec, same labels). Usage::

    python -m benchmarks.wide [--sets gaussian,topics] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

import graphclust
from benchmarks.peers import EvocLabels

__all__ = ["gaussian_wide", "main", "topic_counts"]


def gaussian_wide(n=3000, d=8000, k=8, inner=40, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """``k`` Gaussian clusters in ``inner`` dimensions, randomly projected to ``d``,
    plus unit noise (float32)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    Z = 4.0 * rng.normal(size=(k, inner))[y] + rng.normal(size=(n, inner))
    P = rng.normal(size=(inner, d)) / np.sqrt(inner)
    return (Z @ P + rng.normal(size=(n, d))).astype(np.float32), y


def topic_counts(n=2000, d=10_000, k=5, length=150, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """Multinomial bag-of-words counts of ``k`` topics (int64, dense)."""
    rng = np.random.default_rng(seed)
    words = rng.dirichlet(np.full(d, 0.05), size=k)
    background = rng.dirichlet(np.ones(d))
    y = rng.integers(0, k, n)
    mix = 0.8 * words + 0.2 * background
    X = np.stack([rng.multinomial(length, mix[t]) for t in y])
    return X.astype(np.int64), y


SETS = {"gaussian": (gaussian_wide, 8), "topics": (topic_counts, 5)}


def _timed(fit, repeats: int):
    fit()  # warm-up
    times, model = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        model = fit()
        times.append(time.perf_counter() - t)
    return statistics.median(times), model


def run_set(name: str, repeats: int) -> dict:
    make, k = SETS[name]
    X, y = make()
    csr = sp.csr_array(X)
    out = {"set": f"{name} {X.shape[0]} x {X.shape[1]}, {100 * csr.nnz / X.size:.2g} % nonzero"}

    def auto(data):
        return lambda: graphclust.GraphClustering(n_clusters=k, random_state=0).fit(data)

    for label, fit in (("auto", auto(X)), ("auto-csr", auto(csr)),
                       ("evoc", lambda: EvocLabels(k, 0).fit(X)),
                       ("kmeans", lambda: KMeans(k, n_init=1, random_state=0).fit(X))):
        seconds, model = _timed(fit, repeats)
        out[label] = (seconds, adjusted_rand_score(y, model.labels_), model)
    dense, csr_fit = out["auto"][2], out["auto-csr"][2]
    out["same"] = (dense.resolved_spec_ == csr_fit.resolved_spec_
                   and bool(np.array_equal(dense.labels_, csr_fit.labels_)))
    out["rule"] = dense.resolved_spec_["summary"].split(":")[1].strip()
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="gaussian,topics")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    for name in args.sets.split(","):
        r = run_set(name, args.repeats)
        print(f"{r['set']} ({r['rule']}); median of {args.repeats} after a warm-up")
        for label in ("auto", "auto-csr", "evoc", "kmeans"):
            s, ari, _ = r[label]
            print(f"  {label:<9} {s:8.2f} s  ARI {ari:.3f}")
        a = r["auto"][0]
        print(f"  auto / evoc {a / r['evoc'][0]:.2f}x, auto / kmeans {a / r['kmeans'][0]:.2f}x, "
              f"dense and CSR: {'same spec and labels' if r['same'] else 'DIFFER'}")


if __name__ == "__main__":
    main()
