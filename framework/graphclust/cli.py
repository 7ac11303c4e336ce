"""The ``graphclust`` command line.

Sub-commands: ``run``, ``plugins``, ``presets``, ``describe``, ``validate``, ``fill`` (each
handles ensemble specs as well as pipeline specs).
Errors in specs or data print one clear message to stderr and exit with status 2;
no output file is written unless the run succeeded.

The user's files are safe (:func:`plan_outputs`): every output of a run (the labels, the
JSON report beside a chunked or zarr/parquet output, the picture) is checked before any
work: it must differ from the others, from the data set and from the spec file, must not
be an existing folder, and its folder must be writable; an existing ``NAME.json`` is
replaced only when it is the report of an earlier run. Each is written under a temporary
name in its own folder, then renamed; a failed write removes the temporary.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import re
import sys
import warnings
from io import BytesIO
from pathlib import Path

import numpy as np

from graphclust._cli_common import (_atomic_write, _json_safe, _note, _overrides,
                                    _write_output, _write_text, plan_outputs, write_labels,
                                    write_layers)
from graphclust._errors import InputError
from graphclust._parts import PART_KINDS

__all__ = ["main"]


def _print_table(rows: list[list[str]], header: list[str], out) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    print(fmt.format(*header), file=out)
    print(fmt.format(*["-" * w for w in widths]), file=out)
    for r in rows:
        print(fmt.format(*map(str, r)), file=out)


def _load(name: str, data_dir: str | None, labels=None, note=None):
    """``load_dataset`` with every reading failure (a truncated .mat, ragged CSV rows, an
    unreadable file) as an :class:`~graphclust.InputError` naming the data set."""
    from graphclust._errors import InputError, SpecError
    from graphclust.data import load_dataset

    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ee]mpty input file.*")
            return load_dataset(name, data_dir, labels, note)
    except (InputError, SpecError):
        raise
    except Exception as exc:
        raise InputError(f"cannot read dataset {name!r}: {type(exc).__name__}: {exc}") from None


_SCHEDULER_HELP = "local (one worker per core), local:N (N workers) or tcp://HOST:PORT"
_TCP = re.compile(r"^tcp://[A-Za-z0-9_.\-]+:[0-9]{1,5}$")


def parse_scheduler(text: str) -> tuple[str, int | str]:
    """``("local", n_workers)`` or ``("tcp", address)`` from a ``--scheduler`` string;
    :class:`~graphclust.InputError` naming the accepted forms otherwise."""
    value = text.strip()
    if value == "local":
        return "local", max(1, os.cpu_count() or 1)
    if value.startswith("local:") and value[6:].isdigit() and int(value[6:]) >= 1:
        return "local", int(value[6:])
    if _TCP.match(value):
        return "tcp", value
    raise InputError(f"--scheduler {text!r}: expected {_SCHEDULER_HELP}")


@contextlib.contextmanager
def dask_client(text: str, timeout: float = 10.0):
    """A ``distributed.Client`` for a ``--scheduler`` string, closed (with its
    ``LocalCluster``, for ``local[:N]``: N worker processes of one thread each) on exit.
    An unreachable address is an :class:`~graphclust.InputError` after ``timeout`` s."""
    kind, value = parse_scheduler(text)
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError('--scheduler needs dask and distributed: '
                         'pip install "graphclust[dask]"') from None
    cluster = None
    if kind == "local":
        cluster = LocalCluster(n_workers=int(value), threads_per_worker=1,
                               dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)
    else:
        try:
            client = Client(value, timeout=f"{timeout}s")
        except (OSError, TimeoutError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"cannot reach the Dask scheduler at {value} "
                             f"within {timeout:g} s ({first})") from None
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _is_dask(a) -> bool:
    return type(a).__module__.startswith("dask.")


def _labels_arg(args):
    """``--labels COLUMN`` / ``--no-labels`` as the ``labels`` argument of the readers."""
    return False if args.no_labels else args.labels


def _is_npy(path: str) -> bool:
    return Path(path).suffix.lower() == ".npy"


def _load_input(args, chunked: bool, note=None):
    """``(X, y)``: a zarr/parquet path (and a ``.npy`` file with ``--scheduler`` or too large
    for memory, :func:`graphclust.io.npy_fits_in_memory`) as Dask arrays
    (:mod:`graphclust.io`); any other ``.npy`` file memory-mapped;
    any other data set in memory, turned into row chunks when ``chunked``."""
    from graphclust import io

    labels = _labels_arg(args)
    chunk_bytes = None if args.chunk_mb is None else int(args.chunk_mb * 2**20)
    if io.is_large_format(args.dataset) and (chunked or not _is_npy(args.dataset)):
        return io.open_array(args.dataset, chunk_bytes, labels, note)
    X, y = _load(args.dataset, args.data_dir, labels, note)
    if not chunked:
        return X, y
    if not isinstance(X, np.ndarray):
        raise InputError(f"{args.dataset}: --scheduler runs dense features only; this data "
                         "set is sparse (run it without --scheduler)")
    import dask.array as da

    rows = io.chunk_rows(X.shape[1], io.computed_itemsize(X.dtype), chunk_bytes)
    # persisted: the rows travel to the workers once, not with every pass of the fit
    return da.from_array(X, chunks=(rows, X.shape[1])).persist(), y


def _check_output(args, chunked: bool) -> None:
    """Refuse, before any work, an output the run cannot write."""
    from graphclust import io

    if not args.output:
        return
    if io.is_large_format(args.output):
        if Path(args.output).suffix.lower() != ".npy" or chunked:
            io._dask()
    elif chunked:
        raise InputError(f"--output {args.output!r}: a chunked run writes its labels as "
                         f"{', '.join(io.FORMATS)} (by the file's suffix)")


def _cmd_run(args) -> int:
    from graphclust import io

    if args.preset and args.spec:
        raise SystemExit("error: give at most one of --preset NAME or --spec FILE")
    if args.graph is not None:  # a graph file: graphclust._cli_graph
        from graphclust._cli_graph import run_graph

        return run_graph(args)
    scheduled = args.scheduler is not None
    chunked = scheduled or (io.is_large_format(args.dataset) and not _is_npy(args.dataset))
    too_large = ""
    if not chunked and _is_npy(args.dataset):  # in memory when it fits (io.npy_memory_limit)
        fits, too_large = io.npy_fits_in_memory(args.dataset)
        chunked = not fits
    if scheduled:
        parse_scheduler(args.scheduler)
    if args.chunk_mb is not None and not chunked:
        raise InputError(f"--chunk-mb sets the row chunks of a chunked run; {args.dataset} "
                         "is read in memory (a .npy file is read in chunks only with "
                         "--scheduler or when it does not fit in memory)")
    if too_large:
        io._dask()  # the dask extra, or a clear error before any work
        print(f"note: {too_large}", file=sys.stderr)
    outputs = plan_outputs(args, chunked)  # the user's files first
    if chunked and args.layers:
        raise InputError("--layers reads the hierarchy of an in-memory fit; a chunked run "
                         "(--scheduler or a zarr/parquet input) has none (docs/layers.rst)")
    if chunked and args.plot:
        raise InputError("--plot draws the data in memory; it is not available for a "
                         "chunked run (--scheduler or a zarr/parquet input)")
    plot_path = outputs["--plot"] if args.plot and _check_plot_path(args.plot) else None
    _check_output(args, chunked)
    if not scheduled:
        return _run_model(args, chunked, plot_path, outputs)
    with dask_client(args.scheduler, args.connect_timeout):
        return _run_model(args, chunked, plot_path, outputs)


def _n_classes(y) -> int:
    if _is_dask(y):
        import dask.array as da

        return int(da.unique(y).compute().size)
    return int(np.unique(y).size)


def chunked_scores(metrics, labels, y) -> tuple[dict[str, float], list[str]]:
    """The truth metrics of a chunked run, and the names of the metrics skipped.

    The ``k x c`` contingency table of ``labels`` against ``y`` is summed over the row
    blocks (one pass; only the table reaches this process); each metric part then scores
    the table's cells expanded back into label pairs, ``n_ij`` copies of ``(i, j)``. A
    truth metric compares two partitions, so it depends only on that table (ACC, NMI,
    ARI, purity do), and the value is the in-memory one. Metrics that need the graph
    are skipped (the chunked run keeps no n-sized graph here).
    """
    import dask
    import dask.array as da

    if not _is_dask(y):
        y = da.from_array(np.asarray(y), chunks=(labels.chunks[0],))
    y = y.rechunk((labels.chunks[0],)).astype(np.int64)
    kmax, cmax = dask.compute(labels.max(), y.max())
    k, c = int(kmax) + 1, int(cmax) + 1
    table = da.bincount(labels.astype(np.int64) * c + y, minlength=k * c).compute()
    cells = np.flatnonzero(table)
    counts = table[cells]
    pred = np.repeat((cells // c).astype(np.int32), counts)
    true = np.repeat((cells % c).astype(np.int32), counts)
    scores, skipped = {}, []
    for metric in metrics:
        if not metric.needs_truth:
            skipped.append(metric.name)
            continue
        scores[metric.name] = float(metric.score(pred, true, None))
    return scores, skipped


def _k_arg(text: str):
    """``--n-clusters``: a positive integer or ``labels``."""
    if text == "labels":
        return text
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or 'labels', got {text!r}")
    return value


def _run_model(args, chunked: bool, plot_path: Path | None, outputs: dict[str, Path]) -> int:
    from graphclust import GraphClustering, io
    from graphclust._plugins import get_registry

    notes: list[str] = []
    X, y = _load_input(args, chunked, _note(notes))
    spec = args.preset or args.spec or "auto"
    overrides = _overrides(args.set or [])
    if args.metrics is not None:
        overrides["metrics"] = [{"name": m} for m in args.metrics.split(",") if m]
    elif y is not None:
        registry = get_registry()
        overrides.setdefault("metrics", [{"name": m} for m in ("acc", "nmi", "ari", "purity")
                                         if m in registry.metrics])
    asked = args.n_clusters
    if asked == "labels":
        if y is None:
            from graphclust._errors import InputError

            raise InputError("--n-clusters labels: the data set has no labels; give an "
                             "integer or leave --n-clusters out to estimate k")
        asked = _n_classes(y)
    model = GraphClustering(spec, n_clusters=asked, random_state=args.seed,
                            verbose=not args.quiet, n_jobs=args.n_jobs, overrides=overrides,
                            k_max=args.k_max, noise=args.noise)
    k_from = "the labels" if args.n_clusters == "labels" else "--n-clusters"
    if model.n_clusters is None:
        from graphclust._composer import needs_data

        spec_k = (overrides.get("n_clusters") if needs_data(spec)
                  else model._compose().n_clusters)
        k_from = "the spec" if spec_k is not None else "estimated"
    model.fit(X, y)
    selection = model.k_selection_
    if selection.estimated:  # said once, with the other notes on stderr (and in --json)
        _note(notes)(f"k = {model.n_clusters_} ({selection.describe()})")
    labels = model.labels_
    scores, skipped = model.scores_, []
    if _is_dask(labels):
        import dask.array as da

        sizes = da.bincount(da.where(labels < 0, int(model.n_clusters_), labels),
                            minlength=int(model.n_clusters_) + 1).compute()
        sizes = sizes[:int(model.n_clusters_)]
        if not scores and y is not None:
            metrics = getattr(model.pipeline_, "metrics", [])
            scores, skipped = chunked_scores(metrics, labels, y)
        mean_conf = float(model.confidence_.mean().compute())
    else:
        sizes = np.bincount(labels[labels >= 0], minlength=int(model.n_clusters_))
        mean_conf = float(np.mean(model.confidence_)) if labels.size else 0.0
    result = {
        "dataset": str(args.dataset),
        "spec": spec if isinstance(spec, str) else "<spec>",
        "n_samples": int(X.shape[0]),
        "n_features": int(X.shape[1]),
        "n_clusters": int(model.n_clusters_),
        "n_clusters_from": k_from,
        "k_selection": _json_safe(selection.as_dict()),
        "seed": args.seed,
        "cluster_sizes": sizes.tolist(),
        "scores": scores,
        "timings": model.timings_,
        "mean_confidence": mean_conf,
        "confidence_source": model.confidence_source_,
        "resolved_spec": _json_safe(model.resolved_spec_),
    }
    if args.noise:
        result["n_noise"] = int(model.n_noise_)
    layers = None
    if args.layers:  # computed from what the fit kept (docs/layers.rst)
        layers = model.layers_.layers()
        result["layers"] = {"source": model.layers_.source,
                            "layers": model.layers_.summary()}
    if skipped:
        result["metrics_skipped"] = skipped
    if notes:
        result["notes"] = notes
    if args.scheduler:
        result["scheduler"] = args.scheduler
    if _is_dask(X):  # a chunked run (--scheduler, a zarr/parquet input, a large .npy)
        result["n_chunks"] = int(X.numblocks[0])
    if getattr(model, "solution_", None) is not None:
        result["n_iter"] = int(model.solution_.n_iter)
        result["converged"] = bool(model.solution_.converged)
    elif getattr(model, "result_", None) is not None and hasattr(model.result_, "members"):
        res = model.result_
        result["members"] = [
            {"member": m.label, "n_clusters": int(k), "seed": int(s), "scores": r.scores,
             "time": r.timings.get("total", 0.0)}
            for m, r, k, s in zip(model.pipeline_.members, res.members, res.member_n_clusters,
                                  res.member_seeds)]
    if args.output:
        out = outputs["--output"]
        conf = model.confidence_
        if _is_dask(labels) or out.suffix.lower() in (".zarr", ".parquet"):
            result["output"] = str(_write_output("the labels", out,
                                                 lambda: io.write_labels(out, labels, conf)))
        else:
            result["output"] = str(_write_output("the labels", out,
                                                 lambda: write_labels(out, labels, conf)))
        if "confidence" in outputs:  # a format without columns: a second array beside
            second = outputs["confidence"]
            result["confidence_output"] = str(_write_output(
                "the confidence", second,
                lambda: (io.write_labels(second, conf) if _is_dask(conf)
                         or second.suffix.lower() == ".zarr"
                         else write_labels(second, np.asarray(conf, np.float64)))))
        if layers is not None:
            where = outputs["layers"]
            result["layers_output"] = str(_write_output(
                "the layers", where, lambda: write_layers(where, layers)))
        if "report" in outputs:
            report = outputs["report"]
            result["report"] = str(report)
            _write_output("the JSON report", report,
                          lambda: _write_text(report, json.dumps(result, indent=2) + "\n"))
    if plot_path is not None:
        result["plot"] = str(_write_output("the picture", plot_path,
                                           lambda: _write_plot(plot_path, model, X, y)))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    # k once: an estimate was said on stderr with the notes; a given k is said here
    print(f"{result['dataset']}: {X.shape[0]} samples x {X.shape[1]} features, "
          f"{model.pipeline_!r}")
    if not selection.estimated:
        print(f"k = {model.n_clusters_} (given by {k_from})")
    print(f"cluster sizes: {' '.join(map(str, sizes))}")
    for name, value in scores.items():
        print(f"{name.upper():>8}: {value:.4f}")
    starts = getattr(model.pipeline_, "starts", 1)  # each start's stages were reported
    head = f"timings (summed over the {starts} starts)" if starts > 1 else "timings"
    print(f"{head}: " + ", ".join(f"{k} {v:.2f}s" for k, v in model.timings_.items()))
    if layers is not None:
        print(f"layers: {model.layers_.describe()}")
    if args.output:
        print(f"labels written to {args.output}"
              + (f" (confidence: {result['confidence_output']})"
                 if "confidence_output" in result else ""))
        if "report" in result:
            print(f"JSON report written to {result['report']}")
    if plot_path is not None:
        print(f"report written to {plot_path}")
    return 0


_PLOT_FORMATS = (".png", ".pdf", ".svg")


def _check_plot_path(path: str) -> Path:
    """Refuse, before any work, a report file matplotlib cannot write or a missing extra."""
    out = Path(path)
    if out.suffix.lower() not in _PLOT_FORMATS:
        raise InputError(f"--plot {path!r}: the report is written as "
                         f"{', '.join(_PLOT_FORMATS)} (by the file's extension)")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError('--plot needs matplotlib: pip install "graphclust[plot]"') from None
    return out


def _write_plot(path: Path, model, X, y) -> Path:
    """Draw :func:`graphclust.plotting.plot_report` with the Agg backend into ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from graphclust.plotting import plot_report

    fig = plot_report(model, X, y)
    buf = BytesIO()
    try:
        fig.savefig(buf, dpi=100, format=path.suffix.lower()[1:])
    finally:
        plt.close(fig)
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(path, buf.getvalue())
    return path


