"""Ensemble benchmarks: U-SENC on MNIST-70k and a cross-bundle ensemble on four sets.

Run as ``python -m benchmarks.ensemble_bench [--part usenc|cross|all] [--seeds 0 1 2]``
with ``GRAPHCLUST_DATA`` pointing at the data folder. Results are appended to
``benchmarks/ensemble_results.md`` (``--output``) and printed.

(a) ``usenc``: the ``usenc`` preset on MNIST-70k (pixels / 255) for each seed, next to
    ``KMeans(10, n_init=1)`` fitted in the same process on the same data; targets ACC
    >= 77.6, NMI >= 72.0, and fit time <= 15x KMeans (ratio of the medians). The
    consensus alone is also re-run on the same memberships with ``n_components = k + 1``
    (a variant, reported beside the preset's result).
(b) ``cross``: one ensemble whose members are the presets ``anchor-spectral``,
    ``bkhk-dcd``, ``ongr-k`` and ``uspec`` (k = number of classes each) with the
    ``tcut`` consensus, on USPS, PenDigits, MNIST-test (pixels / 255) and Letter; every
    member's ACC / NMI is printed next to the consensus'; target: consensus >= the
    median member on each set. A second consensus column re-runs only the consensus on
    the same memberships with ``n_components = k + 1`` (one eigenvector beyond the
    trivial one's share; a variant, not the preset default).
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from graphclust import GraphClustering
from graphclust.data import find_data_dir, load_dataset

CROSS_MEMBERS = ("anchor-spectral", "bkhk-dcd", "ongr-k", "uspec")
CROSS_SETS = ("usps", "pendigits", "mnist_test", "letter")
TARGET_ACC, TARGET_NMI, TARGET_RATIO = 77.6, 72.0, 15.0


def _load(name: str, data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    X, y = load_dataset(name, data_dir)
    X = np.asarray(X)
    if name.startswith("mnist"):
        X = X.astype(np.float32) / np.float32(255.0)
    return X, np.asarray(y)


def _scores(labels: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    from sklearn.metrics import normalized_mutual_info_score

    from graphclust_plugins.common.metric_acc import clustering_accuracy

    return 100 * clustering_accuracy(labels, y), 100 * normalized_mutual_info_score(y, labels)


def run_usenc(data_dir: Path, seeds: list[int], n_jobs: int | None) -> list[str]:
    """Part (a); returns the Markdown lines of its report."""
    from sklearn.cluster import KMeans

    from graphclust import Context
    from graphclust_plugins.uspec.consensus_tcut import TcutConsensus

    X, y = _load("mnist", data_dir)
    k = int(np.unique(y).size)
    rows, t_km, t_us = [], [], []
    for seed in seeds:
        t0 = time.perf_counter()
        km = KMeans(k, n_init=1, random_state=seed).fit(X)
        t_km.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        model = GraphClustering("usenc", n_clusters=k, random_state=seed, n_jobs=n_jobs).fit(X)
        t_us.append(time.perf_counter() - t0)
        acc, nmi = _scores(model.labels_, y)
        kacc, knmi = _scores(km.labels_, y)
        ctx = Context(Context(seed).seed_for("ensemble.consensus"))
        vacc, vnmi = _scores(TcutConsensus(n_components=k + 1).combine(
            model.memberships_, k, ctx), y)
        rows.append((seed, acc, nmi, t_us[-1], kacc, knmi, t_km[-1], vacc, vnmi))
        print(f"seed {seed}: usenc ACC {acc:.2f} NMI {nmi:.2f} fit {t_us[-1]:.1f}s | "
              f"KMeans ACC {kacc:.2f} NMI {knmi:.2f} fit {t_km[-1]:.1f}s | "
              f"variant k+1 ACC {vacc:.2f} NMI {vnmi:.2f}", flush=True)
    accs, nmis = [r[1] for r in rows], [r[2] for r in rows]
    ratio = statistics.median(t_us) / statistics.median(t_km)
    lines = [f"### (a) usenc on MNIST-70k (pixels/255), seeds {seeds}, n_jobs={n_jobs}", "",
             "| seed | U-SENC ACC | U-SENC NMI | U-SENC fit s | KMeans ACC | KMeans NMI | "
             "KMeans fit s | variant k+1 ACC | variant k+1 NMI |",
             "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {s} | {a:.2f} | {n:.2f} | {t:.1f} | {ka:.2f} | {kn:.2f} | {kt:.1f} | "
              f"{va:.2f} | {vn:.2f} |" for s, a, n, t, ka, kn, kt, va, vn in rows]
    ok = (statistics.mean(accs) >= TARGET_ACC, statistics.mean(nmis) >= TARGET_NMI,
          ratio <= TARGET_RATIO)
    lines += ["",
              f"- mean ACC {statistics.mean(accs):.2f} (target >= {TARGET_ACC}): "
              f"{'met' if ok[0] else 'MISSED'}",
              f"- mean NMI {statistics.mean(nmis):.2f} (target >= {TARGET_NMI}): "
              f"{'met' if ok[1] else 'MISSED'}",
              f"- fit time ratio of medians U-SENC / KMeans(10, n_init=1) = {ratio:.1f}x "
              f"(target <= {TARGET_RATIO}x): {'met' if ok[2] else 'MISSED'}",
              f"- variant (consensus n_components = k + 1, same memberships): mean ACC "
              f"{statistics.mean(r[7] for r in rows):.2f}, mean NMI "
              f"{statistics.mean(r[8] for r in rows):.2f}", ""]
    return lines


def cross_spec(k: int) -> dict:
    """The cross-bundle ensemble of part (b)."""
    members = [{"preset": name, "metrics": []} for name in CROSS_MEMBERS]
    return {"n_clusters": k, "ensemble": {"members": members, "consensus": {"name": "tcut"}}}


def run_cross(data_dir: Path, seed: int, n_jobs: int | None,
              datasets: tuple[str, ...] = CROSS_SETS) -> list[str]:
    """Part (b); returns the Markdown lines of its report."""
    from graphclust import Context
    from graphclust_plugins.uspec.consensus_tcut import TcutConsensus

    header = ["set", *CROSS_MEMBERS, "median member", "consensus", "consensus >= median",
              "variant k+1", "variant >= median"]
    lines = [f"### (b) cross-bundle ensemble ({', '.join(CROSS_MEMBERS)}; tcut consensus), "
             f"seed {seed}, ACC / NMI in %", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in datasets:
        X, y = _load(name, data_dir)
        k = int(np.unique(y).size)
        t0 = time.perf_counter()
        model = GraphClustering(cross_spec(k), random_state=seed, n_jobs=n_jobs).fit(X)
        elapsed = time.perf_counter() - t0
        member = [_scores(r.labels, y) for r in model.members_]
        acc, nmi = _scores(model.labels_, y)
        med_acc = statistics.median(a for a, _ in member)
        med_nmi = statistics.median(n for _, n in member)
        ctx = Context(Context(seed).seed_for("ensemble.consensus"))
        variant = TcutConsensus(n_components=k + 1).combine(model.memberships_, k, ctx)
        v_acc, v_nmi = _scores(variant, y)

        def verdict(a, n):
            return ("yes" if a >= med_acc and n >= med_nmi
                    else f"ACC {'yes' if a >= med_acc else 'NO'}, "
                         f"NMI {'yes' if n >= med_nmi else 'NO'}")

        cells = [f"{a:.2f} / {n:.2f}" for a, n in member]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {med_acc:.2f} / {med_nmi:.2f} | "
                     f"{acc:.2f} / {nmi:.2f} | {verdict(acc, nmi)} | {v_acc:.2f} / {v_nmi:.2f} | "
                     f"{verdict(v_acc, v_nmi)} |")
        print(f"{name}: members " + ", ".join(f"{m} {c}" for m, c in zip(CROSS_MEMBERS, cells))
              + f"; consensus {acc:.2f} / {nmi:.2f} ({elapsed:.1f}s)", flush=True)
    return lines + [""]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ensemble_bench",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["usenc", "cross", "all"], default="all")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--datasets", nargs="+", default=list(CROSS_SETS))
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--output", default=str(Path(__file__).with_name("ensemble_results.md")))
    args = parser.parse_args(argv)
    data_dir = Path(args.data_dir) if args.data_dir else find_data_dir()
    if data_dir is None:
        print("data folder not found: set GRAPHCLUST_DATA", file=sys.stderr)
        return 2
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    lines = [f"## {stamp} — `python -m benchmarks.ensemble_bench {' '.join(argv or sys.argv[1:])}`",
             "", f"{platform.node()}, Python {platform.python_version()}; timings are wall "
             "clock on a shared machine, compare only the ratio within one run.", ""]
    if args.part in ("usenc", "all"):
        lines += run_usenc(data_dir, args.seeds, args.n_jobs)
    if args.part in ("cross", "all"):
        lines += run_cross(data_dir, args.seeds[0], args.n_jobs, tuple(args.datasets))
    with open(args.output, "a") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
