"""Tables from result files: a run's full report, the reproduction tables, summary records.

Nothing here runs a clustering. :func:`write_report` gathers every ``results-*.json`` of
an output folder, merges the files of one suite (a later file replaces the same cell of
an earlier one, so partial runs add up), aggregates over seeds, applies each method's
``select`` rule, evaluates the suite's targets, and writes

- the full report (``--results``, by default ``RESULTS.md`` in the output folder): per
  suite its runs, the reproduction targets, for a battery suite the battery
  table (:func:`battery_markdown`), then one table per data set
  (metrics, fit time and its ratio to ``KMeans`` in the same run, memory, paper numbers);
- ``reproduction-tables.rst`` (in the output folder): the targets of every suite as the
  reStructuredText tables of ``docs/reproduction.rst`` (target, ours, status);
- ``today-<suite>.json`` (in the output folder): each suite's summary record, its targets
  and battery as printed (:mod:`benchmarks.today`), which ``benchmarks/RESULTS.md`` is
  generated from once copied to ``benchmarks/records/``.

The full report goes into ``benchmarks/HISTORY.md``, the chronological log.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.datasets import size_of
from benchmarks.ranking import battery_rows, finite as _ok
from benchmarks.runner import FIT_STAGES, METRICS, STAGES
from benchmarks.suite import Suite, Target, load_suites
from benchmarks.today import record_from_report

__all__ = ["aggregate", "battery_markdown", "battery_table", "evaluate", "loglog_slope",
           "machine_info", "run_line", "suite_markdown", "targets_rst", "write_report"]

_REF_PEER = "sk-kmeans"
#: The metrics' column heads (``ACC %``, ..., ``purity %``).
_HEADS = [f"{m if m == 'purity' else m.upper()} %" for m in METRICS]


def _pct(x: Any, digits: int = 1) -> str:
    return f"{100 * x:.{digits}f}" if _ok(x) else "—"


def _secs(x: Any) -> str:
    return "—" if not _ok(x) else f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else f"{x:.0f}"


def machine_info() -> dict:
    """Cores, memory, CPU, load, library versions and the git commit of this run."""
    info: dict[str, Any] = {
        "cores": os.cpu_count(), "python": platform.python_version(),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "memory_gb": round(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30, 1)}
    import graphclust
    import sklearn

    info.update(graphclust=graphclust.__version__, numpy=np.__version__,
                scikit_learn=sklearn.__version__)
    try:
        info["git_commit"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
            cwd=Path(__file__).resolve().parent, timeout=10, check=False).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        info["git_commit"] = None
    return info


def _mean_std(values: list) -> tuple[float | None, float | None]:
    v = [x for x in values if _ok(x)]
    return (float(np.mean(v)), float(np.std(v))) if v else (None, None)


def aggregate(records: list[dict], suite: Suite | None = None) -> list[dict]:
    """Mean ± std over seeds per (method, data set, setting); then, for a method with
    ``select="best"``, only its best setting per data set (ACC, then NMI)."""
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        key = (r["method"], r["dataset"], json.dumps(r.get("params", {}), sort_keys=True))
        groups.setdefault(key, []).append(r)
    rows = []
    for (method, dataset, params), rs in groups.items():
        ok = [r for r in rs if r["status"] == "ok"]
        first = ok[0] if ok else rs[0]
        row: dict[str, Any] = {
            "method": method, "dataset": dataset, "kind": first.get("kind", "preset"),
            "params": json.loads(params), "prep": first.get("prep", "raw"),
            "n": first.get("n") or size_of(dataset), "d": first.get("d"), "k": first.get("k"),
            "runs": len(rs), "ok": len(ok), "time_cap": first.get("time_cap"),
            "status": "ok" if len(ok) == len(rs) else "partial" if ok else rs[0]["status"],
            "error": next((r.get("error", "") for r in rs if r["status"] != "ok"), ""),
        }
        for m in METRICS:
            row[m], row[f"{m}_std"] = _mean_std([r.get(m) for r in ok])
        for s in STAGES:
            row[f"time_{s}"], row[f"time_{s}_std"] = _mean_std([r.get(f"time_{s}") for r in ok])
        for key in ("peak_rss_mb", "fit_extra_mb", *(f"peak_{s}_mb" for s in FIT_STAGES)):
            row[key] = max((r[key] for r in ok if _ok(r.get(key))), default=None)
        row.update(_members(ok))
        rows.append(row)
    best = {m.name for m in (suite.methods if suite else ()) if m.select == "best"}
    if not best:
        return rows
    keep, chosen, tried = [], {}, {}
    for r in rows:
        if r["method"] not in best:
            keep.append(r)
            continue
        k = (r["method"], r["dataset"])
        score = (r["acc"] if _ok(r["acc"]) else -1.0, r["nmi"] if _ok(r["nmi"]) else -1.0)
        tried[k] = tried.get(k, 0) + 1
        if k not in chosen or score > chosen[k][0]:
            chosen[k] = (score, r)
    return keep + [{**row, "settings_tried": tried[k]} for k, (_, row) in chosen.items()]


def _members(ok: list[dict]) -> dict[str, Any]:
    """An ensemble's members over its seeds (records with a ``members`` list): per
    member position its name and mean scores, and per metric the mean over seeds of the
    median member (``members_median_<metric>``), the run's own members; ``{}`` otherwise."""
    runs = [r["members"] for r in ok if r.get("members")]
    if not runs or len({len(m) for m in runs}) != 1:
        return {}
    out: dict[str, Any] = {"members": [
        {"name": group[0]["name"], "k": [m["k"] for m in group],
         **{m: _mean_std([g.get(m) for g in group])[0] for m in METRICS}}
        for group in zip(*runs)]}
    for m in METRICS:
        medians = [float(np.median(vals)) for run in runs
                   if (vals := [x[m] for x in run if _ok(x.get(m))])]
        out[f"members_median_{m}"] = float(np.mean(medians)) if medians else None
    return out