def _cmd_plugins(args) -> int:
    from graphclust._plugins import get_registry

    registry = get_registry()
    parts = registry.all_parts()
    presets = sorted([*registry.presets.records(), *registry.rules.records()],
                     key=lambda r: r.name)
    if args.json:
        print(json.dumps({
            "plugins": [{"name": p.name, "distribution": p.distribution, "version": p.version,
                         "entry_point": p.entry_point, "status": p.status, "error": p.error,
                         "clashes": list(p.clashes)}
                        for p in registry.plugins],
            "parts": [{"kind": r.kind, "name": r.name, "bundle": r.provider.bundle,
                       "distribution": r.provider.distribution, "version": r.provider.version,
                       "summary": r.summary} for r in parts],
            "presets": [{"name": r.name, "bundle": r.provider.bundle, "summary": r.summary,
                         "paper": r.paper, "rule": hasattr(r, "rule")} for r in presets],
        }, indent=2))
        return 0
    out = sys.stdout
    print("plugins:", file=out)
    _print_table([[p.name, p.status, f"{p.distribution} {p.version}".strip(),
                   p.error or p.entry_point] for p in registry.plugins],
                 ["plugin", "status", "distribution", "entry point / error"], out)
    clashing = [p for p in registry.plugins if p.clashes]
    if clashing:
        print("\nname clashes (the first registration stands):", file=out)
        for p in clashing:
            for what in p.clashes:
                kind, name = what.rsplit(" ", 1)
                rec = _holder(registry, kind, name.strip("'"))
                print(f"  {what} of {p.name} ({p.distribution} {p.version}".rstrip() +
                      f") not registered: already held by {rec}", file=out)
    print("\nparts:", file=out)
    _print_table([[r.kind, r.name, r.provider.bundle, r.provider.version, r.summary]
                  for r in parts], ["kind", "name", "bundle", "version", "summary"], out)
    print("\npresets:", file=out)
    _print_table([[r.name + (" (rule)" if hasattr(r, "rule") else ""), r.provider.bundle,
                   r.summary] for r in presets], ["preset", "bundle", "summary"], out)
    return 0


