"""Markdown tables and ``RESULTS.md`` from the runner's result files.

All numbers come from ``results-<suite>.json`` files written by ``python -m benchmarks run``;
nothing here computes a clustering.
"""

from __future__ import annotations

import glob
import json
import math
import os
import platform
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

from benchmarks import suites

__all__ = ["fmt_pct", "fmt_mean_std", "dataset_table", "paper_table", "scaling_table",
           "search_table", "machine_info", "write_results_md", "suite_markdown"]

_REF_PEER = "sk-kmeans"
_SC_PEER = "sk-spectral"


def _ok(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def fmt_pct(x, digits: int = 1) -> str:
    """A fraction as a percentage without the sign: ``0.8059 -> '80.6'``; ``None -> '—'``."""
    return f"{100 * x:.{digits}f}" if _ok(x) else "—"


def fmt_mean_std(mean, std, scale: float = 100.0, digits: int = 1) -> str:
    """``'80.6 ± 1.2'`` (``scale`` 100 for fractions shown as %); ``'—'`` when missing."""
    if not _ok(mean):
        return "—"
    s = f"{scale * mean:.{digits}f}"
    if _ok(std) and std > 0:
        s += f" ± {scale * std:.{digits}f}"
    return s


def fmt_seconds(x) -> str:
    if not _ok(x):
        return "—"
    if x < 10:
        return f"{x:.2f}"
    if x < 100:
        return f"{x:.1f}"
    return f"{x:.0f}"


def fmt_ratio(x) -> str:
    return f"{x:.2f}×" if _ok(x) else "—"


def fmt_mb(x) -> str:
    return f"{x:.0f}" if _ok(x) else "—"


def fmt_diff(ours, paper) -> str:
    """Signed difference in percentage points: ``'+1.3'`` / ``'−2.0'``."""
    if not (_ok(ours) and _ok(paper)):
        return "—"
    d = 100 * (ours - paper)
    return f"{'+' if d >= 0 else '−'}{abs(d):.1f}"


def _table(header: list[str], rows: list[list[str]], align: str | None = None) -> str:
    align = align or "l" + "r" * (len(header) - 1)
    sep = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _status_cell(row) -> str:
    if row["status"] == "ok":
        return "ok"
    if row["status"] == "partial":
        return f"{row['ok']}/{row['runs']} ok"
    return row["status"]


def _paper_cell(row) -> str:
    p = row.get("paper")
    if not p:
        return ""
    parts = []
    for m, label in (("acc", "ACC"), ("nmi", "NMI"), ("purity", "pur.")):
        if _ok(p.get(m)):
            parts.append(f"{label} {fmt_pct(p[m])} ({fmt_diff(row.get(m), p[m])})")
    return "; ".join(parts)


def dataset_table(rows: list[dict], dataset: str) -> str:
    """Methods × metrics on one data set, times relative to the peers, paper numbers beside."""
    rs = [r for r in rows if r["dataset"] == dataset]
    ref = {r["method"]: r for r in rs if r["kind"] == "peer"}
    t_km = ref.get(_REF_PEER, {}).get("time_fit")
    t_sc = ref.get(_SC_PEER, {}).get("time_fit") if ref.get(_SC_PEER, {}).get("status") in (
        "ok", "partial") else None
    order = sorted(rs, key=lambda r: (r["kind"] == "peer", r["method"]))
    body = []
    for r in order:
        tf = r.get("time_fit")
        if r["status"] in ("ok", "partial"):
            metrics = [fmt_mean_std(r[m], r[f"{m}_std"]) for m in ("acc", "nmi", "ari", "purity")]
            ratio_km = fmt_ratio(tf / t_km) if _ok(tf) and _ok(t_km) and t_km > 0 else "—"
            ratio_sc = fmt_ratio(tf / t_sc) if _ok(tf) and _ok(t_sc) and t_sc > 0 else (
                "SC over cap" if ref.get(_SC_PEER, {}).get("status") == "over cap" else "—")
        else:
            metrics = ["—"] * 4
            ratio_km = ratio_sc = "—"
        body.append([f"`{r['method']}`", *metrics, fmt_seconds(tf), ratio_km, ratio_sc,
                     fmt_mb(r.get("peak_rss_mb")), fmt_mb(r.get("fit_extra_mb")),
                     f"{r['ok']}/{r['runs']}" if r["status"] in ("ok", "partial")
                     else r["status"], _paper_cell(r)])
    full = next((r for r in rs if r.get("n") and r.get("d")), None)
    title = f"**{dataset}**" + (f" (n = {full['n']}, d = {full['d']}, k = {full['k']})"
                                if full else "")
    header = ["method", "ACC %", "NMI %", "ARI %", "purity %", "fit s", "t/t(KMeans)",
              "t/t(SC)", "peak MB", "fit +MB", "seeds ok", "paper (Δ pts)"]
    return title + "\n\n" + _table(header, body, "l" + "r" * 10 + "l")


def paper_table(rows: list[dict]) -> str:
    """Every (preset, data set, metric) the papers report: paper, ours, difference."""
    body = []
    for r in sorted(rows, key=lambda r: (r["method"], r["dataset"])):
        p = r.get("paper")
        if not p:
            continue
        for m, label in (("acc", "ACC"), ("nmi", "NMI"), ("purity", "purity")):
            if not _ok(p.get(m)):
                continue
            ours = fmt_mean_std(r.get(m), r.get(f"{m}_std")) if r["status"] in (
                "ok", "partial") else r["status"]
            body.append([f"`{r['method']}`", r["dataset"], label, fmt_pct(p[m]), ours,
                         fmt_diff(r.get(m), p[m]), r.get("recipe", ""), p["source"]])
    if not body:
        return "_No preset of this run has a reported number in the papers._"
    return _table(["preset", "data set", "metric", "paper %", "ours %", "Δ pts",
                   "our preprocessing", "paper source"], body, "lllrrrll")


def _status_text(r) -> str:
    err = str(r.get("error") or "")
    text = err if err.startswith(r["status"]) else f"{r['status']}: {err}"
    return " ".join(text.split())[:60]


def scaling_table(rows: list[dict], slopes: list[dict]) -> str:
    """Time per stage and memory against n, then the fitted log-log slopes."""
    body = []
    for r in sorted(rows, key=lambda r: (r["family"], r["method"], r.get("n") or 0)):
        ok = r["status"] in ("ok", "partial")
        body.append([f"`{r['method']}`", r["family"], suites.fmt_n(r["n"]) if r.get("n") else "?",
                     *(fmt_seconds(r.get(f"time_{s}")) if ok else "—"
                       for s in ("preprocess", "anchors", "graph", "solver", "rounding", "fit")),
                     fmt_mb(r.get("base_rss_mb")), fmt_mb(r.get("peak_rss_mb")),
                     fmt_mb(r.get("fit_extra_mb")),
                     fmt_pct(r.get("acc")) if ok else "—",
                     "ok" if ok else _status_text(r)])
    out = _table(["method", "data", "n", "prep s", "anchors s", "graph s", "solver s",
                  "rounding s", "fit s", "RSS before MB", "peak MB", "fit +MB", "ACC %",
                  "status"], body, "lll" + "r" * 10 + "l")
    if slopes:
        sb = []
        for s in slopes:
            def g(key):
                v = s.get(key)
                return f"{v:.2f}" if _ok(v) else "—"

            sb.append([f"`{s['method']}`", s["family"],
                       ", ".join(suites.fmt_n(n) for n in s["sizes"]),
                       g("slope_time_fit"), g("slope_time_anchors"), g("slope_time_graph"),
                       g("slope_time_solver"), g("slope_time_rounding"), g("slope_memory")])
        out += "\n\nFitted log-log slopes (1 = linear in n):\n\n" + _table(
            ["method", "data", "sizes", "fit", "anchors", "graph", "solver", "rounding",
             "fit +MB"], sb, "lll" + "r" * 6)
    return out


def search_table(search: dict) -> str:
    """All settings of a parameter search, best first, with the default marked."""
    metric = search["metric"]
    rows = sorted(search["rows"], key=lambda r: -(r.get(metric) or -1))
    body = []
    for r in rows:
        label = "default" if not r["params"] else ", ".join(
            f"{k}={v}" for k, v in sorted(r["params"].items()))
        mark = " **best**" if search.get("best") and r["params"] == search["best"]["params"] \
            else ""
        body.append([label + mark, *(fmt_mean_std(r.get(m), r.get(f"{m}_std"))
                                     for m in ("acc", "nmi", "purity")),
                     fmt_seconds(r.get("time_fit")), f"{r['ok']}/{r['runs']}"])
    head = (f"Search of `{search['preset']}` on **{search['dataset']}** over "
            f"`{json.dumps(search['grid'])}`, {search['seeds']} seed(s) per setting, "
            f"ranked by {metric}.")
    best = search.get("best")
    if best:
        head += (f" Best: `{json.dumps(best['params'])}` with {metric.upper()} "
                 f"{fmt_pct(best.get(metric))} % (default: "
                 f"{fmt_pct((search.get('default') or {}).get(metric))} %).")
    return head + "\n\n" + _table(["setting", "ACC %", "NMI %", "purity %", "fit s", "ok"],
                                  body, "lrrrrr")


# ---------------------------------------------------------------------------------------
# Machine and run metadata
# ---------------------------------------------------------------------------------------
def machine_info() -> dict:
    info = {"cores": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform()}
    try:
        import psutil

        info["memory_gb"] = round(psutil.virtual_memory().total / 2**30, 1)
    except Exception:  # pragma: no cover
        info["memory_gb"] = None
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        info["load_avg"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    try:
        import graphclust
        import numpy
        import sklearn

        info["graphclust"] = graphclust.__version__
        info["numpy"] = numpy.__version__
        info["scikit-learn"] = sklearn.__version__
    except Exception:  # pragma: no cover
        pass
    try:
        info["git_commit"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
            cwd=Path(__file__).resolve().parent, timeout=10).stdout.strip() or None
    except Exception:  # pragma: no cover
        info["git_commit"] = None
    return info


def _machine_line(meta: dict) -> str:
    m = meta.get("machine", {})
    load = m.get("load_avg")
    return (f"{m.get('cores')} cores ({m.get('cpu', 'unknown CPU')}), {m.get('memory_gb')} GB "
            f"memory, load average at start {load[0] if load else '?'}; Python "
            f"{m.get('python')}, numpy {m.get('numpy')}, scikit-learn {m.get('scikit-learn')}, "
            f"graphclust {m.get('graphclust')} @ {m.get('git_commit')}")


def suite_markdown(result: dict, figures: dict[str, str] | None = None) -> str:  # noqa: C901
    """The Markdown section of one result file (tables, then figure links)."""
    meta = result["meta"]
    figures = dict(figures or {})
    suite = meta["suite"]
    lines = [f"Command: `{meta['command']}`  ",
             f"Ran {meta.get('started', '?')} for {meta.get('duration_s', 0):.0f} s on "
             f"{_machine_line(meta)}.  ",
             f"Seeds: {meta.get('seeds')}; time cap per job {meta.get('time_cap')} s "
             f"(scikit-learn SpectralClustering: {meta.get('spectral_cap')} s); "
             f"{meta.get('threads') or 'default'} BLAS thread(s) per job.", ""]
    if meta.get("interrupted"):
        lines += [f"_This run was stopped early: {len(result['records'])} of "
                  f"{meta.get('jobs_planned')} jobs finished; the others are missing._", ""]
    if suite == "search":
        lines += [search_table(result["search"]), ""]
        return "\n".join(lines)
    from benchmarks import runner

    rows = runner.aggregate(result["records"])  # re-aggregated: the records are the source
    if suite == "scaling":
        lines += [scaling_table(rows, result.get("slopes", [])), ""]
    else:
        lines += ["Our numbers against the papers':", "", paper_table(rows), ""]
        for ds in meta.get("datasets", sorted({r["dataset"] for r in rows})):
            if any(r["dataset"] == ds for r in rows):
                lines += [dataset_table(rows, ds), ""]
                for title in [t for t in figures if t.endswith(f" on {ds}")]:
                    lines += [f"![{title}]({figures.pop(title)})", ""]
    for title, path in figures.items():
        lines += [f"![{title}]({path})", ""]
    bad = [r for r in rows if r["status"] not in ("ok",)]
    if bad:
        lines += ["Runs that did not complete:", ""]
        lines += [f"- `{r['method']}` on {r['dataset']}: {r['status']} — "
                  f"{' '.join(str(r.get('error', '')).split())[:300]}" for r in bad]
        lines.append("")
    return "\n".join(lines)


_SUITE_TITLES = {"paper": "Paper suite: the presets on the papers' data sets, with peers",
                 "peers": "Anchor presets against scikit-learn peers",
                 "quick": "Quick suite (CI smoke run on small subsets)",
                 "scaling": "Scaling: MNIST-extend and synthetic sets",
                 "search": "Parameter search"}

_PREAMBLE = """\
# Benchmark results

Generated by `{report_cmd}` from the result files of the runs below — do not edit by
hand; rerun the commands instead. Percentages are mean ± standard deviation over seeds.
"fit s" is the wall time of `fit` (mean over seeds), "t/t(KMeans)" and "t/t(SC)" its
ratio to scikit-learn `KMeans(n_init=10)` and `SpectralClustering(affinity=
"nearest_neighbors", n_neighbors=10)` on the same data in the same run ("SC over cap":
SpectralClustering did not finish within its time cap). "peak MB" is the peak resident
memory of the fresh worker process during `fit` (data included), "fit +MB" the part
above its resident size just before `fit`. The machine is shared by several jobs, so
times are noisy; compare the ratios. Each preset sees its paper's preprocessing
(`benchmarks/suites.py`); the peers see the raw features.
"""


def _figures(res: dict, fig_dir: Path) -> dict[str, str] | None:
    """Redraw a result file's figures from its records into ``fig_dir``."""
    import tempfile

    from benchmarks import plots, runner

    meta = res["meta"]
    if meta["suite"] == "search":
        return {}
    stem = f"results-{meta['suite']}" + (f"-{meta['tag']}" if meta.get("tag") else "")
    try:
        rows = runner.aggregate(res["records"])
        fig_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            if meta["suite"] == "scaling":
                made = plots.scaling_plots(rows, tmp)
            else:
                made = plots.quality_vs_time(rows, tmp)
            out = {}
            for title, name in made.items():
                target = fig_dir / f"{stem}-{name}"
                shutil.move(str(Path(tmp) / name), target)
                out[title] = f"figures/{target.name}"
        return out
    except Exception:  # noqa: BLE001
        return None


def write_results_md(out_dir: str | os.PathLike, target: str | os.PathLike,
                     report_cmd: str) -> Path:
    """Regenerate ``target`` (``benchmarks/RESULTS.md``) from ``out_dir/results-*.json``.

    Figures are redrawn from the records into ``figures/`` next to ``target``.
    """
    out_dir = Path(out_dir)
    target = Path(target)
    fig_dir = target.parent / "figures"
    files = sorted(glob.glob(str(out_dir / "results-*.json")))
    if not files:
        raise FileNotFoundError(f"no results-*.json in {out_dir}: run `python -m benchmarks run "
                                f"--out {out_dir}` first")
    order = ["paper", "peers", "search", "scaling", "quick"]
    results = [json.loads(Path(f).read_text()) for f in files]
    results.sort(key=lambda r: (order.index(r["meta"]["suite"]) if r["meta"]["suite"] in order
                                else 99, r["meta"].get("tag", "")))
    parts = [_PREAMBLE.format(report_cmd=report_cmd),
             f"Report generated {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC.", ""]
    for res in results:
        meta = res["meta"]
        figs = _figures(res, fig_dir)
        if figs is None:  # plotting failed: fall back to the run's own PNGs
            figs = {}
            for title, rel in meta.get("figures", {}).items():
                src = out_dir / rel
                if src.is_file():
                    fig_dir.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, fig_dir / src.name)
                    figs[title] = f"figures/{src.name}"
        heading = _SUITE_TITLES.get(meta["suite"], meta["suite"])
        if meta.get("tag"):
            heading += f" — {meta['tag']}"
        parts += [f"## {heading}", "", suite_markdown(res, figs)]
    target.write_text("\n".join(parts).rstrip() + "\n")
    return target