def loglog_slope(ns: list, values: list) -> float:
    """Least-squares slope of log(value) against log(n); NaN with < 2 usable sizes."""
    pts = [(n, v) for n, v in zip(ns, values) if _ok(n) and _ok(v) and n > 0 and v > 0]
    if len({n for n, _ in pts}) < 2:
        return math.nan
    return float(np.polyfit(np.log([n for n, _ in pts]), np.log([v for _, v in pts]), 1)[0])


def _find(rows: list[dict], method: str, dataset: str) -> dict | None:
    return next((r for r in rows if r["method"] == method and r["dataset"] == dataset), None)


def evaluate(t: Target, rows: list[dict]) -> dict[str, str]:
    """``{"label", "target", "ours", "status"}`` of a target on aggregated rows."""
    out = {"label": t.label, "target": "", "ours": "not run", "status": "not run"}
    if t.kind == "slope":
        rs = sorted((r for r in rows if r["method"] == t.method and r["status"] == "ok"
                     and r["dataset"].partition("@")[0] == t.dataset), key=lambda r: r["n"])
        out["target"] = f"slope ≤ {t.goal:g}"
        s = loglog_slope([r["n"] for r in rs], [r.get(t.stat) for r in rs])
        if _ok(s):
            sizes = f"{rs[0]['n']:,}–{rs[-1]['n']:,}".replace(",", " ")
            out.update(ours=f"slope {s:.2f} ({sizes})",
                       status="met" if s <= t.goal else "missed")
        return out
    row = _find(rows, t.method, t.dataset)
    if t.kind == "score":
        out["target"] = " / ".join(f"{v:.2f}" for v in t.paper.values())
        if row is None or row["status"] not in ("ok", "partial"):
            out["ours"] = out["status"] = row["status"] if row else "not run"
            return out
        ours = {m: 100 * row[m] for m in t.paper}
        out["ours"] = " / ".join(f"{v:.2f}" for v in ours.values())
        worst = min(ours[m] - p for m, p in t.paper.items())
        out["status"] = "met" if worst >= -t.tolerance else f"missed ({worst:+.1f})".replace(
            "-", "−")
        return out
    if t.kind == "median":
        return _evaluate_median(t, row, rows, out)
    if t.kind == "limit":
        out["target"] = f"{t.stat} ≤ {t.goal:g}"
        if row and _ok(row.get(t.stat)):
            out.update(ours=f"{row[t.stat]:.0f}", status="met" if row[t.stat] <= t.goal
                       else "missed")
        return out
    out["target"] = f"≥ {t.goal:.3g}×"
    other = _find(rows, t.versus, t.dataset)
    if row is None or not _ok(row.get(t.stat)) or other is None:
        return out
    if _ok(other.get(t.versus_stat)):
        value = other[t.versus_stat] / row[t.stat]
        shown = (f"{other[t.versus_stat]:.3f} vs {row[t.stat]:.3f}" if t.stat in METRICS
                 else f"{value:.2f}×" if value >= 1 else f"{value:.3g}×")
        out.update(ours=shown, status="met" if value >= t.goal else "missed")
    elif other["status"] == "over cap" and t.versus_stat == "time_fit" and other["time_cap"]:
        value = other["time_cap"] / row[t.stat]
        out.update(ours=f"≥ {value:.1f}× ({t.versus} over cap)",
                   status="met" if value >= t.goal else "open (peer over cap)")
    return out


