"""Command line of the benchmark harness: ``python -m benchmarks run|report|list``.

Examples::

    python -m benchmarks run --quick --data-dir ../shared/data --out /tmp/bq
    python -m benchmarks run --suite paper --data-dir ../shared/data --out benchmarks/out \\
        --presets ongr-k,ulge --seeds 5 --time-cap 600
    python -m benchmarks run --suite search --preset ongr-k --dataset usps \\
        --grid '{"anchors__n_anchors": [400, 800], "solver__lam": [0.01, 1]}' --out benchmarks/out
    python -m benchmarks run --suite scaling --data-dir ../shared/data --out benchmarks/out
    python -m benchmarks report --out benchmarks/out      # rewrites benchmarks/RESULTS.md
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from benchmarks import plots, runner, runner_report, scaling, suites

__all__ = ["main", "build_jobs", "run_suite"]

SUITES = ("paper", "peers", "scaling", "quick", "search")
DEFAULTS = {  # seeds, time cap (s), spectral cap (s), isolate, threads per worker
    "paper": (5, 600.0, 300.0, "dataset", 1),
    "peers": (3, 600.0, 300.0, "dataset", 1),
    "scaling": (1, 900.0, 300.0, "job", 1),
    "quick": (1, 60.0, 60.0, "none", 1),
    "search": (1, 600.0, 300.0, "dataset", 1),
}


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    return [t.strip() for t in text.split(",") if t.strip()]


def registered_presets() -> list[str]:
    import graphclust

    return list(graphclust.get_registry().presets.names())


def anchor_presets() -> list[str]:
    """Presets whose spec has an anchor stage (the anchor-based, scalable pipelines)."""
    import graphclust

    reg = graphclust.get_registry()
    return [p for p in reg.presets.names() if reg.presets.get(p).get("anchors")]


def _select(names: list[str], wanted: list[str] | None, what: str) -> list[str]:
    if wanted is None:
        return names
    unknown = [w for w in wanted if w not in names]
    if unknown:
        print(f"note: {what} not registered, skipped: {', '.join(unknown)} "
              f"(registered: {', '.join(names) or 'none'})", file=sys.stderr)
    return [w for w in wanted if w in names]


def build_jobs(suite: str, *, presets=None, datasets=None, seeds: int, time_cap: float,
               spectral_cap: float, peers=None, preset=None, dataset=None, grid=None,
               sizes=None, data_available: bool = True) -> list[runner.Job]:
    """The jobs of a suite (see the module docstring of :mod:`benchmarks.suites`)."""
    jobs: list[runner.Job] = []
    peer_list = list(suites.PEERS) if peers is None else peers

    def peer_jobs(ds_list):
        for ds in ds_list:
            for p in peer_list:
                cap = min(time_cap, spectral_cap) if p == "sk-spectral" else time_cap
                for s in range(seeds):
                    jobs.append(runner.Job(p, ds, s, kind="peer", time_cap=cap))

    if suite == "search":
        grid = grid if grid is not None else suites.paper_grid(preset)
        if not preset or not dataset or not grid:
            raise SystemExit("--suite search needs --preset, --dataset and --grid (or a preset "
                             f"with a paper grid: {', '.join(suites.PAPER_GRIDS)})")
        from sklearn.model_selection import ParameterGrid

        settings = [{}] + list(ParameterGrid(grid))
        for params in settings:
            label = "default" if not params else json.dumps(params, sort_keys=True)
            for s in range(seeds):
                jobs.append(runner.Job(preset, dataset, s, params=dict(params),
                                       time_cap=time_cap, setting=label))
        return jobs

    if suite == "scaling":
        chosen = _select(anchor_presets(), presets, "presets")
        if datasets is None:
            datasets = [f"{fam}@{n}" for fam, ns in suites.SCALING_SIZES.items()
                        for n in (sizes or ns)]
        for ds in datasets:
            for p in chosen:
                jobs += [runner.Job(p, ds, s, time_cap=time_cap) for s in range(seeds)]
            if peers is None:
                peer_list = ["sk-minibatch"]
            peer_jobs([ds])
        return jobs

    if suite == "quick":
        chosen = _select(registered_presets(), presets, "presets")
        ds_list = datasets or (suites.QUICK_DATASETS if data_available
                               else ["digits@600", "blobs@600"])
        for p in chosen:
            params = _quick_params(p)
            for ds in ds_list:
                jobs += [runner.Job(p, ds, s, time_cap=time_cap, params=params)
                         for s in range(seeds)]
        peer_jobs(ds_list)
        return jobs

    if suite == "peers":
        chosen = _select(anchor_presets(), presets, "presets")
        ds_list = datasets or suites.PEER_DATASETS
        for ds in ds_list:
            for p in chosen:
                jobs += [runner.Job(p, ds, s, time_cap=time_cap) for s in range(seeds)]
        peer_jobs(ds_list)
        return jobs

    # paper
    chosen = _select(registered_presets(), presets, "presets")
    used: list[str] = []
    for p in chosen:
        ds_list = datasets or suites.PAPER_DATASETS.get(p, suites.DEFAULT_DATASETS)
        for ds in ds_list:
            if ds not in used:
                used.append(ds)
            jobs += [runner.Job(p, ds, s, time_cap=time_cap) for s in range(seeds)]
    peer_jobs(used)
    # one data set at a time keeps the memory of the parent's view small and the log readable
    order = {ds: i for i, ds in enumerate(used)}
    jobs.sort(key=lambda j: (order[j.dataset], j.kind == "peer"))
    return jobs


def _quick_params(preset: str) -> dict:
    """Smaller anchor counts for the quick suite (a smoke test on ~600 points): when the
    preset's anchor section has an ``n_anchors``, it becomes 64."""
    import graphclust

    anchors = graphclust.get_registry().presets.get(preset).get("anchors")
    if isinstance(anchors, dict) and "n_anchors" in anchors:
        return {"anchors__n_anchors": suites.QUICK_ANCHORS}
    return {}


