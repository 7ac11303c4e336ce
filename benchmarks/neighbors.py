"""graphclust's NN-descent against pynndescent, side by side: time, recall, thread counts.

The ``fuzzy-knn`` graph's ``"approx"`` search
(:func:`graphclust_plugins.manifold.graph_fuzzy_knn.nn_descent`, public)
runs on all threads and gives the same lists for any thread count; pynndescent gives
different lists on one thread and on two, so graphclust used to run it on one. This
script times, in one process and after a warm-up of every kernel:

* graphclust's NN-descent on one thread and on all (``--trees`` values), and whether the
  two thread counts give the same bits;
* pynndescent's ``NNDescent`` (its defaults, seeded) on one thread and on all;

and scores each by its recall against brute force on ``--check`` random rows (the
fraction of a row's true ``k`` nearest others found) and by the labels its neighbours
share with their row.

Run ``python -m benchmarks.neighbors [--dataset mnist] [--k 15] [--trees 4 8 21]
[--repeats 3] [--check 2000] [--data-dir DIR]``. Prints one row per search and repeat,
then the median seconds of each and its ratio to pynndescent on one thread.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numba
import numpy as np


def _exact(X: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """The true ``k`` nearest other rows of ``rows`` (float64 brute force)."""
    X64 = X.astype(np.float64)
    sq = (X64 ** 2).sum(1)
    D = sq[rows, None] + sq[None, :] - 2.0 * X64[rows] @ X64.T
    D[np.arange(rows.size), rows] = np.inf
    return np.argsort(D, axis=1, kind="stable")[:, :k]


def _without_self(idx: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` nearest *other* rows from lists of ``k + 1`` that should open with the
    row itself: its own index removed (the farthest entry when it is missing)."""
    keep = idx != np.arange(idx.shape[0])[:, None]
    keep[keep.all(axis=1), -1] = False
    return np.asarray(idx[keep].reshape(idx.shape[0], -1)[:, :k], dtype=np.int64)


def _pynndescent(X, k, seed, threads):
    from pynndescent import NNDescent

    idx, _ = NNDescent(X, n_neighbors=k + 1, random_state=seed, n_jobs=threads,
                       low_memory=True).neighbor_graph
    return _without_self(idx, k)


def run(dataset: str, k: int, trees, repeats: int, check: int, seed: int = 0,
        data_dir=None) -> list[dict]:
    """One row per (search, repeat): seconds, recall on the checked rows, label agreement
    of the neighbours, and (graphclust) whether one thread gave the same lists as all."""
    from benchmarks.datasets import load
    from graphclust_plugins.manifold.graph_fuzzy_knn import nn_descent

    X, y = load(dataset, data_dir)
    X = np.ascontiguousarray(X / np.float32(np.abs(X).max() or 1.0), dtype=np.float32)
    rows = np.random.default_rng(seed).choice(X.shape[0], min(check, X.shape[0]),
                                              replace=False)
    exact = _exact(X, rows, k)
    threads = numba.config.NUMBA_NUM_THREADS
    warm = X[: min(3000, X.shape[0])]
    nn_descent(warm, k, seed)
    _pynndescent(warm, k, seed, 1)

    def score(idx):
        recall = np.mean([np.intersect1d(exact[i], idx[r]).size / k
                          for i, r in enumerate(rows)])
        return {"recall": float(recall), "labels": float((y[idx] == y[:, None]).mean())}

    searches = [(f"graphclust {t} trees", t, nt) for t in trees for nt in (1, threads)]
    searches += [("pynndescent", None, 1), ("pynndescent", None, threads)]
    out, first = [], {}
    before = numba.get_num_threads()
    try:
        for rep in range(repeats):
            for name, t, nt in searches:
                numba.set_num_threads(nt)
                t0 = time.perf_counter()
                if t is None:
                    idx = _pynndescent(X, k, seed, nt)
                else:
                    idx = nn_descent(X, k, seed, n_trees=t)[0]
                sec = time.perf_counter() - t0
                rec = {"search": name, "threads": nt, "repeat": rep, "seconds": sec,
                       **score(idx)}
                key = name
                if key in first:
                    rec["same_as_one_thread"] = bool(np.array_equal(first[key], idx))
                elif nt == 1:
                    first[key] = idx
                out.append(rec)
                print(" ".join(f"{a}={b:.4f}" if isinstance(b, float) else f"{a}={b}"
                               for a, b in rec.items()), flush=True)
    finally:
        numba.set_num_threads(before)
    return out


def summary(rows: list[dict]) -> None:
    """The median seconds of each search, as a ratio to pynndescent on one thread."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["search"], r["threads"]), []).append(r)
    base = statistics.median(r["seconds"] for r in groups[("pynndescent", 1)])
    print("| search | threads | median s | × pynndescent (1 thread) | recall | same bits "
          "as 1 thread |")
    print("|---|---|---|---|---|---|")
    for (name, nt), rs in groups.items():
        med = statistics.median(r["seconds"] for r in rs)
        same = {r.get("same_as_one_thread") for r in rs} - {None}
        print(f"| {name} | {nt} | {med:.2f} | {med / base:.2f} | "
              f"{statistics.median(r['recall'] for r in rs):.4f} | "
              f"{'—' if not same else ('yes' if same == {True} else 'no')} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="mnist")
    ap.add_argument("--k", type=int, default=15)
    ap.add_argument("--trees", type=int, nargs="+", default=[8])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--check", type=int, default=2000)
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    summary(run(args.dataset, args.k, args.trees, args.repeats, args.check,
                data_dir=args.data_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