def _cmd_presets(args) -> int:
    """The presets and rule presets, one line each (name, bundle, summary)."""
    from graphclust._plugins import get_registry

    registry = get_registry()
    records = sorted([*registry.presets.records(), *registry.rules.records()],
                     key=lambda r: r.name)
    if args.json:
        print(json.dumps([{"name": r.name, "bundle": r.provider.bundle, "summary": r.summary,
                           "paper": r.paper, "rule": hasattr(r, "rule")} for r in records],
                         indent=2))
        return 0
    _print_table([[r.name + (" (rule)" if hasattr(r, "rule") else ""), r.provider.bundle,
                   r.summary] for r in records], ["preset", "bundle", "summary"], sys.stdout)
    print("\n(graphclust describe NAME for a preset's spec; a rule preset decides its spec "
          "from the data: graphclust fill NAME --dataset X)")
    return 0


def _holder(registry, label: str, name: str) -> str:
    """Who holds a registered name (``label`` as in a clash report, e.g. ``"solver"``)."""
    for cat in registry._catalogs():
        if cat.label == label and name in cat:
            return str(cat.record(name).provider)
    return "?"


def _describe_part(record) -> dict:
    from graphclust._contracts import RENAMED, plain

    cls = record.cls
    params = []
    for f in cls.parameters():
        check = f.metadata.get("check")
        default = f.default if f.default is not __import__("attrs").NOTHING else None
        params.append({"name": f.name, "default": default,
                       "type": check.description if check else "any",
                       "doc": f.metadata.get("doc", "")})
    info = {"kind": record.kind, "name": record.name, "bundle": record.provider.bundle,
            "summary": record.summary, "parameters": params}
    renamed = RENAMED.get(record.kind, {})
    for attr in ("produces", "needs_anchors", "accepts", "needs_features", "provides", "needs",
                 "needs_truth", "provides_features", "out_of_sample", "chunkwise"):
        if attr in renamed:  # an old name: listed under the new one
            continue
        if hasattr(cls, attr) and not isinstance(getattr(cls, attr), property):
            info[attr] = plain(getattr(cls, attr))
    return info


