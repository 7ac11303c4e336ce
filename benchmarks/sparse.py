"""Sparse tf-idf input beside scikit-learn's KMeans (issue 29 item 3).

The generated corpus of :func:`benchmarks.datasets.tfidf_topics` (5 000 documents ×
50 000 terms, about 250 000 nonzeros, 10 topics; 3 MB as CSR, 2 GB dense) is clustered
by ``auto``, ``uspec`` and ``KMeans(n_clusters=10)`` on the same CSR matrix. Each method
runs ``--repeats`` times, each in a fresh process (spawned, so no run inherits another's
memory or warm caches beyond the operating system's), and records:

* the wall time of ``fit``;
* the peak of the Python-level allocations during ``fit`` (``tracemalloc``; NumPy,
  SciPy and scikit-learn arrays are traced), i.e. what the fit itself allocated;
* the peak resident size of the process during ``fit`` minus the resident size just
  before it (``/proc`` sampled every 20 ms), which also sees native buffers;
* whether any :class:`graphclust.DensifyWarning` was emitted (a silent densification
  would show as memory in the GB);
* NMI and ARI against the generated topics.

The table gives medians and the ratios to KMeans from the same run. Usage::

    python -m benchmarks.sparse [--repeats 3] [--docs 5000] [--terms 50000] [--topics 10]
                                [--methods auto,uspec,sk-kmeans]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import time
import tracemalloc
import warnings

METHODS = ("auto", "uspec", "sk-kmeans")


def _fit_one(method: str, docs: int, terms: int, topics: int, seed: int, queue) -> None:
    import numpy as np
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    from benchmarks.datasets import tfidf_topics
    from benchmarks.runner import Sampler, rss_mb

    X, y = tfidf_topics(docs, terms, topics)
    if method == "sk-kmeans":
        from sklearn.cluster import KMeans

        model = KMeans(n_clusters=topics, random_state=seed)
    else:
        from graphclust import GraphClustering

        model = GraphClustering(method, n_clusters=topics, random_state=seed)
    samples: list[float] = []
    base = rss_mb() or 0.0
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        tracemalloc.start()
        t0 = time.perf_counter()
        with Sampler(lambda: samples.append(rss_mb() or 0.0)):
            model.fit(X)
        seconds = time.perf_counter() - t0
        _, traced_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    densified = [str(w.message) for w in rec if type(w.message).__name__ == "DensifyWarning"]
    labels = np.asarray(model.labels_)
    queue.put({"method": method, "seed": seed, "seconds": seconds,
               "traced_peak_mb": traced_peak / 2**20,
               "rss_peak_mb": max(samples + [base]) - base,
               "nmi": float(normalized_mutual_info_score(y, labels)),
               "ari": float(adjusted_rand_score(y, labels)),
               "densified": densified, "nnz": int(X.nnz), "shape": list(X.shape),
               "spec": getattr(model, "resolved_spec_", {}).get("summary", "")})


def run(repeats: int, docs: int, terms: int, topics: int,
        methods: tuple[str, ...] = METHODS) -> list[dict]:
    ctx = mp.get_context("spawn")
    out = []
    for seed in range(repeats):
        for method in methods:  # interleaved, so machine load hits every method alike
            queue = ctx.Queue()
            proc = ctx.Process(target=_fit_one, args=(method, docs, terms, topics, seed, queue))
            proc.start()
            rec = queue.get()
            proc.join()
            out.append(rec)
            print(f"{rec['method']:>10} seed {seed}: {rec['seconds']:6.1f} s, traced peak "
                  f"{rec['traced_peak_mb']:7.1f} MB, RSS peak +{rec['rss_peak_mb']:7.1f} MB, "
                  f"NMI {rec['nmi']:.3f}, ARI {rec['ari']:.3f}"
                  + (f", DENSIFIED: {rec['densified']}" if rec["densified"] else ""),
                  flush=True)
    return out


def table(records: list[dict]) -> str:
    med = {}
    present = [m for m in METHODS if any(r["method"] == m for r in records)]
    for m in present:
        rows = [r for r in records if r["method"] == m]
        med[m] = {k: statistics.median(r[k] for r in rows)
                  for k in ("seconds", "traced_peak_mb", "rss_peak_mb", "nmi", "ari")}
        med[m]["densified"] = any(r["densified"] for r in rows)
    ref = med.get("sk-kmeans") or med[present[0]]
    lines = ["| method | time (s) | × KMeans | traced peak (MB) | × KMeans | RSS peak (MB) "
             "| × KMeans | NMI | ARI | densified |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for m in present:
        r = med[m]
        lines.append(
            f"| {m} | {r['seconds']:.1f} | {r['seconds'] / ref['seconds']:.1f} | "
            f"{r['traced_peak_mb']:.0f} | {r['traced_peak_mb'] / ref['traced_peak_mb']:.1f} | "
            f"{r['rss_peak_mb']:.0f} | {r['rss_peak_mb'] / max(ref['rss_peak_mb'], 1):.1f} | "
            f"{r['nmi']:.3f} | {r['ari']:.3f} | {'yes' if r['densified'] else 'no'} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.sparse", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--terms", type=int, default=50_000)
    ap.add_argument("--topics", type=int, default=10)
    ap.add_argument("--methods", default=",".join(METHODS),
                    help=f"comma-separated subset of {', '.join(METHODS)}")
    args = ap.parse_args(argv)
    methods = tuple(m for m in args.methods.split(",") if m)
    unknown = set(methods) - set(METHODS)
    if unknown:
        ap.error(f"unknown methods {sorted(unknown)}; known: {', '.join(METHODS)}")
    records = run(args.repeats, args.docs, args.terms, args.topics, methods)
    first = records[0]
    print(f"\n{first['shape'][0]} x {first['shape'][1]} tf-idf, {first['nnz']} nonzeros, "
          f"{args.topics} topics; medians of {args.repeats} runs per method\n")
    print(table(records))
    for r in records:
        if r["spec"] and r["seed"] == 0:
            print(f"\n{r['method']}: {r['spec']}")


if __name__ == "__main__":
    main()
