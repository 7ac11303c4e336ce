"""The suite-definition API: what a suite module in ``benchmarks/suites/`` declares.

A suite is data: methods (graphclust presets with parameter overrides or grids, and
peers), data sets, seeds, caps, and the targets of the reproduction table. The runner
expands it into cells (method × data set × parameter setting × seed); the report turns
the results into tables. A suite module defines one module-level ``SUITE``, named after
the module (``suites/uspec.py`` is ``--suite uspec``)::

    from benchmarks.suite import Suite, peer, preset, score

    SUITE = Suite(
        title="U-SPEC (Huang et al., TKDE 2020)", datasets=("usps", "pendigits"), seeds=5,
        methods=(preset("uspec"), peer("sk-kmeans"), peer("sk-spectral", cap=300)),
        targets=(score("USPS, uspec", "uspec", "usps", acc=68.3, nmi=74.1),),
    )

See ``benchmarks/README.md`` for every field.
"""

from __future__ import annotations

import importlib
import itertools
import json
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from benchmarks import datasets as _datasets

__all__ = [
    "Cell",
    "Method",
    "Suite",
    "Target",
    "cells",
    "get_suite",
    "limit",
    "load_suites",
    "median_of",
    "peer",
    "preset",
    "ratio",
    "score",
    "slope",
    "spec",
]


@dataclass(frozen=True)
class Method:
    """One row of a suite's tables: a preset (with overrides), a spec dict, or a peer.

    ``params`` are ``set_params`` names (``"solver__lam": 1e-3``); ``grid`` maps such names
    to lists, one cell per combination. ``select="best"`` reports, per data set, the grid
    setting with the best ACC (NMI breaks ties) — the best-of-grid protocol of ONGR
    Sec. 4.3 — instead of every setting. ``prep`` is a recipe of
    :data:`benchmarks.datasets.RECIPES`; ``datasets`` restricts the method to some of
    the suite's data sets (or adds its own); ``cap`` is its own time cap in seconds and
    ``seeds`` its own number of seeds (e.g. one for a slow peer).
    """

    name: str
    preset: str | None = None
    peer: str | None = None
    spec: Mapping[str, Any] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    grid: Mapping[str, list] = field(default_factory=dict)
    select: str = "all"
    prep: str = "raw"
    datasets: tuple[str, ...] | None = None
    cap: float | None = None
    seeds: int | None = None

    @property
    def kind(self) -> str:
        return "peer" if self.peer else "spec" if self.spec else "preset"

    @property
    def target(self) -> str:
        """What the runner builds: the preset or peer name, or the spec as JSON."""
        return self.peer or self.preset or json.dumps(dict(self.spec or {}), sort_keys=True)


@dataclass(frozen=True)
class Target:
    """One row of the reproduction table (see :func:`score`, :func:`ratio`, :func:`limit`,
    :func:`slope`, :func:`median_of`); ``kind`` says how ``status`` is decided."""

    kind: str
    label: str
    method: str
    dataset: str
    paper: Mapping[str, float] = field(default_factory=dict)
    stat: str = ""
    versus: str = ""
    versus_stat: str = ""
    goal: float = 0.0
    tolerance: float = 3.0
    group: tuple[str, ...] = ()


def score(label: str, method: str, dataset: str, tolerance: float = 3.0,
          **paper: float) -> Target:
    """Paper numbers in % (``acc=80.59, nmi=82.76``, ``purity=…``): met when each of ours
    is at least the paper's minus ``tolerance`` points."""
    return Target("score", label, method, dataset, paper=paper, tolerance=tolerance)


def ratio(label: str, method: str, dataset: str, versus: str, goal: float,
          stat: str = "time_fit", versus_stat: str = "") -> Target:
    """``versus``'s ``versus_stat`` divided by ``method``'s ``stat``, met when ≥ ``goal``
    (a speed-up; with ``stat="acc"`` and the order swapped, a quality comparison). A
    ``versus`` over its cap gives a lower bound (its cap over our time)."""
    return Target("ratio", label, method, dataset, stat=stat, versus=versus,
                  versus_stat=versus_stat or stat, goal=goal)


def limit(label: str, method: str, dataset: str, stat: str, goal: float) -> Target:
    """``stat`` of ``method`` (e.g. ``fit_extra_mb``, ``peak_rss_mb``) at most ``goal``."""
    return Target("limit", label, method, dataset, stat=stat, goal=goal)


def slope(label: str, method: str, family: str, goal: float, stat: str = "time_fit") -> Target:
    """Log-log slope of ``stat`` against n over the sizes of ``family`` at most ``goal``."""
    return Target("slope", label, method, family, stat=stat, goal=goal)


def median_of(label: str, method: str, dataset: str, versus: tuple[str, ...],
              stat: str = "acc") -> Target:
    """``method``'s ``stat`` at least the median of the same stat of the methods ``versus``
    on ``dataset`` (e.g. a consensus against its members run as presets); open while one
    of them has no result. For an ensemble whose records carry its own members
    (``members``, recorded by the runner), the report compares with the median of those
    members in the same runs instead."""
    return Target("median", label, method, dataset, stat=stat, group=tuple(versus))