def _cmd_describe(args) -> int:
    from graphclust._errors import UnknownPartError
    from graphclust._plugins import get_registry
    from graphclust._registry import unknown_name_message

    registry = get_registry()
    kinds = [args.kind] if args.kind else list(PART_KINDS)
    found = [registry.parts(k).record(args.name) for k in kinds if args.name in registry.parts(k)]
    preset = (registry.presets.record(args.name)
              if args.kind is None and args.name in registry.presets else None)
    rule = (registry.rules.record(args.name)
            if args.kind is None and args.name in registry.rules else None)
    if not found and preset is None and rule is None:
        names = sorted({r.name for r in registry.all_parts()} | set(registry.preset_names()))
        raise UnknownPartError(unknown_name_message("part or preset", args.name, names))
    infos = [_describe_part(r) for r in found]
    if rule is not None:
        infos.insert(0, {"rule_preset": rule.name, "bundle": rule.provider.bundle,
                         "summary": rule.summary, "paper": rule.paper,
                         "rules": rule.description})
    if preset is not None:
        infos.insert(0, {"preset": preset.name, "bundle": preset.provider.bundle,
                         "summary": preset.summary, "paper": preset.paper,
                         "spec": preset.spec})
    if args.json:
        print(json.dumps(infos if len(infos) > 1 else infos[0], indent=2, default=str))
        return 0
    for info in infos:
        if "rule_preset" in info:
            print(f"rule preset {info['rule_preset']} ({info['bundle']}): {info['summary']}")
            print(info["rules"].rstrip())
            print(f"(the concrete spec for a data set: graphclust fill {info['rule_preset']} "
                  "--dataset X)")
            print()
            continue
        if "preset" in info:
            print(f"preset {info['preset']} ({info['bundle']}): {info['summary']}")
            if info["paper"]:
                print(f"paper: {info['paper']}")
            print(json.dumps(info["spec"], indent=2))
            print()
            continue
        print(f"{info['kind']} {info['name']} ({info['bundle']}): {info['summary']}")
        for attr in ("produces", "needs_anchors", "accepts", "needs_features", "provides",
                     "needs", "provides_features", "out_of_sample", "chunkwise"):
            if attr in info:
                print(f"  {attr}: {info[attr]}")
        rows = [[p["name"], repr(p["default"]), p["type"], p["doc"]] for p in info["parameters"]]
        if rows:
            _print_table(rows, ["parameter", "default", "type", "doc"], sys.stdout)
        print()
    return 0