def _evaluate_median(t: Target, row: dict | None, rows: list[dict],
                     out: dict[str, str]) -> dict[str, str]:
    """A ``median_of`` target: ours against the median of the ``group`` methods, or, for
    an ensemble whose records carry its members, the median of its own members in the
    same runs (per seed, then the mean over seeds)."""
    out["target"] = f"≥ median of {len(t.group)}"
    if row is None or not _ok(row.get(t.stat)):
        out["ours"] = out["status"] = row["status"] if row else "not run"
        return out
    if _ok(row.get(f"members_median_{t.stat}")):
        out["target"] = f"≥ median of its {len(row['members'])} members (same runs)"
        med = float(row[f"members_median_{t.stat}"])
    else:
        others = {g: _find(rows, g, t.dataset) for g in t.group}
        missing = [g for g, r in others.items() if r is None or not _ok(r.get(t.stat))]
        if missing:
            out["status"] = f"open (no {t.stat} of {', '.join(missing)})"
            return out
        med = float(np.median([r[t.stat] for r in others.values()]))
    scale = 100.0 if t.stat in METRICS else 1.0
    out["ours"] = f"{scale * row[t.stat]:.2f} vs median {scale * med:.2f}"
    gap = scale * (row[t.stat] - med)
    out["status"] = "met" if gap >= 0 else f"missed ({gap:+.1f})".replace("-", "−")
    return out


def _table(header: list[str], body: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(map(str, r)) + " |" for r in body])


def _dataset_table(rows: list[dict], dataset: str) -> str:
    rs = sorted((r for r in rows if r["dataset"] == dataset),
                key=lambda r: (r["kind"] == "peer", r["method"]))
    ref = _find(rs, _REF_PEER, dataset)
    t_ref = ref.get("time_fit") if ref else None
    body = []
    for r in rs:
        good = r["status"] in ("ok", "partial")
        cells = [f"{_pct(r[m])} ± {_pct(r[f'{m}_std'])}" if good and r[f"{m}_std"] else
                 _pct(r[m]) for m in METRICS]
        tf = r.get("time_fit")
        rel = f"{tf / t_ref:.2f}×" if good and _ok(tf) and _ok(t_ref) and t_ref > 0 else "—"
        setting = ", ".join(f"{k.split('__')[-1]}={v}" for k, v in r["params"].items()
                            if not k.endswith("max_fraction"))
        if r.get("settings_tried"):
            setting = f"best of {r['settings_tried']}: {setting}"
        body.append([f"`{r['method']}`", *cells, _secs(tf), rel,
                     _secs(r.get("peak_rss_mb")), _secs(r.get("fit_extra_mb")),
                     f"{r['ok']}/{r['runs']}" if good else r["status"], setting])
    first = next((r for r in rs if r.get("d")), None)
    head = f"**{dataset}**" + (f" (n = {first['n']}, d = {first['d']}, k = {first['k']})"
                               if first else "")
    return head + "\n\n" + _table(["method", *_HEADS, "fit s", "t/t(KMeans)", "peak MB",
                                   "fit +MB", "seeds ok", "setting"], body)