@dataclass(frozen=True)
class Suite:
    """A benchmark suite: ``methods`` × ``datasets`` × grid settings × ``seeds`` cells.

    ``time_cap`` (s) applies to loading + preprocessing and again to the fit of each
    cell, ``mem_cap_mb`` to the resident size of its process (None: no cap).
    ``isolate`` picks the worker processes: one per ``"dataset"`` (method and data set),
    ``"job"``, ``"method"``. ``scaling=True`` skips a method's larger sizes after a
    failure and adds log-log slopes to the report. ``battery``: the report adds a battery
    table (mean / median ARI, mean rank, wins and losses against each peer,
    :mod:`benchmarks.ranking`). ``name`` (``--suite NAME``, ``results-NAME.json``) is the
    suite module's name, set by :func:`load_suites`.
    """

    title: str
    methods: tuple[Method, ...]
    datasets: tuple[str, ...]
    seeds: int = 5
    targets: tuple[Target, ...] = ()
    time_cap: float = 600.0
    mem_cap_mb: float | None = None
    isolate: str = "dataset"
    scaling: bool = False
    battery: bool = False
    name: str = ""

    def quick(self) -> Suite:
        """The ``--quick`` version: subsets of every data set, one seed, two values per
        grid parameter, 60 s caps, and anchor counts cut to 64."""
        methods = []
        for m in self.methods:
            params = dict(m.params)
            if m.preset and "anchors__n_anchors" not in m.grid and _has_anchor_count(m.preset):
                params["anchors__n_anchors"] = 64
            grid = {k: list(v)[:2] for k, v in m.grid.items()}
            ds = None if m.datasets is None else tuple(dict.fromkeys(
                _datasets.quick_name(d) for d in m.datasets))
            methods.append(replace(m, params=params, grid=grid, datasets=ds, seeds=None,
                                   cap=None if m.cap is None else min(m.cap, 60.0)))
        return replace(self, methods=tuple(methods), seeds=1, time_cap=60.0,
                       datasets=tuple(dict.fromkeys(_datasets.quick_name(d)
                                                    for d in self.datasets)))


def _has_anchor_count(preset_name: str) -> bool:
    import graphclust

    try:
        anchors = graphclust.get_registry().presets.get(preset_name).get("anchors")
    except LookupError:
        return False
    return isinstance(anchors, dict) and "n_anchors" in anchors


def preset(name: str, label: str | None = None, **fields: Any) -> Method:
    """A graphclust preset as a method (``label`` defaults to the preset name)."""
    return Method(name=label or name, preset=name, **fields)


def spec(label: str, spec_: Mapping[str, Any], **fields: Any) -> Method:
    """A declarative graphclust spec (a dict of registered part names) as a method."""
    return Method(name=label, spec=spec_, **fields)


def peer(name: str, label: str | None = None, **fields: Any) -> Method:
    """A peer of :data:`benchmarks.peers.PEERS` as a method."""
    return Method(name=label or name, peer=name, **fields)


@dataclass(frozen=True)
class Cell:
    """One run: a method on a data set with one parameter setting and one seed."""

    method: str
    dataset: str
    seed: int
    kind: str
    target: str
    params: Mapping[str, Any]
    prep: str
    time_cap: float
    mem_cap_mb: float | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.method, self.dataset, json.dumps(dict(self.params), sort_keys=True))


def method_datasets(suite: Suite, m: Method) -> tuple[str, ...]:
    return m.datasets if m.datasets is not None else suite.datasets


def cells(suite: Suite, seeds: int | None = None) -> list[Cell]:
    """Every cell of ``suite``, grouped by data set (peers after the presets)."""
    out: list[Cell] = []
    for m in suite.methods:
        keys = list(m.grid)
        settings = [dict(zip(keys, vals)) for vals in itertools.product(*m.grid.values())]
        for ds in method_datasets(suite, m):
            for setting in settings or [{}]:
                params = {**m.params, **setting}
                for s in range(seeds or m.seeds or suite.seeds):
                    out.append(Cell(m.name, ds, s, m.kind, m.target, params,
                                    m.prep, min(m.cap or suite.time_cap, suite.time_cap),
                                    suite.mem_cap_mb))
    order = {ds: i for i, ds in enumerate(dict.fromkeys(c.dataset for c in out))}
    out.sort(key=lambda c: (order[c.dataset], c.kind == "peer"))
    return out


def load_suites() -> dict[str, Suite]:
    """Every ``SUITE`` of the modules in :mod:`benchmarks.suites`, by name (the module's)."""
    from benchmarks import suites as pkg

    found: dict[str, Suite] = {}
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        suite = getattr(importlib.import_module(f"{pkg.__name__}.{info.name}"), "SUITE", None)
        if isinstance(suite, Suite):
            found[info.name] = replace(suite, name=info.name)
    return found


def get_suite(name: str) -> Suite:
    """The suite ``name``; ``LookupError`` naming the known suites otherwise."""
    known = load_suites()
    if name not in known:
        raise LookupError(f"unknown suite {name!r}; suites: {', '.join(known)}")
    return known[name]