def _cmd_validate(args) -> int:
    from graphclust import validate_spec

    problems = validate_spec(args.spec)
    if not problems:
        print(f"{args.spec}: valid")
        return 0
    print(f"{args.spec}: {len(problems)} problem(s)", file=sys.stderr)
    for p in problems:
        print(f"  - {p}", file=sys.stderr)
    return 2


def _cmd_fill(args) -> int:
    """Print a spec or preset with every default written out (TOML, or JSON with --json)."""
    from graphclust import compose
    from graphclust._plugins import get_registry
    from graphclust._spec import read_spec
    from graphclust._toml import plain_spec, spec_to_toml

    registry = get_registry()
    header = ""
    if args.spec in registry.rules:
        data, header = _decide(args, registry.rules.get(args.spec))
    elif args.dataset:
        raise InputError(f"--dataset is for rule presets ({', '.join(registry.rules.names())}); "
                         f"{args.spec!r} does not depend on the data")
    else:
        data = (registry.presets.get(args.spec) if args.spec in registry.presets
                else read_spec(args.spec))
    pipe = compose(data)
    full = _filled(data, pipe)
    full["scale"] = pipe.scale
    if "ensemble" in data:
        full["ensemble"] = _filled_ensemble(data["ensemble"], pipe, registry)
    if args.json:
        print(json.dumps(_json_safe(plain_spec(full)), indent=2))
    else:
        sys.stdout.write(header + spec_to_toml(plain_spec(full)))
    return 0


