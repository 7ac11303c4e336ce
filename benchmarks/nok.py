"""The no-k mode of the harness: every preset that can estimate ``k`` run without it.

``python -m benchmarks nok --out DIR [--quick] [--datasets ...] [--methods ...]`` fits
``GraphClustering(preset, random_state=seed)`` with no ``n_clusters`` on the ``general``
battery's data sets and the low-dimensional shapes of ``datasets.SHAPES`` (raw
features, as the battery), records the estimated
``n_clusters_``, the true ``k``, the estimator's method and the scores, and writes
``nok-results.json`` and ``nok-table.md`` (the table of ``benchmarks/HISTORY.md``'s
"without k" section) into ``DIR``. Summary per method: the share of data sets with the
exact ``k``, within ±1, and the mean ARI. ``--quick`` uses the battery's quick stand-ins
(the first 600 rows of the big sets; the generated families and shapes at n = 1 000).

``--methods`` may also name the no-k peers of :mod:`benchmarks.nok_peers` (``sk-hdbscan``,
``evoc``, ``umap-hdbscan``: HDBSCAN, EVoC and UMAP+HDBSCAN at documented defaults).

Fits run one after another in this process, each with a wall-clock cap (``--time-cap``,
SIGALRM; a fit past it is recorded ``over cap``). ``--dask-chunks C`` fits every cell
twice, in memory and on a dask array of ``C`` row chunks on a 2-worker ``LocalCluster``,
recording the estimate's scores and a hash of the labels of each (the no-k estimate
on Dask must equal the in-memory one); ``--scale 255`` divides ``X`` (pixels to [0, 1]). The numbers are labels-free: ``k``
is never read from ``y``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from benchmarks import datasets
from benchmarks.nok_peers import NOK_PEERS, run_capped, run_peer_cell
from benchmarks.runner import score_all

#: The battery's data sets without k (letter has 26 classes, above the default k_max).
NOK_SETS = ("iris", "wine", "breast_cancer", "digits", "usps", "pendigits", "mnist_test",
            "coil20", *(f"{g}@1000" for g in datasets.GENERATED),
            *(f"{g}@1000" for g in datasets.SHAPES))


def able_presets() -> list[str]:
    """Registered presets (and rule presets) that can estimate ``k``: rule presets always
    (their spec is decided by the data), any other preset when its composed pipeline or
    ensemble has a part able to (:meth:`graphclust.Pipeline.estimating_stage`)."""
    import graphclust

    reg = graphclust.get_registry()
    out = []
    for name in reg.preset_names():
        if name in reg.rules:
            out.append(name)
            continue
        try:
            pipe = graphclust.compose(name)
        except Exception:  # noqa: BLE001 - a preset that cannot compose is not listed
            continue
        if pipe.estimating_stage() is not None:
            out.append(name)
    return out


def run_cell(method: str, name: str, seed: int, data_dir, cap: float,
             dask_chunks: int = 0, scale: float = 1.0) -> dict:
    import graphclust

    X, y = datasets.load(name, data_dir)
    if scale != 1.0:
        X = X / scale
    k_true = int(np.unique(y).size)
    if dask_chunks:  # a row-chunked dask array on the active scheduler (--dask-chunks)
        import dask.array as da

        X = da.from_array(np.asarray(X), chunks=(-(-X.shape[0] // dask_chunks), X.shape[1]))
    est = graphclust.GraphClustering(method, random_state=seed)
    _, failed, caught, seconds = run_capped(lambda: est.fit(X), cap)
    if failed is not None:
        return {"method": method, "dataset": name, "seed": seed, "k_true": k_true, **failed}
    sel = est.k_selection_
    labels = est.labels_
    if dask_chunks:
        labels = labels.compute()
        method = f"{method} (dask, {dask_chunks} chunks)"
    return {"method": method, "dataset": name, "seed": seed, "status": "ok",
            "k_scores": [round(float(v), 6) for v in sel.scores], "k_rule": sel.rule,
            "labels_sha1": __import__("hashlib").sha1(
                np.asarray(labels, dtype=np.int64).tobytes()).hexdigest(),
            "n": int(X.shape[0]), "k_true": k_true, "k_found": int(est.n_clusters_),
            "k_method": sel.method, "k_part": sel.part, "time_fit": seconds,
            **score_all(np.asarray(labels), y),
            "warnings": sorted({w.category.__name__ for w in caught})}


def table(records: list[dict]) -> str:
    """The markdown summary: one row per method."""
    by: dict[str, list[dict]] = {}
    for r in records:
        by.setdefault(r["method"], []).append(r)
    lines = ["| method | sets | exact k | within ±1 | mean ARI | k found / true (per set) |",
             "|---|---|---|---|---|---|"]
    for method, recs in sorted(by.items()):
        ok = [r for r in recs if r["status"] == "ok"]
        exact = sum(r["k_found"] == r["k_true"] for r in ok)
        near = sum(abs(r["k_found"] - r["k_true"]) <= 1 for r in ok)
        ari = np.mean([r["ari"] for r in ok]) if ok else float("nan")
        cells = ", ".join(f"{r['dataset']} {r['k_found']}/{r['k_true']}" if r["status"] == "ok"
                          else f"{r['dataset']} {r['status']}" for r in recs)
        lines.append(f"| {method} | {len(recs)} | {exact}/{len(recs)} "
                     f"({100 * exact / max(1, len(recs)):.0f} %) | {near}/{len(recs)} "
                     f"({100 * near / max(1, len(recs)):.0f} %) | {ari:.3f} | {cells} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks nok", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--datasets")
    ap.add_argument("--methods")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-cap", type=float, default=300.0)
    ap.add_argument("--scale", type=float, default=1.0,
                    help="divide X by this (255: pixels to [0, 1], as the MNIST targets)")
    ap.add_argument("--dask-chunks", type=int, default=0,
                    help="also fit each cell on a dask array of this many row chunks on a "
                    "2-worker LocalCluster (1 thread each) and record both")
    args = ap.parse_args(argv)
    sets = args.datasets.split(",") if args.datasets else list(NOK_SETS)
    if args.quick:
        sets = [s if "@" in s or s in ("iris", "wine", "breast_cancer", "digits")
                else datasets.quick_name(s) for s in sets]
    methods = args.methods.split(",") if args.methods else able_presets()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    records = []
    client = None
    if args.dask_chunks:
        from distributed import Client, LocalCluster

        client = Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                     dashboard_address=":0"))
    try:
        for name in sets:
            for method in methods:
                peer = method in NOK_PEERS  # peers (nok_peers.py): in memory only
                for chunks in ((0, args.dask_chunks) if args.dask_chunks and not peer
                               else (0,)):
                    rec = (run_peer_cell(method, name, args.seed, args.data_dir,
                                         args.time_cap) if peer else
                           run_cell(method, name, args.seed, args.data_dir, args.time_cap,
                                    chunks, args.scale))
                    records.append(rec)
                    print(json.dumps({k: v for k, v in rec.items() if k != "warnings"}),
                          flush=True)
                    (out / "nok-results.json").write_text(json.dumps(records, indent=1))
    finally:
        if client is not None:
            client.close()
    (out / "nok-table.md").write_text(table(records))
    print(table(records))
    return 0
