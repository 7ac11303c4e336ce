"""How much does the random anchor draw alone move ONGR-R? (reproduction-gap diagnostic)

For fixed settings (m, s, λ, positive part) runs ``ongr-r`` — the same anchors, graph
and solver as ``benchmarks.ongr_paper.search`` — on many random anchor draws (seeds
0…N−1) and reports the distribution of ACC / NMI: mean, quantiles and maximum.

Why: Section 4.3 runs every grid setting once on pre-selected random anchors and reports
the best setting. If the paper drew new anchors per setting (or per m, as our search
does), its best-of-grid number is the maximum over many draws, so the question for a
remaining gap is whether Table 4's value lies inside the spread of single draws at a
good setting (the upper tail), or beyond it.

Usage::

    python -m benchmarks.ongr_draws --data-dir ../shared/data --dataset pendigits \\
        --draws 100 --given 300 2 1 max --given 200 7 1 abs --given 1000 5 1 max
    # the same with another bandwidth reading (benchmarks.ongr_kernels)
    python -m benchmarks.ongr_draws --data-dir ../shared/data --dataset pendigits \\
        --draws 100 --kernel local --given 1200 5 1 abs --given 1200 5 1 max
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def run(data_dir, dataset, settings, draws=100, log=None):
    """One row per setting: ACC/NMI over ``draws`` anchor seeds (fractions).

    A setting may carry ``kernel`` (a kernel of ``benchmarks.ongr_kernels``; default
    ``global`` = ``ongr-anchor``'s, identical to ``benchmarks.ongr_paper.search``).
    """
    from benchmarks.ongr_kernels import grid
    from benchmarks.ongr_paper import PAPER, load

    X, y, _ = load(dataset, data_dir)
    rows = []
    for st in settings:
        t = time.perf_counter()
        acc, nmi = [], []
        for seed in range(draws):
            table = grid(X, y, kernels=(st.get("kernel", "global"),), ms=[st["m"]],
                         ss=[st["s"]], lam=st["lam"], pps=(st["positive_part"],), seed=seed)
            acc.append(table[0]["acc"])
            nmi.append(table[0]["nmi"])
        acc, nmi = np.array(acc), np.array(nmi)
        paper = PAPER.get(("ongr-r", dataset), (None, None))
        row = {"dataset": dataset, **st, "draws": draws,
               "acc_mean": acc.mean(), "acc_std": acc.std(), "acc_q50": np.median(acc),
               "acc_q90": np.quantile(acc, 0.9), "acc_max": acc.max(),
               "nmi_mean": nmi.mean(), "nmi_q90": np.quantile(nmi, 0.9), "nmi_max": nmi.max(),
               "acc_all": acc, "nmi_all": nmi,
               "frac_acc_within3": float(np.mean(100 * acc >= paper[0] - 3)) if paper[0] else None,
               "frac_both_within3": (float(np.mean((100 * acc >= paper[0] - 3)
                                                   & (100 * nmi >= paper[1] - 3)))
                                     if paper[0] else None),
               "paper_acc": paper[0], "paper_nmi": paper[1], "seconds": time.perf_counter() - t}
        rows.append(row)
        if log:
            log(f"{dataset} {st}: ACC mean {100 * row['acc_mean']:.2f} q90 {100 * row['acc_q90']:.2f} "
                f"max {100 * row['acc_max']:.2f}; NMI mean {100 * row['nmi_mean']:.2f} max "
                f"{100 * row['nmi_max']:.2f} ({row['seconds']:.0f}s)")
    return rows


def markdown(rows):
    out = ["| data | kernel | m, s, λ | (·)₊ | draws | ACC mean ± std | ACC median / q90 / max | "
           "NMI mean / q90 / max | draws with ACC and NMI within 3 of Table 4 | paper ACC / NMI |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['dataset']} | {r.get('kernel', 'global')} | "
                   f"{r['m']}, {r['s']}, {r['lam']:g} | {r['positive_part']} | "
                   f"{r['draws']} | {100 * r['acc_mean']:.2f} ± {100 * r['acc_std']:.2f} | "
                   f"{100 * r['acc_q50']:.2f} / {100 * r['acc_q90']:.2f} / {100 * r['acc_max']:.2f} | "
                   f"{100 * r['nmi_mean']:.2f} / {100 * r['nmi_q90']:.2f} / {100 * r['nmi_max']:.2f} | "
                   f"{100 * (r['frac_both_within3'] or 0):.0f} % | "
                   f"{r['paper_acc']} / {r['paper_nmi']} |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--dataset", default="pendigits", choices=["usps", "pendigits", "mnist"])
    ap.add_argument("--draws", type=int, default=100)
    ap.add_argument("--given", nargs=4, action="append", default=[],
                    metavar=("M", "S", "LAMBDA", "POSITIVE_PART"))
    ap.add_argument("--kernel", default="global",
                    help="kernel of benchmarks.ongr_kernels for every --given setting")
    args = ap.parse_args(argv)
    settings = [{"m": int(m), "s": int(s), "lam": float(lam), "positive_part": pp,
                 "kernel": args.kernel}
                for m, s, lam, pp in args.given] or [{"m": 1000, "s": 5, "lam": 1.0,
                                                       "positive_part": "max",
                                                       "kernel": args.kernel}]
    rows = run(args.data_dir, args.dataset, settings, draws=args.draws,
               log=lambda *a: print(*a, file=sys.stderr, flush=True))
    print(markdown(rows))


if __name__ == "__main__":
    main()