def _decide(args, rule) -> tuple[dict, str]:
    """A rule preset's concrete spec for ``--dataset`` (and ``--n-clusters``, else a spec
    without ``n_clusters``: estimated at fit), and a TOML comment header with the profile
    that decided it."""
    from graphclust._errors import Problem, SpecError
    from graphclust._rules import profile_data

    if not args.dataset:
        raise SpecError(Problem("", f"{rule.name!r} is a rule preset: its spec depends on the "
                                f"data; give --dataset (e.g. graphclust fill {rule.name} "
                                "--dataset digits)"), title="rule preset needs data")
    X, y = _load(args.dataset, args.data_dir, note=_note([]))
    k = args.n_clusters
    if k is None:
        _note([])("k is estimated at fit (no --n-clusters); the spec is sized for k_max")
    from graphclust._input import check_input

    check_input(X if not hasattr(X, "toarray") else X[:1].toarray(), None)
    profile = profile_data(X, k)
    data = rule.resolve(profile)
    if k is not None:
        data["n_clusters"] = int(k)
    shown = profile.as_dict()
    if shown["k"] is None:
        shown["k"] = "estimated at fit"
    lines = [f"# {rule.name} for {args.dataset}: "
             + ", ".join(f"{key} = {value:.4g}" if isinstance(value, float) else
                         f"{key} = {value}" for key, value in shown.items())]
    return data, "\n".join(lines) + "\n"


