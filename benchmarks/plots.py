"""Figures (matplotlib, Agg backend, PNG): quality against time, time and memory against n."""

from __future__ import annotations

from pathlib import Path

from benchmarks.ranking import finite

__all__ = ["quality_vs_time", "save", "scaling_plots"]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _ok(x) -> bool:
    return finite(x) and x > 0


def save(fig, path: Path, dpi: int = 110) -> str:
    """Lay out ``fig``, write it to ``path`` as PNG, close it; the file name."""
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    _plt().close(fig)
    return path.name


def _plain_log_ticks(axis) -> None:
    """Plain numbers on a log axis, no crowded minor labels."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def quality_vs_time(rows: list[dict], out_dir, metric: str = "acc",
                    prefix: str = "") -> dict[str, str]:
    """One PNG per data set: ``metric`` (mean over seeds) against fit time (log scale).

    Returns ``{title: file name}`` of the figures written into ``out_dir``.
    """
    plt = _plt()
    out_dir = Path(out_dir)
    written = {}
    for ds in sorted({r["dataset"] for r in rows}):
        rs = [r for r in rows if r["dataset"] == ds and r["status"] in ("ok", "partial")
              and _ok(r.get("time_fit")) and r.get(metric) is not None]
        if not rs:
            continue
        fig, ax = plt.subplots(figsize=(6, 4.2))
        for i, r in enumerate(rs):
            peer = r["kind"] == "peer"
            ax.errorbar(r["time_fit"], 100 * r[metric], yerr=100 * (r.get(f"{metric}_std") or 0),
                        fmt="s" if peer else "o", color="0.3" if peer else plt.cm.tab20(i % 20),
                        capsize=2)
            ax.annotate(r["method"], (r["time_fit"], 100 * r[metric]), fontsize=7,
                        xytext=(4, 3), textcoords="offset points")
        ax.set(xscale="log", xlabel="fit time (s, log scale)", ylabel=f"{metric.upper()} (%)")
        _plain_log_ticks(ax.xaxis)
        ax.set_title(f"{ds}: {metric.upper()} against time (circles: presets, squares: peers)",
                     fontsize=9)
        ax.grid(alpha=0.3)
        name = save(fig, out_dir / f"{prefix}quality_time_{ds.replace('@', '_')}.png")
        written[f"{metric.upper()} against time on {ds}"] = name
    return written


def scaling_plots(rows: list[dict], out_dir, prefix: str = "") -> dict[str, str]:
    """Per data family: fit time and extra memory against n, log-log, one line per method."""
    plt = _plt()
    out_dir = Path(out_dir)
    written = {}
    rows = [{**r, "family": r["dataset"].partition("@")[0]} for r in rows]
    for family in sorted({r["family"] for r in rows}):
        rs = [r for r in rows if r["family"] == family and r["status"] in ("ok", "partial")]
        if not rs:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(10, 4))
        for method in sorted({r["method"] for r in rs}):
            for ax, stat in zip(axes, ("time_fit", "fit_extra_mb")):
                pts = sorted((r["n"], r[stat]) for r in rs
                             if r["method"] == method and r.get("n") and _ok(r.get(stat)))
                if pts:
                    ax.plot(*zip(*pts), marker="o", label=method)
        for ax, what in zip(axes, ("fit time (s)", "memory of fit above its input (MB)")):
            ax.set(xscale="log", yscale="log", xlabel="n (log scale)", ylabel=what)
            _plain_log_ticks(ax.xaxis)
            _plain_log_ticks(ax.yaxis)
            ax.grid(alpha=0.3, which="both")
        axes[0].legend(fontsize=7)
        fig.suptitle(f"{family}: time and memory against n", fontsize=10)
        written[f"Time and memory against n on {family}"] = save(
            fig, out_dir / f"{prefix}scaling_{family}.png")
    return written
