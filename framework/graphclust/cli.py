"""The ``graphclust`` command line.

Sub-commands: ``run``, ``plugins``, ``describe``, ``validate``, ``fill`` (each handles
ensemble specs as well as pipeline specs).
Errors in specs or data print one clear message to stderr and exit with status 2;
no output file is written unless the run succeeded.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import tomllib
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from graphclust._parts import PART_KINDS

__all__ = ["main"]


def _parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _overrides(pairs: list[str]) -> dict:
    out: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise SystemExit(f"error: --set expects SECTION.PARAM=VALUE, got {pair!r}")
        key, value = pair.split("=", 1)
        parts = key.strip().split(".")
        node = out
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = _parse_value(value.strip())
    return out


def _print_table(rows: list[list[str]], header: list[str], out) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    print(fmt.format(*header), file=out)
    print(fmt.format(*["-" * w for w in widths]), file=out)
    for r in rows:
        print(fmt.format(*map(str, r)), file=out)


def _cmd_run(args) -> int:
    from graphclust import GraphClustering
    from graphclust._plugins import get_registry
    from graphclust.data import load_dataset

    if bool(args.preset) == bool(args.spec):
        raise SystemExit("error: give exactly one of --preset NAME or --spec FILE")
    X, y = load_dataset(args.dataset, args.data_dir)
    spec = args.preset or args.spec
    overrides = _overrides(args.set or [])
    if args.metrics is not None:
        overrides["metrics"] = [{"name": m} for m in args.metrics.split(",") if m]
    elif y is not None:
        registry = get_registry()
        overrides.setdefault("metrics", [{"name": m} for m in ("acc", "nmi", "ari", "purity")
                                         if m in registry.metrics])
    model = GraphClustering(spec, n_clusters=args.n_clusters, random_state=args.seed,
                            verbose=not args.quiet, n_jobs=args.n_jobs, overrides=overrides)
    if model.n_clusters is None and y is not None:
        spec_k = model._compose().n_clusters
        if spec_k is None:
            model.set_params(n_clusters=int(np.unique(y).size))
    model.fit(X, y)
    labels = model.labels_
    sizes = np.bincount(labels)
    result = {
        "dataset": str(args.dataset),
        "spec": spec if isinstance(spec, str) else "<spec>",
        "n_samples": int(X.shape[0]),
        "n_features": int(X.shape[1]),
        "n_clusters": int(model.n_clusters_),
        "seed": args.seed,
        "cluster_sizes": sizes.tolist(),
        "scores": model.scores_,
        "timings": model.timings_,
    }
    if model.solution_ is not None:
        result["n_iter"] = int(model.solution_.n_iter)
        result["converged"] = bool(model.solution_.converged)
    else:  # an ensemble: one entry per member
        res = model.result_
        result["members"] = [
            {"member": m.label, "n_clusters": int(k), "seed": int(s), "scores": r.scores,
             "time": r.timings.get("total", 0.0)}
            for m, r, k, s in zip(model.pipeline_.members, res.members, res.member_n_clusters,
                                  res.member_seeds)]
    if args.output:
        out = Path(args.output)
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out.parent, suffix=".npy")
        os.close(fd)
        np.save(tmp, labels)
        os.replace(tmp, out)
        result["output"] = str(out)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['dataset']}: {X.shape[0]} samples x {X.shape[1]} features, "
          f"{model.n_clusters_} clusters, {model.pipeline_!r}")
    print(f"cluster sizes: {' '.join(map(str, sizes))}")
    for name, value in model.scores_.items():
        print(f"{name.upper():>8}: {value:.4f}")
    print("timings: " + ", ".join(f"{k} {v:.2f}s" for k, v in model.timings_.items()))
    if args.output:
        print(f"labels written to {args.output}")
    return 0


def _cmd_plugins(args) -> int:
    from graphclust._plugins import get_registry

    registry = get_registry()
    parts = registry.all_parts()
    presets = registry.presets.records()
    if args.json:
        print(json.dumps({
            "plugins": [{"name": p.name, "distribution": p.distribution, "version": p.version,
                         "entry_point": p.entry_point, "status": p.status, "error": p.error}
                        for p in registry.plugins],
            "parts": [{"kind": r.kind, "name": r.name, "bundle": r.provider.bundle,
                       "distribution": r.provider.distribution, "version": r.provider.version,
                       "summary": r.summary} for r in parts],
            "presets": [{"name": r.name, "bundle": r.provider.bundle, "summary": r.summary,
                         "paper": r.paper} for r in presets],
        }, indent=2))
        return 0
    out = sys.stdout
    print("plugins:", file=out)
    _print_table([[p.name, p.status, f"{p.distribution} {p.version}".strip(),
                   p.error or p.entry_point] for p in registry.plugins],
                 ["plugin", "status", "distribution", "entry point / error"], out)
    print("\nparts:", file=out)
    _print_table([[r.kind, r.name, r.provider.bundle, r.provider.version, r.summary]
                  for r in parts], ["kind", "name", "bundle", "version", "summary"], out)
    print("\npresets:", file=out)
    _print_table([[r.name, r.provider.bundle, r.summary] for r in presets],
                 ["preset", "bundle", "summary"], out)
    return 0


def _describe_part(record) -> dict:
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
    for attr in ("produces", "needs_anchors", "accepts", "needs_features", "needs",
                 "needs_truth", "provides_features", "out_of_sample"):
        if hasattr(cls, attr) and not isinstance(getattr(cls, attr), property):
            value = getattr(cls, attr)
            info[attr] = sorted(value) if isinstance(value, frozenset) else value
    return info


def _cmd_describe(args) -> int:
    from graphclust._errors import UnknownPartError
    from graphclust._plugins import get_registry
    from graphclust._registry import unknown_name_message

    registry = get_registry()
    kinds = [args.kind] if args.kind else list(PART_KINDS)
    found = [registry.parts(k).record(args.name) for k in kinds if args.name in registry.parts(k)]
    if not found and args.name in registry.presets:
        rec = registry.presets.record(args.name)
        if args.json:
            print(json.dumps({"preset": rec.name, "summary": rec.summary, "paper": rec.paper,
                              "spec": rec.spec}, indent=2))
        else:
            print(f"preset {rec.name} ({rec.provider.bundle}): {rec.summary}")
            if rec.paper:
                print(f"paper: {rec.paper}")
            print(json.dumps(rec.spec, indent=2))
        return 0
    if not found:
        names = sorted({r.name for r in registry.all_parts()} | set(registry.presets.names()))
        raise UnknownPartError(unknown_name_message("part or preset", args.name, names))
    infos = [_describe_part(r) for r in found]
    if args.json:
        print(json.dumps(infos if len(infos) > 1 else infos[0], indent=2, default=str))
        return 0
    for info in infos:
        print(f"{info['kind']} {info['name']} ({info['bundle']}): {info['summary']}")
        for attr in ("produces", "needs_anchors", "accepts", "needs_features", "needs",
                     "provides_features", "out_of_sample"):
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
    """Print a spec with every default written out (as JSON)."""
    from graphclust import compose
    from graphclust._spec import read_spec
    from graphclust._plugins import get_registry

    registry = get_registry()
    data = registry.presets.get(args.spec) if args.spec in registry.presets else read_spec(args.spec)
    pipe = compose(data)
    full = _filled(data, pipe)
    if "ensemble" in data:
        full["ensemble"] = _filled_ensemble(data["ensemble"], pipe, registry)
    print(json.dumps(full, indent=2, default=lambda o: getattr(o, "name", repr(o))))
    return 0


def _filled(data: dict, pipe) -> dict:
    full = {k: v for k, v in data.items() if k not in ("anchors", "graph", "solver", "rounding")}
    for sec, p in pipe.named_parts().items():
        full[sec] = {"name": p.name, **{k: v for k, v in p.get_params(deep=False).items()}}
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
    c = ensemble.consensus
    return {"members": members,
            "consensus": {"name": c.name, **c.get_params(deep=False)}}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graphclust", description="Scalable graph clustering "
                                     "from interchangeable parts.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="cluster a dataset with a preset or a spec file")
    run.add_argument("--preset", help="registered preset name (see 'graphclust plugins')")
    run.add_argument("--spec", help="spec file (.toml or .json)")
    run.add_argument("--dataset", required=True,
                     help="bundled name (digits), data-folder name (usps) or file path")
    run.add_argument("--data-dir", help="data folder (default: $GRAPHCLUST_DATA or ../shared/data)")
    run.add_argument("--n-clusters", type=int, help="default: the spec's, else the number of "
                     "classes in the labels")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--set", action="append", metavar="SECTION.PARAM=VALUE",
                     help="override a parameter, e.g. --set graph.n_neighbors=15")
    run.add_argument("--metrics", help="comma-separated metrics (default acc,nmi,ari,purity)")
    run.add_argument("--output", help="write the labels to this .npy file")
    run.add_argument("--json", action="store_true", help="machine-readable result on stdout")
    run.add_argument("--quiet", action="store_true", help="no progress on stderr")
    run.add_argument("--n-jobs", type=int, default=None,
                     help="processes for an ensemble's members (default 1; -1: all cores)")
    run.set_defaults(func=_cmd_run)

    plugins = sub.add_parser("plugins", help="list plugins, parts and presets")
    plugins.add_argument("--json", action="store_true")
    plugins.set_defaults(func=_cmd_plugins)

    describe = sub.add_parser("describe", help="a part's or preset's parameters")
    describe.add_argument("name")
    describe.add_argument("--kind", choices=list(PART_KINDS))
    describe.add_argument("--json", action="store_true")
    describe.set_defaults(func=_cmd_describe)

    validate = sub.add_parser("validate", help="check a spec file without running it")
    validate.add_argument("spec")
    validate.set_defaults(func=_cmd_validate)

    fill = sub.add_parser("fill", help="print a spec or preset with every default written out")
    fill.add_argument("spec")
    fill.set_defaults(func=_cmd_fill)
    return parser


def main(argv: list[str] | None = None) -> int:
    from graphclust._errors import GraphClustWarning, InputError, PluginError, SpecError

    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default", GraphClustWarning)
            return int(args.func(args) or 0)
    except (SpecError, InputError, PluginError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