def _filled(data: dict, pipe) -> dict:
    from graphclust._spec import SECTIONS

    full = {k: v for k, v in data.items() if k not in SECTIONS}
    full.update({sec: p for sec, p in pipe.named_parts().items() if sec in SECTIONS})
    return full


def _filled_ensemble(section: dict, ensemble, registry) -> dict:
    """Each member entry as a whole pipeline spec with its defaults, plus its ``n_clusters``
    and ``count``; the consensus with its defaults."""
    from graphclust import compose
    from graphclust._spec import MEMBER_KEYS, merge_overrides

    members = []
    for entry in section["members"]:
        entry = {"preset": entry} if isinstance(entry, str) else dict(entry)
        own = {k: entry.pop(k) for k in MEMBER_KEYS if k in entry}
        data = entry
        if "preset" in own:
            data = merge_overrides(registry.presets.get(own["preset"]), entry)
        filled = _filled(data, compose(data))
        filled.update({k: v for k, v in own.items() if k != "preset"})
        members.append(filled)
    return {"members": members, "consensus": ensemble.consensus}


def _version() -> str:
    from graphclust import __version__

    return __version__


def _number(low: float, what: str):
    """An argparse type: a finite number above ``low`` (the message says ``what``)."""
    def parse(text: str):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not np.isfinite(value) or value <= low:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


