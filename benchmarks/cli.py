"""``python -m benchmarks run|report|today|list``.

Examples::

    python -m benchmarks run --quick --data-dir ../shared/data --out /tmp/bq   # CI smoke
    python -m benchmarks run --data-dir ../shared/data --out benchmarks/out    # every suite
    python -m benchmarks run --suite ncer,dcd --datasets usps,pendigits --seeds 1 \\
        --data-dir ../shared/data --out benchmarks/out
    python -m benchmarks report --out benchmarks/out   # benchmarks/out/RESULTS.md (the full
                                                       # report), reproduction tables and
                                                       # today-<suite>.json summary records
    python -m benchmarks today    # benchmarks/RESULTS.md from benchmarks/records/*.json
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from benchmarks import datasets, generated_sets, report, runner
from benchmarks.suite import Cell, Suite, cells, get_suite, load_suites, method_datasets

__all__ = ["main", "plan"]

#: The suite ``run --quick`` runs when no ``--suite`` is given (CI).
QUICK_DEFAULT = "smoke"


def _split(text: str | None) -> list[str] | None:
    return None if text is None else [t.strip() for t in text.split(",") if t.strip()]


def plan(suite: Suite, args: argparse.Namespace) -> list[Cell]:
    """The cells of ``suite`` after the restrictions of ``run``'s arguments; ``--where`` keeps
    the cells whose parameters have these values (one setting of a grid); ``--grid`` adds or
    replaces grid parameters of the (selected) presets and specs."""
    methods = _split(args.methods)
    if args.grid:
        grid = json.loads(args.grid)
        suite = replace(suite, methods=tuple(
            replace(m, grid={**m.grid, **grid}) if m.kind != "peer"
            and (not methods or m.name in methods) else m for m in suite.methods))
    if args.quick:
        suite = suite.quick()
    if args.time_cap or args.mem_cap:
        suite = replace(suite, time_cap=args.time_cap or suite.time_cap,
                        mem_cap_mb=args.mem_cap or suite.mem_cap_mb)
    out = cells(suite, args.seeds)
    if names := _split(args.datasets):
        names = [i for name in names for i in generated_sets.expand(name)]
        wanted = {datasets.quick_name(d) if args.quick else d for d in names}
        out = [c for c in out if c.dataset in wanted]
    if methods:
        out = [c for c in out if c.method in methods]
    for key, value in _where(args.where).items():
        out = [c for c in out if c.params.get(key) == value]
    return out


def _where(text: str | None) -> dict:
    """``"solver__lam=1e-6,solver__positive_part=abs"`` → values parsed as JSON if they can be."""
    out = {}
    for item in _split(text) or []:
        key, _, raw = item.partition("=")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def _scaling_skip(cell: Cell, records: list[dict]) -> str | None:
    """Skip a size once a smaller size of the same method and family failed."""
    fam, n = datasets.family(cell.dataset), datasets.size_of(cell.dataset)
    for r in records:
        rn = datasets.size_of(r["dataset"])
        if (r["method"] == cell.method and datasets.family(r["dataset"]) == fam
                and r["status"] != "ok" and rn and n and rn < n):
            return f"skipped: {r['status']} at n = {rn}"
    return None


def run_one(suite: Suite, args: argparse.Namespace) -> int:
    """Run one suite and write ``results-<suite>[-<tag>].json`` (+ ``.jsonl`` stream)."""
    todo = plan(suite, args)
    if not todo:
        print(f"{suite.name}: nothing to run after the restrictions", file=sys.stderr)
        return 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"results-{suite.name}" + (f"-{args.tag}" if args.tag else "")
    print(f"benchmarks: suite {suite.name}, {len(todo)} cells → {out / stem}.json",
          file=sys.stderr)
    meta = {"suite": suite.name, "command": args.command, "quick": args.quick,
            "started": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
            "seeds": max(c.seed for c in todo) + 1, "time_cap": max(c.time_cap for c in todo),
            "machine": report.machine_info()}
    t0 = time.perf_counter()
    with open(out / f"{stem}.jsonl", "w") as stream:
        def on_record(rec: dict) -> None:
            stream.write(json.dumps(rec, default=str) + "\n")
            stream.flush()

        try:
            records = runner.execute(todo, data_dir=args.data_dir,
                                     isolate=args.isolate or suite.isolate,
                                     skip=_scaling_skip if suite.scaling else None,
                                     threads=args.threads or None, on_record=on_record)
            meta["interrupted"] = False
        except runner.Interrupted as exc:
            records, meta["interrupted"] = exc.records, True
    meta["duration_s"] = time.perf_counter() - t0
    (out / f"{stem}.json").write_text(json.dumps({"meta": meta, "records": records},
                                                 indent=1, default=str))
    errors = [r for r in records if r["status"] == "error"]
    for r in errors:
        print(f"ERROR {r['method']} on {r['dataset']} seed {r['seed']}: {r.get('error')}\n"
              f"{r.get('traceback', '')}", file=sys.stderr)
    print(f"benchmarks: {suite.name}: {len(records)} cells in {meta['duration_s']:.0f} s, "
          f"{sum(r['status'] == 'ok' for r in records)} ok, {len(errors)} errors",
          file=sys.stderr)
    return 1 if errors or meta["interrupted"] else 0


def _run(args: argparse.Namespace) -> int:
    if args.data_dir:  # suites may look at the data folder when they are defined
        os.environ["GRAPHCLUST_DATA"] = str(args.data_dir)
    if args.suite:
        names = _split(args.suite) or []
    elif args.quick:
        names = [QUICK_DEFAULT]
    else:
        names = [s.name for s in load_suites().values() if s.targets]
    suites = [get_suite(n) for n in names]
    signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    return max([run_one(suite, args) for suite in suites], default=0)


def _report(args: argparse.Namespace) -> int:
    results = args.results or Path(args.out) / "RESULTS.md"
    md, rst = report.write_report(args.out, results, args.command, args.note)
    print(f"wrote {md} and {rst}", file=sys.stderr)
    return 0


def _list(args: argparse.Namespace) -> int:
    for s in load_suites().values():
        n = len(cells(s))
        print(f"{s.name:<10} {n:>6} cells  {s.title}")
        for m in s.methods:
            what = f"{m.kind} {m.target}"
            grid = f", grid {dict(m.grid)}" if m.grid else ""
            ds = ", ".join(method_datasets(s, m))
            print(f"    {m.name:<18} {what}{grid}; prep {m.prep}; {ds}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m benchmarks``; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run suites (default: every suite with targets)")
    r.add_argument("--suite", help="comma-separated suite names (see `list`)")
    r.add_argument("--quick", action="store_true",
                   help=f"tiny subsets, one seed (default suite: {QUICK_DEFAULT})")
    r.add_argument("--data-dir", default=None, help="data folder (default: GRAPHCLUST_DATA)")
    r.add_argument("--out", required=True, help="folder for results-*.json")
    r.add_argument("--datasets", help="only these data sets (comma-separated; "
                   "generated:check, generated:tune:blobs, ...: a half of the generated battery)")
    r.add_argument("--methods", help="only these methods (comma-separated)")
    r.add_argument("--where", help="only grid cells with these parameter values "
                                   "(e.g. solver__lam=1e-6,graph__n_neighbors=3)")
    r.add_argument("--grid", help='grid parameters to add or replace, JSON: '
                                  '\'{"solver__lam": [1e-6, 1e-3, 1]}\'')
    r.add_argument("--seeds", type=int, help="number of seeds (default: the suite's)")
    r.add_argument("--time-cap", type=float, help="seconds per cell (default: the suite's)")
    r.add_argument("--mem-cap", type=float, help="MB per worker (default: the suite's)")
    r.add_argument("--threads", type=int, default=1, help="BLAS threads per worker (0: all)")
    r.add_argument("--isolate", choices=("dataset", "job", "method", "none"))
    r.add_argument("--tag", default="", help="suffix of the result file name")
    p = sub.add_parser("report", help="write the full report, reproduction-tables.rst and "
                       "the suites' summary records (today-<suite>.json)")
    p.add_argument("--out", required=True, help="folder with results-*.json")
    p.add_argument("--results", default=None,
                   help="the full report's path (default: RESULTS.md in --out; "
                   "benchmarks/RESULTS.md is generated by `today`)")
    p.add_argument("--note", default="", help="a paragraph placed under the introduction")
    sub.add_parser("list", help="suites, their methods and data sets")
    sub.add_parser("today", help="benchmarks/RESULTS.md from the summary records of "
                   "benchmarks/records (python -m benchmarks today --help)", add_help=False)
    sub.add_parser("nok", help="every preset able to estimate k, run without k "
                   "(python -m benchmarks nok --help)", add_help=False)
    sub.add_parser("compare", help="a method against its baseline and the peers, with and "
                   "without k (python -m benchmarks compare --help)", add_help=False)
    if argv and argv[0] == "compare":
        from benchmarks.compare import main as compare_main

        return compare_main(argv[1:])
    if argv and argv[0] == "today":
        from benchmarks.today import main as today_main

        return today_main(argv[1:])
    sub.add_parser("generated", help="the generated battery's k summary per half and family "
                   "(python -m benchmarks generated --help)", add_help=False)
    if argv and argv[0] == "generated":
        from benchmarks.generated_summary import main as generated_main

        return generated_main(argv[1:])
    sub.add_parser("lfr", help="LFR graphs: graph auto against Leiden and scikit-learn "
                   "(python -m benchmarks lfr --help)", add_help=False)
    if argv and argv[0] == "lfr":
        from benchmarks.lfr import main as lfr_main

        return lfr_main(argv[1:])
    sub.add_parser("graph_scale", help="a million-node planted partition: graph auto "
                   "against leidenalg (python -m benchmarks graph_scale --help)",
                   add_help=False)
    if argv and argv[0] == "graph_scale":
        from benchmarks.graph_scale import main as graph_scale_main

        return graph_scale_main(argv[1:])
    if argv and argv[0] == "nok":
        from benchmarks.nok import main as nok_main

        return nok_main(argv[1:])
    args = ap.parse_args(argv)
    args.command = "python -m benchmarks " + " ".join(shlex.quote(a) for a in argv)
    return {"run": _run, "report": _report, "list": _list}[args.cmd](args)