def _scaling_skip(job: runner.Job, records: list[dict]) -> str | None:
    """Skip a size once a smaller size of the same method and family failed."""
    fam, _, n = job.dataset.partition("@")
    for r in records:
        rf, _, rn = r["dataset"].partition("@")
        if (r["method"] == job.method and rf == fam and r["status"] != "ok" and rn and n
                and float(rn) < float(n)):
            return f"skipped: {r['status']} at n = {rn}"
    return None


def _write_csv(path: Path, rows: list[dict]) -> None:
    keys: list[str] = []
    for r in rows:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: json.dumps(v) if isinstance(v, (dict, list)) else v
                        for k, v in r.items()})


def run_suite(args) -> int:
    suite = "quick" if args.quick else args.suite
    seeds0, cap0, sc0, iso0, threads0 = DEFAULTS[suite]
    threads = args.threads if args.threads is not None else threads0
    threads = threads or None
    seeds = args.seeds or seeds0
    time_cap = args.time_cap or cap0
    spectral_cap = args.spectral_cap or min(sc0, time_cap)
    isolate = args.isolate or iso0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from graphclust.data import find_data_dir

    data_available = find_data_dir(args.data_dir) is not None
    if not data_available:
        print("note: no data folder found (--data-dir / GRAPHCLUST_DATA); only scikit-learn's "
              "bundled and synthetic sets can run", file=sys.stderr)
    grid = json.loads(args.grid) if args.grid else None
    jobs = build_jobs(suite, presets=_split(args.presets), datasets=_split(args.datasets),
                      seeds=seeds, time_cap=time_cap, spectral_cap=spectral_cap,
                      peers=[] if args.no_peers else _split(args.peers), preset=args.preset,
                      dataset=args.dataset, grid=grid,
                      sizes=[int(float(s)) for s in _split(args.sizes)] if args.sizes else None,
                      data_available=data_available)
    if isolate == "method" and suite in ("paper", "peers"):
        jobs.sort(key=lambda j: suites.priority(j.method))  # stable: data sets keep order
    if args.skip_datasets:
        drop = set(_split(args.skip_datasets))
        jobs = [j for j in jobs if j.dataset not in drop]
    if not jobs:
        print("nothing to run (no preset matched)", file=sys.stderr)
        return 1
    command = "python -m benchmarks " + " ".join(shlex.quote(a) for a in args.argv)
    print(f"benchmarks: {suite} suite, {len(jobs)} jobs, time cap {time_cap:g} s, "
          f"isolation per {isolate} → {out}", file=sys.stderr)
    started = datetime.now(timezone.utc)
    machine = runner_report.machine_info()  # at the start: the load and commit the run saw
    t0 = time.perf_counter()
    tag = args.tag or (f"{args.preset}-{args.dataset}" if suite == "search" else "")
    stem = f"results-{suite}" + (f"-{tag}" if tag else "")
    stream = open(out / f"{stem}.jsonl", "w")  # one line per finished job, as they finish

    def on_record(rec):
        stream.write(json.dumps(rec, default=str) + "\n")
        stream.flush()

    import signal

    signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
    interrupted = False
    try:
        records = runner.execute(jobs, data_dir=args.data_dir, isolate=isolate,
                                 skip=_scaling_skip if suite == "scaling" else None,
                                 threads=threads, on_record=on_record)
    except runner.Interrupted as exc:
        records = exc.records
        interrupted = True
        print(f"benchmarks: interrupted; writing the {len(records)} finished jobs",
              file=sys.stderr)
    finally:
        stream.close()
    duration = time.perf_counter() - t0
    summary = runner.aggregate(records)
    datasets_seen: list[str] = []
    for j in jobs:
        if j.dataset not in datasets_seen:
            datasets_seen.append(j.dataset)
    meta = {"suite": suite, "tag": tag, "command": command, "started": f"{started:%Y-%m-%d %H:%M} UTC",
            "duration_s": duration, "seeds": seeds, "time_cap": time_cap,
            "spectral_cap": spectral_cap, "isolate": isolate, "threads": threads,
            "datasets": datasets_seen, "interrupted": interrupted,
            "jobs_planned": len(jobs),
            "machine": machine, "figures": {}}
    result = {"meta": meta, "records": records, "summary": summary}
    try:
        if suite == "scaling":
            result["slopes"] = scaling.slopes(summary)
            meta["figures"] = plots.scaling_plots(summary, out, tag=tag)
        elif suite == "search":
            result["search"] = _search_result(summary, args, grid, seeds)
        else:
            meta["figures"] = plots.quality_vs_time(summary, out)
        # figure names are per out dir; prefix them with the stem so suites don't clash
        renamed = {}
        for title, name in meta["figures"].items():
            new = f"{stem}-{name}"
            (out / name).replace(out / new)
            renamed[title] = new
        meta["figures"] = renamed
    except Exception as exc:  # a plotting failure must not lose the numbers
        print(f"warning: figures failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    (out / f"{stem}.json").write_text(json.dumps(result, indent=1, default=str))
    _write_csv(out / f"{stem}.csv", records)
    _write_csv(out / f"{stem}-summary.csv", summary)
    md = runner_report.suite_markdown(result, meta["figures"])
    (out / f"{stem}.md").write_text(md + "\n")
    print(md)
    errors = [r for r in records if r["status"] == "error"]
    print(f"benchmarks: {len(records)} jobs in {duration:.0f} s; "
          f"{sum(r['status'] == 'ok' for r in records)} ok, "
          f"{sum(r['status'] == 'over cap' for r in records)} over cap, "
          f"{sum(r['status'] == 'skipped' for r in records)} skipped, {len(errors)} errors; "
          f"results in {out / stem}.json", file=sys.stderr)
    for r in errors:
        print(f"ERROR {r['method']} on {r['dataset']} seed {r['seed']}: {r.get('error')}\n"
              f"{r.get('traceback', '')}", file=sys.stderr)
    return 1 if errors or interrupted else 0


def _search_result(summary, args, grid, seeds) -> dict:
    metric = args.metric
    grid = grid if grid is not None else suites.paper_grid(args.preset)
    rows = [r for r in summary if r["method"] == args.preset]
    default = next((r for r in rows if not r["params"]), None)
    best = pick_best(rows, metric)
    return {"preset": args.preset, "dataset": args.dataset, "grid": grid, "metric": metric,
            "seeds": seeds, "rows": rows, "default": default, "best": best}


def pick_best(rows: list[dict], metric: str = "acc") -> dict | None:
    """The completed grid setting (non-default) with the highest mean ``metric``."""
    tuned = [r for r in rows if r["params"] and r.get(metric) is not None]
    return max(tuned, key=lambda r: r[metric]) if tuned else None


def report(args) -> int:
    target = Path(args.results) if args.results else Path(__file__).resolve().parent / "RESULTS.md"
    cmd = "python -m benchmarks " + " ".join(shlex.quote(a) for a in args.argv)
    path = runner_report.write_results_md(args.out, target, cmd)
    print(f"wrote {path}", file=sys.stderr)
    return 0


def list_cmd(args) -> int:
    pres = registered_presets()
    anchors = set(anchor_presets())
    for p in pres:
        ds = suites.PAPER_DATASETS.get(p, suites.DEFAULT_DATASETS)
        print(f"{p:<16} {'anchor' if p in anchors else '      '}  preprocessing "
              f"{suites.preprocess_recipe(p):<11} paper suite: {', '.join(ds)}")
    print(f"peers: {', '.join(suites.PEERS)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a suite")
    r.add_argument("--suite", choices=SUITES, default="paper")
    r.add_argument("--quick", action="store_true", help="the quick suite (CI): tiny subsets")
    r.add_argument("--data-dir", default=None, help="data folder (default: GRAPHCLUST_DATA "
                                                    "or ../shared/data)")
    r.add_argument("--out", required=True, help="folder for results-*.json/csv/md and PNGs")
    r.add_argument("--presets", help="comma-separated presets (default: all registered)")
    r.add_argument("--datasets", help="comma-separated data sets (NAME, NAME@N, "
                                      "mnist-extend@N, synthetic@N)")
    r.add_argument("--skip-datasets", help="comma-separated data sets to leave out")
    r.add_argument("--seeds", type=int, help="seeds per job (0..N-1)")
    r.add_argument("--time-cap", type=float, help="seconds per job before it is killed")
    r.add_argument("--spectral-cap", type=float, help="time cap of SpectralClustering")
    r.add_argument("--peers", help="comma-separated peers (default: all; scaling: sk-minibatch)")
    r.add_argument("--no-peers", action="store_true")
    r.add_argument("--isolate", choices=("job", "dataset", "method", "none"),
                   help="a fresh process per job, per (method, data set) or per method")
    r.add_argument("--threads", type=int, help="BLAS/OpenMP threads per worker (default 1: "
                                                "one core per job; 0: library default)")
    r.add_argument("--preset", help="search: the preset")
    r.add_argument("--dataset", help="search: the data set")
    r.add_argument("--grid", help="search: JSON {section__param: [values]}")
    r.add_argument("--metric", default="acc", choices=runner.METRICS, help="search: rank by")
    r.add_argument("--sizes", help="scaling: comma-separated n (default 70k..630k, 250k..2M)")
    r.add_argument("--tag", help="suffix of the result files (several runs in one --out)")
    rep = sub.add_parser("report", help="regenerate benchmarks/RESULTS.md from result files")
    rep.add_argument("--out", required=True, help="folder holding results-*.json")
    rep.add_argument("--results", help="file to write (default benchmarks/RESULTS.md)")
    sub.add_parser("list", help="presets, their preprocessing and paper data sets")
    args = ap.parse_args(argv)
    args.argv = argv
    if args.cmd == "run":
        return run_suite(args)
    if args.cmd == "report":
        return report(args)
    return list_cmd(args)