def _nonempty(text: str) -> str:
    """An argparse type: a non-blank string (an empty --spec or --output is not silently
    the default)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a value, got an empty string")
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graphclust", description="Scalable graph clustering "
                                     "from interchangeable parts.")
    parser.add_argument("--version", action="version", version=f"graphclust {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="cluster a dataset with a preset or a spec file")
    run.add_argument("--preset", type=_nonempty, help="registered preset name (see 'graphclust presets'; "
                     "default: auto)")
    run.add_argument("--spec", type=_nonempty, help="spec file (.toml or .json)")
    given = run.add_mutually_exclusive_group(required=True)
    given.add_argument("--graph", metavar="FILE", type=_nonempty,
                       help="cluster a graph: an edge list (.csv, .tsv, .parquet with columns "
                            "source, target and optionally weight; node ids of any kind), a "
                            "Matrix Market .mtx or a scipy sparse .npz; the labels are "
                            "written keyed by node id (docs: graphs)")
    given.add_argument("--dataset", type=_nonempty,
                     help="bundled name (digits), data-folder name (usps) or file path; "
                          ".zarr and .parquet are read in chunks (Dask); .npy is read in "
                          "memory (memory-mapped) when its features fit in a quarter of the "
                          "available memory (psutil; 2 GiB without it), else in chunks on "
                          "Dask's local threads, and in chunks on the cluster with "
                          "--scheduler. The labels for a seed do not depend on the container")
    labels = run.add_mutually_exclusive_group()
    labels.add_argument("--labels", metavar="COLUMN", type=_nonempty,
                        help="the label column (CSV/parquet: header name or 0-based index; "
                             ".npz/.mat/zarr: key). Without it a CSV/parquet column is taken "
                             "only when named label, labels, y, target or class and holding "
                             "class labels (integers or words, at most n/2 distinct); a note "
                             "on stderr says so")
    labels.add_argument("--no-labels", action="store_true",
                        help="no labels: every column is a feature (no truth metrics)")
    run.add_argument("--data-dir", type=_nonempty, help="data folder (default: $GRAPHCLUST_DATA or ../shared/data)")
    run.add_argument("--n-clusters", type=_k_arg, help="an integer, or 'labels' (the number "
                     "of classes in the labels); default: the spec's, else estimated in "
                     "[1, --k-max] by the pipeline (said on stderr: k = 10 (estimated: ...))")
    run.add_argument("--k-max", type=int, help="largest k searched when k is estimated "
                     "(default 20)")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--set", action="append", metavar="SECTION.PARAM=VALUE",
                     help="override a parameter, e.g. --set graph.n_neighbors=15")
    run.add_argument("--metrics", help="comma-separated metrics (default acc,nmi,ari,purity)")
    run.add_argument("--output", type=_nonempty, help="write the labels to this file: .npy (NumPy binary), "
                     ".zarr or .parquet (written chunk by chunk, the JSON report beside "
                     "it as <name>.json) or text, one label a line (.csv, .txt). Never "
                     "the data set, the spec or an existing folder; checked before work")
    run.add_argument("--json", action="store_true", help="machine-readable result on stdout")
    run.add_argument("--layers", action="store_true",
                     help="the fit's nested layers, coarse to fine (docs/layers.rst): their k "
                          "and stability in --json and the report, and with --output every "
                          "layer's labels beside it as <name>.layers.<ext> (.csv/.txt: one "
                          "column a layer, headed k=K; .npy: an n x L array; with --graph "
                          "a node column first, as the labels)")
    run.add_argument("--noise", action="store_true",
                     help="label -1 the points the fit says belong to no cluster (the "
                          "density tree's noise, else the cluster-Gaussian rule; with "
                          "--graph the nodes below the configuration model's expectation; "
                          "docs/confidence.rst); default: every point labelled")
    run.add_argument("--plot", metavar="FILE", type=_nonempty,
                     help="write a picture of the result (.png, .pdf or .svg; needs the plot "
                          "extra): 2-D view, cluster sizes, stage timings, confusion matrix")
    run.add_argument("--quiet", action="store_true", help="no progress on stderr")
    run.add_argument("--n-jobs", type=int, default=None,
                     help="processes for an ensemble's members (default 1; -1: all cores)")
    run.add_argument("--scheduler", metavar="local[:N]|tcp://HOST:PORT",
                     help="run chunk-wise on Dask (needs the dask extra): a LocalCluster of N "
                          "one-thread workers (default one per core) or a running scheduler")
    run.add_argument("--connect-timeout", type=_number(0, "a positive number of seconds"),
                     default=10.0, metavar="SECONDS",
                     help="how long to try reaching a tcp:// scheduler (default 10)")
    run.add_argument("--chunk-mb", type=_number(0, "a positive number of MB"), default=None,
                     metavar="MB",
                     help="chunked runs: rows per chunk hold about this many MB of features "
                          "(default 64; zarr keeps its stored row chunks, parquet its "
                          "partitions)")
    run.set_defaults(func=_cmd_run)

    plugins = sub.add_parser("plugins", help="list plugins, parts and presets")
    plugins.add_argument("--json", action="store_true")
    plugins.set_defaults(func=_cmd_plugins)

    presets = sub.add_parser("presets", help="list presets and rule presets with their "
                             "summaries")
    presets.add_argument("--json", action="store_true")
    presets.set_defaults(func=_cmd_presets)

    describe = sub.add_parser("describe", help="a part's or preset's parameters")
    describe.add_argument("name")
    describe.add_argument("--kind", choices=list(PART_KINDS))
    describe.add_argument("--json", action="store_true")
    describe.set_defaults(func=_cmd_describe)

    validate = sub.add_parser("validate", help="check a spec file without running it")
    validate.add_argument("spec")
    validate.set_defaults(func=_cmd_validate)

    fill = sub.add_parser("fill", help="print a spec or preset with every default written out "
                          "(a rule preset such as auto: the spec it decides for --dataset)")
    fill.add_argument("spec")
    fill.add_argument("--json", action="store_true", help="JSON instead of TOML")
    fill.add_argument("--dataset", help="rule presets: the data set (name or file) to decide for")
    fill.add_argument("--data-dir", help="data folder (default: $GRAPHCLUST_DATA)")
    fill.add_argument("--n-clusters", type=int, help="rule presets: clusters (default: none "
                      "in the spec, estimated at fit)")
    fill.set_defaults(func=_cmd_fill)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 for a spec/data/plugin error, 141
    when the reader of stdout went away, e.g. ``graphclust plugins | head``)."""
    from graphclust._errors import GraphClustWarning, InputError, PluginError, SpecError

    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default", GraphClustWarning)
            code = int(args.func(args) or 0)
        sys.stdout.flush()
        return code
    except (SpecError, InputError, PluginError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader closed the pipe: stop quietly. Point stdout at devnull so the
        # interpreter's final flush does not raise (and print) again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):  # stdout is not a real file (captured in tests)
            pass
        finally:
            os.close(devnull)
        return 141


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