def battery_table(rows: list[dict], metric: str = "ari") -> tuple[str, list[str], list[list]]:
    """``(caption, header, body)`` of the battery table: per method mean / median
    ``metric``, mean AMI and ACC, mean rank by ``metric`` over data sets (ties averaged,
    failures last) and wins–losses against each peer (:mod:`benchmarks.ranking`); best
    mean rank first."""
    peers = sorted({r["method"] for r in rows if r.get("kind") == "peer"})
    body = []
    for b in battery_rows(rows, peers, metric):
        wl = ["—" if p == b["method"] else "{}–{}".format(*b["versus"][p][:2]) for p in peers]
        body.append([f"`{b['method']}`", b["kind"], f"{b['scored']}/{b['datasets']}",
                     _pct(b[f"mean_{metric}"]), _pct(b[f"median_{metric}"]),
                     _pct(b["mean_ami"]), _pct(b["mean_acc"]), f"{b['mean_rank']:.2f}", *wl])
    m = metric.upper()
    caption = (f"Battery ({len({r['dataset'] for r in rows})} data sets; rank by {m} per data "
               "set, 1 = best, ties averaged, a failed cell ranked last; W–L: data sets with a "
               f"higher–lower {m} than the peer)")
    return caption, ["method", "kind", "scored", f"mean {m} %", f"median {m} %",
                     "mean AMI %", "mean ACC %", "mean rank",
                     *(f"vs {p} W–L" for p in peers)], body


def battery_markdown(rows: list[dict], metric: str = "ari") -> str:
    """The battery table (:func:`battery_table`) in Markdown, under its caption."""
    caption, header, body = battery_table(rows, metric)
    return f"{caption}:\n\n" + _table(header, body)


_TARGET_HEAD = ["measurement", "target", "ours", "status"]


def run_line(meta: dict) -> str:
    """One run of a suite as its report lists it: command, start, duration, seeds, cap,
    machine and commit."""
    mc = meta.get("machine", {})
    return (f"`{meta['command']}` — {meta['started']}, {meta['duration_s']:.0f} s, "
            f"{meta['seeds']} seed(s), cap {meta['time_cap']:g} s; {mc.get('cores')} cores, "
            f"load {mc.get('load_avg')}, graphclust {mc.get('graphclust')} @ "
            f"{mc.get('git_commit')}" + (" (interrupted)" if meta.get("interrupted") else ""))


def _summary_tables(suite: Suite | None, rows: list[dict]) -> list[tuple[str, list, list]]:
    """The tables a suite's summary shows: its evaluated targets, its battery."""
    out = []
    if suite and suite.targets:
        out.append(("Reproduction targets", _TARGET_HEAD,
                    [[e["label"], e["target"], e["ours"], e["status"]]
                     for e in (evaluate(t, rows) for t in suite.targets)]))
    if suite and suite.battery and rows:
        out.append(battery_table(rows))
    return out


def suite_markdown(suite: Suite | None, name: str, metas: list[dict], rows: list[dict]) -> str:
    """The section of one suite in ``RESULTS.md``."""
    title = suite.title if suite else name
    out = [f"## {title} (`{name}`)", ""]
    out += [f"- {run_line(m)}" for m in metas]
    for caption, header, body in _summary_tables(suite, rows):
        out += ["", f"{caption}:", "", _table(header, body)]
    for ds in dict.fromkeys(r["dataset"] for r in rows):
        out += ["", _dataset_table(rows, ds)]
        out += ["\n" + _members_table(r) for r in rows
                if r["dataset"] == ds and r.get("members")]
    return "\n".join(out)


def _members_table(row: dict) -> str:
    """An ensemble's members and its consensus side by side (the same runs; means over
    seeds; a member's ``k`` as drawn per seed)."""
    body = [[m["name"], "/".join(map(str, dict.fromkeys(m["k"]))),
             *(_pct(m[s]) for s in METRICS)] for m in row["members"]]
    body.append(["median member", "", *(_pct(row.get(f"members_median_{s}"))
                                        for s in METRICS)])
    body.append([f"**consensus** `{row['method']}`", str(row.get("k") or ""),
                 *(_pct(row[s]) for s in METRICS)])
    return (f"Members of `{row['method']}` on {row['dataset']} in the same runs "
            f"({row['ok']} seed(s); the median member is taken per seed):\n\n"
            + _table(["member", "k", *_HEADS], body))


