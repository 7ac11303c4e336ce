"""Chunked (Dask) against in-memory labels of the anchor presets, same seed, same run.

    python -m benchmarks.dask_equivalence --data-dir DIR [--dataset mnist] [--chunks 8]
        [--workers 2] [--presets ulge,anchor-spectral,uspec,bkhk-dcd,ongr-k] [--seed 0] [--full-sample]
        [--out FILE.json]

For each preset: one in-memory fit and one fit of the same array as an ``--chunks``-chunk
dask array on a ``distributed.LocalCluster(n_workers=--workers, threads_per_worker=1)``
started here. Reports ACC of both against the truth, the fraction of equal labels and the
ARI between the two labellings, and both wall times (one run each, indicative only; the
ratio is the comparable number). ``--full-sample`` raises the anchor- and rounding-sample
floors to ``n``, so the selector and the k-means rounding see every row as in memory: the
remaining difference is then only the order of the block sums.

Pixels are scaled to ``[0, 1]`` (``/255``), as the issue asks.
"""

from __future__ import annotations

import argparse
import json
import time


def main(argv=None) -> int:
    import dask.array as da
    import graphclust as gc
    import graphclust._dask._run as run
    import numpy as np
    from distributed import Client, LocalCluster
    from sklearn.metrics import adjusted_rand_score

    from benchmarks.datasets import load
    from benchmarks.runner import score_all

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--dataset", default="mnist")
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--presets", default="ulge,anchor-spectral,uspec,bkhk-dcd,ongr-k")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--full-sample", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    X, y = load(args.dataset, args.data_dir)
    if args.dataset.startswith("mnist"):
        X = X / np.float32(255.0)
    n = X.shape[0]
    k = int(np.unique(y).size)
    if args.full_sample:
        run.ANCHOR_SAMPLE_MIN = n
        run.ROUNDING_SAMPLE_MIN = n
    rows = -(-n // args.chunks)
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           dashboard_address=":0")
    client = Client(cluster)
    out = []
    try:
        Xd = da.from_array(X, chunks=(rows, X.shape[1])).persist()
        for name in args.presets.split(","):
            t0 = time.perf_counter()
            mem = gc.GraphClustering(name, n_clusters=k, random_state=args.seed).fit(X)
            t_mem = time.perf_counter() - t0
            t0 = time.perf_counter()
            chunked = gc.GraphClustering(name, n_clusters=k, random_state=args.seed).fit(Xd)
            labels = chunked.labels_.compute()
            t_chunk = time.perf_counter() - t0
            row = {"preset": name, "dataset": args.dataset, "n": n, "chunks": args.chunks,
                   "workers": args.workers, "full_sample": bool(args.full_sample),
                   "anchor_sample": int(chunked.anchors_.info.get("sample_size", n)),
                   "acc_memory": score_all(mem.labels_, y)["acc"],
                   "acc_chunked": score_all(labels, y)["acc"],
                   "equal_labels": float(np.mean(labels == mem.labels_)),
                   "ari_between": float(adjusted_rand_score(mem.labels_, labels)),
                   "seconds_memory": round(t_mem, 2), "seconds_chunked": round(t_chunk, 2),
                   "memory_stages": {s: round(v, 2) for s, v in mem.timings_.items()},
                   "chunked_stages": {s: round(v, 2) for s, v in chunked.timings_.items()}}
            out.append(row)
            print(json.dumps(row), flush=True)
    finally:
        client.close()
        cluster.close()
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(out, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