def _rst_line(values: list[str], width: list[int]) -> str:
    return "  ".join(v.ljust(w) for v, w in zip(values, width)).rstrip()


def targets_rst(entries: list[tuple[str, list[dict[str, str]]]]) -> str:
    """reStructuredText simple tables of evaluated targets, one per suite title."""
    keys = ("label", "target", "ours", "status")
    out = []
    for title, evals in entries:
        head = ["measurement", "target", "ours", "status"]
        width = [max(len(h), *(len(e[k]) for e in evals)) for h, k in zip(head, keys)]
        rule = "  ".join("=" * w for w in width)
        out += [title, "-" * len(title), "", rule, _rst_line(head, width), rule]
        out += [_rst_line([e[k] for k in keys], width) for e in evals]
        out += [rule, ""]
    return "\n".join(out)


def _figures(rows: list[dict], folder: Path, name: str, scaling: bool) -> list[tuple[str, str]]:
    """Quality-against-time (or scaling) figures of a suite; none without matplotlib."""
    try:
        from benchmarks import plots

        folder.mkdir(exist_ok=True)
        make = plots.scaling_plots if scaling else plots.quality_vs_time
        return sorted(make(rows, folder, prefix=f"{name}-").items())
    except ImportError:
        return []


def write_report(out_dir: str | Path, results_md: str | Path, command: str,
                 note: str = "") -> tuple[Path, Path]:
    """Write ``results_md`` and ``<out_dir>/reproduction-tables.rst`` from the result
    files; ``note`` is a paragraph placed under the introduction."""
    out_dir, results_md = Path(out_dir), Path(results_md)
    by_suite: dict[str, tuple[list[dict], dict]] = {}
    for path in sorted(out_dir.glob("results-*.json"), key=lambda p: p.stat().st_mtime):
        data = json.loads(path.read_text())
        metas, cells = by_suite.setdefault(data["meta"]["suite"], ([], {}))
        metas.append(data["meta"])
        for rec in data["records"]:
            cells[(rec["method"], rec["dataset"], rec["seed"],
                   json.dumps(rec.get("params", {}), sort_keys=True))] = rec
    known = load_suites()
    parts = [
        "# Benchmark results", "",
        (f"Generated by `{command}` from the result files of the runs listed under each "
         "suite; do not edit by hand. Percentages are mean ± std over seeds; \"fit s\" is "
         "the wall time of `fit`, \"t/t(KMeans)\" its ratio to scikit-learn "
         "`KMeans(n_init=10)` in the same run; \"peak MB\" the peak resident memory of the "
         "worker during `fit` (data included), \"fit +MB\" the part above its size before "
         "`fit`. The machine is shared: compare ratios, not seconds."), "",
        f"Report generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC.", "",
        *([note, ""] if note else [])]
    rst_entries = []
    for name, (metas, cells) in by_suite.items():
        suite = known.get(name)
        rows = aggregate(list(cells.values()), suite)
        parts += [suite_markdown(suite, name, metas, rows), ""]
        parts += [f"![{title}](figures/{png})" for title, png in _figures(
            rows, results_md.parent / "figures", name, bool(suite and suite.scaling))]
        parts.append("")
        if suite and suite.targets:
            rst_entries.append((suite.title, [evaluate(t, rows) for t in suite.targets]))
        title = suite.title if suite else name
        record = record_from_report(name, title, f"{title} (`{name}`)",
                                    [run_line(m) for m in metas], _summary_tables(suite, rows))
        (out_dir / f"today-{name}.json").write_text(
            json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    results_md.write_text("\n".join(parts).rstrip() + "\n")
    rst = out_dir / "reproduction-tables.rst"
    rst.write_text(targets_rst(rst_entries))
    return results_md, rst
